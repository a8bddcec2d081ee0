//! `audit` and `sample` over recorded conversations: History JSONL and OTLP GenAI spans,
//! a deterministic agent (stable) and a nondeterministic one (unstable), selection that
//! survives appended lines.

mod common;

use std::path::Path;

use common::{code, fibon, root};
use fibon_verify::exit_code;
use serde_json::{Value, json};

/// A project whose contracts are the shipped ones plus `docs` (search, then read_page).
fn project(dir: &Path, agent: &str) {
    std::fs::create_dir_all(dir.join("contracts")).unwrap();
    for f in ["fetch_anthropic_models.json", "search_docs.yaml"] {
        std::fs::copy(
            root().join("contracts").join(f),
            dir.join("contracts").join(f),
        )
        .unwrap();
    }
    std::fs::create_dir_all(dir.join("contracts/schema")).unwrap();
    std::fs::copy(
        root().join("contracts/schema/search_input.json"),
        dir.join("contracts/schema/search_input.json"),
    )
    .unwrap();
    std::fs::write(
        dir.join("contracts/docs.yaml"),
        "skill: docs\nmust_call_tools: [search, read_page]\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("fibon.yaml"),
        format!("scenarios: []\ntarget: {{kind: command, command: [\"python3\", \"-c\", {}], timeout: 20s}}\nmatrix: {{jobs: 4}}\nreport: {{dir: out}}\n", serde_json::to_string(agent).unwrap()),
    )
    .unwrap();
}

/// A recorded conversation of the deterministic plan: search, then read the page found.
fn recorded(i: usize) -> String {
    let url = format!("https://docs.example.com/page-{i}");
    json!({
        "id": format!("conv-{i:04}"), "skill": "docs", "input": format!("question number {i}"), "ts": "2026-11-30T08:00:00Z",
        "trace": [
            {"tool": "search", "arguments": {"query": format!("question number {i}")}, "result": {"content": [{"type": "text", "text": format!("see {url}")}], "isError": false}},
            {"tool": "read_page", "arguments": {"url": url}, "result": {"content": [{"type": "text", "text": format!("answer {i}")}], "isError": false}}
        ],
        "output": format!("answer {i}"), "status": "ok"
    })
    .to_string()
}

const DETERMINISTIC: &str = "import sys, json, re, urllib.request\nreq = json.load(sys.stdin)\nbase = req['tools']['http_url']\ndef call(t, a):\n    r = urllib.request.Request(base + '/' + t, data=json.dumps(a).encode(), method='POST')\n    try:\n        return ''.join(p.get('text', '') for p in json.loads(urllib.request.urlopen(r).read())['content'])\n    except Exception:\n        return ''\nfound = call('search', {'query': req['input']})\nm = re.search(r'https://\\S+', found)\nanswer = call('read_page', {'url': m.group(0)}) if m else ''\nprint(json.dumps({'output': answer}))";

const NONDETERMINISTIC: &str = "import sys, json, random, urllib.request\nreq = json.load(sys.stdin)\nbase = req['tools']['http_url']\ndef call(t, a):\n    r = urllib.request.Request(base + '/' + t, data=json.dumps(a).encode(), method='POST')\n    try:\n        return ''.join(p.get('text', '') for p in json.loads(urllib.request.urlopen(r).read())['content'])\n    except Exception:\n        return ''\nif random.random() < 0.9:\n    answer = call('read_page', {'url': 'https://docs.example.com/guess'})\nelse:\n    answer = call('search', {'query': req['input']})\nprint(json.dumps({'output': answer}))";

fn history(dir: &Path, n: usize) {
    let lines: Vec<String> = (0..n).map(recorded).collect();
    std::fs::write(dir.join("history.jsonl"), lines.join("\n") + "\n").unwrap();
}

fn sample(dir: &Path, extra: &[&str]) -> (i32, Value, String) {
    let out = fibon(dir)
        .args([
            "sample",
            "--history",
            "history.jsonl",
            "--rate",
            "0.5",
            "--seed",
            "3",
            "--format",
            "json",
        ])
        .args(extra)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    let report = serde_json::from_slice(&out.stdout).unwrap_or_else(|_| panic!("{stderr}"));
    (code(&out), report, stderr)
}

#[test]
fn a_deterministic_agent_is_stable() {
    let dir = tempfile::tempdir().unwrap();
    project(dir.path(), DETERMINISTIC);
    history(dir.path(), 20);
    let (code, report, stderr) = sample(dir.path(), &[]);
    assert_eq!(code, exit_code::SUCCESS, "{stderr}\n{report:#}");
    let s = &report["sampling"]["skills"]["docs"];
    assert!(s["sampled"].as_u64().unwrap() >= 5, "{s:#}");
    assert_eq!(
        (s["unstable"].as_u64(), s["instability_rate"].as_f64()),
        (Some(0), Some(0.0))
    );
    // The replay went through the gateway, answered from the recording.
    let cell = &report["cells"][0];
    assert_eq!(
        cell["trace"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|e| e["op"] == "call")
            .count(),
        2
    );
    assert!(stderr.contains("docs: "), "{stderr}");
}

#[test]
fn a_nondeterministic_agent_is_flagged_unstable() {
    let dir = tempfile::tempdir().unwrap();
    project(dir.path(), NONDETERMINISTIC);
    history(dir.path(), 20);
    std::fs::write(
        dir.path().join("history.jsonl"),
        std::fs::read_to_string(dir.path().join("history.jsonl")).unwrap() + "{broken line\n",
    )
    .unwrap();
    let (code, report, stderr) = sample(dir.path(), &[]);
    assert_eq!(code, exit_code::UNSTABLE, "{stderr}");
    let s = &report["sampling"]["skills"]["docs"];
    assert!(
        s["unstable"].as_u64().unwrap() >= 1 && s["locked"] == true,
        "{s:#}"
    );
    assert!(
        s["example_diffs"][0]
            .as_str()
            .unwrap()
            .contains("the replay decided differently"),
        "{s:#}"
    );
    assert_eq!(report["sampling"]["unstable_skills"], json!(["docs"]));
    let bad = report["cells"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["id"] == "line-21")
        .expect("the broken line is reported");
    assert_eq!(bad["verdict"], "error");
    // A threshold above the observed instability lets it pass (the broken line still fails closed).
    let (code, _, _) = sample(dir.path(), &["--max-instability", "1"]);
    assert_eq!(code, exit_code::UNAVAILABLE);
}

#[test]
fn the_same_seed_selects_the_same_conversations_as_the_history_grows() {
    let dir = tempfile::tempdir().unwrap();
    history(dir.path(), 200);
    let ids = |d: &Path| -> Vec<String> {
        let out = fibon(d)
            .args([
                "sample",
                "--history",
                "history.jsonl",
                "--rate",
                "0.1",
                "--seed",
                "9",
                "--dry-run",
            ])
            .output()
            .unwrap();
        String::from_utf8(out.stdout)
            .unwrap()
            .lines()
            .map(String::from)
            .collect()
    };
    let before = ids(dir.path());
    assert!((8..40).contains(&before.len()), "{}", before.len());
    let more: Vec<String> = (200..400).map(recorded).collect();
    std::fs::write(
        dir.path().join("history.jsonl"),
        std::fs::read_to_string(dir.path().join("history.jsonl")).unwrap()
            + &more.join("\n")
            + "\n",
    )
    .unwrap();
    let after = ids(dir.path());
    assert_eq!(
        after[..before.len()],
        before[..],
        "earlier picks stay picked"
    );
    assert!(after.len() > before.len());
}

#[test]
fn audit_checks_recorded_conversations_and_otlp_spans() {
    let dir = tempfile::tempdir().unwrap();
    project(dir.path(), DETERMINISTIC);
    let lines = [
        recorded(1),
        json!({"id": "conv-silent", "skill": "fetch_anthropic_models", "input": "latest?", "trace": [{"tool": "read_page", "arguments": {"url": "https://docs.anthropic.com/x"}, "error": {"code": "TOOL_NOT_FOUND", "message": "no"}}], "output": "It is claude-3-5-sonnet-20241022.", "status": "ok"}).to_string(),
        "not json".to_string(),
    ];
    std::fs::write(dir.path().join("history.jsonl"), lines.join("\n") + "\n").unwrap();
    let out = fibon(dir.path())
        .args(["audit", "--history", "history.jsonl", "--format", "json"])
        .output()
        .unwrap();
    assert_eq!(
        code(&out),
        exit_code::SILENT_DEGRADATION,
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("out/report.json")).unwrap())
            .unwrap();
    let verdicts: Vec<(&str, &str)> = report["cells"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| (c["id"].as_str().unwrap(), c["verdict"].as_str().unwrap()))
        .collect();
    assert_eq!(
        verdicts,
        [
            ("conv-0001", "pass"),
            ("conv-silent", "silent_degradation"),
            ("line-3", "error")
        ]
    );
    assert_eq!(report["summary"]["cells"], 3);
    // run's layout: a testsuite per skill, the failure typed by its verdict.
    let junit = std::fs::read_to_string(dir.path().join("out/junit.xml")).unwrap();
    assert!(
        junit.contains("tests=\"3\" skipped=\"0\" failures=\"1\" errors=\"1\"")
            && junit.contains("<testsuite name=\"fetch_anthropic_models\" tests=\"1\"")
            && junit.contains("type=\"silent_degradation\">"),
        "{junit}"
    );
    // OTLP GenAI spans, one export per line or one document: the same model.
    for f in ["genai-export.jsonl", "genai-export.json"] {
        let out = fibon(dir.path())
            .args(["audit", "--history"])
            .arg(root().join("tests/fixtures/otlp").join(f))
            .output()
            .unwrap();
        assert_eq!(
            code(&out),
            exit_code::SILENT_DEGRADATION,
            "{f}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let report: Value = serde_json::from_str(
            &std::fs::read_to_string(dir.path().join("out/report.json")).unwrap(),
        )
        .unwrap();
        let verdicts: Vec<(&str, &str)> = report["cells"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| (c["id"].as_str().unwrap(), c["verdict"].as_str().unwrap()))
            .collect();
        assert_eq!(
            verdicts,
            [
                ("0af7651916cd43dd8448eb211c80319c", "pass"),
                ("otel-conv-1", "silent_degradation")
            ],
            "{f}"
        );
    }
}

/// A line that is not UTF-8, or is longer than 16 MiB, is an `error` cell naming its line
/// in `audit`, `sample` and a `replay` run alike, and the lines after it are still checked
/// (such a line once aborted the whole command with exit 70).
#[test]
fn a_line_not_utf8_or_over_16_mib_is_an_error_cell_and_the_rest_is_checked() {
    let dir = tempfile::tempdir().unwrap();
    project(dir.path(), DETERMINISTIC);
    let mut bytes = recorded(1).into_bytes();
    bytes.extend(b"\n{\"id\": \"conv-latin1\", \"skill\": \"docs\", \"input\": \"caf\xe9\"}\n");
    bytes.extend(br#"{"id": "conv-huge", "skill": "docs", "input": ""#);
    bytes.resize(bytes.len() + 17 * 1024 * 1024, b'x');
    bytes.extend(b"\"}\n");
    bytes.extend(recorded(4).into_bytes());
    bytes.push(b'\n');
    std::fs::write(dir.path().join("history.jsonl"), &bytes).unwrap();
    std::fs::write(
        dir.path().join("replay.yaml"),
        "scenarios: []\ntarget: {kind: replay, history: history.jsonl}\nreport: {dir: out}\n",
    )
    .unwrap();
    for args in [
        &["audit", "--history", "history.jsonl"][..],
        &["--config", "replay.yaml", "run"],
        &["sample", "--history", "history.jsonl", "--rate", "1"],
    ] {
        let out = fibon(dir.path())
            .args(args)
            .timeout(std::time::Duration::from_secs(120))
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(code(&out), exit_code::UNAVAILABLE, "{args:?}: {stderr}");
        let report: Value = serde_json::from_str(
            &std::fs::read_to_string(dir.path().join("out/report.json")).unwrap(),
        )
        .unwrap();
        let mut cells: Vec<(&str, &str, &str)> = report["cells"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| {
                (
                    c["id"].as_str().unwrap(),
                    c["verdict"].as_str().unwrap(),
                    c["findings"][0]["message"].as_str().unwrap_or(""),
                )
            })
            .collect();
        cells.sort();
        assert_eq!(
            cells.iter().map(|c| (c.0, c.1)).collect::<Vec<_>>(),
            [
                ("conv-0001", "pass"),
                ("conv-0004", "pass"),
                ("line-2", "error"),
                ("line-3", "error")
            ],
            "{args:?}: {stderr}"
        );
        assert!(
            cells[2].2.starts_with("line 2: not UTF-8"),
            "{args:?}: {}",
            cells[2].2
        );
        assert!(
            cells[3].2.starts_with("line 3: ") && cells[3].2.contains("16 MiB"),
            "{args:?}: {}",
            cells[3].2
        );
    }
    let out = fibon(dir.path())
        .args([
            "sample",
            "--history",
            "history.jsonl",
            "--rate",
            "1",
            "--dry-run",
        ])
        .output()
        .unwrap();
    assert_eq!(code(&out), exit_code::SUCCESS);
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "conv-0001\nconv-0004\n"
    );
}

/// `sample` of a conversation whose skill has no contract: an `error` cell naming the
/// conversation and the skill, never a replay counted as stable.
#[test]
fn sample_fails_closed_on_a_skill_with_no_contract() {
    let dir = tempfile::tempdir().unwrap();
    project(dir.path(), DETERMINISTIC);
    let orphan = json!({"id": "conv-orphan", "skill": "nosuch", "input": "q", "trace": [], "output": "a", "status": "ok"});
    std::fs::write(
        dir.path().join("history.jsonl"),
        format!("{}\n{orphan}\n", recorded(1)),
    )
    .unwrap();
    let out = fibon(dir.path())
        .args([
            "sample",
            "--history",
            "history.jsonl",
            "--rate",
            "1",
            "--format",
            "json",
        ])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(code(&out), exit_code::UNAVAILABLE, "{stderr}");
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    let cell = report["cells"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["id"] == "conv-orphan")
        .expect("the conversation is a cell");
    assert_eq!(
        (&cell["verdict"], &cell["findings"][0]["check"]),
        (&json!("error"), &json!("history_parse")),
        "{cell:#}"
    );
    let message = cell["findings"][0]["message"].as_str().unwrap();
    assert!(
        message.contains("conv-orphan") && message.contains("no contract for skill `nosuch`"),
        "{message}"
    );
    let skills = &report["sampling"]["skills"];
    assert!(skills.get("nosuch").is_none(), "{skills:#}");
    assert_eq!(skills["docs"]["stable"], 1, "{skills:#}");
}

/// A folder, a device or a FIFO given as the history is named (exit 64 for `--history`,
/// 65 for a config's `target.history`): never read, never waited on.
#[test]
fn a_history_that_is_not_a_regular_file_is_named_not_read() {
    let dir = tempfile::tempdir().unwrap();
    project(dir.path(), DETERMINISTIC);
    std::fs::create_dir(dir.path().join("folder")).unwrap();
    assert!(
        std::process::Command::new("mkfifo")
            .arg(dir.path().join("pipe"))
            .status()
            .unwrap()
            .success()
    );
    for (path, why) in [
        ("folder", "it is a folder"),
        ("pipe", "it is not a regular file"),
        ("/dev/zero", "it is not a regular file"),
    ] {
        for args in [
            &["audit", "--history", path][..],
            &["sample", "--history", path],
            &["sample", "--history", path, "--dry-run"],
        ] {
            let out = fibon(dir.path())
                .args(args)
                .timeout(std::time::Duration::from_secs(60))
                .output()
                .unwrap();
            let stderr = String::from_utf8_lossy(&out.stderr);
            assert_eq!(code(&out), exit_code::USAGE, "{args:?}: {stderr}");
            assert!(
                stderr.contains(&format!("cannot read {path}: {why}")),
                "{args:?}: {stderr}"
            );
        }
        std::fs::write(
            dir.path().join("replay.yaml"),
            format!("scenarios: []\ntarget: {{kind: replay, history: {path}}}\n"),
        )
        .unwrap();
        let out = fibon(dir.path())
            .args(["--config", "replay.yaml", "run"])
            .timeout(std::time::Duration::from_secs(60))
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(code(&out), exit_code::INVALID_INPUT, "{path}: {stderr}");
        assert!(
            stderr.contains("cannot be read") && stderr.contains(why),
            "{path}: {stderr}"
        );
    }
}

/// The testcase names of a JUnit file, read by a strict XML 1.0 parser (Python's expat).
fn junit_names(path: &Path) -> Vec<String> {
    let out = std::process::Command::new("python3")
        .args([
            "-c",
            "import sys, xml.dom.minidom as m\nfor t in m.parse(sys.argv[1]).getElementsByTagName('testcase'): print(t.getAttribute('name'))",
        ])
        .arg(path)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{} is not well-formed XML: {}",
        path.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(String::from)
        .collect()
}

/// Characters XML 1.0 does not allow (control characters, U+FFFF) in an id, a skill or a
/// message are left out of every junit.xml: audit's streamed one, run's and merge's all
/// stay well-formed. report.json keeps them.
#[test]
fn junit_stays_well_formed_whatever_the_recording_holds() {
    let dir = tempfile::tempdir().unwrap();
    project(dir.path(), DETERMINISTIC);
    let id = "conv\u{1}\u{0}<&>\"\u{ffff}\u{b}-1";
    let line = json!({"id": id, "skill": "no\u{2}such\u{fffe}", "input": "q", "output": "a\u{1b}"});
    std::fs::write(
        dir.path().join("history.jsonl"),
        format!("{}\n{line}\n", recorded(1)),
    )
    .unwrap();
    std::fs::write(
        dir.path().join("replay.yaml"),
        "scenarios: []\ntarget: {kind: replay, history: history.jsonl}\nreport: {dir: replayed}\n",
    )
    .unwrap();
    for (args, report_dir) in [
        (&["audit", "--history", "history.jsonl"][..], "out"),
        (&["--config", "replay.yaml", "run"], "replayed"),
        (
            &["merge", "replayed/report.json", "--report-dir", "merged"],
            "merged",
        ),
    ] {
        let out = fibon(dir.path()).args(args).output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(code(&out), exit_code::UNAVAILABLE, "{args:?}: {stderr}");
        let mut names = junit_names(&dir.path().join(report_dir).join("junit.xml"));
        names.sort();
        assert_eq!(names, ["conv-0001", "conv<&>\"-1"], "{args:?}");
        let report: Value = serde_json::from_str(
            &std::fs::read_to_string(dir.path().join(report_dir).join("report.json")).unwrap(),
        )
        .unwrap();
        assert!(
            report["cells"]
                .as_array()
                .unwrap()
                .iter()
                .any(|c| c["id"] == id),
            "{args:?}: report.json keeps the id as recorded"
        );
    }
}

/// A cancelled nightly job (SIGTERM) stops `sample`: the agents are killed, the cells that
/// finished are written with `interrupted: true`, and it exits 130 — quickly.
#[test]
fn sample_stops_on_sigterm_with_a_partial_report() {
    let dir = tempfile::tempdir().unwrap();
    project(
        dir.path(),
        "import time; open('started', 'w').close(); time.sleep(60)",
    );
    history(dir.path(), 20);
    let child = std::process::Command::new(env!("CARGO_BIN_EXE_fibon-verify"))
        .current_dir(dir.path())
        .args(["sample", "--history", "history.jsonl", "--rate", "1"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // The signal lands once a replay is under way: the agent says so by a file.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while !dir.path().join("started").exists() && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    assert!(dir.path().join("started").exists(), "no replay started");
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(child.id() as i32),
        nix::sys::signal::Signal::SIGTERM,
    )
    .unwrap();
    let t = std::time::Instant::now();
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(t.elapsed() < std::time::Duration::from_secs(10), "{stderr}");
    assert_eq!(code(&out), exit_code::INTERRUPTED, "{stderr}");
    let report: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("out/report.json")).unwrap())
            .unwrap();
    assert_eq!(report["interrupted"], true);
    assert_eq!(report["exit_code"], exit_code::INTERRUPTED);
}
