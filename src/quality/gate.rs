//! The gate, mechanically: two blind judges (the second sees the dimensions in reverse
//! order) under a candidate id randomized from the seed; a third judge once when they
//! disagree beyond `max_diff`; the median of three when a pair agrees, else unstable; the
//! mean of two stable scores. Then the ordered verdict — the first rule that applies
//! decides — with bounded rewrites, and a budget no run exceeds.

use std::future::Future;
use std::pin::Pin;
use std::sync::Mutex;

use indexmap::IndexMap;
use serde::{Deserialize, Serialize};

use super::judge::{self, Candidate, Report};
use crate::chat::cache::Cache;
use crate::chat::structured::AskLog;
use crate::policy::raw::DimensionKind;
use crate::policy::{JudgeSpec, Policy};

/// The qualityState of a candidate.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum QualityState {
    /// Every check passed.
    Pass,
    /// Passed after bounded rewrites.
    RewrittenPass,
    /// Below a critical threshold after rewrites, or a hard fact conflict.
    HighRisk,
    /// A hard-block dimension failed.
    Blocked,
    /// A judge failed or could not be reached (fail closed).
    Unavailable,
    /// A dimension's scores were unstable: judge again before accepting.
    NeedsRecheck,
}

impl QualityState {
    /// The name in reports.
    pub fn as_str(self) -> &'static str {
        match self {
            QualityState::Pass => "pass",
            QualityState::RewrittenPass => "rewritten_pass",
            QualityState::HighRisk => "high_risk",
            QualityState::Blocked => "blocked",
            QualityState::Unavailable => "unavailable",
            QualityState::NeedsRecheck => "needs_recheck",
        }
    }

    /// Whether the gate fails the candidate.
    pub fn fails(self) -> bool {
        !matches!(self, QualityState::Pass | QualityState::RewrittenPass)
    }
}

/// One judge's part in a result.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct JudgeRecord {
    /// The judge.
    pub judge: String,
    /// Its report, or why there is none.
    #[serde(flatten)]
    pub outcome: JudgeOutcome,
    /// How an `openai` judge was asked: the response format (and a fallback), every
    /// attempt, the cache.
    #[serde(flatten)]
    pub log: AskLog,
}

/// A judge's report or error.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum JudgeOutcome {
    /// The scores.
    Report(Report),
    /// What went wrong.
    Error(String),
}

/// The Candidate Quality Result.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct QualityResult {
    /// qualityState.
    pub state: QualityState,
    /// The policy's name.
    pub policy: String,
    /// The policy's version.
    pub policy_version: String,
    /// The randomized id the judges saw.
    pub blind_id: String,
    /// Final score per dimension (absent where unstable or unjudged).
    pub scores: IndexMap<String, f64>,
    /// Every judge's report, in calling order.
    pub judges: Vec<JudgeRecord>,
    /// Dimensions without a stable pair of scores.
    pub unstable: Vec<String>,
    /// Risk markers: failed dimensions, conflicts, advisory notes.
    pub risk_markers: Vec<String>,
    /// Rewrites made.
    pub rewrite_count: u32,
    /// The rewrite trail: each rewritten candidate's text.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub rewrites: Vec<String>,
    /// A plain-language explanation.
    pub explanation: String,
}

/// Judge calls made and their cost, shared by every candidate of a run, and the cache
/// its judgements are kept in.
#[derive(Debug, Default)]
pub struct Ledger {
    inner: Mutex<Tally>,
    cache: Cache,
}

#[derive(Debug, Default, Clone, Copy)]
struct Tally {
    calls: u32,
    cost: f64,
    reached: u32,
    hits: u32,
}

impl Ledger {
    /// A ledger whose `openai` judgements go through `cache`.
    pub fn with_cache(cache: Cache) -> Ledger {
        Ledger {
            inner: Mutex::default(),
            cache,
        }
    }

    /// Calls made, their cost in USD, and the judgements had (from a judge or the cache).
    pub fn totals(&self) -> (u32, f64, u32) {
        let t = *self.inner.lock().expect("not poisoned");
        (t.calls, t.cost, t.reached)
    }

    /// Judgements served from the cache (no call, no cost).
    pub fn cache_hits(&self) -> u32 {
        self.inner.lock().expect("not poisoned").hits
    }

    fn take(&self, spec: &JudgeSpec, policy: &Policy) -> Result<(), String> {
        let mut g = self.inner.lock().expect("not poisoned");
        if g.calls >= policy.budget.max_calls {
            return Err(format!(
                "the budget's max_calls ({}) is spent",
                policy.budget.max_calls
            ));
        }
        if spec.cost_usd > policy.budget.max_usd_per_call + 1e-12 {
            return Err(format!(
                "judge `{}` costs ${} a call, over max_usd_per_call ${}",
                spec.id, spec.cost_usd, policy.budget.max_usd_per_call
            ));
        }
        g.calls += 1;
        g.cost += spec.cost_usd;
        Ok(())
    }

    fn reached(&self, cached: bool) {
        let mut g = self.inner.lock().expect("not poisoned");
        g.reached += 1;
        g.hits += u32::from(cached);
    }
}

/// Re-invokes the system with the judges' reasons; `None` when it cannot rewrite.
pub type Rewriter<'a> =
    &'a (dyn Fn(String) -> Pin<Box<dyn Future<Output = Option<String>> + Send + 'a>> + Sync);

/// The randomized id a candidate is shown under: stable for a seed and a candidate.
pub fn blind_id(seed: u64, candidate: &str) -> String {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325 ^ seed.wrapping_mul(0x9e37_79b9_7f4a_7c15);
    for b in candidate.bytes() {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    format!("c-{:04x}", h >> 48)
}

async fn call(
    ledger: &Ledger,
    spec: &JudgeSpec,
    policy: &Policy,
    c: &Candidate,
    blind: &str,
    reversed: bool,
) -> JudgeRecord {
    // Every request a judge is sent is charged, a repair and a fallback too.
    let mut charge = || ledger.take(spec, policy);
    let (result, log) =
        judge::ask(spec, policy, c, blind, reversed, &ledger.cache, &mut charge).await;
    let outcome = match result {
        Ok(r) => {
            ledger.reached(log.cached());
            JudgeOutcome::Report(r)
        }
        Err(e) => JudgeOutcome::Error(e),
    };
    JudgeRecord {
        judge: spec.id.clone(),
        outcome,
        log,
    }
}

/// Scores one candidate once: blind pair, tiebreak where needed.
pub(crate) async fn score(
    policy: &Policy,
    ledger: &Ledger,
    c: &Candidate,
    blind: &str,
) -> (
    IndexMap<String, f64>,
    Vec<JudgeRecord>,
    Vec<String>,
    Option<String>,
    bool,
) {
    let (a, b) = tokio::join!(
        call(ledger, &policy.judges[0], policy, c, blind, false),
        call(ledger, &policy.judges[1], policy, c, blind, true)
    );
    let mut records = vec![a, b];
    let reports: Vec<&Report> = records
        .iter()
        .filter_map(|r| {
            if let JudgeOutcome::Report(r) = &r.outcome {
                Some(r)
            } else {
                None
            }
        })
        .collect();
    if reports.len() < 2 {
        let errors: Vec<String> = records
            .iter()
            .filter_map(|r| {
                if let JudgeOutcome::Error(e) = &r.outcome {
                    Some(e.clone())
                } else {
                    None
                }
            })
            .collect();
        return (
            IndexMap::new(),
            records,
            Vec::new(),
            Some(errors.join("; ")),
            false,
        );
    }
    let (ra, rb) = (reports[0].clone(), reports[1].clone());
    let mut conflict = ra.hard_fact_conflict || rb.hard_fact_conflict;
    let mut finals = IndexMap::new();
    let mut disputed = Vec::new();
    for d in &policy.dimensions {
        let (sa, sb) = (ra.scores[&d.id].score, rb.scores[&d.id].score);
        if (sa - sb).abs() <= policy.max_diff + 1e-9 {
            finals.insert(d.id.clone(), (sa + sb) / 2.0);
        } else {
            disputed.push(d.id.clone());
        }
    }
    let mut unstable = Vec::new();
    if !disputed.is_empty() {
        let c3 = call(ledger, &policy.tiebreak, policy, c, blind, false).await;
        let rc = match &c3.outcome {
            JudgeOutcome::Report(r) => Some(r.clone()),
            JudgeOutcome::Error(_) => None,
        };
        let error = match &c3.outcome {
            JudgeOutcome::Error(e) => Some(e.clone()),
            JudgeOutcome::Report(_) => None,
        };
        records.push(c3);
        let Some(rc) = rc else {
            return (finals, records, disputed, error, conflict);
        };
        conflict |= rc.hard_fact_conflict;
        for id in disputed {
            let mut s = [
                ra.scores[&id].score,
                rb.scores[&id].score,
                rc.scores[&id].score,
            ];
            let stable = [(0, 1), (0, 2), (1, 2)]
                .iter()
                .any(|&(i, j)| (s[i] - s[j]).abs() <= policy.max_diff + 1e-9);
            if stable {
                s.sort_by(|x, y| x.total_cmp(y));
                finals.insert(id, s[1]);
            } else {
                unstable.push(id);
            }
        }
    }
    (finals, records, unstable, None, conflict)
}

/// Gates one candidate: scores, the ordered verdict, bounded rewrites.
pub async fn gate(
    policy: &Policy,
    ledger: &Ledger,
    seed: u64,
    candidate: &Candidate,
    rewriter: Option<Rewriter<'_>>,
) -> QualityResult {
    let blind = blind_id(seed, &candidate.id);
    let mut current = candidate.clone();
    let mut all_records = Vec::new();
    let mut rewrites = Vec::new();
    loop {
        let (scores, records, unstable, error, conflict) =
            score(policy, ledger, &current, &blind).await;
        all_records.extend(records.clone());
        let mut risk = Vec::new();
        let below = |kind: DimensionKind| -> Vec<String> {
            policy
                .dimensions
                .iter()
                .filter(|d| d.kind == kind)
                .filter_map(|d| Some((d, scores.get(&d.id)?, d.threshold?)))
                .filter(|(_, s, t)| **s < *t - 1e-9)
                .map(|(d, s, t)| format!("{} {s} < {t}", d.id))
                .collect()
        };
        for d in policy
            .dimensions
            .iter()
            .filter(|d| d.kind == DimensionKind::Advisory)
        {
            if let (Some(s), Some(t)) = (scores.get(&d.id), d.threshold)
                && *s < t
            {
                risk.push(format!("advisory: {} {s} < {t}", d.id));
            }
        }
        let result = |state: QualityState,
                      explanation: String,
                      mut risk: Vec<String>,
                      rewrites: &Vec<String>| {
            risk.dedup();
            QualityResult {
                state,
                policy: policy.name.clone(),
                policy_version: policy.version.clone(),
                blind_id: blind.clone(),
                scores: scores.clone(),
                judges: all_records.clone(),
                unstable: unstable.clone(),
                risk_markers: risk,
                rewrite_count: rewrites.len() as u32,
                rewrites: rewrites.clone(),
                explanation,
            }
        };
        // 1. A hard-block dimension fails: blocked, whatever else.
        let blocked = below(DimensionKind::HardBlock);
        if !blocked.is_empty() {
            risk.extend(blocked.iter().map(|b| format!("hard_block: {b}")));
            return result(
                QualityState::Blocked,
                format!(
                    "Blocked: {}. This cannot be accepted; discard or regenerate it.",
                    blocked.join(", ")
                ),
                risk,
                &rewrites,
            );
        }
        // 2. A hard fact conflict: high risk, whatever the scores.
        if conflict {
            risk.push("hard_fact_conflict".into());
            return result(QualityState::HighRisk, "High risk: a judge found it contradicts established facts. Do not accept it as is.".into(), risk, &rewrites);
        }
        // 3. A judge error or an unstable dimension: fail closed.
        if let Some(e) = error {
            risk.push("judge_error".into());
            return result(
                QualityState::Unavailable,
                format!("Unavailable: the quality judges could not score it ({e})."),
                risk,
                &rewrites,
            );
        }
        if !unstable.is_empty() {
            risk.extend(unstable.iter().map(|u| format!("unstable: {u}")));
            return result(
                QualityState::NeedsRecheck,
                format!(
                    "Needs recheck: the judges disagree on {} even after a third opinion.",
                    unstable.join(", ")
                ),
                risk,
                &rewrites,
            );
        }
        // 4. A critical dimension below its line: rewrite (bounded), else high risk.
        let low = below(DimensionKind::Critical);
        if !low.is_empty() {
            if (rewrites.len() as u32) < policy.rewrite_max
                && let Some(rw) = rewriter
            {
                let reasons: Vec<String> = all_records
                    .iter()
                    .rev()
                    .take(records.len())
                    .filter_map(|r| {
                        if let JudgeOutcome::Report(rep) = &r.outcome {
                            Some(rep)
                        } else {
                            None
                        }
                    })
                    .flat_map(|rep| {
                        rep.scores
                            .iter()
                            .filter(|(id, _)| low.iter().any(|l| l.starts_with(id.as_str())))
                            .map(|(id, s)| format!("{id}: {}", s.reason))
                    })
                    .collect();
                if let Some(text) = rw(reasons.join("\n")).await {
                    rewrites.push(text.clone());
                    current.output = text;
                    continue;
                }
            }
            risk.extend(low.iter().map(|l| format!("critical: {l}")));
            let tried = if rewrites.is_empty() {
                String::new()
            } else {
                format!(" after {} rewrite(s)", rewrites.len())
            };
            return result(
                QualityState::HighRisk,
                format!(
                    "High risk: {}{tried}. Revise it before merging, or regenerate.",
                    low.join(", ")
                ),
                risk,
                &rewrites,
            );
        }
        // 5. Pass.
        let state = if rewrites.is_empty() {
            QualityState::Pass
        } else {
            QualityState::RewrittenPass
        };
        return result(
            state,
            if rewrites.is_empty() {
                "Passed every quality check.".into()
            } else {
                format!("Passed after {} rewrite(s).", rewrites.len())
            },
            risk,
            &rewrites,
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn state_names_are_the_reports() {
        for s in [
            QualityState::Pass,
            QualityState::RewrittenPass,
            QualityState::HighRisk,
            QualityState::Blocked,
            QualityState::Unavailable,
            QualityState::NeedsRecheck,
        ] {
            assert_eq!(serde_json::to_value(s).unwrap(), s.as_str());
        }
    }

    #[test]
    fn blind_ids_are_stable_per_seed() {
        assert_eq!(blind_id(7, "cand-1"), blind_id(7, "cand-1"));
        assert_ne!(blind_id(7, "cand-1"), blind_id(8, "cand-1"));
        assert!(blind_id(0, "x").starts_with("c-"));
    }
}
