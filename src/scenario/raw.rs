//! The scenario file exactly as written (serde mirror, `deny_unknown_fields`); validated
//! into [`Scenario`](super::Scenario) by `validate.rs`.

use indexmap::IndexMap;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;

use super::model::{Approval, Complexity};
use crate::contract::FaultKind;

/// One input for one Skill, with the tool fixtures the gateway serves while the tools are
/// available, the faults to inject, and the facts the answer must (not) contain.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(title = "fibon-verify scenario")]
pub struct RawScenario {
    /// The JSON Schema this file follows, for editors (ignored by fibon-verify).
    #[serde(rename = "$schema")]
    pub schema: Option<String>,
    /// A unique id across all scenarios; cell ids are built from it.
    pub id: String,
    /// The Skill under test (a contract's `skill`).
    pub skill: String,
    /// `simple` (quadrants Q1/Q3) or `complex` (Q2/Q4).
    pub complexity: Complexity,
    /// The user's input sent to the agent.
    pub input: String,
    /// Fixture tools by name.
    pub tools: Option<IndexMap<String, RawFixtureTool>>,
    /// Tools the faults hit (default: the contract's `must_call_tools`).
    pub remove: Option<Vec<String>>,
    /// Fault kinds to inject, one cell each (default: the keys of the contract's
    /// `failure_semantics`).
    pub faults: Option<Vec<FaultKind>>,
    /// What the answer must and must not contain.
    pub expect: Option<RawExpect>,
    /// What the person asked to approve a call of the contract's approval tools answers:
    /// `denied` (default: one APPROVAL_DENIED cell per approval tool) or `granted` (the
    /// approved path: the calls are served, no APPROVAL_DENIED cell).
    pub approval: Option<Approval>,
    /// Tool name -> the older `inputSchema` the gateway advertises under a SCHEMA_DRIFT
    /// fault (fixture or upstream tools).
    pub schema_drift: Option<IndexMap<String, serde_json::Map<String, Value>>>,
}

/// A tool the gateway serves from fixtures.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RawFixtureTool {
    /// The description shown to the agent.
    pub description: Option<String>,
    /// The JSON Schema of the tool's arguments, shown to the agent.
    pub input_schema: Option<serde_json::Map<String, Value>>,
    /// Responses; the first whose `when` matches the call's arguments wins.
    pub responses: Vec<RawResponse>,
}

/// One fixture response: a body given by exactly one of `text`, `file` or `json`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RawResponse {
    /// Argument name -> matcher: an exact value, `{prefix: "..."}` or `{regex: "..."}`.
    /// All must match; no `when` matches every call.
    pub when: Option<IndexMap<String, Value>>,
    /// The response text.
    pub text: Option<String>,
    /// A file whose text is the response, relative to the scenario file.
    pub file: Option<String>,
    /// A JSON value returned as the response (serialized as text content).
    pub json: Option<Value>,
}

/// Facts the answer must contain, and must never contain.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RawExpect {
    /// Must appear in the answer when the tools are available.
    pub facts: Option<Vec<String>>,
    /// Must never appear.
    pub forbidden: Option<Vec<String>>,
}
