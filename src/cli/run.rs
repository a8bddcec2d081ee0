//! `fibon-verify run`: the four-quadrant matrix end to end — plan, gateway, target, checks,
//! reports — and the exit code CI branches on.

use std::io::{IsTerminal, Write};
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
    let loaded = {
        if !globals.config.is_file() {
            return Err(ExpectedError::ConfigNotFound {
                path: globals.config.clone(),
            });
        }
        crate::project::load_config(&globals.config)
    };
    if loaded.has_errors() {
        let mut stderr = std::io::stderr().lock();
        for d in loaded.diagnostics.iter().filter(|d| d.is_error()) {
            write!(
                stderr,
                "{}",
                crate::diag::render_human(d, globals.color, 100)
            )?;
        }
        writeln!(
            stderr,
            "error: the project is invalid; `fibon-verify check` shows every problem"
        )?;
        return Ok(exit_code::INVALID_INPUT);
    }
    let project = loaded.project;
    let config = project
        .config
        .clone()
        .expect("a valid project has its config");
    let Some(target) = config.target.clone() else {
        eprintln!(
            "error: {} has no `target:` — the system to run the matrix against",
            globals.config.display()
        );
        eprintln!(
            "  help: add `target: {{kind: command, command: [\"python3\", \"agent.py\"]}}` (see the README)"
        );
        return Ok(exit_code::USAGE);
    };
    let filters = Filters {
        skills: args.skill,
        scenarios: args.scenario,
        quadrants: args.quadrant,
        faults: args.fault,
    };
    let cells = matrix::plan(&project, &filters, args.shard);
    let report_dir = args.report_dir.unwrap_or_else(|| config.report_dir.clone());
    report::prepare_dir(&report_dir)?;
    let lexicon = match &config.refusal_lexicon {
        Some(path) => match crate::checks::refusal::Lexicon::extended(path) {
            Ok(l) => std::sync::Arc::new(l),
            Err(e) => {
                eprintln!("error: {e}");
                return Ok(exit_code::INVALID_INPUT);
            }
        },
        None => crate::checks::refusal::Lexicon::builtin(),
    };
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
        let mut cells = matrix::replay(&project, history, &options.lexicon)
            .map_err(ExpectedError::unreadable(history))?;
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
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    let outcome = runtime.block_on(async {
        let upstreams = Upstreams::connect(&config.platform.mcp_servers, Duration::from_secs(30)).await;
        // Before any cell: a platform server that is down would pass for a removed tool in
        // every cell, and drifted tools make every verdict suspect. Drift (exit 4) ranks
        // above an unreachable server (69), so the lock is compared first.
        let down: Vec<_> = upstreams.servers().iter().filter(|s| s.client().is_none()).cloned().collect();
        let down_names: Vec<String> = down.iter().map(|s| s.name.clone()).collect();
        for s in &down {
            eprintln!("error: MCP server `{}` could not be reached: {}", s.name, s.error.as_deref().unwrap_or("no reason given"));
        }
        let lock_path = globals.config.parent().map(PathBuf::from).unwrap_or_default().join("fibon.lock");
        let mut refused = None;
        if !config.platform.mcp_servers.is_empty() && lock_path.is_file() {
            let current = LockFile::from_catalog(&Catalog::build(&indexmap::IndexMap::new(), &upstreams), &upstreams);
            let lock = lock::compare(&lock_path, &current, &down_names, false, args.allow_drift);
            if lock.failing() {
                match &lock.error {
                    Some(why) => eprintln!("error: {why}"),
                    None => eprintln!("error: {} drifted", lock_path.display()),
                }
                for c in lock.changes.iter().filter(|c| c.failing) {
                    eprintln!("  {}", c.detail);
                }
                eprintln!("  help: review with `fibon-verify probe`, then `probe --update-lock`, or pass --allow-drift");
                refused = Some(exit_code::PROBE_FAILED);
            }
        }
        if refused.is_none() && !down.is_empty() {
            eprintln!("  help: its tools would look removed to every cell; check with `fibon-verify probe`");
            refused = Some(exit_code::UNAVAILABLE);
        }
        if let Some(code) = refused {
            eprintln!("no cell was run");
            upstreams.close().await;
            return Ok::<_, ExpectedError>(Err(code));
        }
        let gateway_options = GatewayOptions {
            timeout_fault_delay: config.matrix.timeout_fault_delay,
            latency_fault_delay: config.matrix.latency_fault_delay,
            ..GatewayOptions::default()
        };
        let addr = gateway_options.bind;
        let gateway = match Gateway::start(gateway_options, std::sync::Arc::clone(&upstreams)).await {
            Ok(gateway) => gateway,
            Err(e) => {
                upstreams.close().await;
                return Err(ExpectedError::listen(addr, false)(e));
            }
        };
        let show = report::progress::should_show(std::io::stderr().is_terminal(), std::env::var("CI").ok().as_deref());
        let bar = report::progress::bar(cells.len() as u64, show);
        let on_done = |c: &report::CellReport| {
            bar.inc(1);
            if c.verdict != report::Verdict::Pass {
                bar.println(format!("{} {}", c.verdict.as_str().to_uppercase(), c.id));
            }
        };
        let cancel = super::interrupted();
        let result = matrix::run_cells(&project, &target, &gateway, &cells, &options, &on_done, cancel).await;
        bar.finish_and_clear();
        drop(gateway);
        upstreams.close().await;
        Ok(Ok(result))
    });
    super::report_strays(crate::target::orphans::reap());
    let (mut cell_reports, interrupted) = match outcome? {
        Ok(result) => result,
        Err(code) => return Ok(code),
    };
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
