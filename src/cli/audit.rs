//! `fibon-verify audit --history FILE`: the compliance audit of production logs — the
//! contracts' trace checks and detectors over recorded conversations, invoking nothing.
//! Streamed end to end: each conversation is read, checked and handed to the report's
//! sinks before the next, so memory stays flat on a history of any size.

use std::io::IsTerminal;
use std::path::PathBuf;
use std::time::Instant;

use serde_json::json;

use super::Globals;
use crate::diag::Format;
use crate::errors::ExpectedError;
use crate::matrix;
use crate::report;

/// Failing cells kept in memory for the table, the job summary and annotations.
const SHOWN: usize = 50;

#[derive(Debug, clap::Args)]
pub(crate) struct AuditArgs {
    /// The recorded conversations: History JSONL, or OTLP JSON (GenAI spans).
    #[arg(long, value_name = "FILE")]
    history: PathBuf,

    /// Only these skills (repeatable).
    #[arg(long, value_name = "SKILL")]
    skill: Vec<String>,

    /// Where report.json and junit.xml go [default: report.dir]
    #[arg(long, value_name = "DIR")]
    report_dir: Option<PathBuf>,

    /// `json` also prints the summary (counts and exit code) on stdout.
    #[arg(long, value_name = "FORMAT", default_value = "human")]
    format: Format,
}

pub(crate) fn run(globals: &Globals, args: AuditArgs) -> Result<i32, ExpectedError> {
    let (config, project) = super::load_valid_project(globals)?;
    let total = super::check_input(&args.history)?;
    let lexicon = super::lexicon(&config)?;
    let dir = args
        .report_dir
        .clone()
        .unwrap_or_else(|| config.report_dir.clone());
    report::prepare_dir(&dir)?;
    let started_at = humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string();
    let start = Instant::now();
    let show = report::progress::should_show(
        std::io::stderr().is_terminal(),
        std::env::var("CI").ok().as_deref(),
    );
    let bar = report::progress::bar(total, show);

    let outputs = report::Outputs::new(&dir, globals.github).naming("conversations");
    let mut stream = report::Stream::begin(&outputs, Some(SHOWN))?;
    let mut error = None;
    crate::history::stream(&args.history, |item, read| {
        bar.set_position(read);
        let mut cell = matrix::check_item(&project, item, &lexicon);
        cell.index = stream.summary().cells;
        if !args.skill.is_empty() && !args.skill.contains(&cell.skill) {
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
    eprintln!(
        "read {:.1} MB in {:.2} s",
        total as f64 / 1e6,
        duration_ms as f64 / 1000.0
    );
    if args.format == Format::Json {
        super::print_line(json!({
            "summary": summary,
            "exit_code": written.exit_code,
            "report": written.report_json
        }))?;
    }
    Ok(written.exit_code)
}
