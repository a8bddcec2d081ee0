//! `fibon-verify agent --mode grounded|naive`: the reference agents, for the shipped
//! examples and for trying fibon-verify out. They read a `fibon.agent/v1` request on stdin
//! and write the response on stdout.

use std::io::Read;

use crate::agent::{self, Mode};
use crate::errors::ExpectedError;
use crate::exit_code;

#[derive(Debug, clap::Args)]
pub(crate) struct AgentArgs {
    /// `grounded` fails explicitly when a tool fails; `naive` fills the gap from "memory".
    #[arg(long, value_name = "MODE", default_value = "grounded")]
    mode: Mode,
}

pub(crate) fn run(args: AgentArgs) -> Result<i32, ExpectedError> {
    // A request is small; a flood on stdin is not read past the file cap.
    let mut input = String::new();
    let _ = std::io::stdin()
        .take(crate::source::MAX_FILE_BYTES)
        .read_to_string(&mut input);
    let Ok(request) = serde_json::from_str::<serde_json::Value>(&input) else {
        return Err(ExpectedError::AgentRequest);
    };
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(ExpectedError::runtime)?;
    let response = runtime.block_on(agent::serve(args.mode, &request));
    let mut out = super::stdout();
    writeln!(out, "{response}")?;
    out.flush()?;
    Ok(exit_code::SUCCESS)
}
