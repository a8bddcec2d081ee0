//! `fibon.lock`: what the platform's tools were when last accepted — for each tool its
//! server, name, server version, and hashes of its description and schemas. Committed like
//! Cargo.lock, it turns a changed description (possible tool poisoning or a rug pull) or a
//! changed schema (version drift) into a failing probe with a readable diff.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::Value;
use sha2::{Digest, Sha256};

use crate::gateway::{Catalog, Source, Upstreams};

/// The lockfile's format version.
pub const LOCK_VERSION: u32 = 1;

/// Why a lockfile cannot be used. Each names the file; a probe (and `run`) fails on any
/// of them (exit 4), even with `--allow-drift`.
#[derive(Debug, thiserror::Error)]
pub enum LockError {
    /// It cannot be read as text (a folder, a device, too large, not UTF-8).
    #[error("cannot read {}: {reason}", path.display())]
    Unreadable {
        /// The lockfile.
        path: PathBuf,
        /// Why, for a person.
        reason: String,
    },
    /// It is not a lockfile: not JSON, or keys it may not have.
    #[error("{} is not a valid lockfile: {source}", path.display())]
    Invalid {
        /// The lockfile.
        path: PathBuf,
        /// What is wrong.
        source: serde_json::Error,
    },
    /// A format version this build does not read.
    #[error("{} is lockfile version {found}; this fibon-verify reads version {LOCK_VERSION}", path.display())]
    Version {
        /// The lockfile.
        path: PathBuf,
        /// Its version.
        found: u32,
    },
    /// Writing it failed.
    #[error("cannot write {}: {source}", path.display())]
    Unwritable {
        /// The lockfile.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
}

/// One locked tool.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LockedTool {
    /// The server's configured name.
    pub server: String,
    /// The tool's name on that server.
    pub name: String,
    /// `serverInfo.version`.
    pub server_version: String,
    /// SHA-256 of the description.
    pub description_sha256: String,
    /// SHA-256 of the canonical JSON of `inputSchema`.
    pub input_schema_sha256: String,
    /// SHA-256 of the canonical JSON of `outputSchema`, if the tool has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_schema_sha256: Option<String>,
}

/// The lockfile.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LockFile {
    /// [`LOCK_VERSION`].
    pub version: u32,
    /// Tools sorted by server, then name.
    pub tools: Vec<LockedTool>,
}

impl LockFile {
    /// The lock of what a probe found.
    pub fn from_catalog(catalog: &Catalog, upstreams: &Upstreams) -> LockFile {
        let mut tools: Vec<LockedTool> = catalog
            .tools
            .values()
            .filter_map(|e| match &e.source {
                Source::Upstream { server, name } => {
                    let up = &upstreams.servers()[*server];
                    let d = &e.descriptor;
                    Some(LockedTool {
                        server: up.name.clone(),
                        name: name.clone(),
                        server_version: up
                            .identity()
                            .map(|i| i.version.clone())
                            .unwrap_or_default(),
                        description_sha256: sha256(
                            d.get("description").and_then(Value::as_str).unwrap_or(""),
                        ),
                        input_schema_sha256: sha256(&canonical(
                            d.get("inputSchema").unwrap_or(&Value::Null),
                        )),
                        output_schema_sha256: d.get("outputSchema").map(|s| sha256(&canonical(s))),
                    })
                }
                Source::Fixture(..) => None,
            })
            .collect();
        tools.sort_by(|a, b| (&a.server, &a.name).cmp(&(&b.server, &b.name)));
        LockFile {
            version: LOCK_VERSION,
            tools,
        }
    }

    /// Reads a lockfile.
    pub fn read(path: &Path) -> Result<Option<LockFile>, LockError> {
        if !path.exists() {
            return Ok(None);
        }
        let text =
            crate::source::read_text(path, crate::source::MAX_FILE_BYTES).map_err(|reason| {
                LockError::Unreadable {
                    path: path.to_path_buf(),
                    reason,
                }
            })?;
        let lock: LockFile = serde_json::from_str(&text).map_err(|source| LockError::Invalid {
            path: path.to_path_buf(),
            source,
        })?;
        if lock.version != LOCK_VERSION {
            return Err(LockError::Version {
                path: path.to_path_buf(),
                found: lock.version,
            });
        }
        Ok(Some(lock))
    }

    /// Writes it atomically (a temp file renamed over the old one).
    pub fn write(&self, path: &Path) -> Result<(), LockError> {
        let tmp = path.with_extension("lock.tmp");
        let text = serde_json::to_string_pretty(self).expect("serializes") + "\n";
        // A server's tool descriptions may echo the headers it was sent.
        let text = crate::secrets::current().redact(&text).into_owned();
        std::fs::write(&tmp, text)
            .and_then(|()| std::fs::rename(&tmp, path))
            .map_err(|source| LockError::Unwritable {
                path: path.to_path_buf(),
                source,
            })
    }
}

/// The state of the lockfile after a probe.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum LockStatus {
    /// There is none yet.
    Missing,
    /// What was found matches it (new tools may be reported).
    Matches,
    /// Descriptions or schemas changed.
    Drifted,
    /// It was (re)written from what was found.
    Updated,
    /// It could not be read or written.
    Unusable,
    /// What could be compared matches, but a server could not be reached, so its pinned
    /// tools were not checked.
    Unverified,
}

/// One difference between the lockfile and the platform.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct LockChange {
    /// `added`, `removed`, `description_changed`, `input_schema_changed`,
    /// `output_schema_changed`, `server_version_changed`, or `unverified` (its server
    /// could not be reached).
    pub kind: &'static str,
    /// The server.
    pub server: String,
    /// The tool.
    pub tool: String,
    /// Whether it fails the probe (unless drift is allowed).
    pub failing: bool,
    /// A diff line for people.
    pub detail: String,
}

/// The lockfile comparison.
#[derive(Debug, Clone, Serialize)]
pub struct LockReport {
    /// The lockfile.
    pub path: PathBuf,
    /// Its state.
    pub status: LockStatus,
    /// The differences found.
    pub changes: Vec<LockChange>,
    /// Whether drift was allowed (`--allow-drift`).
    pub drift_allowed: bool,
    /// Why it is unusable, if it is.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

impl LockReport {
    /// Whether it fails the probe.
    pub fn failing(&self) -> bool {
        self.status == LockStatus::Unusable
            || (!self.drift_allowed && self.changes.iter().any(|c| c.failing))
    }
}

/// Compares the platform with the lockfile; with `update`, writes the lockfile instead.
/// `unreachable` names the servers that could not be listed: their pinned tools are
/// reported as not checked (never as removed), and the lockfile is not rewritten, since
/// that would silently drop their pins.
pub fn compare(
    path: &Path,
    current: &LockFile,
    unreachable: &[String],
    update: bool,
    allow_drift: bool,
) -> LockReport {
    let mut report = LockReport {
        path: path.to_path_buf(),
        status: LockStatus::Missing,
        changes: Vec::new(),
        drift_allowed: allow_drift,
        error: None,
    };
    let locked = match LockFile::read(path) {
        Ok(l) => l,
        Err(e) => {
            report.status = LockStatus::Unusable;
            report.error = Some(e.to_string());
            if !update {
                return report;
            }
            None
        }
    };
    if let Some(locked) = &locked {
        report.changes = diff(locked, current, unreachable);
        report.status = if report.changes.iter().any(|c| c.failing) {
            LockStatus::Drifted
        } else if report.changes.iter().any(|c| c.kind == "unverified") {
            LockStatus::Unverified
        } else {
            LockStatus::Matches
        };
    }
    if update && !unreachable.is_empty() {
        report.status = LockStatus::Unusable;
        report.error = Some(format!(
            "{} was not written: {} could not be reached, and a lock written without {} would drop {} pins; bring {} up, or remove {} from fibon.yaml, then update again",
            path.display(),
            names(unreachable),
            if unreachable.len() == 1 { "it" } else { "them" },
            if unreachable.len() == 1 {
                "its"
            } else {
                "their"
            },
            if unreachable.len() == 1 { "it" } else { "them" },
            if unreachable.len() == 1 { "it" } else { "them" },
        ));
        return report;
    }
    if update {
        match current.write(path) {
            Ok(()) => {
                report.status = LockStatus::Updated;
                report.error = None;
                for c in &mut report.changes {
                    c.failing = false;
                }
            }
            Err(e) => {
                report.status = LockStatus::Unusable;
                report.error = Some(e.to_string());
            }
        }
    }
    report
}

/// `server `a``, or `servers `a` and `b``.
fn names(servers: &[String]) -> String {
    let quoted: Vec<String> = servers.iter().map(|s| format!("`{s}`")).collect();
    match quoted.as_slice() {
        [one] => format!("server {one}"),
        [init @ .., last] => format!("servers {} and {last}", init.join(", ")),
        [] => String::new(),
    }
}

fn diff(locked: &LockFile, current: &LockFile, unreachable: &[String]) -> Vec<LockChange> {
    let key = |t: &LockedTool| (t.server.clone(), t.name.clone());
    let mut out = Vec::new();
    for old in &locked.tools {
        if unreachable.contains(&old.server) {
            out.push(LockChange {
                kind: "unverified",
                server: old.server.clone(),
                tool: old.name.clone(),
                failing: false,
                detail: format!(
                    "? {}:{} was not checked: server `{}` could not be reached",
                    old.server, old.name, old.server
                ),
            });
            continue;
        }
        let change = |kind, failing, detail: String| LockChange {
            kind,
            server: old.server.clone(),
            tool: old.name.clone(),
            failing,
            detail,
        };
        match current.tools.iter().find(|t| key(t) == key(old)) {
            None => out.push(change(
                "removed",
                false,
                format!("- {}:{} is no longer offered", old.server, old.name),
            )),
            Some(new) => {
                if new.description_sha256 != old.description_sha256 {
                    out.push(change(
                        "description_changed",
                        true,
                        format!("~ {}:{} description changed ({} -> {}): possible tool poisoning or rug pull", old.server, old.name, short(&old.description_sha256), short(&new.description_sha256)),
                    ));
                }
                if new.input_schema_sha256 != old.input_schema_sha256 {
                    out.push(change(
                        "input_schema_changed",
                        true,
                        format!(
                            "~ {}:{} inputSchema changed ({} -> {}): version drift",
                            old.server,
                            old.name,
                            short(&old.input_schema_sha256),
                            short(&new.input_schema_sha256)
                        ),
                    ));
                }
                if new.output_schema_sha256 != old.output_schema_sha256 {
                    out.push(change(
                        "output_schema_changed",
                        true,
                        format!(
                            "~ {}:{} outputSchema changed: version drift",
                            old.server, old.name
                        ),
                    ));
                }
                if new.server_version != old.server_version {
                    out.push(change(
                        "server_version_changed",
                        false,
                        format!(
                            "~ {} version {} -> {}",
                            old.server, old.server_version, new.server_version
                        ),
                    ));
                }
            }
        }
    }
    for new in current
        .tools
        .iter()
        .filter(|t| !locked.tools.iter().any(|o| key(o) == key(t)))
    {
        out.push(LockChange {
            kind: "added",
            server: new.server.clone(),
            tool: new.name.clone(),
            failing: false,
            detail: format!("+ {}:{} is new", new.server, new.name),
        });
    }
    // One version change per server is enough.
    let mut seen = std::collections::HashSet::new();
    out.retain(|c| c.kind != "server_version_changed" || seen.insert(c.server.clone()));
    out
}

fn short(hash: &str) -> &str {
    &hash[..hash.len().min(12)]
}

fn sha256(s: &str) -> String {
    let digest = Sha256::digest(s.as_bytes());
    digest.iter().map(|b| format!("{b:02x}")).collect()
}

/// JSON with object keys sorted, so equal schemas hash equal whatever their key order.
pub fn canonical(v: &Value) -> String {
    match v {
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            let parts: Vec<String> = keys
                .iter()
                .map(|k| format!("{}:{}", Value::String((*k).clone()), canonical(&map[*k])))
                .collect();
            format!("{{{}}}", parts.join(","))
        }
        Value::Array(items) => format!(
            "[{}]",
            items.iter().map(canonical).collect::<Vec<_>>().join(",")
        ),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn tool(desc: &str, schema: &str) -> LockedTool {
        LockedTool {
            server: "s".into(),
            name: "t".into(),
            server_version: "1.0.0".into(),
            description_sha256: sha256(desc),
            input_schema_sha256: sha256(schema),
            output_schema_sha256: None,
        }
    }

    #[test]
    fn canonical_json_ignores_key_order() {
        assert_eq!(
            canonical(&json!({"b": 1, "a": [{"d": 2, "c": 3}]})),
            canonical(&json!({"a": [{"c": 3, "d": 2}], "b": 1}))
        );
    }

    #[test]
    fn diff_fails_on_description_and_schema_changes_only() {
        let old = LockFile {
            version: 1,
            tools: vec![tool("d", "s")],
        };
        assert!(diff(&old, &old, &[]).is_empty());
        let changed = LockFile {
            version: 1,
            tools: vec![tool("d2", "s2")],
        };
        let kinds: Vec<(&str, bool)> = diff(&old, &changed, &[])
            .iter()
            .map(|c| (c.kind, c.failing))
            .collect();
        assert_eq!(
            kinds,
            [
                ("description_changed", true),
                ("input_schema_changed", true)
            ]
        );
        let mut added = old.clone();
        added.tools.push(LockedTool {
            name: "u".into(),
            ..tool("x", "y")
        });
        assert_eq!(diff(&old, &added, &[])[0].kind, "added");
        assert!(
            !diff(&old, &added, &[])[0].failing,
            "new tools are reported, not failed"
        );
        assert_eq!(diff(&added, &old, &[])[0].kind, "removed");
        let empty = LockFile {
            version: 1,
            tools: Vec::new(),
        };
        assert_eq!(
            diff(&old, &empty, &["s".into()])[0].kind,
            "unverified",
            "the tools of a server that was not reached are not called removed"
        );
    }
}
