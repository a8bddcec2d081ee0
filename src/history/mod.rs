//! Recorded conversations (DESIGN.md's History format, normative: JSONL, one conversation
//! per line) and OpenTelemetry GenAI spans exported as OTLP JSON, read into one model —
//! streamed, one line at a time, so memory stays flat however long the history is.

mod otlp;

use std::io::BufRead;
use std::path::Path;

use serde_json::Value;

pub use otlp::conversations_from_otlp;

/// One recorded tool call.
#[derive(Debug, Clone, PartialEq)]
pub struct RecordedCall {
    /// The tool.
    pub tool: String,
    /// Its arguments.
    pub arguments: Value,
    /// The MCP result, when it succeeded.
    pub result: Option<Value>,
    /// `{code, message}`, when it failed.
    pub error: Option<Value>,
}

/// One recorded conversation.
#[derive(Debug, Clone, PartialEq)]
pub struct Conversation {
    /// Its id.
    pub id: String,
    /// The Skill.
    pub skill: String,
    /// The user's input.
    pub input: String,
    /// When it happened (as recorded).
    pub ts: Option<String>,
    /// Its tool calls, in order.
    pub trace: Vec<RecordedCall>,
    /// The response fields (`output`, `status`, `error`, `degraded`, `citations`).
    pub response: Value,
}

impl Conversation {
    /// Reads one History line.
    pub fn parse(line: &str) -> Result<Conversation, String> {
        let v: Value = serde_json::from_str(line).map_err(|e| format!("not JSON: {e}"))?;
        Conversation::from_value(&v)
    }

    /// Reads one History object.
    pub fn from_value(v: &Value) -> Result<Conversation, String> {
        if !v.is_object() {
            return Err("a conversation is a JSON object".into());
        }
        let id = v["id"].as_str().ok_or("no `id`")?.to_string();
        let trace = v["trace"]
            .as_array()
            .map(|calls| {
                calls
                    .iter()
                    .map(|c| RecordedCall {
                        tool: c["tool"].as_str().unwrap_or_default().to_string(),
                        arguments: c.get("arguments").cloned().unwrap_or(Value::Null),
                        result: c.get("result").filter(|r| !r.is_null()).cloned(),
                        error: c.get("error").filter(|e| !e.is_null()).cloned(),
                    })
                    .collect()
            })
            .unwrap_or_default();
        let mut response = serde_json::Map::new();
        for key in ["output", "status", "error", "degraded", "citations"] {
            if let Some(x) = v.get(key) {
                response.insert(key.into(), x.clone());
            }
        }
        Ok(Conversation {
            id,
            skill: v["skill"].as_str().unwrap_or_default().to_string(),
            input: v["input"].as_str().unwrap_or_default().to_string(),
            ts: v["ts"].as_str().map(String::from),
            trace,
            response: Value::Object(response),
        })
    }
}

/// One item read from a history: a conversation, or a line that could not be read.
#[derive(Debug)]
pub enum Item {
    /// A conversation.
    Conversation(Conversation),
    /// A line (1-based) that is not a conversation, and why.
    Bad {
        /// The line number.
        line: usize,
        /// Why.
        reason: String,
    },
}

/// Streams a history file — History JSONL, or OTLP JSON (one export request per line, as
/// the OpenTelemetry Collector's file exporter writes, or one document) — calling `each`
/// for every item with the bytes read so far. Returns the lines read.
pub fn stream(path: &Path, mut each: impl FnMut(Item, u64)) -> std::io::Result<usize> {
    if let Some(doc) = whole_document(path)? {
        let size = std::fs::metadata(path)?.len();
        conversations_from_otlp(&doc)
            .into_iter()
            .for_each(|c| each(Item::Conversation(c), size));
        return Ok(1);
    }
    let file = std::fs::File::open(path)?;
    let mut reader = std::io::BufReader::with_capacity(256 * 1024, file);
    let mut line = String::new();
    let mut line_no = 0usize;
    let mut bytes = 0u64;
    loop {
        line.clear();
        let n = reader.read_line(&mut line)?;
        if n == 0 {
            break;
        }
        line_no += 1;
        bytes += n as u64;
        let text = line.trim();
        if text.is_empty() {
            continue;
        }
        if text.contains("\"resourceSpans\"") {
            match serde_json::from_str::<Value>(text) {
                Ok(v) => conversations_from_otlp(&v)
                    .into_iter()
                    .for_each(|c| each(Item::Conversation(c), bytes)),
                Err(e) => each(
                    Item::Bad {
                        line: line_no,
                        reason: format!("not JSON: {e}"),
                    },
                    bytes,
                ),
            }
            continue;
        }
        match Conversation::parse(text) {
            Ok(c) => each(Item::Conversation(c), bytes),
            Err(reason) => each(
                Item::Bad {
                    line: line_no,
                    reason,
                },
                bytes,
            ),
        }
    }
    Ok(line_no)
}

/// A pretty-printed OTLP document (its first line is not a JSON value on its own): the
/// whole file parsed at once. `None` for line-oriented files.
fn whole_document(path: &Path) -> std::io::Result<Option<Value>> {
    // A document is read whole; past this size a file is taken as line-oriented.
    if std::fs::metadata(path)?.len() > 256 * 1024 * 1024 {
        return Ok(None);
    }
    let file = std::fs::File::open(path)?;
    let mut first = String::new();
    let mut reader = std::io::BufReader::new(file);
    while first.trim().is_empty() {
        first.clear();
        if reader.read_line(&mut first)? == 0 {
            return Ok(None);
        }
    }
    if serde_json::from_str::<Value>(first.trim()).is_ok() || !first.trim_start().starts_with('{') {
        return Ok(None);
    }
    let mut rest = String::new();
    std::io::Read::read_to_string(&mut reader, &mut rest)?;
    Ok(serde_json::from_str::<Value>(&format!("{first}{rest}"))
        .ok()
        .filter(|v| v.get("resourceSpans").is_some()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_history_lines() {
        let c = Conversation::parse(r#"{"id": "c1", "skill": "s", "input": "q", "trace": [{"tool": "t", "arguments": {"x": 1}, "result": {"content": []}}, {"tool": "u", "error": {"code": "TIMEOUT"}}], "output": "a", "status": "ok"}"#).unwrap();
        assert_eq!((c.id.as_str(), c.trace.len()), ("c1", 2));
        assert!(c.trace[1].error.is_some() && c.trace[1].result.is_none());
        assert_eq!(c.response["output"], "a");
        assert!(Conversation::parse("[1]").is_err());
        assert!(
            Conversation::parse(r#"{"skill": "s"}"#)
                .unwrap_err()
                .contains("id")
        );
    }
}
