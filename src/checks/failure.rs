//! Failure semantics and silent degradation. With the tools available, the system must
//! answer. Under a fault, its behaviour must be one the contract's `failure_semantics`
//! (and `degradation.mode`) accept; an answer with no failure signal at all is silent
//! degradation (docs/report.md, "Silent degradation"), with its evidence attached.

use serde_json::json;

use super::CellInput;
use super::trace_rules::collect_urls;
use crate::contract::{DegradationMode, Semantics};
use crate::gateway::Status;
use crate::target::Invocation;
use crate::vocab::{Behavior, CheckId, Finding};

pub(crate) fn check_available(input: &CellInput<'_>, behavior: Behavior, out: &mut Vec<Finding>) {
    match behavior {
        Behavior::Answered => {
            if let Invocation::Responded { response, .. } = input.invocation
                && super::citations::output_text(&response.output)
                    .trim()
                    .is_empty()
            {
                out.push(Finding::error(
                    CheckId::EmptyAnswer,
                    "the agent reported success with no answer although every tool was available",
                ));
            }
        }
        Behavior::NotRun | Behavior::Silent => {}
        Behavior::Timeout => out.push(Finding::error(
            CheckId::Timeout,
            timeout_message(input.invocation),
        )),
        Behavior::HardInterrupt => out.push(Finding::error(
            CheckId::HardInterrupt,
            interrupt_message(input.invocation),
        )),
        other => out.push(Finding::error(
            CheckId::FailureSemantics,
            format!("{} although every tool was available", describe(other)),
        )),
    }
}

pub(crate) fn check_fault(
    input: &CellInput<'_>,
    behavior: Behavior,
    reading: Option<&super::Reading>,
    out: &mut Vec<Finding>,
) {
    let fault = input.fault.expect("a fault cell");
    let semantics = input
        .contract
        .failure_semantics
        .get(&fault)
        .copied()
        .unwrap_or(Semantics::Explicit);
    let mode = input.contract.degradation.mode;
    let accepted: &[Behavior] = match semantics {
        Semantics::Hard => &[Behavior::ExplicitFailure, Behavior::HardInterrupt],
        Semantics::Explicit => &[
            Behavior::ExplicitFailure,
            Behavior::Refused,
            Behavior::DegradedMarked,
        ],
        Semantics::RetryThenDegrade | Semantics::Degrade => match mode {
            DegradationMode::RefuseWithReason => &[Behavior::ExplicitFailure, Behavior::Refused],
            DegradationMode::DegradedWithMarker => {
                &[Behavior::ExplicitFailure, Behavior::DegradedMarked]
            }
            DegradationMode::HardFail => &[Behavior::ExplicitFailure, Behavior::HardInterrupt],
        },
    };
    if accepted.contains(&behavior) {
        return;
    }
    let answer = match input.invocation {
        Invocation::Responded { response, .. } => response.output_text(),
        _ => String::new(),
    };
    let answered = reading.is_none_or(super::Reading::asserts);
    if behavior == Behavior::Silent && !answer.trim().is_empty() && answered {
        let forbidden: Vec<&String> = input
            .scenario
            .forbidden
            .iter()
            .filter(|f| crate::text::contains(&answer, f))
            .collect();
        let fetched: Vec<String> = input
            .trace
            .iter()
            .filter(|e| {
                e.op == "call"
                    && matches!(e.status, Status::Ok | Status::ToolError)
                    && !e.result_text.is_empty()
            })
            .flat_map(|e| {
                let mut urls = Vec::new();
                collect_urls(
                    e.arguments.as_ref().unwrap_or(&serde_json::Value::Null),
                    &mut urls,
                );
                urls
            })
            .collect();
        let cited: Vec<String> = match input.invocation {
            Invocation::Responded { response, .. } => {
                response.citations.iter().map(|c| c.url.clone()).collect()
            }
            _ => Vec::new(),
        };
        let unfetched: Vec<&String> = cited.iter().filter(|u| !fetched.contains(u)).collect();
        let unsupported: Vec<String> = reading.map(super::Reading::ungrounded).unwrap_or_default();
        let evidence = json!({
            "fault": fault.as_str(),
            "unsupported_facts": unsupported,
            "removed_tools": input.removed,
            "answer_excerpt": answer.chars().take(300).collect::<String>(),
            "forbidden_facts": forbidden,
            "cited_but_never_fetched": unfetched,
            "successful_calls": input.trace.iter().filter(|e| e.op == "call" && e.status == Status::Ok).count() as u64
                + input.truncated.map_or(0, |t| t.with_status(Status::Ok)),
        });
        if input.contract.degradation.allow_model_fallback && forbidden.is_empty() {
            out.push(
                Finding::warning(CheckId::SilentDegradation, format!("answered under {fault} with no failure signal (allowed: allow_model_fallback)"))
                    .with_evidence(evidence),
            );
        } else {
            out.push(
                Finding::error(
                    CheckId::SilentDegradation,
                    silent_message(input, fault, reading),
                )
                .with_evidence(evidence),
            );
        }
        return;
    }
    let finding = match behavior {
        Behavior::Timeout => Finding::error(CheckId::Timeout, timeout_message(input.invocation)),
        Behavior::HardInterrupt => Finding::error(
            CheckId::HardInterrupt,
            format!(
                "{} (the contract wants {})",
                interrupt_message(input.invocation),
                wanted(accepted)
            ),
        ),
        other => Finding::error(
            CheckId::FailureSemantics,
            format!(
                "under {fault} the contract ({}) wants {}, but the system {}",
                semantics.as_str(),
                wanted(accepted),
                describe(other)
            ),
        ),
    };
    out.push(finding.with_evidence(
        json!({"fault": fault.as_str(), "semantics": semantics.as_str(), "behavior": behavior}),
    ));
}

/// Says what happened: the fault reached the agent and it answered anyway, or it never
/// called the faulted tool at all; and whether its words reported a failure that its
/// assertions then ignored.
fn silent_message(
    input: &CellInput<'_>,
    fault: crate::contract::FaultKind,
    reading: Option<&super::Reading>,
) -> String {
    let called = input.trace.iter().any(|e| {
        e.op == "call"
            && e.tool
                .as_ref()
                .is_some_and(|t| input.removed.is_empty() || input.removed.contains(t))
    }) || input.truncated.is_some_and(|t| {
        // Calls past the trace's cap count too.
        if input.removed.is_empty() {
            t.dropped_calls > 0
        } else {
            input.removed.iter().any(|r| t.calls_of(r) > 0)
        }
    });
    let veneered = reading.is_some_and(|r| r.analysis.reports_failure);
    // The lexicon names failures; wording outside it may still have told a person.
    let signal = if veneered {
        ""
    } else {
        ", no failure signal the verifier recognizes reached the caller"
    };
    let head = if called {
        format!("{fault} was injected on {}{signal}", list(input.removed))
    } else {
        let (were, it) = if input.removed.len() > 1 {
            ("were", "them")
        } else {
            ("was", "it")
        };
        format!(
            "{} {were} never called ({fault} was prepared on {it}){signal}",
            list(input.removed)
        )
    };
    let tail = match reading {
        Some(r) if r.analysis.reports_failure => {
            let what = r.ungrounded();
            if what.is_empty() {
                ", and the answer, though it mentions a failure, still states an answer".to_string()
            } else {
                format!(
                    ", and the answer, though it mentions a failure, still asserts: {}",
                    brief(&what)
                )
            }
        }
        // What it asserts, where the reading can say (its facts and statements).
        Some(r) if !r.ungrounded().is_empty() => {
            let lead = if called {
                "an answer was still produced"
            } else {
                "the answer came without it"
            };
            format!(", and {lead}: {}", brief(&r.ungrounded()))
        }
        _ if called => ", and an answer was still produced".to_string(),
        _ => ", and the answer came without it".to_string(),
    };
    format!("{head}{tail}")
}

/// The first few of what an answer asserts, each cut short: a finding names them, the
/// report's cell holds the answer.
fn brief(what: &[String]) -> String {
    const ITEMS: usize = 3;
    const CHARS: usize = 80;
    let mut distinct: Vec<&String> = Vec::new();
    for w in what {
        if !distinct.contains(&w) {
            distinct.push(w);
        }
    }
    let mut out: Vec<String> = distinct
        .iter()
        .take(ITEMS)
        .map(|w| {
            if w.chars().count() > CHARS {
                format!("{}…", w.chars().take(CHARS).collect::<String>())
            } else {
                w.to_string()
            }
        })
        .collect();
    if distinct.len() > ITEMS {
        out.push(format!("and {} more", distinct.len() - ITEMS));
    }
    out.join(", ")
}

fn wanted(accepted: &[Behavior]) -> String {
    accepted
        .iter()
        .map(|b| describe_noun(*b))
        .collect::<Vec<_>>()
        .join(" or ")
}

fn describe_noun(b: Behavior) -> &'static str {
    match b {
        Behavior::ExplicitFailure => "an explicit error",
        Behavior::Refused => "a refusal with a reason",
        Behavior::DegradedMarked => "a degraded-marked answer",
        Behavior::HardInterrupt => "a hard interrupt",
        _ => "an answer",
    }
}

fn describe(b: Behavior) -> &'static str {
    match b {
        Behavior::Answered => "answered",
        Behavior::ExplicitFailure => "failed explicitly",
        Behavior::Refused => "refused",
        Behavior::DegradedMarked => "gave a degraded answer",
        Behavior::HardInterrupt => "was interrupted",
        Behavior::Timeout => "timed out",
        Behavior::Silent => "gave no answer and no failure signal",
        Behavior::NotRun => "was not run",
    }
}

fn list(tools: &[String]) -> String {
    if tools.is_empty() {
        return "the skill's tools".into();
    }
    tools
        .iter()
        .map(|t| format!("`{t}`"))
        .collect::<Vec<_>>()
        .join(", ")
}

fn timeout_message(inv: &Invocation) -> String {
    match inv {
        Invocation::TimedOut { after, .. } => format!(
            "the agent did not answer within {}",
            humantime::format_duration(*after)
        ),
        _ => "the agent timed out".into(),
    }
}

fn interrupt_message(inv: &Invocation) -> String {
    match inv {
        Invocation::HardInterrupt { reason, .. } => reason.clone(),
        _ => "hard interrupt".into(),
    }
}
