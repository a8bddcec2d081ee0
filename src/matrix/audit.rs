//! `fibon-verify audit`: the compliance audit of production logs — the contracts' trace
//! checks and detectors over a recorded History, invoking nothing. Streamed end to end:
//! each conversation is read, checked and handed to the report's sinks before the next,
//! so memory stays flat on a history of any size.

use std::io::IsTerminal;
use std::path::PathBuf;
use std::time::Instant;

use crate::errors::ExpectedError;
use crate::history::HistoryFile;
use crate::project::ValidProject;
use crate::report::{self, Summary, Written};

/// Failing cells kept in memory for the table, the job summary and annotations.
const SHOWN: usize = 50;

/// What to audit, besides the history.
#[derive(Debug, Clone, Default)]
pub struct AuditSpec {
    /// Only these skills (all when empty).
    pub skills: Vec<String>,
    /// Where the report goes [default: the config's `report.dir`].
    pub report_dir: Option<PathBuf>,
    /// Also write GitHub annotations and the job summary.
    pub github: bool,
    /// Where report.html goes [default: beside report.json, unless `report.html: false`].
    pub html: Option<PathBuf>,
    /// The report the cells are compared with (`--baseline`).
    pub baseline: Option<std::sync::Arc<report::Baseline>>,
    /// What fails the exit code.
    pub fail_on: report::FailOn,
}

/// An audit done: its outputs written.
#[derive(Debug)]
pub struct Audited {
    /// The counts.
    pub summary: Summary,
    /// What was written, and the exit code.
    pub written: Written,
    /// How long it took.
    pub duration_ms: u64,
}

/// Checks every conversation of `history` against the project's contracts, streaming the
/// cells into the report's sinks (the conversations of other skills than `spec.skills`
/// are read and not reported). Exit 65 when the lexicon cannot be used, 64 when the
/// report folder or the history cannot be.
pub fn audit(
    project: &ValidProject,
    history: &HistoryFile,
    spec: &AuditSpec,
) -> Result<Audited, ExpectedError> {
    let lexicon = project.lexicon()?;
    let dir = spec
        .report_dir
        .clone()
        .unwrap_or_else(|| project.config.report_dir.clone());
    report::prepare_dir(&dir)?;
    let started_at = humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string();
    let start = Instant::now();
    let show = report::progress::should_show(
        std::io::stderr().is_terminal(),
        std::env::var("CI").ok().as_deref(),
    );
    let bar = report::progress::bar(history.bytes, show);

    let outputs = report::Outputs::new(&dir, spec.github)
        .naming("conversations")
        .html(spec.html.as_deref(), project.config.report_html)
        .against(spec.baseline.clone(), spec.fail_on);
    let mut stream = report::Stream::begin(&outputs, Some(SHOWN))?;
    let mut error = None;
    crate::history::stream(&history.path, |item, read| {
        bar.set_position(read);
        let mut cell = super::check_item(project, item, &lexicon);
        cell.index = stream.summary().cells;
        if !spec.skills.is_empty() && !spec.skills.contains(&cell.skill) {
            return;
        }
        if error.is_none()
            && let Err(e) = stream.cell(&cell)
        {
            error = Some(e);
        }
    })?;
    bar.finish_and_clear();
    if let Some(e) = error {
        return Err(e);
    }
    let duration_ms = start.elapsed().as_millis() as u64;
    let summary = stream.summary().clone();
    let head = report::Report::new(started_at, duration_ms, Vec::new(), None, false)
        .counted(summary.clone());
    let written = stream.finish(&head)?;
    Ok(Audited {
        summary,
        written,
        duration_ms,
    })
}
