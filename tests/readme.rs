//! The README's usage block is `fibon-verify --help`, verbatim (lines right-trimmed).

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
