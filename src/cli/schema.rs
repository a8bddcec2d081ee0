//! `fibon-verify schema KIND`: prints a JSON Schema — of contracts, scenarios, the config
//! or a quality policy (the same schema `check` validates with), or of the agent
//! protocol's request and response (docs/agent-protocol.md); `schemas/*.json` commits
//! each one.

use crate::errors::ExpectedError;
use crate::exit_code;
use crate::schema::FileKind;

#[derive(Debug, clap::Args)]
pub(crate) struct SchemaArgs {
    /// What to print the schema of.
    kind: SchemaKind,
}

/// An input file kind, or one side of the agent protocol.
#[derive(Debug, Clone, Copy, clap::ValueEnum)]
enum SchemaKind {
    /// A Skill contract.
    Contract,
    /// A scenario.
    Scenario,
    /// `fibon.yaml`.
    Config,
    /// A quality policy.
    Policy,
    /// The request an agent receives (`fibon.agent/v1`).
    AgentRequest,
    /// The response an agent answers with.
    AgentResponse,
}

pub(crate) fn run(args: SchemaArgs) -> Result<i32, ExpectedError> {
    let file = |kind: FileKind| {
        serde_json::to_string_pretty(&crate::project::schema_of(kind).value)
            .expect("a Value serializes")
    };
    let text = match args.kind {
        SchemaKind::Contract => file(FileKind::Contract),
        SchemaKind::Scenario => file(FileKind::Scenario),
        SchemaKind::Config => file(FileKind::Config),
        SchemaKind::Policy => file(FileKind::Policy),
        SchemaKind::AgentRequest => crate::target::AGENT_REQUEST_SCHEMA.trim_end().to_string(),
        SchemaKind::AgentResponse => crate::target::AGENT_RESPONSE_SCHEMA.trim_end().to_string(),
    };
    let mut out = super::stdout();
    writeln!(out, "{text}")?;
    out.flush()?;
    Ok(exit_code::SUCCESS)
}
