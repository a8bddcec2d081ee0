//! The command line: clap definitions, dispatch, and the mapping of every outcome to an
//! exit code. Usage errors exit 64 (not clap's 2, which here means "contract violation").

mod agent;
mod audit;
mod check;
mod gate;
mod gateway;
mod init;
mod merge;
mod probe;
mod run;
mod sample;
mod schema;

use std::io::{IsTerminal, Write};
use std::path::PathBuf;

use clap::{Parser, Subcommand};

use crate::errors::ExpectedError;
use crate::exit_code;

/// Contract verifier and CI gate for LLM agent Skills: proves that a Skill fails loudly
/// and predictably when the tools it depends on are missing, instead of silently
/// degrading into a confident, fabricated answer.
#[derive(Debug, Parser)]
#[command(
    name = "fibon-verify",
    version,
    propagate_version = true,
    max_term_width = 100
)]
pub struct Cli {
    #[command(subcommand)]
    command: Command,

    /// The project config.
    #[arg(long, global = true, value_name = "PATH", default_value = "fibon.yaml")]
    config: PathBuf,

    /// When to colour human output.
    #[arg(long, global = true, value_name = "WHEN", default_value = "auto")]
    color: Color,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Run the four-quadrant matrix against the target; exit non-zero on silent degradation.
    Run(run::RunArgs),
    /// Validate contracts, scenarios and the config; report every problem in every file.
    Check(check::CheckArgs),
    /// Replay a seeded sample of recorded conversations; flag Skills whose decisions change.
    Sample(sample::SampleArgs),
    /// Check recorded conversations (History JSONL or OTLP JSON) against the contracts.
    Audit(audit::AuditArgs),
    /// Combine shard reports into one report, with the exit code of an unsharded run.
    Merge(merge::MergeArgs),
    /// Apply the quality gate to candidates (JSONL) without running agents.
    Gate(gate::GateArgs),
    /// Check the target platform for each Skill's capabilities and pin its tools in fibon.lock.
    Probe(probe::ProbeArgs),
    /// Write a draft contract from an MCP server's tools or an Agent Skill's SKILL.md.
    Init(init::InitArgs),
    /// Serve a scenario's tools with faults, standalone, for any MCP client; print the trace.
    Gateway(gateway::GatewayArgs),
    /// Print the JSON Schema of a file kind (for editors and other tools).
    Schema(schema::SchemaArgs),
    /// A reference agent speaking the command protocol, for the shipped examples.
    Agent(agent::AgentArgs),
}

/// When to colour.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Color {
    /// When stderr is a terminal and `NO_COLOR` is unset.
    Auto,
    /// Always.
    Always,
    /// Never.
    Never,
}

impl Color {
    fn enabled(self) -> bool {
        match self {
            Color::Always => true,
            Color::Never => false,
            Color::Auto => {
                std::io::stderr().is_terminal() && std::env::var_os("NO_COLOR").is_none()
            }
        }
    }
}

/// What every subcommand gets besides its own arguments.
pub(crate) struct Globals {
    pub(crate) config: PathBuf,
    pub(crate) color: bool,
    /// Running under GitHub Actions: also print workflow-command annotations.
    pub(crate) github: bool,
}

/// The config of `--config`, for a command that needs one: exit 64 when there is no
/// file there.
pub(crate) fn require_config(globals: &Globals) -> Result<&std::path::Path, ExpectedError> {
    if !globals.config.is_file() {
        return Err(ExpectedError::ConfigNotFound {
            path: globals.config.clone(),
        });
    }
    Ok(&globals.config)
}

/// Reads a whole input file named on the command line: exit 64 naming the path when it
/// does not exist or cannot be read as text (a folder, a device, too large, not UTF-8).
pub(crate) fn read_input(path: &std::path::Path) -> Result<String, ExpectedError> {
    check_input(path)?;
    crate::source::read_text(path, crate::source::MAX_FILE_BYTES).map_err(|reason| {
        ExpectedError::Unreadable {
            path: path.to_path_buf(),
            reason,
        }
    })
}

/// Checks, without opening it, an input named on the command line that is then streamed
/// (a history): exit 64 naming the path when it does not exist or is not a regular file
/// (a folder, a FIFO that would block, a device that never ends). Returns its size.
pub(crate) fn check_input(path: &std::path::Path) -> Result<u64, ExpectedError> {
    if !path.exists() {
        return Err(ExpectedError::PathNotFound {
            path: path.to_path_buf(),
        });
    }
    crate::source::regular_file(path)
        .map(|meta| meta.len())
        .map_err(|reason| ExpectedError::Unreadable {
            path: path.to_path_buf(),
            reason,
        })
}

/// Checks, before any work whose result it is to keep, that an output file named on the
/// command line can be written: exit 64 naming it when it is a folder, its folder does
/// not exist, or that folder cannot be written.
pub(crate) fn check_output_file(path: &std::path::Path) -> Result<(), ExpectedError> {
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
        .unwrap_or(std::path::Path::new("."));
    if !dir.is_dir() {
        return Err(unwritable("its folder does not exist"));
    }
    let probe = dir.join(format!(".fibon-write-check.{}", std::process::id()));
    std::fs::write(&probe, b"").map_err(ExpectedError::unwritable(path))?;
    let _ = std::fs::remove_file(probe);
    Ok(())
}

/// The refusal lexicon of the config: the built-in one, extended by
/// `checks.refusal_lexicon` (exit 65 naming the file if it cannot be used).
pub(crate) fn lexicon(
    config: &crate::config::Config,
) -> Result<std::sync::Arc<crate::checks::refusal::Lexicon>, ExpectedError> {
    match &config.refusal_lexicon {
        Some(path) => crate::checks::refusal::Lexicon::extended(path)
            .map(std::sync::Arc::new)
            .map_err(|reason| ExpectedError::Lexicon {
                path: path.clone(),
                reason,
            }),
        None => Ok(crate::checks::refusal::Lexicon::builtin()),
    }
}

/// A history that cannot be read is named, with why (exit 64).
impl From<crate::history::HistoryError> for ExpectedError {
    fn from(e: crate::history::HistoryError) -> ExpectedError {
        ExpectedError::Unreadable {
            path: e.path().to_path_buf(),
            reason: e.reason(),
        }
    }
}

/// `init`: a server that cannot be reached is 69, a SKILL.md that cannot be read 64, one
/// without usable frontmatter 65.
impl From<crate::probe::draft::DraftError> for ExpectedError {
    fn from(e: crate::probe::draft::DraftError) -> ExpectedError {
        use crate::probe::draft::DraftError;
        match e {
            DraftError::Server { server, reason } => ExpectedError::ServersDown {
                servers: vec![(server, reason)],
                before_cells: false,
            },
            DraftError::Unreadable { path, reason } => ExpectedError::Unreadable { path, reason },
            DraftError::Frontmatter { path, reason } => ExpectedError::InvalidData { path, reason },
        }
    }
}

/// A new async runtime for a command.
pub(crate) fn runtime() -> Result<tokio::runtime::Runtime, ExpectedError> {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(ExpectedError::runtime)
}

/// Prints an error the one way every command does: the diagnostics it carries, then
/// `error: …`, `  help: …` and what was not done. Writing to stderr cannot fail here in a
/// way worth reporting.
pub(crate) fn render(err: &ExpectedError, color: bool) {
    let mut stderr = std::io::stderr().lock();
    for d in err.diagnostics() {
        let _ = write!(stderr, "{}", crate::diag::render_human(d, color, 100));
    }
    let _ = writeln!(stderr, "error: {err}");
    if let Some(help) = err.help() {
        let _ = writeln!(stderr, "  help: {help}");
    }
    if let Some(note) = err.note() {
        let _ = writeln!(stderr, "{note}");
    }
}

/// Says which processes the agents left running were killed at the end (see
/// [`crate::target::orphans`]).
pub(crate) fn report_strays(strays: Vec<crate::target::orphans::Stray>) {
    if strays.is_empty() {
        return;
    }
    let named: Vec<String> = strays
        .iter()
        .take(5)
        .map(|s| format!("{} (pid {})", s.name, s.pid))
        .collect();
    let more = strays.len().saturating_sub(named.len());
    eprintln!(
        "note: killed {} process{} the agents left running: {}{}",
        strays.len(),
        if strays.len() == 1 { "" } else { "es" },
        named.join(", "),
        if more > 0 {
            format!(" and {more} more")
        } else {
            String::new()
        }
    );
}

/// A flag's value that is a share: a number from 0 to 1.
fn share(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(v) if (0.0..=1.0).contains(&v) => Ok(v),
        _ => Err(format!("`{s}` is not a share (a number from 0 to 1)")),
    }
}

/// Parses the command line, runs the command and returns the process exit code.
pub fn main_impl() -> i32 {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(err) => {
            let code = match err.kind() {
                clap::error::ErrorKind::DisplayHelp | clap::error::ErrorKind::DisplayVersion => {
                    exit_code::SUCCESS
                }
                _ => exit_code::USAGE,
            };
            let _ = err.print();
            return code;
        }
    };
    let globals = Globals {
        config: cli.config,
        color: cli.color.enabled(),
        github: std::env::var("GITHUB_ACTIONS").is_ok_and(|v| v == "true"),
    };
    let result = match cli.command {
        Command::Run(args) => run::run(&globals, args),
        Command::Check(args) => check::run(&globals, args),
        Command::Agent(args) => agent::run(args),
        Command::Gateway(args) => gateway::run(&globals, args),
        Command::Probe(args) => probe::run(&globals, args),
        Command::Gate(args) => gate::run(&globals, args),
        Command::Merge(args) => merge::run(&globals, args),
        Command::Audit(args) => audit::run(&globals, args),
        Command::Sample(args) => sample::run(&globals, args),
        Command::Init(args) => init::run(&globals, args),
        Command::Schema(args) => schema::run(args),
    };
    match result {
        Ok(code) => code,
        Err(err) => {
            render(&err, globals.color);
            err.exit_code()
        }
    }
}

/// Loads the project of `--config` for a command that needs it valid: exit 64 when there
/// is no config, 65 with its errors when it is invalid.
pub(crate) fn load_valid_project(
    globals: &Globals,
) -> Result<(crate::config::Config, crate::project::Project), ExpectedError> {
    let loaded = crate::project::load_config(require_config(globals)?);
    if loaded.has_errors() {
        return Err(ExpectedError::InvalidProject {
            diagnostics: loaded
                .diagnostics
                .into_iter()
                .filter(|d| d.is_error())
                .collect(),
        });
    }
    let config = loaded
        .project
        .config
        .clone()
        .expect("a valid project has its config");
    Ok((config, loaded.project))
}

/// Standard error, for a command's human output: `write!` to it fails with
/// [`ExpectedError::Stream`].
pub(crate) struct Stderr(std::io::StderrLock<'static>);

/// [`Stderr`], locked.
pub(crate) fn stderr() -> Stderr {
    Stderr(std::io::stderr().lock())
}

impl Stderr {
    /// For `write!` and `writeln!`.
    pub(crate) fn write_fmt(&mut self, args: std::fmt::Arguments<'_>) -> Result<(), ExpectedError> {
        self.0.write_fmt(args).map_err(ExpectedError::Stream)
    }
}

/// Standard output for a command's results. A reader that goes away early (`| head`) is
/// not the command's failure, and must not hide it either: what is left unwritten is
/// dropped and the command still exits with its own code — a broken pipe never turns a
/// failing run into a pass.
pub(crate) struct Stdout {
    inner: std::io::StdoutLock<'static>,
    gone: bool,
}

/// [`Stdout`], locked.
pub(crate) fn stdout() -> Stdout {
    Stdout {
        inner: std::io::stdout().lock(),
        gone: false,
    }
}

/// Prints one line (a JSON document, say) to [`stdout`] and flushes it.
pub(crate) fn print_line(line: impl std::fmt::Display) -> Result<(), ExpectedError> {
    let mut out = stdout();
    writeln!(out, "{line}")?;
    out.flush()
}

impl Stdout {
    /// For `write!` and `writeln!`: a failure (other than the reader going away) is
    /// [`ExpectedError::Stream`].
    pub(crate) fn write_fmt(&mut self, args: std::fmt::Arguments<'_>) -> Result<(), ExpectedError> {
        Write::write_fmt(self, args).map_err(ExpectedError::Stream)
    }

    /// Flushes what was written, as [`Write::flush`] does.
    pub(crate) fn flush(&mut self) -> Result<(), ExpectedError> {
        Write::flush(self).map_err(ExpectedError::Stream)
    }

    fn absorb(&mut self, result: std::io::Result<()>) -> std::io::Result<()> {
        match result {
            Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => {
                self.gone = true;
                Ok(())
            }
            other => other,
        }
    }
}

impl Write for Stdout {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        if self.gone {
            return Ok(buf.len());
        }
        let result = self.inner.write_all(buf);
        self.absorb(result).map(|()| buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        if self.gone {
            return Ok(());
        }
        let result = self.inner.flush();
        self.absorb(result)
    }
}

/// Resolves on Ctrl-C (SIGINT) or SIGTERM — what a CI runner sends when it cancels a job —
/// so that both stop the work and still write what was done.
pub(crate) async fn interrupted() {
    use tokio::signal::unix::{SignalKind, signal};
    let mut term = signal(SignalKind::terminate()).ok();
    let term = async {
        match term.as_mut() {
            Some(t) => {
                t.recv().await;
            }
            None => std::future::pending().await,
        }
    };
    tokio::select! {
        _ = tokio::signal::ctrl_c() => {}
        () = term => {}
    }
}

#[cfg(test)]
mod tests {
    use clap::CommandFactory;

    use super::*;

    #[test]
    fn clap_definition_is_consistent() {
        Cli::command().debug_assert();
    }
}
