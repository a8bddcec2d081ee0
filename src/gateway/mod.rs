//! The tool gateway: the agent under test gets its tools from here, so fibon-verify can
//! remove or break them and record what really happened. Each matrix cell is a session
//! under `/s/SID/`, with its own tools, fault plan and trace; tools come from scenario
//! fixtures and from upstream MCP servers (proxied, unknown fields kept). Binds
//! 127.0.0.1 by default. [`standalone`] serves one session on its own, for any MCP
//! client (`fibon-verify gateway`).
//!
//! Wire behaviour (docs/gateway.md, normative): [`rest`] for the REST API,
//! [`mcp_endpoint`] for MCP over Streamable HTTP. HTTP/1 is served by hyper's own
//! builder rather than `axum::serve`, for its header read timeout: a client that never
//! finishes a request's headers (slowloris) is cut off instead of holding a connection.
//! Every route is behind [`guard`] (`Host` and `Origin`, against DNS rebinding). The
//! agent-facing routes serve tools only: the trace is read in process.

mod catalog;
mod fault;
mod guard;
mod mcp_endpoint;
mod rest;
mod session;
pub mod standalone;
mod trace;
mod upstream;

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::{Arc, RwLock};
use std::time::Duration;

use axum::Router;
use axum::extract::DefaultBodyLimit;
use axum::routing::{get, post};
use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
use hyper_util::server::conn::auto;
use hyper_util::service::TowerToHyperService;
use tokio::net::TcpListener;
use tokio::sync::{oneshot, watch};

pub use catalog::{Catalog, Entry, Source};
pub use fault::{Fault, FaultPlan, NotFoundStyle};
pub use mcp_endpoint::MAX_BATCH;
pub use session::{Outcome, Session, SessionSpec, reply_text};
pub use trace::{
    DroppedCall, PendingCall, Recorded, Status, TRACE_EVENT_CAP, TRUNCATED_ARGUMENTS_CAP,
    TRUNCATED_NAME_CAP, ToolCalls, Trace, TraceEvent, Truncated, result_text,
};
pub use upstream::{Upstream, Upstreams, endpoint};

/// The largest request body read, in bytes (axum's default, made explicit so that the
/// refusal can name it).
pub const BODY_LIMIT: usize = 2 * 1024 * 1024;

/// Gateway settings.
#[derive(Debug, Clone)]
pub struct GatewayOptions {
    /// Where to listen (default 127.0.0.1, any free port).
    pub bind: SocketAddr,
    /// How long a TIMEOUT fault holds a call.
    pub timeout_fault_delay: Duration,
    /// How long a LATENCY fault delays a call.
    pub latency_fault_delay: Duration,
    /// Bytes of each result text kept in the trace.
    pub trace_text_cap: usize,
    /// Tools per `tools/list` page.
    pub page_size: usize,
    /// How removed tools answer `tools/call` over MCP.
    pub not_found_style: NotFoundStyle,
    /// How long a client may take to send a request's headers (also how long an idle
    /// keep-alive connection stays open); then its connection is closed. Longer than the
    /// idle timeouts of common client pools (reqwest, Go: 90 s), so that a pooled
    /// connection is dropped by its client before the gateway closes it under a request.
    pub header_read_timeout: Duration,
}

impl Default for GatewayOptions {
    fn default() -> Self {
        GatewayOptions {
            bind: SocketAddr::from(([127, 0, 0, 1], 0)),
            timeout_fault_delay: Duration::from_secs(5),
            latency_fault_delay: Duration::from_secs(1),
            trace_text_cap: 64 * 1024,
            page_size: 100,
            not_found_style: NotFoundStyle::default(),
            header_read_timeout: Duration::from_secs(120),
        }
    }
}

/// Why a request body could not be read: too large, or broken off.
pub(crate) fn unreadable_body(rejection: &axum::extract::rejection::BytesRejection) -> String {
    if rejection.status() == axum::http::StatusCode::PAYLOAD_TOO_LARGE {
        format!(
            "the request body is larger than the gateway's limit of {} MiB",
            BODY_LIMIT / (1024 * 1024)
        )
    } else {
        format!(
            "the request body could not be read: {}",
            rejection.body_text()
        )
    }
}

pub(crate) struct GatewayState {
    sessions: RwLock<HashMap<String, Arc<Session>>>,
    upstreams: Arc<Upstreams>,
    options: Arc<GatewayOptions>,
}

impl GatewayState {
    fn session(&self, sid: &str) -> Option<Arc<Session>> {
        self.sessions
            .read()
            .expect("not poisoned")
            .get(sid)
            .cloned()
    }
}

/// A running gateway. Dropping it stops the server.
pub struct Gateway {
    state: Arc<GatewayState>,
    addr: SocketAddr,
    shutdown: Option<oneshot::Sender<()>>,
}

impl Gateway {
    /// Binds `options.bind` and starts serving.
    pub async fn start(
        options: GatewayOptions,
        upstreams: Arc<Upstreams>,
    ) -> std::io::Result<Gateway> {
        let listener = TcpListener::bind(options.bind).await?;
        Gateway::serve(listener, options, upstreams)
    }

    /// Starts serving on a listener already bound (so that a caller can refuse an address
    /// before it connects to upstream servers); `options.bind` is not used. Must be called
    /// within a Tokio runtime.
    pub fn serve(
        listener: TcpListener,
        options: GatewayOptions,
        upstreams: Arc<Upstreams>,
    ) -> std::io::Result<Gateway> {
        let addr = listener.local_addr()?;
        let state = Arc::new(GatewayState {
            sessions: RwLock::new(HashMap::new()),
            upstreams: Arc::clone(&upstreams),
            options: Arc::new(options),
        });
        let app = Router::new()
            .route("/s/{sid}/tools", get(rest::list))
            .route("/s/{sid}/tools/{name}", post(rest::call))
            .route(
                "/s/{sid}/mcp",
                post(mcp_endpoint::post)
                    .get(mcp_endpoint::stream)
                    .delete(mcp_endpoint::delete),
            )
            .layer(DefaultBodyLimit::max(BODY_LIMIT))
            .with_state(Arc::clone(&state))
            // Outermost, so that it covers every route and the fallback alike.
            .layer(axum::middleware::from_fn_with_state(addr, guard::same_host));
        let (tx, rx) = oneshot::channel::<()>();
        tokio::spawn(serve_http(
            listener,
            app,
            state.options.header_read_timeout,
            rx,
        ));
        tokio::spawn(forward_upstream_notifications(
            upstreams,
            Arc::downgrade(&state),
        ));
        Ok(Gateway {
            state,
            addr,
            shutdown: Some(tx),
        })
    }

    /// The address it listens on.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// The upstream servers.
    pub fn upstreams(&self) -> &Arc<Upstreams> {
        &self.state.upstreams
    }

    /// Opens a session; it lives until the handle is dropped.
    pub fn open_session(&self, spec: SessionSpec) -> SessionHandle {
        let id = uuid::Uuid::new_v4().simple().to_string();
        let session = Arc::new(Session::new(
            id.clone(),
            spec,
            Arc::clone(&self.state.upstreams),
            Arc::clone(&self.state.options),
        ));
        self.state
            .sessions
            .write()
            .expect("not poisoned")
            .insert(id, Arc::clone(&session));
        SessionHandle {
            session,
            base: format!("http://{}", self.addr),
            state: Arc::downgrade(&self.state),
        }
    }
}

impl Drop for Gateway {
    fn drop(&mut self) {
        if let Some(tx) = self.shutdown.take() {
            let _ = tx.send(());
        }
    }
}

/// A session's handle: its URLs, its trace, its faults. Dropping it closes the session.
pub struct SessionHandle {
    session: Arc<Session>,
    base: String,
    state: std::sync::Weak<GatewayState>,
}

impl SessionHandle {
    /// The session.
    pub fn session(&self) -> &Arc<Session> {
        &self.session
    }

    /// `http://127.0.0.1:PORT/s/SID/tools` (the agent protocol's `tools.http_url`).
    pub fn tools_url(&self) -> String {
        format!("{}/s/{}/tools", self.base, self.session.id)
    }

    /// `http://127.0.0.1:PORT/s/SID/mcp` (the agent protocol's `tools.mcp_url`).
    pub fn mcp_url(&self) -> String {
        format!("{}/s/{}/mcp", self.base, self.session.id)
    }

    /// The trace so far (the events kept: see [`SessionHandle::recorded`]).
    pub fn trace(&self) -> Vec<TraceEvent> {
        self.session.trace.events()
    }

    /// The trace so far and the note of the events past its cap, taken together.
    pub fn recorded(&self) -> Recorded {
        self.session.trace.recorded()
    }
}

impl Drop for SessionHandle {
    fn drop(&mut self) {
        if let Some(state) = self.state.upgrade() {
            state
                .sessions
                .write()
                .expect("not poisoned")
                .remove(&self.session.id);
        }
    }
}

/// Serves `app` over HTTP/1 until `shutdown`; then open connections finish the response
/// they are writing and close. A client gets `header_read_timeout` to send a request's
/// headers.
async fn serve_http(
    listener: TcpListener,
    app: Router,
    header_read_timeout: Duration,
    mut shutdown: oneshot::Receiver<()>,
) {
    let mut builder = auto::Builder::new(TokioExecutor::new());
    builder
        .http1()
        .timer(TokioTimer::new())
        .header_read_timeout(header_read_timeout);
    // Dropped when serving stops: every connection is then told to shut down gracefully.
    let (closing, closed) = watch::channel(());
    loop {
        let stream = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => stream,
                // The client gave up before it was accepted: nothing to serve.
                Err(e) if matches!(
                    e.kind(),
                    std::io::ErrorKind::ConnectionAborted
                        | std::io::ErrorKind::ConnectionReset
                        | std::io::ErrorKind::ConnectionRefused
                ) => continue,
                // Out of file descriptors, most likely: wait for some to be closed
                // rather than spin (as `axum::serve` and hyper do).
                Err(_) => {
                    tokio::time::sleep(Duration::from_secs(1)).await;
                    continue;
                }
            },
            _ = &mut shutdown => break,
        };
        let builder = builder.clone();
        let service = TowerToHyperService::new(app.clone());
        let mut closed = closed.clone();
        tokio::spawn(async move {
            let conn = builder.serve_connection(TokioIo::new(stream), service);
            let mut conn = std::pin::pin!(conn);
            tokio::select! {
                _ = conn.as_mut() => return,
                _ = closed.changed() => conn.as_mut().graceful_shutdown(),
            }
            let _ = conn.await;
        });
    }
    drop(closing);
}

async fn forward_upstream_notifications(
    upstreams: Arc<Upstreams>,
    state: std::sync::Weak<GatewayState>,
) {
    let mut rx = upstreams.notifications();
    drop(upstreams);
    loop {
        let message = match rx.recv().await {
            Ok(m) => m,
            Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => continue,
            Err(tokio::sync::broadcast::error::RecvError::Closed) => return,
        };
        let Some(state) = state.upgrade() else { return };
        let sessions: Vec<Arc<Session>> = state
            .sessions
            .read()
            .expect("not poisoned")
            .values()
            .cloned()
            .collect();
        for s in sessions {
            s.emit(message.clone());
        }
    }
}
