//! The authoritative trace of a session: every `tools/list` and tool call the gateway
//! served, with monotonic timestamps, the arguments, the fault applied, the status and
//! the result text (capped). The agent cannot forge it: it is the gateway's own record.
//! A call is recorded when it starts ([`Trace::begin`]) and completed when it is
//! answered, so a call still being served is `in_flight` and one whose client went away
//! before the answer is `cancelled` — never missing.

use std::sync::{Mutex, MutexGuard, PoisonError};
use std::time::Instant;

use std::collections::BTreeMap;

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

/// The most events a session's trace keeps (docs/gateway.md, "The trace"): an agent
/// making calls in a loop until its timeout must not grow the verifier's memory or the
/// report with every call. Past it, events are counted in the trace's [`Truncated`]
/// note instead of kept.
pub const TRACE_EVENT_CAP: usize = 1_000;

/// The most tool names the [`Truncated`] note counts calls of by name that the session
/// does not serve (an agent can make up any number of them); the session's own tools are
/// always counted by name. Calls to further names are counted in `other_tools`.
pub const TRUNCATED_NAME_CAP: usize = 100;

/// What the events past [`TRACE_EVENT_CAP`] were: counted, not kept, so that the checks
/// that count calls (how often a tool was called, whether the faulted tool was, whether
/// a prohibited one was) still see every call the gateway served.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Truncated {
    /// The events kept (the cap).
    pub kept: usize,
    /// The events past the cap, not kept.
    pub dropped: u64,
    /// Of those, the calls.
    pub dropped_calls: u64,
    /// Of those, the lists.
    pub dropped_lists: u64,
    /// The dropped calls by status (`in_flight`: still being served when the trace was
    /// taken).
    pub by_status: BTreeMap<Status, u64>,
    /// The dropped calls by tool.
    pub by_tool: BTreeMap<String, ToolCalls>,
    /// Dropped calls to tool names past [`TRUNCATED_NAME_CAP`] (or longer than 256
    /// bytes), not counted by name.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub other_tools: u64,
    /// Dropped calls answered `server_down` with no fault applied: an upstream that was
    /// down, which makes the cell an error.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub unfaulted_server_down: u64,
    /// The distinct tool and arguments of the dropped calls, the first
    /// [`TRUNCATED_ARGUMENTS_CAP`] (each of at most 4 KiB of JSON): what the URL whitelist
    /// and the self-reported calls are checked against.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub distinct_calls: Vec<DroppedCall>,
    /// Dropped calls whose tool and arguments are not in `distinct_calls` (new past the
    /// cap, or too long): their arguments are unknown.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub arguments_not_kept: u64,
}

/// The most distinct tool-and-arguments pairs of dropped calls a [`Truncated`] note keeps.
pub const TRUNCATED_ARGUMENTS_CAP: usize = 100;

/// The longest arguments of a dropped call kept, as JSON bytes.
const MAX_KEPT_ARGUMENTS: usize = 4 * 1024;

/// A tool and the arguments of some dropped calls.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DroppedCall {
    /// The tool called.
    pub tool: String,
    /// The arguments, as received.
    pub arguments: Value,
}

/// The dropped calls of one tool.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ToolCalls {
    /// How many.
    pub calls: u64,
    /// Of those, answered `ok`.
    pub ok: u64,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

impl Truncated {
    /// The dropped calls of `tool`.
    pub fn calls_of(&self, tool: &str) -> u64 {
        self.by_tool.get(tool).map_or(0, |t| t.calls)
    }

    /// The dropped calls of `tool` answered `ok`.
    pub fn ok_calls_of(&self, tool: &str) -> u64 {
        self.by_tool.get(tool).map_or(0, |t| t.ok)
    }

    /// The dropped calls of `status`.
    pub fn with_status(&self, status: Status) -> u64 {
        self.by_status.get(&status).copied().unwrap_or(0)
    }

    fn count_status(&mut self, status: Status, delta: i64) {
        let n = self.by_status.entry(status).or_default();
        *n = n.saturating_add_signed(delta);
        if *n == 0 {
            self.by_status.remove(&status);
        }
    }
}

/// A session's trace and its note, taken at one moment.
#[derive(Debug, Clone, Default)]
pub struct Recorded {
    /// The events kept, at most [`TRACE_EVENT_CAP`].
    pub events: Vec<TraceEvent>,
    /// What the events past the cap were, if there were any.
    pub truncated: Option<Truncated>,
}

/// A session's trace.
#[derive(Debug)]
pub struct Trace {
    started: Instant,
    cap: usize,
    kept: std::sync::atomic::AtomicUsize,
    inner: Mutex<Inner>,
}

#[derive(Debug, Default)]
struct Inner {
    events: Vec<TraceEvent>,
    /// Events recorded, kept or not: the next one's `seq` is one more.
    seen: u64,
    truncated: Option<Truncated>,
    /// Names counted in the note that the session does not serve.
    unserved_names: usize,
    /// The note's `distinct_calls`, as JSON text: to tell a new one.
    distinct: std::collections::HashSet<(String, String)>,
}

/// The longest made-up tool name the note counts by name, in bytes.
const MAX_COUNTED_NAME: usize = 256;

impl Inner {
    /// Accounts for an event past the cap; returns the name its calls are counted under
    /// (`None`: a list, or a name past [`TRUNCATED_NAME_CAP`]).
    fn drop_event(&mut self, event: &TraceEvent) -> Option<String> {
        let note = self.truncated.get_or_insert_with(|| Truncated {
            kept: TRACE_EVENT_CAP,
            ..Truncated::default()
        });
        note.dropped += 1;
        if event.op != "call" {
            note.dropped_lists += 1;
            return None;
        }
        note.dropped_calls += 1;
        note.count_status(event.status, 1);
        let tool = event.tool.clone().unwrap_or_default();
        // A served tool (it has a provenance) is always counted by name: the catalog
        // bounds them. Made-up names only up to the cap, and only short ones.
        let by_name = note.by_tool.contains_key(&tool)
            || event.provenance.is_some()
            || (self.unserved_names < TRUNCATED_NAME_CAP && tool.len() <= MAX_COUNTED_NAME);
        if !by_name {
            note.other_tools += 1;
            note.arguments_not_kept += 1;
            return None;
        }
        let text = event
            .arguments
            .as_ref()
            .map_or("null".into(), Value::to_string);
        let key = (tool.clone(), text);
        if key.1.len() > MAX_KEPT_ARGUMENTS
            || (!self.distinct.contains(&key) && self.distinct.len() >= TRUNCATED_ARGUMENTS_CAP)
        {
            note.arguments_not_kept += 1;
        } else if self.distinct.insert(key) {
            note.distinct_calls.push(DroppedCall {
                tool: tool.clone(),
                arguments: event.arguments.clone().unwrap_or(Value::Null),
            });
        }
        if event.provenance.is_none() && !note.by_tool.contains_key(&tool) {
            self.unserved_names += 1;
        }
        note.by_tool.entry(tool.clone()).or_default().calls += 1;
        Some(tool)
    }
}

impl Trace {
    /// A new trace keeping at most `cap` bytes of each result text.
    pub fn new(cap: usize) -> Trace {
        Trace {
            started: Instant::now(),
            cap,
            kept: std::sync::atomic::AtomicUsize::new(0),
            inner: Mutex::new(Inner::default()),
        }
    }

    /// Milliseconds since the session opened.
    pub fn now_ms(&self) -> f64 {
        self.started.elapsed().as_secs_f64() * 1000.0
    }

    /// Records an event that is over as it happens (a list, a refused call); `seq` and
    /// the capping of `result_text` are done here. Past [`TRACE_EVENT_CAP`] it is counted.
    pub fn record(&self, mut event: TraceEvent) {
        let mut inner = self.lock();
        inner.seen += 1;
        if inner.events.len() >= TRACE_EVENT_CAP {
            // Lists and refused calls: never `ok`, nothing more to count.
            inner.drop_event(&event);
            return;
        }
        self.cap_text(&mut event);
        event.seq = inner.seen;
        inner.events.push(event);
    }

    /// Records a call as it starts, `in_flight`, and returns the guard that completes it.
    /// Dropped without [`PendingCall::finish`] (the client went away and the handler
    /// with it), the call stays in the trace as `cancelled`. Past [`TRACE_EVENT_CAP`],
    /// the call is counted in the note, `in_flight` until it completes.
    pub fn begin(&self, mut event: TraceEvent) -> PendingCall<'_> {
        event.status = Status::InFlight;
        let mut inner = self.lock();
        inner.seen += 1;
        let slot = if inner.events.len() >= TRACE_EVENT_CAP {
            Slot::Dropped {
                tool: inner.drop_event(&event),
                faulted: event.fault.is_some(),
            }
        } else {
            event.seq = inner.seen;
            inner.events.push(event);
            Slot::Kept(inner.events.len() - 1)
        };
        PendingCall {
            trace: self,
            slot,
            started: Instant::now(),
            finished: false,
        }
    }

    /// A copy of every event kept so far; a call still in flight has its duration so far.
    pub fn events(&self) -> Vec<TraceEvent> {
        self.recorded().events
    }

    /// The events kept so far and the note of those past the cap, taken together.
    pub fn recorded(&self) -> Recorded {
        let now_ms = self.now_ms();
        let inner = self.lock();
        let mut events = inner.events.clone();
        let truncated = inner.truncated.clone();
        drop(inner);
        for e in events.iter_mut().filter(|e| e.status == Status::InFlight) {
            e.duration_ms = now_ms - e.at_ms;
        }
        Recorded { events, truncated }
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

    /// The record; a panic elsewhere while holding the lock must not lose it (nor panic
    /// again in a drop guard).
    fn lock(&self) -> MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// Where a pending call is recorded: an event kept, or counted in the note.
#[derive(Debug)]
enum Slot {
    /// The index of its event.
    Kept(usize),
    /// Past the cap: the name it is counted under, and whether a fault was applied.
    Dropped { tool: Option<String>, faulted: bool },
}

/// A call recorded as started: [`PendingCall::finish`] records its answer; dropping it
/// unfinished records it `cancelled`.
#[must_use = "dropping a pending call records it as cancelled"]
pub struct PendingCall<'a> {
    trace: &'a Trace,
    slot: Slot,
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
        let mut inner = self.trace.lock();
        match &self.slot {
            Slot::Kept(index) => {
                let event = &mut inner.events[*index];
                event.status = status;
                event.result_bytes = result_text.len();
                event.result_text = result_text;
                event.error = error;
                event.duration_ms = duration_ms;
                self.trace.cap_text(event);
            }
            Slot::Dropped { tool, faulted } => {
                let note = inner
                    .truncated
                    .as_mut()
                    .expect("a dropped call was counted in the note");
                note.count_status(Status::InFlight, -1);
                note.count_status(status, 1);
                if status == Status::Ok
                    && let Some(t) = tool
                {
                    note.by_tool.entry(t.clone()).or_default().ok += 1;
                }
                if status == Status::ServerDown && !faulted {
                    note.unfaulted_server_down += 1;
                }
            }
        }
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
    // One string grown in place: a result may be megabytes.
    let mut out = String::new();
    for (i, p) in parts.iter().enumerate() {
        if i > 0 {
            out.push('\n');
        }
        match p.get("type").and_then(Value::as_str) {
            Some("text") => out.push_str(p.get("text").and_then(Value::as_str).unwrap_or("")),
            Some("resource") => out.push_str(
                p.get("resource")
                    .and_then(|r| r.get("text"))
                    .and_then(Value::as_str)
                    .unwrap_or(""),
            ),
            Some(other) => {
                out.push('[');
                out.push_str(other);
                out.push(']');
            }
            None => {}
        }
    }
    out
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

    #[test]
    fn past_the_event_cap_events_are_counted_not_kept() {
        let trace = Trace::new(1024);
        for _ in 0..TRACE_EVENT_CAP {
            trace.record(call("kept"));
        }
        let list = TraceEvent {
            op: "list",
            tool: None,
            ..call("")
        };
        trace.record(list);
        let mut served = call("");
        served.provenance = Some("fixture".into());
        trace
            .begin(served.clone())
            .finish(Status::Ok, "x".into(), None);
        let pending = trace.begin(served.clone());
        let in_flight = trace.recorded();
        let note = in_flight.truncated.as_ref().unwrap();
        assert_eq!(note.with_status(Status::InFlight), 1);
        assert_eq!(note.calls_of("t"), 2, "counted when it starts");
        drop(pending);
        let mut down = served.clone();
        down.tool = Some("u".into());
        trace
            .begin(down)
            .finish(Status::ServerDown, String::new(), None);
        // Made-up names: counted by name up to the cap, then as others.
        for i in 0..TRUNCATED_NAME_CAP + 2 {
            let mut made_up = call("");
            made_up.tool = Some(format!("nosuch{i}"));
            trace
                .begin(made_up)
                .finish(Status::UnknownTool, String::new(), None);
        }
        let Recorded { events, truncated } = trace.recorded();
        assert_eq!(events.len(), TRACE_EVENT_CAP);
        assert_eq!(events.last().unwrap().seq, TRACE_EVENT_CAP as u64);
        let note = truncated.unwrap();
        assert_eq!(note.kept, TRACE_EVENT_CAP);
        assert_eq!(note.dropped_lists, 1);
        assert_eq!(note.dropped_calls, 3 + TRUNCATED_NAME_CAP as u64 + 2);
        assert_eq!(note.dropped, note.dropped_calls + 1);
        assert_eq!(note.by_tool["t"], ToolCalls { calls: 2, ok: 1 });
        assert_eq!(note.with_status(Status::Cancelled), 1);
        assert_eq!(note.with_status(Status::InFlight), 0, "none left in flight");
        assert_eq!(note.unfaulted_server_down, 1);
        assert_eq!(note.other_tools, 2);
        assert_eq!(note.by_tool.len(), 2 + TRUNCATED_NAME_CAP);
        // `t` twice and `u` once with no arguments, then the made-up names: the first
        // distinct ones kept, the rest (past the cap, or not counted by name) not.
        assert_eq!(note.distinct_calls.len(), TRUNCATED_ARGUMENTS_CAP);
        assert_eq!(
            note.distinct_calls[0],
            DroppedCall {
                tool: "t".into(),
                arguments: Value::Null
            }
        );
        assert_eq!(note.arguments_not_kept, 2 + 2);
        let json = serde_json::to_value(&note).unwrap();
        assert_eq!(
            json["by_status"]["unknown_tool"],
            TRUNCATED_NAME_CAP as u64 + 2
        );
        let back: Truncated = serde_json::from_value(json).unwrap();
        assert_eq!(back, note, "round-trips (merge)");
    }
}
