//! `fibon-verify check [PATH...]`: loads contracts, scenarios and the config, and reports
//! every problem in every file — rendered, as JSON, and as GitHub annotations.

use std::path::PathBuf;

use super::Globals;
use crate::diag::{self, Format};
use crate::errors::ExpectedError;
use crate::exit_code;
use crate::project;

#[derive(Debug, clap::Args)]
pub(crate) struct CheckArgs {
    /// Contract, scenario or config files, or folders [default: the project of --config]
    #[arg(value_name = "PATH")]
    paths: Vec<PathBuf>,

    /// Output format: `human` (stderr) or `json` (stdout).
    #[arg(long, value_name = "FORMAT", default_value = "human")]
    format: Format,

    /// Treat warnings as errors (exit 65 on any warning).
    #[arg(long)]
    deny_warnings: bool,
}

pub(crate) fn run(globals: &Globals, args: CheckArgs) -> Result<i32, ExpectedError> {
    let loaded = if args.paths.is_empty() {
        project::load_config(super::require_config(globals)?)
    } else {
        if let Some(missing) = args.paths.iter().find(|p| !p.exists()) {
            return Err(ExpectedError::PathNotFound {
                path: missing.clone(),
            });
        }
        project::load_paths(&args.paths)
    };
    let diags = &loaded.diagnostics;
    let (errors, warnings) = diag::render::counts(diags);
    let failed = errors > 0 || (args.deny_warnings && warnings > 0);
    let mut stderr = super::stderr();
    if globals.github {
        for d in diags {
            writeln!(stderr, "{}", diag::render_github(d))?;
        }
    }
    match args.format {
        Format::Json => {
            let mut out = super::stdout();
            let json = diag::render_json(diags, loaded.files);
            writeln!(
                out,
                "{}",
                serde_json::to_string_pretty(&json).expect("a Value serializes")
            )?;
            out.flush()?;
        }
        Format::Human => {
            for d in diags {
                write!(stderr, "{}", diag::render_human(d, globals.color, 100))?;
                writeln!(stderr)?;
            }
            let p = &loaded.project;
            let summary = format!(
                "checked {} {}: {} {}, {} {}",
                loaded.files,
                plural(loaded.files, "file"),
                p.contracts.len(),
                plural(p.contracts.len(), "valid contract"),
                p.scenarios.len(),
                plural(p.scenarios.len(), "valid scenario"),
            );
            match (errors, warnings) {
                (0, 0) => writeln!(stderr, "{summary}; no problems")?,
                (0, w) => writeln!(stderr, "{summary}; {w} {}", plural(w, "warning"))?,
                (e, w) => writeln!(
                    stderr,
                    "{summary}; {e} {}, {w} {}",
                    plural(e, "error"),
                    plural(w, "warning")
                )?,
            }
        }
    }
    Ok(if failed {
        exit_code::INVALID_INPUT
    } else {
        exit_code::SUCCESS
    })
}

fn plural(n: usize, word: &str) -> String {
    if n == 1 {
        word.to_string()
    } else {
        format!("{word}s")
    }
}
