//! Failures a user can cause outside their files' contents — each knows its exit code.
//! Problems inside files are [`Diagnostic`](crate::diag::Diagnostic)s instead; anything
//! else is a bug ([`exit_code::INTERNAL`]).

use std::net::SocketAddr;
use std::path::{Path, PathBuf};

use crate::exit_code;

/// An expected failure of a command.
#[derive(Debug, thiserror::Error)]
pub enum ExpectedError {
    /// No paths were given and there is no config to take them from.
    #[error("no config file at {}", path.display())]
    ConfigNotFound {
        /// Where it was looked for.
        path: PathBuf,
    },
    /// A path given on the command line does not exist.
    #[error("no such file or folder: {}", path.display())]
    PathNotFound {
        /// The path.
        path: PathBuf,
    },
    /// A path given on the command line exists but cannot be read as input: a folder, a
    /// device or pipe, too large, not UTF-8.
    #[error("cannot read {}: {reason}", path.display())]
    Unreadable {
        /// The path.
        path: PathBuf,
        /// Why, for a person.
        reason: String,
    },
    /// An output file or folder cannot be created or written there.
    #[error("cannot write {}: {reason}", path.display())]
    Unwritable {
        /// The file or folder.
        path: PathBuf,
        /// Why, for a person.
        reason: String,
    },
    /// The tool gateway cannot listen on an address.
    #[error("cannot listen on {addr}: {reason}")]
    Listen {
        /// The address.
        addr: SocketAddr,
        /// Why, for a person.
        reason: String,
        /// Whether the user chose it (`--bind`, `--port`): a usage error. Otherwise the
        /// loopback port of a run could not be opened, and nothing can be evaluated.
        chosen: bool,
    },
    /// Writing the output failed (other than a closed pipe, which is not an error).
    #[error("cannot write output: {0}")]
    Output(#[from] std::io::Error),
}

impl ExpectedError {
    /// For `map_err`: an I/O error creating or writing `path`.
    pub fn unwritable(path: &Path) -> impl FnOnce(std::io::Error) -> ExpectedError + use<> {
        let path = path.to_path_buf();
        move |e| {
            let reason = match e.kind() {
                std::io::ErrorKind::AlreadyExists | std::io::ErrorKind::NotADirectory => {
                    "a file is in the way of a folder".to_string()
                }
                std::io::ErrorKind::IsADirectory => "it is a folder".to_string(),
                _ => e.to_string(),
            };
            ExpectedError::Unwritable { path, reason }
        }
    }

    /// For `map_err`: an I/O error reading the input `path` (a history, as it streams).
    pub fn unreadable(path: &Path) -> impl FnOnce(std::io::Error) -> ExpectedError + use<> {
        let path = path.to_path_buf();
        move |e| ExpectedError::Unreadable {
            path,
            reason: e.to_string(),
        }
    }

    /// For `map_err`: an I/O error binding the tool gateway to `addr`, which the user
    /// `chose` or not.
    pub fn listen(
        addr: SocketAddr,
        chosen: bool,
    ) -> impl FnOnce(std::io::Error) -> ExpectedError + use<> {
        move |e| {
            let reason = match e.kind() {
                std::io::ErrorKind::AddrInUse => "the address is already in use".to_string(),
                std::io::ErrorKind::AddrNotAvailable => {
                    "it is not an address of this host".to_string()
                }
                std::io::ErrorKind::PermissionDenied => {
                    format!("permission denied ({e})")
                }
                _ => e.to_string(),
            };
            ExpectedError::Listen {
                addr,
                reason,
                chosen,
            }
        }
    }

    /// The exit code of this failure.
    pub fn exit_code(&self) -> i32 {
        match self {
            ExpectedError::ConfigNotFound { .. }
            | ExpectedError::PathNotFound { .. }
            | ExpectedError::Unreadable { .. }
            | ExpectedError::Unwritable { .. }
            | ExpectedError::Listen { chosen: true, .. } => exit_code::USAGE,
            ExpectedError::Listen { chosen: false, .. } => exit_code::UNAVAILABLE,
            ExpectedError::Output(_) => exit_code::INTERNAL,
        }
    }

    /// What to do about it.
    pub fn help(&self) -> Option<&'static str> {
        match self {
            ExpectedError::ConfigNotFound { .. } => Some(
                "run in a folder with fibon.yaml, pass --config PATH, or name the contract and scenario files",
            ),
            ExpectedError::PathNotFound { .. } => Some("check the path"),
            ExpectedError::Unreadable { .. } => Some("name a regular UTF-8 text file"),
            ExpectedError::Unwritable { .. } => {
                Some("name a folder that exists or can be created, and that you may write to")
            }
            ExpectedError::Listen { chosen: true, .. } => {
                Some("pick a free --port (0: any free port) and an address of this host for --bind")
            }
            ExpectedError::Listen { chosen: false, .. } => Some(
                "the tool gateway listens on a free loopback port: check that 127.0.0.1 is up and that this process may open more sockets (ulimit -n)",
            ),
            ExpectedError::Output(_) => None,
        }
    }
}
