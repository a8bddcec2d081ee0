//! Recorded conversations (docs/history.md, normative: History JSONL, one conversation
//! per line) and OpenTelemetry GenAI spans exported as OTLP JSON, read into one model —
//! streamed, one line at a time, so memory stays flat however long the history is.

mod glob;
mod otlp;
mod peek;

use std::io::{BufRead, Read as _};
use std::path::Path;

use serde_json::Value;

pub use otlp::conversations_from_otlp;
pub use peek::{Peek, peek};

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
        Conversation::from_value(v)
    }

    /// Reads one History object, moving its parts out rather than copying them: a line
    /// may be megabytes of tool results.
    pub fn from_value(mut v: Value) -> Result<Conversation, String> {
        if !v.is_object() {
            return Err("a conversation is a JSON object".into());
        }
        let id = v["id"].as_str().ok_or("no `id`")?.to_string();
        let trace = match v["trace"].take() {
            Value::Array(calls) => calls
                .into_iter()
                .map(|mut c| RecordedCall {
                    tool: c["tool"].as_str().unwrap_or_default().to_string(),
                    arguments: c.get_mut("arguments").map_or(Value::Null, Value::take),
                    result: c
                        .get_mut("result")
                        .map(Value::take)
                        .filter(|r| !r.is_null()),
                    error: c.get_mut("error").map(Value::take).filter(|e| !e.is_null()),
                })
                .collect(),
            _ => Vec::new(),
        };
        let mut response = serde_json::Map::new();
        for key in ["output", "status", "error", "degraded", "citations"] {
            if let Some(x) = v.get_mut(key) {
                response.insert(key.into(), x.take());
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

/// Why a history cannot be read. Lines that cannot be used are not errors: they are
/// [`Item::Bad`]s, and reading goes on.
#[derive(Debug, thiserror::Error)]
pub enum HistoryError {
    /// It is not a regular file (a folder, a FIFO that would block, a device that never
    /// ends), or it is not there: refused before it is opened.
    #[error("cannot read {}: {reason}", path.display())]
    NotRegular {
        /// The history.
        path: std::path::PathBuf,
        /// Why, for a person.
        reason: String,
    },
    /// Opening or reading it failed.
    #[error("cannot read {}: {source}", path.display())]
    Io {
        /// The history.
        path: std::path::PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
}

impl HistoryError {
    /// The history.
    pub fn path(&self) -> &Path {
        match self {
            HistoryError::NotRegular { path, .. } | HistoryError::Io { path, .. } => path,
        }
    }

    /// Why it cannot be read, for a person.
    pub fn reason(&self) -> String {
        match self {
            HistoryError::NotRegular { reason, .. } => reason.clone(),
            HistoryError::Io { source, .. } => source.to_string(),
        }
    }
}

/// A history that cannot be read is named, with why (exit 64).
impl From<HistoryError> for crate::errors::ExpectedError {
    fn from(e: HistoryError) -> crate::errors::ExpectedError {
        crate::errors::ExpectedError::Unreadable {
            path: e.path().to_path_buf(),
            reason: e.reason(),
        }
    }
}

/// A history named on the command line, checked before it is streamed: a regular file
/// (exit 64 naming it otherwise), with its size for the progress bar.
#[derive(Debug, Clone)]
pub struct HistoryFile {
    /// The path, as named.
    pub path: std::path::PathBuf,
    /// Its size in bytes when it was checked.
    pub bytes: u64,
}

impl HistoryFile {
    /// Checks the history at `path` without opening it.
    pub fn named(path: &Path) -> Result<HistoryFile, crate::errors::ExpectedError> {
        Ok(HistoryFile {
            path: path.to_path_buf(),
            bytes: crate::source::check_input(path)?,
        })
    }

    /// Every history `--history` names, in the order named: a path, or a pattern (`*`,
    /// `?` and `[...]` in any component, as logs rotated by hour are named) standing for
    /// the files it matches in name order. A pattern that matches no file, and a file
    /// named twice (its conversations would count twice), are refused (64). A name that
    /// exists is a name, whatever characters it has.
    pub fn all(
        named: &[std::path::PathBuf],
    ) -> Result<Vec<HistoryFile>, crate::errors::ExpectedError> {
        let mut out: Vec<HistoryFile> = Vec::new();
        for name in named {
            let paths = if glob::is_pattern(name) && !name.exists() {
                let found = glob::expand(name);
                if found.is_empty() {
                    return Err(crate::errors::ExpectedError::Unreadable {
                        path: name.clone(),
                        reason: "no file matches this pattern".into(),
                    });
                }
                found
            } else {
                vec![name.clone()]
            };
            for path in paths {
                let file = HistoryFile::named(&path)?;
                let same = |a: &Path, b: &Path| {
                    a == b
                        || matches!((a.canonicalize(), b.canonicalize()), (Ok(x), Ok(y)) if x == y)
                };
                if out.iter().any(|f| same(&f.path, &file.path)) {
                    return Err(crate::errors::ExpectedError::Unreadable {
                        path: file.path,
                        reason: "it is named twice: its conversations would be counted twice"
                            .into(),
                    });
                }
                out.push(file);
            }
        }
        Ok(out)
    }
}

/// The longest history line read: 16 MiB. A longer line is an [`Item::Bad`], skipped
/// without being stored, so one runaway line cannot exhaust memory.
pub const MAX_LINE_BYTES: usize = 16 * 1024 * 1024;

/// Streams a history file — History JSONL, or OTLP JSON (one export request per line, as
/// the OpenTelemetry Collector's file exporter writes, or one document) — calling `each`
/// for every item with the bytes read so far. Returns the lines read. A line that is not
/// UTF-8, is over [`MAX_LINE_BYTES`] or does not parse is an [`Item::Bad`] and the lines
/// after it are still read; anything but a regular file (a folder, a FIFO that would
/// block, a device that never ends) is refused before it is opened.
pub fn stream(path: &Path, mut each: impl FnMut(Item, u64)) -> Result<usize, HistoryError> {
    let mut lines = Lines::open(path)?;
    let mut items = Vec::new();
    while let Some(read) = lines.next_entry()? {
        let at = match read {
            Entry::Line { no, read, line } => {
                items_of(no, line, |i| items.push(i));
                read
            }
            Entry::Document {
                conversations,
                read,
            } => {
                items.extend(conversations.into_iter().map(Item::Conversation));
                read
            }
        };
        // A megabyte-long line leaves no buffer that size behind it while it is checked.
        lines.release();
        for item in items.drain(..) {
            each(item, at);
        }
    }
    Ok(lines.count())
}

/// One line of a history as read, before it is parsed: its text (UTF-8, trimmed, not
/// blank), or why it cannot be used.
#[derive(Debug, Clone, Copy)]
pub enum Line<'a> {
    /// Its text.
    Text(&'a str),
    /// Longer than [`MAX_LINE_BYTES`]: not read.
    TooLong,
    /// Not UTF-8: the offset of the first invalid byte.
    NotUtf8(usize),
}

/// What [`Lines::next_entry`] read.
#[derive(Debug)]
pub enum Entry<'a> {
    /// A line that is not blank.
    Line {
        /// Its number, from 1.
        no: usize,
        /// The bytes of the file read through its end.
        read: u64,
        /// The line.
        line: Line<'a>,
    },
    /// A pretty-printed OTLP document, read whole: its conversations.
    Document {
        /// Its conversations.
        conversations: Vec<Conversation>,
        /// Its size.
        read: u64,
    },
}

/// A history read a line at a time, the lines left unparsed so that a caller can parse
/// them elsewhere (`audit` parses on every core): [`stream`] is built on it.
#[derive(Debug)]
pub struct Lines {
    path: std::path::PathBuf,
    document: Option<(Vec<Conversation>, u64)>,
    reader: Option<std::io::BufReader<std::fs::File>>,
    buf: Vec<u8>,
    line_no: usize,
    bytes: u64,
}

impl Lines {
    /// Opens a history; anything but a regular file is refused before it is opened.
    pub fn open(path: &Path) -> Result<Lines, HistoryError> {
        crate::source::regular_file(path).map_err(|reason| HistoryError::NotRegular {
            path: path.to_path_buf(),
            reason,
        })?;
        let io = |source| HistoryError::Io {
            path: path.to_path_buf(),
            source,
        };
        let mut lines = Lines {
            path: path.to_path_buf(),
            document: None,
            reader: None,
            buf: Vec::new(),
            line_no: 0,
            bytes: 0,
        };
        if let Some(doc) = whole_document(path).map_err(io)? {
            let size = std::fs::metadata(path).map_err(io)?.len();
            lines.document = Some((conversations_from_otlp(&doc), size));
            lines.line_no = 1;
        } else {
            let file = std::fs::File::open(path).map_err(io)?;
            lines.reader = Some(std::io::BufReader::with_capacity(256 * 1024, file));
        }
        Ok(lines)
    }

    /// The next line that is not blank (or the whole document), `None` at the end.
    pub fn next_entry(&mut self) -> Result<Option<Entry<'_>>, HistoryError> {
        if let Some((conversations, read)) = self.document.take() {
            return Ok(Some(Entry::Document {
                conversations,
                read,
            }));
        }
        let Some(reader) = self.reader.as_mut() else {
            return Ok(None);
        };
        let bad = loop {
            let (n, whole) =
                next_line(reader, &mut self.buf).map_err(|source| HistoryError::Io {
                    path: self.path.clone(),
                    source,
                })?;
            if n == 0 {
                self.reader = None;
                return Ok(None);
            }
            self.line_no += 1;
            self.bytes += n;
            if !whole {
                break Some(Line::TooLong);
            }
            match std::str::from_utf8(&self.buf) {
                Ok(text) if text.trim().is_empty() => continue,
                Ok(_) => break None,
                Err(e) => break Some(Line::NotUtf8(e.valid_up_to())),
            }
        };
        let line = match bad {
            Some(line) => line,
            // Checked in the loop: UTF-8 (borrowed again here, past it).
            None => Line::Text(std::str::from_utf8(&self.buf).unwrap_or_default().trim()),
        };
        Ok(Some(Entry::Line {
            no: self.line_no,
            read: self.bytes,
            line,
        }))
    }

    /// Lets go of the line buffer when the last line was long (a megabyte or more).
    pub fn release(&mut self) {
        if self.buf.capacity() > 1024 * 1024 {
            self.buf = Vec::new();
        }
    }

    /// The lines read so far (blank ones too; a whole document counts as one).
    pub fn count(&self) -> usize {
        self.line_no
    }
}

/// The items of one line read by [`Lines`] (line `no`): a conversation, the conversations
/// of an OTLP export request, or an [`Item::Bad`] saying why it is not one.
pub fn items_of(no: usize, line: Line<'_>, mut each: impl FnMut(Item)) {
    let bad = |reason: String| Item::Bad { line: no, reason };
    let text = match line {
        Line::Text(text) => text,
        Line::TooLong => {
            return each(bad(format!(
                "longer than {} MiB: not read",
                MAX_LINE_BYTES / (1024 * 1024)
            )));
        }
        Line::NotUtf8(at) => {
            return each(bad(format!(
                "not UTF-8 text (invalid byte at offset {at} of the line)"
            )));
        }
    };
    if is_otlp(text) {
        match serde_json::from_str::<Value>(text) {
            Ok(v) => conversations_from_otlp(&v)
                .into_iter()
                .for_each(|c| each(Item::Conversation(c))),
            Err(e) => each(bad(format!("not JSON: {e}"))),
        }
        return;
    }
    match Conversation::parse(text) {
        Ok(c) => each(Item::Conversation(c)),
        Err(reason) => each(bad(reason)),
    }
}

/// Whether a line is an OTLP export request rather than a History conversation.
pub fn is_otlp(text: &str) -> bool {
    memchr::memmem::find(text.as_bytes(), b"\"resourceSpans\"").is_some()
}

/// Reads the next line into `buf` (without its newline), as bytes: at most
/// [`MAX_LINE_BYTES`] are kept, the rest of a longer line is skipped unread. Returns the
/// bytes consumed (0 at the end of the file) and whether `buf` holds the whole line.
fn next_line(reader: &mut impl BufRead, buf: &mut Vec<u8>) -> std::io::Result<(u64, bool)> {
    buf.clear();
    let n = reader
        .by_ref()
        .take(MAX_LINE_BYTES as u64 + 1)
        .read_until(b'\n', buf)? as u64;
    if buf.last() == Some(&b'\n') {
        buf.pop();
        return Ok((n, true));
    }
    if buf.len() <= MAX_LINE_BYTES {
        return Ok((n, true));
    }
    buf.clear();
    let mut consumed = n;
    loop {
        let chunk = match reader.fill_buf() {
            Ok(chunk) => chunk,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        if chunk.is_empty() {
            break;
        }
        let (skip, end) = match chunk.iter().position(|b| *b == b'\n') {
            Some(i) => (i + 1, true),
            None => (chunk.len(), false),
        };
        reader.consume(skip);
        consumed += skip as u64;
        if end {
            break;
        }
    }
    Ok((consumed, false))
}

/// A pretty-printed OTLP document (its first line is not a JSON value on its own): the
/// whole file parsed at once. `None` for line-oriented files, and for any file whose
/// first line is over-long or not UTF-8 (streaming reports that line).
fn whole_document(path: &Path) -> std::io::Result<Option<Value>> {
    // A document is read whole; past this size a file is taken as line-oriented.
    if std::fs::metadata(path)?.len() > 256 * 1024 * 1024 {
        return Ok(None);
    }
    let mut reader = std::io::BufReader::new(std::fs::File::open(path)?);
    let mut doc = Vec::new();
    loop {
        let (n, whole) = next_line(&mut reader, &mut doc)?;
        if n == 0 || !whole {
            return Ok(None);
        }
        if !doc.trim_ascii().is_empty() {
            break;
        }
    }
    let Ok(first) = std::str::from_utf8(&doc).map(str::trim) else {
        return Ok(None);
    };
    if !first.starts_with('{') || serde_json::from_str::<Value>(first).is_ok() {
        return Ok(None);
    }
    doc.push(b'\n');
    reader.read_to_end(&mut doc)?;
    Ok(serde_json::from_slice::<Value>(&doc)
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

    #[test]
    fn a_line_over_the_cap_is_skipped_without_being_stored() {
        let mut text = vec![b'x'; MAX_LINE_BYTES];
        text.push(b'\n');
        text.extend(vec![b'y'; MAX_LINE_BYTES + 1]);
        text.extend(b"\nlast");
        let mut reader = std::io::Cursor::new(text);
        let mut buf = Vec::new();
        let whole = next_line(&mut reader, &mut buf).unwrap();
        assert_eq!(
            (whole, buf.len()),
            ((MAX_LINE_BYTES as u64 + 1, true), MAX_LINE_BYTES)
        );
        let cut = next_line(&mut reader, &mut buf).unwrap();
        assert_eq!((cut, buf.len()), ((MAX_LINE_BYTES as u64 + 2, false), 0));
        assert_eq!(next_line(&mut reader, &mut buf).unwrap(), (4, true));
        assert_eq!(buf, b"last");
        assert_eq!(next_line(&mut reader, &mut buf).unwrap(), (0, true));
    }
}
