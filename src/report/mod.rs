//! The report: `report.json` is the source of truth (docs/report.md, normative); the
//! terminal table, `junit.xml`, `report.html` and the GitHub job summary and annotations
//! are projections of it (compared with a `--baseline` when there is one), all written by [`write_all`] (or [`Stream`], for cells that come one by one).

pub mod baseline;
pub mod github;
pub mod html;
mod json;
pub mod junit;
pub mod merge;
mod model;
pub mod progress;
mod redact;
mod sinks;
pub mod table;
pub mod tally;

pub use baseline::{Baseline, FailOn};
pub use model::*;
pub use sinks::{Outputs, Stream, Written, write_all};
pub use tally::Tally;

use std::path::Path;

use crate::errors::ExpectedError;
use crate::quality::{Ledger, Policy};

/// Makes sure the report folder exists and can be written, before any work whose result
/// would otherwise be lost at the end.
pub fn prepare_dir(dir: &Path) -> Result<(), ExpectedError> {
    std::fs::create_dir_all(dir).map_err(ExpectedError::unwritable(dir))?;
    let probe = dir.join(format!(".fibon-write-check.{}", std::process::id()));
    std::fs::write(&probe, b"").map_err(ExpectedError::unwritable(dir))?;
    let _ = std::fs::remove_file(probe);
    Ok(())
}

/// The quality gate's account for `quality_budget` — its policy, seed, judge calls and
/// cost against the budget, and the judgements served from the cache — once the cells it
/// judged fail closed: when no judge could be reached at all, nothing was judged, and a
/// `quality_fail` cell becomes `error` (exit 69). Call it before the report is built
/// from the cells.
pub fn quality_budget(
    cells: &mut [CellReport],
    policy: &Policy,
    seed: u64,
    ledger: &Ledger,
) -> serde_json::Value {
    let (calls, cost, reached) = ledger.totals();
    if reached == 0 && calls > 0 {
        for c in cells
            .iter_mut()
            .filter(|c| c.verdict == Verdict::QualityFail)
        {
            c.verdict = Verdict::Error;
        }
    }
    serde_json::json!({
        "policy": policy.name, "policy_version": policy.version, "seed": seed,
        "calls": calls, "max_calls": policy.budget.max_calls, "cost_usd": cost,
        "reserved_usd": policy.budget.reservation(), "limit_usd": policy.budget.limit_usd,
        "cache_hits": ledger.cache_hits(),
    })
}

/// Writes a file atomically: a temporary file beside it, renamed over it, with the
/// secrets redacted (crate::secrets). Failures name the file or folder that could not be
/// written.
pub fn write_atomic(path: &Path, contents: &[u8]) -> Result<(), ExpectedError> {
    let contents = &*crate::secrets::current().redact_bytes(contents);
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).map_err(ExpectedError::unwritable(dir))?;
    }
    let tmp = path.with_file_name(format!(
        ".{}.tmp",
        path.file_name()
            .and_then(|n| n.to_str())
            .unwrap_or("report")
    ));
    std::fs::write(&tmp, contents).map_err(ExpectedError::unwritable(path))?;
    std::fs::rename(&tmp, path).map_err(ExpectedError::unwritable(path))
}
