//! The systems under test and the agent protocol (docs/agent-protocol.md): the request the
//! verifier sends, the response it reads back, and how each kind of target is invoked.
//! Whatever the agent does — answer, fail, hang, crash, flood — comes back as an
//! [`Invocation`]; only the verifier's own inability to invoke it is `Failed`.

mod command;
mod http;
mod openai;
pub mod orphans;

use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::config::Target;

/// The JSON Schema of the request an agent receives (docs/agent-protocol.md).
pub const AGENT_REQUEST_SCHEMA: &str = include_str!("../../schemas/agent-request.schema.json");

/// The JSON Schema of the response an agent answers with.
pub const AGENT_RESPONSE_SCHEMA: &str = include_str!("../../schemas/agent-response.schema.json");

/// What the agent is sent.
#[derive(Debug, Clone)]
pub struct Request {
    /// This invocation's id.
    pub run_id: String,
    /// The Skill.
    pub skill: String,
    /// The user's input.
    pub input: String,
    /// The session's REST tools URL.
    pub tools_url: String,
    /// The session's MCP URL.
    pub mcp_url: String,
    /// When the quality gate asks for a rewrite: the previous answer and the judges'
    /// reasons (an optional extension of the protocol; agents that ignore it just answer).
    pub revise: Option<(String, String)>,
    /// A stage of the intervention ladder (openai targets only; other targets get the
    /// plain request).
    pub intervention: Option<Intervention>,
}

/// A stage of the intervention ladder (docs/background.md, "The intervention ladder"):
/// how a model that skipped a required tool is pushed to call it.
#[derive(Debug, Clone, PartialEq)]
pub enum Intervention {
    /// Stage 1: a system message warns that the tools must be called.
    Warn(Vec<String>),
    /// Stage 2: `tool_choice` forces this tool on the first turn.
    Force(String),
    /// Stage 3, degraded translation: the verifier has called the required tools itself
    /// (through the gateway session, in order); the model is handed the results and asked
    /// only to restate them.
    Translate(Vec<TranslatedCall>),
}

/// One of the verifier's own calls in degraded translation.
#[derive(Debug, Clone, PartialEq)]
pub struct TranslatedCall {
    /// The tool.
    pub tool: String,
    /// The arguments the verifier derived (from the input, or the result before).
    pub arguments: Value,
    /// What the call returned, as a model is given it: the result text, or the error as
    /// JSON.
    pub result: String,
}

impl Intervention {
    /// 1, 2 or 3.
    pub fn stage(&self) -> u8 {
        match self {
            Intervention::Warn(_) => 1,
            Intervention::Force(_) => 2,
            Intervention::Translate(_) => 3,
        }
    }
}

impl Request {
    /// The wire form (`fibon.agent/v1`). It never reveals the quadrant or the fault.
    pub fn to_json(&self) -> Value {
        let mut v = json!({
            "protocol": "fibon.agent/v1",
            "run_id": self.run_id,
            "skill": self.skill,
            "input": self.input,
            "tools": {"http_url": self.tools_url, "mcp_url": self.mcp_url},
        });
        if let Some((previous, feedback)) = &self.revise {
            v["revise"] = json!({"previous": previous, "feedback": feedback});
        }
        v
    }
}

/// A citation the agent reports.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Citation {
    /// The URL.
    pub url: String,
    /// The quoted text, if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub quote: Option<String>,
}

/// A call the agent says it made.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SelfReportedCall {
    /// The tool.
    pub tool: String,
    /// The arguments.
    pub arguments: Value,
}

/// The agent's response, read tolerantly: every field but `output` is optional.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Response {
    /// The answer: text or any JSON value.
    pub output: Value,
    /// `ok` or `error`, when given.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub status: Option<String>,
    /// `error.code`, when given.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error_code: Option<String>,
    /// `error.message`, when given.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error_message: Option<String>,
    /// The degraded marker.
    pub degraded: bool,
    /// Reported citations.
    pub citations: Vec<Citation>,
    /// The self-reported trace.
    pub trace: Vec<SelfReportedCall>,
    /// What the verifier itself noticed while driving a model target (such as a tool call
    /// with malformed arguments): each becomes a `malformed_tool_call` finding.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
    /// Where the body broke the agent protocol although it meant to follow it (JSON that
    /// does not parse, a response object among other text): each becomes an
    /// `agent_protocol` finding, so an unreadable response is never judged as prose alone.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub protocol: Vec<String>,
}

/// Citations and self-reported calls that cannot be read (a citation without a string
/// `url`, a call without a string `tool`, either list not a list): they are left out of
/// the checks, and each is named rather than dropped in silence.
fn malformed_entries(map: &serde_json::Map<String, Value>) -> Vec<String> {
    let mut out = Vec::new();
    let mut check = |key: &str, field: &str, readable: &dyn Fn(&Value) -> bool| match map.get(key) {
        None | Some(Value::Null) => {}
        Some(Value::Array(items)) => {
            let mut bad = items.iter().enumerate().filter(|(_, v)| !readable(v));
            for (i, item) in bad.by_ref().take(MALFORMED_NAMED) {
                let shown: String = item.to_string().chars().take(120).collect();
                out.push(format!(
                    "`{key}[{i}]` has no {field} and was left out: {shown}"
                ));
            }
            let more = bad.count();
            if more > 0 {
                out.push(format!(
                    "{more} more entries of `{key}` have no {field} and were left out"
                ));
            }
            if items.len() > MAX_LISTED {
                out.push(format!(
                    "`{key}` lists {} entries; the first {MAX_LISTED} were read",
                    items.len()
                ));
            }
        }
        Some(other) => out.push(format!(
            "`{key}` is not a list and was left out: {}",
            other.to_string().chars().take(120).collect::<String>()
        )),
    };
    let non_empty = |v: &Value| v.as_str().is_some_and(|u| !u.trim().is_empty());
    check("citations", "`url` (an absolute URL)", &|c| {
        c.as_str()
            .or_else(|| c.get("url")?.as_str())
            .is_some_and(is_url)
    });
    check("trace", "`tool` (a non-empty string)", &|t| {
        t.get("tool").is_some_and(non_empty)
    });
    out
}

/// Entries of `citations` and of the self-reported `trace` read from one response; the
/// rest is counted in an `agent_protocol` finding, so that a flood of them costs the
/// checks and the report no more than this many.
pub const MAX_LISTED: usize = 1000;

/// Malformed entries named one by one; the rest are counted.
const MALFORMED_NAMED: usize = 5;

/// Whether a citation names a URL: an absolute URL with a host (`https://…`), not any
/// string.
fn is_url(u: &str) -> bool {
    url::Url::parse(u.trim()).is_ok_and(|u| u.has_host())
}

/// Where a body is not UTF-8 (the protocol's encoding), as an `agent_protocol` problem. A
/// sequence cut off at the very end is the output cap's doing, named by the cap.
fn not_utf8(body: &[u8]) -> Option<String> {
    let e = std::str::from_utf8(body).err()?;
    e.error_len()?;
    Some(format!(
        "the response is not UTF-8 (an invalid byte at offset {}); it was read with U+FFFD in place of the invalid bytes",
        e.valid_up_to()
    ))
}

/// The keys of a `fibon.agent/v1` response.
const KEYS: [&str; 6] = [
    "output",
    "status",
    "error",
    "degraded",
    "citations",
    "trace",
];

impl Response {
    /// A response that is only an output.
    fn plain(output: Value) -> Response {
        Response {
            output,
            status: None,
            error_code: None,
            error_message: None,
            degraded: false,
            citations: Vec::new(),
            trace: Vec::new(),
            notes: Vec::new(),
            protocol: Vec::new(),
        }
    }

    /// Reads stdout as the answer text (`answer: text`): all of it, never as a protocol
    /// response. Invalid UTF-8 is read lossily.
    pub fn text(body: &[u8]) -> Response {
        Response::plain(Value::String(String::from_utf8_lossy(body).into_owned())).encoded(body)
    }

    /// Names a body that is not UTF-8 first among the protocol problems.
    fn encoded(mut self, body: &[u8]) -> Response {
        if let Some(problem) = not_utf8(body) {
            self.protocol.insert(0, problem);
        }
        self
    }

    /// Reads stdout as JSON and the answer as the value at `path` (`answer: {json: PATH}`),
    /// `shown` being the path as written. Stdout that is not JSON, or a path that selects
    /// nothing, is an `agent_protocol` problem: never a quiet pass.
    pub fn at_path(body: &[u8], path: &serde_json_path::JsonPath, shown: &str) -> Response {
        Response::at_path_lossy(body, path, shown).encoded(body)
    }

    fn at_path_lossy(body: &[u8], path: &serde_json_path::JsonPath, shown: &str) -> Response {
        let text = String::from_utf8_lossy(body);
        let trimmed = text.trim_start_matches('\u{feff}').trim();
        let value = match serde_json::from_str::<Value>(trimmed) {
            Ok(v) => v,
            Err(e) => {
                let mut response = Response::plain(Value::String(text.to_string()));
                response.protocol.push(format!(
                    "stdout is not JSON ({e}), so the answer at `{shown}` could not be read; the whole text was read as the answer"
                ));
                return response;
            }
        };
        let nodes = path.query(&value).all();
        let Some(first) = nodes.first() else {
            let mut response = Response::plain(Value::Null);
            response.protocol.push(format!(
                "`{shown}` selects nothing in stdout's JSON, so there is no answer: {}",
                value.to_string().chars().take(200).collect::<String>()
            ));
            return response;
        };
        let mut response = Response::plain((*first).clone());
        if nodes.len() > 1 {
            response.protocol.push(format!(
                "`{shown}` selects {} values in stdout's JSON; the first was read as the answer",
                nodes.len()
            ));
        }
        response
    }

    /// Reads a response body: a protocol JSON object, any other JSON value (the output),
    /// or text (the output). Invalid UTF-8 is read lossily.
    pub fn parse(body: &[u8]) -> Response {
        Response::parse_lossy(body).encoded(body)
    }

    fn parse_lossy(body: &[u8]) -> Response {
        let text = String::from_utf8_lossy(body);
        // A byte order mark is not content (RFC 8259 §8.1 lets a parser ignore it).
        let trimmed = text.trim_start_matches('\u{feff}').trim();
        let plain = Response::plain;
        let value = match serde_json::from_str::<Value>(trimmed) {
            Ok(value) => value,
            Err(e) => {
                // Text is an answer (docs/agent-protocol.md: text not JSON is the output), but say
                // so when it was plainly meant as a response.
                let mut response = plain(Value::String(text.to_string()));
                if trimmed.starts_with('{') {
                    response.protocol.push(format!(
                        "the response starts as a JSON object but is not one ({e}); it was read as plain text"
                    ));
                } else if let Some(line) = trimmed.lines().position(|l| {
                    l.trim_start().starts_with('{')
                        && serde_json::from_str::<Value>(l)
                            .ok()
                            .and_then(|v| {
                                v.as_object()
                                    .map(|m| m.keys().any(|k| KEYS.contains(&k.as_str())))
                            })
                            .unwrap_or(false)
                }) {
                    response.protocol.push(format!(
                        "line {} holds a response object among other text (a log line on stdout?); the whole text was read as the answer: print the response alone",
                        line + 1
                    ));
                }
                return response;
            }
        };
        let Value::Object(map) = &value else {
            return plain(value);
        };
        if !map.keys().any(|k| KEYS.contains(&k.as_str())) {
            return plain(value);
        }
        let (error_code, error_message) = match map.get("error") {
            Some(Value::Object(e)) => (
                e.get("code")
                    .map(|c| c.as_str().map_or_else(|| c.to_string(), String::from)),
                e.get("message").and_then(Value::as_str).map(String::from),
            ),
            Some(Value::String(s)) => (None, Some(s.clone())),
            _ => (None, None),
        };
        Response {
            output: map.get("output").cloned().unwrap_or(Value::Null),
            status: map.get("status").and_then(Value::as_str).map(String::from),
            error_code,
            error_message,
            degraded: map
                .get("degraded")
                .and_then(Value::as_bool)
                .unwrap_or(false),
            citations: map
                .get("citations")
                .and_then(Value::as_array)
                .map(|cs| {
                    cs.iter()
                        .take(MAX_LISTED)
                        .filter_map(|c| match c {
                            Value::String(u) if is_url(u) => Some(Citation {
                                url: u.clone(),
                                quote: None,
                            }),
                            Value::Object(o) => Some(Citation {
                                url: o.get("url")?.as_str().filter(|u| is_url(u))?.to_string(),
                                quote: o.get("quote").and_then(Value::as_str).map(String::from),
                            }),
                            _ => None,
                        })
                        .collect()
                })
                .unwrap_or_default(),
            trace: map
                .get("trace")
                .and_then(Value::as_array)
                .map(|ts| {
                    ts.iter()
                        .take(MAX_LISTED)
                        .filter_map(|t| {
                            Some(SelfReportedCall {
                                tool: t.get("tool")?.as_str()?.to_string(),
                                arguments: t.get("arguments").cloned().unwrap_or(Value::Null),
                            })
                        })
                        .collect()
                })
                .unwrap_or_default(),
            notes: Vec::new(),
            protocol: malformed_entries(map),
        }
    }

    /// The answer as text (JSON outputs serialized).
    pub fn output_text(&self) -> String {
        match &self.output {
            Value::String(s) => s.clone(),
            Value::Null => String::new(),
            other => other.to_string(),
        }
    }
}

/// What invoking the agent produced.
#[derive(Debug, Clone)]
#[expect(
    clippy::large_enum_variant,
    reason = "one per cell, never in a hot collection"
)]
pub enum Invocation {
    /// It answered (possibly with an error status).
    Responded {
        /// The response.
        response: Response,
        /// The process exit code or HTTP status.
        code: Option<i32>,
        /// The last of its stderr (command targets).
        stderr: String,
        /// Whether stdout or the body was cut at the cap.
        truncated: bool,
    },
    /// It crashed or failed with no usable answer: a non-zero exit or an HTTP 5xx with no
    /// usable body.
    HardInterrupt {
        /// What happened.
        reason: String,
        /// The last of its stderr.
        stderr: String,
        /// What the verifier noticed before it ended, as in [`Response::notes`].
        notes: Vec<String>,
    },
    /// It did not answer within the timeout (and was killed).
    TimedOut {
        /// The timeout.
        after: Duration,
        /// The last of its stderr.
        stderr: String,
        /// What the verifier noticed before it ended, as in [`Response::notes`].
        notes: Vec<String>,
    },
    /// The verifier could not invoke it at all (not startable, not reachable): the cell
    /// cannot be evaluated.
    Failed {
        /// Why.
        reason: String,
    },
}

impl Invocation {
    /// What the verifier noticed while driving a model target, however the invocation
    /// ended: a model that never answered still made its malformed calls.
    pub fn notes(&self) -> &[String] {
        match self {
            Invocation::Responded { response, .. } => &response.notes,
            Invocation::HardInterrupt { notes, .. } | Invocation::TimedOut { notes, .. } => notes,
            Invocation::Failed { .. } => &[],
        }
    }
}

/// Limits for invoking a target.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// Bytes of stdout (or HTTP body) kept.
    pub output_cap: usize,
    /// Bytes of stderr kept (the tail).
    pub stderr_cap: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            output_cap: 1024 * 1024,
            stderr_cap: 16 * 1024,
        }
    }
}

/// Invokes a target with a request.
pub async fn invoke(target: &Target, request: &Request, limits: Limits) -> Invocation {
    match target {
        Target::Command {
            command,
            env,
            cwd,
            timeout,
            stdin,
            answer,
        } => {
            let spec = command::Spec {
                argv: command,
                env,
                cwd: cwd.as_deref(),
                timeout: *timeout,
                stdin: *stdin,
                answer,
            };
            command::invoke(&spec, request, limits).await
        }
        Target::Http {
            url,
            headers,
            timeout,
        } => http::invoke(url, headers, *timeout, request, limits).await,
        Target::Openai {
            base_url,
            model,
            api_key_env,
            system_prompt,
            max_steps,
            temperature,
            tool_choice,
            timeout,
            intervene: _,
        } => {
            let spec = openai::ModelSpec {
                base_url,
                model,
                api_key_env: api_key_env.as_deref(),
                system_prompt: system_prompt.as_deref(),
                max_steps: *max_steps,
                temperature: *temperature,
                tool_choice,
                timeout: *timeout,
            };
            openai::invoke(&spec, request, limits).await
        }
        Target::Replay { .. } => Invocation::Failed {
            reason: "a replay target is read by the matrix runner, not invoked".into(),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unreadable_citations_and_calls_are_named_not_dropped() {
        let r = Response::parse(
            br#"{"output": "x", "citations": [{"href": "https://evil"}, {"url": ["https://evil"]}, "https://ok"], "trace": [{"name": "t"}]}"#,
        );
        assert_eq!(r.citations.len(), 1);
        assert_eq!(r.protocol.len(), 3, "{:?}", r.protocol);
        assert!(r.protocol[0].starts_with("`citations[0]` has no `url` (an absolute URL)"));
        assert!(r.protocol[2].starts_with("`trace[0]` has no `tool` (a non-empty string)"));
        let r = Response::parse(br#"{"output": "x", "citations": "https://a"}"#);
        assert_eq!(
            r.protocol,
            ["`citations` is not a list and was left out: \"https://a\""]
        );
    }

    #[test]
    fn reads_responses_tolerantly() {
        let r = Response::parse(br#"{"output": "hi", "status": "error", "error": {"code": "TOOL_NOT_FOUND", "message": "m"}, "degraded": true, "citations": [{"url": "https://a"}, "https://b"], "trace": [{"tool": "t", "arguments": {"x": 1}}]}"#);
        assert_eq!(r.status.as_deref(), Some("error"));
        assert_eq!(r.error_code.as_deref(), Some("TOOL_NOT_FOUND"));
        assert!(r.degraded);
        assert_eq!(r.citations.len(), 2);
        assert_eq!(r.trace[0].tool, "t");
        assert_eq!(
            Response::parse(b"plain answer\n").output,
            Value::String("plain answer\n".into())
        );
        assert_eq!(Response::parse(b"[1, 2]").output, json!([1, 2]));
        assert_eq!(
            Response::parse(br#"{"results": []}"#).output,
            json!({"results": []}),
            "an object without protocol keys is the output"
        );
        assert_eq!(
            Response::parse(b"\xff\xfeok").output_text(),
            "\u{fffd}\u{fffd}ok"
        );
        assert_eq!(Response::parse(b"").output_text(), "");
    }
}
