//! One invalid input per entry of `tests/fixtures/invalid/`: each must exit 65 and
//! render exactly the diagnostic in its snapshot (no colour, 100 columns). A new case is
//! a new file there; `cargo insta review` shows its rendering for approval.

mod common;

use common::{code, fibon, root};
use fibon_verify::exit_code;

#[test]
fn every_invalid_fixture_renders_its_diagnostic_and_exits_65() {
    let dir = root().join("tests/fixtures/invalid");
    let mut entries: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|n| !n.starts_with('.'))
        .collect();
    entries.sort();
    assert!(
        entries.len() >= 25,
        "the corpus keeps at least 25 cases, found {}",
        entries.len()
    );
    let mut settings = insta::Settings::clone_current();
    settings.set_prepend_module_to_snapshot(false);
    settings.set_snapshot_path(root().join("tests/snapshots/invalid"));
    settings.bind(|| {
        for entry in &entries {
            let out = fibon(&dir)
                .args(["check", "--color", "never", entry])
                .output()
                .unwrap();
            let stderr = String::from_utf8(out.stderr.clone()).unwrap();
            assert_eq!(code(&out), exit_code::INVALID_INPUT, "{entry}:\n{stderr}");
            let errors: usize =
                stderr.matches("\n  × ").count() + usize::from(stderr.starts_with("  × "));
            assert!(errors >= 1, "{entry} must report an error:\n{stderr}");
            insta::assert_snapshot!(entry.as_str(), &stderr);
        }
    });
}
