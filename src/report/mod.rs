//! The report: `report.json` is the source of truth (DESIGN.md, "Report", normative); the
//! terminal table, `junit.xml` and the GitHub job summary are projections of it.

pub mod github;
pub mod junit;
pub mod merge;
mod model;
pub mod progress;
pub mod table;

pub use model::*;

use std::path::Path;

/// Writes a file atomically: a temporary file beside it, renamed over it.
pub fn write_atomic(path: &Path, contents: &[u8]) -> std::io::Result<()> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir)?;
    }
    let tmp = path.with_file_name(format!(
        ".{}.tmp",
        path.file_name()
            .and_then(|n| n.to_str())
            .unwrap_or("report")
    ));
    std::fs::write(&tmp, contents)?;
    std::fs::rename(&tmp, path)
}
