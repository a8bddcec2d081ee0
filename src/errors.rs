//! Failures a user can cause — each knows its exit code, names the path, flag or value
//! at fault, and says what to do. Every command ends in one of these or in its own
//! outcome; [`crate::cli`] renders them all the same way (`error: …`, then `  help: …`).
//! Problems inside files are [`Diagnostic`]s, carried by [`ExpectedError::InvalidProject`]
//! and [`ExpectedError::InvalidFile`]. Anything else is a bug ([`exit_code::INTERNAL`]).
//!
//! The codes follow one rule in every command (docs/reference.md, "Commands"): a path or
//! value on the command line that cannot be used is a usage error (64), whether it is an
//! input that cannot be read or an output that cannot be written; bad data in a file is
//! 65; a server, target or judge that cannot be reached is 69. There is deliberately no
//! `From<std::io::Error>`: an I/O error is mapped where it happens, to the path it
//! happened on ([`ExpectedError::unwritable`], [`ExpectedError::unreadable`]), or, for the
//! terminal's own streams, to [`ExpectedError::Stream`].

use std::net::SocketAddr;
use std::path::{Path, PathBuf};

use crate::diag::Diagnostic;
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
    /// device or pipe, too large, not UTF-8, or a read that failed.
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
    /// The project of `--config` has errors (shown first, as diagnostics naming their
    /// files).
    #[error("the project is invalid; `fibon-verify check` shows every problem")]
    InvalidProject {
        /// Its problems (errors only).
        diagnostics: Vec<Diagnostic>,
    },
    /// A file named on the command line has errors (shown first, as diagnostics), such as
    /// a quality policy, candidates with an id given twice, or an experiment.
    #[error("cannot use {}: {}", path.display(), errors(diagnostics))]
    InvalidFile {
        /// The file.
        path: PathBuf,
        /// Its problems (warnings too, as they were found).
        diagnostics: Vec<Diagnostic>,
    },
    /// A file's contents cannot be used: not JSON, not the format it should be.
    #[error("{}: {reason}", path.display())]
    InvalidData {
        /// The file.
        path: PathBuf,
        /// What is wrong, for a person.
        reason: String,
    },
    /// Shard reports that cannot be merged together (the reason names the reports).
    #[error("{0}")]
    InvalidShards(String),
    /// The config's `checks.refusal_lexicon` cannot be used.
    #[error("the refusal lexicon cannot be used: {reason}")]
    Lexicon {
        /// The lexicon file.
        path: PathBuf,
        /// Why (naming the file), for a person.
        reason: String,
    },
    /// The config has no `target:`, which the command needs.
    #[error("{} has no `target:` {purpose}", config.display())]
    NoTarget {
        /// The config.
        config: PathBuf,
        /// What the target is for, as the rest of the sentence.
        purpose: &'static str,
    },
    /// The config's target is of a kind the command cannot use.
    #[error("the `{kind}` target of {} cannot be used: {why}", config.display())]
    TargetKind {
        /// The config.
        config: PathBuf,
        /// The target's kind.
        kind: &'static str,
        /// What the command needs instead.
        why: &'static str,
    },
    /// `gate` without `--policy`, and the config names no quality policy.
    #[error("no quality policy: pass --policy FILE or set `quality: {{policy: FILE}}` in {}", config.display())]
    NoPolicy {
        /// The config.
        config: PathBuf,
    },
    /// The quality policy's plan reserves more than its budget allows.
    #[error("the plan of {} reserves ${reserved:.2}, over the budget's limit ${limit:.2}; nothing was judged", policy.display())]
    OverBudget {
        /// The policy file.
        policy: PathBuf,
        /// What the plan reserves, in USD.
        reserved: f64,
        /// The budget's limit, in USD.
        limit: f64,
    },
    /// A value given to a flag names nothing the project has.
    #[error("no {what} `{value}`{}", within.as_ref().map_or_else(String::new, |w| format!(" in {w}")))]
    Unknown {
        /// What kind of thing: `scenario`, `MCP server`.
        what: &'static str,
        /// The value given.
        value: String,
        /// Where it was looked up, when it is worth naming (`platform.mcp_servers of
        /// fibon.yaml`).
        within: Option<String>,
        /// A close match, if any.
        suggestion: Option<String>,
        /// The names there are.
        known: Vec<String>,
    },
    /// `gateway --fault` on a tool the session does not serve: it would inject nothing.
    #[error("--fault on `{tool}`, which this session does not serve")]
    UnservedFault {
        /// The tool.
        tool: String,
        /// A close match, if any.
        suggestion: Option<String>,
        /// The tools the session serves.
        served: Vec<String>,
    },
    /// An output file exists and overwriting was not asked for.
    #[error("{} already exists", path.display())]
    Exists {
        /// The file.
        path: PathBuf,
    },
    /// `agent` read something that is not a request on stdin.
    #[error("stdin is not a fibon.agent/v1 request")]
    AgentRequest,
    /// MCP servers of `platform.mcp_servers` could not be reached (or listed).
    #[error("{}", servers_down(servers))]
    ServersDown {
        /// Each server's name, and why.
        servers: Vec<(String, String)>,
        /// Whether this ended `run` before any cell.
        before_cells: bool,
    },
    /// `run` compared the platform with `fibon.lock` before any cell: it drifted, or the
    /// lockfile cannot be used.
    #[error("{}{}", reason.clone().unwrap_or_else(|| format!("{} drifted", path.display())), changes.iter().map(|c| format!("\n  {c}")).collect::<String>())]
    LockFailed {
        /// The lockfile.
        path: PathBuf,
        /// Why it cannot be used (naming it), when that is the failure.
        reason: Option<String>,
        /// The failing changes, a diff line each.
        changes: Vec<String>,
    },
    /// Writing to standard output or standard error failed (other than a closed pipe on
    /// stdout, which is not an error).
    #[error("cannot write output: {0}")]
    Stream(std::io::Error),
    /// Something that is not the user's doing, such as the async runtime failing to start.
    #[error("internal error: {0}")]
    Internal(String),
    /// Failures found together, said in order: the last one ends the command and decides
    /// its exit code (see [`ExpectedError::preceded_by`]).
    #[error("{last}")]
    Several {
        /// Said first, in order.
        earlier: Vec<ExpectedError>,
        /// The failure the command ends with.
        last: Box<ExpectedError>,
    },
}

/// `1 error` or `N errors`, counting the errors among `diags`.
fn errors(diags: &[Diagnostic]) -> String {
    match diags.iter().filter(|d| d.is_error()).count() {
        1 => "1 error".to_string(),
        n => format!("{n} errors"),
    }
}

fn servers_down(servers: &[(String, String)]) -> String {
    match servers {
        [(name, why)] => format!("MCP server `{name}` could not be reached: {why}"),
        _ => {
            let mut s = format!("{} MCP servers could not be reached:", servers.len());
            for (name, why) in servers {
                s.push_str(&format!("\n  `{name}`: {why}"));
            }
            s
        }
    }
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
                // Renaming a file over a non-empty folder.
                std::io::ErrorKind::DirectoryNotEmpty => "a folder is in the way".to_string(),
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

    /// For `map_err`: the async runtime could not be built.
    pub fn runtime(e: std::io::Error) -> ExpectedError {
        ExpectedError::Internal(format!("cannot start the async runtime: {e}"))
    }

    /// This failure, said after `earlier` ones found on the way (each `--fault` on a tool
    /// nobody serves, say): all are shown, this one decides the exit code.
    pub fn preceded_by(self, earlier: Vec<ExpectedError>) -> ExpectedError {
        if earlier.is_empty() {
            return self;
        }
        ExpectedError::Several {
            earlier,
            last: Box::new(self),
        }
    }

    /// The failures to show, in order: the ones said first, then this one (a single
    /// failure is just itself).
    pub fn each(&self) -> Vec<&ExpectedError> {
        match self {
            ExpectedError::Several { earlier, last } => {
                let mut all: Vec<&ExpectedError> =
                    earlier.iter().flat_map(ExpectedError::each).collect();
                all.extend(last.each());
                all
            }
            one => vec![one],
        }
    }

    /// The exit code of this failure.
    pub fn exit_code(&self) -> i32 {
        match self {
            ExpectedError::ConfigNotFound { .. }
            | ExpectedError::PathNotFound { .. }
            | ExpectedError::Unreadable { .. }
            | ExpectedError::Unwritable { .. }
            | ExpectedError::Listen { chosen: true, .. }
            | ExpectedError::NoTarget { .. }
            | ExpectedError::TargetKind { .. }
            | ExpectedError::NoPolicy { .. }
            | ExpectedError::Unknown { .. }
            | ExpectedError::UnservedFault { .. }
            | ExpectedError::Exists { .. }
            | ExpectedError::AgentRequest => exit_code::USAGE,
            ExpectedError::InvalidProject { .. }
            | ExpectedError::InvalidFile { .. }
            | ExpectedError::InvalidData { .. }
            | ExpectedError::InvalidShards(_)
            | ExpectedError::Lexicon { .. }
            | ExpectedError::OverBudget { .. } => exit_code::INVALID_INPUT,
            ExpectedError::LockFailed { .. } => exit_code::PROBE_FAILED,
            ExpectedError::Listen { chosen: false, .. } | ExpectedError::ServersDown { .. } => {
                exit_code::UNAVAILABLE
            }
            ExpectedError::Stream(_) | ExpectedError::Internal(_) => exit_code::INTERNAL,
            ExpectedError::Several { last, .. } => last.exit_code(),
        }
    }

    /// The diagnostics to show before the error line.
    pub fn diagnostics(&self) -> &[Diagnostic] {
        match self {
            ExpectedError::InvalidProject { diagnostics }
            | ExpectedError::InvalidFile { diagnostics, .. } => diagnostics,
            ExpectedError::Several { last, .. } => last.diagnostics(),
            _ => &[],
        }
    }

    /// What to do about it.
    pub fn help(&self) -> Option<String> {
        let text = match self {
            ExpectedError::ConfigNotFound { .. } => {
                "run in a folder with fibon.yaml, pass --config PATH, or name the contract and scenario files"
            }
            ExpectedError::PathNotFound { .. } => "check the path",
            ExpectedError::Unreadable { .. } => "name a regular UTF-8 text file",
            ExpectedError::Unwritable { .. } => {
                "name a folder that exists or can be created, and that you may write to"
            }
            ExpectedError::Listen { chosen: true, .. } => {
                "pick a free --port (0: any free port) and an address of this host for --bind"
            }
            ExpectedError::Listen { chosen: false, .. } => {
                "the tool gateway listens on a free loopback port: check that 127.0.0.1 is up and that this process may open more sockets (ulimit -n)"
            }
            ExpectedError::NoTarget { .. } => {
                "add `target: {kind: command, command: [\"python3\", \"agent.py\"]}` (see the README)"
            }
            ExpectedError::Lexicon { .. } => {
                "give a YAML file with lists under the built-in lexicon's keys (`failure`, `process`, `hedge`, …), relative to the config"
            }
            ExpectedError::Unknown {
                what,
                suggestion,
                known,
                ..
            } => {
                return Some(format!(
                    "{}{what}s: {}",
                    did_you_mean(suggestion.as_deref()),
                    listed(known)
                ));
            }
            ExpectedError::UnservedFault {
                suggestion, served, ..
            } => {
                return Some(format!(
                    "{}tools: {}",
                    did_you_mean(suggestion.as_deref()),
                    listed(served)
                ));
            }
            ExpectedError::Exists { .. } => "pass --force to overwrite it, or --out PATH",
            ExpectedError::ServersDown {
                before_cells: true, ..
            } => "their tools would look removed to every cell; check with `fibon-verify probe`",
            ExpectedError::ServersDown {
                before_cells: false,
                ..
            } => "check the servers with `fibon-verify probe`",
            ExpectedError::LockFailed { .. } => {
                "review with `fibon-verify probe`, then `probe --update-lock`, or pass --allow-drift"
            }
            ExpectedError::InvalidProject { .. }
            | ExpectedError::InvalidFile { .. }
            | ExpectedError::InvalidData { .. }
            | ExpectedError::InvalidShards(_)
            | ExpectedError::TargetKind { .. }
            | ExpectedError::NoPolicy { .. }
            | ExpectedError::OverBudget { .. }
            | ExpectedError::AgentRequest
            | ExpectedError::Stream(_)
            | ExpectedError::Internal(_) => return None,
            ExpectedError::Several { last, .. } => return last.help(),
        };
        Some(text.to_string())
    }

    /// A last line, after the help, saying what was not done.
    pub fn note(&self) -> Option<&'static str> {
        match self {
            ExpectedError::LockFailed { .. }
            | ExpectedError::ServersDown {
                before_cells: true, ..
            } => Some("no cell was run"),
            ExpectedError::Several { last, .. } => last.note(),
            _ => None,
        }
    }
}

/// The multi-threaded async runtime a command's work runs on (servers, agents, judges).
/// That it cannot start is not the user's doing ([`ExpectedError::Internal`]).
pub fn runtime() -> Result<tokio::runtime::Runtime, ExpectedError> {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(ExpectedError::runtime)
}

fn did_you_mean(suggestion: Option<&str>) -> String {
    suggestion
        .map(|s| format!("did you mean `{s}`? "))
        .unwrap_or_default()
}

fn listed(names: &[String]) -> String {
    if names.is_empty() {
        "none".to_string()
    } else {
        names.join(", ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_kind_of_failure_has_its_documented_code() {
        let path = PathBuf::from("x");
        let unreadable = ExpectedError::Unreadable {
            path: path.clone(),
            reason: "it is a folder".into(),
        };
        assert_eq!(unreadable.exit_code(), exit_code::USAGE);
        assert_eq!(
            ExpectedError::unwritable(&path)(std::io::Error::from(
                std::io::ErrorKind::IsADirectory
            ))
            .to_string(),
            "cannot write x: it is a folder"
        );
        let invalid = ExpectedError::InvalidData {
            path: path.clone(),
            reason: "not JSON".into(),
        };
        assert_eq!(
            (invalid.exit_code(), invalid.to_string()),
            (exit_code::INVALID_INPUT, "x: not JSON".to_string())
        );
        let down = ExpectedError::ServersDown {
            servers: vec![("a".into(), "gone".into())],
            before_cells: true,
        };
        assert_eq!(
            (down.exit_code(), down.to_string(), down.note()),
            (
                exit_code::UNAVAILABLE,
                "MCP server `a` could not be reached: gone".to_string(),
                Some("no cell was run")
            )
        );
        let unknown = ExpectedError::Unknown {
            what: "scenario",
            value: "s".into(),
            within: None,
            suggestion: Some("s1".into()),
            known: vec!["s1".into(), "s2".into()],
        };
        assert_eq!(
            (unknown.to_string(), unknown.help().unwrap()),
            (
                "no scenario `s`".to_string(),
                "did you mean `s1`? scenarios: s1, s2".to_string()
            )
        );
        let several = ExpectedError::AgentRequest.preceded_by(vec![down]);
        assert_eq!(
            (several.exit_code(), several.each().len(), several.note()),
            (exit_code::USAGE, 2, None)
        );
        assert!(matches!(
            ExpectedError::AgentRequest.preceded_by(Vec::new()),
            ExpectedError::AgentRequest
        ));
    }
}
