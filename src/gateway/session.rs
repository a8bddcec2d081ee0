//! One session (one matrix cell): its tools, its fault plan and its trace, isolated from
//! every other session. Listing and calling go through here for both the REST API and the
//! MCP endpoint, so the two transports apply faults — and record them — identically.

use std::collections::HashSet;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use indexmap::IndexMap;
use serde_json::{Value, json};
use tokio::sync::broadcast;

use super::GatewayOptions;
use super::catalog::{Catalog, Source};
use super::fault::{Fault, FaultPlan};
use super::trace::{Status, Trace, TraceEvent, result_text};
use super::upstream::Upstreams;
use crate::contract::FaultKind;
use crate::mcp::RequestError;
use crate::mcp::RpcError;
use crate::scenario::{Body, FixtureTool};

/// What a session serves: fixture tools, drift schemas and the initial fault plan.
#[derive(Debug, Clone, Default)]
pub struct SessionSpec {
    /// Fixture tools by name.
    pub fixtures: IndexMap<String, FixtureTool>,
    /// Older input schemas advertised under SCHEMA_DRIFT, by tool name.
    pub schema_drift: IndexMap<String, Value>,
    /// Faults by tool.
    pub faults: FaultPlan,
}

/// The outcome of one call, before a transport puts it on the wire.
#[derive(Debug, Clone, PartialEq)]
pub enum Outcome {
    /// A tool result (an MCP `CallToolResult`), passed through or built from a fixture.
    Result(Value),
    /// A failure the gateway decided (a fault, a miss, a dead upstream).
    Failed {
        /// What kind.
        status: Status,
        /// Why, for people.
        message: String,
    },
    /// The upstream's own JSON-RPC error, passed through unchanged.
    Rpc(RpcError),
}

impl Outcome {
    /// The outcome as a model is given it, the same for every route: a result as
    /// [`reply_text`], a failure as `{"error": {"code", "message"}}` (the REST API's error
    /// body).
    pub fn reply_text(&self) -> String {
        match self {
            Outcome::Result(result) => reply_text(result),
            Outcome::Failed { status, message } => {
                json!({"error": {"code": status.error_code(), "message": message}}).to_string()
            }
            Outcome::Rpc(e) => {
                json!({"error": {"code": "UPSTREAM_ERROR", "message": e.message}}).to_string()
            }
        }
    }
}

/// A tool result (an MCP `CallToolResult`) as a model is given it: its text parts; a
/// tool's own failure (`isError`) as `{"error": {"code": "TOOL_ERROR", "message"}}`;
/// structured or empty content as its JSON.
pub fn reply_text(result: &Value) -> String {
    let text: Vec<&str> = result["content"]
        .as_array()
        .map(|c| c.iter().filter_map(|p| p["text"].as_str()).collect())
        .unwrap_or_default();
    if result["isError"].as_bool() == Some(true) {
        return json!({"error": {"code": "TOOL_ERROR", "message": text.join("\n")}}).to_string();
    }
    if text.is_empty() {
        return result
            .get("structuredContent")
            .cloned()
            .unwrap_or(result["content"].clone())
            .to_string();
    }
    text.join("\n")
}

/// A session.
pub struct Session {
    /// The id in the URL (`/s/SID/`).
    pub id: String,
    spec: SessionSpec,
    plan: Mutex<FaultPlan>,
    upstreams: Arc<Upstreams>,
    options: Arc<GatewayOptions>,
    /// The authoritative trace.
    pub trace: Trace,
    events: broadcast::Sender<Value>,
    /// MCP session ids handed out by `initialize` on this session's endpoint.
    pub(crate) mcp_sessions: Mutex<HashSet<String>>,
    /// The catalog, built once per upstream generation (not once per call).
    catalog: Mutex<(u64, Arc<Catalog>)>,
}

impl Session {
    pub(crate) fn new(
        id: String,
        spec: SessionSpec,
        upstreams: Arc<Upstreams>,
        options: Arc<GatewayOptions>,
    ) -> Session {
        Session {
            id,
            plan: Mutex::new(spec.faults.clone()),
            spec,
            upstreams,
            trace: Trace::new(options.trace_text_cap),
            options,
            events: broadcast::channel(64).0,
            mcp_sessions: Mutex::new(HashSet::new()),
            catalog: Mutex::new((u64::MAX, Arc::default())),
        }
    }

    /// The flattened namespace, from the upstreams' current lists.
    pub fn catalog(&self) -> Arc<Catalog> {
        let generation = self.upstreams.generation();
        let mut cached = self.catalog.lock().expect("not poisoned");
        if cached.0 != generation {
            *cached = (
                generation,
                Arc::new(Catalog::build(&self.spec.fixtures, &self.upstreams)),
            );
        }
        Arc::clone(&cached.1)
    }

    /// The fault plan now.
    pub fn faults(&self) -> FaultPlan {
        self.plan.lock().expect("not poisoned").clone()
    }

    /// Changes a tool's fault mid-session. When the tool appears or disappears, MCP
    /// clients listening on the session's stream get `notifications/tools/list_changed`.
    pub fn set_fault(&self, tool: &str, fault: Option<Fault>) {
        let hidden = |f: Option<Fault>| f.is_some_and(|f| f.kind.hides_tool());
        let mut plan = self.plan.lock().expect("not poisoned");
        let before = hidden(plan.get(tool));
        plan.set(tool, fault);
        drop(plan);
        if before != hidden(fault) {
            let _ = self.events.send(crate::mcp::jsonrpc::notification(
                "notifications/tools/list_changed",
                Value::Null,
            ));
        }
    }

    /// Server-to-client messages for this session (list changes, upstream notifications).
    pub fn events(&self) -> broadcast::Receiver<Value> {
        self.events.subscribe()
    }

    /// Passes a message to this session's listeners.
    pub(crate) fn emit(&self, message: Value) {
        let _ = self.events.send(message);
    }

    /// The tools an agent sees now: removed ones absent, drifted ones with their older
    /// schema. Recorded in the trace.
    pub fn list(&self, transport: &'static str) -> Vec<Value> {
        self.list_page(transport, true)
    }

    /// [`Session::list`], recording it only when `record` (later pages of one listing
    /// are not new listings).
    pub(crate) fn list_page(&self, transport: &'static str, record: bool) -> Vec<Value> {
        let start = Instant::now();
        let at_ms = self.trace.now_ms();
        let plan = self.faults();
        let tools: Vec<Value> = self
            .catalog()
            .tools
            .iter()
            .filter_map(|(name, entry)| match plan.get(name).map(|f| f.kind) {
                Some(FaultKind::ToolNotFound) => None,
                Some(FaultKind::SchemaDrift) => {
                    let mut d = entry.descriptor.clone();
                    if let Some(old) = self.spec.schema_drift.get(name) {
                        d["inputSchema"] = old.clone();
                    }
                    Some(d)
                }
                _ => Some(entry.descriptor.clone()),
            })
            .collect();
        if !record {
            return tools;
        }
        let names: Vec<String> = tools
            .iter()
            .filter_map(|t| t.get("name")?.as_str().map(String::from))
            .collect();
        self.trace.record(TraceEvent {
            seq: 0,
            at_ms,
            transport,
            op: "list",
            tool: None,
            provenance: None,
            arguments: None,
            fault: None,
            status: Status::Ok,
            result_bytes: names.len(),
            result_text: String::new(),
            truncated: false,
            tools: Some(names),
            error: None,
            duration_ms: start.elapsed().as_secs_f64() * 1000.0,
        });
        tools
    }

    /// Records a call of `tool` refused before it was served (`invalid_arguments`): its
    /// request body could not be read, or is not a JSON object of arguments. No fault
    /// was applied to it.
    pub(crate) fn record_refused(
        &self,
        transport: &'static str,
        tool: &str,
        arguments: Option<Value>,
        message: &str,
    ) {
        self.trace.record(TraceEvent {
            seq: 0,
            at_ms: self.trace.now_ms(),
            transport,
            op: "call",
            tool: Some(tool.to_string()),
            provenance: self.catalog().tools.get(tool).map(|e| e.provenance.clone()),
            arguments,
            fault: None,
            status: Status::InvalidArguments,
            result_bytes: 0,
            result_text: String::new(),
            truncated: false,
            tools: None,
            error: Some(message.to_string()),
            duration_ms: 0.0,
        });
    }

    /// Calls a tool as the agent asked, applying the session's fault. Recorded in the
    /// trace when it starts, so a call whose client goes away before the answer (the
    /// future is dropped) stays in the trace, `cancelled`.
    pub async fn call(
        &self,
        transport: &'static str,
        tool: &str,
        arguments: Value,
        meta: Option<Value>,
    ) -> Outcome {
        let fault = self.faults().get(tool);
        let catalog = self.catalog();
        let entry = catalog.tools.get(tool);
        let pending = self.trace.begin(TraceEvent {
            seq: 0,
            at_ms: self.trace.now_ms(),
            transport,
            op: "call",
            tool: Some(tool.to_string()),
            provenance: entry.map(|e| e.provenance.clone()),
            arguments: Some(arguments.clone()),
            fault: fault.map(|f| f.kind.as_str().to_string()),
            status: Status::InFlight,
            result_bytes: 0,
            result_text: String::new(),
            truncated: false,
            tools: None,
            error: None,
            duration_ms: 0.0,
        });
        let outcome = match (entry, fault) {
            (None, _) => failed(Status::UnknownTool, format!("Unknown tool: {tool}")),
            (Some(_), Some(f)) if f.kind == FaultKind::ToolNotFound => {
                failed(Status::NotFound, format!("Unknown tool: {tool}"))
            }
            (Some(_), Some(f)) if f.kind == FaultKind::PermissionDenied => failed(
                Status::PermissionDenied,
                format!("Permission denied: the caller may not use {tool}"),
            ),
            (Some(_), Some(f)) if f.kind == FaultKind::ApprovalDenied => {
                failed(Status::ApprovalDenied, approval_denied_message(tool))
            }
            (Some(_), Some(f)) if f.kind == FaultKind::Timeout => {
                let delay = f.delay.unwrap_or(self.options.timeout_fault_delay);
                tokio::time::sleep(delay).await;
                failed(
                    Status::Timeout,
                    format!(
                        "{tool} timed out after {}",
                        humantime::format_duration(delay)
                    ),
                )
            }
            (Some(_), Some(f)) if f.kind == FaultKind::EmptyResult => {
                Outcome::Result(json!({"content": [], "isError": false}))
            }
            (Some(e), Some(f)) if f.kind == FaultKind::ServerDown => {
                let server = match &e.source {
                    Source::Upstream { server, .. } => {
                        self.upstreams.servers()[*server].name.clone()
                    }
                    Source::Fixture(..) => "the tool server".into(),
                };
                failed(
                    Status::ServerDown,
                    format!("{server} is unreachable: connection refused"),
                )
            }
            (Some(e), f) => {
                if let Some(Fault {
                    kind: FaultKind::Latency,
                    delay,
                }) = f
                {
                    tokio::time::sleep(delay.unwrap_or(self.options.latency_fault_delay)).await;
                }
                self.execute(&e.source, tool, arguments, meta).await
            }
        };
        let (status, text, error) = match &outcome {
            Outcome::Result(r) if fault.is_some_and(|f| f.kind == FaultKind::EmptyResult) => {
                (Status::Empty, result_text(r), None)
            }
            Outcome::Result(r) if r.get("isError").and_then(Value::as_bool) == Some(true) => {
                (Status::ToolError, result_text(r), None)
            }
            Outcome::Result(r) => (Status::Ok, result_text(r), None),
            Outcome::Failed { status, message } => (*status, String::new(), Some(message.clone())),
            Outcome::Rpc(e) => (Status::UpstreamError, String::new(), Some(e.to_string())),
        };
        pending.finish(status, text, error);
        outcome
    }

    async fn execute(
        &self,
        source: &Source,
        tool: &str,
        arguments: Value,
        meta: Option<Value>,
    ) -> Outcome {
        match source {
            Source::Fixture(fixture, validator) => {
                if let Some(validator) = validator
                    && let Some(e) = validator.iter_errors(&arguments).next()
                {
                    return failed(
                        Status::InvalidArguments,
                        format!("Invalid arguments for {tool}: {e}"),
                    );
                }
                match fixture.respond(&arguments) {
                    Some(Body::Text(text)) => Outcome::Result(
                        json!({"content": [{"type": "text", "text": text}], "isError": false}),
                    ),
                    Some(Body::Json(v)) => Outcome::Result(
                        json!({"content": [{"type": "text", "text": v.to_string()}], "isError": false}),
                    ),
                    Some(Body::Error { code, message }) => {
                        // A fixture's error in a fault's name answers as that fault does.
                        match code
                            .parse::<FaultKind>()
                            .ok()
                            .and_then(FaultKind::call_status)
                        {
                            Some(Status::Empty) => {
                                Outcome::Result(json!({"content": [], "isError": false}))
                            }
                            Some(status) => failed(status, message.clone()),
                            None => Outcome::Result(
                                json!({"content": [{"type": "text", "text": message}], "isError": true}),
                            ),
                        }
                    }
                    None => failed(
                        Status::FixtureMiss,
                        format!("no fixture response of {tool} matches the arguments {arguments}"),
                    ),
                }
            }
            Source::Upstream { server, name } => {
                let up = &self.upstreams.servers()[*server];
                let Some(client) = up.client() else {
                    return failed(
                        Status::ServerDown,
                        format!(
                            "{} is unavailable: {}",
                            up.name,
                            up.error.as_deref().unwrap_or("not connected")
                        ),
                    );
                };
                match client.call_tool(name, arguments, meta).await {
                    Ok(result) => Outcome::Result(result),
                    Err(RequestError::Rpc(e)) => Outcome::Rpc(e),
                    Err(RequestError::Timeout(d)) => failed(
                        Status::Timeout,
                        format!(
                            "{} did not answer within {}",
                            up.name,
                            humantime::format_duration(d)
                        ),
                    ),
                    Err(e @ (RequestError::Closed(_) | RequestError::Protocol(_))) => {
                        failed(Status::ServerDown, format!("{}: {e}", up.name))
                    }
                }
            }
        }
    }
}

fn failed(status: Status, message: String) -> Outcome {
    Outcome::Failed { status, message }
}

/// What a declined call answers, as agent frameworks word a tool use the user rejected
/// (human in the loop): the action was not approved, so it did not happen.
fn approval_denied_message(tool: &str) -> String {
    format!(
        "The user declined this action: {tool} needs the user's approval and was not approved, so it was not run and nothing was changed"
    )
}
