//! `fibon-verify audit --history FILE...`: the compliance audit of production logs — the
//! contracts' trace checks and detectors over recorded conversations, invoking nothing
//! ([`matrix::audit`], streamed, on every core, one shard of it with `--shard`). The
//! options, the audit, how much was read, and the summary on stdout with `--format json`.

use std::path::PathBuf;

use serde_json::json;

use super::Globals;
use crate::diag::Format;
use crate::errors::ExpectedError;
use crate::history::HistoryFile;
use crate::matrix::{self, AuditSpec, Shard};

#[derive(Debug, clap::Args)]
pub(crate) struct AuditArgs {
    /// The recorded conversations: History JSONL, or OTLP JSON (GenAI spans). Repeatable,
    /// and a quoted pattern (`'logs/*.jsonl'`) stands for the files it matches, in name
    /// order: read in order, as one history.
    #[arg(long, value_name = "FILE", required = true)]
    history: Vec<PathBuf>,

    /// Only these skills (repeatable).
    #[arg(long, value_name = "SKILL")]
    skill: Vec<String>,

    /// Threads parsing and checking lines [default: the number of CPUs]
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    jobs: Option<u32>,

    /// Check only this runner's share of the conversations: K of N (1-based), by a stable
    /// hash of the conversation id (as `run --shard`); `merge` joins the N reports.
    #[arg(long, value_name = "K/N")]
    shard: Option<Shard>,

    /// Where report.json and junit.xml go [default: report.dir]
    #[arg(long, value_name = "DIR")]
    report_dir: Option<PathBuf>,

    /// `json` also prints the summary (counts and exit code) on stdout.
    #[arg(long, value_name = "FORMAT", default_value = "human")]
    format: Format,

    #[command(flatten)]
    html: super::HtmlArgs,

    #[command(flatten)]
    baseline: super::BaselineArgs,
}

pub(crate) fn run(globals: &Globals, args: AuditArgs) -> Result<i32, ExpectedError> {
    let project = super::valid_project(globals)?;
    let histories = HistoryFile::all(&args.history)?;
    let baseline = args.baseline.load()?;
    args.html.check()?;
    let spec = AuditSpec {
        skills: args.skill,
        report_dir: args.report_dir,
        github: globals.github,
        html: args.html.html.clone(),
        baseline: baseline.baseline,
        fail_on: baseline.fail_on,
        jobs: args.jobs.map(|j| j as usize),
        shard: args.shard,
    };
    let audited = matrix::audit(&project, &histories, &spec)?;
    writeln!(
        super::stderr(),
        "read {:.1} MB in {:.2} s",
        histories.iter().map(|h| h.bytes).sum::<u64>() as f64 / 1e6,
        audited.duration_ms as f64 / 1000.0
    )?;
    if args.format == Format::Json {
        super::print_line(json!({
            "summary": audited.summary,
            "exit_code": audited.written.exit_code,
            "report": audited.written.report_json
        }))?;
    }
    Ok(audited.written.exit_code)
}
