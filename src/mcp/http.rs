//! The Streamable HTTP transport, client side: each message POSTed; the reply is JSON or
//! an SSE stream carrying the response (and any notifications before it); the session id
//! and protocol version travel in headers.

use std::sync::Mutex;

use futures_util::StreamExt;
use serde_json::Value;
use tokio::sync::broadcast;

use super::client::RequestError;
use super::jsonrpc::{Message, RpcError};
use super::protocol::{SESSION_HEADER, VERSION_HEADER};
use super::sse;

/// The most bytes of a reply we read (a flooding server is cut off, not buffered forever).
const MAX_BODY: usize = 64 * 1024 * 1024;

pub(crate) struct HttpConnection {
    client: reqwest::Client,
    url: url::Url,
    headers: Vec<(String, String)>,
    session: Mutex<Option<String>>,
    version: Mutex<Option<String>>,
    notifications: broadcast::Sender<Value>,
}

impl HttpConnection {
    pub(crate) fn new(url: url::Url, headers: Vec<(String, String)>) -> HttpConnection {
        let (notifications, _) = broadcast::channel(256);
        HttpConnection {
            client: reqwest::Client::builder()
                .no_proxy()
                // Idle pooled connections are dropped before a server's idle limit can close
                // one under a request (the gateway's is 120 s).
                .pool_idle_timeout(std::time::Duration::from_secs(20))
                .build()
                .expect("a default client builds"),
            url,
            headers,
            session: Mutex::new(None),
            version: Mutex::new(None),
            notifications,
        }
    }

    /// Sets the protocol version sent in the `MCP-Protocol-Version` header.
    pub(crate) fn set_version(&self, v: &str) {
        *self.version.lock().expect("not poisoned") = Some(v.to_string());
    }

    pub(crate) fn notifications(&self) -> broadcast::Receiver<Value> {
        self.notifications.subscribe()
    }

    /// POSTs a request and returns its result.
    pub(crate) async fn request(&self, id: u64, message: Value) -> Result<Value, RequestError> {
        let resp = self.post(&message).await?;
        let id = Value::from(id);
        let is_sse = resp
            .headers()
            .get(reqwest::header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|ct| ct.starts_with("text/event-stream"));
        if is_sse {
            let mut parser = sse::Parser::default();
            let mut stream = resp.bytes_stream();
            let mut seen = 0usize;
            while let Some(chunk) = stream.next().await {
                let chunk = chunk
                    .map_err(|e| RequestError::Closed(format!("the event stream broke: {e}")))?;
                seen += chunk.len();
                if seen > MAX_BODY {
                    return Err(RequestError::Protocol(format!(
                        "the reply exceeded {MAX_BODY} bytes"
                    )));
                }
                // Priming events (an id with empty data) carry no message.
                for event in parser
                    .feed(&chunk)
                    .into_iter()
                    .filter(|e| !e.data.trim().is_empty())
                {
                    if let Some(result) = self.take(&id, &event.data)? {
                        return result;
                    }
                }
            }
            Err(RequestError::Closed(
                "the event stream ended without a response".into(),
            ))
        } else {
            let body = read_capped(resp).await?;
            match self.take(&id, &body)? {
                Some(result) => result,
                None => Err(RequestError::Protocol(
                    "the reply holds no response to the request".into(),
                )),
            }
        }
    }

    /// Routes one received message: the response to `id` is returned; notifications are
    /// broadcast; anything else is skipped.
    fn take(
        &self,
        id: &Value,
        text: &str,
    ) -> Result<Option<Result<Value, RequestError>>, RequestError> {
        let value: Value = serde_json::from_str(text)
            .map_err(|e| RequestError::Protocol(format!("the reply is not JSON: {e}")))?;
        let messages = match value {
            Value::Array(batch) => batch,
            one => vec![one],
        };
        let mut found = None;
        for m in messages {
            match Message::parse(m.clone()) {
                Ok(Message::Response { id: rid, outcome }) if &rid == id => {
                    found = Some(outcome.map_err(|e| RequestError::Rpc(RpcError::from_value(&e))));
                }
                Ok(Message::Notification { .. } | Message::Request { .. }) => {
                    let _ = self.notifications.send(m);
                }
                Ok(Message::Response { .. }) => {}
                Err(e) => {
                    return Err(RequestError::Protocol(format!(
                        "the reply is not JSON-RPC: {e}"
                    )));
                }
            }
        }
        Ok(found)
    }

    /// POSTs a notification (answered 202 Accepted).
    pub(crate) async fn send(&self, message: &Value) -> Result<(), RequestError> {
        self.post(message).await.map(drop)
    }

    async fn post(&self, message: &Value) -> Result<reqwest::Response, RequestError> {
        let mut req = self
            .client
            .post(self.url.clone())
            .header(
                reqwest::header::ACCEPT,
                "application/json, text/event-stream",
            )
            .header(reqwest::header::CONTENT_TYPE, "application/json")
            .body(message.to_string());
        for (k, v) in &self.headers {
            req = req.header(k, v);
        }
        if let Some(v) = self.version.lock().expect("not poisoned").clone() {
            req = req.header(VERSION_HEADER, v);
        }
        if let Some(s) = self.session.lock().expect("not poisoned").clone() {
            req = req.header(SESSION_HEADER, s);
        }
        let resp = req.send().await.map_err(|e| {
            if e.is_connect() {
                RequestError::Closed(format!(
                    "cannot connect to {}: {}",
                    self.url,
                    root_cause(&e)
                ))
            } else {
                RequestError::Closed(format!(
                    "request to {} failed: {}",
                    self.url,
                    root_cause(&e)
                ))
            }
        })?;
        let status = resp.status();
        // Only a successful reply establishes a session: a handshake-era server rejects
        // `server/discover` with 400 and a fresh session id that its `initialize` would
        // then refuse (seen with PyPI mcp-proxy 0.13.0).
        if status.is_success()
            && let Some(sid) = resp
                .headers()
                .get(SESSION_HEADER)
                .and_then(|v| v.to_str().ok())
        {
            *self.session.lock().expect("not poisoned") = Some(sid.to_string());
        }
        if !status.is_success() {
            let body = read_capped(resp).await.unwrap_or_default();
            // A JSON-RPC error in an error status is still a JSON-RPC error.
            if let Ok(v) = serde_json::from_str::<Value>(&body)
                && let Some(e) = v.get("error")
            {
                return Err(RequestError::Rpc(RpcError::from_value(e)));
            }
            // Redacted before it is cut: a header's secret echoed is not left half there.
            let snippet: String = crate::secrets::redact(&body).chars().take(200).collect();
            return Err(RequestError::Protocol(format!(
                "HTTP {status} from {}: {snippet}",
                self.url
            )));
        }
        Ok(resp)
    }

    /// Ends the session (DELETE), as a polite client does.
    pub(crate) async fn close(&self) {
        let session = self.session.lock().expect("not poisoned").clone();
        if let Some(s) = session {
            let _ = self
                .client
                .delete(self.url.clone())
                .header(SESSION_HEADER, s)
                .send()
                .await;
        }
    }
}

async fn read_capped(resp: reqwest::Response) -> Result<String, RequestError> {
    let mut stream = resp.bytes_stream();
    let mut body = Vec::new();
    while let Some(chunk) = stream.next().await {
        let chunk =
            chunk.map_err(|e| RequestError::Closed(format!("reading the reply failed: {e}")))?;
        body.extend_from_slice(&chunk);
        if body.len() > MAX_BODY {
            return Err(RequestError::Protocol(format!(
                "the reply exceeded {MAX_BODY} bytes"
            )));
        }
    }
    Ok(String::from_utf8_lossy(&body).into_owned())
}

fn root_cause(e: &(dyn std::error::Error + 'static)) -> String {
    let mut cur = e;
    while let Some(next) = cur.source() {
        cur = next;
    }
    cur.to_string()
}
