//! Finding input files: which files a folder contributes, and whether a file is a
//! contract, a scenario or a config when only its content can tell.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::diag::did_you_mean;
use crate::schema::FileKind;

const SCENARIO_KEYS: &[&str] = &[
    "id",
    "complexity",
    "input",
    "tools",
    "remove",
    "faults",
    "expect",
    "approval",
];
const CONTRACT_KEYS: &[&str] = &[
    "skill_name",
    "version",
    "risk_level",
    "requires_approval",
    "approval",
    "actions",
    "accept_degraded_at_risk",
    "critical",
    "preconditions",
    "io_contract",
    "failure_semantics",
    "degradation",
    "must_call_tools",
    "tool_call_min_frequency",
    "enforced_url_prefix_whitelist",
    "strict_citation_required",
    "prohibited_actions",
    "trace",
];
const CONFIG_KEYS: &[&str] = &[
    "scenarios",
    "target",
    "platform",
    "matrix",
    "report",
    "checks",
    "quality",
];
const POLICY_KEYS: &[&str] = &[
    "policy",
    "dimensions",
    "judges",
    "tiebreak",
    "stability",
    "rewrite",
    "budget",
    "scale",
];

/// Whether a file name is a config's (`fibon.yaml` or `fibon.yml`).
pub(crate) fn is_config_name(path: &Path) -> bool {
    matches!(
        path.file_name().and_then(|n| n.to_str()),
        Some("fibon.yaml" | "fibon.yml")
    )
}

/// The config file in a folder, if it has one.
pub(crate) fn config_in(dir: &Path) -> Option<PathBuf> {
    ["fibon.yaml", "fibon.yml"]
        .iter()
        .map(|n| dir.join(n))
        .find(|p| p.is_file())
}

/// The kind a path suggests by a `contracts/` or `scenarios/` folder on it.
pub(crate) fn kind_from_path(path: &Path) -> Option<FileKind> {
    if is_config_name(path) {
        return Some(FileKind::Config);
    }
    path.components()
        .rev()
        .skip(1)
        .find_map(|c| match c.as_os_str().to_str() {
            Some("contracts") => Some(FileKind::Contract),
            Some("scenarios") => Some(FileKind::Scenario),
            _ => None,
        })
}

/// Tells a file's kind by its top-level keys (misspelled ones count too), then by its
/// path. `None` when it looks like none of them (a fixture, a JSON Schema).
pub fn classify(value: &Value, path: &Path) -> Option<FileKind> {
    if is_config_name(path) {
        return Some(FileKind::Config);
    }
    let map = value.as_object()?;
    let score = |keys: &[&str]| {
        map.keys()
            .filter(|k| {
                keys.contains(&k.as_str()) || did_you_mean(k, keys.iter().copied()).is_some()
            })
            .count()
    };
    let mut contract = score(CONTRACT_KEYS);
    let mut config = score(CONFIG_KEYS);
    match map.get("contracts") {
        Some(Value::Array(_)) => config += 1,
        Some(_) => contract += 1,
        None => {}
    }
    let scenario = score(SCENARIO_KEYS);
    let policy = score(POLICY_KEYS);
    let has_skill = map.contains_key("skill");
    if has_skill && scenario == 0 && config == 0 {
        contract += 1;
    }
    let best = [
        (FileKind::Scenario, scenario),
        (FileKind::Contract, contract),
        (FileKind::Config, config),
        (FileKind::Policy, policy),
    ];
    let max = best.iter().map(|(_, s)| *s).max().unwrap_or(0);
    if max == 0 {
        return None;
    }
    let leaders: Vec<FileKind> = best
        .iter()
        .filter(|(_, s)| *s == max)
        .map(|(k, _)| *k)
        .collect();
    match leaders.as_slice() {
        [one] => Some(*one),
        _ => kind_from_path(path).filter(|k| leaders.contains(k)),
    }
}

/// What a folder contributes: the files that look like inputs by their extension, and
/// the folders that could not be listed.
#[derive(Debug, Default)]
pub(crate) struct Found {
    /// Every entry named like an input (`exts`), sorted, whatever it is: a regular file
    /// is read, anything else (a FIFO, a device, a dangling link, a folder named
    /// `x.yaml`) is an error when it is read, never skipped.
    pub(crate) files: Vec<PathBuf>,
    /// Folders (the one given, or one below it) that could not be listed, with why.
    pub(crate) unlisted: Vec<(PathBuf, String)>,
}

/// The files a config entry names: the file itself, or a folder's files with one of
/// `exts` (recursively when `recursive`), sorted for a stable order.
pub(crate) fn files_of(path: &Path, recursive: bool, exts: &[&str]) -> Found {
    if path.is_dir() {
        walk(path, recursive, exts)
    } else {
        Found {
            files: vec![path.to_path_buf()],
            unlisted: Vec::new(),
        }
    }
}

/// A folder's entries with one of `exts`, sorted; hidden entries skipped. Symlinks are
/// followed, but a folder is walked once however many links lead to it (a link back up the
/// tree would loop forever). An entry named like an input is returned whatever it is, so
/// that one which cannot be read is reported rather than silently left out; it is not
/// opened here (a FIFO would block).
pub(crate) fn walk(dir: &Path, recursive: bool, exts: &[&str]) -> Found {
    let mut seen = std::collections::HashSet::new();
    let mut out = Found::default();
    walk_into(dir, recursive, exts, &mut seen, &mut out);
    out
}

fn walk_into(
    dir: &Path,
    recursive: bool,
    exts: &[&str],
    seen: &mut std::collections::HashSet<PathBuf>,
    out: &mut Found,
) {
    if !seen.insert(std::fs::canonicalize(dir).unwrap_or_else(|_| dir.to_path_buf())) {
        return;
    }
    let listed = std::fs::read_dir(dir).and_then(|entries| {
        entries
            .map(|e| e.map(|e| e.path()))
            .collect::<std::io::Result<Vec<PathBuf>>>()
    });
    let mut entries = match listed {
        Ok(entries) => entries,
        Err(e) => {
            out.unlisted.push((dir.to_path_buf(), e.to_string()));
            return;
        }
    };
    entries.sort();
    for path in entries {
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
        if name.starts_with('.') {
            continue;
        }
        let named_like_input = path
            .extension()
            .and_then(|e| e.to_str())
            .is_some_and(|e| exts.iter().any(|x| x.eq_ignore_ascii_case(e)));
        if named_like_input {
            // A folder named `x.yaml` too: reading it says "it is a folder".
            out.files.push(path);
        } else if recursive && path.is_dir() {
            walk_into(&path, true, exts, seen, out);
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn classifies_by_keys_then_path() {
        let p = Path::new("x.yaml");
        assert_eq!(
            classify(&json!({"skill": "a", "must_call_tools": []}), p),
            Some(FileKind::Contract)
        );
        assert_eq!(
            classify(&json!({"skill_name": "a", "contracts": {}}), p),
            Some(FileKind::Contract)
        );
        assert_eq!(
            classify(&json!({"skill": "a"}), p),
            Some(FileKind::Contract)
        );
        assert_eq!(
            classify(&json!({"id": "a", "skill": "b", "input": "x"}), p),
            Some(FileKind::Scenario)
        );
        assert_eq!(
            classify(&json!({"contracts": ["c"], "scenarios": ["s"]}), p),
            Some(FileKind::Config)
        );
        assert_eq!(
            classify(&json!({"type": "object", "properties": {}}), p),
            None
        );
        assert_eq!(
            classify(&json!({"skil": "a", "expekt": {}, "inptu": "x"}), p),
            Some(FileKind::Scenario)
        );
    }
}
