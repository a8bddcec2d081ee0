//! `fibon-verify init`: a draft contract from what can be discovered — an MCP server's
//! tools (`--from-mcp`) or an Agent Skill's `SKILL.md` frontmatter (`--from-skill`) — with
//! the preconditions filled in and the rest left for the user to complete.

use std::path::Path;

use serde_json::Value;

use crate::config::McpServer;
use crate::mcp::McpClient;

/// Why no draft could be written. Each names the server or the file.
#[derive(Debug, thiserror::Error)]
pub enum DraftError {
    /// The MCP server could not be connected to, or would not list its tools.
    #[error("server `{server}`: {reason}")]
    Server {
        /// The server's configured name.
        server: String,
        /// What failed, for a person.
        reason: String,
    },
    /// The SKILL.md cannot be read as text.
    #[error("cannot read {}: {reason}", path.display())]
    Unreadable {
        /// The file.
        path: std::path::PathBuf,
        /// Why, for a person.
        reason: String,
    },
    /// The SKILL.md has no usable frontmatter.
    #[error("{}: {reason}", path.display())]
    Frontmatter {
        /// The file.
        path: std::path::PathBuf,
        /// What is wrong with it, for a person.
        reason: String,
    },
}

/// A draft contract, as YAML text with comments.
#[derive(Debug)]
pub struct Draft {
    /// The skill name.
    pub skill: String,
    /// The YAML.
    pub yaml: String,
    /// The plugin the draft's preconditions name, with the version the server reports:
    /// `probe` checks `min_plugin_version` against `platform.plugins`, which must list it.
    pub plugin: Option<(String, String)>,
}

/// A draft for the tools of one MCP server.
pub async fn from_mcp(
    server: &McpServer,
    timeout: std::time::Duration,
) -> Result<Draft, DraftError> {
    let failed = |reason: String| DraftError::Server {
        server: server.name.clone(),
        reason,
    };
    let client = McpClient::connect(&crate::gateway::endpoint(&server.transport), timeout)
        .await
        .map_err(|e| failed(e.to_string()))?;
    let tools = client
        .list_tools()
        .await
        .map_err(|e| failed(format!("tools/list failed: {e}")));
    let identity = client.identity().clone();
    client.close().await;
    let tools = tools?;
    let names: Vec<String> = tools
        .iter()
        .filter_map(|t| t.get("name")?.as_str().map(String::from))
        .collect();
    let first_schema = tools.first().and_then(|t| t.get("inputSchema")).cloned();
    let skill = slug(&server.name);
    let version_req = semver::Version::parse(&identity.version)
        .map(|v| format!(">={v}"))
        .ok();
    let mut y = String::new();
    y.push_str(&format!(
        "# Draft contract for the tools of MCP server `{}` ({} {}),\n",
        server.name, identity.name, identity.version
    ));
    y.push_str("# written by `fibon-verify init --from-mcp`. Complete the TODOs, then `fibon-verify check`.\n");
    y.push_str(&format!("skill: {skill}\nversion: 0.1.0\nrisk_level: low  # TODO: low | medium | high | critical\ncritical: true\n"));
    y.push_str("preconditions:\n");
    y.push_str(&format!("  tools: {}\n", yaml_list(&names)));
    y.push_str(&format!("  plugin: {}\n", yaml_str(&server.name)));
    if let Some(req) = version_req {
        y.push_str(&format!("  min_plugin_version: {}\n", yaml_str(&req)));
    }
    if let Some(schema) = first_schema {
        y.push_str("io_contract:\n");
        y.push_str(&format!(
            "  # the inputSchema `{}` advertises today\n",
            names[0]
        ));
        y.push_str(&format!(
            "  input_schema: {}\n",
            serde_json::to_string(&schema).unwrap_or_default()
        ));
    }
    y.push_str(DEFAULT_TAIL);
    y.push_str(&format!(
        "must_call_tools: {}  # TODO: the tools every answer must use\n",
        yaml_list(&names[..names.len().min(1)])
    ));
    let plugin = Some((server.name.clone(), identity.version.clone()));
    Ok(Draft {
        skill,
        yaml: y,
        plugin,
    })
}

/// A draft from an Agent Skill's `SKILL.md` (YAML frontmatter: name, description,
/// allowed-tools).
pub fn from_skill(path: &Path) -> Result<Draft, DraftError> {
    let text = crate::source::read_text(path, crate::source::MAX_FILE_BYTES).map_err(|reason| {
        DraftError::Unreadable {
            path: path.to_path_buf(),
            reason,
        }
    })?;
    let bad = |reason: String| DraftError::Frontmatter {
        path: path.to_path_buf(),
        reason,
    };
    let front =
        frontmatter(&text).ok_or_else(|| bad("no YAML frontmatter between `---` lines".into()))?;
    let meta: Value =
        serde_yaml::from_str(front).map_err(|e| bad(format!("invalid frontmatter: {e}")))?;
    let name = meta
        .get("name")
        .and_then(Value::as_str)
        .ok_or_else(|| bad("the frontmatter has no `name`".into()))?;
    let tools: Vec<String> = match meta.get("allowed-tools") {
        Some(Value::String(s)) => s
            .split([',', ' '])
            .map(str::trim)
            .filter(|t| !t.is_empty())
            .map(String::from)
            .collect(),
        Some(Value::Array(a)) => a
            .iter()
            .filter_map(Value::as_str)
            .map(String::from)
            .collect(),
        _ => Vec::new(),
    };
    let skill = slug(name);
    let mut y = String::new();
    y.push_str(&format!(
        "# Draft contract for the Agent Skill `{name}` ({}),\n",
        path.display()
    ));
    y.push_str("# written by `fibon-verify init --from-skill`. Complete the TODOs, then `fibon-verify check`.\n");
    if let Some(d) = meta.get("description").and_then(Value::as_str) {
        for line in d.lines() {
            y.push_str(&format!("# {line}\n"));
        }
    }
    y.push_str(&format!("skill: {skill}\nversion: 0.1.0\nrisk_level: low  # TODO: low | medium | high | critical\ncritical: true\n"));
    y.push_str("preconditions:\n");
    y.push_str(&format!(
        "  tools: {}  # from allowed-tools\n",
        yaml_list(&tools)
    ));
    y.push_str(DEFAULT_TAIL);
    y.push_str(&format!(
        "must_call_tools: {}  # TODO: the tools every answer must use\n",
        yaml_list(&tools[..tools.len().min(1)])
    ));
    Ok(Draft {
        skill,
        yaml: y,
        plugin: None,
    })
}

const DEFAULT_TAIL: &str = "failure_semantics:  # TODO: what each fault must produce
  TOOL_NOT_FOUND: hard
  PERMISSION_DENIED: hard
  TIMEOUT: retry_then_degrade
  EMPTY_RESULT: explicit
degradation:
  mode: refuse_with_reason
  message_template: \"TODO: the refusal the Skill gives when its tools are unavailable\"
  allow_model_fallback: false
";

fn frontmatter(text: &str) -> Option<&str> {
    let rest = text
        .strip_prefix("---\n")
        .or_else(|| text.strip_prefix("---\r\n"))?;
    let end = rest.find("\n---")?;
    Some(&rest[..end])
}

fn slug(s: &str) -> String {
    let mut out: String = s
        .chars()
        .map(|c| {
            if c.is_alphanumeric() || c == '_' || c == '-' || c == '.' {
                c
            } else {
                '_'
            }
        })
        .collect();
    if out.is_empty() {
        out.push_str("skill");
    }
    out
}

fn yaml_str(s: &str) -> String {
    serde_json::to_string(s).unwrap_or_default()
}

fn yaml_list(items: &[String]) -> String {
    let quoted: Vec<String> = items.iter().map(|i| yaml_str(i)).collect();
    format!("[{}]", quoted.join(", "))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_skill_frontmatter() {
        let dir = std::env::temp_dir().join(format!("fibon-draft-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let p = dir.join("SKILL.md");
        std::fs::write(&p, "---\nname: pdf-review\ndescription: Reviews PDFs\nallowed-tools: Read, Bash\n---\n# body\n").unwrap();
        let d = from_skill(&p).unwrap();
        assert_eq!(d.skill, "pdf-review");
        assert!(d.yaml.contains("tools: [\"Read\", \"Bash\"]"), "{}", d.yaml);
        std::fs::write(&p, "no frontmatter").unwrap();
        assert!(
            from_skill(&p)
                .unwrap_err()
                .to_string()
                .contains("no YAML frontmatter")
        );
    }
}
