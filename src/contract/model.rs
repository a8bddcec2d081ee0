//! The validated contract: what every later stage (probe, gateway, checks) relies on.
//! Defaults are filled in and every string that has a grammar has been parsed, so a
//! `Contract` cannot hold a bad regex, JSONPath or version requirement.

use std::fmt;
use std::path::PathBuf;

use indexmap::IndexMap;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::rule::Rule;

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
}

impl FaultKind {
    /// Every kind, in the documented order.
    pub const ALL: [FaultKind; 7] = [
        FaultKind::ToolNotFound,
        FaultKind::PermissionDenied,
        FaultKind::Timeout,
        FaultKind::EmptyResult,
        FaultKind::SchemaDrift,
        FaultKind::ServerDown,
        FaultKind::Latency,
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

/// Side effects of a Skill on the world.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Deserialize, Serialize, JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum RiskLevel {
    /// Pure reads and computations.
    #[default]
    Low,
    /// Side effects limited to the user's own account.
    Medium,
    /// Can stop or restart services.
    High,
    /// Can change the system itself.
    Critical,
}

/// How a Skill must fail when its tools are unavailable.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum DegradationMode {
    /// An explicit error or a hard interrupt.
    HardFail,
    /// An explicit error or a refusal that gives the reason.
    #[default]
    RefuseWithReason,
    /// An explicit error or a partial answer marked `degraded: true`.
    DegradedWithMarker,
}

/// A validated Skill contract.
#[derive(Debug, Clone)]
pub struct Contract {
    /// The Skill's name.
    pub skill: String,
    /// The contract's version, as written.
    pub version: Option<String>,
    /// Risk level (default low).
    pub risk_level: RiskLevel,
    /// Whether each call needs a human's approval.
    pub requires_approval: bool,
    /// Whether an unmet precondition fails `probe`.
    pub critical: bool,
    /// What the platform must provide.
    pub preconditions: Preconditions,
    /// Input schema and output assertions.
    pub io: IoContract,
    /// Required behaviour per fault kind, defaults filled in.
    pub failure_semantics: IndexMap<FaultKind, Semantics>,
    /// The declared degradation.
    pub degradation: Degradation,
    /// The trace rules.
    pub trace: TraceRules,
    /// The file it was loaded from.
    pub source: PathBuf,
    /// The line of the skill's name in that file (for annotations).
    pub source_line: usize,
}

/// What the platform must provide.
#[derive(Debug, Clone, Default)]
pub struct Preconditions {
    /// Required tools (default: `must_call_tools`).
    pub tools: Vec<String>,
    /// The providing plugin.
    pub plugin: Option<String>,
    /// The plugin's version must satisfy this.
    pub min_plugin_version: Option<semver::VersionReq>,
    /// Scopes that must be granted.
    pub scopes: Vec<String>,
    /// Named network endpoints that must be reachable.
    pub network: Vec<String>,
}

/// Input schema and output assertions.
#[derive(Debug, Clone, Default)]
pub struct IoContract {
    /// The JSON Schema of the tool-call arguments, loaded and checked.
    pub input_schema: Option<Value>,
    /// Assertions over the JSON output.
    pub output_assertions: Vec<OutputAssertion>,
}

/// One parsed output assertion.
#[derive(Debug, Clone)]
pub struct OutputAssertion {
    /// The JSONPath as written.
    pub path_text: String,
    /// The parsed JSONPath.
    pub path: serde_json_path::JsonPath,
    /// Whether the path selects at most one node (decides what `len` measures).
    pub singular: bool,
    /// The rule as written.
    pub rule_text: String,
    /// The parsed rule.
    pub rule: Rule,
}

/// The declared degradation.
#[derive(Debug, Clone, Default)]
pub struct Degradation {
    /// The mode.
    pub mode: DegradationMode,
    /// The refusal message, if the contract gives one.
    pub message_template: Option<String>,
    /// Whether an unmarked answer under a fault is only a warning.
    pub allow_model_fallback: bool,
}

/// The trace rules.
#[derive(Debug, Clone)]
pub struct TraceRules {
    /// Tools every answered run must call.
    pub must_call_tools: Vec<String>,
    /// Minimum calls of each of them.
    pub tool_call_min_frequency: u64,
    /// Allowed URL prefixes (absolute http(s) URLs).
    pub url_whitelist: Vec<String>,
    /// Whether every key fact must be supported by a tool result.
    pub strict_citation_required: bool,
    /// Actions the agent must never take.
    pub prohibited_actions: Vec<String>,
}

impl Default for TraceRules {
    fn default() -> Self {
        TraceRules {
            must_call_tools: Vec::new(),
            tool_call_min_frequency: 1,
            url_whitelist: Vec::new(),
            strict_citation_required: false,
            prohibited_actions: Vec::new(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn semantics_names_are_the_contracts() {
        for s in [
            Semantics::Hard,
            Semantics::Explicit,
            Semantics::RetryThenDegrade,
            Semantics::Degrade,
        ] {
            assert_eq!(serde_json::to_value(s).unwrap(), s.as_str());
        }
    }
}
