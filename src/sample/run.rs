//! `fibon-verify sample` end to end: the conversations a seed selects from a History,
//! read on their own thread into a bounded queue (memory stays flat), each replayed
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
use crate::history::{HistoryFile, Item};
use crate::project::ValidProject;
use crate::report::{self, CellReport, Report};
use crate::target::Limits;
use crate::vocab::CheckId;

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

/// Writes the ids of the conversations the seed selects, a line each (`--dry-run`).
pub fn print_selection(
    history: &HistoryFile,
    seed: u64,
    rate: f64,
    out: &mut impl Write,
) -> Result<(), ExpectedError> {
    let mut result = Ok(());
    crate::history::stream(&history.path, |item, _| {
        if let Item::Conversation(c) = item
            && super::selected(seed, &c.id, rate)
            && result.is_ok()
        {
            result = writeln!(out, "{}", c.id);
        }
    })?;
    result.map_err(ExpectedError::Stream)
}

/// Replays the selected conversations of `history` against the project's target.
/// `cancel` (a signal) stops it: running agents are killed, the replays that finished are
/// reported, as interrupted. Fails before any replay without a target (64), with a
/// `replay` target (64) or a report folder that cannot be written (64).
pub fn run(
    project: &ValidProject,
    history: &HistoryFile,
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
    let bar = report::progress::bar(history.bytes, show);
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
            let (tx, rx) = tokio::sync::mpsc::channel::<Item>(jobs * 2);
            let (path, seed, rate, progress) =
                (history.path.clone(), spec.seed, spec.rate, bar.clone());
            let reader = tokio::task::spawn_blocking(move || {
                crate::history::stream(&path, |item, read| {
                    progress.set_position(read);
                    let keep = match &item {
                        Item::Conversation(c) => super::selected(seed, &c.id, rate),
                        Item::Bad { .. } => true,
                    };
                    if keep {
                        let _ = tx.blocking_send(item);
                    }
                })
            });
            let items = futures_util::stream::unfold(rx, |mut rx| async move {
                rx.recv().await.map(|i| (i, rx))
            });
            let replays = items
                .map(|item| {
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
                                CellReport::unusable_line(CheckId::HistoryParse, line, &reason)
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
        None,
        interrupted,
    );
    stability::judge(&mut report, &skills);
    let (per_skill, unstable) = stability::sampling_skills(&skills);
    report.sampling = Some(json!({
        "history": history.path, "lines": lines, "rate": spec.rate, "seed": spec.seed,
        "max_instability": spec.max_instability, "min_similarity": spec.min_similarity,
        "skills": per_skill, "unstable_skills": unstable,
    }));
    Ok(Sampled {
        report,
        dir,
        skills,
    })
}
