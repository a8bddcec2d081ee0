//! `--baseline REPORT`: this run's cells compared with a previous report.json's by cell id
//! (docs/report.md, "baseline") — what a pull request broke, fixed or left failing — and
//! `--fail-on new`, the exit code of only what changed for the worse.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::Path;

use serde::{Deserialize, Serialize};

use super::{CellReport, SCHEMA, Summary, Verdict};
use crate::errors::ExpectedError;

/// What fails the exit code (`--fail-on`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "snake_case")]
pub enum FailOn {
    /// Every failing cell, as without a baseline.
    #[default]
    All,
    /// Only what is failing anew: new failures, a different failing verdict, a failing new
    /// cell or one whose contract or scenario changed — and `error` cells, always.
    New,
}

/// How a cell compares with the baseline's cell of the same id.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Change {
    /// Passing there, failing here.
    NewFailure,
    /// Failing with a different verdict than there.
    Changed,
    /// Its contract or scenario version differs: not compared.
    Incomparable,
    /// Not in the baseline.
    NewCell,
    /// Failing there, passing here.
    Fixed,
    /// In the baseline, not in this run.
    Gone,
    /// Failing there and here with the same verdict.
    StillFailing,
    /// Passing there and here.
    Unchanged,
}

impl Change {
    /// Every change, what a pull request changed first.
    pub const ALL: [Change; 8] = [
        Change::NewFailure,
        Change::Changed,
        Change::Incomparable,
        Change::NewCell,
        Change::Fixed,
        Change::Gone,
        Change::StillFailing,
        Change::Unchanged,
    ];

    /// Its name in report.json.
    pub fn as_str(self) -> &'static str {
        match self {
            Change::NewFailure => "new_failure",
            Change::Changed => "changed",
            Change::Incomparable => "incomparable",
            Change::NewCell => "new_cell",
            Change::Fixed => "fixed",
            Change::Gone => "gone",
            Change::StillFailing => "still_failing",
            Change::Unchanged => "unchanged",
        }
    }
}

/// A verdict that fails a cell, for the comparison: `skipped` is not.
fn failing(v: Verdict) -> bool {
    !matches!(v, Verdict::Pass | Verdict::Skipped)
}

/// One cell of the baseline: what is compared.
#[derive(Debug, Clone, Deserialize)]
struct Was {
    id: String,
    verdict: Verdict,
    #[serde(default)]
    contract_version: Option<String>,
    #[serde(default)]
    scenario_version: Option<String>,
}

/// The part of a report.json a baseline reads.
#[derive(Debug, Deserialize)]
struct Raw {
    schema: String,
    #[serde(default)]
    started_at: String,
    #[serde(default)]
    interrupted: bool,
    cells: Vec<Was>,
}

/// A previous report, read to compare with.
#[derive(Debug)]
pub struct Baseline {
    /// The path as given.
    path: String,
    started_at: String,
    interrupted: bool,
    /// Its cells in their order, and where each id is.
    cells: Vec<Was>,
    by_id: HashMap<String, usize>,
}

impl Baseline {
    /// Reads `path`: exit 64 when it cannot be read, 65 when it is not a report.json
    /// (not JSON, another schema, a cell id twice).
    pub fn read(path: &Path) -> Result<Baseline, ExpectedError> {
        let text = crate::source::read_input(path)?;
        let invalid = |reason: String| ExpectedError::InvalidData {
            path: path.to_path_buf(),
            reason: format!("not a usable baseline: {reason}"),
        };
        let raw: Raw = serde_json::from_str(&text).map_err(|e| invalid(e.to_string()))?;
        if raw.schema != SCHEMA {
            return Err(invalid(format!(
                "its schema is `{}`, not `{SCHEMA}`",
                raw.schema
            )));
        }
        let mut by_id = HashMap::with_capacity(raw.cells.len());
        for (i, c) in raw.cells.iter().enumerate() {
            if by_id.insert(c.id.clone(), i).is_some() {
                return Err(invalid(format!("it has cell `{}` twice", c.id)));
            }
        }
        Ok(Baseline {
            path: path.display().to_string(),
            started_at: raw.started_at,
            interrupted: raw.interrupted,
            cells: raw.cells,
            by_id,
        })
    }

    /// How `c` compares, with the verdict it had and why it was not compared.
    pub fn compare(&self, c: &CellReport) -> (Change, Option<Verdict>, String) {
        let Some(was) = self.by_id.get(&c.id).map(|&i| &self.cells[i]) else {
            return (Change::NewCell, None, String::new());
        };
        let mut differs = Vec::new();
        if was.contract_version != c.contract_version {
            differs.push(format!(
                "contract version {} → {}",
                shown(&was.contract_version),
                shown(&c.contract_version)
            ));
        }
        if was.scenario_version != c.scenario_version {
            differs.push(format!(
                "scenario version {} → {}",
                shown(&was.scenario_version),
                shown(&c.scenario_version)
            ));
        }
        if !differs.is_empty() {
            return (
                Change::Incomparable,
                Some(was.verdict),
                format!("not compared: {}", differs.join(", ")),
            );
        }
        let change = match (failing(was.verdict), failing(c.verdict)) {
            (false, false) => Change::Unchanged,
            (false, true) => Change::NewFailure,
            (true, false) => Change::Fixed,
            (true, true) if was.verdict == c.verdict => Change::StillFailing,
            (true, true) => Change::Changed,
        };
        (change, Some(was.verdict), String::new())
    }
}

fn shown(v: &Option<String>) -> &str {
    v.as_deref().unwrap_or("(none)")
}

/// One cell's line of the comparison.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Entry {
    /// The cell id.
    pub id: String,
    /// How it compares.
    pub change: Change,
    /// Its verdict in the baseline (none for a new cell).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub was: Option<Verdict>,
    /// Its verdict now (none for a gone cell).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub now: Option<Verdict>,
    /// Why it was not compared.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub note: String,
}

/// report.json's `baseline`: the counts of each change and every cell that is not
/// `unchanged`, what changed first.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Section {
    /// The baseline report, as named.
    pub report: String,
    /// When its run started.
    #[serde(default)]
    pub started_at: String,
    /// Whether that run was interrupted (its missing cells are `new_cell` here).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub interrupted: bool,
    /// `all` or `new`.
    pub fail_on: FailOn,
    /// Cells per change, every change named.
    pub counts: BTreeMap<Change, usize>,
    /// The cells that are not `unchanged`, in the order of [`Change::ALL`], then of the run.
    pub cells: Vec<Entry>,
}

impl Section {
    /// The entries of `change`.
    pub fn of(&self, change: Change) -> impl Iterator<Item = &Entry> {
        self.cells.iter().filter(move |e| e.change == change)
    }

    /// Whether any cell changed for the better or worse (not only still failing).
    pub fn count(&self, change: Change) -> usize {
        self.counts.get(&change).copied().unwrap_or(0)
    }
}

/// The comparison, made one cell at a time as the cells come.
#[derive(Debug)]
pub(super) struct Comparison {
    fail_on: FailOn,
    counts: BTreeMap<Change, usize>,
    entries: Vec<Entry>,
    seen: HashSet<usize>,
    /// The counts the exit code follows under `--fail-on new`: a failing cell that is
    /// still failing as it was is counted as passing, an `error` never is.
    gating: Summary,
}

impl Comparison {
    pub(super) fn new(fail_on: FailOn) -> Comparison {
        Comparison {
            fail_on,
            counts: Change::ALL.iter().map(|c| (*c, 0)).collect(),
            entries: Vec::new(),
            seen: HashSet::new(),
            gating: Summary::default(),
        }
    }

    /// Compares one cell; returns how, and the verdict it had.
    pub(super) fn cell(
        &mut self,
        baseline: &Baseline,
        c: &CellReport,
    ) -> (Change, Option<Verdict>) {
        let (change, was, note) = baseline.compare(c);
        if let Some(&i) = baseline.by_id.get(&c.id) {
            self.seen.insert(i);
        }
        *self.counts.entry(change).or_default() += 1;
        let known = matches!(change, Change::StillFailing) && c.verdict != Verdict::Error;
        self.gating
            .add(if known { Verdict::Pass } else { c.verdict });
        if change != Change::Unchanged {
            self.entries.push(Entry {
                id: c.id.clone(),
                change,
                was,
                now: Some(c.verdict),
                note,
            });
        }
        (change, was)
    }

    /// The section, with the baseline's cells this run did not have (`gone`), and the
    /// exit code of `report` under `--fail-on` (130 when interrupted stays).
    pub(super) fn finish(
        mut self,
        baseline: &Baseline,
        exit_code: &mut i32,
        interrupted: bool,
    ) -> Section {
        for (i, was) in baseline.cells.iter().enumerate() {
            if !self.seen.contains(&i) {
                *self.counts.entry(Change::Gone).or_default() += 1;
                self.entries.push(Entry {
                    id: was.id.clone(),
                    change: Change::Gone,
                    was: Some(was.verdict),
                    now: None,
                    note: String::new(),
                });
            }
        }
        // Stable: within a change, the run's order (gone cells: the baseline's).
        self.entries.sort_by_key(|e| e.change);
        if self.fail_on == FailOn::New && !interrupted {
            *exit_code = self.gating.exit_code();
        }
        Section {
            report: baseline.path.clone(),
            started_at: baseline.started_at.clone(),
            interrupted: baseline.interrupted,
            fail_on: self.fail_on,
            counts: self.counts,
            cells: self.entries,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::vocab::Behavior;

    fn cell(id: &str, v: Verdict) -> CellReport {
        CellReport::new(id.into(), "s".into(), Behavior::Answered, v, Vec::new())
    }

    fn baseline(cells: &[(&str, Verdict)]) -> Baseline {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("report.json");
        let cells: Vec<CellReport> = cells.iter().map(|(id, v)| cell(id, *v)).collect();
        let report = super::super::Report::new("t0".into(), 0, cells, None, false);
        std::fs::write(&path, serde_json::to_string(&report).unwrap()).unwrap();
        Baseline::read(&path).unwrap()
    }

    #[test]
    fn each_change_is_named_and_only_new_failures_gate() {
        use Verdict::*;
        let b = baseline(&[
            ("a", Pass),
            ("b", SilentDegradation),
            ("c", SilentDegradation),
            ("d", ContractViolation),
            ("e", Pass),
            ("g", Error),
        ]);
        let mut cmp = Comparison::new(FailOn::New);
        let now = [
            ("a", SilentDegradation, Change::NewFailure),
            ("b", Pass, Change::Fixed),
            ("c", SilentDegradation, Change::StillFailing),
            ("d", SilentDegradation, Change::Changed),
            ("e", Pass, Change::Unchanged),
            ("f", Pass, Change::NewCell),
            ("g", Error, Change::StillFailing),
        ];
        for (id, v, want) in now {
            assert_eq!(cmp.cell(&b, &cell(id, v)).0, want, "{id}");
        }
        let mut code = 0;
        let section = cmp.finish(&b, &mut code, false);
        assert_eq!(section.count(Change::Gone), 0);
        assert_eq!(section.cells[0].id, "a");
        assert_eq!(section.cells.last().unwrap().change, Change::StillFailing);
        // a is new and d changed verdict (exit 1); g is an error, still failing: 69 too,
        // but 1 ranks first.
        assert_eq!(code, crate::exit_code::SILENT_DEGRADATION);
    }

    #[test]
    fn only_known_failures_pass_the_new_gate_but_errors_never_do() {
        use Verdict::*;
        let b = baseline(&[("a", SilentDegradation), ("b", Error), ("gone", Pass)]);
        let mut cmp = Comparison::new(FailOn::New);
        cmp.cell(&b, &cell("a", SilentDegradation));
        let mut code = 0;
        let s = cmp.finish(&b, &mut code, false);
        assert_eq!(code, 0);
        assert_eq!(s.count(Change::Gone), 2);
        let mut cmp = Comparison::new(FailOn::New);
        cmp.cell(&b, &cell("a", SilentDegradation));
        cmp.cell(&b, &cell("b", Error));
        cmp.finish(&b, &mut code, false);
        assert_eq!(code, crate::exit_code::UNAVAILABLE);
    }

    #[test]
    fn another_scenario_version_is_not_compared() {
        let b = baseline(&[("a", Verdict::SilentDegradation)]);
        let c = cell("a", Verdict::SilentDegradation).versioned(None, Some("sha256:1".into()));
        let (change, was, note) = b.compare(&c);
        assert_eq!(
            (change, was),
            (Change::Incomparable, Some(Verdict::SilentDegradation))
        );
        assert!(
            note.contains("scenario version (none) → sha256:1"),
            "{note}"
        );
    }
}
