//! OpenTelemetry GenAI spans (OTLP JSON) as conversations: one trace is one conversation
//! (`gen_ai.conversation.id` when present, else the trace id); `execute_tool` spans are
//! its tool calls, in start order (`gen_ai.tool.name`, `gen_ai.tool.call.arguments`,
//! `gen_ai.tool.call.result`, an error status as the call's error); the agent span gives
//! the Skill (`fibon.skill`, else `gen_ai.agent.name`), the input and the output.

use std::collections::BTreeMap;

use serde_json::{Value, json};

use super::{Conversation, RecordedCall};

fn attrs(span: &Value) -> BTreeMap<String, Value> {
    span["attributes"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|a| {
            let key = a["key"].as_str()?.to_string();
            let v = &a["value"];
            let value = if let Some(s) = v.get("stringValue") {
                s.clone()
            } else if let Some(i) = v.get("intValue") {
                i.clone()
            } else if let Some(b) = v.get("boolValue") {
                b.clone()
            } else if let Some(d) = v.get("doubleValue") {
                d.clone()
            } else {
                v.clone()
            };
            Some((key, value))
        })
        .collect()
}

fn text(v: Option<&Value>) -> Option<String> {
    v.and_then(Value::as_str).map(String::from)
}

/// A JSON-bearing attribute: parsed when it is JSON text, else the string itself.
fn json_attr(v: Option<&Value>) -> Value {
    match v {
        Some(Value::String(s)) => {
            serde_json::from_str(s).unwrap_or_else(|_| Value::String(s.clone()))
        }
        Some(other) => other.clone(),
        None => Value::Null,
    }
}

/// The last message of a role in a `gen_ai.*.messages` attribute, as text.
fn message_text(messages: &Value, role: &str) -> Option<String> {
    let list = messages.as_array()?;
    let m = list.iter().rev().find(|m| m["role"] == role)?;
    if let Some(parts) = m["parts"].as_array() {
        let t: Vec<&str> = parts
            .iter()
            .filter_map(|p| p["content"].as_str().or(p["text"].as_str()))
            .collect();
        return Some(t.join("\n"));
    }
    m["content"].as_str().map(String::from)
}

/// A span's start time, attributes and status.
type SpanInfo = (u64, BTreeMap<String, Value>, Value);

/// Every conversation of one OTLP export request.
pub fn conversations_from_otlp(export: &Value) -> Vec<Conversation> {
    let mut traces: BTreeMap<String, Vec<SpanInfo>> = BTreeMap::new();
    for rs in export["resourceSpans"].as_array().into_iter().flatten() {
        for ss in rs["scopeSpans"].as_array().into_iter().flatten() {
            for span in ss["spans"].as_array().into_iter().flatten() {
                let start = span["startTimeUnixNano"]
                    .as_str()
                    .and_then(|s| s.parse().ok())
                    .or(span["startTimeUnixNano"].as_u64())
                    .unwrap_or(0);
                let trace = span["traceId"].as_str().unwrap_or("").to_string();
                traces
                    .entry(trace)
                    .or_default()
                    .push((start, attrs(span), span["status"].clone()));
            }
        }
    }
    let mut out = Vec::new();
    for (trace_id, mut spans) in traces {
        spans.sort_by_key(|(t, _, _)| *t);
        let mut c = Conversation {
            id: trace_id,
            skill: String::new(),
            input: String::new(),
            ts: None,
            trace: Vec::new(),
            response: json!({}),
        };
        for (_, a, status) in &spans {
            if let Some(id) = text(a.get("gen_ai.conversation.id")) {
                c.id = id;
            }
            match a.get("gen_ai.operation.name").and_then(Value::as_str) {
                Some("execute_tool") => {
                    let failed = status["code"] == 2 || status["code"] == "STATUS_CODE_ERROR";
                    let result = json_attr(a.get("gen_ai.tool.call.result"));
                    let result = match result {
                        Value::Null => None,
                        r @ Value::Object(_) if r.get("content").is_some() => Some(r),
                        other => Some(
                            json!({"content": [{"type": "text", "text": match other { Value::String(s) => s, v => v.to_string() }}], "isError": false}),
                        ),
                    };
                    c.trace.push(RecordedCall {
                        tool: text(a.get("gen_ai.tool.name")).unwrap_or_default(),
                        arguments: json_attr(a.get("gen_ai.tool.call.arguments")),
                        result: if failed { None } else { result },
                        error: failed.then(|| json!({"code": text(a.get("error.type")).unwrap_or_else(|| "ERROR".into()), "message": status["message"].as_str().unwrap_or("")})),
                    });
                }
                _ => {
                    if let Some(s) =
                        text(a.get("fibon.skill")).or_else(|| text(a.get("gen_ai.agent.name")))
                    {
                        c.skill = s;
                    }
                    let input = json_attr(a.get("gen_ai.input.messages"));
                    if let Some(t) =
                        message_text(&input, "user").or_else(|| text(a.get("gen_ai.prompt")))
                    {
                        c.input = t;
                    }
                    let output = json_attr(a.get("gen_ai.output.messages"));
                    if let Some(t) = message_text(&output, "assistant")
                        .or_else(|| text(a.get("gen_ai.completion")))
                    {
                        c.response["output"] = Value::String(t);
                    }
                }
            }
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn converts_genai_spans() {
        let kv = |k: &str, v: &str| json!({"key": k, "value": {"stringValue": v}});
        let export = json!({"resourceSpans": [{"scopeSpans": [{"spans": [
            {"traceId": "t1", "startTimeUnixNano": "3", "attributes": [kv("gen_ai.operation.name", "execute_tool"), kv("gen_ai.tool.name", "read_page"), kv("gen_ai.tool.call.arguments", "{\"url\": \"https://docs.anthropic.com\"}"), kv("gen_ai.tool.call.result", "claude-sonnet-4-6")], "status": {}},
            {"traceId": "t1", "startTimeUnixNano": "1", "attributes": [kv("gen_ai.operation.name", "invoke_agent"), kv("gen_ai.agent.name", "fetch_anthropic_models"), kv("gen_ai.conversation.id", "conv-9"), kv("gen_ai.input.messages", "[{\"role\": \"user\", \"parts\": [{\"type\": \"text\", \"content\": \"latest?\"}]}]"), kv("gen_ai.output.messages", "[{\"role\": \"assistant\", \"parts\": [{\"type\": \"text\", \"content\": \"claude-sonnet-4-6\"}]}]")]},
            {"traceId": "t1", "startTimeUnixNano": "5", "attributes": [kv("gen_ai.operation.name", "execute_tool"), kv("gen_ai.tool.name", "search"), kv("error.type", "TIMEOUT")], "status": {"code": 2, "message": "timed out"}}
        ]}]}]});
        let cs = conversations_from_otlp(&export);
        assert_eq!(cs.len(), 1);
        let c = &cs[0];
        assert_eq!(
            (c.id.as_str(), c.skill.as_str(), c.input.as_str()),
            ("conv-9", "fetch_anthropic_models", "latest?")
        );
        assert_eq!(c.response["output"], "claude-sonnet-4-6");
        assert_eq!(c.trace[0].arguments["url"], "https://docs.anthropic.com");
        assert_eq!(
            c.trace[0].result.as_ref().unwrap()["content"][0]["text"],
            "claude-sonnet-4-6"
        );
        assert_eq!(c.trace[1].error.as_ref().unwrap()["code"], "TIMEOUT");
    }
}
