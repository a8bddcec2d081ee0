//! `fibon-verify gateway --scenario ID`: the gateway standalone. It serves one session
//! with the scenario's fixtures, the platform's upstream MCP servers and the faults
//! given, prints its REST and MCP URLs, serves until Ctrl-C, then writes the trace — so a
//! user can point any MCP client at it and see what their agent would see. The options,
//! [`Standalone`] started, what it serves said, and the trace written when it stops.

use std::net::{IpAddr, SocketAddr};
use std::path::PathBuf;
use std::time::Duration;

use super::Globals;
use crate::errors::ExpectedError;
use crate::exit_code;
use crate::gateway::standalone::{self, Standalone, StandaloneSpec};
use crate::gateway::{Fault, FaultPlan, NotFoundStyle};

#[derive(Debug, clap::Args)]
pub(crate) struct GatewayArgs {
    /// The scenario whose fixtures to serve (its `id`).
    #[arg(long, value_name = "ID")]
    scenario: String,

    /// A fault to inject: TOOL=KIND, or TOOL=KIND:DELAY for TIMEOUT and LATENCY
    /// (`read_page=TOOL_NOT_FOUND`, `search=TIMEOUT:2s`). Repeatable.
    #[arg(long = "fault", value_name = "TOOL=KIND", value_parser = parse_fault)]
    faults: Vec<(String, Fault)>,

    /// The port to listen on (0: any free port).
    #[arg(long, default_value_t = 0)]
    port: u16,

    /// The address to listen on. Other than loopback exposes the tools to the network.
    #[arg(long, value_name = "ADDR", default_value = "127.0.0.1")]
    bind: IpAddr,

    /// How a removed tool answers `tools/call` over MCP.
    #[arg(long, value_name = "STYLE", default_value = "jsonrpc-error")]
    not_found_style: NotFoundStyle,

    /// Write the trace here instead of stdout.
    #[arg(long, value_name = "FILE")]
    trace_out: Option<PathBuf>,

    /// Stop after this long instead of waiting for Ctrl-C (such as `30s`); Ctrl-C or
    /// SIGTERM before then still writes the trace, and exits 130.
    #[arg(long, value_name = "DURATION", value_parser = humantime::parse_duration)]
    serve_for: Option<Duration>,
}

fn parse_fault(s: &str) -> Result<(String, Fault), String> {
    FaultPlan::parse_spec(s)
}

pub(crate) fn run(globals: &Globals, args: GatewayArgs) -> Result<i32, ExpectedError> {
    let project = super::valid_project(globals)?;
    if let Some(path) = &args.trace_out {
        // Found out now, not after a session that cannot be kept.
        super::check_output_file(path)?;
    }
    let spec = StandaloneSpec {
        scenario: args.scenario,
        faults: args.faults,
        bind: SocketAddr::new(args.bind, args.port),
        not_found_style: args.not_found_style,
    };
    let runtime = super::runtime()?;
    runtime.block_on(async {
        let served = Standalone::start(&project, spec).await?;
        let stop = super::interrupted_from_now();
        write!(super::stderr(), "{}", served.banner())?;
        // Machine-readable URLs on stdout first, so scripts can read them line by line.
        {
            let mut out = super::stdout();
            writeln!(out, "{}", served.urls())?;
            out.flush()?;
        }
        // Without --serve-for a signal is the way to stop; with it, a signal cuts the time
        // short: the trace is written either way, and the exit says it was interrupted.
        let cut_short = standalone::serve_until(args.serve_for, stop).await;
        // The agent's arguments and the servers' results may echo a header's secret.
        let text = crate::secrets::redact(&served.trace());
        match &args.trace_out {
            Some(path) => {
                std::fs::write(path, text + "\n").map_err(ExpectedError::unwritable(path))?
            }
            None => {
                let mut out = super::stdout();
                writeln!(out, "{text}")?;
                out.flush()?;
            }
        }
        served.close().await?;
        Ok(if cut_short {
            exit_code::INTERRUPTED
        } else {
            exit_code::SUCCESS
        })
    })
}
