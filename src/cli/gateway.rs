//! `fibon-verify gateway --scenario ID`: the gateway standalone. It serves one session
//! with the scenario's fixtures, the platform's upstream MCP servers and the faults
//! given, prints its REST and MCP URLs, serves until Ctrl-C, then writes the trace — so a
//! user can point any MCP client at it and see what their agent would see.

use std::net::{IpAddr, SocketAddr};
use std::path::PathBuf;
use std::time::Duration;

use serde_json::json;

use super::Globals;
use crate::diag::did_you_mean;
use crate::errors::ExpectedError;
use crate::exit_code;
use crate::gateway::{
    Fault, FaultPlan, Gateway, GatewayOptions, NotFoundStyle, SessionSpec, Upstreams,
};

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
    let (_, project) = super::load_valid_project(globals)?;
    if let Some(path) = &args.trace_out {
        // Found out now, not after a session that cannot be kept.
        super::check_output_file(path)?;
    }
    let Some(scenario) = project.scenarios.iter().find(|s| s.id == args.scenario) else {
        let ids: Vec<&str> = project.scenarios.iter().map(|s| s.id.as_str()).collect();
        return Err(ExpectedError::Unknown {
            what: "scenario",
            value: args.scenario.clone(),
            within: None,
            suggestion: did_you_mean(&args.scenario, ids.iter().copied()).map(String::from),
            known: ids.iter().map(|s| s.to_string()).collect(),
        });
    };
    let config = project
        .config
        .clone()
        .unwrap_or_else(|| unreachable!("a valid project has a config"));
    let runtime = super::runtime()?;
    runtime.block_on(async {
        // The address first: a port in use must not wait for upstream servers to start.
        let addr = SocketAddr::new(args.bind, args.port);
        let listener = tokio::net::TcpListener::bind(addr).await.map_err(ExpectedError::listen(addr, true))?;
        let upstreams = Upstreams::connect(&config.platform.mcp_servers, Duration::from_secs(30)).await;
        let unreachable: Vec<(String, String)> = upstreams
            .servers()
            .iter()
            .filter_map(|s| s.error.as_ref().map(|e| (s.name.clone(), e.clone())))
            .collect();
        let options = GatewayOptions {
            bind: addr,
            timeout_fault_delay: config.matrix.timeout_fault_delay,
            latency_fault_delay: config.matrix.latency_fault_delay,
            not_found_style: args.not_found_style,
            ..GatewayOptions::default()
        };
        let gateway = match Gateway::serve(listener, options, std::sync::Arc::clone(&upstreams)) {
            Ok(gateway) => gateway,
            Err(e) => {
                upstreams.close().await;
                return Err(ExpectedError::listen(addr, true)(e));
            }
        };
        let mut plan = FaultPlan::none();
        for (tool, fault) in &args.faults {
            plan.set(tool, Some(*fault));
        }
        let handle = gateway.open_session(SessionSpec {
            fixtures: scenario.tools.clone(),
            schema_drift: scenario.schema_drift.clone(),
            faults: plan,
        });
        let catalog = handle.session().catalog();
        // A fault on a tool nobody serves injects nothing: a typo must not pass for a test.
        let unknown: Vec<&String> = args.faults.iter().map(|(t, _)| t).filter(|t| !catalog.tools.contains_key(*t)).collect();
        if let Some((last, others)) = unknown.split_last() {
            let unserved = |tool: &String| ExpectedError::UnservedFault {
                tool: tool.clone(),
                suggestion: did_you_mean(tool, catalog.tools.keys().map(String::as_str)).map(String::from),
                served: catalog.tools.keys().cloned().collect(),
            };
            for tool in others {
                super::render(&unserved(tool), globals.color);
            }
            let refused = unserved(last);
            drop(handle);
            drop(gateway);
            upstreams.close().await;
            return Err(refused);
        }
        {
            let mut err = super::stderr();
            writeln!(err, "gateway for scenario `{}` (skill `{}`)", scenario.id, scenario.skill)?;
            writeln!(err, "REST  {}", handle.tools_url())?;
            writeln!(err, "MCP   {}", handle.mcp_url())?;
            let tools: Vec<String> = catalog.tools.iter().map(|(n, e)| format!("{n} ({})", e.provenance)).collect();
            writeln!(err, "tools: {}", if tools.is_empty() { "none".into() } else { tools.join(", ") })?;
            for (tool, fault) in &args.faults {
                writeln!(err, "fault: {tool} = {}", fault.kind)?;
            }
            for p in &catalog.problems {
                writeln!(err, "warning: {p}")?;
            }
            writeln!(err, "serving until Ctrl-C")?;
        }
        // Machine-readable URLs on stdout first, so scripts can read them line by line.
        {
            let mut out = super::stdout();
            writeln!(out, "{}", json!({"tools_url": handle.tools_url(), "mcp_url": handle.mcp_url()}))?;
            out.flush()?;
        }
        // Without --serve-for a signal is the way to stop; with it, a signal cuts the time
        // short: the trace is written either way, and the exit says it was interrupted.
        let cut_short = match args.serve_for {
            Some(d) => tokio::select! {
                () = tokio::time::sleep(d) => false,
                () = super::interrupted() => true,
            },
            None => {
                super::interrupted().await;
                false
            }
        };
        let trace = json!({"scenario": scenario.id, "session": handle.session().id, "events": handle.trace()});
        let text = serde_json::to_string_pretty(&trace).expect("a Value serializes");
        match &args.trace_out {
            Some(path) => std::fs::write(path, text + "\n").map_err(ExpectedError::unwritable(path))?,
            None => {
                let mut out = super::stdout();
                writeln!(out, "{text}")?;
                out.flush()?;
            }
        }
        upstreams.close().await;
        if !unreachable.is_empty() {
            return Err(ExpectedError::ServersDown { servers: unreachable, before_cells: false });
        }
        Ok(if cut_short { exit_code::INTERRUPTED } else { exit_code::SUCCESS })
    })
}
