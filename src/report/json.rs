//! `report.json`, pretty-printed exactly as serde prints the [`Report`]: the cells are
//! written as they come to a spill file, and the document is put together around them at
//! the end, when the counts and exit code that follow them are known.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use serde::Serialize;

use super::{CellReport, Report};

/// Where the cells go in a report serialized without them (top-level keys are the only
/// ones indented by two spaces, and no string holds a raw newline: this is that key).
const CELLS: &str = "\n  \"cells\": []";

/// The cells written so far.
#[derive(Debug)]
pub(super) struct Cells {
    path: PathBuf,
    out: BufWriter<File>,
    any: bool,
    /// One cell as serde prints it, reused: indented into `out` in one pass.
    buf: Vec<u8>,
}

impl Cells {
    /// Spills into `path`.
    pub(super) fn new(path: &Path) -> std::io::Result<Cells> {
        Ok(Cells {
            path: path.to_path_buf(),
            out: BufWriter::with_capacity(1 << 16, File::create(path)?),
            any: false,
            buf: Vec::new(),
        })
    }

    /// One more cell, as an element of the `cells` array.
    pub(super) fn cell(&mut self, c: &CellReport) -> std::io::Result<()> {
        self.out
            .write_all(if self.any { b",\n    " } else { b"\n    " })?;
        self.any = true;
        self.buf.clear();
        let mut ser = serde_json::Serializer::pretty(&mut self.buf);
        c.serialize(&mut ser).map_err(std::io::Error::from)?;
        Indented(&mut self.out).write_all(&self.buf)
    }

    /// The whole document: `report` (its cells, if it has any, are not read again) around
    /// the cells written.
    pub(super) fn finish(mut self, report: &Report, w: &mut impl Write) -> std::io::Result<()> {
        self.out.flush()?;
        drop(self.out);
        let skeleton = serde_json::to_string_pretty(&report.header())?;
        let (before, after) = skeleton
            .split_once(CELLS)
            .expect("a report serializes its cells");
        w.write_all(before.as_bytes())?;
        w.write_all(b"\n  \"cells\": [")?;
        if self.any {
            std::io::copy(&mut File::open(&self.path)?, w)?;
            w.write_all(b"\n  ]")?;
        } else {
            w.write_all(b"]")?;
        }
        w.write_all(after.as_bytes())
    }
}

/// A cell pretty-printed at the depth of the `cells` array: two levels in. Every newline
/// serde writes is between tokens (it escapes those in strings), so each is indented.
struct Indented<W>(W);

impl<W: Write> Write for Indented<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let mut rest = buf;
        while let Some(i) = memchr::memchr(b'\n', rest) {
            self.0.write_all(&rest[..=i])?;
            self.0.write_all(b"    ")?;
            rest = &rest[i + 1..];
        }
        self.0.write_all(rest)?;
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.0.flush()
    }
}

#[cfg(test)]
mod tests {
    use serde::Deserialize;
    use serde_json::Value;

    use super::*;

    /// A report with something in every field a cell can have.
    fn rich() -> Value {
        serde_json::from_str(
            r#"{
            "schema": "fibon.report/v1", "version": "0.1.0", "started_at": "2026-12-01T00:00:00Z",
            "duration_ms": 1234, "interrupted": true, "shard": "2/3",
            "cells": [
                {
                    "id": "s/sc/Q3/TIMEOUT", "index": 7, "skill": "s", "scenario": "sc", "quadrant": "Q3",
                    "fault": "TIMEOUT", "removed_tools": ["read_page"], "behavior": "silent",
                    "verdict": "silent_degradation",
                    "findings": [
                        {"check": "silent_degradation", "severity": "error", "message": "a \"quoted\"\nline", "evidence": {"fault": "TIMEOUT", "n": [1, 2.5, null]}},
                        {"check": "forbidden_facts", "severity": "warning", "message": "m"}
                    ],
                    "output": {"text": "x", "list": []},
                    "trace": [
                        {"seq": 1, "at_ms": 0.25, "transport": "mcp", "op": "list", "status": "ok", "result_bytes": 2, "tools": ["read_page"], "duration_ms": 0.1},
                        {"seq": 2, "at_ms": 1.5, "transport": "rest", "op": "call", "tool": "read_page", "provenance": "fixture", "arguments": {"url": "https://x"}, "fault": "TIMEOUT", "status": "timeout", "result_bytes": 10, "result_text": "held\ttoo long", "truncated": true, "error": "timed out", "duration_ms": 2000.0}
                    ],
                    "self_reported_trace": [{"tool": "read_page", "arguments": {}}],
                    "citations": [{"url": "https://x", "quote": "q"}, {"url": "https://y"}],
                    "stderr": "warn\n", "attempts": 2, "duration_ms": 2100,
                    "contract": "contracts/s.yaml", "contract_line": 2,
                    "quality": {
                        "state": "high_risk", "policy": "p", "policy_version": "3", "blind_id": "cand-1",
                        "scores": {"voice": 6.5}, "judges": [
                            {"judge": "a", "report": {"scores": {"voice": {"score": 6.5, "reason": "ok"}}, "hard_fact_conflict": false}},
                            {"judge": "b", "error": "unreachable"}
                        ],
                        "unstable": ["style"], "risk_markers": ["voice"], "rewrite_count": 1,
                        "rewrites": ["again"], "explanation": "why"
                    },
                    "intervention": {"complied_at": null, "stages": [
                        {"stage": 3, "name": "degraded_translation", "complied": false, "verdict": "error", "note": "n"}
                    ]}
                },
                {
                    "id": "line-2", "index": 8, "skill": "", "scenario": "", "quadrant": "", "fault": null,
                    "removed_tools": [], "behavior": "not_run", "verdict": "error",
                    "findings": [{"check": "history_parse", "severity": "error", "message": "line 2: not JSON"}],
                    "output": null, "trace": [], "attempts": 1, "duration_ms": 0, "contract": "", "contract_line": 0
                }
            ],
            "summary": {"cells": 2, "pass": 0, "silent_degradation": 1, "contract_violation": 0, "quality_fail": 0, "error": 1, "skipped": 0},
            "quality_budget": {"policy": "p", "calls": 2, "cost_usd": 0.5},
            "sampling": {"rate": 0.1},
            "intervention": {"model": "m", "violations": 1, "complied_at_stage": [0, 0, 0], "never": 1, "stage1_rate": 0.0},
            "exit_code": 130
        }"#,
        )
        .unwrap()
    }

    fn written(report: &Report) -> String {
        let dir = tempfile::tempdir().unwrap();
        let mut cells = Cells::new(&dir.path().join("cells.json")).unwrap();
        for c in &report.cells {
            cells.cell(c).unwrap();
        }
        let mut out = Vec::new();
        cells.finish(report, &mut out).unwrap();
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn a_report_reads_back_as_it_was_written() {
        let value = rich();
        let report = Report::deserialize(&value).unwrap();
        assert_eq!(serde_json::to_value(&report).unwrap(), value);
    }

    #[test]
    fn streamed_cells_make_the_document_serde_writes() {
        let full = Report::deserialize(&rich()).unwrap();
        let mut merged = Report::new("t".into(), 0, Vec::new(), None, false);
        merged.merged_from = Some(vec!["1/2".into(), "2/2".into()]);
        for report in [full.clone(), full.header(), merged] {
            assert_eq!(
                written(&report),
                serde_json::to_string_pretty(&report).unwrap()
            );
        }
    }
}
