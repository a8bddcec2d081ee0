//! The stdio transport, client side: an MCP server as a child process in its own process
//! group, newline-delimited JSON-RPC on its stdin/stdout, stderr kept for error messages.
//! Concurrent requests are told apart by id; a server that exits fails every pending
//! request at once instead of leaving it hanging.

use std::collections::{HashMap, VecDeque};
use std::process::Stdio;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use serde_json::Value;
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::process::{Child, ChildStdin, Command};
use tokio::sync::{broadcast, oneshot};

use super::client::RequestError;
use super::jsonrpc::{self, Message, RpcError};

/// A line longer than this is not a message but a flood: the connection is closed.
const MAX_LINE: usize = 64 * 1024 * 1024;
/// Lines of the server's stderr kept for messages.
const STDERR_LINES: usize = 20;

type Pending = Arc<Mutex<HashMap<String, oneshot::Sender<Result<Value, RequestError>>>>>;

pub(crate) struct StdioConnection {
    stdin: tokio::sync::Mutex<ChildStdin>,
    pending: Pending,
    closed: Arc<AtomicBool>,
    close_reason: Arc<Mutex<Option<String>>>,
    stderr_tail: Arc<Mutex<VecDeque<String>>>,
    notifications: broadcast::Sender<Value>,
    child: Mutex<Child>,
    pid: Option<u32>,
}

impl StdioConnection {
    /// Starts the server. `Err` says why it could not be started.
    pub(crate) fn spawn(
        argv: &[String],
        env: &[(String, String)],
    ) -> Result<StdioConnection, String> {
        let (program, args) = argv.split_first().ok_or("empty command")?;
        let mut cmd = Command::new(program);
        cmd.args(args)
            .envs(env.iter().map(|(k, v)| (k, v)))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true)
            .process_group(0);
        let mut child = cmd
            .spawn()
            .map_err(|e| format!("cannot start `{program}`: {e}"))?;
        let stdin = child.stdin.take().ok_or("no stdin")?;
        let stdout = child.stdout.take().ok_or("no stdout")?;
        let stderr = child.stderr.take().ok_or("no stderr")?;
        let pending: Pending = Arc::default();
        let closed = Arc::new(AtomicBool::new(false));
        let close_reason = Arc::new(Mutex::new(None));
        let stderr_tail = Arc::new(Mutex::new(VecDeque::new()));
        let (notifications, _) = broadcast::channel(256);
        let conn = StdioConnection {
            stdin: tokio::sync::Mutex::new(stdin),
            pending: Arc::clone(&pending),
            closed: Arc::clone(&closed),
            close_reason: Arc::clone(&close_reason),
            stderr_tail: Arc::clone(&stderr_tail),
            notifications: notifications.clone(),
            pid: child.id(),
            child: Mutex::new(child),
        };
        let (stderr_done, stderr_finished) = oneshot::channel();
        tokio::spawn(async move {
            read_stderr(stderr, stderr_tail).await;
            let _ = stderr_done.send(());
        });
        tokio::spawn(read_stdout(
            stdout,
            pending,
            closed,
            close_reason,
            notifications,
            stderr_finished,
        ));
        Ok(conn)
    }

    /// Sends a request and waits for its response (the caller bounds the wait).
    pub(crate) async fn request(&self, id: u64, message: Value) -> Result<Value, RequestError> {
        let key = Value::from(id).to_string();
        let (tx, rx) = oneshot::channel();
        self.pending
            .lock()
            .expect("not poisoned")
            .insert(key.clone(), tx);
        if let Err(e) = self.send(&message).await {
            self.pending.lock().expect("not poisoned").remove(&key);
            return Err(e);
        }
        match rx.await {
            Ok(Ok(result)) => Ok(result),
            Ok(Err(RequestError::Closed(_))) | Err(_) => {
                Err(RequestError::Closed(self.why_closed()))
            }
            Ok(Err(e)) => Err(e),
        }
    }

    /// Sends a message without waiting (notifications, responses).
    pub(crate) async fn send(&self, message: &Value) -> Result<(), RequestError> {
        if self.closed.load(Ordering::SeqCst) {
            return Err(RequestError::Closed(self.why_closed()));
        }
        let mut line = message.to_string();
        line.push('\n');
        let mut stdin = self.stdin.lock().await;
        let written = async {
            stdin.write_all(line.as_bytes()).await?;
            stdin.flush().await
        }
        .await;
        written.map_err(|e| RequestError::Closed(format!("{}: {e}", self.why_closed())))
    }

    /// Server-initiated notifications.
    pub(crate) fn notifications(&self) -> broadcast::Receiver<Value> {
        self.notifications.subscribe()
    }

    /// Whether the server has gone.
    pub(crate) fn is_closed(&self) -> bool {
        self.closed.load(Ordering::SeqCst)
    }

    /// Why the connection closed: the exit status and the last lines of stderr.
    pub(crate) fn why_closed(&self) -> String {
        let mut why = self
            .close_reason
            .lock()
            .expect("not poisoned")
            .clone()
            .unwrap_or_else(|| "the server closed its output".into());
        if let Ok(Some(status)) = self.child.lock().expect("not poisoned").try_wait() {
            why.push_str(&format!(" ({status})"));
        }
        let tail = self.stderr_tail.lock().expect("not poisoned");
        if let Some(last) = tail.back() {
            why.push_str(&format!("; its stderr ends: {last}"));
        }
        why
    }

    /// Kills the server's whole process group.
    pub(crate) fn kill(&self) {
        self.closed.store(true, Ordering::SeqCst);
        if let Some(pid) = self.pid {
            let _ = nix::sys::signal::killpg(
                nix::unistd::Pid::from_raw(pid as i32),
                nix::sys::signal::Signal::SIGKILL,
            );
        }
        let _ = self.child.lock().expect("not poisoned").start_kill();
    }
}

impl Drop for StdioConnection {
    fn drop(&mut self) {
        self.kill();
    }
}

async fn read_stdout(
    stdout: impl AsyncRead + Unpin,
    pending: Pending,
    closed: Arc<AtomicBool>,
    close_reason: Arc<Mutex<Option<String>>>,
    notifications: broadcast::Sender<Value>,
    stderr_finished: oneshot::Receiver<()>,
) {
    let mut reader = BufReader::new(stdout);
    let mut line = Vec::new();
    let reason = loop {
        line.clear();
        match (&mut reader)
            .take(MAX_LINE as u64 + 1)
            .read_until(b'\n', &mut line)
            .await
        {
            Ok(0) => break "the server closed its output".to_string(),
            Ok(n) if n > MAX_LINE => break format!("the server sent a line over {MAX_LINE} bytes"),
            Ok(_) => {}
            Err(e) => break format!("reading from the server failed: {e}"),
        }
        let Ok(value) = serde_json::from_slice::<Value>(&line) else {
            // Servers sometimes log to stdout; skip what is not JSON.
            continue;
        };
        match Message::parse(value) {
            Ok(Message::Response { id, outcome }) => {
                let tx = pending
                    .lock()
                    .expect("not poisoned")
                    .remove(&id.to_string());
                if let Some(tx) = tx {
                    let _ =
                        tx.send(outcome.map_err(|e| RequestError::Rpc(RpcError::from_value(&e))));
                }
            }
            // Notifications, and server-to-client requests (sampling, roots, ping), are
            // offered to subscribers; nobody answering a request is the server's
            // problem, not a hang.
            Ok(Message::Notification { method, params }) => {
                let _ = notifications.send(jsonrpc::notification(&method, params));
            }
            Ok(Message::Request { id, method, params }) => {
                let _ = notifications.send(jsonrpc::request(id, &method, params));
            }
            Err(_) => {}
        }
    };
    // A dying server's last words are on stderr: let them arrive (briefly) so the error
    // can quote them.
    let _ = tokio::time::timeout(std::time::Duration::from_millis(500), stderr_finished).await;
    closed.store(true, Ordering::SeqCst);
    *close_reason.lock().expect("not poisoned") = Some(reason.clone());
    let waiting: Vec<_> = pending.lock().expect("not poisoned").drain().collect();
    for (_, tx) in waiting {
        let _ = tx.send(Err(RequestError::Closed(reason.clone())));
    }
}

async fn read_stderr(stderr: impl AsyncRead + Unpin, tail: Arc<Mutex<VecDeque<String>>>) {
    let mut lines = BufReader::new(stderr).lines();
    while let Ok(Some(line)) = lines.next_line().await {
        let mut t = tail.lock().expect("not poisoned");
        if t.len() == STDERR_LINES {
            t.pop_front();
        }
        // Redacted before it is cut: a secret of `env` printed is not left half there.
        t.push_back(crate::secrets::redact(&line).chars().take(500).collect());
    }
}
