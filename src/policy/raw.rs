//! The quality policy file exactly as written (serde mirror, `deny_unknown_fields`);
//! validated into [`Policy`](super::Policy) by `policy.rs`.

use schemars::JsonSchema;
use serde::Deserialize;

/// A versioned quality policy: dimensions with their kinds and thresholds, the scale, the
/// two blind judges and the tiebreak judge, stability, rewrites and the budget.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(title = "fibon-verify quality policy")]
pub struct RawPolicy {
    /// The JSON Schema this file follows, for editors (ignored).
    #[serde(rename = "$schema")]
    pub schema: Option<String>,
    /// The policy's name.
    pub policy: String,
    /// Its version (recorded in every Candidate Quality Result).
    pub version: serde_json::Value,
    /// The score scale (default 0-10 in 0.5 steps).
    pub scale: Option<RawScale>,
    /// The dimensions judged.
    pub dimensions: Vec<RawDimension>,
    /// Exactly two blind judges.
    pub judges: Vec<RawJudge>,
    /// The judge called once when the two disagree by more than `stability.max_diff`.
    pub tiebreak: RawJudge,
    /// When two scores count as agreeing.
    pub stability: Option<RawStability>,
    /// Bounded rewrites of candidates below a critical threshold.
    pub rewrite: Option<RawRewrite>,
    /// The judge-call budget.
    pub budget: RawBudget,
}

/// The scale.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RawScale {
    /// Lowest score.
    pub min: f64,
    /// Highest score.
    pub max: f64,
    /// Scores are multiples of this.
    pub step: f64,
}

/// One dimension.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RawDimension {
    /// Its id, as judges report it.
    pub id: String,
    /// `hard_block`, `critical` or `advisory`.
    pub kind: DimensionKind,
    /// The pass line (required for `critical`; `hard_block` defaults to the scale's max).
    pub threshold: Option<f64>,
    /// What the judges are asked to judge.
    pub description: Option<String>,
}

/// How a dimension gates.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, serde::Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum DimensionKind {
    /// Below its threshold the candidate is `blocked`, whatever else.
    HardBlock,
    /// Below its threshold the candidate is rewritten (bounded), then `high_risk`.
    Critical,
    /// Shown, never blocks.
    Advisory,
}

/// A judge.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RawJudge {
    /// Its id in reports.
    pub id: String,
    /// `command`, `openai` or `builtin`.
    pub kind: JudgeKind,
    /// command: the argv (speaks `fibon.judge/v1` on stdin/stdout).
    pub command: Option<Vec<String>>,
    /// openai: the API base URL.
    pub base_url: Option<String>,
    /// openai: the model.
    pub model: Option<String>,
    /// openai: the environment variable holding the API key.
    pub api_key_env: Option<String>,
    /// builtin: `fact_coverage`, `citation_support` or `assertion_pass`.
    pub name: Option<String>,
    /// What one call costs, in USD, for the budget (default 0).
    pub cost_usd: Option<f64>,
    /// command and openai: per call (default 60s).
    pub timeout: Option<String>,
}

/// The kinds of judge.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, serde::Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum JudgeKind {
    /// A process speaking `fibon.judge/v1`.
    Command,
    /// An OpenAI-compatible chat endpoint.
    Openai,
    /// A deterministic judge built into fibon-verify.
    Builtin,
}

impl JudgeKind {
    /// The name as written in policies.
    pub fn as_str(self) -> &'static str {
        match self {
            JudgeKind::Command => "command",
            JudgeKind::Openai => "openai",
            JudgeKind::Builtin => "builtin",
        }
    }
}

/// Stability.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RawStability {
    /// Two scores agree when they differ by at most this (default 0.5).
    pub max_diff: f64,
}

/// Rewrites.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RawRewrite {
    /// At most this many rewrites per candidate (default 2).
    pub max: u32,
}

/// The budget.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RawBudget {
    /// The judge calls planned for one gate run (reserved up front).
    pub planned_calls: u32,
    /// The hard cap on judge calls.
    pub max_calls: u32,
    /// The most one call may cost, in USD.
    pub max_usd_per_call: f64,
    /// The most the run may reserve, in USD.
    pub limit_usd: f64,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn judge_kind_names_are_the_policys() {
        for k in [JudgeKind::Command, JudgeKind::Openai, JudgeKind::Builtin] {
            assert_eq!(serde_json::to_value(k).unwrap(), k.as_str());
        }
    }
}
