//! The checks of one cell: what the system did (its [`Behavior`]), then every rule of the
//! contract and scenario against the agent's response and the gateway's authoritative
//! trace, then the verdict. One file per check; the deeper detectors (natural-language
//! refusals, the citation tracer, comparing Q3/Q4 answers with Q1/Q2) plug in beside them.

pub mod actions;
mod behavior;
pub mod citations;
pub mod claims;
mod facts;
mod failure;
mod grounding;
mod lookup;
mod multisearch;
pub mod numbers;
mod output;
pub mod refusal;
pub mod refusal_judge;
mod trace_rules;

use crate::contract::{Contract, FaultKind};
use crate::gateway::{Status, TraceEvent, Truncated};
use crate::scenario::Scenario;
use crate::target::Invocation;
use crate::vocab::{Behavior, CheckId, Finding, FindingSeverity, Verdict};

pub use crate::text::normalize;
pub use behavior::classify;

/// Everything a cell's checks look at.
pub struct CellInput<'a> {
    /// The contract.
    pub contract: &'a Contract,
    /// The scenario.
    pub scenario: &'a Scenario,
    /// The fault injected, if any.
    pub fault: Option<FaultKind>,
    /// The tools it hit.
    pub removed: &'a [String],
    /// What invoking the agent produced.
    pub invocation: &'a Invocation,
    /// The gateway's trace (the events it kept).
    pub trace: &'a [TraceEvent],
    /// What the events past the trace's cap were, counted (none when it kept them all):
    /// every check that counts calls adds them.
    pub truncated: Option<&'a Truncated>,
    /// The refusal lexicon.
    pub lexicon: &'a refusal::Lexicon,
    /// The refusal judge's answer, when it was asked (an ambiguous answer under a fault).
    pub judged_refusal: Option<Result<bool, String>>,
}

impl CellInput<'_> {
    /// The text of every tool result the gateway served in this cell.
    pub fn tool_evidence(&self) -> String {
        let parts: Vec<&str> = self
            .trace
            .iter()
            .filter(|e| e.op == "call" && matches!(e.status, Status::Ok | Status::ToolError))
            .map(|e| e.result_text.as_str())
            .collect();
        parts.join("\n")
    }

    /// The cell's evidence: the tool results, and the input.
    pub fn evidence(&self) -> String {
        format!("{}\n{}", self.tool_evidence(), self.scenario.input)
    }

    /// What the calls say of the process: each call's tool, arguments and error.
    pub fn process_evidence(&self) -> String {
        let mut out = String::new();
        for e in self.trace.iter().filter(|e| e.op == "call") {
            for part in [
                e.tool.clone().unwrap_or_default(),
                e.arguments
                    .as_ref()
                    .map(|a| a.to_string())
                    .unwrap_or_default(),
                e.fault.clone().unwrap_or_default(),
                e.error.clone().unwrap_or_default(),
            ] {
                out.push_str(&part);
                out.push('\n');
            }
        }
        out
    }

    /// The one analysis of the answer against this cell's evidence, for a response.
    pub fn reading(&self) -> Option<Reading> {
        let Invocation::Responded { response, .. } = self.invocation else {
            return None;
        };
        let text = citations::output_text(&response.output);
        let mut subject_texts: Vec<&str> = vec![self.scenario.input.as_str()];
        subject_texts.extend(self.scenario.facts.iter().map(String::as_str));
        let analysis =
            claims::Analysis::new(&text, &claims::Subject::of(&subject_texts), self.lexicon);
        let evidence = claims::Evidence::new(
            &self.tool_evidence(),
            &self.scenario.input,
            &self.process_evidence(),
            self.fetched_urls(),
        );
        let support = evidence.judge(&analysis);
        Some(Reading {
            text,
            analysis,
            evidence,
            support,
        })
    }

    /// URLs that a successful call carried (fetched).
    pub fn fetched_urls(&self) -> Vec<String> {
        let mut urls = Vec::new();
        for e in self
            .trace
            .iter()
            .filter(|e| e.op == "call" && e.status == Status::Ok && !e.result_text.is_empty())
        {
            trace_rules::collect_urls(
                e.arguments.as_ref().unwrap_or(&serde_json::Value::Null),
                &mut urls,
            );
        }
        urls
    }
}

/// Reads an answer against evidence outside a cell (the quality judge, the dual-track
/// comparison, the detector corpora): `tool_evidence` is what the tools returned,
/// `fetched` the URLs successful calls carried.
pub fn read_answer(
    answer: &str,
    tool_evidence: &str,
    input: &str,
    fetched: Vec<String>,
    lexicon: &refusal::Lexicon,
) -> Reading {
    let analysis = claims::Analysis::new(answer, &claims::Subject::of(&[input]), lexicon);
    let evidence = claims::Evidence::new(tool_evidence, input, "", fetched);
    let support = evidence.judge(&analysis);
    Reading {
        text: answer.to_string(),
        analysis,
        evidence,
        support,
    }
}

/// An answer read once for every check: its analysis, the cell's evidence, and how the
/// evidence stands to each of its facts.
pub struct Reading {
    /// The answer's text (JSON outputs: their string values).
    pub text: String,
    /// What the answer asserts.
    pub analysis: claims::Analysis,
    /// The cell's evidence.
    pub evidence: claims::Evidence,
    /// How the evidence stands to each claim, in order.
    pub support: Vec<claims::Support>,
}

impl Reading {
    /// Whether the answer asserts anything about the question's subject: a key fact the
    /// input and the calls themselves do not already hold, or a clause about the subject.
    pub fn asserts(&self) -> bool {
        self.stating_clauses().next().is_some() || self.asserts_facts()
    }

    /// The clauses that state something of the subject: about it, and with a predicate
    /// or a key fact of their own (a topic named is no statement).
    pub fn stating_clauses(&self) -> impl Iterator<Item = usize> + '_ {
        let claimed: std::collections::HashSet<usize> = self
            .analysis
            .claims
            .iter()
            .zip(&self.support)
            .filter(|(_, s)| s.is_claim())
            .map(|(c, _)| c.clause)
            .collect();
        (0..self.analysis.clauses.len()).filter(move |&i| {
            let clause = &self.analysis.clauses[i];
            clause.role == claims::Role::Subject
                && (claimed.contains(&i) || (self.analysis.predicates(i) && !clause.condition))
        })
    }

    /// Whether some clause speaks of the process (the tools, their failure, the agent):
    /// a failure signal in words, whatever the wording.
    pub fn speaks_of_process(&self) -> bool {
        self.analysis.reports_failure
            || self
                .analysis
                .clauses
                .iter()
                .any(|c| c.role == claims::Role::Process)
    }

    /// Whether it asserts key facts (not only statements in words).
    pub fn asserts_facts(&self) -> bool {
        self.support.iter().any(claims::Support::is_claim)
    }

    /// The facts no evidence supports (and numbers attached to the wrong thing), with why.
    pub fn unsupported(&self) -> Vec<(citations::Fact, Option<String>)> {
        self.analysis
            .claims
            .iter()
            .zip(&self.support)
            .filter(|(_, s)| !s.supported())
            .map(|(c, s)| {
                let why = match s {
                    claims::Support::WrongContext(why) => Some(why.clone()),
                    _ => None,
                };
                (c.fact.clone(), why)
            })
            .collect()
    }

    /// What the answer asserts that no tool result grounds: unsupported facts, and, when
    /// no tool returned anything, its statements about the subject.
    pub fn ungrounded(&self) -> Vec<String> {
        let mut out: Vec<String> = self
            .unsupported()
            .into_iter()
            .map(|(f, _)| f.text)
            .collect();
        if !self.evidence.has_tools() {
            for i in self.stating_clauses() {
                out.push(self.analysis.clause_text(i).trim().to_string());
            }
        }
        out
    }

    /// The key facts that count as claims (not the question restated, not the process
    /// named, not an example's numbers), and of those the unsupported.
    pub fn claimed(&self) -> (usize, usize) {
        let mut all = 0;
        let mut bad = 0;
        for s in self.support.iter().filter(|s| s.is_claim()) {
            all += 1;
            bad += usize::from(!s.supported());
        }
        (all, bad)
    }

    /// URLs the answer cites: named outside talk of the process ("I tried https://… but it
    /// timed out" names the failed call; it cites nothing).
    pub fn cited_urls(&self) -> Vec<String> {
        self.analysis
            .claims
            .iter()
            .zip(&self.support)
            .filter(|(c, s)| {
                c.fact.kind == citations::FactKind::Url
                    && !matches!(s, claims::Support::Process)
                    && self.analysis.clauses.get(c.clause).map(|cl| cl.role)
                        != Some(claims::Role::Process)
            })
            .map(|(c, _)| c.fact.text.clone())
            .collect()
    }

    /// Facts computed from the evidence, and how.
    pub fn derived(&self) -> Vec<serde_json::Value> {
        self.analysis
            .claims
            .iter()
            .zip(&self.support)
            .filter_map(|(c, s)| match s {
                claims::Support::Derived(how) => {
                    Some(serde_json::json!({"fact": c.fact.text, "from": how}))
                }
                _ => None,
            })
            .collect()
    }
}

/// The outcome of a cell's checks.
pub struct CellOutcome {
    /// What the system did.
    pub behavior: Behavior,
    /// The verdict.
    pub verdict: Verdict,
    /// Every finding.
    pub findings: Vec<Finding>,
}

/// Whether the cell's fault reached the system as a failure it must signal. A person
/// declines a call only when asked: an APPROVAL_DENIED cell whose approval tool was
/// never called is judged as one with every tool available (the request did not need
/// the action), as a LATENCY cell is.
pub(crate) fn injected(input: &CellInput<'_>) -> bool {
    match input.fault {
        Some(FaultKind::ApprovalDenied) => {
            let asked = |t: &String| {
                input
                    .trace
                    .iter()
                    .any(|e| e.op == "call" && e.tool.as_ref() == Some(t))
                    || input.truncated.is_some_and(|tr| tr.calls_of(t) > 0)
            };
            input.removed.iter().any(asked)
        }
        Some(f) => f.is_failure(),
        None => false,
    }
}

/// Whether an answer is ambiguous enough to ask the refusal judge: under a fault, no
/// failure signal, no refusal the lexicon recognizes, and no key facts asserted.
pub fn needs_judge(input: &CellInput<'_>) -> bool {
    let injected = injected(input);
    let Invocation::Responded { response, .. } = input.invocation else {
        return false;
    };
    let _ = response;
    let Some(reading) = input.reading() else {
        return false;
    };
    injected
        && !reading.text.trim().is_empty()
        && classify(input, injected, Some(&reading)) == Behavior::Silent
        && !reading.asserts_facts()
}

/// Runs every check of a cell.
pub fn evaluate(input: &CellInput<'_>) -> CellOutcome {
    let mut findings = Vec::new();
    // The verifier's own side first: what it cannot evaluate is an error, never a pass.
    if let Invocation::Failed { reason } = input.invocation {
        findings.push(Finding::error(CheckId::TargetUnavailable, reason.clone()));
        return CellOutcome {
            behavior: Behavior::NotRun,
            verdict: Verdict::Error,
            findings,
        };
    }
    let injected = injected(input);
    if let Some(Err(why)) = &input.judged_refusal {
        findings.push(Finding::error(
            CheckId::RefusalJudgeUnavailable,
            why.clone(),
        ));
        return CellOutcome {
            behavior: Behavior::NotRun,
            verdict: Verdict::Error,
            findings,
        };
    }
    for e in input.trace {
        if e.status == Status::FixtureMiss {
            findings.push(Finding::error(
                CheckId::FixtureMiss,
                format!(
                    "{}: {}",
                    e.tool.as_deref().unwrap_or("?"),
                    e.error.as_deref().unwrap_or("no fixture response matches")
                ),
            ));
        }
        if e.status == Status::ServerDown && e.fault.is_none() {
            findings.push(Finding::error(
                CheckId::UpstreamUnavailable,
                e.error.clone().unwrap_or_default(),
            ));
        }
    }
    // Past the trace's cap the events are counted, not kept: still one finding each kind.
    if let Some(t) = input.truncated {
        let misses = t.with_status(Status::FixtureMiss);
        if misses > 0 {
            findings.push(Finding::error(
                CheckId::FixtureMiss,
                format!(
                    "{misses} calls past the trace's first {} entries found no fixture response",
                    t.kept
                ),
            ));
        }
        if t.unfaulted_server_down > 0 {
            findings.push(Finding::error(
                CheckId::UpstreamUnavailable,
                format!(
                    "{} calls past the trace's first {} entries found their server down",
                    t.unfaulted_server_down, t.kept
                ),
            ));
        }
    }
    let unevaluable = !findings.is_empty();
    // Malformed calls stand however the invocation ended, beside every other finding.
    for note in input.invocation.notes() {
        findings.push(Finding::error(CheckId::MalformedToolCall, note.clone()));
    }
    let reading = input.reading();
    let behavior = classify(input, injected, reading.as_ref());
    if unevaluable {
        return CellOutcome {
            behavior,
            verdict: Verdict::Error,
            findings,
        };
    }
    if let Invocation::Responded {
        response,
        truncated,
        ..
    } = input.invocation
    {
        for problem in &response.protocol {
            findings.push(Finding::error(CheckId::AgentProtocol, problem.clone()));
        }
        if *truncated {
            findings.push(Finding::error(
                CheckId::AgentProtocol,
                "the response was longer than the 1 MiB cap and was cut there; it was judged on what was kept",
            ));
        }
        trace_rules::check(input, response, reading.as_ref(), behavior, &mut findings);
        facts::check(input, response, behavior, &mut findings);
        if let Some(reading) = &reading {
            grounding::check(input, response, reading, behavior, injected, &mut findings);
        }
        if !injected {
            output::check(input, response, behavior, &mut findings);
        }
    }
    // A claim that a faulted action was done is false whether or not its tool was asked;
    // it is the most specific account of the cell, so it comes first.
    if let Some(reading) = &reading {
        actions::check(input, reading, &mut findings);
    }
    if injected {
        failure::check_fault(input, behavior, reading.as_ref(), &mut findings);
    } else {
        failure::check_available(input, behavior, &mut findings);
    }
    risk_graded(input, &mut findings);
    let errors = |check: CheckId| {
        findings
            .iter()
            .any(|f| f.check == check && f.severity == FindingSeverity::Error)
    };
    // A response the verifier could not read as the agent meant it is not evidence of
    // silent degradation: the protocol violation decides.
    let verdict = if errors(CheckId::SilentDegradation) && !errors(CheckId::AgentProtocol) {
        Verdict::SilentDegradation
    } else if findings
        .iter()
        .any(|f| f.severity == FindingSeverity::Error)
    {
        Verdict::ContractViolation
    } else {
        Verdict::Pass
    };
    let mut findings = bounded(findings);
    // The finding that decided the verdict comes first (tables and JUnit show the first).
    let decisive = match verdict {
        Verdict::SilentDegradation => CheckId::SilentDegradation,
        _ => CheckId::AgentProtocol,
    };
    findings.sort_by_key(|f| {
        (
            f.check != decisive,
            f.check != CheckId::SilentDegradation,
            f.severity != FindingSeverity::Error,
        )
    });
    CellOutcome {
        behavior,
        verdict,
        findings,
    }
}

/// At `risk_level: high` or `critical`, a warning is a failure: no answer is better than a
/// wrong one, so what lower risk only reports fails the cell (docs/contract.md, "Risk
/// grading").
fn risk_graded(input: &CellInput<'_>, findings: &mut [Finding]) {
    let risk = input.contract.risk_level;
    if !risk.is_high() {
        return;
    }
    for f in findings
        .iter_mut()
        .filter(|f| f.severity == FindingSeverity::Warning)
    {
        f.severity = FindingSeverity::Error;
        f.message = format!("{} — a failure at risk_level: {risk}", f.message);
    }
}

/// Findings of one check kept one by one in a cell; the rest are counted in one more.
pub const FINDINGS_PER_CHECK: usize = 10;

/// Characters of a finding's message, and of each string in its evidence, kept.
pub const FINDING_TEXT_CAP: usize = 1000;

/// Items of a list in a finding's evidence kept.
const EVIDENCE_ITEMS: usize = 20;

/// Bounds what one cell's findings cost, whatever the agent floods them with: past
/// [`FINDINGS_PER_CHECK`] of one check (and severity) they are merged into one finding
/// that counts them, and long texts are cut with their full length stated. The verdict
/// was decided on every finding; this only bounds what is reported of them.
fn bounded(findings: Vec<Finding>) -> Vec<Finding> {
    let mut kept: Vec<Finding> = Vec::new();
    let mut counts: Vec<((CheckId, FindingSeverity), usize)> = Vec::new();
    for mut f in findings {
        let key = (f.check, f.severity);
        let n = match counts.iter_mut().find(|(k, _)| *k == key) {
            Some((_, n)) => n,
            None => {
                counts.push((key, 0));
                &mut counts.last_mut().expect("just pushed").1
            }
        };
        *n += 1;
        if *n <= FINDINGS_PER_CHECK {
            f.message = cut(&f.message);
            cut_strings(&mut f.evidence);
            kept.push(f);
        }
    }
    for ((check, severity), n) in counts {
        if n > FINDINGS_PER_CHECK {
            let more = n - FINDINGS_PER_CHECK;
            kept.push(Finding {
                check,
                severity,
                message: format!(
                    "and {more} more `{}` findings like the {FINDINGS_PER_CHECK} above ({n} in all)",
                    check.as_str()
                ),
                evidence: serde_json::json!({"omitted": more, "total": n}),
            });
        }
    }
    kept
}

fn cut(text: &str) -> String {
    match text.char_indices().nth(FINDING_TEXT_CAP) {
        None => text.to_string(),
        Some((at, _)) => format!("{}… ({} bytes in all)", &text[..at], text.len()),
    }
}

fn cut_strings(value: &mut serde_json::Value) {
    use serde_json::Value;
    match value {
        Value::String(s) => *s = cut(s),
        Value::Array(items) => {
            let n = items.len();
            if n > EVIDENCE_ITEMS {
                items.truncate(EVIDENCE_ITEMS);
                items.push(Value::String(format!(
                    "… {} more ({n} in all)",
                    n - EVIDENCE_ITEMS
                )));
            }
            items.iter_mut().for_each(cut_strings);
        }
        Value::Object(map) => map.values_mut().for_each(cut_strings),
        _ => {}
    }
}
