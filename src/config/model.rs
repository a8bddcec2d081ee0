//! The validated config: paths resolved against the config file, durations parsed, the
//! target checked against its kind.

use std::path::PathBuf;
use std::time::Duration;

use indexmap::IndexMap;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The kinds of system under test.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum TargetKind {
    /// A process: the request on stdin, the response on stdout.
    Command,
    /// An HTTP endpoint: the request POSTed, the response in the body.
    Http,
    /// An OpenAI-compatible chat model driven by fibon-verify itself.
    Openai,
    /// Recorded conversations re-checked without invoking anything.
    Replay,
}

impl TargetKind {
    /// The name as written in `fibon.yaml`.
    pub fn as_str(self) -> &'static str {
        match self {
            TargetKind::Command => "command",
            TargetKind::Http => "http",
            TargetKind::Openai => "openai",
            TargetKind::Replay => "replay",
        }
    }
}

/// What a command target gets on stdin.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum StdinMode {
    /// The agent protocol request, then end of file.
    #[default]
    Request,
    /// Nothing: stdin is closed at once (for CLI agents that take the input as an argument).
    None,
}

/// How a command target's stdout is read.
#[derive(Debug, Clone, Default)]
pub enum Answer {
    /// An agent protocol response.
    #[default]
    Protocol,
    /// All of stdout is the answer text.
    Text,
    /// stdout is JSON; the answer is the value at the path.
    Json {
        /// The path as written.
        text: String,
        /// The parsed path.
        path: serde_json_path::JsonPath,
    },
}

/// The validated `fibon.yaml`.
#[derive(Debug, Clone)]
pub struct Config {
    /// The config file (None when running without one).
    pub path: Option<PathBuf>,
    /// Contract files and folders, resolved.
    pub contracts: Vec<PathBuf>,
    /// Scenario files and folders, resolved.
    pub scenarios: Vec<PathBuf>,
    /// The system under test, if configured.
    pub target: Option<Target>,
    /// The platform.
    pub platform: Platform,
    /// Matrix settings.
    pub matrix: Matrix,
    /// The report directory, resolved.
    pub report_dir: PathBuf,
    /// Whether report.html is written beside report.json (`report.html`, default true).
    pub report_html: bool,
    /// A refusal lexicon extending the built-in one, resolved.
    pub refusal_lexicon: Option<PathBuf>,
    /// The model-based refusal classifier, if configured.
    pub refusal_judge: Option<RefusalJudge>,
    /// The quality policy file, resolved.
    pub quality_policy: Option<PathBuf>,
}

/// The model-based refusal classifier's settings.
#[derive(Debug, Clone)]
pub struct RefusalJudge {
    /// API base URL.
    pub base_url: url::Url,
    /// Model name.
    pub model: String,
    /// The variable holding the API key.
    pub api_key_env: Option<String>,
    /// Per classification.
    pub timeout: Duration,
}

/// The system under test.
#[derive(Debug, Clone)]
pub enum Target {
    /// A process.
    Command {
        /// argv (with placeholders, checked to be known ones).
        command: Vec<String>,
        /// Extra environment.
        env: IndexMap<String, String>,
        /// Working directory.
        cwd: Option<PathBuf>,
        /// Per-cell timeout.
        timeout: Duration,
        /// What goes to stdin.
        stdin: StdinMode,
        /// How stdout is read.
        answer: Answer,
    },
    /// An HTTP endpoint.
    Http {
        /// Where the request is POSTed.
        url: url::Url,
        /// Request headers.
        headers: IndexMap<String, String>,
        /// Per-cell timeout.
        timeout: Duration,
    },
    /// An OpenAI-compatible model.
    Openai {
        /// API base URL.
        base_url: url::Url,
        /// Model name.
        model: String,
        /// The variable holding the API key.
        api_key_env: Option<String>,
        /// System prompt.
        system_prompt: Option<String>,
        /// Most tool-calling rounds.
        max_steps: u32,
        /// Sampling temperature.
        temperature: f64,
        /// `auto`, `required` or `none`.
        tool_choice: String,
        /// Run must_call_tools violations up the intervention ladder.
        intervene: bool,
        /// Per-cell timeout.
        timeout: Duration,
    },
    /// Recorded conversations.
    Replay {
        /// History JSONL.
        history: PathBuf,
    },
}

/// The target platform.
#[derive(Debug, Clone, Default)]
pub struct Platform {
    /// Upstream MCP servers.
    pub mcp_servers: Vec<McpServer>,
    /// Installed plugins and their versions.
    pub plugins: IndexMap<String, semver::Version>,
    /// Granted scopes.
    pub scopes: Vec<String>,
    /// Named network endpoints.
    pub network: IndexMap<String, String>,
}

/// An upstream MCP server.
#[derive(Debug, Clone)]
pub struct McpServer {
    /// Its name.
    pub name: String,
    /// How to reach it.
    pub transport: McpTransport,
}

/// How an upstream MCP server is reached.
#[derive(Debug, Clone)]
pub enum McpTransport {
    /// A child process speaking newline-delimited JSON-RPC on stdio.
    Stdio {
        /// argv.
        command: Vec<String>,
        /// Extra environment.
        env: IndexMap<String, String>,
    },
    /// Streamable HTTP.
    Http {
        /// The endpoint.
        url: url::Url,
        /// Request headers.
        headers: IndexMap<String, String>,
    },
}

/// Matrix settings.
#[derive(Debug, Clone)]
pub struct Matrix {
    /// Cells at once.
    pub jobs: u32,
    /// Runs per cell.
    pub repeat: u32,
    /// How long a TIMEOUT fault holds a call.
    pub timeout_fault_delay: Duration,
    /// The delay a LATENCY fault adds to each call.
    pub latency_fault_delay: Duration,
}

impl Default for Matrix {
    fn default() -> Self {
        Matrix {
            jobs: std::thread::available_parallelism().map_or(4, |n| n.get() as u32),
            repeat: 1,
            timeout_fault_delay: Duration::from_secs(5),
            latency_fault_delay: Duration::from_secs(1),
        }
    }
}

/// Expands `${VAR}` from the environment (unset variables expand to nothing).
pub fn expand_env(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(start) = rest.find("${") {
        out.push_str(&rest[..start]);
        match rest[start + 2..].find('}') {
            Some(end) => {
                let name = &rest[start + 2..start + 2 + end];
                out.push_str(&std::env::var(name).unwrap_or_default());
                rest = &rest[start + 3 + end..];
            }
            None => {
                out.push_str(&rest[start..]);
                rest = "";
            }
        }
    }
    out.push_str(rest);
    out
}

/// Variables whose values are locations and locales, not secrets: passed through `env:`
/// as `${VAR}`, they are not redacted (a path in every report would be).
const NOT_SECRET: &[&str] = &[
    "PATH",
    "HOME",
    "USER",
    "LOGNAME",
    "SHELL",
    "PWD",
    "TMPDIR",
    "TMP",
    "TEMP",
    "LANG",
    "LANGUAGE",
    "LC_ALL",
    "LC_CTYPE",
    "TERM",
    "TZ",
    "PYTHONPATH",
    "VIRTUAL_ENV",
    "NODE_PATH",
    "CI",
];

impl Config {
    /// The variables this config names as secrets: every `api_key_env`, every `${VAR}` in
    /// headers (http target, streamable HTTP servers), and every `${VAR}` in `env:` (command
    /// target, stdio servers) but those of [`NOT_SECRET`] (docs/config.md, "Secrets").
    pub fn secret_names(&self) -> Vec<String> {
        let mut out: Vec<String> = Vec::new();
        let expanded = |values: &IndexMap<String, String>, all: bool, out: &mut Vec<String>| {
            for v in values.values() {
                out.extend(
                    crate::secrets::expanded_vars(v)
                        .into_iter()
                        .filter(|n| all || !NOT_SECRET.contains(n))
                        .map(str::to_string),
                );
            }
        };
        match &self.target {
            Some(Target::Openai { api_key_env, .. }) => out.extend(api_key_env.clone()),
            Some(Target::Http { headers, .. }) => expanded(headers, true, &mut out),
            Some(Target::Command { env, .. }) => expanded(env, false, &mut out),
            Some(Target::Replay { .. }) | None => {}
        }
        if let Some(judge) = &self.refusal_judge {
            out.extend(judge.api_key_env.clone());
        }
        for server in &self.platform.mcp_servers {
            match &server.transport {
                McpTransport::Http { headers, .. } => expanded(headers, true, &mut out),
                McpTransport::Stdio { env, .. } => expanded(env, false, &mut out),
            }
        }
        out
    }
}
