//! The report's data model, `fibon.report/v1`: what every command writes, and what `merge`
//! reads back — one typed shape both ways, so a report round-trips unchanged.

use serde::{Deserialize, Deserializer, Serialize};
use serde_json::Value;

pub use crate::contract::RiskLevel;
use crate::exit_code;
use crate::gateway::{TraceEvent, Truncated};
use crate::quality::QualityResult;
use crate::target::{Citation, SelfReportedCall};
pub use crate::vocab::{Behavior, CheckId, FaultKind, Finding, FindingSeverity, Quadrant, Verdict};

/// The schema of report.json.
pub const SCHEMA: &str = "fibon.report/v1";

/// One cell's result.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct CellReport {
    /// The cell id.
    pub id: String,
    /// Its position in the whole plan (or the history): shard reports merge in this order.
    pub index: usize,
    /// The Skill.
    pub skill: String,
    /// The scenario id.
    pub scenario: String,
    /// `Q1`..`Q4`; none for a cell outside the matrix (sampled, gated, unreadable).
    #[serde(default, with = "quadrant_name")]
    pub quadrant: Option<Quadrant>,
    /// The fault injected.
    pub fault: Option<String>,
    /// The tools it hit.
    pub removed_tools: Vec<String>,
    /// What the system did.
    pub behavior: Behavior,
    /// The verdict.
    pub verdict: Verdict,
    /// Every finding.
    pub findings: Vec<Finding>,
    /// The agent's output.
    pub output: Value,
    /// The gateway's authoritative trace.
    pub trace: Vec<TraceEvent>,
    /// What the trace's events past its cap were (counted, not kept), when there were any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trace_truncated: Option<Truncated>,
    /// What the agent said it called.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub self_reported_trace: Vec<SelfReportedCall>,
    /// What the agent cited.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub citations: Vec<Citation>,
    /// The tail of the agent's stderr.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub stderr: String,
    /// Runs of the cell (`--repeat`); the verdict is the worst.
    pub attempts: u32,
    /// Wall time of the cell, all attempts.
    pub duration_ms: u64,
    /// The contract file.
    pub contract: String,
    /// The line of the skill's name in it.
    pub contract_line: usize,
    /// The contract's `version`, when it declares one: a `--baseline` compares it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub contract_version: Option<String>,
    /// The scenario's version (a digest of its file): a `--baseline` compares it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scenario_version: Option<String>,
    /// The contract's `risk_level` (none for a cell no contract covers).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub risk_level: Option<RiskLevel>,
    /// The Candidate Quality Result, when the quality gate ran.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub quality: Option<QualityResult>,
    /// How the refusal judge was asked, when it was (`checks.refusal_judge`): the response
    /// format and any fallback, every attempt, the cache.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub refusal_judge: Option<crate::chat::structured::AskLog>,
    /// openai targets with `intervene: true`, on a `must_call_tools` violation: where the
    /// model complied on the intervention ladder.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub intervention: Option<InterventionResult>,
}

/// The id of [`CellReport::unusable_history_line`]'s cell: `line-N`, or `FILE:line-N`.
pub fn unusable_history_id(file: Option<&str>, line: usize) -> String {
    match file {
        Some(file) => format!("{file}:line-{line}"),
        None => format!("line-{line}"),
    }
}

/// `quadrant` as report.json has always written it: `"Q1"`..`"Q4"`, and `""` for a cell
/// without one (JUnit class names and shard reports rely on the string).
mod quadrant_name {
    use serde::de::Error;
    use serde::{Deserialize, Deserializer, Serializer};

    use super::Quadrant;

    pub(super) fn serialize<S: Serializer>(q: &Option<Quadrant>, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(q.map_or("", Quadrant::as_str))
    }

    pub(super) fn deserialize<'de, D: Deserializer<'de>>(
        d: D,
    ) -> Result<Option<Quadrant>, D::Error> {
        let name = std::borrow::Cow::<str>::deserialize(d)?;
        if name.is_empty() {
            return Ok(None);
        }
        Quadrant::ALL
            .into_iter()
            .find(|q| q.as_str() == name)
            .map(Some)
            .ok_or_else(|| D::Error::unknown_variant(&name, &["Q1", "Q2", "Q3", "Q4", ""]))
    }
}

impl CellReport {
    /// A cell with its outcome and nothing else yet: outside the matrix (no scenario,
    /// quadrant or fault), no output, trace or contract, one attempt. The builder methods
    /// below add what each kind of cell has.
    pub fn new(
        id: String,
        skill: String,
        behavior: Behavior,
        verdict: Verdict,
        findings: Vec<Finding>,
    ) -> CellReport {
        CellReport {
            id,
            index: 0,
            skill,
            scenario: String::new(),
            quadrant: None,
            fault: None,
            removed_tools: Vec::new(),
            behavior,
            verdict,
            findings,
            output: Value::Null,
            trace: Vec::new(),
            trace_truncated: None,
            self_reported_trace: Vec::new(),
            citations: Vec::new(),
            stderr: String::new(),
            attempts: 1,
            duration_ms: 0,
            contract: String::new(),
            contract_line: 0,
            contract_version: None,
            scenario_version: None,
            risk_level: None,
            quality: None,
            refusal_judge: None,
            intervention: None,
        }
    }

    /// A cell that could not be evaluated at all (a line that does not parse, a recording
    /// no contract covers): verdict `error`, behaviour `not_run`, one finding.
    pub fn not_run(id: String, skill: String, finding: Finding) -> CellReport {
        CellReport::new(id, skill, Behavior::NotRun, Verdict::Error, vec![finding])
    }

    /// An input line that cannot be used (a history line, a candidate): an `error` cell
    /// `line-N` whose finding of `check` names the line.
    pub fn unusable_line(check: CheckId, line: usize, reason: &str) -> CellReport {
        CellReport::not_run(
            format!("line-{line}"),
            String::new(),
            Finding::error(check, format!("line {line}: {reason}")),
        )
    }

    /// A history line that cannot be used, as [`CellReport::unusable_line`] when the
    /// command reads one history; when it reads several, `file` is the one the line is in,
    /// and the id and finding name it (`FILE:line-N`): two files' lines never share an id.
    pub fn unusable_history_line(file: Option<&str>, line: usize, reason: &str) -> CellReport {
        let Some(file) = file else {
            return CellReport::unusable_line(CheckId::HistoryParse, line, reason);
        };
        CellReport::not_run(
            unusable_history_id(Some(file), line),
            String::new(),
            Finding::error(
                CheckId::HistoryParse,
                format!("{file}, line {line}: {reason}"),
            ),
        )
    }

    /// A recorded conversation whose skill no contract has: an `error` cell naming it
    /// (fail closed: there is nothing to check it, or be stable, against).
    pub fn unknown_skill(conv: &crate::history::Conversation) -> CellReport {
        CellReport::not_run(
            conv.id.clone(),
            conv.skill.clone(),
            Finding::error(
                CheckId::HistoryParse,
                format!(
                    "conversation `{}`: no contract for skill `{}`",
                    conv.id, conv.skill
                ),
            ),
        )
    }

    /// Its place in the matrix: the scenario, the quadrant, and the fault on which tools.
    pub fn placed(
        mut self,
        scenario: String,
        quadrant: Quadrant,
        fault: Option<FaultKind>,
        removed_tools: Vec<String>,
    ) -> CellReport {
        self.scenario = scenario;
        self.quadrant = Some(quadrant);
        self.fault = fault.map(|f| f.as_str().to_string());
        self.removed_tools = removed_tools;
        self
    }

    /// Its position in the plan or the history.
    pub fn at(mut self, index: usize) -> CellReport {
        self.index = index;
        self
    }

    /// The contract it was checked against: the file and the line of the skill's name.
    pub fn of_contract(mut self, contract: String, line: usize) -> CellReport {
        self.contract = contract;
        self.contract_line = line;
        self
    }

    /// The versions of its contract and scenario, when they have them.
    pub fn versioned(mut self, contract: Option<String>, scenario: Option<String>) -> CellReport {
        self.contract_version = contract;
        self.scenario_version = scenario;
        self
    }

    /// The risk level of its contract.
    pub fn at_risk(mut self, risk: RiskLevel) -> CellReport {
        self.risk_level = Some(risk);
        self
    }

    /// With the agent's output.
    pub fn with_output(mut self, output: Value) -> CellReport {
        self.output = output;
        self
    }

    /// The gateway's (or the recording's) trace.
    pub fn with_trace(mut self, trace: Vec<TraceEvent>) -> CellReport {
        self.trace = trace;
        self
    }

    /// The note of the trace's events past its cap.
    pub fn with_trace_truncated(mut self, truncated: Option<Truncated>) -> CellReport {
        self.trace_truncated = truncated;
        self
    }

    /// What the agent said: the calls it reports and what it cites.
    pub fn with_claims(
        mut self,
        self_reported_trace: Vec<SelfReportedCall>,
        citations: Vec<Citation>,
    ) -> CellReport {
        self.self_reported_trace = self_reported_trace;
        self.citations = citations;
        self
    }

    /// The tail of the agent's stderr.
    pub fn with_stderr(mut self, stderr: String) -> CellReport {
        self.stderr = stderr;
        self
    }

    /// The attempt it stopped at (`--repeat`).
    pub fn with_attempts(mut self, attempts: u32) -> CellReport {
        self.attempts = attempts;
        self
    }

    /// The quality gate's result, when it ran.
    pub fn with_quality(mut self, quality: Option<QualityResult>) -> CellReport {
        self.quality = quality;
        self
    }

    /// How the refusal judge was asked, when it was.
    pub fn with_refusal_judge(
        mut self,
        log: Option<crate::chat::structured::AskLog>,
    ) -> CellReport {
        self.refusal_judge = log;
        self
    }
}

/// Counts by verdict.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct Summary {
    /// Cells.
    pub cells: usize,
    /// Passed.
    pub pass: usize,
    /// Silent degradation.
    pub silent_degradation: usize,
    /// Contract violations.
    pub contract_violation: usize,
    /// Quality gate failures.
    pub quality_fail: usize,
    /// Not evaluable.
    pub error: usize,
    /// Skipped.
    pub skipped: usize,
}

impl Summary {
    /// Counts the cells.
    pub fn of(cells: &[CellReport]) -> Summary {
        let mut s = Summary::default();
        for c in cells {
            s.add(c.verdict);
        }
        s
    }

    /// Counts one more cell (streamed cells are counted as they come).
    pub fn add(&mut self, verdict: Verdict) {
        self.cells += 1;
        *match verdict {
            Verdict::Pass => &mut self.pass,
            Verdict::SilentDegradation => &mut self.silent_degradation,
            Verdict::ContractViolation => &mut self.contract_violation,
            Verdict::QualityFail => &mut self.quality_fail,
            Verdict::Error => &mut self.error,
            Verdict::Skipped => &mut self.skipped,
        } += 1;
    }

    /// Failed cells: what JUnit calls failures (errors are counted apart).
    pub fn failures(&self) -> usize {
        self.silent_degradation + self.contract_violation + self.quality_fail
    }

    /// The exit code these counts imply (docs/exit-codes.md, "When several apply").
    pub fn exit_code(&self) -> i32 {
        let mut codes = Vec::new();
        if self.cells == 0 {
            codes.push(exit_code::NO_CELLS);
        }
        if self.silent_degradation > 0 {
            codes.push(exit_code::SILENT_DEGRADATION);
        }
        if self.contract_violation > 0 {
            codes.push(exit_code::CONTRACT_VIOLATION);
        }
        if self.quality_fail > 0 {
            codes.push(exit_code::QUALITY_GATE_FAILED);
        }
        if self.error > 0 {
            codes.push(exit_code::UNAVAILABLE);
        }
        exit_code::combine(codes)
    }
}

/// `report.json`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Report {
    /// `fibon.report/v1`.
    pub schema: String,
    /// fibon-verify's version.
    pub version: String,
    /// When the run started (RFC 3339).
    #[serde(default)]
    pub started_at: String,
    /// Wall time.
    #[serde(default)]
    pub duration_ms: u64,
    /// Whether the run was interrupted (Ctrl-C): the cells are those that finished.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub interrupted: bool,
    /// `K/N` when sharded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shard: Option<String>,
    /// `merge` only: each input's `shard`, or `whole`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub merged_from: Option<Vec<String>>,
    /// Every cell, in plan order.
    pub cells: Vec<CellReport>,
    /// Counts.
    #[serde(default)]
    pub summary: Summary,
    /// The quality gate's judge calls and their cost, when it ran.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub quality_budget: Option<Value>,
    /// Reproducibility sampling: the selection and the stability of each Skill.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sampling: Option<Value>,
    /// Per-model intervention rates (openai targets with `intervene: true`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub intervention: Option<InterventionSummary>,
    /// `--baseline`: this run's cells compared with a previous report's, by cell id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub baseline: Option<super::baseline::Section>,
    /// The exit code.
    #[serde(default)]
    pub exit_code: i32,
}

impl Report {
    /// Builds a report; the summary and exit code follow from the cells.
    pub fn new(
        started_at: String,
        duration_ms: u64,
        cells: Vec<CellReport>,
        shard: Option<String>,
        interrupted: bool,
    ) -> Report {
        let summary = Summary::of(&cells);
        Report {
            schema: SCHEMA.to_string(),
            version: env!("CARGO_PKG_VERSION").to_string(),
            started_at,
            duration_ms,
            interrupted,
            shard,
            merged_from: None,
            cells,
            summary: Summary::default(),
            quality_budget: None,
            sampling: None,
            intervention: None,
            baseline: None,
            exit_code: 0,
        }
        .counted(summary)
    }

    /// With these counts (of cells streamed rather than held), and the exit code they
    /// imply: 130 when interrupted, whatever the cells.
    pub fn counted(mut self, summary: Summary) -> Report {
        self.exit_code = if self.interrupted {
            exit_code::INTERRUPTED
        } else {
            summary.exit_code()
        };
        self.summary = summary;
        self
    }

    /// Everything but the cells: what the sinks write around them.
    pub fn header(&self) -> Report {
        Report {
            schema: self.schema.clone(),
            version: self.version.clone(),
            started_at: self.started_at.clone(),
            duration_ms: self.duration_ms,
            interrupted: self.interrupted,
            shard: self.shard.clone(),
            merged_from: self.merged_from.clone(),
            cells: Vec::new(),
            summary: self.summary.clone(),
            quality_budget: self.quality_budget.clone(),
            sampling: self.sampling.clone(),
            intervention: self.intervention.clone(),
            baseline: self.baseline.clone(),
            exit_code: self.exit_code,
        }
    }
}

/// The intervention ladder run on a cell that violated `must_call_tools` (docs/background.md,
/// "The intervention ladder"). The cell's verdict is unchanged: it records what
/// it took to make the model comply.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct InterventionResult {
    /// The first stage at which the model complied (1 warning, 2 forced tool_choice,
    /// 3 degraded translation); `None` when it never did.
    pub complied_at: Option<u8>,
    /// The stages tried, in order (the ladder stops at the first compliance).
    pub stages: Vec<InterventionStage>,
}

/// One stage of the ladder.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct InterventionStage {
    /// 1, 2 or 3.
    pub stage: u8,
    /// `warning`, `forced_tool_choice` or `degraded_translation`.
    #[serde(deserialize_with = "stage_name")]
    pub name: StageName,
    /// Whether the model complied: the required tools were called (stage 3: the answer
    /// restates the result, with no fact findings), and the cell could be evaluated.
    pub complied: bool,
    /// The verdict of the re-run.
    pub verdict: Verdict,
    /// The findings that decided it.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub note: String,
}

/// A stage's name. An alias, not `&'static str` written out: serde would take that for a
/// string borrowed from the input (and require a `'static` one).
pub type StageName = &'static str;

/// A stage's name read back: one of the three the ladder records.
fn stage_name<'de, D: Deserializer<'de>>(d: D) -> Result<StageName, D::Error> {
    const NAMES: &[&str] = &["warning", "forced_tool_choice", "degraded_translation"];
    let name = String::deserialize(d)?;
    NAMES
        .iter()
        .find(|n| **n == name)
        .copied()
        .ok_or_else(|| serde::de::Error::unknown_variant(&name, NAMES))
}

/// Per-model intervention rates over a run (`report.json` → `intervention`).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct InterventionSummary {
    /// The model.
    pub model: String,
    /// Cells that violated `must_call_tools` and went up the ladder.
    pub violations: usize,
    /// How many complied first at stage 1, 2 and 3.
    pub complied_at_stage: [usize; 3],
    /// How many never complied.
    pub never: usize,
    /// Share complying at stage 1 (docs/background.md: the source text claims over 80% for top models).
    pub stage1_rate: f64,
}

impl InterventionSummary {
    /// The rates over the cells' ladder results.
    pub fn of(model: &str, cells: &[CellReport]) -> Option<InterventionSummary> {
        let results: Vec<&InterventionResult> = cells
            .iter()
            .filter_map(|c| c.intervention.as_ref())
            .collect();
        if results.is_empty() {
            return None;
        }
        let mut at = [0usize; 3];
        let mut never = 0;
        for r in &results {
            match r.complied_at {
                Some(s @ 1..=3) => at[s as usize - 1] += 1,
                _ => never += 1,
            }
        }
        Some(InterventionSummary {
            model: model.to_string(),
            violations: results.len(),
            complied_at_stage: at,
            never,
            stage1_rate: at[0] as f64 / results.len() as f64,
        })
    }

    /// One line for people.
    pub fn line(&self) -> String {
        let pct = |n: usize| format!("{n} ({:.0}%)", 100.0 * n as f64 / self.violations as f64);
        format!(
            "intervention ({}): {} must_call_tools violation(s); complied at stage 1 (warning): {}, stage 2 (forced tool_choice): {}, stage 3 (degraded translation): {}, never: {}",
            self.model,
            self.violations,
            pct(self.complied_at_stage[0]),
            pct(self.complied_at_stage[1]),
            pct(self.complied_at_stage[2]),
            pct(self.never)
        )
    }
}
