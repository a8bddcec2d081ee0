//! `fibon-verify run`: the options of a matrix run, [`matrix::run`] on the project of
//! `--config`, its report written, and the exit code CI branches on.

use std::path::PathBuf;

use super::Globals;
use crate::contract::FaultKind;
use crate::diag::Format;
use crate::errors::ExpectedError;
use crate::exit_code;
use crate::matrix::{self, Filters, Quadrant, Ran, RunSpec, Shard};
use crate::report;

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

    #[command(flatten)]
    html: super::HtmlArgs,

    #[command(flatten)]
    baseline: super::BaselineArgs,

    #[command(flatten)]
    cache: super::cache::CacheArgs,
}

pub(crate) fn run(globals: &Globals, args: RunArgs) -> Result<i32, ExpectedError> {
    let project = super::valid_project(globals)?;
    let baseline = args.baseline.load()?;
    args.html.check()?;
    let spec = RunSpec {
        filters: Filters {
            skills: args.skill,
            scenarios: args.scenario,
            quadrants: args.quadrant,
            faults: args.fault,
        },
        shard: args.shard,
        jobs: args.jobs,
        repeat: args.repeat,
        report_dir: args.report_dir,
        allow_drift: args.allow_drift,
        seed: args.seed,
        cache: args.cache.cache(),
    };
    match matrix::run(&project, &spec, super::interrupted())? {
        Ran::NoCells => {
            writeln!(
                super::stderr(),
                "0 cells selected by the filters{}; no report written",
                args.shard.map_or_else(String::new, |s| format!(
                    " and shard {}/{}",
                    s.index, s.total
                ))
            )?;
            Ok(exit_code::NO_CELLS)
        }
        Ran::Report { report, dir } => {
            let outputs = report::Outputs::new(&dir, globals.github);
            let outputs = baseline.apply(args.html.apply(outputs, project.config.report_html)?);
            let written = report::write_all(&report, &outputs)?;
            if args.format == Format::Json {
                written.print_json(&mut super::stdout())?;
            }
            Ok(written.exit_code)
        }
    }
}
