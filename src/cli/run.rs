//! `fibon-verify run`: the four-quadrant matrix end to end — plan, gateway, target, checks,
//! reports — and the exit code CI branches on.

use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use super::Globals;
use crate::contract::FaultKind;
use crate::diag::Format;
use crate::errors::ExpectedError;
use crate::exit_code;
use crate::gateway::{Catalog, Gateway, GatewayOptions, Upstreams};
use crate::matrix::{self, Filters, Quadrant, RunOptions, Shard};
use crate::probe::{LockFile, lock};
use crate::report::{self, Report};
use crate::target::Limits;

#[derive(Debug, clap::Args)]
pub(crate) struct RunArgs {
    /// Only these skills (repeatable).
    #[arg(long, value_name = "SKILL")]
    skill: Vec<String>,

    /// Only these scenarios, by id (repeatable).
    #[arg(long, value_name = "ID")]
    scenario: Vec<String>,

    /// Only these quadrants (repeatable).
    #[arg(long, value_name = "Q", ignore_case = true)]
    quadrant: Vec<Quadrant>,

    /// Only cells with these faults (repeatable), such as TIMEOUT.
    #[arg(long, value_name = "KIND")]
    fault: Vec<FaultKind>,

    /// Cells run at once [default: matrix.jobs]
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    jobs: Option<u32>,

    /// Run each cell N times; a cell passes only if every run passes [default: matrix.repeat]
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    repeat: Option<u32>,

    /// Run only this runner's part of the matrix: K of N (1-based), by a stable hash of the
    /// cell id.
    #[arg(long, value_name = "K/N")]
    shard: Option<Shard>,

    /// Where report.json and junit.xml go [default: report.dir]
    #[arg(long, value_name = "DIR")]
    report_dir: Option<PathBuf>,

    /// Also print report.json on stdout.
    #[arg(long, value_name = "FORMAT", default_value = "human")]
    format: Format,

    /// Run even when fibon.lock shows changed tool descriptions or schemas.
    #[arg(long)]
    allow_drift: bool,

    /// Seed of the quality gate's blind candidate ids.
    #[arg(long, value_name = "N", default_value_t = 0)]
    seed: u64,
}

pub(crate) fn run(globals: &Globals, args: RunArgs) -> Result<i32, ExpectedError> {
    let (config, project) = super::load_valid_project(globals)?;
    let Some(target) = config.target.clone() else {
        return Err(ExpectedError::NoTarget {
            config: globals.config.clone(),
            purpose: "— the system to run the matrix against",
        });
    };
    let filters = Filters {
        skills: args.skill,
        scenarios: args.scenario,
        quadrants: args.quadrant,
        faults: args.fault,
    };
    // A filter value that names nothing is a typo, not an empty selection.
    if let Some(u) = filters.unknown(&project).into_iter().next() {
        let known: Vec<String> = if u.flag == "--skill" {
            project.contracts.iter().map(|c| c.skill.clone()).collect()
        } else {
            project.scenarios.iter().map(|s| s.id.clone()).collect()
        };
        return Err(ExpectedError::Unknown {
            what: if u.flag == "--skill" {
                "skill"
            } else {
                "scenario"
            },
            value: u.value,
            within: None,
            suggestion: u.suggestion,
            known,
        });
    }
    let cells = matrix::plan(&project, &filters, args.shard);
    let replaying = matches!(target, crate::config::Target::Replay { .. });
    if cells.is_empty() && !replaying {
        // Nothing to run: the last report stays as it was rather than becoming an empty one.
        writeln!(
            super::stderr(),
            "0 cells selected by the filters{}; no report written",
            args.shard.map_or_else(String::new, |s| format!(
                " and shard {}/{}",
                s.index, s.total
            ))
        )?;
        return Ok(exit_code::NO_CELLS);
    }
    let report_dir = args.report_dir.unwrap_or_else(|| config.report_dir.clone());
    report::prepare_dir(&report_dir)?;
    let lexicon = super::lexicon(&config)?;
    let options = RunOptions {
        lexicon,
        refusal_judge: config.refusal_judge.clone(),
        quality: project.policy.clone().map(|p| {
            (
                p,
                args.seed,
                std::sync::Arc::new(crate::quality::Ledger::default()),
            )
        }),
        jobs: args.jobs.unwrap_or(config.matrix.jobs) as usize,
        repeat: args.repeat.unwrap_or(config.matrix.repeat),
        limits: Limits::default(),
    };
    let started_at = humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string();
    let start = Instant::now();
    if let crate::config::Target::Replay { history } = &target {
        // Recorded conversations: nothing is invoked, no gateway is needed.
        let mut cells = matrix::replay(&project, history, &options.lexicon)?;
        cells.retain(|c| {
            (filters.skills.is_empty() || filters.skills.contains(&c.skill))
                && args.shard.is_none_or(|s| s.takes(&c.id))
        });
        let report = Report::new(
            started_at,
            start.elapsed().as_millis() as u64,
            cells,
            args.shard.map(|s| format!("{}/{}", s.index, s.total)),
            false,
        );
        return write(globals, &report, &report_dir, args.format);
    }
    crate::target::orphans::adopt();
    let runtime = super::runtime()?;
    let outcome = runtime.block_on(async {
        let upstreams =
            Upstreams::connect(&config.platform.mcp_servers, Duration::from_secs(30)).await;
        // Before any cell: a platform server that is down would pass for a removed tool in
        // every cell, and drifted tools make every verdict suspect. Drift (exit 4) ranks
        // above an unreachable server (69), so the lock is compared first.
        let down: Vec<_> = upstreams
            .servers()
            .iter()
            .filter(|s| s.client().is_none())
            .cloned()
            .collect();
        let down_names: Vec<String> = down.iter().map(|s| s.name.clone()).collect();
        let down_servers: Vec<(String, String)> = down
            .iter()
            .map(|s| {
                (
                    s.name.clone(),
                    s.error.clone().unwrap_or_else(|| "no reason given".into()),
                )
            })
            .collect();
        let down = (!down.is_empty()).then(|| ExpectedError::ServersDown {
            servers: down_servers.clone(),
            before_cells: true,
        });
        let lock_path = globals
            .config
            .parent()
            .map(PathBuf::from)
            .unwrap_or_default()
            .join("fibon.lock");
        let mut refused = None;
        // A lockfile that is there but cannot be read (a folder, say) fails, as in `probe`.
        if !config.platform.mcp_servers.is_empty() && lock_path.exists() {
            let current = LockFile::from_catalog(
                &Catalog::build(&indexmap::IndexMap::new(), &upstreams),
                &upstreams,
            );
            let lock = lock::compare(&lock_path, &current, &down_names, false, args.allow_drift);
            if lock.failing() {
                if down.is_some() {
                    // Said too, though the drift (exit 4) is what ends the run.
                    super::render(
                        &ExpectedError::ServersDown {
                            servers: down_servers.clone(),
                            before_cells: false,
                        },
                        globals.color,
                    );
                }
                refused = Some(ExpectedError::LockFailed {
                    path: lock_path.clone(),
                    reason: lock.error.clone(),
                    changes: lock
                        .changes
                        .iter()
                        .filter(|c| c.failing)
                        .map(|c| c.detail.clone())
                        .collect(),
                });
            }
        }
        if let Some(refused) = refused.or(down) {
            upstreams.close().await;
            return Err(refused);
        }
        let gateway_options = GatewayOptions {
            timeout_fault_delay: config.matrix.timeout_fault_delay,
            latency_fault_delay: config.matrix.latency_fault_delay,
            ..GatewayOptions::default()
        };
        let addr = gateway_options.bind;
        let gateway = match Gateway::start(gateway_options, std::sync::Arc::clone(&upstreams)).await
        {
            Ok(gateway) => gateway,
            Err(e) => {
                upstreams.close().await;
                return Err(ExpectedError::listen(addr, false)(e));
            }
        };
        let show = report::progress::should_show(
            std::io::stderr().is_terminal(),
            std::env::var("CI").ok().as_deref(),
        );
        let bar = report::progress::bar(cells.len() as u64, show);
        let on_done = |c: &report::CellReport| {
            bar.inc(1);
            if c.verdict != report::Verdict::Pass {
                bar.println(format!("{} {}", c.verdict.as_str().to_uppercase(), c.id));
            }
        };
        let cancel = super::interrupted();
        let result = matrix::run_cells(
            &project, &target, &gateway, &cells, &options, &on_done, cancel,
        )
        .await;
        bar.finish_and_clear();
        drop(gateway);
        upstreams.close().await;
        Ok(result)
    });
    super::report_strays(crate::target::orphans::reap());
    let (mut cell_reports, interrupted) = outcome?;
    let budget = options.quality.as_ref().map(|(policy, seed, ledger)| {
        let (calls, cost, reached) = ledger.totals();
        // No judge could be reached at all: nothing was judged (fail closed, exit 69).
        if reached == 0 && calls > 0 {
            for c in cell_reports
                .iter_mut()
                .filter(|c| c.verdict == crate::report::Verdict::QualityFail)
            {
                c.verdict = crate::report::Verdict::Error;
            }
        }
        serde_json::json!({
            "policy": policy.name, "policy_version": policy.version, "seed": seed,
            "calls": calls, "max_calls": policy.budget.max_calls, "cost_usd": cost,
            "reserved_usd": policy.budget.reservation(), "limit_usd": policy.budget.limit_usd,
        })
    });
    let mut report = Report::new(
        started_at,
        start.elapsed().as_millis() as u64,
        cell_reports,
        args.shard.map(|s| format!("{}/{}", s.index, s.total)),
        interrupted,
    );
    report.quality_budget = budget;
    if let crate::config::Target::Openai {
        model,
        intervene: true,
        ..
    } = &target
    {
        report.intervention = report::InterventionSummary::of(model, &report.cells);
    }
    write(globals, &report, &report_dir, args.format)
}

/// Writes the report's outputs; returns its exit code.
fn write(
    globals: &Globals,
    report: &Report,
    dir: &Path,
    format: Format,
) -> Result<i32, ExpectedError> {
    let written = report::write_all(report, &report::Outputs::new(dir, globals.github))?;
    if format == Format::Json {
        written.print_json(&mut super::stdout())?;
    }
    Ok(written.exit_code)
}
