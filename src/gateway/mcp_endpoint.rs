//! The MCP endpoint of a session, `/s/SID/mcp`, over Streamable HTTP: POST answered with
//! JSON or an SSE stream, `Mcp-Session-Id` handed out on `initialize`, a GET stream for
//! `notifications/tools/list_changed`, and both protocol eras (`initialize` and the
//! stateless `_meta` + `server/discover`). Faults are put on the wire as real servers do.

use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;

use axum::body::{Body, Bytes};
use axum::extract::rejection::BytesRejection;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};

use super::fault::NotFoundStyle;
use super::session::{Outcome, Session};
use super::trace::Status;
use super::{GatewayState, rest};
use crate::mcp::jsonrpc::{self, Incoming, Message, RpcError};
use crate::mcp::{protocol, sse};

/// The error code of an unsupported protocol version (2026-07-28).
const UNSUPPORTED_VERSION: i64 = -32022;

/// The most messages one POST may batch (docs/gateway.md, "Limits"): every message is
/// answered in one reply, so an agent's batch of thousands would be held in memory at
/// once. A longer batch is refused whole.
pub const MAX_BATCH: usize = 100;

/// A request's `MCP-Protocol-Version` header, when it names a version the gateway does not
/// speak: refused with 400 (the specification: "an invalid or unsupported value").
/// Absent is fine (the handshake era's clients before 2025-06-18 send none).
fn unsupported_version_header(headers: &HeaderMap) -> Option<Response> {
    let value = headers.get(protocol::VERSION_HEADER)?;
    let given = String::from_utf8_lossy(value.as_bytes()).into_owned();
    if protocol::SUPPORTED.contains(&given.as_str()) {
        return None;
    }
    let e = RpcError::new(
        UNSUPPORTED_VERSION,
        format!(
            "Bad Request: unsupported MCP-Protocol-Version: {given} (supported: {})",
            protocol::SUPPORTED.join(", ")
        ),
    )
    .with_data(json!({"supported": protocol::SUPPORTED, "requested": given}));
    Some(rpc_error_response(StatusCode::BAD_REQUEST, Value::Null, &e))
}

/// A request's `Mcp-Session-Id`, when this gateway session did not hand it out (another
/// session's, ended, made up): 404, as the specification says of an unknown session.
fn foreign_mcp_session(session: &Session, headers: &HeaderMap) -> Option<Response> {
    let given = headers.get(protocol::SESSION_HEADER)?;
    let known = given.to_str().is_ok_and(|id| {
        session
            .mcp_sessions
            .lock()
            .expect("not poisoned")
            .contains(id)
    });
    (!known).then(|| {
        rpc_error_response(
            StatusCode::NOT_FOUND,
            Value::Null,
            &RpcError::new(-32001, "Session not found"),
        )
    })
}

pub(crate) async fn post(
    State(state): State<Arc<GatewayState>>,
    Path(sid): Path<String>,
    headers: HeaderMap,
    body: Result<Bytes, BytesRejection>,
) -> Response {
    let Some(session) = state.session(&sid) else {
        return rest::unknown_session(&sid);
    };
    if let Some(refused) =
        unsupported_version_header(&headers).or_else(|| foreign_mcp_session(&session, &headers))
    {
        return refused;
    }
    // Unread, it names no tool: answered, but there is no call to record.
    let body = match body {
        Ok(body) => body,
        Err(rejection) => {
            return rpc_error_response(
                rejection.status(),
                Value::Null,
                &RpcError::new(jsonrpc::INVALID_REQUEST, super::unreadable_body(&rejection)),
            );
        }
    };
    let parsed = match jsonrpc::parse_capped(&body, MAX_BATCH) {
        Ok(v) => v,
        Err(e) => {
            return rpc_error_response(
                StatusCode::BAD_REQUEST,
                Value::Null,
                &RpcError::new(jsonrpc::PARSE_ERROR, format!("Parse error: {e}")),
            );
        }
    };
    let (messages, batch) = match parsed {
        // JSON-RPC 2.0: an empty batch is one invalid request, answered with one error.
        Incoming::Batch(items) if items.is_empty() => {
            return rpc_error_response(
                StatusCode::BAD_REQUEST,
                Value::Null,
                &RpcError::new(jsonrpc::INVALID_REQUEST, "Invalid Request: an empty batch"),
            );
        }
        Incoming::TooLarge(n) => {
            return rpc_error_response(
                StatusCode::BAD_REQUEST,
                Value::Null,
                &RpcError::new(
                    jsonrpc::INVALID_REQUEST,
                    format!(
                        "Invalid Request: a batch of {n} messages is over the gateway's limit \
                         of {MAX_BATCH}"
                    ),
                )
                .with_data(json!({"limit": MAX_BATCH, "messages": n})),
            );
        }
        Incoming::Batch(items) => (items, true),
        Incoming::One(one) => (vec![one], false),
    };
    let mut replies = Vec::new();
    let mut new_session = None;
    let mut status = StatusCode::OK;
    for message in messages {
        match Message::parse(message) {
            Ok(Message::Request { id, method, params }) => {
                let (reply, code) =
                    handle(&state, &session, id, &method, params, &mut new_session).await;
                if code != StatusCode::OK {
                    status = code;
                }
                replies.push(reply);
            }
            Ok(Message::Notification { .. } | Message::Response { .. }) => {}
            Err(why) => replies.push(jsonrpc::error_response(
                Value::Null,
                &RpcError::new(jsonrpc::INVALID_REQUEST, why),
            )),
        }
    }
    if replies.is_empty() {
        return StatusCode::ACCEPTED.into_response();
    }
    let wants_json = headers
        .get(header::ACCEPT)
        .and_then(|v| v.to_str().ok())
        .is_none_or(|a| {
            a.contains("application/json") || a.contains("*/*") || !a.contains("text/event-stream")
        });
    let mut response = if wants_json {
        let body = if batch {
            Value::Array(replies)
        } else {
            replies.remove(0)
        };
        (
            status,
            [(header::CONTENT_TYPE, "application/json")],
            body.to_string(),
        )
            .into_response()
    } else {
        let text: String = replies.iter().map(|r| sse::format(r, None)).collect();
        (status, [(header::CONTENT_TYPE, "text/event-stream")], text).into_response()
    };
    if let Some(id) = new_session
        && let Ok(v) = HeaderValue::from_str(&id)
    {
        response.headers_mut().insert(protocol::SESSION_HEADER, v);
    }
    response
}

async fn handle(
    state: &GatewayState,
    session: &Session,
    id: Value,
    method: &str,
    params: Value,
    new_session: &mut Option<String>,
) -> (Value, StatusCode) {
    let stateless = protocol::request_version(&params).map(String::from);
    if let Some(v) = &stateless
        && !protocol::SUPPORTED.contains(&v.as_str())
    {
        let e = RpcError::new(
            UNSUPPORTED_VERSION,
            format!("Unsupported protocol version: {v}"),
        )
        .with_data(json!({"supported": protocol::SUPPORTED, "requested": v}));
        return (jsonrpc::error_response(id, &e), StatusCode::BAD_REQUEST);
    }
    let stateless = stateless.is_some_and(|v| v == protocol::STATELESS);
    let server_info = json!({"name": "fibon-verify-gateway", "version": env!("CARGO_PKG_VERSION")});
    let capabilities = json!({"tools": {"listChanged": true}});
    let result = match method {
        "initialize" => {
            let requested = params
                .get("protocolVersion")
                .and_then(Value::as_str)
                .unwrap_or(protocol::LATEST_LEGACY);
            let sid = uuid::Uuid::new_v4().simple().to_string();
            session
                .mcp_sessions
                .lock()
                .expect("not poisoned")
                .insert(sid.clone());
            *new_session = Some(sid);
            Ok(json!({
                "protocolVersion": protocol::negotiate(requested),
                "capabilities": capabilities,
                "serverInfo": server_info,
                "instructions": "Tools of a fibon-verify gateway session.",
            }))
        }
        "ping" => Ok(json!({})),
        "server/discover" => Ok(json!({
            "resultType": "complete",
            "supportedVersions": protocol::SUPPORTED,
            "capabilities": capabilities,
            "serverInfo": server_info,
            "_meta": {"serverInfo": server_info},
        })),
        "tools/list" => {
            // The cursor is an offset the gateway handed out as `nextCursor`; anything
            // else (not a string of digits, past the end) is refused, never trusted.
            let invalid = || RpcError::new(jsonrpc::INVALID_PARAMS, "Invalid cursor");
            let cursor = match params.get("cursor") {
                None | Some(Value::Null) => Ok(None),
                Some(Value::String(c)) => c.parse::<usize>().map(Some).map_err(|_| invalid()),
                Some(_) => Err(invalid()),
            };
            cursor.and_then(|cursor| {
                let tools = session.list_page("mcp", cursor.is_none());
                let offset = cursor.unwrap_or(0);
                if offset > tools.len() {
                    return Err(invalid());
                }
                let page_size = state.options.page_size;
                let page: Vec<Value> = tools.iter().skip(offset).take(page_size).cloned().collect();
                let mut result = json!({"tools": page});
                let next = offset.saturating_add(page_size);
                if next < tools.len() {
                    result["nextCursor"] = Value::String(next.to_string());
                }
                if stateless {
                    result["ttlMs"] = json!(0);
                    result["cacheScope"] = json!("private");
                }
                Ok(result)
            })
        }
        "tools/call" => match params.get("name").and_then(Value::as_str) {
            None => Err(RpcError::new(
                jsonrpc::INVALID_PARAMS,
                "tools/call needs a `name`",
            )),
            Some(name) => {
                let arguments = params
                    .get("arguments")
                    .cloned()
                    .unwrap_or_else(|| json!({}));
                let meta = params.get("_meta").cloned();
                call_reply(
                    session.call("mcp", name, arguments, meta).await,
                    name,
                    state.options.not_found_style,
                )
            }
        },
        other => Err(RpcError::new(
            jsonrpc::METHOD_NOT_FOUND,
            format!("Method not found: {other}"),
        )),
    };
    match result {
        Ok(mut r) => {
            if stateless && r.is_object() && r.get("resultType").is_none() {
                r["resultType"] = json!("complete");
            }
            (jsonrpc::response(id, r), StatusCode::OK)
        }
        Err(e) => (jsonrpc::error_response(id, &e), StatusCode::OK),
    }
}

/// A call's outcome as an MCP server would answer it.
fn call_reply(outcome: Outcome, name: &str, style: NotFoundStyle) -> Result<Value, RpcError> {
    let is_error =
        |text: String| json!({"content": [{"type": "text", "text": text}], "isError": true});
    match outcome {
        Outcome::Result(r) => Ok(r),
        Outcome::Rpc(e) => Err(e),
        Outcome::Failed { status, message } => match status {
            Status::NotFound | Status::UnknownTool => match style {
                NotFoundStyle::JsonrpcError => Err(RpcError::new(
                    jsonrpc::INVALID_PARAMS,
                    format!("Unknown tool: {name}"),
                )),
                NotFoundStyle::IsError => {
                    Ok(is_error(format!("MCP error -32602: Tool {name} not found")))
                }
            },
            Status::PermissionDenied | Status::ApprovalDenied => Ok(is_error(message)),
            Status::Timeout => Err(RpcError::new(jsonrpc::REQUEST_TIMEOUT, "Request timed out")
                .with_data(json!({"fault": "TIMEOUT", "message": message}))),
            Status::ServerDown => Err(RpcError::new(jsonrpc::INTERNAL_ERROR, message)
                .with_data(json!({"fault": "SERVER_DOWN"}))),
            Status::InvalidArguments => Err(RpcError::new(jsonrpc::INVALID_PARAMS, message)),
            Status::FixtureMiss => Err(RpcError::new(jsonrpc::INTERNAL_ERROR, message)
                .with_data(json!({"fault": "FIXTURE_MISS"}))),
            Status::Ok
            | Status::ToolError
            | Status::Empty
            | Status::UpstreamError
            | Status::Cancelled
            | Status::InFlight => Err(RpcError::new(jsonrpc::INTERNAL_ERROR, message)),
        },
    }
}

/// `GET /s/SID/mcp`: the session's server-to-client stream (list changes, upstream
/// notifications), with a keep-alive comment every 15 seconds.
pub(crate) async fn stream(
    State(state): State<Arc<GatewayState>>,
    Path(sid): Path<String>,
    headers: HeaderMap,
) -> Response {
    let Some(session) = state.session(&sid) else {
        return rest::unknown_session(&sid);
    };
    if let Some(refused) =
        unsupported_version_header(&headers).or_else(|| foreign_mcp_session(&session, &headers))
    {
        return refused;
    }
    let rx = session.events();
    let events = futures_util::stream::unfold(rx, |mut rx| async move {
        loop {
            match tokio::time::timeout(Duration::from_secs(15), rx.recv()).await {
                Ok(Ok(message)) => {
                    return Some((
                        Ok::<_, Infallible>(Bytes::from(sse::format(&message, None))),
                        rx,
                    ));
                }
                Ok(Err(tokio::sync::broadcast::error::RecvError::Lagged(_))) => continue,
                Ok(Err(tokio::sync::broadcast::error::RecvError::Closed)) => return None,
                Err(_) => return Some((Ok(Bytes::from_static(b": keepalive\n\n")), rx)),
            }
        }
    });
    let mut response = Response::new(Body::from_stream(events));
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/event-stream"),
    );
    response
        .headers_mut()
        .insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    response
}

/// `DELETE /s/SID/mcp`: ends an MCP session (not the gateway session) that this session
/// handed out; another session's id is unknown here (404).
pub(crate) async fn delete(
    State(state): State<Arc<GatewayState>>,
    Path(sid): Path<String>,
    headers: HeaderMap,
) -> Response {
    let Some(session) = state.session(&sid) else {
        return rest::unknown_session(&sid);
    };
    if let Some(refused) = unsupported_version_header(&headers) {
        return refused;
    }
    match headers
        .get(protocol::SESSION_HEADER)
        .and_then(|v| v.to_str().ok())
    {
        Some(id)
            if session
                .mcp_sessions
                .lock()
                .expect("not poisoned")
                .remove(id) =>
        {
            StatusCode::OK.into_response()
        }
        Some(_) => StatusCode::NOT_FOUND.into_response(),
        None => StatusCode::BAD_REQUEST.into_response(),
    }
}

fn rpc_error_response(status: StatusCode, id: Value, e: &RpcError) -> Response {
    (
        status,
        [(header::CONTENT_TYPE, "application/json")],
        jsonrpc::error_response(id, e).to_string(),
    )
        .into_response()
}
