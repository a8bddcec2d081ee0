//! A `command` target: argv run without a shell, in its own process group; the request on
//! stdin and `FIBON_TOOLS_URL`, `FIBON_MCP_URL`, `FIBON_RUN_ID` in its environment; stdout
//! capped (the rest drained and dropped), stderr's tail kept; on timeout the whole group
//! is killed. `fibon-verify` as the program means this very executable.

use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use indexmap::IndexMap;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWriteExt};
use tokio::process::Command;

use super::{Invocation, Limits, Request, Response};
use crate::config::expand_env;

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

pub(super) async fn invoke(
    argv: &[String],
    env: &IndexMap<String, String>,
    cwd: Option<&Path>,
    timeout: Duration,
    request: &Request,
    limits: Limits,
) -> Invocation {
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
    let body = request.to_json().to_string();
    let feed = async move {
        // An agent may exit without reading its input: a closed pipe is not our error.
        let _ = stdin.write_all(body.as_bytes()).await;
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
    if status.success() {
        return Invocation::Responded {
            response: Response::parse(&stdout),
            code,
            stderr,
            truncated,
        };
    }
    // A non-zero exit with a usable body is still an answer; without one, a hard interrupt.
    let response = Response::parse(&stdout);
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
