//! Reproducibility sampling: a seeded share of recorded conversations re-run in isolation
//! — the input replayed against the target through the gateway, the recorded tool results
//! (and errors) as fixtures, so only the agent's decisions can vary — and each replay's
//! decision DAG compared with the recorded one. A Skill whose decisions change is unstable
//! ([`stability`]); [`run`] is the whole `sample` command.

pub mod dag;
mod run;
pub mod stability;

use indexmap::IndexMap;
use serde_json::{Value, json};

use crate::config::Target;
use crate::gateway::{FaultPlan, Gateway, SessionSpec, result_text};
use crate::history::Conversation;
use crate::report::CellReport;
use crate::scenario::{Body, FixtureResponse, FixtureTool, Matcher};
use crate::target::{Invocation, Limits, Request, invoke};
use crate::vocab::{Behavior, CheckId, Finding, Verdict};

pub use dag::{Comparison, Dag, compare};
pub use run::{SampleSpec, Sampled, print_selection, run};

/// Whether a conversation is in the sample: a hash of (seed, id) below `rate`. The same
/// seed picks the same conversations however the history grows.
pub fn selected(seed: u64, id: &str, rate: f64) -> bool {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in seed.to_le_bytes().iter().chain(id.as_bytes()) {
        h ^= u64::from(*b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    // Finalize (splitmix64) so ids differing in their last byte spread evenly.
    h ^= h >> 30;
    h = h.wrapping_mul(0xbf58_476d_1ce4_e5b9);
    h ^= h >> 27;
    h = h.wrapping_mul(0x94d0_49bb_1331_11eb);
    h ^= h >> 31;
    (h as f64 / u64::MAX as f64) < rate
}

/// The recorded calls as fixtures: each tool answers each recorded argument set with its
/// recorded result or error; anything else is a fixture miss (a different decision).
pub fn fixtures(conv: &Conversation) -> IndexMap<String, FixtureTool> {
    let mut tools: IndexMap<String, FixtureTool> = IndexMap::new();
    for call in &conv.trace {
        let when: Vec<(String, Matcher)> = call
            .arguments
            .as_object()
            .map(|m| {
                m.iter()
                    .map(|(k, v)| (k.clone(), Matcher::Exact(v.clone())))
                    .collect()
            })
            .unwrap_or_default();
        let body = match (&call.result, &call.error) {
            (_, Some(e)) => Body::Error {
                code: e["code"].as_str().unwrap_or("ERROR").to_string(),
                message: e["message"].as_str().unwrap_or("").to_string(),
            },
            (Some(r), None) => Body::Text(result_text(r)),
            (None, None) => Body::Text(String::new()),
        };
        tools
            .entry(call.tool.clone())
            .or_insert_with(|| FixtureTool {
                description: format!("recorded tool {}", call.tool),
                input_schema: json!({"type": "object"}),
                responses: Vec::new(),
            })
            .responses
            .push(FixtureResponse { when, body });
    }
    tools
}

fn recorded_dag(conv: &Conversation) -> Dag {
    let calls: Vec<(String, Value, String)> = conv
        .trace
        .iter()
        .map(|c| {
            (
                c.tool.clone(),
                c.arguments.clone(),
                c.result.as_ref().map(result_text).unwrap_or_default(),
            )
        })
        .collect();
    Dag::build(&calls)
}

/// Replays one conversation and compares the decisions; the cell is `pass` when stable,
/// `contract_violation` (`unstable_decisions`) when not, `error` when the target could not
/// be invoked.
pub async fn replay(
    conv: &Conversation,
    target: &Target,
    gateway: &Gateway,
    limits: Limits,
    min_similarity: f64,
) -> CellReport {
    let session = gateway.open_session(SessionSpec {
        fixtures: fixtures(conv),
        schema_drift: IndexMap::new(),
        faults: FaultPlan::none(),
    });
    let request = Request {
        run_id: format!("{}#sample", conv.id),
        skill: conv.skill.clone(),
        input: conv.input.clone(),
        tools_url: session.tools_url(),
        mcp_url: session.mcp_url(),
        revise: None,
        intervention: None,
    };
    let invocation = invoke(target, &request, limits).await;
    let trace = session.trace();
    drop(session);
    let calls: Vec<(String, Value, String)> = trace
        .iter()
        .filter(|e| e.op == "call")
        .map(|e| {
            (
                e.tool.clone().unwrap_or_default(),
                e.arguments.clone().unwrap_or(Value::Null),
                e.result_text.clone(),
            )
        })
        .collect();
    let replayed = Dag::build(&calls);
    let recorded = recorded_dag(conv);
    let cmp = compare(&recorded, &replayed, min_similarity);
    let (verdict, behavior, findings, output) = match &invocation {
        Invocation::Failed { reason } => (
            Verdict::Error,
            Behavior::NotRun,
            vec![Finding::error(CheckId::TargetUnavailable, reason.clone())],
            Value::Null,
        ),
        Invocation::Responded { response, .. } => {
            let f = if cmp.stable {
                Vec::new()
            } else {
                vec![
                    Finding::error(
                        CheckId::UnstableDecisions,
                        format!("the replay decided differently: {}", cmp.diff.join("; ")),
                    )
                    .with_evidence(
                        json!({"recorded": recorded, "replayed": replayed, "comparison": cmp}),
                    ),
                ]
            };
            (
                if cmp.stable {
                    Verdict::Pass
                } else {
                    Verdict::ContractViolation
                },
                Behavior::Answered,
                f,
                response.output.clone(),
            )
        }
        Invocation::TimedOut { .. } | Invocation::HardInterrupt { .. } => (
            Verdict::ContractViolation,
            if matches!(invocation, Invocation::TimedOut { .. }) {
                Behavior::Timeout
            } else {
                Behavior::HardInterrupt
            },
            vec![Finding::error(
                CheckId::UnstableDecisions,
                "the replay did not answer, where the recording did".to_string(),
            )],
            Value::Null,
        ),
    };
    CellReport::new(
        conv.id.clone(),
        conv.skill.clone(),
        behavior,
        verdict,
        findings,
    )
    .with_output(output)
    .with_trace(trace)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn selection_is_stable_and_near_the_rate() {
        let ids: Vec<String> = (0..20_000).map(|i| format!("conv-{i:06}")).collect();
        let picked = ids.iter().filter(|id| selected(7, id, 0.1)).count();
        assert!((1800..2200).contains(&picked), "{picked}");
        assert_eq!(
            selected(7, "conv-000042", 0.1),
            selected(7, "conv-000042", 0.1)
        );
        assert!(
            ids.iter()
                .any(|id| selected(7, id, 0.1) != selected(8, id, 0.1)),
            "the seed matters"
        );
        assert!(!selected(7, "x", 0.0) && selected(7, "x", 1.0));
    }
}
