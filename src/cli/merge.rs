//! `fibon-verify merge REPORT...`: shard reports into one report.json, junit.xml and job
//! summary, with the exit code a single unsharded run would have given.

use std::path::PathBuf;

use super::Globals;
use crate::diag::Format;
use crate::errors::ExpectedError;
use crate::exit_code;
use crate::report::{self, merge};

#[derive(Debug, clap::Args)]
pub(crate) struct MergeArgs {
    /// The shard reports (report.json of each `run --shard K/N`).
    #[arg(value_name = "REPORT", required = true)]
    reports: Vec<PathBuf>,

    /// Where the merged report.json and junit.xml go.
    #[arg(long, value_name = "DIR", default_value = "target/fibon-merged")]
    report_dir: PathBuf,

    /// Also print the merged report.json on stdout.
    #[arg(long, value_name = "FORMAT", default_value = "human")]
    format: Format,
}

pub(crate) fn run(globals: &Globals, args: MergeArgs) -> Result<i32, ExpectedError> {
    let mut reports = Vec::new();
    report::prepare_dir(&args.report_dir)?;
    for path in &args.reports {
        let text = super::read_input(path)?;
        let report = serde_json::from_str(&text).map_err(|e| ExpectedError::InvalidData {
            path: path.clone(),
            reason: format!("cannot be read as JSON: {e}"),
        })?;
        reports.push((path.display().to_string(), report));
    }
    let merged = merge::merge(&reports).map_err(ExpectedError::InvalidShards)?;
    let json = serde_json::to_string_pretty(&merged).expect("serializes");
    report::write_atomic(&args.report_dir.join("report.json"), json.as_bytes())?;
    report::write_atomic(
        &args.report_dir.join("junit.xml"),
        merge::junit(&merged).as_bytes(),
    )?;
    if globals.github {
        super::append_summary(&merge::summary_markdown(&merged))?;
    }
    let s = &merged["summary"];
    eprintln!(
        "merged {} reports: {} cells: {} pass, {} silent_degradation, {} contract_violation, {} quality_fail, {} error\nreport: {}",
        reports.len(),
        s["cells"],
        s["pass"],
        s["silent_degradation"],
        s["contract_violation"],
        s["quality_fail"],
        s["error"],
        args.report_dir.join("report.json").display()
    );
    if args.format == Format::Json {
        super::print_line(json)?;
    }
    Ok(merged["exit_code"]
        .as_i64()
        .unwrap_or(i64::from(exit_code::INTERNAL)) as i32)
}
