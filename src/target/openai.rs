//! An `openai` target: fibon-verify drives an OpenAI-compatible chat model itself. Each
//! step offers the session's *current* tools (from the gateway's tools/list, so a removed
//! tool is really absent), executes the model's tool calls through the gateway session,
//! feeds results or errors back, and stops at a final answer or at `max_steps`. Both
//! `tool_calls` and the legacy `function_call` are read; malformed arguments are a finding
//! fed back to the model, not a crash; an endpoint that cannot be reached or keeps failing
//! makes the cell `error`.

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
        Err(reason) => return Invocation::Failed { reason },
    };
    let tools = match reqwest::Client::builder()
        .timeout(spec.timeout)
        .no_proxy()
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
    match tokio::time::timeout(spec.timeout, run_loop(spec, &chat, &tools, request, limits)).await {
        Ok(invocation) => invocation,
        Err(_) => Invocation::TimedOut {
            after: spec.timeout,
            stderr: String::new(),
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
        let resp = match self
            .client
            .post(format!("{}/{tool}", self.url))
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

/// One call the model asked for.
struct Call {
    /// `tool_calls[].id`; `None` for the legacy `function_call`.
    id: Option<String>,
    name: String,
    arguments: Result<Value, String>,
}

/// The calls in a reply message: `tool_calls`, else the legacy `function_call`.
fn calls(message: &Value) -> Vec<Call> {
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
    if let Some(list) = message["tool_calls"].as_array().filter(|l| !l.is_empty()) {
        return list
            .iter()
            .map(|c| Call {
                id: Some(c["id"].as_str().unwrap_or_default().to_string()),
                name: c["function"]["name"]
                    .as_str()
                    .unwrap_or_default()
                    .to_string(),
                arguments: parse(&c["function"]["arguments"]),
            })
            .collect();
    }
    match message.get("function_call") {
        Some(f) if f.is_object() => vec![Call {
            id: None,
            name: f["name"].as_str().unwrap_or_default().to_string(),
            arguments: parse(&f["arguments"]),
        }],
        _ => Vec::new(),
    }
}

async fn run_loop(
    spec: &ModelSpec<'_>,
    chat: &ChatClient,
    tools: &SessionTools,
    request: &Request,
    limits: Limits,
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
    let mut notes = Vec::new();
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
        let Some(message) = reply["choices"][0].get("message").cloned() else {
            return Invocation::Failed {
                reason: format!("{}: the reply has no choices[0].message", chat.url()),
            };
        };
        let asked = calls(&message);
        if asked.is_empty() {
            let mut output = message["content"].as_str().unwrap_or_default().to_string();
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
                    notes,
                    protocol: Vec::new(),
                },
                code: None,
                stderr: String::new(),
                truncated,
            };
        }
        messages.push(message);
        for call in asked {
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
        stderr: notes.join("\n"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_tool_calls_and_the_legacy_function_call() {
        let m = json!({"content": "let me look", "tool_calls": [
            {"id": "a", "type": "function", "function": {"name": "search", "arguments": "{\"q\": \"x\"}"}},
            {"id": "b", "type": "function", "function": {"name": "read", "arguments": "{oops"}},
            {"id": "c", "type": "function", "function": {"name": "ping", "arguments": ""}}
        ]});
        let c = calls(&m);
        assert_eq!(c.len(), 3);
        assert_eq!(c[0].arguments, Ok(json!({"q": "x"})));
        assert!(
            c[1].arguments
                .as_ref()
                .unwrap_err()
                .contains("not valid JSON")
        );
        assert_eq!(c[2].arguments, Ok(json!({})));
        let legacy = calls(&json!({"function_call": {"name": "search", "arguments": "[1]"}}));
        assert_eq!(legacy[0].id, None);
        assert!(
            legacy[0].arguments.is_err(),
            "an array is not an arguments object"
        );
        assert!(calls(&json!({"content": "done", "tool_calls": []})).is_empty());
    }
}
