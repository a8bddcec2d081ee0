//! Raw config -> [`Config`]: paths resolved against the config file's folder and checked,
//! durations parsed, each target given exactly the keys its kind uses.

use std::path::{Path, PathBuf};
use std::time::Duration;

use indexmap::IndexMap;

use super::model::*;
use super::placeholder::{PLACEHOLDERS, Piece, pieces};
use super::raw::{RawAnswer, RawConfig, RawTarget};
use crate::contract::absolute_http_url;
use crate::diag::{Diagnostic, did_you_mean};
use crate::source::{Anchor, Document, join};

const TARGET_KEYS: [(TargetKind, &[&str]); 4] = [
    (
        TargetKind::Command,
        &["command", "stdin", "answer", "env", "cwd", "timeout"],
    ),
    (TargetKind::Http, &["url", "headers", "timeout"]),
    (
        TargetKind::Openai,
        &[
            "base_url",
            "model",
            "api_key_env",
            "system_prompt",
            "max_steps",
            "temperature",
            "tool_choice",
            "intervene",
            "timeout",
        ],
    ),
    (TargetKind::Replay, &["history"]),
];

/// The default per-cell timeout of a target.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(60);

/// Validates a raw config; problems go to `diags`. The config comes back even when some
/// are errors (with defaults in their place), so the contracts and scenarios it names can
/// still be checked: every problem in every file is reported.
pub fn validate(doc: &Document, raw: RawConfig, diags: &mut Vec<Diagnostic>) -> Config {
    let dir = doc.file.dir();
    let mut paths = |key: &str, given: Option<Vec<String>>| -> Vec<PathBuf> {
        let explicit = given.is_some();
        let list = given.unwrap_or_else(|| vec![key.to_string()]);
        let mut out = Vec::new();
        for (i, rel) in list.iter().enumerate() {
            let path = dir.join(rel);
            if !path.exists() {
                let pointer = if explicit {
                    format!("/{key}/{i}")
                } else {
                    String::new()
                };
                let d = doc.error(
                    "missing_path",
                    &pointer,
                    Anchor::Value,
                    format!("{key} path `{rel}` does not exist"),
                    "no such file or folder",
                );
                let hint = sibling_hint(&dir, rel);
                diags.push(d.with_help(match hint {
                    Some(h) => format!("did you mean `{h}`? paths are relative to the config file"),
                    None => format!("create it, or list the {key} files or folders (relative to the config file) under `{key}:`"),
                }));
                continue;
            }
            out.push(path);
        }
        out
    };
    let contracts = paths("contracts", raw.contracts);
    let scenarios = paths("scenarios", raw.scenarios);
    let target = raw.target.and_then(|t| target(doc, &dir, t, diags));
    let platform = raw.platform.map(|p| {
        let mut servers: Vec<McpServer> = Vec::new();
        for (i, s) in p.mcp_servers.unwrap_or_default().into_iter().enumerate() {
            let base = format!("/platform/mcp_servers/{i}");
            if let Some(first) = servers.iter().position(|o| o.name == s.name) {
                diags.push(
                    doc.error("duplicate_name", &join(&base, "name"), Anchor::Value, format!("MCP server `{}` is named twice", s.name), format!("also server #{first}"))
                        .with_help("give each server a unique name; tools are known as `server:tool`"),
                );
            }
            let transport = match (s.command, s.url) {
                (Some(command), None) if command.is_empty() => {
                    diags.push(
                        doc.error("mcp_transport", &join(&base, "command"), Anchor::Value, "`command` is empty", "no program")
                            .with_help("give the server's argv, such as `[npx, \"@modelcontextprotocol/server-everything\"]`"),
                    );
                    None
                }
                (Some(command), None) if !command.is_empty() => {
                    only(doc, &base, "headers", s.headers.is_some(), "stdio", diags);
                    Some(McpTransport::Stdio { command, env: s.env.unwrap_or_default() })
                }
                (None, Some(u)) => {
                    only(doc, &base, "env", s.env.is_some(), "HTTP", diags);
                    url_at(doc, &join(&base, "url"), &u, diags).map(|url| McpTransport::Http { url, headers: s.headers.unwrap_or_default() })
                }
                (Some(_), Some(_)) => {
                    diags.push(
                        doc.error("mcp_transport", &join(&base, "url"), Anchor::Key, "an MCP server has a `command` or a `url`, not both", "second transport")
                            .with_help("use `command` for a stdio server, `url` for a Streamable HTTP server"),
                    );
                    None
                }
                _ => {
                    diags.push(
                        doc.error("mcp_transport", &base, Anchor::Value, format!("MCP server `{}` has no `command` or `url`", s.name), "how is it reached?")
                            .with_help("add `command: [argv...]` for a stdio server or `url: http://...` for Streamable HTTP"),
                    );
                    None
                }
            };
            if let Some(transport) = transport {
                servers.push(McpServer { name: s.name, transport });
            }
        }
        let mut plugins = IndexMap::new();
        for (name, version) in p.plugins.unwrap_or_default() {
            match semver::Version::parse(&version) {
                Ok(v) => {
                    plugins.insert(name, v);
                }
                Err(e) => diags.push(
                    doc.error("invalid_version", &join("/platform/plugins", &name), Anchor::Value, format!("plugin `{name}` has version `{version}`, not a semver version: {e}"), "not a semver version")
                        .with_help("write the installed version, such as `1.5.0`"),
                ),
            }
        }
        let network = p.network.unwrap_or_default();
        for (name, endpoint) in &network {
            if absolute_http_url(endpoint).is_err() && !is_host_port(endpoint) {
                diags.push(
                    doc.error("invalid_endpoint", &join("/platform/network", name), Anchor::Value, format!("network endpoint `{name}` is `{endpoint}`, neither an http(s) URL nor host:port"), "not an endpoint")
                        .with_help("write `http://127.0.0.1:9100/health` (checked with GET) or `db.internal:5432` (checked with a TCP connect)"),
                );
            }
        }
        Platform { mcp_servers: servers, plugins, scopes: p.scopes.unwrap_or_default(), network }
    });
    let defaults = Matrix::default();
    let matrix = raw.matrix.map_or(defaults.clone(), |m| Matrix {
        jobs: m.jobs.unwrap_or(defaults.jobs),
        repeat: m.repeat.unwrap_or(1),
        timeout_fault_delay: m
            .timeout_fault_delay
            .and_then(|d| duration(doc, "/matrix/timeout_fault_delay", &d, diags))
            .unwrap_or(defaults.timeout_fault_delay),
        latency_fault_delay: m
            .latency_fault_delay
            .and_then(|d| duration(doc, "/matrix/latency_fault_delay", &d, diags))
            .unwrap_or(defaults.latency_fault_delay),
    });
    let (report_dir, report_html) = match raw.report {
        Some(r) => (r.dir, r.html),
        None => (None, None),
    };
    let report_dir = dir.join(report_dir.unwrap_or_else(|| "target/fibon".into()));
    let report_html = report_html.unwrap_or(true);
    let (refusal_lexicon_raw, judge_raw) = match raw.checks {
        Some(c) => (c.refusal_lexicon, c.refusal_judge),
        None => (None, None),
    };
    let refusal_judge = judge_raw.and_then(|j| {
        let base_url = url_at(doc, "/checks/refusal_judge/base_url", &j.base_url, diags)?;
        let timeout = match &j.timeout {
            Some(t) => timeout_duration(doc, "/checks/refusal_judge/timeout", t, diags)?,
            None => Duration::from_secs(30),
        };
        Some(RefusalJudge {
            base_url,
            model: j.model,
            api_key_env: j.api_key_env,
            timeout,
        })
    });
    let refusal_lexicon = refusal_lexicon_raw.and_then(|rel| {
        let path = dir.join(&rel);
        match crate::lexicon::Lexicon::extended(&path) {
            Ok(_) => Some(path),
            Err(why) => {
                diags.push(
                    doc.error("refusal_lexicon", "/checks/refusal_lexicon", Anchor::Value, format!("cannot use the refusal lexicon `{rel}`: {why}"), "not a usable lexicon")
                        .with_help("give a YAML file with lists under the built-in lexicon's keys (`failure`, `process`, `hedge`, …; src/lexicon/refusal_lexicon.yaml), relative to the config"),
                );
                None
            }
        }
    });
    let quality_policy = raw.quality.map(|q| dir.join(q.policy)).filter(|p| {
        let ok = p.is_file();
        if !ok {
            diags.push(
                doc.error(
                    "missing_path",
                    "/quality/policy",
                    Anchor::Value,
                    format!("quality policy {} does not exist", p.display()),
                    "no such file",
                )
                .with_help("the path is relative to the config file"),
            );
        }
        ok
    });
    let config = Config {
        quality_policy,
        refusal_lexicon,
        refusal_judge,
        path: Some(doc.file.path.clone()),
        contracts,
        scenarios,
        target,
        platform: platform.unwrap_or_default(),
        matrix,
        report_dir,
        report_html,
    };
    // Before anything can echo them: every output from here on redacts them.
    crate::secrets::register(config.secret_names());
    config
}

fn target(doc: &Document, dir: &Path, t: RawTarget, diags: &mut Vec<Diagnostic>) -> Option<Target> {
    let kind = t.kind;
    let allowed = TARGET_KEYS
        .iter()
        .find(|(k, _)| *k == kind)
        .map_or(&[][..], |(_, keys)| *keys);
    let given: Vec<String> = doc
        .get("/target")
        .and_then(|v| v.as_object())
        .map(|m| m.keys().cloned().collect())
        .unwrap_or_default();
    let mut ok = true;
    for key in given
        .iter()
        .filter(|k| *k != "kind" && !allowed.contains(&k.as_str()))
    {
        let owner = TARGET_KEYS
            .iter()
            .find(|(_, keys)| keys.contains(&key.as_str()))
            .map(|(k, _)| k.as_str());
        diags.push(
            doc.error(
                "target_key",
                &join("/target", key),
                Anchor::Key,
                format!(
                    "`{key}` does not apply to a target of kind `{}`",
                    kind.as_str()
                ),
                "not used by this kind",
            )
            .with_help(match owner {
                Some(o) => format!(
                    "remove it, or set `kind: {o}`; kind `{}` takes {}",
                    kind.as_str(),
                    list(allowed)
                ),
                None => format!("kind `{}` takes {}", kind.as_str(), list(allowed)),
            }),
        );
        ok = false;
    }
    let timeout = match &t.timeout {
        Some(d) => timeout_duration(doc, "/target/timeout", d, diags)?,
        None => DEFAULT_TIMEOUT,
    };
    let mut require = |key: &str, present: bool| {
        if !present {
            diags.push(
                doc.error(
                    "missing_key",
                    "/target/kind",
                    Anchor::Value,
                    format!("a target of kind `{}` needs `{key}`", kind.as_str()),
                    format!("`{key}` missing"),
                )
                .with_help(format!("add `{key}:` under `target:`")),
            );
            ok = false;
        }
    };
    let target = match kind {
        TargetKind::Command => {
            require("command", t.command.as_ref().is_some_and(|c| !c.is_empty()));
            let cwd = t.cwd.map(|c| dir.join(c));
            if let Some(c) = cwd.as_ref().filter(|c| !c.is_dir()) {
                diags.push(
                    doc.error(
                        "missing_path",
                        "/target/cwd",
                        Anchor::Value,
                        format!("working directory {} does not exist", c.display()),
                        "no such folder",
                    )
                    .with_help("the path is relative to the config file"),
                );
                ok = false;
            }
            let command = t.command.unwrap_or_default();
            ok &= placeholders(doc, &command, diags);
            let answer = match t.answer {
                None | Some(RawAnswer::Protocol) => Answer::Protocol,
                Some(RawAnswer::Text) => Answer::Text,
                Some(RawAnswer::Json(text)) => match serde_json_path::JsonPath::parse(&text) {
                    Ok(path) => Answer::Json { text, path },
                    Err(e) => {
                        diags.push(
                            doc.error(
                                "invalid_json_path",
                                "/target/answer/json",
                                Anchor::Value,
                                format!("`{text}` is not a JSONPath: {e}"),
                                "not a JSONPath",
                            )
                            .with_help("write a JSONPath (RFC 9535) from the root of stdout's JSON, such as `$.result`"),
                        );
                        ok = false;
                        Answer::Protocol
                    }
                },
            };
            Target::Command {
                command,
                env: t.env.unwrap_or_default(),
                cwd,
                timeout,
                stdin: t.stdin.unwrap_or_default(),
                answer,
            }
        }
        TargetKind::Http => {
            require("url", t.url.is_some());
            let url = url_at(
                doc,
                "/target/url",
                t.url.as_deref().unwrap_or("http://127.0.0.1/"),
                diags,
            )?;
            Target::Http {
                url,
                headers: t.headers.unwrap_or_default(),
                timeout,
            }
        }
        TargetKind::Openai => {
            require("base_url", t.base_url.is_some());
            require("model", t.model.is_some());
            let base_url = url_at(
                doc,
                "/target/base_url",
                t.base_url.as_deref().unwrap_or("http://127.0.0.1/"),
                diags,
            )?;
            Target::Openai {
                base_url,
                model: t.model.unwrap_or_default(),
                api_key_env: t.api_key_env,
                system_prompt: t.system_prompt,
                max_steps: t.max_steps.unwrap_or(8),
                temperature: t.temperature.unwrap_or(0.0),
                tool_choice: t.tool_choice.unwrap_or_else(|| "auto".into()),
                intervene: t.intervene.unwrap_or(false),
                timeout,
            }
        }
        TargetKind::Replay => {
            require("history", t.history.is_some());
            let history = dir.join(t.history.unwrap_or_default());
            let unreadable = match crate::source::regular_file(&history) {
                Ok(_) => None,
                Err(_) if !history.exists() => Some((
                    format!("history file {} does not exist", history.display()),
                    "no such file",
                )),
                Err(why) => Some((
                    format!("history file {} cannot be read: {why}", history.display()),
                    "not a regular file",
                )),
            };
            if ok && let Some((message, label)) = unreadable {
                diags.push(
                    doc.error(
                        "missing_path",
                        "/target/history",
                        Anchor::Value,
                        message,
                        label,
                    )
                    .with_help("the path is relative to the config file"),
                );
                ok = false;
            }
            Target::Replay { history }
        }
    };
    ok.then_some(target)
}

/// A `{name}` in the argv that is not a placeholder but close to one (`{inptu}`) is named at
/// its argument with a "did you mean"; other names are text, as they always were (an
/// f-string in a `python3 -c` script). Returns whether none is a likely typo.
fn placeholders(doc: &Document, argv: &[String], diags: &mut Vec<Diagnostic>) -> bool {
    let mut ok = true;
    for (i, arg) in argv.iter().enumerate() {
        for piece in pieces(arg) {
            let Piece::Placeholder(name) = piece else {
                continue;
            };
            if PLACEHOLDERS.contains(&name) {
                continue;
            }
            let Some(hint) = did_you_mean(name, PLACEHOLDERS.iter().copied()) else {
                continue;
            };
            let known: Vec<String> = PLACEHOLDERS.iter().map(|p| format!("`{{{p}}}`")).collect();
            diags.push(
                doc.error(
                    "unknown_placeholder",
                    &format!("/target/command/{i}"),
                    Anchor::Value,
                    format!("`{{{name}}}` in the target command is not a placeholder"),
                    "unknown placeholder",
                )
                .with_help(format!(
                    "did you mean `{{{hint}}}`? the placeholders are {}",
                    known.join(", ")
                )),
            );
            ok = false;
        }
    }
    ok
}

fn only(
    doc: &Document,
    base: &str,
    key: &str,
    present: bool,
    transport: &str,
    diags: &mut Vec<Diagnostic>,
) {
    if present {
        diags.push(
            doc.error(
                "mcp_transport",
                &join(base, key),
                Anchor::Key,
                format!("`{key}` does not apply to a {transport} MCP server"),
                "not used",
            )
            .with_help("`env` goes with `command` (stdio), `headers` with `url` (HTTP)"),
        );
    }
}

fn url_at(doc: &Document, pointer: &str, u: &str, diags: &mut Vec<Diagnostic>) -> Option<url::Url> {
    absolute_http_url(u)
        .map_err(|why| {
            diags.push(
                doc.error(
                    "invalid_url",
                    pointer,
                    Anchor::Value,
                    format!("`{u}` {why}"),
                    "not an absolute http(s) URL",
                )
                .with_help("write an absolute URL such as `http://127.0.0.1:8080/agent`"),
            )
        })
        .ok()
}

/// The longest timeout taken: a year (far longer would overflow the clock's arithmetic).
const MAX_TIMEOUT: Duration = Duration::from_secs(365 * 24 * 3600);

/// A timeout: a duration above zero (zero would time out every call) and at most a year.
fn timeout_duration(
    doc: &Document,
    pointer: &str,
    text: &str,
    diags: &mut Vec<Diagnostic>,
) -> Option<Duration> {
    let d = duration(doc, pointer, text, diags)?;
    if d.is_zero() || d > MAX_TIMEOUT {
        diags.push(
            doc.error(
                "invalid_duration",
                pointer,
                Anchor::Value,
                format!("`{text}` is not a usable timeout"),
                if d.is_zero() {
                    "zero would time out every call"
                } else {
                    "longer than a year"
                },
            )
            .with_help("write a timeout above zero and at most a year, such as `90s`"),
        );
        return None;
    }
    Some(d)
}

/// Parses a duration such as `60s`, `1m 30s` or `500ms`.
pub(crate) fn duration(
    doc: &Document,
    pointer: &str,
    text: &str,
    diags: &mut Vec<Diagnostic>,
) -> Option<Duration> {
    humantime::parse_duration(text)
        .map_err(|e| {
            diags.push(
                doc.error(
                    "invalid_duration",
                    pointer,
                    Anchor::Value,
                    format!("`{text}` is not a duration: {e}"),
                    "not a duration",
                )
                .with_help("write a duration such as `60s`, `1m 30s` or `500ms`"),
            )
        })
        .ok()
}

fn is_host_port(s: &str) -> bool {
    match s.rsplit_once(':') {
        Some((host, port)) => {
            !host.is_empty() && !host.contains('/') && port.parse::<u16>().is_ok()
        }
        None => false,
    }
}

fn list(keys: &[&str]) -> String {
    let keys: Vec<String> = keys.iter().map(|k| format!("`{k}`")).collect();
    keys.join(", ")
}

fn sibling_hint(dir: &Path, rel: &str) -> Option<String> {
    let rel_path = Path::new(rel);
    let parent = dir.join(rel_path.parent().unwrap_or(Path::new("")));
    let name = rel_path.file_name()?.to_str()?;
    let names: Vec<String> = std::fs::read_dir(parent)
        .ok()?
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .collect();
    let hint = did_you_mean(name, names.iter().map(String::as_str))?;
    Some(rel_path.with_file_name(hint).display().to_string())
}
