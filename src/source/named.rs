//! Files named on the command line, checked before any work whose result depends on them:
//! an input that does not exist or cannot be read as text, an output that cannot be
//! written, is refused (64) naming the path.

use std::path::Path;

use crate::errors::ExpectedError;

/// Reads a whole input file named on the command line: exit 64 naming the path when it
/// does not exist or cannot be read as text (a folder, a device, too large, not UTF-8).
pub fn read_input(path: &Path) -> Result<String, ExpectedError> {
    check_input(path)?;
    super::read_text(path, super::MAX_FILE_BYTES).map_err(|reason| ExpectedError::Unreadable {
        path: path.to_path_buf(),
        reason,
    })
}

/// Checks, without opening it, an input named on the command line that is then streamed
/// (a history): exit 64 naming the path when it does not exist or is not a regular file
/// (a folder, a FIFO that would block, a device that never ends). Returns its size.
pub fn check_input(path: &Path) -> Result<u64, ExpectedError> {
    if !path.exists() {
        return Err(ExpectedError::PathNotFound {
            path: path.to_path_buf(),
        });
    }
    super::regular_file(path)
        .map(|meta| meta.len())
        .map_err(|reason| ExpectedError::Unreadable {
            path: path.to_path_buf(),
            reason,
        })
}

/// Checks, before any work whose result it is to keep, that an output file named on the
/// command line can be written: exit 64 naming it when it is a folder, its folder does
/// not exist, or that folder cannot be written.
pub fn check_output_file(path: &Path) -> Result<(), ExpectedError> {
    let unwritable = |reason: &str| ExpectedError::Unwritable {
        path: path.to_path_buf(),
        reason: reason.to_string(),
    };
    if path.is_dir() {
        return Err(unwritable("it is a folder"));
    }
    let dir = path
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    if !dir.is_dir() {
        return Err(unwritable("its folder does not exist"));
    }
    let probe = dir.join(format!(".fibon-write-check.{}", std::process::id()));
    std::fs::write(&probe, b"").map_err(ExpectedError::unwritable(path))?;
    let _ = std::fs::remove_file(probe);
    Ok(())
}
