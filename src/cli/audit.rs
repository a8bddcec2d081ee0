//! `fibon-verify audit --history FILE`: the compliance audit of production logs — the
//! contracts' trace checks and detectors over recorded conversations, invoking nothing.
//! Streamed end to end: each conversation is read, checked and written to report.json and
//! junit.xml before the next, so memory stays flat on a history of any size.

use std::collections::BTreeMap;
use std::io::{BufWriter, IsTerminal, Write};
use std::path::PathBuf;
use std::time::Instant;

use comfy_table::presets::UTF8_FULL_CONDENSED;
use comfy_table::{ContentArrangement, Table};
use serde_json::json;

use super::Globals;
use crate::diag::Format;
use crate::errors::ExpectedError;
use crate::matrix;
use crate::report::{self, CellReport, Summary};
use crate::vocab::{FindingSeverity, Verdict};

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

    let json_tmp = dir.join(".report.json.tmp");
    let junit_cases = dir.join(".junit-cases.tmp");
    let report_json = dir.join("report.json");
    let junit_xml = dir.join("junit.xml");
    // Every write below is to the report folder: a failure names the file it was for.
    let mut out =
        BufWriter::new(std::fs::File::create(&json_tmp).map_err(ExpectedError::unwritable(&dir))?);
    let mut cases = BufWriter::new(
        std::fs::File::create(&junit_cases).map_err(ExpectedError::unwritable(&dir))?,
    );
    write!(
        out,
        r#"{{"schema":"fibon.report/v1","version":"{}","started_at":"{started_at}","cells":["#,
        env!("CARGO_PKG_VERSION")
    )
    .map_err(ExpectedError::unwritable(&report_json))?;
    let mut counts: BTreeMap<(String, String), BTreeMap<&'static str, usize>> = BTreeMap::new();
    let mut failing: Vec<CellReport> = Vec::new();
    let mut all: Vec<Verdict> = Vec::new();
    let mut first = true;
    let mut io_error = None;
    crate::history::stream(&args.history, |item, read| {
        bar.set_position(read);
        let mut cell = matrix::check_item(&project, item, &lexicon);
        cell.index = all.len();
        if !args.skill.is_empty() && !args.skill.contains(&cell.skill) {
            return;
        }
        let result = (|| -> std::io::Result<()> {
            if !first {
                out.write_all(b",")?;
            }
            first = false;
            serde_json::to_writer(&mut out, &cell)?;
            write_case(&mut cases, &cell)
        })();
        if let Err(e) = result {
            io_error.get_or_insert(e);
        }
        *counts
            .entry((cell.skill.clone(), cell.quadrant.clone()))
            .or_default()
            .entry(cell.verdict.as_str())
            .or_default() += 1;
        all.push(cell.verdict);
        if cell.verdict != Verdict::Pass && failing.len() < SHOWN {
            let mut kept = cell;
            kept.trace.clear();
            failing.push(kept);
        }
    })?;
    bar.finish_and_clear();
    if let Some(e) = io_error {
        return Err(ExpectedError::unwritable(&report_json)(e));
    }
    let count = |v: Verdict| all.iter().filter(|x| **x == v).count();
    let summary = Summary {
        cells: all.len(),
        pass: count(Verdict::Pass),
        silent_degradation: count(Verdict::SilentDegradation),
        contract_violation: count(Verdict::ContractViolation),
        quality_fail: count(Verdict::QualityFail),
        error: count(Verdict::Error),
        skipped: count(Verdict::Skipped),
    };
    let code = summary.exit_code();
    let duration_ms = start.elapsed().as_millis() as u64;
    (|| -> std::io::Result<()> {
        write!(
            out,
            r#"],"summary":{},"duration_ms":{duration_ms},"exit_code":{code}}}"#,
            serde_json::to_string(&summary).expect("serializes")
        )?;
        out.flush()
    })()
    .map_err(ExpectedError::unwritable(&report_json))?;
    drop(out);
    std::fs::rename(&json_tmp, &report_json).map_err(ExpectedError::unwritable(&report_json))?;
    let junit_tmp = dir.join(".junit.xml.tmp");
    (|| -> std::io::Result<()> {
        cases.flush()?;
        drop(cases);
        let mut junit = BufWriter::new(std::fs::File::create(&junit_tmp)?);
        let failures =
            summary.silent_degradation + summary.contract_violation + summary.quality_fail;
        write!(
            junit,
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"fibon-verify audit\" tests=\"{}\" failures=\"{failures}\" errors=\"{}\">\n<testsuite name=\"audit\" tests=\"{}\" failures=\"{failures}\" errors=\"{}\">\n",
            summary.cells, summary.error, summary.cells, summary.error
        )?;
        std::io::copy(&mut std::fs::File::open(&junit_cases)?, &mut junit)?;
        write!(junit, "</testsuite>\n</testsuites>\n")?;
        junit.flush()?;
        drop(junit);
        std::fs::rename(&junit_tmp, &junit_xml)
    })()
    .map_err(ExpectedError::unwritable(&junit_xml))?;
    let _ = std::fs::remove_file(&junit_cases);

    let shown = report::Report::new(started_at, duration_ms, failing, None, false);
    let mut stderr = super::stderr();
    if globals.github {
        for line in report::github::annotations(&shown) {
            writeln!(stderr, "{line}")?;
        }
        if std::env::var_os("GITHUB_STEP_SUMMARY").is_some() {
            let mut md = report::github::summary_markdown(&report::Report {
                summary: summary.clone(),
                exit_code: code,
                ..shown.clone()
            });
            if summary.cells - summary.pass > SHOWN {
                md.push_str(&format!(
                    "\n_{} more failing conversations in report.json._\n",
                    summary.cells - summary.pass - SHOWN
                ));
            }
            super::append_summary(&md)?;
        }
    }
    let mut t = Table::new();
    t.load_style(UTF8_FULL_CONDENSED)
        .set_content_arrangement(ContentArrangement::Dynamic)
        .set_width(110);
    t.set_header(vec!["skill", "quadrant", "verdicts"]);
    for ((skill, q), verdicts) in &counts {
        let v: Vec<String> = verdicts.iter().map(|(k, n)| format!("{n} {k}")).collect();
        t.add_row(vec![
            if skill.is_empty() {
                "(unreadable)".into()
            } else {
                skill.clone()
            },
            if q.is_empty() {
                "—".into()
            } else {
                q.clone()
            },
            v.join(", "),
        ]);
    }
    writeln!(stderr, "{t}")?;
    for c in &shown.cells {
        let f = c
            .findings
            .iter()
            .find(|f| f.severity == FindingSeverity::Error)
            .map(|f| format!("{}: {}", f.check, f.message))
            .unwrap_or_default();
        writeln!(
            stderr,
            "{} {} — {f}",
            c.verdict.as_str().to_uppercase(),
            c.id
        )?;
    }
    writeln!(
        stderr,
        "{} conversations: {} pass, {} silent_degradation, {} contract_violation, {} error; {:.1} MB in {:.2} s\nreport: {}",
        summary.cells,
        summary.pass,
        summary.silent_degradation,
        summary.contract_violation,
        summary.error,
        total as f64 / 1e6,
        duration_ms as f64 / 1000.0,
        report_json.display()
    )?;
    if args.format == Format::Json {
        super::print_line(json!({"summary": summary, "exit_code": code, "report": report_json}))?;
    }
    Ok(code)
}

/// One JUnit testcase, written as the audit streams.
fn write_case(w: &mut impl Write, c: &CellReport) -> std::io::Result<()> {
    let esc = report::junit::xml_escape;
    write!(
        w,
        "<testcase name=\"{}\" classname=\"{}\"",
        esc(&c.id),
        esc(&c.skill)
    )?;
    if c.verdict == Verdict::Pass {
        return writeln!(w, "/>");
    }
    let tag = if c.verdict == Verdict::Error {
        "error"
    } else {
        "failure"
    };
    let first = c.findings.first().map(|f| f.message.as_str()).unwrap_or("");
    let details: Vec<String> = c
        .findings
        .iter()
        .map(|f| format!("[{}] {}", f.check, f.message))
        .collect();
    writeln!(
        w,
        "><{tag} type=\"{}\" message=\"{}\">{}</{tag}></testcase>",
        c.verdict.as_str(),
        esc(first),
        esc(&details.join("\n"))
    )
}
