//! Agents that flood what the checks read — a megabyte of citations, a self-reported
//! trace of thousands of calls, a response that is not UTF-8 — and a history line of
//! megabytes: each cell's findings and report stay bounded (README, "Limits and threat
//! model").

use std::path::Path;

use serde_json::Value;

use super::common::{code, fibon};
use super::support::scratch_project;

/// The shipped project with `script` (Python, reading the request on stdin) as the agent.
fn with_agent(script: &str) -> tempfile::TempDir {
    let dir = scratch_project();
    std::fs::write(dir.path().join("agent.py"), script).unwrap();
    let config = std::fs::read_to_string(dir.path().join("fibon.yaml")).unwrap();
    let config = config.replace(
        r#"command: ["fibon-verify", "agent", "--mode", "grounded"]"#,
        r#"command: ["python3", "agent.py"]"#,
    );
    assert!(config.contains("agent.py"), "the shipped target changed");
    std::fs::write(dir.path().join("fibon.yaml"), config).unwrap();
    dir
}

/// One cell of the Skill with a URL whitelist, run; its report.
fn run_one(dir: &Path) -> (i32, Value, u64) {
    let out = fibon(dir)
        .args([
            "run",
            "--skill",
            "fetch_anthropic_models",
            "--quadrant",
            "Q1",
            "--report-dir",
            "out",
        ])
        .output()
        .unwrap();
    let path = dir.join("out/report.json");
    let size = std::fs::metadata(&path)
        .unwrap_or_else(|_| panic!("no report: {}", String::from_utf8_lossy(&out.stderr)))
        .len();
    let report = serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap();
    (code(&out), report, size)
}

fn findings(report: &Value) -> Vec<(String, String)> {
    report["cells"][0]["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            (
                f["check"].as_str().unwrap().to_string(),
                f["message"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

#[test]
fn a_megabyte_of_citations_costs_a_bounded_report() {
    // 200,000 one-letter "citations" (not URLs) and 3,000 forged ones outside the
    // whitelist: once one finding each, a gigabyte of report for the matrix.
    let dir = with_agent(
        "import json, sys\nsys.stdin.read()\n\
         print(json.dumps({'output': 'Here is the answer.', 'citations': ['a'] * 150000 + ['https://evil.example/%d' % i for i in range(3000)]}))\n",
    );
    let (rc, report, size) = run_one(dir.path());
    assert_eq!(rc, 2, "{report}");
    let found = findings(&report);
    assert!(size < 200_000, "report.json is {size} bytes");
    assert!(found.len() <= 40, "{} findings", found.len());
    // Not URLs: named, up to five, then counted — and that the list was cut.
    assert!(found.iter().any(|(c, m)| c == "agent_protocol"
        && m.starts_with("`citations[0]` has no `url` (an absolute URL)")));
    assert!(found.iter().any(|(c, m)| c == "agent_protocol"
        && m == "149995 more entries of `citations` have no `url` (an absolute URL) and were left out"));
    assert!(found.iter().any(|(c, m)| c == "agent_protocol"
        && m == "`citations` lists 153000 entries; the first 1000 were read"));
    // The first 1000 entries are not URLs: nothing of the rest was read as cited.
    assert!(!found.iter().any(|(c, _)| c == "url_whitelist"));
}

#[test]
fn forged_citations_past_ten_are_counted_in_one_finding() {
    let dir = with_agent(
        "import json, sys\nsys.stdin.read()\n\
         print(json.dumps({'output': 'Here is the answer.', 'citations': ['https://evil.example/%d' % i for i in range(600)]}))\n",
    );
    let (rc, report, _) = run_one(dir.path());
    assert_eq!(rc, 2, "{report}");
    let found = findings(&report);
    let whitelist: Vec<_> = found.iter().filter(|(c, _)| c == "url_whitelist").collect();
    assert_eq!(whitelist.len(), 11, "{whitelist:?}");
    assert_eq!(
        whitelist[10].1,
        "and 590 more `url_whitelist` findings like the 10 above (600 in all)"
    );
}

#[test]
fn a_response_that_is_not_utf8_breaks_the_protocol() {
    let dir = with_agent(
        "import sys\nsys.stdin.read()\n\
         sys.stdout.buffer.write(b'{\"output\": \"caf\\xe9 au lait\"}')\n",
    );
    let (rc, report, _) = run_one(dir.path());
    assert_eq!(rc, 2, "{report}");
    assert!(
        findings(&report).iter().any(|(c, m)| c == "agent_protocol"
            && m.starts_with("the response is not UTF-8 (an invalid byte at offset 15)")),
        "{report}"
    );
}

#[test]
fn a_history_line_of_megabytes_is_kept_to_the_live_caps() {
    let dir = scratch_project();
    let line = std::fs::read_to_string(dir.path().join("examples/history/recorded.jsonl"))
        .unwrap()
        .lines()
        .next()
        .unwrap()
        .to_string();
    let mut conv: Value = serde_json::from_str(&line).unwrap();
    let text = "Fees: USD 12,000 a year. ".repeat(200_000);
    conv["trace"][0]["result"] = serde_json::json!({"content": [{"type": "text", "text": text}]});
    conv["output"] = Value::String("The renewal terms are as agreed. ".repeat(40_000));
    std::fs::write(dir.path().join("big.jsonl"), format!("{conv}\n")).unwrap();
    let out = fibon(dir.path())
        .args(["audit", "--history", "big.jsonl", "--report-dir", "out"])
        .output()
        .unwrap();
    let report: Value =
        serde_json::from_slice(&std::fs::read(dir.path().join("out/report.json")).unwrap())
            .unwrap_or_else(|_| panic!("{}", String::from_utf8_lossy(&out.stderr)));
    let cell = &report["cells"][0];
    let call = &cell["trace"][0];
    assert_eq!(call["result_bytes"], text.len());
    assert_eq!(call["truncated"], true);
    assert_eq!(call["result_text"].as_str().unwrap().len(), 64 * 1024);
    assert_eq!(cell["output"].as_str().unwrap().len(), 1024 * 1024);
    assert!(
        cell["findings"]
            .as_array()
            .unwrap()
            .iter()
            .any(|f| f["check"] == "agent_protocol"
                && f["message"].as_str().unwrap().contains("1 MiB cap")),
        "{cell}"
    );
}
