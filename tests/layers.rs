//! The layering rule of ARCHITECTURE.md, enforced: every module of `src/` sits in a layer,
//! and a module may use only modules of lower layers (and itself). The test reads each
//! file's `crate::…` paths (comments aside), so an import that points up — the start of a
//! dependency cycle — fails here with the file and the path.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Bottom to top; a module may use the modules of lower ranks.
const LAYERS: &[(&str, &[&str])] = &[
    ("vocabulary", &["vocab", "exit_code", "text", "secrets"]),
    ("diagnostics", &["diag"]),
    ("user errors", &["errors"]),
    ("sources", &["source"]),
    ("schemas", &["schema"]),
    ("contracts", &["contract"]),
    (
        "other inputs",
        &["scenario", "lexicon", "policy", "history"],
    ),
    ("config", &["config"]),
    ("the loaded project", &["project"]),
    ("wire clients", &["mcp", "chat", "agent"]),
    ("gateway", &["gateway"]),
    ("targets", &["target"]),
    ("checks", &["checks"]),
    ("quality gate", &["quality"]),
    ("reports", &["report"]),
    ("the platform probe", &["probe"]),
    ("pipelines", &["matrix", "sample", "gate"]),
    ("command line", &["cli"]),
];

fn rank(module: &str) -> Option<usize> {
    LAYERS.iter().position(|(_, ms)| ms.contains(&module))
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The text without `//` comments (doc links name modules they do not use).
fn code(text: &str) -> String {
    text.lines()
        .map(|l| match l.find("//") {
            Some(i) if !l[..i].contains('"') => &l[..i],
            _ => l,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// The top-level modules a file's code names through `crate::`, with the line.
fn uses(text: &str) -> Vec<(String, usize)> {
    let mut out = Vec::new();
    for (n, line) in code(text).lines().enumerate() {
        let mut rest = line;
        while let Some(i) = rest.find("crate::") {
            let after = &rest[i + "crate::".len()..];
            let name: String = after
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect();
            if !name.is_empty() {
                out.push((name, n + 1));
            }
            rest = after;
        }
    }
    out
}

#[test]
fn modules_use_only_lower_layers() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let mut violations = Vec::new();
    let mut unplaced = BTreeMap::new();
    for file in &files {
        let rel = file.strip_prefix(&src).unwrap();
        let top = rel
            .components()
            .next()
            .unwrap()
            .as_os_str()
            .to_string_lossy()
            .trim_end_matches(".rs")
            .to_string();
        if top == "lib" || top == "main" {
            continue;
        }
        let Some(own) = rank(&top) else {
            unplaced.insert(top, rel.display().to_string());
            continue;
        };
        let text = std::fs::read_to_string(file).unwrap();
        for (used, line) in uses(&text) {
            if used == top {
                continue;
            }
            match rank(&used) {
                Some(r) if r < own => {}
                Some(r) => violations.push(format!(
                    "src/{}:{line}: `{top}` ({}) uses `crate::{used}` ({}), a layer at or above it",
                    rel.display(),
                    LAYERS[own].0,
                    LAYERS[r].0
                )),
                None => unplaced
                    .insert(used, rel.display().to_string())
                    .map_or((), |_| ()),
            }
        }
    }
    assert!(
        unplaced.is_empty(),
        "modules in no layer of tests/layers.rs (place them, and in ARCHITECTURE.md): {unplaced:?}"
    );
    assert!(
        violations.is_empty(),
        "imports against the layering (ARCHITECTURE.md):\n{}",
        violations.join("\n")
    );
}

#[test]
fn the_rule_sees_an_upward_use() {
    // The reader itself: a path in code counts, one in a comment does not.
    let text =
        "use crate::report::Finding;\n// see crate::cli\nlet x = crate::vocab::Verdict::Pass;";
    let found: Vec<String> = uses(text).into_iter().map(|(m, _)| m).collect();
    assert_eq!(found, ["report", "vocab"]);
    assert!(rank("checks") < rank("report"));
}
