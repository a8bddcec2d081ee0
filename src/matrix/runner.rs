//! The runner: cells on tokio with bounded concurrency (`--jobs`), each in its own gateway
//! session with its fault plan; the agent invoked, its output, its self-reported trace and
//! the gateway's trace collected and checked. `--repeat N` runs each cell N times and keeps
//! the worst (pass^k). Cancelling stops scheduling; running agents are killed.

use std::time::Instant;

use futures_util::StreamExt;
use serde_json::Value;

use super::Cell;
use crate::checks::{CellInput, evaluate, needs_judge};
use crate::config::Target;
use crate::gateway::{Fault, FaultPlan, Gateway, SessionSpec};
use crate::project::ValidProject;
use crate::report::CellReport;
use crate::target::{Invocation, Limits, Request, invoke};
use crate::vocab::{Behavior, CheckId, Verdict};

/// How to run.
#[derive(Debug, Clone)]
pub struct RunOptions {
    /// Cells at once.
    pub jobs: usize,
    /// Runs of each cell.
    pub repeat: u32,
    /// Output caps.
    pub limits: Limits,
    /// The refusal lexicon (built-in, or extended from fibon.yaml).
    pub lexicon: std::sync::Arc<crate::checks::refusal::Lexicon>,
    /// The model-based refusal classifier, if configured.
    pub refusal_judge: Option<crate::config::RefusalJudge>,
    /// Where model judgements are kept (the refusal judge's; the quality gate's ledger
    /// holds its own).
    pub cache: crate::chat::cache::Cache,
    /// The quality gate, when a policy is configured: the policy, the seed, and the
    /// ledger of judge calls shared by every cell.
    pub quality: Option<(
        crate::quality::Policy,
        u64,
        std::sync::Arc<crate::quality::Ledger>,
    )>,
}

/// Runs the cells; returns their reports in plan order and whether the run was cancelled
/// (then only finished cells are returned). `on_done` is called as each cell finishes.
pub async fn run_cells(
    project: &ValidProject,
    target: &Target,
    gateway: &Gateway,
    cells: &[Cell],
    options: &RunOptions,
    on_done: &(dyn Fn(&CellReport) + Sync),
    cancel: impl std::future::Future<Output = ()>,
) -> (Vec<CellReport>, bool) {
    let mut results: Vec<Option<CellReport>> = vec![None; cells.len()];
    let stream = futures_util::stream::iter(cells.iter().enumerate())
        .map(
            |(i, cell)| async move { (i, run_cell(project, target, gateway, cell, options).await) },
        )
        .buffer_unordered(options.jobs.max(1));
    tokio::pin!(stream);
    tokio::pin!(cancel);
    let mut interrupted = false;
    loop {
        tokio::select! {
            next = stream.next() => match next {
                Some((i, report)) => {
                    on_done(&report);
                    results[i] = Some(report);
                }
                None => break,
            },
            () = &mut cancel => {
                interrupted = true;
                break;
            }
        }
    }
    let mut reports: Vec<CellReport> = results.into_iter().flatten().collect();
    super::dual_track::attach(&mut reports, &project.scenarios);
    (reports, interrupted)
}

/// A gateway session for the cell's scenario under `faults`, and the plain request that
/// points the agent at it (the session lives as long as the handle).
pub(super) fn open(
    gateway: &Gateway,
    project: &ValidProject,
    cell: &Cell,
    faults: FaultPlan,
) -> (crate::gateway::SessionHandle, Request) {
    let scenario = &project.scenarios[cell.scenario];
    let session = gateway.open_session(SessionSpec {
        fixtures: scenario.tools.clone(),
        schema_drift: scenario.schema_drift.clone(),
        faults,
    });
    let request = Request {
        // Opaque: the cell id would tell the agent its quadrant and fault.
        run_id: format!("run-{}", session.session().id),
        skill: project.contracts[cell.contract].skill.clone(),
        input: scenario.input.clone(),
        tools_url: session.tools_url(),
        mcp_url: session.mcp_url(),
        revise: None,
        intervention: None,
    };
    (session, request)
}

async fn run_cell(
    project: &ValidProject,
    target: &Target,
    gateway: &Gateway,
    cell: &Cell,
    options: &RunOptions,
) -> CellReport {
    let contract = &project.contracts[cell.contract];
    let scenario = &project.scenarios[cell.scenario];
    let start = Instant::now();
    let mut worst: Option<CellReport> = None;
    for attempt in 0..options.repeat.max(1) {
        let faults = match cell.fault {
            Some(kind) => FaultPlan::on(&cell.removed_tools, Fault::new(kind)),
            None => FaultPlan::none(),
        };
        let (session, request) = open(gateway, project, cell, faults);
        let invocation = invoke(target, &request, options.limits).await;
        let recorded = session.recorded();
        drop(session);
        let (trace, truncated) = (recorded.events, recorded.truncated);
        let mut input = CellInput {
            contract,
            scenario,
            fault: cell.fault,
            removed: &cell.removed_tools,
            invocation: &invocation,
            trace: &trace,
            truncated: truncated.as_ref(),
            lexicon: &options.lexicon,
            judged_refusal: None,
        };
        let mut refusal_log = None;
        if let (Some(judge), Invocation::Responded { response, .. }) =
            (&options.refusal_judge, &invocation)
            && needs_judge(&input)
        {
            let answer = crate::checks::citations::output_text(&response.output);
            let (judged, log) =
                crate::checks::refusal_judge::ask(judge, &scenario.input, &answer, &options.cache)
                    .await;
            input.judged_refusal = Some(judged);
            refusal_log = Some(log);
        }
        let mut outcome = evaluate(&input);
        let mut quality = None;
        if let (Some((policy, seed, ledger)), Invocation::Responded { response, .. }) =
            (&options.quality, &invocation)
            && outcome.verdict == Verdict::Pass
            && outcome.behavior == Behavior::Answered
            && cell.fault.is_none()
        {
            let passed = contract.io.output_assertions.len()
                - outcome
                    .findings
                    .iter()
                    .filter(|f| f.check == CheckId::OutputAssertion)
                    .count();
            let candidate = crate::quality::Candidate {
                id: cell.id.clone(),
                input: scenario.input.clone(),
                output: crate::checks::citations::output_text(&response.output),
                facts: scenario.facts.clone(),
                forbidden: scenario.forbidden.clone(),
                evidence: input.tool_evidence(),
                assertions: Some((passed, contract.io.output_assertions.len())),
            };
            // A rewrite re-invokes the agent, tools available, with the judges' reasons.
            let rewrite = |feedback: String| -> std::pin::Pin<
                Box<dyn std::future::Future<Output = Option<String>> + Send + '_>,
            > {
                let previous = candidate.output.clone();
                Box::pin(async move {
                    let (_session, mut request) = open(gateway, project, cell, FaultPlan::none());
                    request.revise = Some((previous, feedback));
                    match invoke(target, &request, options.limits).await {
                        Invocation::Responded { response, .. }
                            if response.status.as_deref() != Some("error") =>
                        {
                            Some(crate::checks::citations::output_text(&response.output))
                        }
                        _ => None,
                    }
                })
            };
            let q = crate::quality::gate(policy, ledger, *seed, &candidate, Some(&rewrite)).await;
            if q.state.fails() {
                outcome.verdict = Verdict::QualityFail;
                outcome.findings.insert(
                    0,
                    crate::report::Finding::error(CheckId::QualityGate, q.explanation.clone()),
                );
            }
            quality = Some(q);
        }
        let (output, stderr, self_reported, citations) = match &invocation {
            Invocation::Responded {
                response, stderr, ..
            } => (
                response.output.clone(),
                stderr.clone(),
                response.trace.clone(),
                response.citations.clone(),
            ),
            Invocation::HardInterrupt { stderr, .. } | Invocation::TimedOut { stderr, .. } => {
                (Value::Null, stderr.clone(), Vec::new(), Vec::new())
            }
            Invocation::Failed { .. } => (Value::Null, String::new(), Vec::new(), Vec::new()),
        };
        let report = CellReport::new(
            cell.id.clone(),
            contract.skill.clone(),
            outcome.behavior,
            outcome.verdict,
            outcome.findings,
        )
        .at(cell.index)
        .placed(
            scenario.id.clone(),
            cell.quadrant,
            cell.fault,
            cell.removed_tools.clone(),
        )
        .of_contract(contract.source.display().to_string(), contract.source_line)
        .versioned(contract.version.clone(), Some(scenario.digest.clone()))
        .at_risk(contract.risk_level)
        .with_output(output)
        .with_trace(trace)
        .with_trace_truncated(truncated)
        .with_claims(self_reported, citations)
        .with_stderr(stderr)
        .with_attempts(attempt + 1)
        .with_quality(quality)
        .with_refusal_judge(refusal_log);
        let worse = worst.as_ref().is_none_or(|w| report.verdict > w.verdict);
        if worse {
            worst = Some(report);
        }
        // pass^k: one failing attempt decides the cell; an error stops it too.
        if worst.as_ref().is_some_and(|w| w.verdict != Verdict::Pass) {
            break;
        }
    }
    let mut report = worst.unwrap_or_else(|| unreachable!("at least one attempt"));
    if let Target::Openai {
        intervene: true, ..
    } = target
        && cell.fault.is_none()
        && report
            .findings
            .iter()
            .any(|f| f.check == CheckId::MustCallTools)
    {
        report.intervention =
            Some(super::intervene::ladder(project, target, gateway, cell, options).await);
    }
    report.attempts = options.repeat.max(1);
    report.duration_ms = start.elapsed().as_millis() as u64;
    if report.behavior == Behavior::NotRun {
        report.output = Value::Null;
    }
    report
}
