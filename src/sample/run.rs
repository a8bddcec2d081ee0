//! `fibon-verify sample` end to end: the conversations a seed selects from the histories
//! (this shard's share of them with `--shard K/N`), read on their own thread into a
//! bounded queue (memory stays flat), each replayed
//! against the target through the gateway with its recorded tool results as fixtures,
//! until done or cancelled; then each Skill's stability and the sample's exit code.

use std::io::{IsTerminal, Write};
use std::path::PathBuf;
use std::time::Instant;

use futures_util::StreamExt;
use serde_json::json;

use super::stability::{self, SkillStability};
use crate::config::Target;
use crate::errors::ExpectedError;
use crate::gateway::{Gateway, GatewayOptions, Upstreams};
use crate::history::{self, Entry, HistoryError, HistoryFile, Item, Peek};
use crate::project::ValidProject;
use crate::report::{self, CellReport, Report};
use crate::target::Limits;
use crate::vocab::Shard;

/// What to sample, besides the history.
#[derive(Debug, Clone)]
pub struct SampleSpec {
    /// The share of conversations to replay.
    pub rate: f64,
    /// The seed of the selection.
    pub seed: u64,
    /// The highest share of unstable replays a Skill may have.
    pub max_instability: f64,
    /// How similar a replay's arguments must be to the recording's.
    pub min_similarity: f64,
    /// Replays at once [default: `matrix.jobs`].
    pub jobs: Option<u32>,
    /// Where the report goes [default: `report.dir`].
    pub report_dir: Option<PathBuf>,
    /// Only this shard's conversations (by a hash of their id, as `run --shard`).
    pub shard: Option<Shard>,
}

/// A sample done (or cut short).
#[derive(Debug)]
pub struct Sampled {
    /// The report, its exit code set.
    pub report: Report,
    /// Its folder (prepared, so it can be written).
    pub dir: PathBuf,
    /// Each Skill's stability, by name.
    pub skills: Vec<SkillStability>,
}

/// Writes the ids of the conversations the seed selects (this shard's), a line each
/// (`--dry-run`).
pub fn print_selection(
    histories: &[HistoryFile],
    seed: u64,
    rate: f64,
    shard: Option<Shard>,
    out: &mut impl Write,
) -> Result<(), ExpectedError> {
    let mut result = Ok(());
    let pick = Pick { seed, rate, shard };
    pick.read(histories, |item, _, _| {
        if let Item::Conversation(c) = item
            && result.is_ok()
        {
            result = writeln!(out, "{}", c.id);
        }
        result.is_ok()
    })?;
    result.map_err(ExpectedError::Stream)
}

/// Which conversations a sample takes: those the seed selects, of this shard; and every
/// line that is not a conversation, of this shard (an `error` cell: fail closed).
#[derive(Debug, Clone, Copy)]
struct Pick {
    seed: u64,
    rate: f64,
    shard: Option<Shard>,
}

impl Pick {
    fn takes(&self, id: &str, conversation: bool) -> bool {
        (!conversation || super::selected(self.seed, id, self.rate))
            && self.shard.is_none_or(|s| s.takes(id))
    }

    /// Reads `histories` in order as one, handing `each` the items taken, with the bytes
    /// read so far and, when there are several histories, the name of the item's (its
    /// lines' ids name it), until `each` returns false. A line that is surely not taken
    /// is only peeked at, not parsed. Returns the lines read.
    fn read(
        &self,
        histories: &[HistoryFile],
        mut each: impl FnMut(Item, u64, Option<&str>) -> bool,
    ) -> Result<usize, HistoryError> {
        let (mut count, mut before) = (0, 0u64);
        let names: Vec<String> = histories
            .iter()
            .map(|h| h.path.display().to_string())
            .collect();
        let mut items = Vec::new();
        for (i, h) in histories.iter().enumerate() {
            let name = (histories.len() > 1).then_some(names[i].as_str());
            let mut lines = history::Lines::open(&h.path)?;
            let mut last = 0;
            while let Some(entry) = lines.next_entry()? {
                let read = match entry {
                    Entry::Line { no, read, line } => {
                        let skip = match line {
                            history::Line::Text(text) => match history::peek(text) {
                                Peek::Conversation { id, .. } => !self.takes(&id, true),
                                _ => false,
                            },
                            _ => false,
                        };
                        if !skip {
                            history::items_of(no, line, |item| items.push(item));
                        }
                        read
                    }
                    Entry::Document {
                        conversations,
                        read,
                    } => {
                        items.extend(conversations.into_iter().map(Item::Conversation));
                        read
                    }
                };
                lines.release();
                last = read;
                for item in items.drain(..) {
                    let taken = match &item {
                        Item::Conversation(c) => self.takes(&c.id, true),
                        Item::Bad { line, .. } => {
                            self.takes(&crate::report::unusable_history_id(name, *line), false)
                        }
                    };
                    if taken && !each(item, before + read, name) {
                        return Ok(count + lines.count());
                    }
                }
            }
            count += lines.count();
            before += last.max(h.bytes);
        }
        Ok(count)
    }
}

/// Replays the selected conversations of `history` against the project's target.
/// `cancel` (a signal) stops it: running agents are killed, the replays that finished are
/// reported, as interrupted. Fails before any replay without a target (64), with a
/// `replay` target (64) or a report folder that cannot be written (64).
pub fn run(
    project: &ValidProject,
    histories: &[HistoryFile],
    spec: &SampleSpec,
    cancel: impl Future<Output = ()>,
) -> Result<Sampled, ExpectedError> {
    let target = project.target("to replay the conversations against")?;
    if matches!(target, Target::Replay { .. }) {
        return Err(ExpectedError::TargetKind {
            config: project.path.clone(),
            kind: "replay",
            why: "`sample` replays against a `command`, `http` or `openai` target",
        });
    }
    let config = &project.config;
    let jobs = spec.jobs.unwrap_or(config.matrix.jobs).max(1) as usize;
    let dir = spec
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
    let bar = report::progress::bar(histories.iter().map(|h| h.bytes).sum(), show);
    crate::target::orphans::adopt();
    let runtime = crate::errors::runtime()?;
    let replayed =
        runtime.block_on(async {
            let options = GatewayOptions {
                timeout_fault_delay: config.matrix.timeout_fault_delay,
                ..GatewayOptions::default()
            };
            let addr = options.bind;
            let gateway = Gateway::start(options, Upstreams::none())
                .await
                .map_err(ExpectedError::listen(addr, false))?;
            // The history is read on its own thread into a bounded queue: memory stays flat.
            let (tx, rx) = tokio::sync::mpsc::channel::<(Item, Option<String>)>(jobs * 2);
            let pick = Pick {
                seed: spec.seed,
                rate: spec.rate,
                shard: spec.shard,
            };
            let (histories, progress) = (histories.to_vec(), bar.clone());
            let reader = tokio::task::spawn_blocking(move || {
                pick.read(&histories, |item, read, file| {
                    progress.set_position(read);
                    tx.blocking_send((item, file.map(String::from))).is_ok()
                })
            });
            let items = futures_util::stream::unfold(rx, |mut rx| async move {
                rx.recv().await.map(|i| (i, rx))
            });
            let replays = items
                .map(|(item, file)| {
                    let gateway = &gateway;
                    async move {
                        match item {
                            // No contract: nothing to be stable against (fail closed).
                            Item::Conversation(c)
                                if !project.contracts.iter().any(|k| k.skill == c.skill) =>
                            {
                                CellReport::unknown_skill(&c)
                            }
                            Item::Conversation(c) => {
                                super::replay(
                                    &c,
                                    target,
                                    gateway,
                                    Limits::default(),
                                    spec.min_similarity,
                                )
                                .await
                            }
                            Item::Bad { line, reason } => {
                                CellReport::unusable_history_line(file.as_deref(), line, &reason)
                            }
                        }
                    }
                })
                .buffer_unordered(jobs);
            // Cancelled (a cancelled nightly job): stop, kill the running agents (dropping
            // their invocations kills their process groups), keep what finished.
            let mut cells: Vec<CellReport> = Vec::new();
            let mut replays = std::pin::pin!(replays);
            let mut stop = std::pin::pin!(cancel);
            loop {
                tokio::select! {
                    next = replays.next() => match next {
                        Some(cell) => cells.push(cell),
                        None => break,
                    },
                    () = &mut stop => return Ok::<_, ExpectedError>((cells, None)),
                }
            }
            let lines = reader.await.map_err(|e| {
                ExpectedError::Internal(format!("the history reader failed: {e}"))
            })??;
            Ok((cells, Some(lines)))
        });
    let interrupted = matches!(replayed, Ok((_, None)));
    if interrupted {
        // The history reader may still be reading: do not wait for it.
        runtime.shutdown_background();
    }
    crate::target::orphans::reap_and_say();
    let (mut cells, lines) = replayed?;
    bar.finish_and_clear();
    cells.sort_by(|a, b| a.id.cmp(&b.id));
    let skills = stability::per_skill(&cells, spec.max_instability);
    let mut report = Report::new(
        started_at,
        start.elapsed().as_millis() as u64,
        cells,
        spec.shard.map(|s| format!("{}/{}", s.index, s.total)),
        interrupted,
    );
    stability::judge(&mut report, &skills);
    let (per_skill, unstable) = stability::sampling_skills(&skills);
    report.sampling = Some(json!({
        "history": history_names(histories), "lines": lines, "rate": spec.rate, "seed": spec.seed,
        "max_instability": spec.max_instability, "min_similarity": spec.min_similarity,
        "skills": per_skill, "unstable_skills": unstable,
    }));
    Ok(Sampled {
        report,
        dir,
        skills,
    })
}

/// `sampling.history`: the history's path, or the list of them when there are several.
fn history_names(histories: &[HistoryFile]) -> serde_json::Value {
    match histories {
        [one] => json!(one.path),
        several => json!(several.iter().map(|h| &h.path).collect::<Vec<_>>()),
    }
}
