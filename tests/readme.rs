//! The README's usage block is `fibon-verify --help`, verbatim (lines right-trimmed); its
//! benchmark table is what `benches/suite.sh` writes, from every bench the crate has.

mod common;

use common::{fibon, root};

#[test]
fn readme_usage_matches_help() {
    let readme = std::fs::read_to_string(root().join("README.md")).unwrap();
    let start = readme
        .find("<!-- usage:start -->\n```text\n")
        .expect("usage start marker")
        + 29;
    let end = readme
        .find("```\n<!-- usage:end -->")
        .expect("usage end marker");
    let documented = &readme[start..end];
    let out = fibon(&root()).arg("--help").output().unwrap();
    let help: String = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| format!("{}\n", l.trim_end()))
        .collect();
    assert_eq!(
        documented, help,
        "update the README's usage block to the output of `fibon-verify --help`"
    );
}

/// The names in `for bench in …` lines of benches/suite.sh.
fn suite_benches() -> Vec<Vec<String>> {
    let script = std::fs::read_to_string(root().join("benches/suite.sh")).unwrap();
    script
        .lines()
        .filter_map(|l| l.trim().strip_prefix("for bench in "))
        .map(|l| {
            l.trim_end_matches("; do")
                .split_whitespace()
                .map(String::from)
                .collect()
        })
        .collect()
}

#[test]
fn suite_runs_every_bench_of_the_crate() {
    let manifest = std::fs::read_to_string(root().join("Cargo.toml")).unwrap();
    let mut declared: Vec<String> = manifest
        .split("[[bench]]")
        .skip(1)
        .filter_map(|b| b.lines().find_map(|l| l.strip_prefix("name = ")))
        .map(|n| n.trim_matches('"').to_string())
        .collect();
    declared.sort();
    let lists = suite_benches();
    assert_eq!(
        lists.len(),
        2,
        "suite.sh runs the benches, then collects their rows"
    );
    for list in lists {
        let mut list = list.clone();
        list.sort();
        assert_eq!(
            list, declared,
            "benches/suite.sh must run every [[bench]] of Cargo.toml"
        );
    }
}

#[test]
fn readme_benchmark_table_is_the_suites() {
    let readme = std::fs::read_to_string(root().join("README.md")).unwrap();
    let block = readme
        .split_once("<!-- bench:start -->\n")
        .expect("bench start marker")
        .1
        .split_once("<!-- bench:end -->")
        .expect("bench end marker")
        .0;
    assert!(
        block.starts_with("Measured by `benches/suite.sh`"),
        "run benches/suite.sh to fill the README's benchmark table"
    );
    for needle in [
        "cores",
        "fibon-verify 0.1.0",
        "promptfoo 0.123.1 on Node v22",
        "mcp-proxy 0.13.0",
        "server-everything",
        "| benchmark | measure | fibon-verify | compared with | result |",
        "`run` vs promptfoo",
        "overhead per case",
        "MCP `tools/call`",
        "citation tracer",
        "history,",
        "`run` scaling",
        "10,000 cells at `--jobs` 1 · 8 · 64",
    ] {
        assert!(
            block.contains(needle),
            "the benchmark block lacks `{needle}`"
        );
    }
    for row in block.lines().filter(|l| l.starts_with('|')) {
        assert_eq!(row.split('|').count(), 7, "a row of five cells: {row}");
    }
}

#[test]
fn suite_rejects_unknown_arguments() {
    let out = std::process::Command::new("bash")
        .arg(root().join("benches/suite.sh"))
        .arg("--fast")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(64));
    assert!(String::from_utf8_lossy(&out.stderr).contains("unknown argument `--fast`"));
}
