//! The report: `report.json` is the source of truth (docs/report.md, normative); the
//! terminal table, `junit.xml` and the GitHub job summary and annotations are projections
//! of it, all written by [`write_all`] (or [`Stream`], for cells that come one by one).

pub mod github;
mod json;
pub mod junit;
pub mod merge;
mod model;
pub mod progress;
mod sinks;
pub mod table;
pub mod tally;

pub use model::*;
pub use sinks::{Outputs, Stream, Written, write_all};
pub use tally::Tally;

use std::path::Path;

use crate::errors::ExpectedError;

/// Makes sure the report folder exists and can be written, before any work whose result
/// would otherwise be lost at the end.
pub fn prepare_dir(dir: &Path) -> Result<(), ExpectedError> {
    std::fs::create_dir_all(dir).map_err(ExpectedError::unwritable(dir))?;
    let probe = dir.join(format!(".fibon-write-check.{}", std::process::id()));
    std::fs::write(&probe, b"").map_err(ExpectedError::unwritable(dir))?;
    let _ = std::fs::remove_file(probe);
    Ok(())
}

/// Writes a file atomically: a temporary file beside it, renamed over it. Failures name
/// the file or folder that could not be written.
pub fn write_atomic(path: &Path, contents: &[u8]) -> Result<(), ExpectedError> {
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
