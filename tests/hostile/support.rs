//! What the hostile tests share: a scratch project built from the shipped one, with a
//! script of the test's own as the agent.

#![allow(dead_code)]

use std::path::{Path, PathBuf};

/// Copies the shipped project (fibon.yaml, contracts/, scenarios/, examples/) into a
/// fresh temporary folder and returns it.
pub(crate) fn scratch_project() -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("a temporary folder");
    let root = super::common::root();
    for entry in [
        "fibon.yaml",
        "fibon.naive.yaml",
        "contracts",
        "scenarios",
        "examples",
    ] {
        copy(&root.join(entry), &dir.path().join(entry));
    }
    dir
}

fn copy(from: &Path, to: &PathBuf) {
    if from.is_dir() {
        std::fs::create_dir_all(to).unwrap();
        for e in std::fs::read_dir(from).unwrap() {
            let e = e.unwrap();
            copy(&e.path(), &to.join(e.file_name()));
        }
    } else {
        std::fs::copy(from, to).unwrap();
    }
}
