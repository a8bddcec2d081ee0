//! Server-sent events as Streamable HTTP uses them: `event: message` with one JSON-RPC
//! message per `data:`. A small incremental parser (for upstream replies) and a formatter
//! (for the gateway's replies).

/// One parsed event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Event {
    /// `event:` (default `message`).
    pub event: String,
    /// The `data:` lines joined with `\n`.
    pub data: String,
    /// `id:`, if given.
    pub id: Option<String>,
}

/// Incremental parser: feed bytes, take complete events.
#[derive(Debug, Default)]
pub struct Parser {
    buf: Vec<u8>,
    event: Option<String>,
    data: Vec<String>,
    id: Option<String>,
}

impl Parser {
    /// Feeds a chunk of bytes (a UTF-8 character may be split across chunks); returns
    /// the events it completed.
    pub fn feed(&mut self, chunk: &[u8]) -> Vec<Event> {
        self.buf.extend_from_slice(chunk);
        let mut out = Vec::new();
        while let Some(nl) = self.buf.iter().position(|b| *b == b'\n') {
            let raw: Vec<u8> = self.buf.drain(..=nl).collect();
            let line = String::from_utf8_lossy(&raw);
            let line = line.trim_end_matches(['\n', '\r']);
            if line.is_empty() {
                if !self.data.is_empty() {
                    out.push(Event {
                        event: self.event.take().unwrap_or_else(|| "message".into()),
                        data: self.data.join("\n"),
                        id: self.id.take(),
                    });
                }
                self.data.clear();
                self.event = None;
                continue;
            }
            if line.starts_with(':') {
                continue;
            }
            let (field, value) = match line.split_once(':') {
                Some((f, v)) => (f, v.strip_prefix(' ').unwrap_or(v)),
                None => (line, ""),
            };
            match field {
                "event" => self.event = Some(value.to_string()),
                "data" => self.data.push(value.to_string()),
                "id" => self.id = Some(value.to_string()),
                _ => {}
            }
        }
        out
    }
}

/// Formats one JSON-RPC message as an SSE event.
pub fn format(data: &serde_json::Value, id: Option<&str>) -> String {
    let mut s = String::from("event: message\n");
    if let Some(id) = id {
        s.push_str("id: ");
        s.push_str(id);
        s.push('\n');
    }
    s.push_str("data: ");
    s.push_str(&data.to_string());
    s.push_str("\n\n");
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_events_split_across_chunks() {
        let mut p = Parser::default();
        assert!(p.feed(b"event: message\nid: 1\nda").is_empty());
        let evs = p.feed(b"ta: {\"a\":1}\n\n: comment\ndata: x\r\ndata: y\n\n");
        assert_eq!(evs.len(), 2);
        assert_eq!(
            evs[0],
            Event {
                event: "message".into(),
                data: "{\"a\":1}".into(),
                id: Some("1".into())
            }
        );
        assert_eq!(evs[1].data, "x\ny");
        let s = format(&serde_json::json!({"b": 2}), Some("7"));
        assert_eq!(p.feed(s.as_bytes())[0].data, "{\"b\":2}");
        let word = "data: 检索\n\n".as_bytes();
        assert!(p.feed(&word[..8]).is_empty(), "split inside a character");
        assert_eq!(p.feed(&word[8..])[0].data, "检索");
    }
}
