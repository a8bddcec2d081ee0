//! The real MCP servers the tests talk to, from the package registries at pinned versions:
//! `@modelcontextprotocol/server-everything` and `server-filesystem` (npm, in
//! `tests/peers/`), `mcp-server-time` (PyPI, in a venv under `target/`), and our own
//! misbehaving server. `.ci/run` installs them; a test run installs them if missing.

use std::path::PathBuf;
use std::process::Command;
use std::sync::Once;

use super::root;

/// The PyPI package pinned for the tests.
pub const MCP_SERVER_TIME: &str = "mcp-server-time==2026.10.19";

fn venv() -> PathBuf {
    root().join("target/peers-venv")
}

/// Installs the peers if they are not installed yet (once per test binary).
pub fn ensure() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        let peers = root().join("tests/peers");
        if !peers
            .join("node_modules/@modelcontextprotocol/server-everything/dist/index.js")
            .is_file()
        {
            let ok = Command::new("npm")
                .args(["ci", "--no-audit", "--no-fund", "--prefix"])
                .arg(&peers)
                .status()
                .is_ok_and(|s| s.success());
            assert!(
                ok,
                "installing the npm test peers failed: run `npm ci --prefix tests/peers`"
            );
        }
        if !venv().join("bin/mcp-server-time").is_file() {
            let ok = Command::new("python3")
                .arg("-m")
                .arg("venv")
                .arg(venv())
                .status()
                .is_ok_and(|s| s.success())
                && Command::new(venv().join("bin/pip"))
                    .args(["install", "-q", MCP_SERVER_TIME])
                    .status()
                    .is_ok_and(|s| s.success());
            assert!(
                ok,
                "installing {MCP_SERVER_TIME} into target/peers-venv failed"
            );
        }
    });
}

fn node_server(package: &str) -> Vec<String> {
    ensure();
    let script = root().join(format!(
        "tests/peers/node_modules/@modelcontextprotocol/{package}/dist/index.js"
    ));
    vec!["node".into(), script.display().to_string()]
}

/// argv of server-everything over stdio.
pub fn everything() -> Vec<String> {
    let mut argv = node_server("server-everything");
    argv.push("stdio".into());
    argv
}

/// argv of server-everything serving Streamable HTTP (port from `PORT`).
pub fn everything_http() -> Vec<String> {
    let mut argv = node_server("server-everything");
    argv.push("streamableHttp".into());
    argv
}

/// argv of server-filesystem allowed to read `dir`.
pub fn filesystem(dir: &std::path::Path) -> Vec<String> {
    let mut argv = node_server("server-filesystem");
    argv.push(dir.display().to_string());
    argv
}

/// argv of mcp-server-time.
pub fn time() -> Vec<String> {
    ensure();
    vec![
        venv().join("bin/mcp-server-time").display().to_string(),
        "--local-timezone".into(),
        "UTC".into(),
    ]
}

/// argv of the misbehaving server with extra flags.
pub fn misbehaving(flags: &[&str]) -> Vec<String> {
    let mut argv = vec![
        "python3".to_string(),
        root()
            .join("tests/peers/misbehaving_server.py")
            .display()
            .to_string(),
    ];
    argv.extend(flags.iter().map(|f| f.to_string()));
    argv
}
