//! `fibon.yaml` exactly as written (serde mirror, `deny_unknown_fields`); validated into
//! [`Config`](super::Config) by `validate.rs`.

use indexmap::IndexMap;
use schemars::JsonSchema;
use serde::Deserialize;

use super::model::{StdinMode, TargetKind};

/// The project config: where contracts and scenarios are, the system under test, the
/// platform to probe and proxy, and how to run the matrix.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(title = "fibon-verify config")]
pub struct RawConfig {
    /// The JSON Schema this file follows, for editors (ignored by fibon-verify).
    #[serde(rename = "$schema")]
    pub schema: Option<String>,
    /// Contract files or folders (a folder's `*.yaml|*.yml|*.json`, not recursive),
    /// relative to this file. Default: `[contracts]`.
    pub contracts: Option<Vec<String>>,
    /// Scenario files or folders (a folder's `**/*.yaml|*.yml`), relative to this file.
    /// Default: `[scenarios]`.
    pub scenarios: Option<Vec<String>>,
    /// The system under test.
    pub target: Option<RawTarget>,
    /// What `probe` checks and the gateway may proxy.
    pub platform: Option<RawPlatform>,
    /// How the matrix runs.
    pub matrix: Option<RawMatrix>,
    /// Where reports go.
    pub report: Option<RawReport>,
    /// Settings of the checks.
    pub checks: Option<RawChecks>,
    /// The quality gate.
    pub quality: Option<RawQuality>,
}

/// The quality gate's settings.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RawQuality {
    /// The quality policy file, relative to this file. With it, `run` gates every answered
    /// cell with the tools available.
    pub policy: String,
}

/// Settings of the checks.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RawChecks {
    /// A YAML file of refusal phrases added to the built-in lexicon (keys `inability`,
    /// `self`, `reason`, `answer`, `failure`), relative to this file.
    pub refusal_lexicon: Option<String>,
    /// An OpenAI-compatible model asked whether an ambiguous answer under a fault is a
    /// refusal (off unless set). Unreachable, it makes the affected cells `error`.
    pub refusal_judge: Option<RawRefusalJudge>,
}

/// The model-based refusal classifier.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RawRefusalJudge {
    /// The API base URL, such as `http://127.0.0.1:8080/v1`.
    pub base_url: String,
    /// The model name.
    pub model: String,
    /// The environment variable holding the API key (none: no Authorization header).
    pub api_key_env: Option<String>,
    /// How long one classification may take (default 30s).
    pub timeout: Option<String>,
}

/// The system under test. Which keys apply depends on `kind`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RawTarget {
    /// `command`, `http`, `openai` or `replay`.
    pub kind: TargetKind,
    /// command: the argv, run without a shell. Arguments may hold the placeholders
    /// `{input}`, `{skill}`, `{run_id}`, `{tools_url}`, `{mcp_url}` and `{mcp_config}` (the
    /// path of a per-cell MCP client config file), whole or inside an argument; `{{input}}`
    /// is the literal text `{input}`, and other `{name}`s are text.
    pub command: Option<Vec<String>>,
    /// command: what the agent gets on stdin: `request` (the agent protocol request, the
    /// default) or `none` (stdin closed at once).
    pub stdin: Option<StdinMode>,
    /// command: how stdout is read: `protocol` (an agent protocol response, the default),
    /// `text` (all of stdout is the answer) or `{json: JSONPATH}` (stdout is JSON and the
    /// answer is the value at the path, such as `$.result`).
    pub answer: Option<RawAnswer>,
    /// command: extra environment variables (`${VAR}` expands from the environment).
    pub env: Option<IndexMap<String, String>>,
    /// command: the working directory, relative to this file.
    pub cwd: Option<String>,
    /// command, http, openai: per-cell timeout, such as `60s` (default 60s).
    pub timeout: Option<String>,
    /// http: the endpoint the request is POSTed to.
    pub url: Option<String>,
    /// http: request headers (`${VAR}` expands from the environment).
    pub headers: Option<IndexMap<String, String>>,
    /// openai: the API base URL, such as `http://127.0.0.1:8080/v1`.
    pub base_url: Option<String>,
    /// openai: the model name.
    pub model: Option<String>,
    /// openai: the environment variable that holds the API key.
    pub api_key_env: Option<String>,
    /// openai: the system prompt.
    pub system_prompt: Option<String>,
    /// openai: the most tool-calling rounds before giving up (default 8).
    #[schemars(range(min = 1))]
    pub max_steps: Option<u32>,
    /// openai: sampling temperature (default 0).
    pub temperature: Option<f64>,
    /// openai: `auto`, `required` or `none` (default `auto`).
    pub tool_choice: Option<String>,
    /// openai: when a cell violates `must_call_tools`, run it again up the intervention
    /// ladder (a system warning, then `tool_choice` forced, then degraded translation) and
    /// report at which stage the model complied (default false).
    pub intervene: Option<bool>,
    /// replay: the recorded conversations (History JSONL), relative to this file.
    pub history: Option<String>,
}

/// How a command target's stdout is read.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub enum RawAnswer {
    /// stdout is an agent protocol response (docs/agent-protocol.md).
    Protocol,
    /// All of stdout is the answer text, never read as a protocol response.
    Text,
    /// stdout is JSON; the answer is the value at this JSONPath (RFC 9535), such as
    /// `$.result`.
    Json(String),
}

/// The target platform.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RawPlatform {
    /// Upstream MCP servers, each with a `command` (stdio) or a `url` (Streamable HTTP).
    pub mcp_servers: Option<Vec<RawMcpServer>>,
    /// Installed plugins: name -> version.
    pub plugins: Option<IndexMap<String, String>>,
    /// Granted permission scopes.
    pub scopes: Option<Vec<String>>,
    /// Network endpoints by name: an http(s) URL (GET) or `host:port` (TCP connect).
    pub network: Option<IndexMap<String, String>>,
}

/// One upstream MCP server.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RawMcpServer {
    /// Its name: tools are known as `name:tool` when names collide.
    pub name: String,
    /// stdio: the argv of the server process.
    pub command: Option<Vec<String>>,
    /// stdio: extra environment variables for the server process.
    pub env: Option<IndexMap<String, String>>,
    /// Streamable HTTP: the endpoint URL.
    pub url: Option<String>,
    /// Streamable HTTP: request headers (`${VAR}` expands from the environment).
    pub headers: Option<IndexMap<String, String>>,
}

/// How the matrix runs.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RawMatrix {
    /// Cells run at once (default: the number of CPUs).
    #[schemars(range(min = 1))]
    pub jobs: Option<u32>,
    /// Runs of each cell; a cell passes only if all pass (default 1).
    #[schemars(range(min = 1))]
    pub repeat: Option<u32>,
    /// How long a TIMEOUT fault holds a call before failing it (default 5s).
    pub timeout_fault_delay: Option<String>,
    /// The delay a LATENCY fault adds to each call (default 1s).
    pub latency_fault_delay: Option<String>,
}

/// Where reports go.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RawReport {
    /// The report directory, relative to this file (default `target/fibon`).
    pub dir: Option<String>,
    /// Whether `run`, `audit` and `sample` write report.html beside report.json (default
    /// true; `--html PATH` writes it anyway).
    pub html: Option<bool>,
}
