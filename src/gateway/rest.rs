//! The REST tool API (docs/gateway.md, "REST API", normative), for agents that do not speak
//! MCP: `GET /s/SID/tools` and `POST /s/SID/tools/NAME`, faults as HTTP statuses.

use std::sync::Arc;

use axum::Json;
use axum::body::Bytes;
use axum::extract::rejection::BytesRejection;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};

use super::GatewayState;
use super::session::Outcome;
use super::trace::Status;

pub(crate) async fn list(
    State(state): State<Arc<GatewayState>>,
    Path(sid): Path<String>,
) -> Response {
    let Some(session) = state.session(&sid) else {
        return unknown_session(&sid);
    };
    let tools: Vec<Value> = session
        .list("rest")
        .into_iter()
        .map(|t| json!({"name": t["name"], "description": t.get("description").cloned().unwrap_or(Value::Null), "inputSchema": t["inputSchema"]}))
        .collect();
    Json(json!({"tools": tools})).into_response()
}

pub(crate) async fn call(
    State(state): State<Arc<GatewayState>>,
    Path((sid, name)): Path<(String, String)>,
    body: Result<Bytes, BytesRejection>,
) -> Response {
    let Some(session) = state.session(&sid) else {
        return unknown_session(&sid);
    };
    // A refused body is still a call the agent made: it is recorded, then answered.
    let body = match body {
        Ok(body) => body,
        Err(rejection) => {
            let message = super::unreadable_body(&rejection);
            session.record_refused("rest", &name, None, &message);
            return error(rejection.status(), "INVALID_ARGUMENTS", &message);
        }
    };
    let arguments: Value = if body.iter().all(u8::is_ascii_whitespace) {
        json!({})
    } else {
        match serde_json::from_slice(&body) {
            Ok(v @ Value::Object(_)) => v,
            parsed => {
                let message = "the body must be a JSON object of arguments";
                session.record_refused("rest", &name, parsed.ok(), message);
                return error(StatusCode::BAD_REQUEST, "INVALID_ARGUMENTS", message);
            }
        }
    };
    match session.call("rest", &name, arguments, None).await {
        Outcome::Result(result) => Json(result).into_response(),
        Outcome::Failed { status, message } => {
            let code = match status {
                Status::NotFound | Status::UnknownTool => StatusCode::NOT_FOUND,
                Status::PermissionDenied | Status::ApprovalDenied => StatusCode::FORBIDDEN,
                Status::Timeout => StatusCode::GATEWAY_TIMEOUT,
                Status::ServerDown => StatusCode::SERVICE_UNAVAILABLE,
                Status::InvalidArguments => StatusCode::BAD_REQUEST,
                Status::FixtureMiss
                | Status::Ok
                | Status::ToolError
                | Status::Empty
                | Status::UpstreamError
                | Status::Cancelled
                | Status::InFlight => StatusCode::INTERNAL_SERVER_ERROR,
            };
            error(code, status.error_code(), &message)
        }
        Outcome::Rpc(e) => (
            StatusCode::BAD_GATEWAY,
            Json(json!({"error": {"code": "UPSTREAM_ERROR", "message": e.message, "rpc": e.to_value()}})),
        )
            .into_response(),
    }
}

fn error(status: StatusCode, code: &str, message: &str) -> Response {
    (
        status,
        Json(json!({"error": {"code": code, "message": message}})),
    )
        .into_response()
}

pub(crate) fn unknown_session(sid: &str) -> Response {
    error(
        StatusCode::NOT_FOUND,
        "UNKNOWN_SESSION",
        &format!("no session `{sid}` on this gateway"),
    )
}
