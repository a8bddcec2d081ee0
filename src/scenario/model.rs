//! The validated scenario: fixtures loaded and matchers compiled, defaults resolved
//! against the scenario's contract.

use std::fmt;
use std::path::PathBuf;

use indexmap::IndexMap;
use regex::Regex;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::contract::FaultKind;

/// How hard the input is: it decides the quadrants.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Complexity {
    /// Q1 with tools available, Q3 with tools removed or failing.
    Simple,
    /// Q2 with tools available, Q4 with tools removed or failing.
    Complex,
}

impl fmt::Display for Complexity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Complexity::Simple => "simple",
            Complexity::Complex => "complex",
        })
    }
}

/// What the person asked to approve a call answers, in a scenario.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Approval {
    /// The person declines: one APPROVAL_DENIED cell per approval tool the scenario hosts.
    #[default]
    Denied,
    /// The person approves: the approval tools are served; no APPROVAL_DENIED cell.
    Granted,
}

/// A validated scenario.
#[derive(Debug, Clone)]
pub struct Scenario {
    /// Unique id.
    pub id: String,
    /// The Skill under test.
    pub skill: String,
    /// Simple or complex.
    pub complexity: Complexity,
    /// The input sent to the agent.
    pub input: String,
    /// Fixture tools by name, in file order.
    pub tools: IndexMap<String, FixtureTool>,
    /// Tools the faults hit (resolved: default the contract's `must_call_tools`).
    pub remove: Vec<String>,
    /// Faults to inject, one cell each (resolved: default the contract's semantics keys).
    pub faults: Vec<FaultKind>,
    /// What the person asked to approve a call answers.
    pub approval: Approval,
    /// Facts the answer must contain when the tools are available.
    pub facts: Vec<String>,
    /// Facts the answer must never contain.
    pub forbidden: Vec<String>,
    /// Tool name -> the older input schema advertised under SCHEMA_DRIFT.
    pub schema_drift: IndexMap<String, Value>,
    /// The file it was loaded from.
    pub source: PathBuf,
    /// `sha256:` and 12 hex digits of that file's text: the scenario's version, which a
    /// `--baseline` compares (a scenario has no version field of its own).
    pub digest: String,
}

/// The version of a scenario written as `text`.
pub fn digest(text: &str) -> String {
    use sha2::Digest;
    let hash = sha2::Sha256::digest(text.as_bytes());
    let hex: String = hash.iter().take(6).map(|b| format!("{b:02x}")).collect();
    format!("sha256:{hex}")
}

/// A tool served from fixtures.
#[derive(Debug, Clone)]
pub struct FixtureTool {
    /// The description shown to the agent.
    pub description: String,
    /// The JSON Schema of the arguments (default: any object).
    pub input_schema: Value,
    /// Responses in order; the first match wins.
    pub responses: Vec<FixtureResponse>,
}

/// One fixture response.
#[derive(Debug, Clone)]
pub struct FixtureResponse {
    /// Argument matchers, all of which must match.
    pub when: Vec<(String, Matcher)>,
    /// The body.
    pub body: Body,
}

/// A response body.
#[derive(Debug, Clone, PartialEq)]
pub enum Body {
    /// Text (from `text:` or the contents of `file:`).
    Text(String),
    /// A JSON value (from `json:`).
    Json(Value),
    /// A recorded failure, replayed as the fault of its code (`sample` replays recorded
    /// conversations with their recorded errors; scenario files cannot write this).
    Error {
        /// The recorded code, such as `TIMEOUT`.
        code: String,
        /// The recorded message.
        message: String,
    },
}

/// How one argument is matched.
#[derive(Debug, Clone)]
pub enum Matcher {
    /// Equal to this value.
    Exact(Value),
    /// A string starting with this.
    Prefix(String),
    /// A string the regex matches (unanchored, as `regex::Regex::is_match`).
    Regex(Regex),
}

impl Matcher {
    /// Does an argument value match? A missing argument never does.
    pub fn matches(&self, value: Option<&Value>) -> bool {
        match (self, value) {
            (_, None) => false,
            (Matcher::Exact(want), Some(v)) => match (want.as_f64(), v.as_f64()) {
                (Some(a), Some(b)) => a == b,
                _ => want == v,
            },
            (Matcher::Prefix(p), Some(v)) => v.as_str().is_some_and(|s| s.starts_with(p.as_str())),
            (Matcher::Regex(re), Some(v)) => v.as_str().is_some_and(|s| re.is_match(s)),
        }
    }
}

impl FixtureTool {
    /// The first response whose matchers all match the arguments, if any. `None` is a
    /// `fixture_miss`: a scenario error, not an agent failure.
    pub fn respond(&self, arguments: &Value) -> Option<&Body> {
        self.responses
            .iter()
            .find(|r| {
                r.when
                    .iter()
                    .all(|(name, m)| m.matches(arguments.get(name)))
            })
            .map(|r| &r.body)
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn first_matching_response_wins() {
        let tool = FixtureTool {
            description: String::new(),
            input_schema: json!({"type": "object"}),
            responses: vec![
                FixtureResponse {
                    when: vec![("url".into(), Matcher::Prefix("https://docs.".into()))],
                    body: Body::Text("docs".into()),
                },
                FixtureResponse {
                    when: vec![("url".into(), Matcher::Regex(Regex::new("blog").unwrap()))],
                    body: Body::Text("blog".into()),
                },
                FixtureResponse {
                    when: vec![("n".into(), Matcher::Exact(json!(3)))],
                    body: Body::Json(json!({"n": 3})),
                },
            ],
        };
        assert_eq!(
            tool.respond(&json!({"url": "https://docs.x/blog"})),
            Some(&Body::Text("docs".into()))
        );
        assert_eq!(
            tool.respond(&json!({"url": "http://blog.x"})),
            Some(&Body::Text("blog".into()))
        );
        assert_eq!(
            tool.respond(&json!({"n": 3})),
            Some(&Body::Json(json!({"n": 3})))
        );
        assert_eq!(
            tool.respond(&json!({"n": "3"})),
            None,
            "a miss is reported, never papered over"
        );
        assert_eq!(tool.respond(&json!({})), None);
    }
}
