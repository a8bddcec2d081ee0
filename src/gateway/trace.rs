//! The authoritative trace of a session: every `tools/list` and tool call the gateway
//! served, with monotonic timestamps, the arguments, the fault applied, the status and
//! the result text (capped). The agent cannot forge it: it is the gateway's own record.
//! A call is recorded when it starts ([`Trace::begin`]) and completed when it is
//! answered, so a call still being served is `in_flight` and one whose client went away
//! before the answer is `cancelled` — never missing.

use std::sync::{Mutex, MutexGuard, PoisonError};
use std::time::Instant;

use serde::{Deserialize, Deserializer, Serialize};
use serde_json::Value;

pub use crate::vocab::Status;

/// One event.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct TraceEvent {
    /// Order within the session, from 1: the order in which calls and lists started.
    pub seq: u64,
    /// Milliseconds since the session opened (monotonic clock).
    pub at_ms: f64,
    /// `rest` or `mcp`.
    #[serde(deserialize_with = "transport")]
    pub transport: Name,
    /// `list` or `call`.
    #[serde(deserialize_with = "op")]
    pub op: Name,
    /// The tool called (calls only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool: Option<String>,
    /// Where the tool came from: `fixture` or `SERVER:TOOL`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub provenance: Option<String>,
    /// The arguments, as received.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub arguments: Option<Value>,
    /// The fault applied, if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fault: Option<String>,
    /// What happened.
    pub status: Status,
    /// Size of the result text in bytes (calls), or the number of tools listed (lists).
    pub result_bytes: usize,
    /// The result's text content, capped.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub result_text: String,
    /// Whether `result_text` was cut.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub truncated: bool,
    /// Tools listed (lists only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tools: Option<Vec<String>>,
    /// A message for failures.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// How long the gateway took to answer, in milliseconds (for a call in flight, how
    /// long it has been served so far; for a cancelled one, until the client went away).
    pub duration_ms: f64,
}

/// One of the names the gateway records. An alias, not `&'static str` written out: serde
/// would take that for a string borrowed from the input (and require a `'static` one).
pub(crate) type Name = &'static str;

/// A trace read back (a shard's report.json, for `merge`): the names stay the ones the
/// gateway records, so a report round-trips unchanged.
fn transport<'de, D: Deserializer<'de>>(d: D) -> Result<Name, D::Error> {
    known(d, &["rest", "mcp", "history", "verifier"])
}

fn op<'de, D: Deserializer<'de>>(d: D) -> Result<Name, D::Error> {
    known(d, &["list", "call"])
}

fn known<'de, D: Deserializer<'de>>(d: D, names: &'static [Name]) -> Result<Name, D::Error> {
    let name = String::deserialize(d)?;
    names
        .iter()
        .find(|n| **n == name)
        .copied()
        .ok_or_else(|| serde::de::Error::unknown_variant(&name, names))
}

/// The most result text a session's trace keeps in all (each result is also capped):
/// an agent calling a large tool a hundred thousand times must not exhaust the
/// verifier's memory or its report. Past it, results are kept as `truncated` and empty.
pub(super) const SESSION_TEXT_BUDGET: usize = 32 * 1024 * 1024;

/// A session's trace.
#[derive(Debug)]
pub struct Trace {
    started: Instant,
    cap: usize,
    kept: std::sync::atomic::AtomicUsize,
    events: Mutex<Vec<TraceEvent>>,
}

impl Trace {
    /// A new trace keeping at most `cap` bytes of each result text.
    pub fn new(cap: usize) -> Trace {
        Trace {
            started: Instant::now(),
            cap,
            kept: std::sync::atomic::AtomicUsize::new(0),
            events: Mutex::new(Vec::new()),
        }
    }

    /// Milliseconds since the session opened.
    pub fn now_ms(&self) -> f64 {
        self.started.elapsed().as_secs_f64() * 1000.0
    }

    /// Records an event that is over as it happens (a list, a refused call); `seq` and
    /// the capping of `result_text` are done here.
    pub fn record(&self, mut event: TraceEvent) {
        self.cap_text(&mut event);
        let mut events = self.lock();
        event.seq = events.len() as u64 + 1;
        events.push(event);
    }

    /// Records a call as it starts, `in_flight`, and returns the guard that completes it.
    /// Dropped without [`PendingCall::finish`] (the client went away and the handler
    /// with it), the call stays in the trace as `cancelled`.
    pub fn begin(&self, mut event: TraceEvent) -> PendingCall<'_> {
        event.status = Status::InFlight;
        let mut events = self.lock();
        event.seq = events.len() as u64 + 1;
        let index = events.len();
        events.push(event);
        PendingCall {
            trace: self,
            index,
            started: Instant::now(),
            finished: false,
        }
    }

    /// A copy of every event so far; a call still in flight has its duration so far.
    pub fn events(&self) -> Vec<TraceEvent> {
        let now_ms = self.now_ms();
        let mut events = self.lock().clone();
        for e in events.iter_mut().filter(|e| e.status == Status::InFlight) {
            e.duration_ms = now_ms - e.at_ms;
        }
        events
    }

    fn cap_text(&self, event: &mut TraceEvent) {
        use std::sync::atomic::Ordering;
        event.result_bytes = event.result_bytes.max(event.result_text.len());
        let want = event.result_text.len().min(self.cap);
        let before = self
            .kept
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |k| {
                Some(k.saturating_add(want).min(SESSION_TEXT_BUDGET))
            })
            .unwrap_or_else(|k| k);
        let cap = want.min(SESSION_TEXT_BUDGET - before.min(SESSION_TEXT_BUDGET));
        if event.result_text.len() > cap {
            let mut cut = cap;
            while !event.result_text.is_char_boundary(cut) {
                cut -= 1;
            }
            event.result_text.truncate(cut);
            event.truncated = true;
        }
    }

    /// The events; a panic elsewhere while holding the lock must not lose the record
    /// (nor panic again in a drop guard).
    fn lock(&self) -> MutexGuard<'_, Vec<TraceEvent>> {
        self.events.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// A call recorded as started: [`PendingCall::finish`] records its answer; dropping it
/// unfinished records it `cancelled`.
#[must_use = "dropping a pending call records it as cancelled"]
pub struct PendingCall<'a> {
    trace: &'a Trace,
    index: usize,
    started: Instant,
    finished: bool,
}

impl PendingCall<'_> {
    /// Records the answer: its status, its result text (capped) and its error message.
    pub fn finish(mut self, status: Status, result_text: String, error: Option<String>) {
        self.finished = true;
        self.complete(status, result_text, error);
    }

    fn complete(&self, status: Status, result_text: String, error: Option<String>) {
        let duration_ms = self.started.elapsed().as_secs_f64() * 1000.0;
        let mut events = self.trace.lock();
        let event = &mut events[self.index];
        event.status = status;
        event.result_bytes = result_text.len();
        event.result_text = result_text;
        event.error = error;
        event.duration_ms = duration_ms;
        self.trace.cap_text(event);
    }
}

impl Drop for PendingCall<'_> {
    fn drop(&mut self) {
        if !self.finished {
            self.complete(
                Status::Cancelled,
                String::new(),
                Some("the client went away before the gateway answered".into()),
            );
        }
    }
}

/// The text of an MCP tool result's content (text parts joined; other parts described).
pub fn result_text(result: &Value) -> String {
    let Some(parts) = result.get("content").and_then(Value::as_array) else {
        return String::new();
    };
    let texts: Vec<String> = parts
        .iter()
        .map(|p| match p.get("type").and_then(Value::as_str) {
            Some("text") => p
                .get("text")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string(),
            Some("resource") => p
                .get("resource")
                .and_then(|r| r.get("text"))
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string(),
            Some(other) => format!("[{other}]"),
            None => String::new(),
        })
        .collect();
    texts.join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn call(text: &str) -> TraceEvent {
        TraceEvent {
            seq: 0,
            at_ms: 0.0,
            transport: "rest",
            op: "call",
            tool: Some("t".into()),
            provenance: None,
            arguments: None,
            fault: None,
            status: Status::Ok,
            result_bytes: 0,
            result_text: text.into(),
            truncated: false,
            tools: None,
            error: None,
            duration_ms: 0.0,
        }
    }

    #[test]
    fn a_session_keeps_at_most_its_text_budget() {
        let mib = "x".repeat(1024 * 1024);
        let trace = Trace::new(mib.len());
        let n = SESSION_TEXT_BUDGET / mib.len() + 3;
        for _ in 0..n {
            trace.record(call(&mib));
        }
        let events = trace.events();
        assert_eq!(events.len(), n, "every call is still recorded");
        let kept: usize = events.iter().map(|e| e.result_text.len()).sum();
        assert_eq!(kept, SESSION_TEXT_BUDGET);
        assert!(events.last().unwrap().truncated);
        assert_eq!(
            events.last().unwrap().result_bytes,
            mib.len(),
            "the size is kept"
        );
        assert!(!events[0].truncated);
    }
}
