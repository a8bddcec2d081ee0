//! `fibon-verify sample --history FILE...`: the nightly reproducibility job (one shard of
//! it with `--shard K/N`). A seeded share of
//! the recorded conversations is replayed against the target, tools answered from the
//! recording, and each Skill's decisions compared; exit 6 when a Skill's instability
//! exceeds `--max-instability`. The options, [`sample::run`], its report written and each
//! Skill's line said.

use std::path::PathBuf;

use super::Globals;
use crate::diag::Format;
use crate::errors::ExpectedError;
use crate::exit_code;
use crate::history::HistoryFile;
use crate::report;
use crate::sample::{self, SampleSpec};
use crate::vocab::Shard;

#[derive(Debug, clap::Args)]
pub(crate) struct SampleArgs {
    /// The recorded conversations: History JSONL, or OTLP JSON (GenAI spans). Repeatable,
    /// and a quoted pattern (`'logs/*.jsonl'`) stands for the files it matches, in name
    /// order: read in order, as one history.
    #[arg(long, value_name = "FILE", required = true)]
    history: Vec<PathBuf>,

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

    /// Replay only this runner's share of the selection: K of N (1-based), by a stable hash
    /// of the conversation id (as `run --shard`); `merge` joins the N reports.
    #[arg(long, value_name = "K/N")]
    shard: Option<Shard>,

    /// Where report.json and junit.xml go [default: report.dir]
    #[arg(long, value_name = "DIR")]
    report_dir: Option<PathBuf>,

    /// Only print the ids of the conversations the seed selects.
    #[arg(long)]
    dry_run: bool,

    /// Also print report.json on stdout.
    #[arg(long, value_name = "FORMAT", default_value = "human")]
    format: Format,

    #[command(flatten)]
    html: super::HtmlArgs,
}

pub(crate) fn run(globals: &Globals, args: SampleArgs) -> Result<i32, ExpectedError> {
    let histories = HistoryFile::all(&args.history)?;
    if args.dry_run {
        sample::print_selection(
            &histories,
            args.seed,
            args.rate,
            args.shard,
            &mut super::stdout(),
        )?;
        return Ok(exit_code::SUCCESS);
    }
    let project = super::valid_project(globals)?;
    args.html.check()?;
    let spec = SampleSpec {
        rate: args.rate,
        seed: args.seed,
        max_instability: args.max_instability,
        min_similarity: args.min_similarity,
        jobs: args.jobs,
        report_dir: args.report_dir,
        shard: args.shard,
    };
    let sampled = sample::run(&project, &histories, &spec, super::interrupted())?;
    let outputs = report::Outputs::new(&sampled.dir, globals.github);
    let outputs = args.html.apply(outputs, project.config.report_html)?;
    let written = report::write_all(&sampled.report, &outputs)?;
    if args.format == Format::Json {
        written.print_json(&mut super::stdout())?;
    }
    let mut err = super::stderr();
    for skill in &sampled.skills {
        writeln!(err, "{}", skill.line())?;
    }
    Ok(written.exit_code)
}
