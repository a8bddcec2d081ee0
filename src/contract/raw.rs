//! The contract file exactly as written: serde mirrors of the YAML/JSON with
//! `deny_unknown_fields`. Nothing here is validated beyond shape; `validate.rs` turns it
//! into the [`Contract`](super::Contract) model. The committed JSON Schema is generated from
//! these types, so editors and fibon-verify agree on what a contract may contain.

use indexmap::IndexMap;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;

use super::model::{DegradationMode, FaultKind, RiskLevel, Semantics};

/// A Skill contract: preconditions, I/O assertions, failure semantics, degradation and trace
/// rules. Give the skill's name as `skill` or `skill_name`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(title = "fibon-verify contract")]
pub struct RawContract {
    /// The JSON Schema this file follows, for editors (ignored by fibon-verify).
    #[serde(rename = "$schema")]
    pub schema: Option<String>,
    /// The Skill's name (unique across contracts).
    pub skill: Option<String>,
    /// Alias of `skill`, as the JSON form of the compliance layer writes it.
    pub skill_name: Option<String>,
    /// The contract's own version.
    pub version: Option<String>,
    /// Side effects of the Skill on the world (default `low`).
    pub risk_level: Option<RiskLevel>,
    /// Whether a human must approve each call of every tool of the Skill (default false):
    /// `run` adds an APPROVAL_DENIED cell per tool, where the person declines.
    pub requires_approval: Option<bool>,
    /// The tools whose calls a human must approve (when not all of them do): `run` adds an
    /// APPROVAL_DENIED cell per tool. They have side effects, as `actions` have.
    pub approval: Option<Vec<String>>,
    /// Tools with side effects on the world (sending, booking, writing): an answer that
    /// says such an action was done while its tool failed is silent degradation.
    pub actions: Option<Vec<String>>,
    /// At `risk_level: high` or `critical`, the business accepts degraded answers
    /// (`allow_model_fallback: true`, `degradation.mode: degraded_with_marker`), which
    /// `check` otherwise refuses (default false).
    pub accept_degraded_at_risk: Option<bool>,
    /// Whether an unmet precondition fails `probe` (default true).
    pub critical: Option<bool>,
    /// What the target platform must provide.
    pub preconditions: Option<RawPreconditions>,
    /// Input schema and output assertions.
    pub io_contract: Option<RawIoContract>,
    /// Fault kind -> required behaviour. Unlisted kinds among TOOL_NOT_FOUND,
    /// PERMISSION_DENIED, TIMEOUT and EMPTY_RESULT default to `explicit`.
    #[serde(default)]
    #[schemars(schema_with = "semantics_map")]
    pub failure_semantics: Option<IndexMap<FaultKind, Semantics>>,
    /// How the Skill must behave when its tools are unavailable.
    pub degradation: Option<RawDegradation>,
    /// Tools that every answered run must call.
    pub must_call_tools: Option<Vec<String>>,
    /// Minimum number of calls of each tool in `must_call_tools` (default 1).
    #[schemars(range(min = 1))]
    pub tool_call_min_frequency: Option<u64>,
    /// URL prefixes that every fetched or cited URL must start with.
    pub enforced_url_prefix_whitelist: Option<Vec<String>>,
    /// Every key fact of an answer must be supported by a tool result.
    pub strict_citation_required: Option<bool>,
    /// Named actions the agent must never take.
    pub prohibited_actions: Option<Vec<String>>,
    /// The trace rules, grouped (an alternative to writing them top-level).
    pub trace: Option<RawTraceRules>,
    /// The trace rules, grouped as the compliance layer's JSON form writes them.
    pub contracts: Option<RawTraceRules>,
}

/// `failure_semantics`: a map whose keys are fault kinds (schemars leaves map keys
/// unconstrained, so the schema says it here).
fn semantics_map(generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
    let keys = generator.subschema_for::<FaultKind>();
    let values = generator.subschema_for::<Semantics>();
    schemars::json_schema!({
        "type": ["object", "null"],
        "description": "Fault kind -> required behaviour. Unlisted kinds among TOOL_NOT_FOUND, PERMISSION_DENIED, TIMEOUT and EMPTY_RESULT default to `explicit`.",
        "propertyNames": keys,
        "additionalProperties": values,
    })
}

/// Trace rules under `trace:` or `contracts:`.
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RawTraceRules {
    /// Tools that every answered run must call.
    pub must_call_tools: Option<Vec<String>>,
    /// Minimum number of calls of each tool in `must_call_tools` (default 1).
    #[schemars(range(min = 1))]
    pub tool_call_min_frequency: Option<u64>,
    /// URL prefixes that every fetched or cited URL must start with.
    pub enforced_url_prefix_whitelist: Option<Vec<String>>,
    /// Every key fact of an answer must be supported by a tool result.
    pub strict_citation_required: Option<bool>,
    /// Named actions the agent must never take.
    pub prohibited_actions: Option<Vec<String>>,
}

/// What the target platform must provide.
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RawPreconditions {
    /// Tools that must exist on the platform (default: `must_call_tools`).
    pub tools: Option<Vec<String>>,
    /// The plugin that provides the tools.
    pub plugin: Option<String>,
    /// A semver requirement on the plugin's version, such as ">=1.4.0".
    pub min_plugin_version: Option<String>,
    /// Permission scopes that must be granted.
    pub scopes: Option<Vec<String>>,
    /// Network endpoints, by the names of the platform manifest, that must be reachable.
    pub network: Option<Vec<String>>,
}

/// Input schema and output assertions.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RawIoContract {
    /// JSON Schema of the arguments of calls to the Skill's tool: a path relative to the
    /// contract file, or an inline schema.
    pub input_schema: Option<RawSchemaRef>,
    /// Assertions over the agent's JSON output, checked on answered Q1/Q2 cells.
    pub output_assertions: Option<Vec<RawAssertion>>,
}

/// A JSON Schema given by path or inline.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum RawSchemaRef {
    /// A path to a JSON or YAML file, relative to the contract.
    Path(String),
    /// The schema itself.
    Inline(serde_json::Map<String, Value>),
}

/// One output assertion.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RawAssertion {
    /// An RFC 9535 JSONPath over the agent's output.
    pub path: String,
    /// `len OP N`, `matches REGEX`, `== VALUE`, `!= VALUE`, `OP N`, `exists` or `not_empty`.
    pub rule: String,
}

/// The declared degradation.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RawDegradation {
    /// How the Skill fails (default `refuse_with_reason`).
    pub mode: Option<DegradationMode>,
    /// The refusal message the Skill gives; counts as a refusal when it appears.
    pub message_template: Option<String>,
    /// Whether an unmarked answer under a fault is only a warning (default false).
    pub allow_model_fallback: Option<bool>,
}
