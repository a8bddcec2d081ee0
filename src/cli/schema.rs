//! `fibon-verify schema KIND`: prints the JSON Schema of contracts, scenarios or the
//! config — the same schema `check` validates with, and `schemas/*.json` commits.

use crate::errors::ExpectedError;
use crate::exit_code;
use crate::schema::FileKind;

#[derive(Debug, clap::Args)]
pub(crate) struct SchemaArgs {
    /// The file kind.
    kind: FileKind,
}

pub(crate) fn run(args: SchemaArgs) -> Result<i32, ExpectedError> {
    let text = serde_json::to_string_pretty(&crate::project::schema_of(args.kind).value)
        .expect("a Value serializes");
    let mut out = super::stdout();
    writeln!(out, "{text}")?;
    out.flush()?;
    Ok(exit_code::SUCCESS)
}
