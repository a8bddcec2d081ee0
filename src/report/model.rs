//! The report's data model, serialized as `fibon.report/v1`.

use serde::Serialize;
use serde_json::Value;

use crate::exit_code;
use crate::gateway::TraceEvent;
use crate::target::{Citation, SelfReportedCall};
pub use crate::vocab::{Behavior, CheckId, Finding, FindingSeverity, Verdict};

/// One cell's result.
#[derive(Debug, Clone, Serialize)]
pub struct CellReport {
    /// The cell id.
    pub id: String,
    /// Its position in the whole plan (or the history): shard reports merge in this order.
    pub index: usize,
    /// The Skill.
    pub skill: String,
    /// The scenario id.
    pub scenario: String,
    /// `Q1`..`Q4`.
    pub quadrant: String,
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
    /// What the agent said it called.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub self_reported_trace: Vec<SelfReportedCall>,
    /// What the agent cited.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub citations: Vec<Citation>,
    /// The tail of the agent's stderr.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub stderr: String,
    /// Runs of the cell (`--repeat`); the verdict is the worst.
    pub attempts: u32,
    /// Wall time of the cell, all attempts.
    pub duration_ms: u64,
    /// The contract file.
    pub contract: String,
    /// The line of the skill's name in it.
    pub contract_line: usize,
    /// The Candidate Quality Result, when the quality gate ran.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub quality: Option<crate::quality::QualityResult>,
    /// openai targets with `intervene: true`, on a `must_call_tools` violation: where the
    /// model complied on the intervention ladder.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub intervention: Option<InterventionResult>,
}

/// Counts by verdict.
#[derive(Debug, Clone, Default, Serialize)]
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
        let count = |v: Verdict| cells.iter().filter(|c| c.verdict == v).count();
        Summary {
            cells: cells.len(),
            pass: count(Verdict::Pass),
            silent_degradation: count(Verdict::SilentDegradation),
            contract_violation: count(Verdict::ContractViolation),
            quality_fail: count(Verdict::QualityFail),
            error: count(Verdict::Error),
            skipped: count(Verdict::Skipped),
        }
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
#[derive(Debug, Clone, Serialize)]
pub struct Report {
    /// `fibon.report/v1`.
    pub schema: &'static str,
    /// fibon-verify's version.
    pub version: &'static str,
    /// When the run started (RFC 3339).
    pub started_at: String,
    /// Wall time.
    pub duration_ms: u64,
    /// Whether the run was interrupted (Ctrl-C): the cells are those that finished.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub interrupted: bool,
    /// `K/N` when sharded.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub shard: Option<String>,
    /// Every cell, in plan order.
    pub cells: Vec<CellReport>,
    /// Counts.
    pub summary: Summary,
    /// The quality gate's judge calls and their cost, when it ran.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub quality_budget: Option<Value>,
    /// Reproducibility sampling: the selection and the stability of each Skill.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sampling: Option<Value>,
    /// Per-model intervention rates (openai targets with `intervene: true`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub intervention: Option<InterventionSummary>,
    /// The exit code.
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
        let exit_code = if interrupted {
            exit_code::INTERRUPTED
        } else {
            summary.exit_code()
        };
        Report {
            schema: "fibon.report/v1",
            version: env!("CARGO_PKG_VERSION"),
            started_at,
            duration_ms,
            interrupted,
            shard,
            cells,
            summary,
            quality_budget: None,
            sampling: None,
            intervention: None,
            exit_code,
        }
    }
}

impl CellReport {
    /// A cell that could not be evaluated at all (a line that does not parse, a recording
    /// no contract covers): verdict `error`, behaviour `not_run`, one finding.
    pub fn not_run(id: String, skill: String, finding: Finding) -> CellReport {
        CellReport {
            id,
            index: 0,
            skill,
            scenario: String::new(),
            quadrant: String::new(),
            fault: None,
            removed_tools: Vec::new(),
            behavior: Behavior::NotRun,
            verdict: Verdict::Error,
            findings: vec![finding],
            output: Value::Null,
            trace: Vec::new(),
            self_reported_trace: Vec::new(),
            citations: Vec::new(),
            stderr: String::new(),
            attempts: 1,
            duration_ms: 0,
            contract: String::new(),
            contract_line: 0,
            quality: None,
            intervention: None,
        }
    }
}

/// The intervention ladder run on a cell that violated `must_call_tools` (docs/background.md,
/// "The intervention ladder"). The cell's verdict is unchanged: it records what
/// it took to make the model comply.
#[derive(Debug, Clone, Serialize)]
pub struct InterventionResult {
    /// The first stage at which the model complied (1 warning, 2 forced tool_choice,
    /// 3 degraded translation); `None` when it never did.
    pub complied_at: Option<u8>,
    /// The stages tried, in order (the ladder stops at the first compliance).
    pub stages: Vec<InterventionStage>,
}

/// One stage of the ladder.
#[derive(Debug, Clone, Serialize)]
pub struct InterventionStage {
    /// 1, 2 or 3.
    pub stage: u8,
    /// `warning`, `forced_tool_choice` or `degraded_translation`.
    pub name: &'static str,
    /// Whether the model complied: the required tools were called (stage 3: the answer
    /// restates the result, with no fact findings), and the cell could be evaluated.
    pub complied: bool,
    /// The verdict of the re-run.
    pub verdict: Verdict,
    /// The findings that decided it.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub note: String,
}

/// Per-model intervention rates over a run (`report.json` → `intervention`).
#[derive(Debug, Clone, Serialize)]
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
