//! The quality policy file (`quality.policy` in fibon.yaml), loaded. Raw policy ->
//! [`Policy`]: every critical dimension has a registered threshold (an
//! unregistered one leaves the gate open, which is an error), thresholds sit on the scale,
//! exactly two blind judges, each judge configured for its kind, and a budget whose
//! reservation fits its limit.

use std::time::Duration;

use serde_json::Value;

pub mod raw;

use crate::diag::Diagnostic;
use crate::source::{Anchor, Document, join};
use raw::{DimensionKind, JudgeKind, RawJudge, RawPolicy};

/// The validated policy.
#[derive(Debug, Clone)]
pub struct Policy {
    /// Name.
    pub name: String,
    /// Version, as written.
    pub version: String,
    /// Scale.
    pub scale: Scale,
    /// Dimensions in file order.
    pub dimensions: Vec<Dimension>,
    /// The two blind judges.
    pub judges: [JudgeSpec; 2],
    /// The tiebreak judge.
    pub tiebreak: JudgeSpec,
    /// Scores within this agree.
    pub max_diff: f64,
    /// Most rewrites per candidate.
    pub rewrite_max: u32,
    /// The budget.
    pub budget: Budget,
}

impl Policy {
    /// Whether any of its judges is a model (`openai`), whose judgements are cached.
    pub fn asks_models(&self) -> bool {
        self.judges
            .iter()
            .chain([&self.tiebreak])
            .any(|j| matches!(j.kind, JudgeImpl::Openai { .. }))
    }

    /// The variables this policy names as secrets: each `openai` judge's `api_key_env`.
    pub fn secret_names(&self) -> Vec<String> {
        self.judges
            .iter()
            .chain([&self.tiebreak])
            .filter_map(|j| match &j.kind {
                JudgeImpl::Openai { api_key_env, .. } => api_key_env.clone(),
                JudgeImpl::Command(_) | JudgeImpl::Builtin(_) => None,
            })
            .collect()
    }
}

/// The scale.
#[derive(Debug, Clone, Copy)]
pub struct Scale {
    /// Lowest.
    pub min: f64,
    /// Highest.
    pub max: f64,
    /// Step.
    pub step: f64,
}

impl Default for Scale {
    /// 0 to 10 in steps of 0.5, the scale a policy without `scale` uses.
    fn default() -> Self {
        Scale {
            min: 0.0,
            max: 10.0,
            step: 0.5,
        }
    }
}

impl Scale {
    /// Whether a score lies within the scale, steps aside (a mean of two judges' scores
    /// may fall between steps). NaN and infinities never do.
    pub fn contains(&self, s: f64) -> bool {
        s.is_finite() && s >= self.min - 1e-9 && s <= self.max + 1e-9
    }

    /// Whether a score is on the scale (within it, on a step).
    pub fn accepts(&self, s: f64) -> bool {
        s >= self.min - 1e-9
            && s <= self.max + 1e-9
            && (((s - self.min) / self.step).round() * self.step + self.min - s).abs() < 1e-6
    }
}

/// A dimension.
#[derive(Debug, Clone)]
pub struct Dimension {
    /// Id.
    pub id: String,
    /// Kind.
    pub kind: DimensionKind,
    /// Pass line (None for advisory without one).
    pub threshold: Option<f64>,
    /// Description given to judges.
    pub description: String,
}

/// A judge's configuration.
#[derive(Debug, Clone)]
pub struct JudgeSpec {
    /// Id.
    pub id: String,
    /// How it is reached.
    pub kind: JudgeImpl,
    /// USD per call.
    pub cost_usd: f64,
    /// Per call.
    pub timeout: Duration,
}

/// How a judge is reached.
#[derive(Debug, Clone)]
pub enum JudgeImpl {
    /// A process.
    Command(Vec<String>),
    /// An OpenAI-compatible endpoint.
    Openai {
        /// Base URL.
        base_url: url::Url,
        /// Model.
        model: String,
        /// Key variable.
        api_key_env: Option<String>,
    },
    /// A built-in deterministic judge.
    Builtin(BuiltinJudge),
}

/// The built-in judges.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BuiltinJudge {
    /// The share of the expected facts the candidate states.
    FactCoverage,
    /// The share of the candidate's key facts its evidence supports.
    CitationSupport,
    /// The share of output assertions that pass.
    AssertionPass,
}

/// The budget.
#[derive(Debug, Clone, Copy)]
pub struct Budget {
    /// Planned calls.
    pub planned_calls: u32,
    /// Hard cap.
    pub max_calls: u32,
    /// Most per call.
    pub max_usd_per_call: f64,
    /// Most reserved.
    pub limit_usd: f64,
}

impl Budget {
    /// What starting reserves: planned calls × the most a call may cost.
    pub fn reservation(&self) -> f64 {
        f64::from(self.planned_calls) * self.max_usd_per_call
    }
}

/// Validates a raw policy; problems go to `diags`. `None` when any is an error.
pub fn validate(doc: &Document, raw: RawPolicy, diags: &mut Vec<Diagnostic>) -> Option<Policy> {
    let before = diags.iter().filter(|d| d.is_error()).count();
    let scale = raw.scale.map_or(Scale::default(), |s| Scale {
        min: s.min,
        max: s.max,
        step: s.step,
    });
    if !(scale.step > 0.0 && scale.max > scale.min) {
        diags.push(
            doc.error(
                "scale",
                "/scale",
                Anchor::Key,
                "the scale needs max > min and step > 0",
                "bad scale",
            )
            .with_help("use `scale: {min: 0, max: 10, step: 0.5}`"),
        );
    }
    let mut dimensions: Vec<Dimension> = Vec::new();
    for (i, d) in raw.dimensions.into_iter().enumerate() {
        let ptr = format!("/dimensions/{i}");
        if dimensions.iter().any(|o| o.id == d.id) {
            diags.push(
                doc.error(
                    "duplicate_id",
                    &join(&ptr, "id"),
                    Anchor::Value,
                    format!("dimension `{}` is listed twice", d.id),
                    "again",
                )
                .with_help("each dimension once"),
            );
        }
        let threshold = match (d.kind, d.threshold) {
            (DimensionKind::Critical, None) => {
                diags.push(
                    doc.error("threshold", &ptr, Anchor::Value, format!("critical dimension `{}` has no threshold", d.id), "no pass line")
                        .with_help("register its pass line, such as `threshold: 7.0`: an unregistered threshold leaves the gate open"),
                );
                None
            }
            (DimensionKind::HardBlock, None) => Some(scale.max),
            (_, t) => t,
        };
        if let Some(t) = threshold.filter(|t| !scale.accepts(*t)) {
            diags.push(
                doc.error(
                    "threshold",
                    &join(&ptr, "threshold"),
                    Anchor::Value,
                    format!(
                        "threshold {t} is not on the scale {}..{} in steps of {}",
                        scale.min, scale.max, scale.step
                    ),
                    "off the scale",
                )
                .with_help("use a score the judges can give"),
            );
        }
        dimensions.push(Dimension {
            id: d.id,
            kind: d.kind,
            threshold,
            description: d.description.unwrap_or_default(),
        });
    }
    if dimensions.is_empty() {
        diags.push(
            doc.error(
                "dimensions",
                "/dimensions",
                Anchor::Key,
                "the policy judges no dimension",
                "empty",
            )
            .with_help("add at least one dimension"),
        );
    }
    let judges: Vec<JudgeSpec> = raw
        .judges
        .into_iter()
        .enumerate()
        .filter_map(|(i, j)| judge(doc, &format!("/judges/{i}"), j, diags))
        .collect();
    if doc
        .get("/judges")
        .and_then(Value::as_array)
        .map_or(0, Vec::len)
        != 2
    {
        diags.push(
            doc.error(
                "judges",
                "/judges",
                Anchor::Key,
                "the double-blind protocol needs exactly two judges",
                "not two",
            )
            .with_help("list the two blind judges under `judges:` and the third under `tiebreak:`"),
        );
    }
    let tiebreak = judge(doc, "/tiebreak", raw.tiebreak, diags);
    let b = raw.budget;
    let budget = Budget {
        planned_calls: b.planned_calls,
        max_calls: b.max_calls,
        max_usd_per_call: b.max_usd_per_call,
        limit_usd: b.limit_usd,
    };
    if budget.max_calls < budget.planned_calls {
        diags.push(
            doc.error(
                "budget",
                "/budget/max_calls",
                Anchor::Value,
                format!(
                    "max_calls {} is below planned_calls {}",
                    budget.max_calls, budget.planned_calls
                ),
                "below the plan",
            )
            .with_help("max_calls is the safety cap above the plan"),
        );
    }
    if budget.reservation() > budget.limit_usd + 1e-9 {
        diags.push(
            doc.error(
                "budget",
                "/budget",
                Anchor::Key,
                format!(
                    "the plan reserves {} × ${} = ${:.2}, over limit_usd ${}",
                    budget.planned_calls,
                    budget.max_usd_per_call,
                    budget.reservation(),
                    budget.limit_usd
                ),
                "over budget",
            )
            .with_help("lower planned_calls or max_usd_per_call, or raise limit_usd"),
        );
    }
    let failed = diags.iter().filter(|d| d.is_error()).count() > before;
    let [a, b]: [JudgeSpec; 2] = judges.try_into().ok()?;
    let tiebreak = tiebreak?;
    let policy = (!failed).then(|| Policy {
        name: raw.policy,
        version: match raw.version {
            Value::String(s) => s,
            other => other.to_string(),
        },
        scale,
        dimensions,
        judges: [a, b],
        tiebreak,
        max_diff: raw.stability.map_or(0.5, |s| s.max_diff),
        rewrite_max: raw.rewrite.map_or(2, |r| r.max),
        budget,
    });
    // Before a judge can echo them: every output from here on redacts them.
    if let Some(p) = &policy {
        crate::secrets::register(p.secret_names());
    }
    policy
}

fn judge(doc: &Document, ptr: &str, j: RawJudge, diags: &mut Vec<Diagnostic>) -> Option<JudgeSpec> {
    let mut need = |key: &str, present: bool| {
        if !present {
            diags.push(
                doc.error(
                    "judge",
                    &join(ptr, "kind"),
                    Anchor::Value,
                    format!("a `{}` judge needs `{key}`", j.kind.as_str()),
                    format!("`{key}` missing"),
                )
                .with_help(format!("add `{key}:` to judge `{}`", j.id)),
            );
        }
        present
    };
    let timeout = j
        .timeout
        .as_deref()
        .map(humantime::parse_duration)
        .transpose();
    let timeout = match timeout {
        Ok(t) => t.unwrap_or(Duration::from_secs(60)),
        Err(e) => {
            diags.push(
                doc.error(
                    "invalid_duration",
                    &join(ptr, "timeout"),
                    Anchor::Value,
                    format!("not a duration: {e}"),
                    "not a duration",
                )
                .with_help("such as `60s`"),
            );
            return None;
        }
    };
    let kind = match j.kind {
        JudgeKind::Command => {
            if !need("command", j.command.as_ref().is_some_and(|c| !c.is_empty())) {
                return None;
            }
            JudgeImpl::Command(j.command.unwrap_or_default())
        }
        JudgeKind::Openai => {
            if !(need("base_url", j.base_url.is_some()) & need("model", j.model.is_some())) {
                return None;
            }
            let url = j.base_url.unwrap_or_default();
            let base_url = match crate::contract::absolute_http_url(&url) {
                Ok(u) => u,
                Err(why) => {
                    diags.push(
                        doc.error(
                            "invalid_url",
                            &join(ptr, "base_url"),
                            Anchor::Value,
                            format!("`{url}` {why}"),
                            "not a URL",
                        )
                        .with_help("such as `http://127.0.0.1:8080/v1`"),
                    );
                    return None;
                }
            };
            JudgeImpl::Openai {
                base_url,
                model: j.model.unwrap_or_default(),
                api_key_env: j.api_key_env,
            }
        }
        JudgeKind::Builtin => {
            let name = j.name.clone().unwrap_or_default();
            let b = match name.as_str() {
                "fact_coverage" => BuiltinJudge::FactCoverage,
                "citation_support" => BuiltinJudge::CitationSupport,
                "assertion_pass" => BuiltinJudge::AssertionPass,
                other => {
                    let hint = crate::diag::suggestion_help(
                        other,
                        &["fact_coverage", "citation_support", "assertion_pass"],
                        "judge",
                    );
                    diags.push(
                        doc.error(
                            "judge",
                            &join(ptr, "name"),
                            Anchor::Value,
                            format!("unknown built-in judge `{other}`"),
                            "unknown",
                        )
                        .with_help(hint),
                    );
                    return None;
                }
            };
            JudgeImpl::Builtin(b)
        }
    };
    Some(JudgeSpec {
        id: j.id,
        kind,
        cost_usd: j.cost_usd.unwrap_or(0.0),
        timeout,
    })
}
