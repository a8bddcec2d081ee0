//! `fibon-verify gate --candidates FILE`: the quality gate over candidates, without
//! running agents. Exit 3 when a candidate ends blocked, high_risk, unavailable or
//! needs_recheck; 69 when no judge could be reached at all. `--experiment FILE`: Gate A,
//! then Gate B. Input the gate cannot use — a candidate id given twice, an experiment
//! score off the scale — is refused (65) at its line before anything is judged. The
//! options, then [`gate::experiment`], or [`gate::policy`] and [`gate::candidates`] with
//! the report written.

use std::path::PathBuf;

use super::Globals;
use crate::diag::Format;
use crate::errors::ExpectedError;
use crate::gate;
use crate::report::{self, Outputs};

#[derive(Debug, clap::Args)]
#[command(group(clap::ArgGroup::new("input").required(true).multiple(false).args(["candidates", "experiment"])))]
pub(crate) struct GateArgs {
    /// Candidates, JSONL: `{"id", "input", "output", "facts"}` per line (also `forbidden`,
    /// `evidence`).
    #[arg(long, value_name = "FILE")]
    candidates: Option<PathBuf>,

    /// An offline arm experiment (YAML or JSON): Gate A, then Gate B, over arms A/B/C.
    #[arg(long, value_name = "FILE")]
    experiment: Option<PathBuf>,

    /// The quality policy [default: quality.policy of --config]
    #[arg(long, value_name = "FILE")]
    policy: Option<PathBuf>,

    /// Seed of the blind candidate ids (the same seed, the same run).
    #[arg(long, value_name = "N", default_value_t = 0)]
    seed: u64,

    /// Where report.json and junit.xml go.
    #[arg(long, value_name = "DIR", default_value = "target/fibon-gate")]
    report_dir: PathBuf,

    /// Also print report.json on stdout.
    #[arg(long, value_name = "FORMAT", default_value = "human")]
    format: Format,

    #[command(flatten)]
    html: super::HtmlArgs,

    #[command(flatten)]
    baseline: super::BaselineArgs,

    #[command(flatten)]
    cache: super::cache::CacheArgs,
}

pub(crate) fn run(globals: &Globals, args: GateArgs) -> Result<i32, ExpectedError> {
    report::prepare_dir(&args.report_dir)?;
    let candidates = match (&args.experiment, &args.candidates) {
        (Some(path), _) => return experiment(&args, path),
        (None, Some(path)) => path,
        (None, None) => unreachable!("clap requires --candidates or --experiment"),
    };
    let baseline = args.baseline.load()?;
    args.html.check()?;
    let policy = gate::policy(args.policy.as_deref(), &globals.config)?;
    let report = gate::candidates(&policy, candidates, args.seed, args.cache.cache())?;
    let outputs = Outputs::new(&args.report_dir, globals.github);
    let outputs = baseline.apply(args.html.apply(outputs, true)?);
    let written = report::write_all(&report, &outputs)?;
    if args.format == Format::Json {
        written.print_json(&mut super::stdout())?;
    }
    Ok(written.exit_code)
}

/// `gate --experiment`: Gate A, then Gate B.
fn experiment(args: &GateArgs, path: &std::path::Path) -> Result<i32, ExpectedError> {
    let done = gate::experiment(
        path,
        args.policy.as_deref(),
        args.seed,
        &args.report_dir,
        args.cache.cache(),
    )?;
    let mut err = super::stderr();
    write!(err, "{}", done.report.summary())?;
    writeln!(err, "report: {}", done.path.display())?;
    if args.format == Format::Json {
        super::print_line(done.json)?;
    }
    Ok(done.report.exit_code())
}
