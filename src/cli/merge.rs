//! `fibon-verify merge REPORT...`: shard reports (of `run`, `audit` or `sample`) into one
//! report.json, junit.xml and job summary, with the exit code a single unsharded command
//! would have given (a sample's: each Skill's stability over every shard's replays).

use std::path::PathBuf;

use super::Globals;
use crate::diag::Format;
use crate::errors::ExpectedError;
use crate::report::{self, Outputs, merge};

#[derive(Debug, clap::Args)]
pub(crate) struct MergeArgs {
    /// The shard reports (report.json of each `run`, `audit` or `sample` with `--shard K/N`).
    #[arg(value_name = "REPORT", required = true)]
    reports: Vec<PathBuf>,

    /// Where the merged report.json and junit.xml go.
    #[arg(long, value_name = "DIR", default_value = "target/fibon-merged")]
    report_dir: PathBuf,

    /// Also print the merged report.json on stdout.
    #[arg(long, value_name = "FORMAT", default_value = "human")]
    format: Format,

    #[command(flatten)]
    html: super::HtmlArgs,

    #[command(flatten)]
    baseline: super::BaselineArgs,
}

pub(crate) fn run(globals: &Globals, args: MergeArgs) -> Result<i32, ExpectedError> {
    let mut reports = Vec::new();
    report::prepare_dir(&args.report_dir)?;
    let baseline = args.baseline.load()?;
    args.html.check()?;
    for path in &args.reports {
        let text = super::read_input(path)?;
        let name = path.display().to_string();
        // The reason names the shard.
        let report = merge::read(&name, &text).map_err(ExpectedError::InvalidShards)?;
        reports.push((name, report));
    }
    let count = reports.len();
    let mut merged = merge::merge(reports).map_err(ExpectedError::InvalidShards)?;
    // Shards of `sample`: stability per Skill over the whole sample, not any one shard.
    let skills = crate::sample::stability::rejudge(&mut merged);
    writeln!(super::stderr(), "merged {count} reports")?;
    // The shard runs annotated their failing cells already: once is enough.
    let outputs = Outputs::new(&args.report_dir, globals.github).without_annotations();
    let outputs = baseline.apply(args.html.apply(outputs, true)?);
    let written = report::write_all(&merged, &outputs)?;
    if args.format == Format::Json {
        written.print_json(&mut super::stdout())?;
    }
    let mut err = super::stderr();
    for skill in &skills {
        writeln!(err, "{}", skill.line())?;
    }
    Ok(written.exit_code)
}
