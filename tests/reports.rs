//! One report pipeline: the same cells written by every command that can produce them —
//! a `replay` run, the same run in shards then `merge`, and `audit` (which streams) — give
//! the same report.json cells, JUnit, job summary, annotations and table.

mod common;

use std::path::Path;

use common::{code, fibon, root};
use fibon_verify::exit_code;
use serde_json::{Value, json};

/// A project whose `replay` target is a history of a passing, a silently degrading and an
/// explicitly failing conversation, a line that is not JSON and an unknown skill.
fn project(dir: &Path) {
    let contracts = root().join("contracts");
    std::fs::write(
        dir.join("fibon.yaml"),
        format!(
            "contracts: [{:?}]\nscenarios: []\ntarget: {{kind: replay, history: history.jsonl}}\nreport: {{dir: out}}\n",
            contracts.display().to_string()
        ),
    )
    .unwrap();
    let page = "Claude Sonnet 4.6 (claude-sonnet-4-6) is the latest model.";
    let lines = [
        json!({"id": "conv-ok", "skill": "fetch_anthropic_models", "input": "最新模型？", "trace": [{"tool": "read_page", "arguments": {"url": "https://docs.anthropic.com/models"}, "result": {"content": [{"type": "text", "text": page}], "isError": false}}], "output": "The latest is claude-sonnet-4-6.", "status": "ok"}).to_string(),
        json!({"id": "conv-silent", "skill": "fetch_anthropic_models", "input": "最新模型？", "trace": [{"tool": "read_page", "arguments": {"url": "https://docs.anthropic.com/models"}, "error": {"code": "TOOL_NOT_FOUND", "message": "no such tool"}}], "output": "The latest is claude-3-5-sonnet-20241022.", "status": "ok"}).to_string(),
        json!({"id": "conv-explicit", "skill": "fetch_anthropic_models", "input": "最新模型？", "trace": [{"tool": "read_page", "arguments": {"url": "https://docs.anthropic.com/models"}, "error": {"code": "TIMEOUT", "message": "timed out"}}], "output": "", "status": "error", "error": {"code": "TIMEOUT", "message": "read_page timed out"}}).to_string(),
        "{this line is broken".to_string(),
        json!({"id": "conv-unknown", "skill": "nope", "trace": [], "output": "x"}).to_string(),
    ];
    std::fs::write(dir.join("history.jsonl"), lines.join("\n") + "\n").unwrap();
}

/// What one command wrote: its report.json, JUnit (without times), job summary,
/// annotations, and the table (without the lines naming the command's own files).
struct Written {
    code: i32,
    report: Value,
    junit: String,
    summary: String,
    annotations: Vec<String>,
    table: String,
}

fn command(dir: &Path, name: &str, args: &[&str]) -> Written {
    let out = fibon(dir)
        .env("GITHUB_ACTIONS", "true")
        .env("GITHUB_STEP_SUMMARY", dir.join(format!("{name}.md")))
        .args(args)
        .args(["--report-dir", name])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    let read = |file: &str| {
        std::fs::read_to_string(dir.join(file)).unwrap_or_else(|e| panic!("{file}: {e}: {stderr}"))
    };
    let time = regex::Regex::new(r#" time="[^"]*""#).unwrap();
    Written {
        code: code(&out),
        report: serde_json::from_str(&read(&format!("{name}/report.json"))).unwrap(),
        junit: time
            .replace_all(&read(&format!("{name}/junit.xml")), "")
            .into_owned(),
        summary: read(&format!("{name}.md")),
        annotations: stderr
            .lines()
            .filter(|l| l.starts_with("::error ") || l.starts_with("::warning "))
            .map(String::from)
            .collect(),
        table: stderr
            .lines()
            .filter(|l| {
                !l.starts_with("::")
                    && !l.starts_with("report: ")
                    && !l.starts_with("html: ")
                    && !l.starts_with("read ")
                    && !l.starts_with("merged ")
            })
            .map(|l| format!("{l}\n"))
            .collect(),
    }
}

#[test]
fn every_command_writes_the_same_reports_for_the_same_cells() {
    let dir = tempfile::tempdir().unwrap();
    project(dir.path());
    let run = command(dir.path(), "run", &["run"]);
    assert_eq!(run.code, exit_code::SILENT_DEGRADATION, "{}", run.table);
    for k in 1..=2 {
        let shard = command(
            dir.path(),
            &format!("shard{k}"),
            &["run", "--shard", &format!("{k}/2")],
        );
        assert!(!shard.report["cells"].as_array().unwrap().is_empty());
    }
    let merged = command(
        dir.path(),
        "merged",
        &["merge", "shard1/report.json", "shard2/report.json"],
    );
    let audit = command(
        dir.path(),
        "audit",
        &["audit", "--history", "history.jsonl"],
    );

    assert_eq!(run.report["summary"]["cells"], 5);
    assert!(
        run.junit.contains("<error ") && run.junit.contains("<failure "),
        "{}",
        run.junit
    );
    assert!(!run.annotations.is_empty());
    for (name, other) in [("merge", &merged), ("audit", &audit)] {
        assert_eq!(other.code, run.code, "{name}");
        assert_eq!(other.report["cells"], run.report["cells"], "{name}");
        assert_eq!(other.report["summary"], run.report["summary"], "{name}");
        assert_eq!(other.report["exit_code"], run.report["exit_code"], "{name}");
        assert_eq!(other.junit, run.junit, "{name}");
    }
    assert_eq!(merged.summary.replace(" from 2 shard(s)", ""), run.summary);
    assert_eq!(audit.summary, run.summary);
    assert_eq!(audit.annotations, run.annotations);
    assert!(merged.annotations.is_empty(), "the shard runs made them");
    assert_eq!(merged.table, run.table);
    assert_eq!(
        audit.table.replace(" conversations: ", " cells: "),
        run.table
    );
    // Cells with no quadrant (an unreadable line, an unknown skill) have a column of
    // their own, not Q4's.
    assert!(run.table.contains("┆ none "), "{}", run.table);
}

/// `audit` keeps only the first 50 failing conversations in memory, for the table, the
/// job summary and the annotations, and says how many more report.json has; report.json
/// and the JUnit still hold every one, as a whole run's do.
#[test]
fn a_streamed_audit_shows_the_first_failures_and_writes_them_all() {
    let dir = tempfile::tempdir().unwrap();
    project(dir.path());
    let silent: Vec<String> = (0..60)
        .map(|i| {
            json!({"id": format!("conv-{i:02}"), "skill": "fetch_anthropic_models", "input": "最新模型？", "trace": [{"tool": "read_page", "arguments": {"url": "https://docs.anthropic.com/models"}, "error": {"code": "TOOL_NOT_FOUND", "message": "no such tool"}}], "output": "The latest is claude-3-5-sonnet-20241022.", "status": "ok"}).to_string()
        })
        .collect();
    std::fs::write(dir.path().join("history.jsonl"), silent.join("\n") + "\n").unwrap();
    let audit = command(
        dir.path(),
        "audit",
        &["audit", "--history", "history.jsonl"],
    );
    let run = command(dir.path(), "run", &["run"]);
    assert_eq!(audit.code, exit_code::SILENT_DEGRADATION);
    assert_eq!(audit.report["cells"].as_array().unwrap().len(), 60);
    assert_eq!(audit.report["cells"], run.report["cells"]);
    assert_eq!(audit.junit.matches("<testcase ").count(), 60);
    assert_eq!(audit.junit, run.junit);
    assert_eq!(audit.annotations.len(), 50);
    assert_eq!(run.annotations.len(), 60);
    assert_eq!(audit.annotations[..], run.annotations[..50]);
    assert_eq!(audit.summary.matches("| `conv-").count(), 50);
    assert!(
        audit
            .summary
            .contains("\n_10 more failing conversations in report.json._\n"),
        "{}",
        audit.summary
    );
    assert!(
        audit
            .table
            .contains("… and 10 more failing conversations in report.json\n60 conversations: 0 pass, 60 silent_degradation"),
        "{}",
        audit.table
    );
}
