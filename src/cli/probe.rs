//! `fibon-verify probe`: checks the target platform for each Skill's capabilities and the
//! tools against `fibon.lock`. Exit 4 when a critical Skill is unavailable or the lock
//! drifted, 69 when a server cannot be reached at all. The options, [`probe::run`], and
//! its report rendered.

use std::path::PathBuf;
use std::time::Duration;

use super::Globals;
use crate::diag::Format;
use crate::errors::ExpectedError;
use crate::probe::{self, ProbeOptions};

#[derive(Debug, clap::Args)]
pub(crate) struct ProbeArgs {
    /// Output format: `human` (tables on stderr) or `json` (stdout).
    #[arg(long, value_name = "FORMAT", default_value = "human")]
    format: Format,

    /// Write the lockfile from the tools found (review the diff first).
    #[arg(long)]
    update_lock: bool,

    /// Report changed descriptions and schemas without failing.
    #[arg(long)]
    allow_drift: bool,

    /// The lockfile [default: fibon.lock beside the config]
    #[arg(long, value_name = "PATH")]
    lock: Option<PathBuf>,

    /// How long each MCP server may take to connect and list its tools.
    #[arg(long, value_name = "DURATION", default_value = "10s", value_parser = humantime::parse_duration)]
    server_timeout: Duration,

    /// How long each network endpoint may take to answer.
    #[arg(long, value_name = "DURATION", default_value = "5s", value_parser = humantime::parse_duration)]
    network_timeout: Duration,
}

pub(crate) fn run(globals: &Globals, args: ProbeArgs) -> Result<i32, ExpectedError> {
    let project = super::valid_project(globals)?;
    let options = ProbeOptions {
        server_timeout: args.server_timeout,
        network_timeout: args.network_timeout,
        lock_path: args.lock.unwrap_or_else(|| project.lock_path()),
        update_lock: args.update_lock,
        allow_drift: args.allow_drift,
    };
    let report = probe::run(&project, &options)?;
    let mut stderr = super::stderr();
    if globals.github {
        for line in probe::report::render_github(&report) {
            writeln!(stderr, "{line}")?;
        }
    }
    match args.format {
        Format::Json => {
            let mut out = super::stdout();
            writeln!(
                out,
                "{}",
                serde_json::to_string_pretty(&report).expect("serializes")
            )?;
            out.flush()?;
        }
        Format::Human => write!(stderr, "{}", probe::report::render_table(&report, 100))?,
    }
    Ok(report.exit_code)
}
