//! An MCP client over either transport: the handshake in whichever era the server speaks
//! (`server/discover` first, then `initialize` as the fallback), `tools/list` across every
//! page, `tools/call` — each bounded by a timeout, each failure a named error.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use serde_json::{Value, json};
use tokio::sync::broadcast;

use super::http::HttpConnection;
use super::jsonrpc::{self, RpcError};
use super::protocol::{self, Era};
use super::stdio::StdioConnection;

/// Why a request failed.
#[derive(Debug, Clone, PartialEq)]
pub enum RequestError {
    /// The server answered with a JSON-RPC error.
    Rpc(RpcError),
    /// The server is gone: process exited, connection refused or dropped.
    Closed(String),
    /// No answer within the timeout.
    Timeout(Duration),
    /// The server broke the protocol (garbage, wrong shapes, HTTP errors).
    Protocol(String),
}

impl std::fmt::Display for RequestError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RequestError::Rpc(e) => write!(f, "{e}"),
            RequestError::Closed(why) => write!(f, "server unavailable: {why}"),
            RequestError::Timeout(d) => {
                write!(f, "no answer within {}", humantime::format_duration(*d))
            }
            RequestError::Protocol(why) => write!(f, "protocol error: {why}"),
        }
    }
}

/// A `tools/call` failure; the same as a request failure.
pub type CallError = RequestError;

/// Who the server says it is.
#[derive(Debug, Clone, PartialEq)]
pub struct ServerIdentity {
    /// `serverInfo.name`.
    pub name: String,
    /// `serverInfo.version`.
    pub version: String,
    /// The protocol version in use.
    pub protocol_version: String,
    /// The server's capabilities, as sent.
    pub capabilities: Value,
}

enum Connection {
    Stdio(StdioConnection),
    Http(HttpConnection),
}

/// A connected MCP client.
pub struct McpClient {
    conn: Connection,
    era: Era,
    identity: ServerIdentity,
    next_id: AtomicU64,
    timeout: Duration,
}

/// How to reach an MCP server, in the wire layer's own terms: the values are final (the
/// caller has expanded any `${VAR}` of the configuration).
#[derive(Debug, Clone)]
pub enum Endpoint {
    /// A child process speaking newline-delimited JSON-RPC on stdio.
    Stdio {
        /// argv.
        command: Vec<String>,
        /// Extra environment.
        env: Vec<(String, String)>,
    },
    /// Streamable HTTP.
    Http {
        /// The endpoint.
        url: url::Url,
        /// Request headers.
        headers: Vec<(String, String)>,
    },
}

impl McpClient {
    /// Connects and does the handshake, each step within `timeout`.
    pub async fn connect(
        endpoint: &Endpoint,
        timeout: Duration,
    ) -> Result<McpClient, RequestError> {
        let conn = match endpoint {
            Endpoint::Stdio { command, env } => Connection::Stdio(
                StdioConnection::spawn(command, env).map_err(RequestError::Closed)?,
            ),
            Endpoint::Http { url, headers } => {
                Connection::Http(HttpConnection::new(url.clone(), headers.clone()))
            }
        };
        let mut client = McpClient {
            conn,
            era: Era::Legacy(protocol::LATEST_LEGACY.into()),
            identity: ServerIdentity {
                name: String::new(),
                version: String::new(),
                protocol_version: String::new(),
                capabilities: Value::Null,
            },
            next_id: AtomicU64::new(1),
            timeout,
        };
        client.handshake().await?;
        Ok(client)
    }

    async fn handshake(&mut self) -> Result<(), RequestError> {
        // Stateless servers answer `server/discover`; handshake-era ones reject it.
        self.era = Era::Stateless;
        if let Connection::Http(h) = &self.conn {
            h.set_version(protocol::STATELESS);
        }
        let discovered = self.raw_request("server/discover", json!({})).await;
        match discovered {
            Ok(result)
                if result
                    .get("supportedVersions")
                    .and_then(Value::as_array)
                    .is_some_and(|v| v.iter().any(|x| x == protocol::STATELESS)) =>
            {
                self.identity = identity(&result, protocol::STATELESS);
                return Ok(());
            }
            Err(e @ (RequestError::Closed(_) | RequestError::Timeout(_))) => return Err(e),
            _ => {}
        }
        self.era = Era::Legacy(protocol::LATEST_LEGACY.into());
        if let Connection::Http(h) = &self.conn {
            h.set_version(protocol::LATEST_LEGACY);
        }
        let result = self
            .raw_request(
                "initialize",
                json!({
                    "protocolVersion": protocol::LATEST_LEGACY,
                    "capabilities": {},
                    "clientInfo": protocol::client_info(),
                }),
            )
            .await?;
        let version = result
            .get("protocolVersion")
            .and_then(Value::as_str)
            .unwrap_or(protocol::LATEST_LEGACY)
            .to_string();
        if !protocol::LEGACY.contains(&version.as_str()) {
            return Err(RequestError::Protocol(format!(
                "the server chose protocol version `{version}`, which fibon-verify does not speak"
            )));
        }
        if let Connection::Http(h) = &self.conn {
            h.set_version(&version);
        }
        self.identity = identity(&result, &version);
        self.era = Era::Legacy(version);
        self.notify("notifications/initialized", Value::Null).await
    }

    /// Who the server is.
    pub fn identity(&self) -> &ServerIdentity {
        &self.identity
    }

    /// The era in use.
    pub fn era(&self) -> &Era {
        &self.era
    }

    /// Server notifications (and server-to-client requests), as received.
    pub fn notifications(&self) -> broadcast::Receiver<Value> {
        match &self.conn {
            Connection::Stdio(s) => s.notifications(),
            Connection::Http(h) => h.notifications(),
        }
    }

    /// Whether the server is known to be gone.
    pub fn is_closed(&self) -> bool {
        match &self.conn {
            Connection::Stdio(s) => s.is_closed(),
            Connection::Http(_) => false,
        }
    }

    /// Every tool of every page of `tools/list`, each exactly as sent.
    pub async fn list_tools(&self) -> Result<Vec<Value>, RequestError> {
        let mut tools = Vec::new();
        let mut cursor: Option<String> = None;
        for _ in 0..10_000 {
            let params = match &cursor {
                Some(c) => json!({"cursor": c}),
                None => json!({}),
            };
            let result = self.request("tools/list", params).await?;
            let page = result
                .get("tools")
                .and_then(Value::as_array)
                .ok_or_else(|| {
                    RequestError::Protocol("`tools/list` result has no `tools` list".into())
                })?;
            tools.extend(page.iter().cloned());
            match result.get("nextCursor").and_then(Value::as_str) {
                Some(next) if !next.is_empty() && cursor.as_deref() != Some(next) => {
                    cursor = Some(next.to_string())
                }
                _ => return Ok(tools),
            }
        }
        Err(RequestError::Protocol(
            "`tools/list` paginates without end".into(),
        ))
    }

    /// `tools/call`; the result exactly as sent (`isError: true` results are results).
    pub async fn call_tool(
        &self,
        name: &str,
        arguments: Value,
        meta: Option<Value>,
    ) -> Result<Value, CallError> {
        let mut params = json!({"name": name, "arguments": arguments});
        if let Some(meta) = meta {
            params["_meta"] = meta;
        }
        self.request("tools/call", params).await
    }

    /// Any request, with the era's `_meta` added.
    pub async fn request(&self, method: &str, params: Value) -> Result<Value, RequestError> {
        let params = match self.era {
            Era::Stateless => protocol::with_stateless_meta(params),
            Era::Legacy(_) => params,
        };
        self.raw_request(method, params).await
    }

    async fn raw_request(&self, method: &str, params: Value) -> Result<Value, RequestError> {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let params = match (&self.era, method) {
            (Era::Stateless, "server/discover") => protocol::with_stateless_meta(params),
            _ => params,
        };
        let message = jsonrpc::request(id, method, params);
        let fut = async {
            match &self.conn {
                Connection::Stdio(s) => s.request(id, message).await,
                Connection::Http(h) => h.request(id, message).await,
            }
        };
        match tokio::time::timeout(self.timeout, fut).await {
            Ok(r) => r,
            Err(_) => Err(RequestError::Timeout(self.timeout)),
        }
    }

    /// A notification.
    pub async fn notify(&self, method: &str, params: Value) -> Result<(), RequestError> {
        let message = jsonrpc::notification(method, params);
        let fut = async {
            match &self.conn {
                Connection::Stdio(s) => s.send(&message).await,
                Connection::Http(h) => h.send(&message).await,
            }
        };
        tokio::time::timeout(self.timeout, fut)
            .await
            .unwrap_or(Err(RequestError::Timeout(self.timeout)))
    }

    /// Ends the connection: DELETE for HTTP, the process group killed for stdio.
    pub async fn close(&self) {
        match &self.conn {
            Connection::Stdio(s) => s.kill(),
            Connection::Http(h) => h.close().await,
        }
    }

    /// Kills a stdio server (tests of SERVER_DOWN use it); no-op for HTTP.
    pub fn kill(&self) {
        if let Connection::Stdio(s) = &self.conn {
            s.kill();
        }
    }
}

fn identity(result: &Value, version: &str) -> ServerIdentity {
    let info = result.get("serverInfo");
    let field = |k: &str| {
        info.and_then(|i| i.get(k))
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string()
    };
    ServerIdentity {
        name: field("name"),
        version: field("version"),
        protocol_version: version.to_string(),
        capabilities: result.get("capabilities").cloned().unwrap_or(Value::Null),
    }
}
