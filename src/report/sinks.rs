//! The one way out for every command's results: report.json, junit.xml, the GitHub
//! annotations and job summary, and the terminal table. [`write_all`] takes a report held
//! whole; [`Stream`] takes cells as they come (`audit`) — the same sinks either way, so
//! every command writes the same files for the same cells.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::baseline::{Baseline, Comparison, FailOn};
use super::html::Html;
use super::junit::Junit;
use super::tally::Tally;
use super::{CellReport, Report, Summary, github, json, redact, table};
use crate::errors::ExpectedError;
use crate::secrets::Redactor;

/// Where a command's results go, and how they are shown.
#[derive(Debug, Clone)]
pub struct Outputs {
    /// The folder of report.json and junit.xml.
    pub dir: PathBuf,
    /// The job summary file to append to (`$GITHUB_STEP_SUMMARY` under GitHub Actions).
    pub step_summary: Option<PathBuf>,
    /// Whether to print an `::error` annotation per failing cell on stderr.
    pub annotations: bool,
    /// What the table and the job summary call the cells.
    pub noun: &'static str,
    /// The table's width.
    pub width: u16,
    /// Where report.html goes (`None`: not written).
    pub html: Option<PathBuf>,
    /// The previous report the cells are compared with (`--baseline`).
    pub baseline: Option<Arc<Baseline>>,
    /// What fails the exit code (`--fail-on`; `new` needs a baseline).
    pub fail_on: FailOn,
}

impl Outputs {
    /// Into `dir`; under GitHub Actions (`github`), annotations too, and the job summary
    /// when `$GITHUB_STEP_SUMMARY` names a file.
    pub fn new(dir: &Path, github: bool) -> Outputs {
        Outputs {
            dir: dir.to_path_buf(),
            step_summary: std::env::var_os("GITHUB_STEP_SUMMARY")
                .filter(|_| github)
                .map(PathBuf::from),
            annotations: github,
            noun: "cells",
            width: 110,
            html: Some(dir.join("report.html")),
            baseline: None,
            fail_on: FailOn::All,
        }
    }

    /// With report.html at `html` (`--html PATH`), beside report.json, or not at all
    /// (`report.html: false` and no `--html`).
    pub fn html(mut self, html: Option<&Path>, enabled: bool) -> Outputs {
        self.html = match html {
            Some(path) => Some(path.to_path_buf()),
            None if enabled => Some(self.dir.join("report.html")),
            None => None,
        };
        self
    }

    /// Compared with `baseline`, failing on `fail_on`.
    pub fn against(mut self, baseline: Option<Arc<Baseline>>, fail_on: FailOn) -> Outputs {
        self.baseline = baseline;
        self.fail_on = fail_on;
        self
    }

    /// Without annotations.
    pub fn without_annotations(mut self) -> Outputs {
        self.annotations = false;
        self
    }

    /// Calling the cells `noun` ("conversations").
    pub fn naming(mut self, noun: &'static str) -> Outputs {
        self.noun = noun;
        self
    }
}

/// What was written.
#[derive(Debug)]
pub struct Written {
    /// The report's exit code.
    pub exit_code: i32,
    /// The report.json written.
    pub report_json: PathBuf,
    /// The report.html written, if any.
    pub report_html: Option<PathBuf>,
}

impl Written {
    /// Copies report.json to `out` (`--format json`), as one line-terminated document
    /// (redacted again: it may be a report of an earlier run).
    pub fn print_json(&self, out: &mut impl Write) -> Result<(), ExpectedError> {
        File::open(&self.report_json)
            .and_then(|f| crate::secrets::current().copy(f, out))
            .map_err(ExpectedError::unwritable(&self.report_json))?;
        writeln!(out)
            .and_then(|()| out.flush())
            .map_err(ExpectedError::Stream)
    }
}

/// Writes every output of a report held whole; returns its exit code.
pub fn write_all(report: &Report, outputs: &Outputs) -> Result<Written, ExpectedError> {
    let mut stream = Stream::begin(outputs, None)?;
    for c in &report.cells {
        stream.cell(c)?;
    }
    stream.finish(report)
}

/// The outputs of cells written as they come: each cell goes to the report's spill files
/// at once, and only counts (and the first failing cells the table, summary and
/// annotations show) stay in memory. Every cell, and what surrounds them, is redacted
/// (crate::secrets) as it comes in, before any output is made of it.
#[derive(Debug)]
pub struct Stream {
    outputs: Outputs,
    redactor: Arc<Redactor>,
    cells: json::Cells,
    junit: Junit,
    html: Option<Html>,
    comparison: Option<Comparison>,
    tally: Tally,
    spill: Spill,
}

/// The spill folder, removed however the writing ends.
#[derive(Debug)]
struct Spill(PathBuf);

impl Drop for Spill {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

impl Stream {
    /// Starts the outputs in `outputs.dir`, keeping every failing cell for the table,
    /// summary and annotations (`None`) or the first `keep`.
    pub fn begin(outputs: &Outputs, keep: Option<usize>) -> Result<Stream, ExpectedError> {
        let dir = outputs
            .dir
            .join(format!(".fibon-spill.{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).map_err(ExpectedError::unwritable(&outputs.dir))?;
        let spill = Spill(dir);
        let cells = json::Cells::new(&spill.0.join("cells.json"))
            .map_err(ExpectedError::unwritable(&outputs.dir))?;
        let html = match &outputs.html {
            Some(_) => Some(
                Html::new(&spill.0.join("cells.html.json"))
                    .map_err(ExpectedError::unwritable(&outputs.dir))?,
            ),
            None => None,
        };
        Ok(Stream {
            outputs: outputs.clone(),
            redactor: crate::secrets::current(),
            cells,
            junit: Junit::new(&spill.0),
            html,
            comparison: outputs
                .baseline
                .as_ref()
                .map(|_| Comparison::new(outputs.fail_on)),
            tally: Tally::new(keep),
            spill,
        })
    }

    /// Writes one cell.
    pub fn cell(&mut self, c: &CellReport) -> Result<(), ExpectedError> {
        let c = &*redact::cell(&self.redactor, c);
        let change = match (&mut self.comparison, &self.outputs.baseline) {
            (Some(cmp), Some(baseline)) => Some(cmp.cell(baseline, c)),
            _ => None,
        };
        self.tally.add(c);
        self.cells
            .cell(c)
            .and_then(|()| self.junit.cell(c, change))
            .and_then(|()| match &mut self.html {
                Some(html) => html.cell(c, change),
                None => Ok(()),
            })
            .map_err(ExpectedError::unwritable(&self.outputs.dir))
    }

    /// The counts so far.
    pub fn summary(&self) -> &Summary {
        &self.tally.summary
    }

    /// Finishes every output: `report` gives what surrounds the cells (its own cells, if it
    /// has any, are those written; they are not read again). Returns its exit code.
    pub fn finish(self, report: &Report) -> Result<Written, ExpectedError> {
        let Stream {
            outputs,
            redactor,
            cells,
            junit,
            html,
            comparison,
            tally,
            spill,
        } = self;
        let mut report = redact::header(&redactor, report);
        if let (Some(cmp), Some(baseline)) = (comparison, &outputs.baseline) {
            let section = cmp.finish(baseline, &mut report.exit_code, report.interrupted);
            // The baseline's ids are another report's text: redacted as this one's.
            report.baseline = redact::header(
                &redactor,
                &Report {
                    baseline: Some(section),
                    ..report.header()
                },
            )
            .baseline;
        }
        let report = &report;
        let json_path = outputs.dir.join("report.json");
        write_with(&json_path, |w| cells.finish(report, w))?;
        write_with(&outputs.dir.join("junit.xml"), |w| {
            junit.finish(w, report.duration_ms)
        })?;
        if let (Some(html), Some(path)) = (html, &outputs.html) {
            write_with(path, |w| html.finish(report, w))?;
        }
        drop(spill);
        // The terminal's own stream failing is no fault of the user's (exit 70).
        let mut stderr = std::io::stderr().lock();
        let mut say = |text: std::fmt::Arguments<'_>| {
            let text = text.to_string();
            stderr
                .write_all(redactor.redact(&text).as_bytes())
                .map_err(ExpectedError::Stream)
        };
        if outputs.annotations {
            for line in github::annotations(&tally) {
                say(format_args!("{line}\n"))?;
            }
        }
        if let Some(path) = &outputs.step_summary {
            std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(path)
                .and_then(|mut f| {
                    writeln!(
                        f,
                        "{}",
                        github::summary_markdown(report, &tally, outputs.noun)
                    )
                })
                .map_err(ExpectedError::unwritable(path))?;
        }
        say(format_args!(
            "{}",
            table::render(report, &tally, outputs.width, outputs.noun)
        ))?;
        if let Some(i) = &report.intervention {
            say(format_args!("{}\n", i.line()))?;
        }
        say(format_args!("report: {}\n", json_path.display()))?;
        if let Some(path) = &outputs.html {
            say(format_args!("html: {}\n", path.display()))?;
        }
        Ok(Written {
            exit_code: report.exit_code,
            report_json: json_path,
            report_html: outputs.html.clone(),
        })
    }
}

/// Writes `path` atomically from `write`: a temporary file beside it, renamed over it.
fn write_with(
    path: &Path,
    write: impl FnOnce(&mut BufWriter<File>) -> std::io::Result<()>,
) -> Result<(), ExpectedError> {
    let tmp = path.with_file_name(format!(
        ".{}.tmp",
        path.file_name()
            .and_then(|n| n.to_str())
            .unwrap_or("report")
    ));
    let result = (|| {
        let mut w = BufWriter::new(File::create(&tmp)?);
        write(&mut w)?;
        w.flush()
    })();
    if let Err(e) = result {
        let _ = std::fs::remove_file(&tmp);
        return Err(ExpectedError::unwritable(path)(e));
    }
    std::fs::rename(&tmp, path).map_err(ExpectedError::unwritable(path))
}
