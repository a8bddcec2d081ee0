//! `fibon-verify audit`: the compliance audit of production logs — the contracts' trace
//! checks and detectors over recorded histories, invoking nothing. Streamed end to end on
//! every core: one thread reads the lines into batches, `jobs` threads parse and check
//! them, and the cells reach the report's sinks in history order; every queue between
//! them is bounded, so memory stays flat on a history of any size. `--shard K/N` checks
//! only the conversations whose id hashes to this shard (the hash of `run --shard`), so
//! that `merge` of the N shard reports is the report of the whole history.

use std::io::IsTerminal;
use std::ops::Range;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, mpsc};
use std::time::Instant;

use super::Shard;
use crate::checks::refusal::Lexicon;
use crate::errors::ExpectedError;
use crate::history::{self, Conversation, Entry, HistoryError, HistoryFile, Item, Line, Peek};
use crate::project::ValidProject;
use crate::report::{self, CellReport, Summary, Written};

/// Failing cells kept in memory for the table, the job summary and annotations.
const SHOWN: usize = 50;

/// Lines handed to a checking thread at once, at most: enough that the hand-over costs
/// little next to checking them, few enough that the cores stay evenly busy.
const BATCH_LINES: usize = 64;

/// Bytes of lines in a batch past which it is handed over (a longer line goes alone).
const BATCH_BYTES: usize = 256 * 1024;

/// What to audit, besides the histories.
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
    /// Threads parsing and checking lines [default: the number of CPUs].
    pub jobs: Option<usize>,
    /// Only this shard's conversations.
    pub shard: Option<Shard>,
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

/// Checks every conversation of `histories` (in order, as one history) against the
/// project's contracts, streaming the cells into the report's sinks (the conversations of
/// other skills than `spec.skills`, and of other shards, are read and not checked). Exit
/// 65 when the lexicon cannot be used, 64 when the report folder or a history cannot be.
pub fn audit(
    project: &ValidProject,
    histories: &[HistoryFile],
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
    let bar = report::progress::bar(histories.iter().map(|h| h.bytes).sum(), show);

    let outputs = report::Outputs::new(&dir, spec.github)
        .naming("conversations")
        .html(spec.html.as_deref(), project.config.report_html)
        .against(spec.baseline.clone(), spec.fail_on);
    let mut stream = report::Stream::begin(&outputs, Some(SHOWN))?;
    let checker = Checker {
        project,
        lexicon: &lexicon,
        skills: &spec.skills,
        shard: spec.shard,
        // One history keeps the ids `line-N`; of several, a line's id names its file.
        files: (histories.len() > 1).then(|| {
            histories
                .iter()
                .map(|h| h.path.display().to_string())
                .collect()
        }),
    };
    // Each item's place among the cells an unsharded audit reports: shards merge by it.
    let mut position = 0usize;
    let mut write = |done: Vec<Done>| -> Result<(), ExpectedError> {
        for d in done {
            bar.set_position(d.read);
            if !d.reported {
                continue;
            }
            if let Some(mut cell) = d.cell {
                cell.index = position;
                stream.cell(&cell)?;
            }
            position += 1;
        }
        Ok(())
    };
    let jobs = spec
        .jobs
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
        .max(1);
    if jobs == 1 {
        let mut failed = None;
        read_batches(histories, |batch| match write(checker.check(batch)) {
            Ok(()) => true,
            Err(e) => {
                failed = Some(e);
                false
            }
        })?;
        if let Some(e) = failed {
            return Err(e);
        }
    } else {
        in_parallel(histories, &checker, jobs, write)?;
    }
    bar.finish_and_clear();
    let duration_ms = start.elapsed().as_millis() as u64;
    let summary = stream.summary().clone();
    let head = report::Report::new(
        started_at,
        duration_ms,
        Vec::new(),
        spec.shard.map(|s| format!("{}/{}", s.index, s.total)),
        false,
    )
    .counted(summary.clone());
    let written = stream.finish(&head)?;
    Ok(Audited {
        summary,
        written,
        duration_ms,
    })
}

/// The read, check and write stages on their own threads: a reader, `jobs` checkers
/// taking batches from one bounded queue, and the calling thread writing each batch's
/// cells once those of every batch before it are written. Each batch's result has its own
/// slot, queued in reading order: the queue of slots bounds how far reading runs ahead of
/// writing, however slow the sinks or a batch.
fn in_parallel(
    histories: &[HistoryFile],
    checker: &Checker<'_>,
    jobs: usize,
    mut write: impl FnMut(Vec<Done>) -> Result<(), ExpectedError>,
) -> Result<(), ExpectedError> {
    type Slot = mpsc::SyncSender<Vec<Done>>;
    let (work_tx, work_rx) = mpsc::sync_channel::<(Batch, Slot)>(jobs * 2);
    let (order_tx, order_rx) = mpsc::sync_channel::<mpsc::Receiver<Vec<Done>>>(jobs * 4);
    let work_rx = Arc::new(Mutex::new(work_rx));
    std::thread::scope(|scope| {
        let reader = scope.spawn(move || {
            read_batches(histories, |batch| {
                let (slot, result) = mpsc::sync_channel(1);
                // Either send fails only once the writer has stopped: stop reading too.
                order_tx.send(result).is_ok() && work_tx.send((batch, slot)).is_ok()
            })
        });
        for _ in 0..jobs {
            let work_rx = Arc::clone(&work_rx);
            scope.spawn(move || {
                loop {
                    let next = work_rx.lock().map(|rx| rx.recv());
                    let Ok(Ok((batch, slot))) = next else { break };
                    // The writer may have stopped; the batch's result is then dropped.
                    let _ = slot.send(checker.check(batch));
                }
            });
        }
        let mut written = Ok(());
        for result in order_rx.iter() {
            // A checker that panicked drops its slot: say so rather than lose its lines.
            let Ok(done) = result.recv() else {
                written = Err(ExpectedError::Internal(
                    "a checking thread of the audit failed".into(),
                ));
                break;
            };
            if let Err(e) = write(done) {
                written = Err(e);
                break;
            }
        }
        // Stops the reader and the checkers if writing stopped early.
        drop(order_rx);
        let read = reader.join().map_err(|_| {
            ExpectedError::Internal("the history reader of the audit failed".into())
        })?;
        written?;
        read.map_err(ExpectedError::from)
    })
}

/// A run of lines read and not yet parsed: their text, one after the other, and where
/// each is.
#[derive(Debug, Default)]
struct Batch {
    text: String,
    lines: Vec<Raw>,
}

/// One line of a batch (or a whole OTLP document).
#[derive(Debug)]
struct Raw {
    /// Which history (an index into the histories).
    file: usize,
    /// Its number in that history.
    no: usize,
    /// Bytes of every history read through it.
    read: u64,
    what: RawLine,
}

#[derive(Debug)]
enum RawLine {
    Text(Range<usize>),
    TooLong,
    NotUtf8(usize),
    Document(Vec<Conversation>),
}

/// Reads the histories in order into batches handed to `each`, until it returns false.
fn read_batches(
    histories: &[HistoryFile],
    mut each: impl FnMut(Batch) -> bool,
) -> Result<(), HistoryError> {
    let mut batch = Batch::default();
    let mut before = 0u64;
    for (file, history) in histories.iter().enumerate() {
        let mut lines = history::Lines::open(&history.path)?;
        let mut last = 0u64;
        while let Some(entry) = lines.next_entry()? {
            let (no, read, what) = match entry {
                Entry::Line { no, read, line } => {
                    let what = match line {
                        Line::Text(text) => {
                            let start = batch.text.len();
                            batch.text.push_str(text);
                            RawLine::Text(start..batch.text.len())
                        }
                        Line::TooLong => RawLine::TooLong,
                        Line::NotUtf8(at) => RawLine::NotUtf8(at),
                    };
                    (no, read, what)
                }
                Entry::Document {
                    conversations,
                    read,
                } => (1, read, RawLine::Document(conversations)),
            };
            last = read;
            batch.lines.push(Raw {
                file,
                no,
                read: before + read,
                what,
            });
            lines.release();
            if (batch.lines.len() >= BATCH_LINES || batch.text.len() >= BATCH_BYTES)
                && !each(std::mem::take(&mut batch))
            {
                return Ok(());
            }
        }
        before += last.max(history.bytes);
    }
    if !batch.lines.is_empty() {
        each(batch);
    }
    Ok(())
}

/// One history item, done: the bytes read through its line, whether an unsharded audit
/// reports it (a Skill asked for), and its cell when this audit checked it (this shard's).
#[derive(Debug)]
struct Done {
    read: u64,
    reported: bool,
    cell: Option<CellReport>,
}

/// What every checking thread shares.
struct Checker<'a> {
    project: &'a ValidProject,
    lexicon: &'a Lexicon,
    skills: &'a [String],
    shard: Option<Shard>,
    /// The histories' names, when there are several.
    files: Option<Vec<String>>,
}

impl Checker<'_> {
    /// Parses and checks a batch's lines, in order.
    fn check(&self, batch: Batch) -> Vec<Done> {
        let mut done = Vec::with_capacity(batch.lines.len());
        for raw in batch.lines {
            let (file, no, read) = (raw.file, raw.no, raw.read);
            let line = match raw.what {
                RawLine::Text(range) => Line::Text(&batch.text[range]),
                RawLine::TooLong => Line::TooLong,
                RawLine::NotUtf8(at) => Line::NotUtf8(at),
                RawLine::Document(conversations) => {
                    for c in conversations {
                        done.push(self.item(file, Item::Conversation(c), read, None));
                    }
                    continue;
                }
            };
            // Another shard's line is only peeked at: its id, and its Skill for the count.
            // The peek decides the line's shard, once: it is checked in that one.
            let mut ours = None;
            if let (Some(shard), Line::Text(text)) = (self.shard, line) {
                let (id, skill) = match history::peek(text) {
                    Peek::Conversation { id, skill } => (id, skill),
                    Peek::Bad => (self.bad_id(file, no), String::new()),
                    Peek::Otlp => (String::new(), String::new()),
                };
                if !id.is_empty() {
                    if !shard.takes(&id) {
                        done.push(Done {
                            read,
                            reported: self.wanted(&skill),
                            cell: None,
                        });
                        continue;
                    }
                    ours = Some(true);
                }
            }
            history::items_of(no, line, |item| {
                done.push(self.item(file, item, read, ours));
            });
        }
        done
    }

    /// One item: checked when it is reported and this shard's (`ours`, when the shard is
    /// decided already), else only counted.
    fn item(&self, file: usize, item: Item, read: u64, ours: Option<bool>) -> Done {
        let (id, skill) = match &item {
            Item::Conversation(c) => (c.id.clone(), c.skill.as_str()),
            Item::Bad { line, .. } => (self.bad_id(file, *line), ""),
        };
        let reported = self.wanted(skill);
        let ours = ours.unwrap_or_else(|| self.shard.is_none_or(|s| s.takes(&id)));
        if !reported || !ours {
            return Done {
                read,
                reported,
                cell: None,
            };
        }
        let cell = match item {
            Item::Conversation(c) => super::check_conversation(self.project, &c, self.lexicon),
            Item::Bad { line, reason } => {
                CellReport::unusable_history_line(self.file(file), line, &reason)
            }
        };
        Done {
            read,
            reported,
            cell: Some(cell),
        }
    }

    fn wanted(&self, skill: &str) -> bool {
        self.skills.is_empty() || self.skills.iter().any(|s| s == skill)
    }

    fn file(&self, file: usize) -> Option<&str> {
        self.files.as_ref().map(|f| f[file].as_str())
    }

    fn bad_id(&self, file: usize, line: usize) -> String {
        report::unusable_history_id(self.file(file), line)
    }
}
