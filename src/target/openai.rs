//! An `openai` target: fibon-verify drives an OpenAI-compatible chat model itself. Each
//! step offers the session's *current* tools (from the gateway's tools/list, so a removed
//! tool is really absent), executes the model's tool calls through the gateway session,
//! feeds results or errors back, and stops at a final answer or at `max_steps`. Both
//! `tool_calls` and the legacy `function_call` are read; malformed arguments are a finding
//! fed back to the model, not a crash, and stay findings however the cell ends; a reply
//! that is not a chat-completion message (a `content` that is not text, `tool_calls` that
//! is not an array…), or an endpoint that cannot be reached or keeps failing, makes the
//! cell `error`.

use std::time::Duration;

use serde_json::{Value, json};

use super::{Intervention, Invocation, Limits, Request, Response, SelfReportedCall};
use crate::chat::ChatClient;

/// The model and how to drive it.
#[derive(Debug, Clone)]
pub(super) struct ModelSpec<'a> {
    /// The API base URL (`…/v1`).
    pub(super) base_url: &'a url::Url,
    /// The model name.
    pub(super) model: &'a str,
    /// The variable holding the API key.
    pub(super) api_key_env: Option<&'a str>,
    /// The system prompt.
    pub(super) system_prompt: Option<&'a str>,
    /// The most model turns.
    pub(super) max_steps: u32,
    /// Sampling temperature.
    pub(super) temperature: f64,
    /// `auto`, `required`, `none`, or a tool name to force.
    pub(super) tool_choice: &'a str,
    /// The whole invocation's timeout.
    pub(super) timeout: Duration,
}

/// Runs the tool-calling loop for one request.
pub(super) async fn invoke(spec: &ModelSpec<'_>, request: &Request, limits: Limits) -> Invocation {
    let chat = match ChatClient::new(spec.base_url, spec.api_key_env, spec.timeout) {
        Ok(c) => c,
        Err(e) => {
            return Invocation::Failed {
                reason: e.to_string(),
            };
        }
    };
    let tools = match reqwest::Client::builder()
        .timeout(spec.timeout)
        .no_proxy()
        // Idle pooled connections are dropped before a server's idle limit can close
        // one under a request (the gateway's is 120 s).
        .pool_idle_timeout(std::time::Duration::from_secs(20))
        .build()
    {
        Ok(client) => SessionTools {
            client,
            url: request.tools_url.clone(),
        },
        Err(e) => {
            return Invocation::Failed {
                reason: format!("cannot build an HTTP client: {e}"),
            };
        }
    };
    // The malformed calls noticed so far outlive the loop: a model cut off by the timeout
    // still made them.
    let mut notes = Vec::new();
    let run = run_loop(spec, &chat, &tools, request, limits, &mut notes);
    match tokio::time::timeout(spec.timeout, run).await {
        Ok(invocation) => invocation,
        Err(_) => Invocation::TimedOut {
            after: spec.timeout,
            stderr: String::new(),
            notes,
        },
    }
}

/// The session's REST tools.
struct SessionTools {
    client: reqwest::Client,
    url: String,
}

impl SessionTools {
    /// The current tools as OpenAI function tools.
    async fn list(&self) -> Result<Vec<Value>, String> {
        let listed: Value = self
            .client
            .get(&self.url)
            .send()
            .await
            .map_err(|e| format!("cannot list the session's tools: {e}"))?
            .json()
            .await
            .map_err(|e| format!("cannot read the session's tool list: {e}"))?;
        Ok(listed["tools"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|t| {
                let name = t["name"].as_str()?;
                let mut parameters = t
                    .get("inputSchema")
                    .cloned()
                    .unwrap_or_else(|| json!({"type": "object"}));
                if parameters.get("type").is_none() {
                    parameters["type"] = json!("object");
                }
                Some(json!({
                    "type": "function",
                    "function": {
                        "name": name,
                        "description": t["description"].as_str().unwrap_or_default(),
                        "parameters": parameters,
                    }
                }))
            })
            .collect())
    }

    /// Calls a tool; the text the model is given back (a result, or an error as JSON).
    async fn call(&self, tool: &str, arguments: &Value) -> String {
        // The model chose the name: it must stay one path segment (a `/` or `..` would
        // reach another of the gateway's routes).
        if matches!(tool, "" | "." | "..") {
            return json!({"error": {"code": "TOOL_NOT_FOUND", "message": format!("no tool is named `{tool}`")}})
                .to_string();
        }
        let resp = match self
            .client
            .post(format!("{}/{}", self.url, path_segment(tool)))
            .json(arguments)
            .send()
            .await
        {
            Ok(r) => r,
            Err(e) => {
                return json!({"error": {"code": "SERVER_DOWN", "message": e.to_string()}})
                    .to_string();
            }
        };
        let ok = resp.status().is_success();
        let body: Value = resp.json().await.unwrap_or(Value::Null);
        if !ok {
            return json!({"error": body.get("error").cloned().unwrap_or(body)}).to_string();
        }
        crate::gateway::reply_text(&body)
    }
}

/// `name` percent-encoded as one URL path segment (RFC 3986: unreserved bytes kept).
fn path_segment(name: &str) -> String {
    name.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                char::from(b).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}

/// One call the model asked for.
struct Call {
    /// `tool_calls[].id`; `None` for the legacy `function_call`.
    id: Option<String>,
    name: String,
    arguments: Result<Value, String>,
}

/// A reply's message, read: the message as sent back to the model, its text, and the
/// calls it asks for.
struct Message {
    raw: Value,
    text: String,
    calls: Vec<Call>,
}

/// The JSON type of a value, for messages.
fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// Reads `choices[0].message` of a chat completion. A message of the wrong shape is the
/// endpoint breaking the protocol (the error says where), never an empty answer.
/// Malformed tool-call *arguments* are the model's doing: they come back as the call's
/// `Err`.
fn read_message(reply: &Value) -> Result<Message, String> {
    let Some(message) = reply["choices"].get(0).and_then(|c| c.get("message")) else {
        return Err("it has no `choices[0].message`".into());
    };
    if !message.is_object() {
        return Err(format!(
            "`choices[0].message` is {}, not an object",
            kind(message)
        ));
    }
    let text = match &message["content"] {
        Value::Null => String::new(),
        Value::String(s) => s.clone(),
        // Content parts, as some servers send them: the text (or refusal) of each.
        Value::Array(parts) => parts
            .iter()
            .enumerate()
            .map(|(i, part)| match (part["type"].as_str(), part) {
                (Some("text"), p) if p["text"].is_string() => {
                    Ok(p["text"].as_str().unwrap_or_default())
                }
                (Some("refusal"), p) if p["refusal"].is_string() => {
                    Ok(p["refusal"].as_str().unwrap_or_default())
                }
                _ => Err(format!(
                    "`content[{i}]` is not a text part (`{{\"type\": \"text\", \"text\": …}}`)"
                )),
            })
            .collect::<Result<Vec<&str>, String>>()?
            .concat(),
        other => {
            return Err(format!("`content` is {}, not text or null", kind(other)));
        }
    };
    // A refusal comes in its own field, with no content.
    let text = match &message["refusal"] {
        Value::Null => text,
        Value::String(r) if text.is_empty() => r.clone(),
        Value::String(_) => text,
        other => {
            return Err(format!("`refusal` is {}, not text or null", kind(other)));
        }
    };
    let parse = |raw: &Value| -> Result<Value, String> {
        match raw {
            Value::String(s) if s.trim().is_empty() => Ok(json!({})),
            Value::String(s) => match serde_json::from_str::<Value>(s) {
                Ok(v @ Value::Object(_)) => Ok(v),
                Ok(other) => Err(format!("the arguments are JSON but not an object: {other}")),
                Err(e) => Err(format!("the arguments are not valid JSON ({e}): {s}")),
            },
            Value::Object(_) => Ok(raw.clone()),
            Value::Null => Ok(json!({})),
            other => Err(format!("the arguments are not an object: {other}")),
        }
    };
    let name = |function: &Value, at: &str| -> Result<String, String> {
        if !function.is_object() {
            return Err(format!("`{at}` is {}, not an object", kind(function)));
        }
        match &function["name"] {
            Value::String(n) => Ok(n.clone()),
            other => Err(format!("`{at}.name` is {}, not a string", kind(other))),
        }
    };
    let mut calls = Vec::new();
    match &message["tool_calls"] {
        Value::Null => {}
        Value::Array(list) => {
            for (i, c) in list.iter().enumerate() {
                if !c.is_object() {
                    return Err(format!("`tool_calls[{i}]` is {}, not an object", kind(c)));
                }
                let id = match &c["id"] {
                    Value::Null => String::new(),
                    Value::String(id) => id.clone(),
                    other => {
                        return Err(format!(
                            "`tool_calls[{i}].id` is {}, not a string",
                            kind(other)
                        ));
                    }
                };
                let function = &c["function"];
                calls.push(Call {
                    id: Some(id),
                    name: name(function, &format!("tool_calls[{i}].function"))?,
                    arguments: parse(&function["arguments"]),
                });
            }
        }
        other => {
            return Err(format!("`tool_calls` is {}, not an array", kind(other)));
        }
    }
    match &message["function_call"] {
        Value::Null => {}
        f if calls.is_empty() => calls.push(Call {
            id: None,
            name: name(f, "function_call")?,
            arguments: parse(&f["arguments"]),
        }),
        // Beside `tool_calls`, the legacy field is not read (but must still be a call).
        f => {
            name(f, "function_call")?;
        }
    }
    Ok(Message {
        raw: message.clone(),
        text,
        calls,
    })
}

async fn run_loop(
    spec: &ModelSpec<'_>,
    chat: &ChatClient,
    tools: &SessionTools,
    request: &Request,
    limits: Limits,
    notes: &mut Vec<String>,
) -> Invocation {
    let mut messages = Vec::new();
    if let Some(system) = spec.system_prompt {
        messages.push(json!({"role": "system", "content": system}));
    }
    if let Some(Intervention::Warn(required)) = &request.intervention {
        let names: Vec<String> = required.iter().map(|t| format!("`{t}`")).collect();
        messages.push(json!({"role": "system", "content": format!(
            "Warning: you must call {} before answering. An answer that does not come from the \
             tool results will be rejected; if a tool is unavailable, say so instead of answering.",
            names.join(", ")
        )}));
    }
    messages.push(json!({"role": "user", "content": request.input}));
    let mut offer_tools = true;
    if let Some(Intervention::Translate(calls)) = &request.intervention {
        // Degraded translation: the verifier made the calls; the model only restates.
        let results: Vec<String> = calls
            .iter()
            .map(|c| {
                format!(
                    "The tool `{}` was called for you and returned:\n{}",
                    c.tool, c.result
                )
            })
            .collect();
        messages.push(json!({"role": "user", "content": format!(
            "{}\n\nAnswer the question above by restating {}. Add nothing that is not in {}.",
            results.join("\n\n"),
            if calls.len() == 1 { "this result" } else { "these results" },
            if calls.len() == 1 { "it" } else { "them" },
        )}));
        offer_tools = false;
    }
    if let Some((previous, feedback)) = &request.revise {
        messages.push(json!({"role": "assistant", "content": previous}));
        messages.push(json!({"role": "user", "content": format!(
            "Revise your answer. Reviewers said: {feedback}"
        )}));
    }
    let mut trace = Vec::new();
    for turn in 0..spec.max_steps.max(1) {
        let offered = if offer_tools {
            match tools.list().await {
                Ok(t) => t,
                Err(reason) => return Invocation::Failed { reason },
            }
        } else {
            Vec::new()
        };
        let forced = match &request.intervention {
            Some(Intervention::Force(tool))
                if turn == 0 && offered.iter().any(|t| t["function"]["name"] == *tool) =>
            {
                Some(tool.as_str())
            }
            _ => None,
        };
        let mut body = json!({
            "model": spec.model,
            "messages": messages,
            "temperature": spec.temperature,
        });
        if !offered.is_empty() {
            body["tool_choice"] = match forced.unwrap_or(spec.tool_choice) {
                choice @ ("auto" | "required" | "none") => json!(choice),
                tool => json!({"type": "function", "function": {"name": tool}}),
            };
            body["tools"] = Value::Array(offered);
        }
        // Every ChatError means the model could not be asked: the cell cannot be evaluated.
        let reply = match chat.complete(&body).await {
            Ok(r) => r,
            Err(e) => {
                return Invocation::Failed {
                    reason: format!("the model endpoint: {e}"),
                };
            }
        };
        let message = match read_message(&reply) {
            Ok(m) => m,
            Err(why) => {
                return Invocation::Failed {
                    reason: format!("{}: the model's reply is malformed: {why}", chat.url()),
                };
            }
        };
        if message.calls.is_empty() {
            let mut output = message.text;
            let truncated = output.len() > limits.output_cap;
            if truncated {
                let mut cut = limits.output_cap;
                while !output.is_char_boundary(cut) {
                    cut -= 1;
                }
                output.truncate(cut);
            }
            return Invocation::Responded {
                response: Response {
                    output: Value::String(output),
                    status: None,
                    error_code: None,
                    error_message: None,
                    degraded: false,
                    citations: Vec::new(),
                    trace,
                    notes: std::mem::take(notes),
                    protocol: Vec::new(),
                },
                code: None,
                stderr: String::new(),
                truncated,
            };
        }
        messages.push(message.raw);
        for call in message.calls {
            let result = match &call.arguments {
                Ok(arguments) => {
                    trace.push(SelfReportedCall {
                        tool: call.name.clone(),
                        arguments: arguments.clone(),
                    });
                    tools.call(&call.name, arguments).await
                }
                Err(why) => {
                    notes.push(format!(
                        "the model called `{}` with malformed arguments: {why}",
                        call.name
                    ));
                    json!({"error": {"code": "INVALID_ARGUMENTS", "message": why}}).to_string()
                }
            };
            messages.push(match &call.id {
                Some(id) => json!({"role": "tool", "tool_call_id": id, "content": result}),
                None => json!({"role": "function", "name": call.name, "content": result}),
            });
        }
    }
    Invocation::HardInterrupt {
        reason: format!(
            "the model was still calling tools after max_steps ({}) turns; no final answer",
            spec.max_steps
        ),
        stderr: String::new(),
        notes: std::mem::take(notes),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tool_name_stays_one_path_segment() {
        assert_eq!(path_segment("read_page"), "read_page");
        assert_eq!(path_segment("../trace"), "..%2Ftrace");
        assert_eq!(path_segment("a b/é"), "a%20b%2F%C3%A9");
    }

    fn reply(message: Value) -> Value {
        json!({"choices": [{"index": 0, "message": message}]})
    }

    #[test]
    fn reads_tool_calls_and_the_legacy_function_call() {
        let m = json!({"content": "let me look", "tool_calls": [
            {"id": "a", "type": "function", "function": {"name": "search", "arguments": "{\"q\": \"x\"}"}},
            {"id": "b", "type": "function", "function": {"name": "read", "arguments": "{oops"}},
            {"id": "c", "type": "function", "function": {"name": "ping", "arguments": ""}}
        ]});
        let c = read_message(&reply(m)).unwrap().calls;
        assert_eq!(c.len(), 3);
        assert_eq!(c[0].arguments, Ok(json!({"q": "x"})));
        assert!(
            c[1].arguments
                .as_ref()
                .unwrap_err()
                .contains("not valid JSON")
        );
        assert_eq!(c[2].arguments, Ok(json!({})));
        let legacy = read_message(&reply(
            json!({"function_call": {"name": "search", "arguments": "[1]"}}),
        ))
        .unwrap()
        .calls;
        assert_eq!(legacy[0].id, None);
        assert!(
            legacy[0].arguments.is_err(),
            "an array is not an arguments object"
        );
        let done = read_message(&reply(json!({"content": "done", "tool_calls": []}))).unwrap();
        assert!(done.calls.is_empty());
        assert_eq!(done.text, "done");
    }

    #[test]
    fn a_message_of_the_wrong_shape_is_an_error_saying_where() {
        for (message, says) in [
            (
                json!({"content": 5, "tool_calls": "x"}),
                "`content` is a number",
            ),
            (
                json!({"content": null, "tool_calls": "x"}),
                "`tool_calls` is a string",
            ),
            (json!({"tool_calls": [1]}), "`tool_calls[0]` is a number"),
            (
                json!({"tool_calls": [{"id": 1, "function": {"name": "a"}}]}),
                "`tool_calls[0].id` is a number",
            ),
            (
                json!({"tool_calls": [{"id": "a", "function": "f"}]}),
                "`tool_calls[0].function` is a string",
            ),
            (
                json!({"tool_calls": [{"id": "a", "function": {"arguments": "{}"}}]}),
                "`tool_calls[0].function.name` is null",
            ),
            (json!({"function_call": [1]}), "`function_call` is an array"),
            (
                json!({"content": [{"type": "image_url"}]}),
                "`content[0]` is not a text part",
            ),
            (
                json!({"content": null, "refusal": 1}),
                "`refusal` is a number",
            ),
            (json!("text"), "`choices[0].message` is a string"),
        ] {
            let why = read_message(&reply(message.clone()))
                .err()
                .unwrap_or_else(|| panic!("{message} was accepted"));
            assert!(why.contains(says), "{message}: {why}");
        }
        assert!(
            read_message(&json!({"choices": []}))
                .err()
                .unwrap()
                .contains("no `choices[0].message`")
        );
        // Text parts and a refusal are read; an absent content is an empty answer.
        let parts = json!({"content": [{"type": "text", "text": "a"}, {"type": "refusal", "refusal": "b"}]});
        assert_eq!(read_message(&reply(parts)).unwrap().text, "ab");
        let refusal = json!({"content": null, "refusal": "no"});
        assert_eq!(read_message(&reply(refusal)).unwrap().text, "no");
        assert_eq!(read_message(&reply(json!({}))).unwrap().text, "");
    }
}
