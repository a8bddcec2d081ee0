//! `fibon-verify run` end to end: the filters checked, the cells planned, the platform's
//! MCP servers connected and compared with fibon.lock before any cell, the gateway
//! started, the cells run — the quality gate wired in when a policy is configured — until
//! they are done or the run is cancelled, and the report built from them. A `replay`
//! target re-checks recorded conversations instead, invoking nothing.

use std::io::IsTerminal;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use super::{Cell, Filters, RunOptions, Shard};
use crate::chat::cache::Cache;
use crate::config::Target;
use crate::errors::ExpectedError;
use crate::gateway::{Gateway, GatewayOptions, Upstreams};
use crate::project::ValidProject;
use crate::report::{self, CellReport, Report};
use crate::target::Limits;

/// What to run.
#[derive(Debug, Clone, Default)]
pub struct RunSpec {
    /// Which cells (`--skill`, `--scenario`, `--quadrant`, `--fault`).
    pub filters: Filters,
    /// This runner's part of the matrix.
    pub shard: Option<Shard>,
    /// Cells at once [default: `matrix.jobs`].
    pub jobs: Option<u32>,
    /// Runs of each cell [default: `matrix.repeat`].
    pub repeat: Option<u32>,
    /// Where the report goes [default: `report.dir`].
    pub report_dir: Option<PathBuf>,
    /// Run even when fibon.lock shows changed tools.
    pub allow_drift: bool,
    /// The seed of the quality gate's blind candidate ids.
    pub seed: u64,
    /// Where model judgements (the quality gate's `openai` judges, the refusal judge) are
    /// kept between runs; off by default.
    pub cache: Cache,
}

/// What a run came to.
#[derive(Debug)]
pub enum Ran {
    /// The cells ran (or some did, when cancelled): the report, for the folder it goes to
    /// (prepared, so it can be written).
    Report {
        /// The report.
        report: Box<Report>,
        /// Its folder.
        dir: PathBuf,
    },
    /// The filters and the shard select no cell: nothing ran, and the last report stays
    /// as it was rather than becoming an empty one.
    NoCells,
}

/// Runs the project's matrix against its target. `cancel` (a signal) stops it: running
/// agents are killed and the cells that finished are reported, as interrupted. Fails
/// before any cell without a target (64), on a filter that names nothing (64), a report
/// or cache folder that cannot be written (64), a lexicon that cannot be used (65), drift from
/// fibon.lock (4) and platform servers that are down (69).
pub fn run(
    project: &ValidProject,
    spec: &RunSpec,
    cancel: impl Future<Output = ()>,
) -> Result<Ran, ExpectedError> {
    let target = project.target("— the system to run the matrix against")?;
    spec.filters.check(project)?;
    let cells = super::plan(project, &spec.filters, spec.shard);
    let replaying = matches!(target, Target::Replay { .. });
    if cells.is_empty() && !replaying {
        return Ok(Ran::NoCells);
    }
    let dir = spec
        .report_dir
        .clone()
        .unwrap_or_else(|| project.config.report_dir.clone());
    report::prepare_dir(&dir)?;
    let config = &project.config;
    if let Some(cache_dir) = spec.cache.dir()
        && (config.refusal_judge.is_some()
            || project.policy.as_ref().is_some_and(|p| p.asks_models()))
    {
        std::fs::create_dir_all(cache_dir).map_err(ExpectedError::unwritable(cache_dir))?;
    }
    let options = RunOptions {
        lexicon: project.lexicon()?,
        refusal_judge: config.refusal_judge.clone(),
        cache: spec.cache.clone(),
        quality: project.policy.clone().map(|p| {
            let ledger = crate::quality::Ledger::with_cache(spec.cache.clone());
            (p, spec.seed, Arc::new(ledger))
        }),
        jobs: spec.jobs.unwrap_or(config.matrix.jobs) as usize,
        repeat: spec.repeat.unwrap_or(config.matrix.repeat),
        limits: Limits::default(),
    };
    let started_at = humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string();
    let start = Instant::now();
    let shard = spec.shard.map(|s| format!("{}/{}", s.index, s.total));
    if let Target::Replay { history } = target {
        // Recorded conversations: nothing is invoked, no gateway is needed.
        let mut cells = super::replay(project, history, &options.lexicon)?;
        cells.retain(|c| {
            (spec.filters.skills.is_empty() || spec.filters.skills.contains(&c.skill))
                && spec.shard.is_none_or(|s| s.takes(&c.id))
        });
        let report = Report::new(
            started_at,
            start.elapsed().as_millis() as u64,
            cells,
            shard,
            false,
        );
        return Ok(Ran::Report {
            report: Box::new(report),
            dir,
        });
    }
    crate::target::orphans::adopt();
    let runtime = crate::errors::runtime()?;
    let outcome = runtime.block_on(on_platform(
        project,
        target,
        &cells,
        &options,
        spec.allow_drift,
        cancel,
    ));
    crate::target::orphans::reap_and_say();
    let (mut cell_reports, interrupted) = outcome?;
    let budget = options.quality.as_ref().map(|(policy, seed, ledger)| {
        report::quality_budget(&mut cell_reports, policy, *seed, ledger)
    });
    let mut report = Report::new(
        started_at,
        start.elapsed().as_millis() as u64,
        cell_reports,
        shard,
        interrupted,
    );
    report.quality_budget = budget;
    if let Target::Openai {
        model,
        intervene: true,
        ..
    } = target
    {
        report.intervention = report::InterventionSummary::of(model, &report.cells);
    }
    Ok(Ran::Report {
        report: Box::new(report),
        dir,
    })
}

/// The cells, against the platform: its servers connected and checked first
/// ([`crate::probe::preflight`]), then the gateway started and the cells run with a
/// progress bar. Returns the cells' reports and whether the run was cancelled.
async fn on_platform(
    project: &ValidProject,
    target: &Target,
    cells: &[Cell],
    options: &RunOptions,
    allow_drift: bool,
    cancel: impl Future<Output = ()>,
) -> Result<(Vec<CellReport>, bool), ExpectedError> {
    let config = &project.config;
    let upstreams = Upstreams::connect(&config.platform.mcp_servers, Duration::from_secs(30)).await;
    // Before any cell: a platform server that is down would pass for a removed tool in
    // every cell, and drifted tools make every verdict suspect.
    if let Err(refused) = crate::probe::preflight(&upstreams, &project.lock_path(), allow_drift) {
        upstreams.close().await;
        return Err(refused);
    }
    let gateway_options = GatewayOptions {
        timeout_fault_delay: config.matrix.timeout_fault_delay,
        latency_fault_delay: config.matrix.latency_fault_delay,
        ..GatewayOptions::default()
    };
    let addr = gateway_options.bind;
    let gateway = match Gateway::start(gateway_options, Arc::clone(&upstreams)).await {
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
    let on_done = |c: &CellReport| {
        bar.inc(1);
        if c.verdict != report::Verdict::Pass {
            bar.println(crate::secrets::redact(&format!(
                "{} {}",
                c.verdict.as_str().to_uppercase(),
                c.id
            )));
        }
    };
    let result =
        super::run_cells(project, target, &gateway, cells, options, &on_done, cancel).await;
    bar.finish_and_clear();
    drop(gateway);
    upstreams.close().await;
    Ok(result)
}
