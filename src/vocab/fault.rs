//! The faults the gateway injects and what each one does, in one place: whether it hides
//! the tool, whether it takes a delay, which call status it gives, and whether it is a
//! failure at all (LATENCY is not); and the behaviour a contract can require under one.

use std::fmt;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// A fault the gateway can inject, and the key of `failure_semantics`.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Deserialize, Serialize, JsonSchema,
)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum FaultKind {
    /// The tool is absent: removed from the tool list, calls answered "not found".
    ToolNotFound,
    /// The tool exists but the call is denied.
    PermissionDenied,
    /// The call is held for the configured delay, then fails.
    Timeout,
    /// The call succeeds with no content.
    EmptyResult,
    /// The tool's advertised input schema no longer matches the contract's.
    SchemaDrift,
    /// The upstream server that provides the tool is down.
    ServerDown,
    /// Calls are answered normally, after an added delay (not a failure: the agent is
    /// expected to answer).
    Latency,
    /// The tool needs a person's approval, and the person declined the action: the call
    /// is answered as agent frameworks report a declined tool use.
    ApprovalDenied,
}

impl FaultKind {
    /// Every kind, in the documented order.
    pub const ALL: [FaultKind; 8] = [
        FaultKind::ToolNotFound,
        FaultKind::PermissionDenied,
        FaultKind::Timeout,
        FaultKind::EmptyResult,
        FaultKind::SchemaDrift,
        FaultKind::ServerDown,
        FaultKind::Latency,
        FaultKind::ApprovalDenied,
    ];

    /// The kinds that get `explicit` semantics when a contract does not name them.
    pub const DEFAULTED: [FaultKind; 4] = [
        FaultKind::ToolNotFound,
        FaultKind::PermissionDenied,
        FaultKind::Timeout,
        FaultKind::EmptyResult,
    ];

    /// The name as written in files and reports.
    pub fn as_str(self) -> &'static str {
        match self {
            FaultKind::ToolNotFound => "TOOL_NOT_FOUND",
            FaultKind::PermissionDenied => "PERMISSION_DENIED",
            FaultKind::Timeout => "TIMEOUT",
            FaultKind::EmptyResult => "EMPTY_RESULT",
            FaultKind::SchemaDrift => "SCHEMA_DRIFT",
            FaultKind::ServerDown => "SERVER_DOWN",
            FaultKind::Latency => "LATENCY",
            FaultKind::ApprovalDenied => "APPROVAL_DENIED",
        }
    }
}

impl std::str::FromStr for FaultKind {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        FaultKind::ALL
            .into_iter()
            .find(|k| k.as_str().eq_ignore_ascii_case(s))
            .ok_or_else(|| {
                let names: Vec<&str> = FaultKind::ALL.iter().map(|k| k.as_str()).collect();
                format!(
                    "unknown fault kind `{s}`; expected one of {}",
                    names.join(", ")
                )
            })
    }
}

impl fmt::Display for FaultKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The behaviour a contract requires under a fault.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Semantics {
    /// An explicit machine-readable error, or a hard interrupt.
    Hard,
    /// Any explicit signal: an error, a refusal with a reason, or a degraded marker.
    Explicit,
    /// After retries, behave as `degradation.mode` says.
    RetryThenDegrade,
    /// Behave as `degradation.mode` says.
    Degrade,
}

impl Semantics {
    /// The name as written in contracts and reports.
    pub fn as_str(self) -> &'static str {
        match self {
            Semantics::Hard => "hard",
            Semantics::Explicit => "explicit",
            Semantics::RetryThenDegrade => "retry_then_degrade",
            Semantics::Degrade => "degrade",
        }
    }
}

impl FaultKind {
    /// The tool is hidden from `tools/list` (TOOL_NOT_FOUND).
    pub fn hides_tool(self) -> bool {
        self == FaultKind::ToolNotFound
    }

    /// The fault holds the call for a delay (TIMEOUT, LATENCY).
    pub fn takes_delay(self) -> bool {
        matches!(self, FaultKind::Timeout | FaultKind::Latency)
    }

    /// A failure the system must signal: every kind but LATENCY, which only slows calls.
    pub fn is_failure(self) -> bool {
        self != FaultKind::Latency
    }

    /// The status a call under this fault is recorded with (None: the call is served,
    /// with its own status: SCHEMA_DRIFT and LATENCY change no answer).
    pub fn call_status(self) -> Option<Status> {
        match self {
            FaultKind::ToolNotFound => Some(Status::NotFound),
            FaultKind::PermissionDenied => Some(Status::PermissionDenied),
            FaultKind::Timeout => Some(Status::Timeout),
            FaultKind::EmptyResult => Some(Status::Empty),
            FaultKind::ServerDown => Some(Status::ServerDown),
            FaultKind::ApprovalDenied => Some(Status::ApprovalDenied),
            FaultKind::SchemaDrift | FaultKind::Latency => None,
        }
    }
}

/// What happened to one call, from the gateway's side.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    /// Served: a fixture response or an upstream result without `isError`.
    Ok,
    /// The upstream tool answered `isError: true` (its own failure, passed through).
    ToolError,
    /// TOOL_NOT_FOUND: the tool is removed.
    NotFound,
    /// The agent called a tool that never existed in this session.
    UnknownTool,
    /// PERMISSION_DENIED.
    PermissionDenied,
    /// APPROVAL_DENIED: the person asked to approve the call declined it.
    ApprovalDenied,
    /// TIMEOUT, injected or real.
    Timeout,
    /// EMPTY_RESULT.
    Empty,
    /// SERVER_DOWN, injected or real (the upstream died or is unreachable).
    ServerDown,
    /// No fixture response matches the arguments: a scenario error, not an agent failure.
    FixtureMiss,
    /// The arguments do not satisfy the tool's input schema.
    InvalidArguments,
    /// The upstream answered with a JSON-RPC error, passed through.
    UpstreamError,
    /// The client went away (disconnected) before the gateway answered: the call was
    /// made, its answer never delivered.
    Cancelled,
    /// Not answered yet when the trace was taken: the gateway was still serving it.
    InFlight,
}

impl Status {
    /// The `error.code` a failed call of this status carries on the REST API.
    pub fn error_code(self) -> &'static str {
        match self {
            Status::NotFound | Status::UnknownTool => "TOOL_NOT_FOUND",
            Status::PermissionDenied => "PERMISSION_DENIED",
            Status::ApprovalDenied => "APPROVAL_DENIED",
            Status::Timeout => "TIMEOUT",
            Status::ServerDown => "SERVER_DOWN",
            Status::InvalidArguments => "INVALID_ARGUMENTS",
            Status::FixtureMiss => "FIXTURE_MISS",
            Status::UpstreamError => "UPSTREAM_ERROR",
            Status::Ok
            | Status::ToolError
            | Status::Empty
            | Status::Cancelled
            | Status::InFlight => "INTERNAL",
        }
    }
}
