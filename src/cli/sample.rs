//! `fibon-verify sample --history FILE`: the nightly reproducibility job. A seeded share of
//! the recorded conversations is replayed against the target, tools answered from the
//! recording, and each Skill's decisions compared; exit 6 when a Skill's instability
//! exceeds `--max-instability`.

use std::collections::BTreeMap;
use std::io::IsTerminal;
use std::path::PathBuf;
use std::time::Instant;

use futures_util::StreamExt;
use serde_json::json;

use super::Globals;
use crate::diag::Format;
use crate::errors::ExpectedError;
use crate::exit_code;
use crate::gateway::{Gateway, GatewayOptions, Upstreams};
use crate::history::Item;
use crate::report::{self, CellReport, Report};
use crate::sample;
use crate::target::Limits;
use crate::vocab::{CheckId, Finding, Verdict};

#[derive(Debug, clap::Args)]
pub(crate) struct SampleArgs {
    /// The recorded conversations: History JSONL, or OTLP JSON (GenAI spans).
    #[arg(long, value_name = "FILE")]
    history: PathBuf,

    /// The share of conversations to replay.
    #[arg(long, value_name = "RATE", default_value_t = 0.1, value_parser = super::share)]
    rate: f64,

    /// The seed of the selection: the same seed picks the same conversations.
    #[arg(long, value_name = "S", default_value_t = 0)]
    seed: u64,

    /// The highest share of unstable replays a Skill may have (0 to 1).
    #[arg(long, value_name = "SHARE", default_value_t = 0.0, value_parser = super::share)]
    max_instability: f64,

    /// How similar the arguments of a replay must be to the recording's (0 to 1).
    #[arg(long, value_name = "SHARE", default_value_t = 0.8, value_parser = super::share)]
    min_similarity: f64,

    /// Replays at once [default: matrix.jobs]
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    jobs: Option<u32>,

    /// Where report.json and junit.xml go [default: report.dir]
    #[arg(long, value_name = "DIR")]
    report_dir: Option<PathBuf>,

    /// Only print the ids of the conversations the seed selects.
    #[arg(long)]
    dry_run: bool,

    /// Also print report.json on stdout.
    #[arg(long, value_name = "FORMAT", default_value = "human")]
    format: Format,
}

pub(crate) fn run(globals: &Globals, args: SampleArgs) -> Result<i32, ExpectedError> {
    let total = super::check_input(&args.history)?;
    if args.dry_run {
        let mut out = super::stdout();
        let mut result = Ok(());
        crate::history::stream(&args.history, |item, _| {
            if let Item::Conversation(c) = item
                && sample::selected(args.seed, &c.id, args.rate)
                && result.is_ok()
            {
                result = writeln!(out, "{}", c.id);
            }
        })?;
        result?;
        return Ok(exit_code::SUCCESS);
    }
    let (config, project) = super::load_valid_project(globals)?;
    let Some(target) = config.target.clone() else {
        return Err(ExpectedError::NoTarget {
            config: globals.config.clone(),
            purpose: "to replay the conversations against",
        });
    };
    if matches!(target, crate::config::Target::Replay { .. }) {
        return Err(ExpectedError::TargetKind {
            config: globals.config.clone(),
            kind: "replay",
            why: "`sample` replays against a `command`, `http` or `openai` target",
        });
    }
    let jobs = args.jobs.unwrap_or(config.matrix.jobs).max(1) as usize;
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
    crate::target::orphans::adopt();
    let runtime = super::runtime()?;
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
                (args.history.clone(), args.seed, args.rate, bar.clone());
            let reader = tokio::task::spawn_blocking(move || {
                crate::history::stream(&path, |item, read| {
                    progress.set_position(read);
                    let keep = match &item {
                        Item::Conversation(c) => sample::selected(seed, &c.id, rate),
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
                    let (gateway, target, project) = (&gateway, &target, &project);
                    async move {
                        match item {
                            // No contract: nothing to be stable against (fail closed).
                            Item::Conversation(c)
                                if !project.contracts.iter().any(|k| k.skill == c.skill) =>
                            {
                                crate::matrix::unknown_skill(&c)
                            }
                            Item::Conversation(c) => {
                                sample::replay(
                                    &c,
                                    target,
                                    gateway,
                                    Limits::default(),
                                    args.min_similarity,
                                )
                                .await
                            }
                            Item::Bad { line, reason } => bad_line(line, &reason),
                        }
                    }
                })
                .buffer_unordered(jobs);
            // Ctrl-C or SIGTERM (a cancelled nightly job): stop, kill the running agents
            // (dropping their invocations kills their process groups), keep what finished.
            let mut cells: Vec<CellReport> = Vec::new();
            let mut replays = std::pin::pin!(replays);
            let mut stop = std::pin::pin!(super::interrupted());
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
    super::report_strays(crate::target::orphans::reap());
    let (mut cells, lines) = replayed?;
    bar.finish_and_clear();
    cells.sort_by(|a, b| a.id.cmp(&b.id));
    // Per Skill: sampled, stable, unstable, the instability rate, example diffs.
    let mut skills: BTreeMap<String, (usize, usize, Vec<String>)> = BTreeMap::new();
    for c in cells.iter().filter(|c| c.verdict != Verdict::Error) {
        let e = skills.entry(c.skill.clone()).or_default();
        e.0 += 1;
        if c.verdict != Verdict::Pass {
            e.1 += 1;
            if e.2.len() < 3 {
                e.2.push(format!(
                    "{}: {}",
                    c.id,
                    c.findings.first().map(|f| f.message.as_str()).unwrap_or("")
                ));
            }
        }
    }
    let exceeded: Vec<&String> = skills
        .iter()
        .filter(|(_, (n, u, _))| *u as f64 / *n as f64 > args.max_instability + 1e-12)
        .map(|(s, _)| s)
        .collect();
    let per_skill: serde_json::Map<String, serde_json::Value> = skills
        .iter()
        .map(|(s, (n, u, ex))| (s.clone(), json!({"sampled": n, "stable": n - u, "unstable": u, "instability_rate": *u as f64 / *n as f64, "example_diffs": ex, "locked": exceeded.contains(&s)})))
        .collect();
    let mut report = Report::new(
        started_at,
        start.elapsed().as_millis() as u64,
        cells,
        None,
        interrupted,
    );
    let mut codes = Vec::new();
    if !exceeded.is_empty() {
        codes.push(exit_code::UNSTABLE);
    }
    if report.summary.error > 0 {
        codes.push(exit_code::UNAVAILABLE);
    }
    if report.summary.cells == 0 {
        codes.push(exit_code::NO_CELLS);
    }
    // Interrupted, the sample is partial: its stability says nothing yet.
    report.exit_code = if interrupted {
        exit_code::INTERRUPTED
    } else {
        exit_code::combine(codes)
    };
    report.sampling = Some(json!({
        "history": args.history, "lines": lines, "rate": args.rate, "seed": args.seed,
        "max_instability": args.max_instability, "min_similarity": args.min_similarity,
        "skills": per_skill, "unstable_skills": exceeded,
    }));
    let written = report::write_all(&report, &report::Outputs::new(&dir, globals.github))?;
    if args.format == Format::Json {
        written.print_json(&mut super::stdout())?;
    }
    let mut err = super::stderr();
    for (s, (n, u, _)) in &skills {
        let flag = if exceeded.contains(&s) {
            "  UNSTABLE: lock it and alert an admin"
        } else {
            ""
        };
        writeln!(
            err,
            "{s}: {n} sampled, {} stable, {u} unstable ({:.1}%){flag}",
            n - u,
            *u as f64 * 100.0 / *n as f64
        )?;
    }
    Ok(written.exit_code)
}

fn bad_line(line: usize, reason: &str) -> CellReport {
    CellReport::not_run(
        format!("line-{line}"),
        String::new(),
        Finding::error(CheckId::HistoryParse, format!("line {line}: {reason}")),
    )
}
