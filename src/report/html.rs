//! `report.html`: one self-contained page of the report (docs/report.md, "report.html") —
//! the grid per Skill, filters, and each cell's findings, answer and trace. The cells are
//! data, not markup: each goes as JSON into a `<script type="application/json">` element
//! (every `<` escaped, so no answer can close it), and the page's own script
//! (`html.js`) builds the page from them with text nodes only. A Content-Security-Policy
//! forbids any fetch. Written as the cells come, like report.json: each cell to a spill
//! file, cut to the caps below, and the page put together at the end.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use serde_json::{Map, Value, json};

use super::baseline::Change;
use super::{CellReport, Report, Verdict};

const CSS: &str = include_str!("html.css");
const JS: &str = include_str!("html.js");

/// An answer (its text, or its JSON) past this is cut, its full size stated.
pub const OUTPUT_CAP: usize = 8 * 1024;
/// Trace events shown per cell; the rest are counted.
pub const TRACE_CAP: usize = 100;
/// A trace event's result text and arguments past this are cut.
const RESULT_CAP: usize = 300;
/// A finding's evidence (as JSON) past this is cut.
const EVIDENCE_CAP: usize = 4 * 1024;
/// Of the stderr tail, the last bytes kept.
const STDERR_CAP: usize = 2 * 1024;
/// Self-reported calls and citations shown per cell.
const LIST_CAP: usize = 50;
/// Past this many bytes of cells, a cell is written brief (its outcome and findings, not
/// its answer, trace or evidence)…
pub const BUDGET: usize = 17_000_000;
/// …and past this, left out of the page (counted, and in report.json): the page stays
/// under 20 MB whatever the run.
pub const HARD_BUDGET: usize = 19_000_000;
/// A trace event in the page: its fields in this order, an array (the keys of 100 events a
/// cell would weigh more than their values).
pub const TRACE_COLUMNS: [&str; 16] = [
    "seq",
    "at_ms",
    "transport",
    "op",
    "tool",
    "provenance",
    "arguments",
    "fault",
    "status",
    "result_bytes",
    "result_text",
    "result_text_cut",
    "truncated",
    "tools",
    "error",
    "duration_ms",
];
/// A text this long or longer, in a cell's details, is written once in the page's string
/// table and referred to (`{"$s": N}`) wherever it recurs: the fixture results, finding
/// messages and reference answers a matrix repeats across its cells.
const INTERNED: usize = 24;

/// The cells written so far.
#[derive(Debug)]
pub(super) struct Html {
    path: PathBuf,
    out: BufWriter<File>,
    bytes: usize,
    any: bool,
    brief: usize,
    omitted: usize,
    strings: Strings,
}

/// The page's string table.
#[derive(Debug, Default)]
struct Strings {
    index: std::collections::HashMap<String, usize>,
    table: Vec<String>,
    bytes: usize,
}

impl Strings {
    /// Every long string in `v` replaced by its reference in the table.
    fn intern(&mut self, v: &mut Value) {
        match v {
            Value::String(s) if s.len() >= INTERNED => {
                let n = match self.index.get(s.as_str()) {
                    Some(&n) => n,
                    None => {
                        let n = self.table.len();
                        self.bytes += s.len() + 3;
                        self.index.insert(s.clone(), n);
                        self.table.push(std::mem::take(s));
                        n
                    }
                };
                *v = json!({"$s": n});
            }
            Value::Array(a) => a.iter_mut().for_each(|x| self.intern(x)),
            Value::Object(m) => m.values_mut().for_each(|x| self.intern(x)),
            _ => {}
        }
    }
}

/// The fields of a cell the grid and filters read: never interned.
const PLAIN: [&str; 10] = [
    "id", "skill", "scenario", "quadrant", "fault", "behavior", "verdict", "change", "was", "brief",
];

impl Html {
    /// Spills into `path`.
    pub(super) fn new(path: &Path) -> std::io::Result<Html> {
        Ok(Html {
            path: path.to_path_buf(),
            out: BufWriter::new(File::create(path)?),
            bytes: 0,
            any: false,
            brief: 0,
            omitted: 0,
            strings: Strings::default(),
        })
    }

    /// One more cell (redacted already), with how it compares with a baseline.
    pub(super) fn cell(
        &mut self,
        c: &CellReport,
        change: Option<(Change, Option<Verdict>)>,
    ) -> std::io::Result<()> {
        let used = self.bytes + self.strings.bytes;
        if used >= HARD_BUDGET {
            self.omitted += 1;
            return Ok(());
        }
        let brief = used >= BUDGET;
        self.brief += usize::from(brief);
        let mut v = payload(c, brief);
        if let Some((change, was)) = change {
            v["change"] = json!(change.as_str());
            if let Some(was) = was {
                v["was"] = json!(was.as_str());
            }
        }
        if let Value::Object(m) = &mut v {
            for (k, x) in m.iter_mut() {
                if !PLAIN.contains(&k.as_str()) {
                    self.strings.intern(x);
                }
            }
        }
        let text = script_safe(&v.to_string());
        if self.any {
            self.out.write_all(b",\n")?;
        }
        self.any = true;
        self.bytes += text.len();
        self.out.write_all(text.as_bytes())
    }

    /// The page: `report` (its header: counts, baseline, sampling…) around the cells.
    pub(super) fn finish(mut self, report: &Report, w: &mut impl Write) -> std::io::Result<()> {
        self.out.flush()?;
        drop(self.out);
        let mut header = serde_json::to_value(report.header())?;
        header["html"] = json!({
            "brief": self.brief,
            "omitted": self.omitted,
            "budget_bytes": BUDGET,
            "output_cap": OUTPUT_CAP,
            "trace_cap": TRACE_CAP,
            "trace_columns": TRACE_COLUMNS,
        });
        w.write_all(b"<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n")?;
        // Nothing is fetched: no source but the page's own inline style and script.
        w.write_all(b"<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:\">\n")?;
        w.write_all(b"<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>fibon-verify report</title>\n<style>\n")?;
        w.write_all(CSS.as_bytes())?;
        w.write_all(b"</style>\n</head>\n<body>\n<noscript>This report is drawn by its own script; report.json beside it holds the same data.</noscript>\n<div id=\"app\"></div>\n<script type=\"application/json\" id=\"fibon-header\">")?;
        w.write_all(script_safe(&header.to_string()).as_bytes())?;
        w.write_all(b"</script>\n<script type=\"application/json\" id=\"fibon-cells\">[\n")?;
        if self.any {
            std::io::copy(&mut File::open(&self.path)?, w)?;
        }
        w.write_all(b"\n]</script>\n<script type=\"application/json\" id=\"fibon-strings\">")?;
        w.write_all(script_safe(&serde_json::to_string(&self.strings.table)?).as_bytes())?;
        w.write_all(b"</script>\n<script>\n")?;
        w.write_all(JS.as_bytes())?;
        w.write_all(b"</script>\n</body>\n</html>\n")
    }
}

/// JSON that can sit inside a `<script>` element: no `<` (so no `</script>` or `<!--`),
/// and no U+2028/U+2029 — each as its `\u` escape, which JSON reads back the same.
pub fn script_safe(json: &str) -> String {
    json.replace('<', "\\u003c")
        .replace('\u{2028}', "\\u2028")
        .replace('\u{2029}', "\\u2029")
}

/// `s` cut to at most `cap` bytes at a character boundary.
fn head(s: &str, cap: usize) -> &str {
    &s[..s.floor_char_boundary(cap)]
}

/// A text or value cut: `{"$cut": what is kept, "$bytes": the full size}`.
fn cut(v: &Value, cap: usize) -> Value {
    let text = match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    };
    if text.len() <= cap {
        return v.clone();
    }
    json!({"$cut": head(&text, cap), "$bytes": text.len()})
}

/// What the page holds of one cell: the report's fields, cut to the caps.
fn payload(c: &CellReport, brief: bool) -> Value {
    let mut m = Map::new();
    m.insert("id".into(), json!(c.id));
    m.insert("skill".into(), json!(c.skill));
    m.insert("scenario".into(), json!(c.scenario));
    m.insert(
        "quadrant".into(),
        json!(c.quadrant.map_or("", |q| q.as_str())),
    );
    m.insert("fault".into(), json!(c.fault));
    m.insert("removed_tools".into(), json!(c.removed_tools));
    m.insert("behavior".into(), json!(c.behavior));
    m.insert("verdict".into(), json!(c.verdict.as_str()));
    m.insert("attempts".into(), json!(c.attempts));
    m.insert("duration_ms".into(), json!(c.duration_ms));
    m.insert("contract".into(), json!(c.contract));
    m.insert("contract_line".into(), json!(c.contract_line));
    if let Some(risk) = c.risk_level {
        m.insert("risk_level".into(), json!(risk));
    }
    let findings: Vec<Value> = c
        .findings
        .iter()
        .map(|f| {
            let mut v = json!({
                "check": f.check, "severity": f.severity,
                "message": cut(&json!(f.message), if brief { 300 } else { 2048 }),
            });
            if !brief && !f.evidence.is_null() {
                let mut evidence = f.evidence.clone();
                // The answer is shown whole beside it.
                if let Some(m) = evidence.as_object_mut() {
                    m.remove("answer_excerpt");
                }
                v["evidence"] = if evidence.to_string().len() > EVIDENCE_CAP {
                    cut(&evidence, EVIDENCE_CAP)
                } else {
                    evidence
                };
            }
            v
        })
        .collect();
    m.insert("findings".into(), Value::Array(findings));
    if brief {
        m.insert("brief".into(), json!(true));
        return Value::Object(m);
    }
    m.insert("output".into(), cut(&c.output, OUTPUT_CAP));
    let trace: Vec<Value> = c
        .trace
        .iter()
        .take(TRACE_CAP)
        .map(|e| {
            let mut v = serde_json::to_value(e).unwrap_or(Value::Null);
            if e.result_text.len() > RESULT_CAP {
                v["result_text"] = json!(head(&e.result_text, RESULT_CAP));
                v["result_text_cut"] = json!(true);
            }
            if let Some(a) = &e.arguments {
                v["arguments"] = cut(a, RESULT_CAP);
            }
            // Tenths of a millisecond are what a timeline shows.
            for k in ["at_ms", "duration_ms"] {
                if let Some(x) = v[k].as_f64() {
                    v[k] = json!((x * 10.0).round() / 10.0);
                }
            }
            Value::Array(TRACE_COLUMNS.iter().map(|k| v[*k].take()).collect())
        })
        .collect();
    m.insert("trace".into(), Value::Array(trace));
    m.insert("trace_total".into(), json!(c.trace.len()));
    if let Some(t) = &c.trace_truncated {
        m.insert("trace_truncated".into(), json!(t));
    }
    let list = |v: Value| match v {
        Value::Array(a) => Value::Array(
            a.into_iter()
                .take(LIST_CAP)
                .map(|x| cut(&x, RESULT_CAP))
                .collect(),
        ),
        other => other,
    };
    if !c.self_reported_trace.is_empty() {
        m.insert("self_reported".into(), list(json!(c.self_reported_trace)));
    }
    if !c.citations.is_empty() {
        m.insert("citations".into(), list(json!(c.citations)));
    }
    if !c.stderr.is_empty() {
        let s = &c.stderr;
        let from = s.ceil_char_boundary(s.len().saturating_sub(STDERR_CAP));
        m.insert(
            "stderr".into(),
            if from > 0 {
                json!({"$cut": &s[from..], "$bytes": s.len(), "$tail": true})
            } else {
                json!(s)
            },
        );
    }
    if let Some(q) = &c.quality {
        let mut q = json!(q);
        if let Some(r) = q.get_mut("rewrites").and_then(Value::as_array_mut) {
            for x in r.iter_mut() {
                *x = cut(x, OUTPUT_CAP / 2);
            }
        }
        m.insert("quality".into(), q);
    }
    if let Some(i) = &c.intervention {
        m.insert("intervention".into(), json!(i));
    }
    Value::Object(m)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::vocab::{Behavior, CheckId, Finding};

    #[test]
    fn an_answer_cannot_close_the_script_it_sits_in() {
        let c = CellReport::new(
            "a</script><script>alert(1)</script>".into(),
            "s".into(),
            Behavior::Silent,
            Verdict::SilentDegradation,
            vec![Finding::error(
                CheckId::SilentDegradation,
                "<img src=x onerror=alert(1)>",
            )],
        )
        .with_output(json!("</script><script>alert(2)</script>\u{2028}<!--"));
        let text = script_safe(&payload(&c, false).to_string());
        assert!(!text.contains('<'), "{text}");
        let back: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(back["output"], c.output);
        assert_eq!(back["id"], json!(c.id));
    }

    #[test]
    fn long_outputs_and_traces_are_cut_with_their_size_stated() {
        let c = CellReport::new(
            "a".into(),
            "s".into(),
            Behavior::Answered,
            Verdict::Pass,
            vec![],
        )
        .with_output(json!("é".repeat(OUTPUT_CAP)));
        let v = payload(&c, false);
        assert_eq!(v["output"]["$bytes"], json!(2 * OUTPUT_CAP));
        assert!(v["output"]["$cut"].as_str().unwrap().len() <= OUTPUT_CAP);
        let brief = payload(&c, true);
        assert!(brief.get("output").is_none() && brief["brief"] == json!(true));
    }
}
