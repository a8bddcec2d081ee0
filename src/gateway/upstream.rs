//! The upstream MCP servers of `platform.mcp_servers`, connected once and shared by every
//! session: their tool lists (kept fresh on `notifications/tools/list_changed`) and the
//! calls the gateway forwards to them. A server that cannot be reached is kept as a named
//! problem, never silently dropped.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, RwLock};
use std::time::Duration;

use serde_json::Value;
use tokio::sync::broadcast;

use crate::config::{McpServer, McpTransport, expand_env};
use crate::mcp::{McpClient, ServerIdentity};

/// One upstream server.
pub struct Upstream {
    /// Its configured name.
    pub name: String,
    client: Option<Arc<McpClient>>,
    /// Why it is unavailable, when it is.
    pub error: Option<String>,
    tools: RwLock<Vec<Value>>,
}

impl Upstream {
    /// The connected client, unless the server could not be reached.
    pub fn client(&self) -> Option<&Arc<McpClient>> {
        self.client.as_ref()
    }

    /// Who the server says it is.
    pub fn identity(&self) -> Option<&ServerIdentity> {
        self.client.as_ref().map(|c| c.identity())
    }

    /// Its tools, each exactly as the server sent it.
    pub fn tools(&self) -> Vec<Value> {
        self.tools.read().expect("not poisoned").clone()
    }
}

/// Every upstream server, and the notifications they send.
pub struct Upstreams {
    servers: Vec<Arc<Upstream>>,
    notifications: broadcast::Sender<Value>,
    /// Bumped whenever a server's tool list changes, so sessions know to rebuild their
    /// catalogs (and need not rebuild them on every call).
    generation: Arc<AtomicU64>,
}

impl Upstreams {
    /// No upstream servers.
    pub fn none() -> Arc<Upstreams> {
        Arc::new(Upstreams {
            servers: Vec::new(),
            notifications: broadcast::channel(16).0,
            generation: Arc::default(),
        })
    }

    /// Connects to every server at once, each within `timeout`. Failures are recorded on
    /// the server (`error`), not returned: the caller decides what an absent server means.
    pub async fn connect(servers: &[McpServer], timeout: Duration) -> Arc<Upstreams> {
        let (notifications, _) = broadcast::channel(256);
        let connecting = servers.iter().map(|s| async move {
            match McpClient::connect(&endpoint(&s.transport), timeout).await {
                Ok(client) => match client.list_tools().await {
                    Ok(tools) => (s.name.clone(), Some(client), None, tools),
                    Err(e) => (
                        s.name.clone(),
                        Some(client),
                        Some(format!("tools/list failed: {e}")),
                        Vec::new(),
                    ),
                },
                Err(e) => (s.name.clone(), None, Some(e.to_string()), Vec::new()),
            }
        });
        let results = futures_util::future::join_all(connecting).await;
        let mut list = Vec::new();
        let generation: Arc<AtomicU64> = Arc::default();
        for (name, client, error, tools) in results {
            let upstream = Arc::new(Upstream {
                name,
                client: client.map(Arc::new),
                error,
                tools: RwLock::new(tools),
            });
            if let Some(client) = upstream.client.clone() {
                tokio::spawn(watch(
                    Arc::downgrade(&upstream),
                    client,
                    notifications.clone(),
                    Arc::clone(&generation),
                ));
            }
            list.push(upstream);
        }
        Arc::new(Upstreams {
            servers: list,
            notifications,
            generation,
        })
    }

    /// The servers, in configuration order.
    pub fn servers(&self) -> &[Arc<Upstream>] {
        &self.servers
    }

    /// Notifications from any upstream, as `(server name, message)` pairs wrapped in the
    /// message itself (the gateway passes them through to sessions' streams).
    pub fn notifications(&self) -> broadcast::Receiver<Value> {
        self.notifications.subscribe()
    }

    /// Re-lists every server's tools now (after a server changed them).
    pub async fn refresh(&self) {
        for s in &self.servers {
            if let Some(c) = &s.client
                && let Ok(tools) = c.list_tools().await
            {
                *s.tools.write().expect("not poisoned") = tools;
            }
        }
        self.generation.fetch_add(1, Ordering::SeqCst);
    }

    /// Changes whenever any server's tool list changes.
    pub fn generation(&self) -> u64 {
        self.generation.load(Ordering::SeqCst)
    }

    /// Ends every connection (kills stdio servers).
    pub async fn close(&self) {
        for s in &self.servers {
            if let Some(c) = &s.client {
                c.close().await;
            }
        }
    }
}

/// Passes an upstream's notifications on, and re-lists its tools when they change.
async fn watch(
    upstream: std::sync::Weak<Upstream>,
    client: Arc<McpClient>,
    out: broadcast::Sender<Value>,
    generation: Arc<AtomicU64>,
) {
    let mut rx = client.notifications();
    loop {
        let message = match rx.recv().await {
            Ok(m) => m,
            Err(broadcast::error::RecvError::Lagged(_)) => continue,
            Err(broadcast::error::RecvError::Closed) => return,
        };
        let Some(up) = upstream.upgrade() else { return };
        if message.get("method").and_then(Value::as_str) == Some("notifications/tools/list_changed")
            && let Ok(tools) = client.list_tools().await
        {
            *up.tools.write().expect("not poisoned") = tools;
            generation.fetch_add(1, Ordering::SeqCst);
        }
        if message.get("id").is_none() {
            let _ = out.send(message);
        }
    }
}

/// The wire layer's endpoint for a configured server, its `${VAR}`s expanded.
pub fn endpoint(transport: &McpTransport) -> crate::mcp::Endpoint {
    let expand = |m: &indexmap::IndexMap<String, String>| -> Vec<(String, String)> {
        m.iter().map(|(k, v)| (k.clone(), expand_env(v))).collect()
    };
    match transport {
        McpTransport::Stdio { command, env } => crate::mcp::Endpoint::Stdio {
            command: command.clone(),
            env: expand(env),
        },
        McpTransport::Http { url, headers } => crate::mcp::Endpoint::Http {
            url: url.clone(),
            headers: expand(headers),
        },
    }
}
