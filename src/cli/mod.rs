//! The command line: clap definitions, dispatch, and the mapping of every outcome to an
//! exit code. Usage errors exit 64 (not clap's 2, which here means "contract violation").

mod agent;
mod audit;
mod cache;
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
use crate::project::ValidProject;

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
    /// Manage the judge cache (`clear`).
    Cache(cache::CacheCommand),
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
    crate::project::config_file(&globals.config)
}

/// The project of `--config`, for a command that needs it valid: exit 64 when there is no
/// config, 65 with its errors when it is invalid.
pub(crate) fn valid_project(globals: &Globals) -> Result<ValidProject, ExpectedError> {
    crate::project::load_valid(&globals.config)
}

// The checks of the files named on the command line, and the async runtime, under the
// names the subcommand files use.
pub(crate) use crate::errors::runtime;
pub(crate) use crate::source::{check_input, check_output_file, read_input};

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

/// Prints an error the one way every command does: the diagnostics it carries, then
/// `error: …`, `  help: …` and what was not done — through [`stderr`], so with the
/// secrets redacted. Writing to stderr cannot fail here in a way worth reporting.
pub(crate) fn render(err: &ExpectedError, color: bool) {
    let mut stderr = stderr();
    // Failures found together are said in order, each the same way.
    for err in err.each() {
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
}

/// Where report.html goes: the option every command that writes a report takes.
#[derive(Debug, clap::Args)]
pub(crate) struct HtmlArgs {
    /// Write report.html here [default: beside report.json, unless `report.html: false`
    /// in the config]
    #[arg(long, value_name = "PATH")]
    html: Option<PathBuf>,
}

impl HtmlArgs {
    /// The outputs with report.html placed (checked writable before any work), or left
    /// out when the config turns it off (`enabled` false) and no path is given.
    pub(crate) fn apply(
        &self,
        outputs: crate::report::Outputs,
        enabled: bool,
    ) -> Result<crate::report::Outputs, ExpectedError> {
        self.check()?;
        Ok(outputs.html(self.html.as_deref(), enabled))
    }

    /// Exit 64 now, naming it, when `--html` cannot be written.
    pub(crate) fn check(&self) -> Result<(), ExpectedError> {
        self.html.as_deref().map_or(Ok(()), check_output_file)
    }
}

/// A previous report to compare with, and what fails: `run`, `audit`, `merge`, `gate`.
#[derive(Debug, clap::Args)]
pub(crate) struct BaselineArgs {
    /// Compare the cells with this earlier report.json, by cell id (docs/report.md,
    /// "baseline")
    #[arg(long, value_name = "REPORT")]
    baseline: Option<PathBuf>,

    /// What fails the exit code: every failing cell, or only what fails anew against
    /// --baseline (`error` cells always fail)
    #[arg(
        long,
        value_name = "WHICH",
        default_value = "all",
        requires = "baseline"
    )]
    fail_on: crate::report::FailOn,
}

impl BaselineArgs {
    /// The baseline read, before any work: exit 64 when it cannot be read, 65 when it is
    /// not a report.
    pub(crate) fn load(&self) -> Result<Loaded, ExpectedError> {
        let baseline = match &self.baseline {
            Some(path) => Some(std::sync::Arc::new(crate::report::Baseline::read(path)?)),
            None => None,
        };
        Ok(Loaded {
            baseline,
            fail_on: self.fail_on,
        })
    }
}

/// A baseline read, and what fails.
#[derive(Debug, Clone)]
pub(crate) struct Loaded {
    pub(crate) baseline: Option<std::sync::Arc<crate::report::Baseline>>,
    pub(crate) fail_on: crate::report::FailOn,
}

impl Loaded {
    /// The outputs compared with it.
    pub(crate) fn apply(&self, outputs: crate::report::Outputs) -> crate::report::Outputs {
        outputs.against(self.baseline.clone(), self.fail_on)
    }
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
        Command::Cache(args) => cache::run(args),
    };
    match result {
        Ok(code) => code,
        Err(err) => {
            render(&err, globals.color);
            err.exit_code()
        }
    }
}

/// Standard error, for a command's human output: `write!` to it fails with
/// [`ExpectedError::Stream`]. What is written is redacted (crate::secrets), one `write!`
/// at a time.
pub(crate) struct Stderr(std::io::StderrLock<'static>);

/// [`Stderr`], locked.
pub(crate) fn stderr() -> Stderr {
    Stderr(std::io::stderr().lock())
}

impl Stderr {
    /// For `write!` and `writeln!`.
    pub(crate) fn write_fmt(&mut self, args: std::fmt::Arguments<'_>) -> Result<(), ExpectedError> {
        let text = redacted(args);
        self.0
            .write_all(text.as_bytes())
            .map_err(ExpectedError::Stream)
    }
}

/// A `write!`'s text with the secrets redacted: formatted whole first, so that no secret
/// is split between the pieces of one format string.
fn redacted(args: std::fmt::Arguments<'_>) -> String {
    let text = args.to_string();
    match crate::secrets::current().redact(&text) {
        std::borrow::Cow::Borrowed(_) => text,
        std::borrow::Cow::Owned(r) => r,
    }
}

/// Standard output for a command's results. A reader that goes away early (`| head`) is
/// not the command's failure, and must not hide it either: what is left unwritten is
/// dropped and the command still exits with its own code — a broken pipe never turns a
/// failing run into a pass. What is written is redacted (crate::secrets): each `write!`
/// whole, and each buffer written as is (a file copied is redacted as a stream by
/// [`crate::report::Written::print_json`]).
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

    fn write_redacted(&mut self, buf: &[u8]) -> std::io::Result<()> {
        if self.gone {
            return Ok(());
        }
        let redactor = crate::secrets::current();
        let result = self.inner.write_all(&redactor.redact_bytes(buf));
        self.absorb(result)
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
        self.write_redacted(buf).map(|()| buf.len())
    }

    fn write_fmt(&mut self, args: std::fmt::Arguments<'_>) -> std::io::Result<()> {
        self.write_redacted(redacted(args).as_bytes())
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

/// [`interrupted`] with its handlers registered now, not when first polled: a signal
/// that comes before the caller awaits (right after it printed its URLs) is still caught
/// rather than killing the process. Must be called within the runtime.
pub(crate) fn interrupted_from_now() -> impl std::future::Future<Output = ()> {
    use tokio::signal::unix::{Signal, SignalKind, signal};
    let mut int = signal(SignalKind::interrupt()).ok();
    let mut term = signal(SignalKind::terminate()).ok();
    async fn wait(s: Option<&mut Signal>) {
        match s {
            Some(s) => {
                s.recv().await;
            }
            None => std::future::pending().await,
        }
    }
    async move {
        tokio::select! {
            () = wait(int.as_mut()) => {}
            () = wait(term.as_mut()) => {}
        }
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
