//! A `command` target: argv run without a shell, in its own process group, its
//! placeholders (`{input}`, `{mcp_config}`, …) filled; the request on stdin (or nothing,
//! with `stdin: none`) and `FIBON_TOOLS_URL`, `FIBON_MCP_URL`, `FIBON_RUN_ID` in its
//! environment; stdout capped (the rest drained and dropped) and read as `answer` says,
//! stderr's tail kept; on timeout the whole group is killed. `fibon-verify` as the program
//! means this very executable.

use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use indexmap::IndexMap;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWriteExt};
use tokio::process::Command;

use super::{Invocation, Limits, Request, Response};
use crate::config::placeholder::{fill, uses};
use crate::config::{Answer, StdinMode, expand_env};

/// A command target, as configured.
pub(super) struct Spec<'a> {
    pub argv: &'a [String],
    pub env: &'a IndexMap<String, String>,
    pub cwd: Option<&'a Path>,
    pub timeout: Duration,
    pub stdin: StdinMode,
    pub answer: &'a Answer,
}

/// The folder that holds one invocation's MCP client config: removed when dropped.
struct CellDir(std::path::PathBuf);

impl CellDir {
    /// Writes the `mcpServers` file that Claude Code's `--mcp-config`, Claude Desktop and
    /// Cursor read, naming the session's MCP endpoint as the server `fibon`.
    fn with_mcp_config(mcp_url: &str) -> std::io::Result<(CellDir, std::path::PathBuf)> {
        use std::os::unix::fs::DirBuilderExt;
        let dir =
            std::env::temp_dir().join(format!("fibon-cell-{}", uuid::Uuid::new_v4().simple()));
        std::fs::DirBuilder::new().mode(0o700).create(&dir)?;
        let guard = CellDir(dir);
        let file = guard.0.join("mcp.json");
        let config = serde_json::json!({"mcpServers": {"fibon": {"type": "http", "url": mcp_url}}});
        std::fs::write(&file, format!("{config:#}\n"))?;
        Ok((guard, file))
    }
}

impl Drop for CellDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Kills a process group when dropped (a cancelled cell leaves nothing running).
struct GroupGuard(Option<i32>);

impl Drop for GroupGuard {
    fn drop(&mut self) {
        if let Some(pgid) = self.0 {
            let _ = nix::sys::signal::killpg(
                nix::unistd::Pid::from_raw(pgid),
                nix::sys::signal::Signal::SIGKILL,
            );
        }
    }
}

pub(super) async fn invoke(spec: &Spec<'_>, request: &Request, limits: Limits) -> Invocation {
    let Spec {
        env, cwd, timeout, ..
    } = *spec;
    // The MCP client config lives for this invocation only (dropped on every return).
    let (_cell_dir, mcp_config) = if uses(spec.argv, "mcp_config") {
        match CellDir::with_mcp_config(&request.mcp_url) {
            Ok((dir, file)) => (Some(dir), file.display().to_string()),
            Err(e) => {
                return Invocation::Failed {
                    reason: format!("cannot write the MCP client config for `{{mcp_config}}`: {e}"),
                };
            }
        }
    } else {
        (None, String::new())
    };
    let value = |name: &str| -> Option<String> {
        Some(match name {
            "input" => request.input.clone(),
            "skill" => request.skill.clone(),
            "run_id" => request.run_id.clone(),
            "tools_url" => request.tools_url.clone(),
            "mcp_url" => request.mcp_url.clone(),
            "mcp_config" => mcp_config.clone(),
            _ => return None,
        })
    };
    let argv: Vec<String> = spec.argv.iter().map(|a| fill(a, value)).collect();
    let Some((program, args)) = argv.split_first() else {
        return Invocation::Failed {
            reason: "the target command is empty".into(),
        };
    };
    let program = if program == "fibon-verify" {
        match std::env::current_exe() {
            Ok(p) => p,
            Err(e) => {
                return Invocation::Failed {
                    reason: format!("cannot find this executable: {e}"),
                };
            }
        }
    } else {
        program.into()
    };
    let mut cmd = Command::new(&program);
    cmd.args(args)
        .envs(env.iter().map(|(k, v)| (k.clone(), expand_env(v))))
        .env("FIBON_TOOLS_URL", &request.tools_url)
        .env("FIBON_MCP_URL", &request.mcp_url)
        .env("FIBON_RUN_ID", &request.run_id)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .process_group(0);
    if let Some(dir) = cwd {
        cmd.current_dir(dir);
    }
    let mut child = match cmd.spawn() {
        Ok(c) => c,
        Err(e) => {
            return Invocation::Failed {
                reason: format!("cannot start `{}`: {e}", program.display()),
            };
        }
    };
    let _guard = GroupGuard(child.id().map(|p| p as i32));
    let mut stdin = child.stdin.take().expect("piped");
    let stdout = child.stdout.take().expect("piped");
    let stderr = child.stderr.take().expect("piped");
    let body = match spec.stdin {
        StdinMode::Request => request.to_json().to_string(),
        StdinMode::None => String::new(),
    };
    let feed = async move {
        // An agent may exit without reading its input: a closed pipe is not our error.
        if !body.is_empty() {
            let _ = stdin.write_all(body.as_bytes()).await;
        }
        let _ = stdin.shutdown().await;
    };
    let out_buf = Captured::default();
    let err_buf = Captured::default();
    let mut out_task = tokio::spawn(read_capped(
        stdout,
        limits.output_cap,
        false,
        out_buf.clone(),
    ));
    let mut err_task = tokio::spawn(read_capped(
        stderr,
        limits.stderr_cap,
        true,
        err_buf.clone(),
    ));
    let waited = tokio::time::timeout(timeout, async {
        feed.await;
        child.wait().await
    })
    .await;
    let status = match waited {
        Ok(Ok(status)) => status,
        Ok(Err(e)) => {
            return Invocation::Failed {
                reason: format!("waiting for the agent failed: {e}"),
            };
        }
        Err(_) => {
            drop(_guard);
            let _ = child.kill().await;
            let _ = tokio::time::timeout(Duration::from_secs(1), &mut err_task).await;
            out_task.abort();
            err_task.abort();
            let stderr = String::from_utf8_lossy(&err_buf.take().0).into_owned();
            return Invocation::TimedOut {
                after: timeout,
                stderr,
                notes: Vec::new(),
            };
        }
    };
    // The agent has exited; a grandchild may still hold its pipes open. Give the readers a
    // moment, then kill the group so they reach end of file — and keep what was read
    // either way (a process that left the group may hold the pipe for ever).
    let collect = async {
        let _ = (&mut out_task).await;
        let _ = (&mut err_task).await;
    };
    if tokio::time::timeout(Duration::from_secs(2), collect)
        .await
        .is_err()
    {
        drop(_guard);
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    out_task.abort();
    err_task.abort();
    let (stdout, truncated) = out_buf.take();
    let (stderr, _) = err_buf.take();
    let stderr = String::from_utf8_lossy(&stderr).into_owned();
    let code = status.code();
    let response = match spec.answer {
        Answer::Protocol => Response::parse(&stdout),
        Answer::Text => Response::text(&stdout),
        Answer::Json { text, path } => Response::at_path(&stdout, path, text),
    };
    if status.success() {
        return Invocation::Responded {
            response,
            code,
            stderr,
            truncated,
        };
    }
    // A non-zero exit with a usable body is still an answer; without one, a hard interrupt.
    let usable = !stdout.iter().all(u8::is_ascii_whitespace);
    if usable {
        Invocation::Responded {
            response,
            code,
            stderr,
            truncated,
        }
    } else {
        let reason = match code {
            Some(c) => format!("the agent exited with status {c} and printed no answer"),
            None => format!("the agent was killed by a signal ({status})"),
        };
        Invocation::HardInterrupt {
            reason,
            stderr,
            notes: Vec::new(),
        }
    }
}

/// What a reader has kept so far (the bytes, and whether some were dropped), shared so
/// that it can be taken before the pipe ends.
#[derive(Clone, Default)]
struct Captured(std::sync::Arc<std::sync::Mutex<(Vec<u8>, bool)>>);

impl Captured {
    fn take(&self) -> (Vec<u8>, bool) {
        std::mem::take(&mut *self.0.lock().unwrap_or_else(|e| e.into_inner()))
    }
}

/// Reads a pipe to its end into `into`, keeping at most `cap` bytes (the head, or with
/// `keep_tail` the tail); the rest is read and dropped so the writer never blocks.
async fn read_capped(
    mut pipe: impl AsyncRead + Unpin,
    cap: usize,
    keep_tail: bool,
    into: Captured,
) {
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        let n = match pipe.read(&mut buf).await {
            Ok(0) | Err(_) => break,
            Ok(n) => n,
        };
        let mut guard = into.0.lock().unwrap_or_else(|e| e.into_inner());
        let (kept, truncated) = &mut *guard;
        kept.extend_from_slice(&buf[..n]);
        if kept.len() > cap {
            *truncated = true;
            if keep_tail {
                let cut = kept.len() - cap;
                kept.drain(..cut);
            } else {
                kept.truncate(cap);
            }
        }
    }
}
