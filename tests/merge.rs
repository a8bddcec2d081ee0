//! `fibon-verify merge`: shard reports read back as typed reports and combined into the
//! report, JUnit, job summary and exit code of the whole run — each cell as its shard
//! wrote it — and the reports it refuses.

mod common;

use std::path::Path;
use std::time::Duration;

use common::{code, fibon, root};
use fibon_verify::exit_code;
use serde_json::{Value, json};

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// JUnit without its `time` attributes, which differ from run to run.
fn untimed(junit: &str) -> String {
    regex::Regex::new(r#" time="[^"]*""#)
        .unwrap()
        .replace_all(junit, "")
        .into_owned()
}

/// The naive agent on one skill, written to `dir/whole` with its job summary in
/// `dir/whole.md`: 9 cells, 7 of them silent degradation.
fn whole_run(dir: &Path) -> Value {
    let out = fibon(&root())
        .env("GITHUB_ACTIONS", "true")
        .env("GITHUB_STEP_SUMMARY", dir.join("whole.md"))
        .args([
            "run",
            "--config",
            "fibon.naive.yaml",
            "--skill",
            "fetch_anthropic_models",
            "--report-dir",
        ])
        .arg(dir.join("whole"))
        .output()
        .unwrap();
    assert_eq!(
        code(&out),
        exit_code::SILENT_DEGRADATION,
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_str(&read(&dir.join("whole/report.json"))).unwrap()
}

/// `merge` of `reports` (paths relative to `dir`) into `dir/merged`, with its job summary
/// in `dir/merged.md`: the exit code and stderr.
fn merge(dir: &Path, reports: &[&str]) -> (i32, String) {
    let out = fibon(dir)
        .env("GITHUB_ACTIONS", "true")
        .env("GITHUB_STEP_SUMMARY", dir.join("merged.md"))
        .args(["merge", "--report-dir", "merged"])
        .args(reports)
        .output()
        .unwrap();
    (
        code(&out),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn merging_the_shards_of_a_matrix_equals_running_it_whole() {
    let dir = tempfile::tempdir().unwrap();
    let d = |name: &str| dir.path().join(name).to_str().unwrap().to_string();
    let out = fibon(&root())
        .env("GITHUB_ACTIONS", "true")
        .env("GITHUB_STEP_SUMMARY", d("whole.md"))
        .args([
            "run",
            "--format",
            "json",
            "--config",
            "fibon.naive.yaml",
            "--fault",
            "TOOL_NOT_FOUND",
            "--fault",
            "EMPTY_RESULT",
            "--report-dir",
            &d("whole"),
        ])
        .output()
        .unwrap();
    let (whole_code, whole): (i32, Value) =
        (code(&out), serde_json::from_slice(&out.stdout).unwrap());
    for k in 1..=3 {
        let out = fibon(&root())
            .args([
                "run",
                "--config",
                "fibon.naive.yaml",
                "--fault",
                "TOOL_NOT_FOUND",
                "--fault",
                "EMPTY_RESULT",
                "--shard",
                &format!("{k}/3"),
                "--report-dir",
                &d(&format!("shard{k}")),
            ])
            .output()
            .unwrap();
        assert!(
            code(&out) == exit_code::SILENT_DEGRADATION
                || code(&out) == exit_code::SUCCESS
                || code(&out) == exit_code::NO_CELLS
        );
    }
    let out = fibon(&root())
        .env("GITHUB_ACTIONS", "true")
        .env("GITHUB_STEP_SUMMARY", d("summary.md"))
        .args([
            "merge",
            "--format",
            "json",
            "--report-dir",
            &d("merged"),
            &d("shard1/report.json"),
            &d("shard2/report.json"),
            &d("shard3/report.json"),
        ])
        .output()
        .unwrap();
    assert_eq!(
        code(&out),
        whole_code,
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let merged: Value = serde_json::from_slice(&out.stdout).unwrap();
    let strip = |r: &Value| {
        r["cells"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| {
                (
                    c["id"].clone(),
                    c["verdict"].clone(),
                    c["behavior"].clone(),
                    c["findings"]
                        .as_array()
                        .unwrap()
                        .iter()
                        .map(|f| f["check"].clone())
                        .collect::<Vec<_>>(),
                )
            })
            .collect::<Vec<_>>()
    };
    assert_eq!(
        strip(&merged),
        strip(&whole),
        "same cells, same order, same verdicts"
    );
    assert_eq!(merged["summary"], whole["summary"]);
    assert_eq!(merged["exit_code"], whole["exit_code"]);
    // The same JUnit and job summary as the unsharded run's, but for the times and the
    // shards named in the title.
    let junit = read(&dir.path().join("merged/junit.xml"));
    assert_eq!(
        junit.matches("<testcase ").count(),
        whole["summary"]["cells"].as_u64().unwrap() as usize
    );
    assert_eq!(
        untimed(&junit),
        untimed(&read(&dir.path().join("whole/junit.xml")))
    );
    let summary = read(&dir.path().join("summary.md"));
    assert!(summary.contains("from 3 shard(s)"), "{summary}");
    assert_eq!(
        summary.replace(" from 3 shard(s)", ""),
        read(&dir.path().join("whole.md"))
    );
    // Overlapping shards are refused.
    let out = fibon(&root())
        .args([
            "merge",
            "--report-dir",
            &d("bad"),
            &d("shard1/report.json"),
            &d("shard1/report.json"),
        ])
        .output()
        .unwrap();
    assert_eq!(code(&out), exit_code::INVALID_INPUT);
    // A missing shard is refused: the merge would silently gate part of the matrix.
    let out = fibon(&root())
        .args([
            "merge",
            "--report-dir",
            &d("bad"),
            &d("shard1/report.json"),
            &d("shard3/report.json"),
        ])
        .output()
        .unwrap();
    assert_eq!(code(&out), exit_code::INVALID_INPUT);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("shard 2/3 missing"), "{stderr}");
}

/// Read back and written again, a report is unchanged: every cell (traces, findings,
/// evidence, output), the counts and exit code, the JUnit byte for byte and the job
/// summary but for its title; and no annotation is repeated (the shards made them).
#[test]
fn a_merged_report_is_the_report_it_was_made_from() {
    let dir = tempfile::tempdir().unwrap();
    let whole = whole_run(dir.path());
    let (code, stderr) = merge(dir.path(), &["whole/report.json"]);
    assert_eq!(code, exit_code::SILENT_DEGRADATION, "{stderr}");
    assert!(!stderr.contains("::error"), "{stderr}");
    assert!(stderr.contains("merged 1 reports"), "{stderr}");
    let mut merged: Value =
        serde_json::from_str(&read(&dir.path().join("merged/report.json"))).unwrap();
    assert_eq!(merged["merged_from"], json!(["whole"]));
    merged.as_object_mut().unwrap().remove("merged_from");
    assert_eq!(merged, whole);
    assert_eq!(
        read(&dir.path().join("merged/junit.xml")),
        read(&dir.path().join("whole/junit.xml"))
    );
    assert_eq!(
        read(&dir.path().join("merged.md")).replace(" from 1 shard(s)", ""),
        read(&dir.path().join("whole.md"))
    );
}

/// Gate candidates, with their quality results, merge back unchanged too.
#[test]
fn a_merged_gate_report_keeps_its_quality_results() {
    let dir = tempfile::tempdir().unwrap();
    let out = fibon(&root())
        .args([
            "gate",
            "--candidates",
            "examples/quality/candidates.jsonl",
            "--policy",
            "examples/quality/narrative-policy.yaml",
            "--report-dir",
        ])
        .arg(dir.path().join("gate"))
        .output()
        .unwrap();
    assert_eq!(code(&out), exit_code::QUALITY_GATE_FAILED);
    let (code, stderr) = merge(dir.path(), &["gate/report.json"]);
    assert_eq!(code, exit_code::QUALITY_GATE_FAILED, "{stderr}");
    assert!(
        stderr.contains("2 candidates: 1 pass, 1 quality_fail"),
        "{stderr}"
    );
    let gate: Value = serde_json::from_str(&read(&dir.path().join("gate/report.json"))).unwrap();
    let mut merged: Value =
        serde_json::from_str(&read(&dir.path().join("merged/report.json"))).unwrap();
    merged.as_object_mut().unwrap().remove("merged_from");
    assert!(gate["cells"][0]["quality"]["judges"].is_array());
    assert_eq!(merged, gate);
    assert_eq!(
        read(&dir.path().join("merged/junit.xml")),
        read(&dir.path().join("gate/junit.xml"))
    );
}

/// What merge once wrote wrong: a skipped cell was a failure, `time` and `<system-err>`
/// were dropped, and the job summary lost the interrupted and intervention lines.
#[test]
fn merge_writes_skipped_cells_stderr_times_interruptions_and_interventions() {
    let dir = tempfile::tempdir().unwrap();
    let mut report = whole_run(dir.path());
    let cells = report["cells"].as_array_mut().unwrap();
    cells[0]["verdict"] = json!("skipped");
    cells[0]["findings"] = json!([]);
    cells[0]["duration_ms"] = json!(1500);
    cells[1]["stderr"] = json!("agent said <this>");
    cells[2]["intervention"] = json!({"complied_at": 2, "stages": [
        {"stage": 1, "name": "warning", "complied": false, "verdict": "contract_violation", "note": "must_call_tools: `read_page` was not called"},
        {"stage": 2, "name": "forced_tool_choice", "complied": true, "verdict": "pass"}
    ]});
    let skipped = cells[0]["id"].as_str().unwrap().to_string();
    report["interrupted"] = json!(true);
    report["intervention"] = json!({"model": "m", "violations": 9, "complied_at_stage": [9, 0, 0], "never": 0, "stage1_rate": 1.0});
    std::fs::write(dir.path().join("edited.json"), report.to_string()).unwrap();
    let (code, stderr) = merge(dir.path(), &["edited.json"]);
    assert_eq!(code, exit_code::INTERRUPTED, "{stderr}");
    let junit = read(&dir.path().join("merged/junit.xml"));
    let case = &junit[junit
        .find(&format!("<testcase name=\"{skipped}\""))
        .unwrap()..];
    let case = &case[..case.find("</testcase>").unwrap()];
    assert!(
        case.contains("time=\"1.500\"")
            && case.contains("<skipped/>")
            && !case.contains("<failure"),
        "{case}"
    );
    assert!(junit.contains("skipped=\"1\""), "{junit}");
    assert!(
        junit.contains("<system-err>agent said &lt;this&gt;</system-err>"),
        "{junit}"
    );
    let merged: Value =
        serde_json::from_str(&read(&dir.path().join("merged/report.json"))).unwrap();
    assert_eq!(
        merged["cells"][2]["intervention"],
        report["cells"][2]["intervention"]
    );
    // The rates are recomputed over the merged cells: one went up the ladder.
    assert_eq!(
        merged["intervention"],
        json!({"model": "m", "violations": 1, "complied_at_stage": [0, 1, 0], "never": 0, "stage1_rate": 0.0})
    );
    let summary = read(&dir.path().join("merged.md"));
    assert!(
        summary.contains("intervention (m): 1 must_call_tools violation(s); complied at stage 1 (warning): 0 (0%), stage 2 (forced tool_choice): 1 (100%)"),
        "{summary}"
    );
    assert!(
        summary.contains("_The run was interrupted; these are the cells that finished._"),
        "{summary}"
    );
}

/// `merge` refuses what it cannot trust, naming the file (and the cell): a document nested
/// far past the parser's depth limit (no stack overflow), JSON that is not a report, a
/// report with no `cells`, a verdict that is not one of the defined ones (it once merged
/// into exit 0), the same cell twice in one file, a cell with no id.
#[test]
fn merge_refuses_reports_it_cannot_trust() {
    let dir = tempfile::tempdir().unwrap();
    let cell = |id: &str, verdict: &str| json!({"id": id, "skill": "s", "quadrant": "Q1", "verdict": verdict, "findings": []});
    let report = |cells: Value| {
        json!({"schema": "fibon.report/v1", "version": "0.1.0", "cells": cells, "summary": {}, "exit_code": 0})
            .to_string()
    };
    let deep = 100_000;
    let cases = [
        ("deep.json", "[".repeat(deep), "recursion limit exceeded"),
        (
            "deep-cell.json",
            format!(
                r#"{{"schema": "fibon.report/v1", "cells": [{{"id": "a", "verdict": "pass", "x": {}{}}}]}}"#,
                "[".repeat(deep),
                "]".repeat(deep)
            ),
            "recursion limit exceeded",
        ),
        ("empty.json", "{}".into(), "not a fibon.report/v1 report"),
        (
            "header.json",
            r#"{"schema": "fibon.report/v1", "version": "0.1.0"}"#.into(),
            "no `cells`",
        ),
        (
            "verdict.json",
            report(json!([cell("a", "pass"), cell("b", "great")])),
            "cell `b`: verdict `great`",
        ),
        (
            "twice.json",
            report(json!([cell("a", "pass"), cell("a", "silent_degradation")])),
            "cell `a` twice",
        ),
        (
            "anonymous.json",
            report(json!([{"verdict": "pass"}])),
            "no `id`",
        ),
    ];
    for (name, text, why) in cases {
        std::fs::write(dir.path().join(name), text).unwrap();
        let out = fibon(dir.path())
            .args(["merge", name, "--report-dir", "merged"])
            .timeout(Duration::from_secs(60))
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(code(&out), exit_code::INVALID_INPUT, "{name}: {stderr}");
        assert!(
            stderr.contains(&format!("error: {name}")) && stderr.contains(why),
            "{name}: {stderr}"
        );
        assert!(!dir.path().join("merged/report.json").exists(), "{name}");
    }
}
