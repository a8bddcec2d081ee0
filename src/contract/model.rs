//! The validated contract: what every later stage (probe, gateway, checks) relies on.
//! Defaults are filled in and every string that has a grammar has been parsed, so a
//! `Contract` cannot hold a bad regex, JSONPath or version requirement.

use std::path::PathBuf;

use indexmap::IndexMap;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::rule::Rule;
pub use crate::vocab::{FaultKind, Semantics};

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

impl RiskLevel {
    /// The name as written in contracts and reports.
    pub fn as_str(self) -> &'static str {
        match self {
            RiskLevel::Low => "low",
            RiskLevel::Medium => "medium",
            RiskLevel::High => "high",
            RiskLevel::Critical => "critical",
        }
    }

    /// High or critical: no answer is better than a wrong one, so degraded answers need
    /// the business's explicit consent and a warning fails the cell (docs/contract.md,
    /// "Risk grading").
    pub fn is_high(self) -> bool {
        self >= RiskLevel::High
    }
}

impl std::fmt::Display for RiskLevel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
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
    /// The tools whose calls need a human's approval: every tool of the Skill under
    /// `requires_approval: true`, else those of `approval`. Each gets an APPROVAL_DENIED
    /// cell.
    pub approval: Vec<String>,
    /// The tools with side effects: `actions` and the approval tools. A claim that one's
    /// action was done while it failed is silent degradation.
    pub actions: Vec<String>,
    /// At high or critical risk, degraded answers are accepted by the business.
    pub accept_degraded_at_risk: bool,
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
