//! JSON-RPC 2.0 messages as `serde_json::Value`: telling requests, notifications and
//! responses apart, and building each. Nothing is dropped: params and results stay the
//! values that came over the wire.

use serde_json::{Map, Value, json};

/// Invalid JSON was received.
pub const PARSE_ERROR: i64 = -32700;
/// The JSON sent is not a valid request object.
pub const INVALID_REQUEST: i64 = -32600;
/// The method does not exist or is not available.
pub const METHOD_NOT_FOUND: i64 = -32601;
/// Invalid method parameters (also: an unknown tool, as Python SDK servers answer).
pub const INVALID_PARAMS: i64 = -32602;
/// Internal JSON-RPC error.
pub const INTERNAL_ERROR: i64 = -32603;
/// A request that timed out (the TypeScript SDK's `RequestTimeout`).
pub const REQUEST_TIMEOUT: i64 = -32001;

/// One incoming message, classified.
#[derive(Debug, Clone, PartialEq)]
pub enum Message {
    /// Has `method` and `id`.
    Request {
        /// The id, any JSON value the peer chose.
        id: Value,
        /// The method.
        method: String,
        /// The params (`null` when absent).
        params: Value,
    },
    /// Has `method` and no `id`.
    Notification {
        /// The method.
        method: String,
        /// The params (`null` when absent).
        params: Value,
    },
    /// Has `id` and `result` or `error`.
    Response {
        /// The id it answers.
        id: Value,
        /// `Ok(result)` or `Err(error object)`.
        outcome: Result<Value, Value>,
    },
}

impl Message {
    /// Classifies a value; `Err` says why it is not a JSON-RPC 2.0 message.
    pub fn parse(value: Value) -> Result<Message, String> {
        let Value::Object(mut map) = value else {
            return Err("a JSON-RPC message is an object".into());
        };
        if map.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
            return Err("missing `\"jsonrpc\": \"2.0\"`".into());
        }
        let id = map.remove("id");
        // JSON-RPC 2.0: an id is a string, a number or null; an object or an array is not
        // one (and could not be matched to its answer).
        if id
            .as_ref()
            .is_some_and(|id| id.is_object() || id.is_array())
        {
            return Err("`id` must be a string, a number or null".into());
        }
        match map.remove("method") {
            Some(Value::String(method)) => {
                let params = map.remove("params").unwrap_or(Value::Null);
                Ok(match id {
                    Some(id) => Message::Request { id, method, params },
                    None => Message::Notification { method, params },
                })
            }
            Some(_) => Err("`method` is not a string".into()),
            None => {
                let id = id.ok_or("neither `method` nor `id`")?;
                let outcome = match (map.remove("result"), map.remove("error")) {
                    (Some(r), None) => Ok(r),
                    (None, Some(e)) => Err(e),
                    _ => return Err("a response has exactly one of `result` and `error`".into()),
                };
                Ok(Message::Response { id, outcome })
            }
        }
    }
}

/// A POST body read as JSON-RPC: one message, a batch, or a batch over the limit given
/// (counted, not kept).
#[derive(Debug, Clone, PartialEq)]
pub enum Incoming {
    /// One message (any JSON value but an array).
    One(Value),
    /// A batch within the limit.
    Batch(Vec<Value>),
    /// A batch of this many messages, over the limit: none of them was kept.
    TooLarge(usize),
}

/// Reads a body as one JSON-RPC message or a batch of at most `max_batch` messages. A
/// longer batch is read through (to tell its length and that it is JSON) without keeping
/// its messages, so that its size costs no memory.
pub fn parse_capped(body: &[u8], max_batch: usize) -> Result<Incoming, serde_json::Error> {
    use serde::de::{DeserializeSeed, IgnoredAny, SeqAccess, Visitor};

    struct Capped(usize);

    impl<'de> Visitor<'de> for Capped {
        type Value = Incoming;
        fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str("a JSON-RPC batch")
        }
        fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Incoming, A::Error> {
            let mut kept = Vec::new();
            while kept.len() < self.0 {
                match seq.next_element::<Value>()? {
                    Some(v) => kept.push(v),
                    None => return Ok(Incoming::Batch(kept)),
                }
            }
            if seq.next_element::<IgnoredAny>()?.is_none() {
                return Ok(Incoming::Batch(kept));
            }
            drop(kept);
            let mut n = self.0 + 1;
            while seq.next_element::<IgnoredAny>()?.is_some() {
                n += 1;
            }
            Ok(Incoming::TooLarge(n))
        }
    }

    impl<'de> DeserializeSeed<'de> for Capped {
        type Value = Incoming;
        fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<Incoming, D::Error> {
            d.deserialize_seq(self)
        }
    }

    let first = body.iter().find(|b| !b.is_ascii_whitespace());
    if first != Some(&b'[') {
        return serde_json::from_slice(body).map(Incoming::One);
    }
    let mut de = serde_json::Deserializer::from_slice(body);
    let incoming = Capped(max_batch).deserialize(&mut de)?;
    de.end()?;
    Ok(incoming)
}

/// A request.
pub fn request(id: impl Into<Value>, method: &str, params: Value) -> Value {
    let mut m = Map::new();
    m.insert("jsonrpc".into(), "2.0".into());
    m.insert("id".into(), id.into());
    m.insert("method".into(), method.into());
    if !params.is_null() {
        m.insert("params".into(), params);
    }
    Value::Object(m)
}

/// A notification.
pub fn notification(method: &str, params: Value) -> Value {
    let mut m = Map::new();
    m.insert("jsonrpc".into(), "2.0".into());
    m.insert("method".into(), method.into());
    if !params.is_null() {
        m.insert("params".into(), params);
    }
    Value::Object(m)
}

/// A success response.
pub fn response(id: Value, result: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "result": result})
}

/// An error response.
pub fn error_response(id: Value, error: &RpcError) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "error": error.to_value()})
}

/// A JSON-RPC error object.
#[derive(Debug, Clone, PartialEq)]
pub struct RpcError {
    /// The code.
    pub code: i64,
    /// The message.
    pub message: String,
    /// Optional data.
    pub data: Option<Value>,
}

impl RpcError {
    /// An error without data.
    pub fn new(code: i64, message: impl Into<String>) -> RpcError {
        RpcError {
            code,
            message: message.into(),
            data: None,
        }
    }

    /// Adds data.
    pub fn with_data(mut self, data: Value) -> RpcError {
        self.data = Some(data);
        self
    }

    /// The wire form.
    pub fn to_value(&self) -> Value {
        let mut m = Map::new();
        m.insert("code".into(), self.code.into());
        m.insert("message".into(), self.message.clone().into());
        if let Some(d) = &self.data {
            m.insert("data".into(), d.clone());
        }
        Value::Object(m)
    }

    /// Reads an error object as a peer sent it (tolerating missing fields).
    pub fn from_value(v: &Value) -> RpcError {
        RpcError {
            code: v
                .get("code")
                .and_then(Value::as_i64)
                .unwrap_or(INTERNAL_ERROR),
            message: v
                .get("message")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string(),
            data: v.get("data").cloned(),
        }
    }
}

impl std::fmt::Display for RpcError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} (JSON-RPC error {})", self.message, self.code)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classifies_messages_and_keeps_unknown_fields() {
        let req = Message::parse(json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"name": "x", "vendor": {"a": 1}}})).unwrap();
        assert_eq!(
            req,
            Message::Request {
                id: json!(7),
                method: "tools/call".into(),
                params: json!({"name": "x", "vendor": {"a": 1}})
            }
        );
        let note = Message::parse(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
            .unwrap();
        assert!(matches!(
            note,
            Message::Notification {
                params: Value::Null,
                ..
            }
        ));
        let err = Message::parse(
            json!({"jsonrpc": "2.0", "id": "a", "error": {"code": -32602, "message": "m"}}),
        )
        .unwrap();
        assert!(matches!(
            err,
            Message::Response {
                outcome: Err(_),
                ..
            }
        ));
        assert!(Message::parse(json!({"id": 1, "method": "x"})).is_err());
        assert!(
            Message::parse(json!({"jsonrpc": "2.0", "id": 1, "result": 1, "error": {}})).is_err()
        );
        assert!(Message::parse(json!([1])).is_err());
    }

    #[test]
    fn ids_are_strings_numbers_or_null() {
        for id in [json!("a"), json!(1), json!(1.5), Value::Null] {
            let m = json!({"jsonrpc": "2.0", "id": id, "method": "ping"});
            assert!(Message::parse(m).is_ok(), "{id}");
        }
        for id in [json!({}), json!([1])] {
            let m = json!({"jsonrpc": "2.0", "id": id, "method": "ping"});
            assert!(Message::parse(m).is_err(), "{id}");
        }
    }

    #[test]
    fn batches_over_the_limit_are_counted_not_kept() {
        let batch = |n: usize| serde_json::to_vec(&vec![json!({"a": [1, 2]}); n]).unwrap();
        assert_eq!(
            parse_capped(&batch(3), 3).unwrap(),
            Incoming::Batch(vec![json!({"a": [1, 2]}); 3])
        );
        assert_eq!(parse_capped(&batch(4), 3).unwrap(), Incoming::TooLarge(4));
        assert_eq!(parse_capped(&batch(0), 3).unwrap(), Incoming::Batch(vec![]));
        assert_eq!(
            parse_capped(b" {\"x\": 1}", 3).unwrap(),
            Incoming::One(json!({"x": 1}))
        );
        assert!(parse_capped(b"[1, 2, 3, 4, 5", 3).is_err(), "still JSON");
        assert!(parse_capped(b"[1] x", 3).is_err(), "trailing characters");
    }

    #[test]
    fn builds_messages() {
        assert_eq!(
            request(1, "ping", Value::Null),
            json!({"jsonrpc": "2.0", "id": 1, "method": "ping"})
        );
        let e = RpcError::new(INVALID_PARAMS, "Unknown tool: x").with_data(json!({"tool": "x"}));
        assert_eq!(
            error_response(json!(2), &e)["error"],
            json!({"code": -32602, "message": "Unknown tool: x", "data": {"tool": "x"}})
        );
    }
}
