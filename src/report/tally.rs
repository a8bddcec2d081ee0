//! What the table, the job summary and the annotations show of the cells, gathered one
//! cell at a time: counts per skill and quadrant, and the cells that did not pass (up to
//! a cap when streamed, so that memory stays flat however many cells there are).

use std::collections::BTreeMap;

use super::{CellReport, CheckId, FindingSeverity, RiskLevel, Summary, Verdict};

/// Columns of the grid: the four quadrants, then cells outside the matrix.
pub(super) const COLUMNS: usize = 5;

/// A cell that did not pass, as the projections show it: not its trace or output.
#[derive(Debug, Clone)]
pub struct Shown {
    /// The cell id.
    pub id: String,
    /// The verdict.
    pub verdict: Verdict,
    /// The contract file, for annotations.
    pub contract: String,
    /// The line of the skill's name in it.
    pub contract_line: usize,
    /// Its contract's risk level (annotations are errors at high and critical).
    pub risk: Option<RiskLevel>,
    /// The first finding.
    pub first: Option<(CheckId, String)>,
    /// The first error finding, else the first finding: what decided the verdict.
    pub decisive: Option<(CheckId, String)>,
}

/// A `gate` candidate's row: its quality state, final scores and explanation.
#[derive(Debug, Clone)]
pub struct Candidate {
    /// The candidate id.
    pub id: String,
    /// The qualityState.
    pub state: &'static str,
    /// `dimension score`, one a line.
    pub scores: Vec<String>,
    /// Why.
    pub explanation: String,
}

/// The cells, counted.
#[derive(Debug, Clone, Default)]
pub struct Tally {
    /// Counts by verdict.
    pub summary: Summary,
    /// Per skill, per column, the count of each verdict.
    pub(super) grid: BTreeMap<String, [BTreeMap<Verdict, usize>; COLUMNS]>,
    /// Per skill, its contract's risk level.
    pub(super) risks: BTreeMap<String, RiskLevel>,
    /// Whether some cell has a quadrant.
    pub(super) placed: bool,
    /// Whether every cell has a quality result (so far).
    pub(super) judged: bool,
    /// The cells that did not pass, in order, up to `keep`.
    pub shown: Vec<Shown>,
    /// Those past `keep`.
    pub omitted: usize,
    /// Quality results, for the candidates' table.
    pub(super) candidates: Vec<Candidate>,
    keep: Option<usize>,
}

impl Tally {
    /// Keeps every cell that did not pass (`None`), or the first `keep`.
    pub fn new(keep: Option<usize>) -> Tally {
        Tally {
            judged: true,
            keep,
            ..Tally::default()
        }
    }

    /// The cells of a whole report.
    pub fn of(cells: &[CellReport]) -> Tally {
        let mut t = Tally::new(None);
        for c in cells {
            t.add(c);
        }
        t
    }

    /// Counts one cell.
    pub fn add(&mut self, c: &CellReport) {
        self.summary.add(c.verdict);
        let column = c.quadrant.map_or(COLUMNS - 1, |q| q.index());
        *self.grid.entry(c.skill.clone()).or_default()[column]
            .entry(c.verdict)
            .or_default() += 1;
        if let Some(r) = c.risk_level {
            self.risks.insert(c.skill.clone(), r);
        }
        self.placed |= c.quadrant.is_some();
        self.judged &= c.quality.is_some();
        if let Some(q) = &c.quality {
            self.candidates.push(Candidate {
                id: c.id.clone(),
                state: q.state.as_str(),
                scores: q.scores.iter().map(|(d, s)| format!("{d} {s}")).collect(),
                explanation: q.explanation.clone(),
            });
        }
        if c.verdict == Verdict::Pass {
            return;
        }
        if self.keep.is_some_and(|k| self.shown.len() >= k) {
            self.omitted += 1;
            return;
        }
        let line = |f: &super::Finding| (f.check, f.message.clone());
        self.shown.push(Shown {
            id: c.id.clone(),
            verdict: c.verdict,
            contract: c.contract.clone(),
            contract_line: c.contract_line,
            risk: c.risk_level,
            first: c.findings.first().map(line),
            decisive: c
                .findings
                .iter()
                .find(|f| f.severity == FindingSeverity::Error)
                .or(c.findings.first())
                .map(line),
        });
    }
}
