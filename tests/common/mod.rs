//! Shared helpers for the integration tests: the binary with a clean environment, and
//! the real MCP servers used as peers.

#![allow(dead_code, unreachable_pub)]

pub mod peers;

use std::path::{Path, PathBuf};

use assert_cmd::Command;

/// The repository root.
pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// `fibon-verify` run in `dir`, with an empty environment but PATH, so neither the
/// developer's shell nor CI (`GITHUB_ACTIONS`, `NO_COLOR`) changes the output.
pub fn fibon(dir: &Path) -> Command {
    let mut cmd = Command::cargo_bin("fibon-verify").expect("the binary is built");
    cmd.current_dir(dir).env_clear();
    if let Some(path) = std::env::var_os("PATH") {
        cmd.env("PATH", path);
    }
    cmd
}

/// The code a finished command exited with.
pub fn code(output: &std::process::Output) -> i32 {
    output
        .status
        .code()
        .expect("exited, not killed by a signal")
}
