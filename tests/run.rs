//! `fibon-verify run` end to end: the reference agents in every quadrant, hostile agents
//! (hang, crash, garbage, floods), HTTP targets that misbehave, filters and shards, the
//! reports and their snapshots, and Ctrl-C.

mod common;

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::{code, fibon, root};
use fibon_verify::exit_code;
use serde_json::{Value, json};

fn run_json(dir: &Path, args: &[&str]) -> (i32, Value, String) {
    let out = fibon(dir)
        .args(["run", "--format", "json"])
        .args(args)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    let report =
        serde_json::from_slice(&out.stdout).unwrap_or_else(|_| panic!("no report: {stderr}"));
    (code(&out), report, stderr)
}

fn verdicts(report: &Value) -> Vec<(String, String)> {
    report["cells"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            (
                c["id"].as_str().unwrap().to_string(),
                c["verdict"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

#[test]
fn the_grounded_agent_passes_every_quadrant() {
    let dir = tempfile::tempdir().unwrap();
    let (code, report, stderr) = run_json(&root(), &["--report-dir", dir.path().to_str().unwrap()]);
    assert_eq!(code, exit_code::SUCCESS, "{stderr}");
    assert_eq!(report["summary"]["cells"], 31);
    assert_eq!(report["summary"]["pass"], 31, "{:?}", verdicts(&report));
    let quadrants: std::collections::BTreeSet<&str> = report["cells"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["quadrant"].as_str().unwrap())
        .collect();
    assert_eq!(
        quadrants.into_iter().collect::<Vec<_>>(),
        ["Q1", "Q2", "Q3", "Q4"]
    );
    let q3 = report["cells"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| {
            c["id"] == "fetch_anthropic_models/fetch-anthropic-models-simple/Q3/TOOL_NOT_FOUND"
        })
        .unwrap();
    assert_eq!(q3["behavior"], "explicit_failure");
    assert_eq!(
        q3["output"],
        "I cannot answer reliably: the tool `read_page` is not available."
    );
    assert!(dir.path().join("report.json").is_file() && dir.path().join("junit.xml").is_file());
}

#[test]
fn the_naive_agent_is_caught_degrading_silently() {
    let dir = tempfile::tempdir().unwrap();
    let (code, report, _) = run_json(
        &root(),
        &[
            "--config",
            "fibon.naive.yaml",
            "--report-dir",
            dir.path().to_str().unwrap(),
        ],
    );
    assert_eq!(code, exit_code::SILENT_DEGRADATION);
    for (id, verdict) in verdicts(&report) {
        // The simple contract review asks for no reminder: add_schedule is never called,
        // the person never asked, and the cell is judged as one with the tools available.
        let unasked =
            id == "contract_review/contract-review-simple/Q3/APPROVAL_DENIED/add_schedule";
        let expected = if id.contains("/Q1") || id.contains("/Q2") || unasked {
            "pass"
        } else {
            "silent_degradation"
        };
        assert_eq!(verdict, expected, "{id}");
    }
    let cell = report["cells"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["id"] == "fetch_anthropic_models/fetch-anthropic-models-simple/Q3/EMPTY_RESULT")
        .unwrap();
    assert_eq!(cell["behavior"], "silent");
    let finding = &cell["findings"][0];
    assert_eq!(finding["check"], "silent_degradation");
    assert_eq!(
        finding["evidence"]["forbidden_facts"],
        json!(["claude-3-5-sonnet-20241022"])
    );
    assert_eq!(finding["evidence"]["fault"], "EMPTY_RESULT");
    let checks: Vec<&str> = cell["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["check"].as_str().unwrap())
        .collect();
    assert!(
        checks.contains(&"prohibited_action") && checks.contains(&"forbidden_facts"),
        "{checks:?}"
    );
    // The gateway's trace shows what really happened: the call came back empty.
    assert_eq!(cell["trace"][1]["status"], "empty");
}

/// A one-skill project whose target is `argv`; the scenario is simple (Q1 + Q3 with
/// `faults`), the contract's TOOL_NOT_FOUND semantics `hard`.
/// `run --format json | head -c 10`: the reader goes away, and the failing run must still
/// exit 1 (a broken pipe once mapped to 0 — a pass under `set -o pipefail`).
#[test]
fn a_reader_that_goes_away_does_not_turn_a_failure_into_a_pass() {
    let dir = tempfile::tempdir().unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_fibon-verify"))
        .current_dir(root())
        .args(["run", "--format", "json", "--config", "fibon.naive.yaml"])
        .arg("--report-dir")
        .arg(dir.path())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(exit_code::SILENT_DEGRADATION));
    assert!(dir.path().join("report.json").is_file());
}

fn project(target: &str, faults: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("contracts")).unwrap();
    std::fs::create_dir_all(dir.path().join("scenarios")).unwrap();
    std::fs::write(dir.path().join("fibon.yaml"), format!("target:\n{target}\nmatrix: {{jobs: 4, timeout_fault_delay: 200ms}}\nreport: {{dir: out}}\n")).unwrap();
    std::fs::write(
        dir.path().join("contracts/lookup.yaml"),
        "skill: lookup\nmust_call_tools: [lookup]\nfailure_semantics: {TOOL_NOT_FOUND: hard}\n",
    )
    .unwrap();
    std::fs::write(
        dir.path().join("scenarios/lookup.yaml"),
        format!("id: lookup-simple\nskill: lookup\ncomplexity: simple\ninput: look it up\ntools:\n  lookup:\n    responses:\n      - text: \"the answer is 42\"\nfaults: [{faults}]\nexpect: {{facts: [\"42\"]}}\n"),
    )
    .unwrap();
    dir
}

fn python(script: &str) -> String {
    format!(
        "  kind: command\n  command: [\"python3\", \"-c\", {}]\n  timeout: 2s",
        serde_json::to_string(script).unwrap()
    )
}

#[test]
fn hostile_command_agents_are_classified_and_the_run_finishes() {
    let cases: [(&str, &str, &str, &str); 7] = [
        ("hang", "import time; time.sleep(60)", "timeout", "timeout"),
        (
            "crash",
            "import sys; sys.stderr.write('boom: segfault-ish\\n'); sys.exit(3)",
            "hard_interrupt",
            "hard_interrupt",
        ),
        (
            "garbage",
            "import sys; sys.stdout.buffer.write(b'\\xff\\xfe not json \\x00')",
            "answered",
            // Not UTF-8: the protocol is broken, and that decides.
            "agent_protocol",
        ),
        (
            "flood",
            "import sys\nfor _ in range(1600): sys.stdout.write('x' * 65536)",
            "answered",
            "agent_protocol",
        ),
        (
            "grandchild",
            "import subprocess; subprocess.Popen(['sleep', '60']); print('{\"output\": \"the answer is 42\"}')",
            "answered",
            "must_call_tools",
        ),
        (
            // Left the process group, so killing the group cannot close its stdout.
            "escaped grandchild",
            "import subprocess; subprocess.Popen(['sleep', '15'], start_new_session=True); print('{\"output\": \"the answer is 42\"}', flush=True)",
            "answered",
            "must_call_tools",
        ),
        (
            "signal",
            "import os, signal; os.kill(os.getpid(), signal.SIGKILL)",
            "hard_interrupt",
            "hard_interrupt",
        ),
    ];
    for (name, script, behavior, check) in cases {
        let dir = project(&python(script), "");
        let t = Instant::now();
        let (code, report, stderr) = run_json(dir.path(), &[]);
        assert!(
            t.elapsed() < Duration::from_secs(20),
            "{name}: {:?}",
            t.elapsed()
        );
        assert_eq!(code, exit_code::CONTRACT_VIOLATION, "{name}: {stderr}");
        let cell = &report["cells"][0];
        assert_eq!(cell["behavior"], behavior, "{name}: {cell:#}");
        assert_eq!(cell["findings"][0]["check"], check, "{name}: {cell:#}");
        if name == "crash" {
            assert!(
                cell["stderr"]
                    .as_str()
                    .unwrap()
                    .contains("boom: segfault-ish"),
                "stderr is kept"
            );
        }
        if name.contains("grandchild") {
            assert_eq!(
                cell["output"], "the answer is 42",
                "{name}: what the agent printed is kept: {cell:#}"
            );
        }
        if name == "flood" {
            assert_eq!(
                cell["findings"][0]["message"],
                "the response was longer than the 1 MiB cap and was cut there; it was judged on what was kept"
            );
            assert_eq!(
                cell["output"].as_str().unwrap().len(),
                1024 * 1024,
                "stdout is capped at 1 MiB"
            );
        }
    }
}

#[test]
fn a_crash_under_a_hard_fault_is_what_the_contract_asked_for() {
    let script = "import sys, json, urllib.request\nreq = json.load(sys.stdin)\ntools = json.load(urllib.request.urlopen(req['tools']['http_url']))['tools']\nif not tools: sys.exit(2)\nbody = urllib.request.urlopen(urllib.request.Request(req['tools']['http_url'] + '/lookup', data=b'{}', method='POST')).read()\nprint(json.dumps({'output': json.loads(body)['content'][0]['text'], 'trace': [{'tool': 'lookup', 'arguments': {}}]}))";
    let dir = project(&python(script), "TOOL_NOT_FOUND");
    let (code, report, stderr) = run_json(dir.path(), &[]);
    assert_eq!(code, exit_code::SUCCESS, "{stderr}\n{report:#}");
    assert_eq!(
        verdicts(&report),
        [
            ("lookup/lookup-simple/Q1".into(), "pass".into()),
            (
                "lookup/lookup-simple/Q3/TOOL_NOT_FOUND".into(),
                "pass".into()
            )
        ]
    );
    assert_eq!(report["cells"][1]["behavior"], "hard_interrupt");
}

/// An agent whose HTTP client gives up on a held call (TIMEOUT) honestly reports the call
/// it made: the gateway saw it too (`cancelled`), so it is no `trace_mismatch`.
#[test]
fn a_call_the_agent_gave_up_on_is_one_the_gateway_saw() {
    let script = "import sys, json, urllib.request\nreq = json.load(sys.stdin)\nurl = req['tools']['http_url'] + '/lookup'\ntrace = [{'tool': 'lookup', 'arguments': {}}]\ntry:\n    body = json.loads(urllib.request.urlopen(urllib.request.Request(url, data=b'{}', method='POST'), timeout=0.5).read())\n    print(json.dumps({'output': body['content'][0]['text'], 'trace': trace}))\nexcept Exception as e:\n    print(json.dumps({'status': 'error', 'error': {'code': 'TIMEOUT', 'message': str(e)}, 'trace': trace}))";
    let dir = project(&python(script), "TIMEOUT");
    let config = dir.path().join("fibon.yaml");
    let yaml = std::fs::read_to_string(&config).unwrap();
    std::fs::write(
        &config,
        yaml.replace("timeout_fault_delay: 200ms", "timeout_fault_delay: 5s"),
    )
    .unwrap();
    let t = Instant::now();
    let (code, report, stderr) = run_json(dir.path(), &[]);
    assert!(
        t.elapsed() < Duration::from_secs(5),
        "the held call does not hold the run: {:?}",
        t.elapsed()
    );
    assert_eq!(code, exit_code::SUCCESS, "{stderr}\n{report:#}");
    let cell = &report["cells"][1];
    assert_eq!(cell["id"], "lookup/lookup-simple/Q3/TIMEOUT");
    assert_eq!(cell["behavior"], "explicit_failure", "{cell:#}");
    let call = &cell["trace"][0];
    assert_eq!(
        (&call["tool"], &call["fault"]),
        (&json!("lookup"), &json!("TIMEOUT"))
    );
    assert!(
        call["status"] == "cancelled" || call["status"] == "in_flight",
        "{call:#}"
    );
}

#[test]
fn a_target_that_cannot_be_started_is_an_error_and_exits_69() {
    let dir = project("  kind: command\n  command: [\"/nonexistent/agent\"]", "");
    let (code, report, _) = run_json(dir.path(), &[]);
    assert_eq!(code, exit_code::UNAVAILABLE);
    assert_eq!(report["cells"][0]["verdict"], "error");
    assert_eq!(
        report["cells"][0]["findings"][0]["check"],
        "target_unavailable"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn misbehaving_http_targets_are_classified() {
    use wiremock::matchers::{method, path};
    use wiremock::{Mock, MockServer, ResponseTemplate};
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/slow"))
        .respond_with(ResponseTemplate::new(200).set_delay(Duration::from_secs(5)))
        .mount(&server)
        .await;
    Mock::given(method("POST"))
        .and(path("/500"))
        .respond_with(ResponseTemplate::new(500))
        .mount(&server)
        .await;
    Mock::given(method("POST"))
        .and(path("/502json"))
        .respond_with(
            ResponseTemplate::new(502)
                .set_body_json(json!({"status": "error", "error": {"code": "TOOL_NOT_FOUND"}})),
        )
        .mount(&server)
        .await;
    Mock::given(method("POST"))
        .and(path("/garbage"))
        .respond_with(ResponseTemplate::new(200).set_body_bytes(b"\x00\x01<html>".to_vec()))
        .mount(&server)
        .await;
    Mock::given(method("POST"))
        .and(path("/huge"))
        .respond_with(ResponseTemplate::new(200).set_body_string("y".repeat(5 * 1024 * 1024)))
        .mount(&server)
        .await;
    Mock::given(method("POST"))
        .and(path("/redirect"))
        .respond_with(ResponseTemplate::new(302).insert_header("location", "/elsewhere"))
        .mount(&server)
        .await;
    Mock::given(method("POST"))
        .and(path("/elsewhere"))
        .respond_with(ResponseTemplate::new(200).set_body_string("an impostor's answer: 42"))
        .mount(&server)
        .await;
    Mock::given(method("POST"))
        .and(path("/502"))
        .respond_with(ResponseTemplate::new(502).set_body_string("<html>502 Bad Gateway</html>"))
        .mount(&server)
        .await;
    Mock::given(method("POST"))
        .and(path("/401"))
        .respond_with(
            ResponseTemplate::new(401)
                .set_body_json(json!({"status": "error", "error": {"code": "UNAUTHORIZED"}})),
        )
        .mount(&server)
        .await;
    let cases = [
        // Never a verdict on the agent: whatever answered was not it.
        ("redirect", "not_run", exit_code::UNAVAILABLE),
        ("502", "not_run", exit_code::UNAVAILABLE),
        ("401", "not_run", exit_code::UNAVAILABLE),
        ("slow", "timeout", exit_code::CONTRACT_VIOLATION),
        ("500", "hard_interrupt", exit_code::CONTRACT_VIOLATION),
        ("502json", "explicit_failure", exit_code::CONTRACT_VIOLATION),
        ("garbage", "answered", exit_code::CONTRACT_VIOLATION),
        ("huge", "answered", exit_code::CONTRACT_VIOLATION),
        ("missing", "not_run", exit_code::UNAVAILABLE),
    ];
    for (route, behavior, expected) in cases {
        let dir = project(
            &format!(
                "  kind: http\n  url: \"{}/{route}\"\n  headers: {{Authorization: \"Bearer ${{FIBON_TEST_TOKEN}}\"}}\n  timeout: 1s",
                server.uri()
            ),
            "",
        );
        let path = dir.path().to_path_buf();
        let (code, report, stderr) = tokio::task::spawn_blocking(move || run_json(&path, &[]))
            .await
            .unwrap();
        assert_eq!(code, expected, "{route}: {stderr}");
        assert_eq!(
            report["cells"][0]["behavior"], behavior,
            "{route}: {:#}",
            report["cells"][0]
        );
        let first = &report["cells"][0]["findings"][0];
        if behavior == "not_run" {
            assert_eq!(first["check"], "target_unavailable", "{route}: {first:#}");
        }
        if route == "redirect" {
            let message = first["message"].as_str().unwrap();
            assert!(
                message.contains("redirecting to /elsewhere; redirects are not followed"),
                "{message}"
            );
        }
        if route == "huge" {
            assert_eq!(
                report["cells"][0]["output"].as_str().unwrap().len(),
                1024 * 1024
            );
            assert_eq!(
                first["check"], "agent_protocol",
                "the cut is named: {first:#}"
            );
        }
    }
    let (_, report, _) = {
        let dir = project(
            "  kind: http\n  url: \"http://127.0.0.1:9/agent\"\n  timeout: 2s",
            "",
        );
        let path = dir.path().to_path_buf();
        tokio::task::spawn_blocking(move || run_json(&path, &[]))
            .await
            .unwrap()
    };
    assert_eq!(
        report["cells"][0]["verdict"], "error",
        "a refused connection is the verifier's error"
    );
}

#[test]
fn filters_shards_and_repeat() {
    let (code, report, _) = run_json(
        &root(),
        &[
            "--skill",
            "search_docs",
            "--quadrant",
            "Q3",
            "--report-dir",
            "target/fibon-test-filter",
        ],
    );
    assert_eq!(code, exit_code::SUCCESS);
    let ids: Vec<String> = verdicts(&report).into_iter().map(|(id, _)| id).collect();
    assert_eq!(
        ids,
        [
            "search_docs/search-docs-simple/Q3/TOOL_NOT_FOUND",
            "search_docs/search-docs-simple/Q3/PERMISSION_DENIED",
            "search_docs/search-docs-simple/Q3/TIMEOUT",
            "search_docs/search-docs-simple/Q3/EMPTY_RESULT"
        ]
    );
    // A filter that selects nothing runs nothing (a typo is an error: see
    // a_filter_typo_is_named_with_did_you_mean_and_an_empty_selection_keeps_the_last_report).
    let nothing = fibon(&root())
        .args(["run", "--skill", "search_docs", "--fault", "LATENCY"])
        .args(["--report-dir", "target/fibon-test-filter"])
        .output()
        .unwrap();
    assert_eq!(common::code(&nothing), exit_code::NO_CELLS);
    let (_, whole, _) = run_json(
        &root(),
        &[
            "--fault",
            "TOOL_NOT_FOUND",
            "--report-dir",
            "target/fibon-test-filter",
        ],
    );
    let mut union = Vec::new();
    for k in 1..=3 {
        let (_, part, _) = run_json(
            &root(),
            &[
                "--fault",
                "TOOL_NOT_FOUND",
                "--shard",
                &format!("{k}/3"),
                "--report-dir",
                "target/fibon-test-filter",
            ],
        );
        assert_eq!(part["shard"], format!("{k}/3"));
        union.extend(verdicts(&part));
    }
    union.sort();
    let mut all = verdicts(&whole);
    all.sort();
    assert_eq!(union, all, "the shards partition the matrix");
    let (_, report, _) = run_json(
        &root(),
        &[
            "--scenario",
            "search-docs-simple",
            "--quadrant",
            "Q1",
            "--repeat",
            "3",
            "--report-dir",
            "target/fibon-test-filter",
        ],
    );
    assert_eq!(report["cells"][0]["attempts"], 3);
    let out = fibon(&root())
        .args(["run", "--shard", "4/3"])
        .output()
        .unwrap();
    assert_eq!(code_of(&out), exit_code::USAGE);
}

fn code_of(out: &std::process::Output) -> i32 {
    code(out)
}

fn redact(s: &str) -> String {
    let time = regex::Regex::new(r#"(time|timestamp)="[^"]*""#).unwrap();
    time.replace_all(s, r#"$1="[redacted]""#).into_owned()
}

#[test]
fn reports_are_projections_of_report_json() {
    let dir = tempfile::tempdir().unwrap();
    let summary = dir.path().join("summary.md");
    let out = fibon(&root())
        .env("GITHUB_ACTIONS", "true")
        .env("GITHUB_STEP_SUMMARY", &summary)
        .args([
            "run",
            "--config",
            "fibon.naive.yaml",
            "--color",
            "never",
            "--skill",
            "fetch_anthropic_models",
            "--report-dir",
            dir.path().to_str().unwrap(),
        ])
        .output()
        .unwrap();
    assert_eq!(code(&out), exit_code::SILENT_DEGRADATION);
    let stderr = String::from_utf8_lossy(&out.stderr);
    let annotations: Vec<&str> = stderr
        .lines()
        .filter(|l| l.starts_with("::warning "))
        .collect();
    // Warnings: fetch_anthropic_models is of low risk (errors are for high and critical).
    assert_eq!(annotations.len(), 7);
    assert!(annotations[0].starts_with("::warning file=contracts/fetch_anthropic_models.json,line=2,title=fibon silent_degradation::fetch_anthropic_models/"), "{}", annotations[0]);
    let table: String = stderr
        .lines()
        .filter(|l| !l.starts_with("::") && !l.starts_with("report:") && !l.starts_with("html:"))
        .map(|l| format!("{l}\n"))
        .collect();
    insta::assert_snapshot!("run_table_naive", table);
    insta::assert_snapshot!(
        "run_junit_naive",
        redact(&std::fs::read_to_string(dir.path().join("junit.xml")).unwrap())
    );
    insta::assert_snapshot!(
        "run_summary_naive",
        std::fs::read_to_string(&summary).unwrap()
    );
    let report: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("report.json")).unwrap())
            .unwrap();
    assert_eq!(report["schema"], "fibon.report/v1");
    assert_eq!(report["exit_code"], exit_code::SILENT_DEGRADATION);
    assert!(
        !dir.path().join(".report.json.tmp").exists(),
        "written atomically, no leftovers"
    );
}

#[test]
fn a_filter_typo_is_named_with_did_you_mean_and_an_empty_selection_keeps_the_last_report() {
    let dir = project(&python("print('the answer is 42')"), "TOOL_NOT_FOUND");
    fibon(dir.path()).arg("run").output().unwrap();
    let before = std::fs::read_to_string(dir.path().join("out/report.json")).unwrap();
    let typo = fibon(dir.path())
        .args(["run", "--scenario", "lookup-simpel"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&typo.stderr);
    assert_eq!(code(&typo), exit_code::USAGE, "{stderr}");
    assert!(stderr.contains("no scenario `lookup-simpel`"), "{stderr}");
    assert!(stderr.contains("did you mean `lookup-simple`"), "{stderr}");
    // Valid filters that select no cell: exit 5, and the last report is left alone.
    let none = fibon(dir.path())
        .args(["run", "--quadrant", "Q3", "--fault", "TIMEOUT"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&none.stderr);
    assert_eq!(code(&none), exit_code::NO_CELLS, "{stderr}");
    assert!(stderr.contains("0 cells selected"), "{stderr}");
    assert_eq!(
        std::fs::read_to_string(dir.path().join("out/report.json")).unwrap(),
        before
    );
}

#[test]
fn the_run_id_an_agent_receives_says_nothing_of_its_cell() {
    // An agent that could read its quadrant or fault from `run_id` would defeat the matrix.
    let dir = project(
        &python(
            "import json, os, sys; r = json.load(sys.stdin); print(json.dumps({'output': r['run_id'] + ' ' + os.environ['FIBON_RUN_ID']}))",
        ),
        "TOOL_NOT_FOUND, TIMEOUT",
    );
    fibon(dir.path()).arg("run").output().unwrap();
    let report: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("out/report.json")).unwrap())
            .unwrap();
    let mut seen = std::collections::HashSet::new();
    for cell in report["cells"].as_array().unwrap() {
        let out = cell["output"].as_str().unwrap();
        let (id, env) = out.split_once(' ').unwrap();
        assert_eq!(id, env, "the request and the environment agree");
        for telling in [
            "Q1",
            "Q2",
            "Q3",
            "Q4",
            "TOOL_NOT_FOUND",
            "TIMEOUT",
            "lookup",
        ] {
            assert!(!id.contains(telling), "{id} names {telling}");
        }
        assert!(seen.insert(id.to_string()), "{id} is reused");
    }
    assert!(seen.len() >= 3, "{seen:?}");
}

#[test]
fn ctrl_c_or_sigterm_writes_a_partial_report_and_exits_130() {
    // SIGTERM is what a CI runner sends when a job is cancelled or times out.
    for signal in [
        nix::sys::signal::Signal::SIGINT,
        nix::sys::signal::Signal::SIGTERM,
    ] {
        let dir = project(
            &python("import time; open('started', 'w').close(); time.sleep(60)")
                .replace("timeout: 2s", "timeout: 60s"),
            "TOOL_NOT_FOUND",
        );
        let child = Command::new(env!("CARGO_BIN_EXE_fibon-verify"))
            .current_dir(dir.path())
            .args(["run", "--jobs", "1"])
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        // The signal lands while a cell is running: the agent says so by a file.
        let deadline = Instant::now() + Duration::from_secs(30);
        while !dir.path().join("started").exists() && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(20));
        }
        assert!(dir.path().join("started").exists(), "no cell started");
        nix::sys::signal::kill(nix::unistd::Pid::from_raw(child.id() as i32), signal).unwrap();
        let t = Instant::now();
        let out = child.wait_with_output().unwrap();
        assert!(t.elapsed() < Duration::from_secs(10));
        assert_eq!(
            code(&out),
            exit_code::INTERRUPTED,
            "{signal}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let report: Value = serde_json::from_str(
            &std::fs::read_to_string(dir.path().join("out/report.json")).unwrap(),
        )
        .unwrap();
        assert_eq!(report["interrupted"], true, "{signal}");
        assert_eq!(report["exit_code"], exit_code::INTERRUPTED, "{signal}");
    }
}

/// A python agent: calls `lookup`; on success prints `ok` (with `{text}` replaced by the
/// tool's text); on failure prints `fail` — both as the `output` of a JSON response.
fn prose_agent(ok: &str, fail: &str, extra: &str) -> String {
    let script = format!(
        "import sys, json, urllib.request, urllib.error\nreq = json.load(sys.stdin)\nurl = req['tools']['http_url'] + '/lookup'\ntry:\n    body = json.loads(urllib.request.urlopen(urllib.request.Request(url, data=b'{{}}', method='POST')).read())\n    text = ''.join(p.get('text', '') for p in body['content'])\n    if not text: raise ValueError('empty')\n    out = {ok:?}.replace('{{text}}', text)\nexcept Exception:\n    out = {fail:?}\nprint(json.dumps({{'output': out{extra}}}))"
    );
    python(&script)
}

#[test]
fn refusals_in_prose_pass_and_veneered_ones_are_caught() {
    // A paraphrased refusal in Chinese under every fault: the contract's `explicit` accepts it.
    let dir = project(
        &prose_agent(
            "{text}",
            "抱歉，查询服务暂时无法访问，我没办法给出可靠的回答。",
            "",
        ),
        "TOOL_NOT_FOUND, EMPTY_RESULT",
    );
    std::fs::write(
        dir.path().join("contracts/lookup.yaml"),
        "skill: lookup\nmust_call_tools: [lookup]\n",
    )
    .unwrap();
    let (code, report, stderr) = run_json(dir.path(), &[]);
    assert_eq!(code, exit_code::SUCCESS, "{stderr}\n{report:#}");
    assert_eq!(report["cells"][1]["behavior"], "refused");

    // The same refusal, then a number from memory: not a clean refusal.
    let dir = project(
        &prose_agent(
            "{text}",
            "I can't reach the lookup service right now. From memory, though, the answer is 41.5%.",
            "",
        ),
        "EMPTY_RESULT",
    );
    std::fs::write(
        dir.path().join("contracts/lookup.yaml"),
        "skill: lookup\nmust_call_tools: [lookup]\n",
    )
    .unwrap();
    let (code, report, _) = run_json(dir.path(), &[]);
    assert_eq!(code, exit_code::SILENT_DEGRADATION, "{report:#}");
    // An answer was produced: the refusal wrapped around it does not make it one.
    let cell = &report["cells"][1];
    assert_eq!(cell["behavior"], "silent");
    assert_eq!(cell["findings"][0]["check"], "silent_degradation");
    assert!(
        cell["findings"][0]["message"]
            .as_str()
            .unwrap()
            .contains("41.5%"),
        "{cell:#}"
    );
}

#[test]
fn the_citation_tracer_and_forged_citations() {
    // strict_citation_required: a number no tool returned is flagged, even with the tools up.
    let dir = project(
        &prose_agent(
            "{text}, up from 38 in 2025-01-01",
            "unavailable",
            ", 'citations': [{'url': 'https://docs.example.com/never-fetched'}]",
        ),
        "",
    );
    std::fs::write(
        dir.path().join("contracts/lookup.yaml"),
        "skill: lookup\nmust_call_tools: [lookup]\nstrict_citation_required: true\n",
    )
    .unwrap();
    let (code, report, _) = run_json(dir.path(), &[]);
    assert_eq!(code, exit_code::CONTRACT_VIOLATION);
    let checks: Vec<(String, String)> = report["cells"][0]["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            (
                f["check"].as_str().unwrap().to_string(),
                f["message"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    assert!(
        checks
            .iter()
            .any(|(c, m)| c == "citation_unsupported" && m.contains("2025-01-01")),
        "{checks:?}"
    );
    assert!(
        checks
            .iter()
            .any(|(c, m)| c == "citation_forged_url" && m.contains("never-fetched")),
        "{checks:?}"
    );
}

#[test]
fn the_refusal_lexicon_can_be_extended_from_fibon_yaml() {
    // A hedged statement reads as a guess about the subject, unless it speaks of the
    // process: here in the team's own word for its backend.
    let dir = project(
        &prose_agent("{text}", "Probably the oracle is napping.", ""),
        "EMPTY_RESULT",
    );
    std::fs::write(
        dir.path().join("contracts/lookup.yaml"),
        "skill: lookup\nmust_call_tools: [lookup]\n",
    )
    .unwrap();
    let (code, _, _) = run_json(dir.path(), &[]);
    assert_eq!(
        code,
        exit_code::SILENT_DEGRADATION,
        "a hedged statement is an answer"
    );
    let config = std::fs::read_to_string(dir.path().join("fibon.yaml")).unwrap();
    std::fs::write(
        dir.path().join("fibon.yaml"),
        format!("{config}checks: {{refusal_lexicon: lexicon.yaml}}\n"),
    )
    .unwrap();
    std::fs::write(dir.path().join("lexicon.yaml"), "process: [\"oracle\"]\n").unwrap();
    let (code, report, stderr) = run_json(dir.path(), &[]);
    assert_eq!(code, exit_code::SUCCESS, "{stderr}");
    assert_eq!(report["cells"][1]["behavior"], "refused");
    std::fs::write(dir.path().join("lexicon.yaml"), "failures: []\n").unwrap();
    let out = fibon(dir.path()).arg("check").output().unwrap();
    assert_eq!(
        code_of(&out),
        exit_code::INVALID_INPUT,
        "a broken lexicon is a config error"
    );
}

#[test]
fn silent_degradation_carries_dual_track_evidence() {
    let dir = tempfile::tempdir().unwrap();
    let (_, report, _) = run_json(
        &root(),
        &[
            "--config",
            "fibon.naive.yaml",
            "--scenario",
            "search-docs-simple",
            "--report-dir",
            dir.path().to_str().unwrap(),
        ],
    );
    let cell = report["cells"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["fault"] == "TOOL_NOT_FOUND")
        .unwrap();
    let dual = &cell["findings"][0]["evidence"]["dual_track"];
    assert_eq!(
        dual["absent_from_available_quadrant"],
        json!(["1000 requests per minute"]),
        "{cell:#}"
    );
    assert_eq!(
        dual["contradicts_scenario_facts"],
        json!(["1000 requests per minute"])
    );
    assert!(
        dual["available_answer_excerpt"]
            .as_str()
            .unwrap()
            .contains("600 requests per minute")
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn the_refusal_judge_decides_ambiguous_answers_and_fails_closed() {
    use wiremock::matchers::{header, method, path};
    use wiremock::{Mock, MockServer, ResponseTemplate};
    let judge = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/v1/chat/completions"))
        .and(header("authorization", "Bearer judge-secret"))
        .respond_with(
            ResponseTemplate::new(200).set_body_json(
                json!({"choices": [{"message": {"content": "{\"refusal\": true}"}}]}),
            ),
        )
        .expect(1)
        .mount(&judge)
        .await;
    // Ambiguous: a hedged statement, no key facts.
    let dir = project(
        &prose_agent("{text}", "Probably the oracle is napping.", ""),
        "EMPTY_RESULT",
    );
    std::fs::write(
        dir.path().join("contracts/lookup.yaml"),
        "skill: lookup\nmust_call_tools: [lookup]\n",
    )
    .unwrap();
    let config = std::fs::read_to_string(dir.path().join("fibon.yaml")).unwrap();
    let with_judge = |base: &str| {
        format!(
            "{config}checks:\n  refusal_judge: {{base_url: \"{base}\", model: judge-1, api_key_env: FIBON_JUDGE_KEY, timeout: 2s}}\n"
        )
    };
    std::fs::write(
        dir.path().join("fibon.yaml"),
        with_judge(&format!("{}/v1", judge.uri())),
    )
    .unwrap();
    let path = dir.path().to_path_buf();
    let out = tokio::task::spawn_blocking(move || {
        fibon(&path)
            .env("FIBON_JUDGE_KEY", "judge-secret")
            .args(["run", "--format", "json"])
            .output()
            .unwrap()
    })
    .await
    .unwrap();
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(code(&out), exit_code::SUCCESS, "{report:#}");
    assert_eq!(
        report["cells"][1]["behavior"], "refused",
        "the judge said so"
    );
    assert!(
        !String::from_utf8_lossy(&out.stdout).contains("judge-secret"),
        "the key never reaches the report"
    );
    judge.verify().await;

    // Configured but unreachable: the cell is an error, never a quiet pass.
    std::fs::write(
        dir.path().join("fibon.yaml"),
        with_judge("http://127.0.0.1:9/v1"),
    )
    .unwrap();
    let path = dir.path().to_path_buf();
    let out = tokio::task::spawn_blocking(move || {
        fibon(&path)
            .env("FIBON_JUDGE_KEY", "k")
            .args(["run", "--format", "json"])
            .output()
            .unwrap()
    })
    .await
    .unwrap();
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(code(&out), exit_code::UNAVAILABLE);
    assert_eq!(report["cells"][1]["verdict"], "error");
    assert_eq!(
        report["cells"][1]["findings"][0]["check"],
        "refusal_judge_unavailable"
    );
    assert_eq!(
        report["cells"][0]["verdict"], "pass",
        "cells that need no judge are unaffected"
    );
}

#[test]
fn replay_rechecks_recorded_conversations_without_invoking_anything() {
    let dir = tempfile::tempdir().unwrap();
    let contracts = root().join("contracts");
    std::fs::write(
        dir.path().join("fibon.yaml"),
        format!("contracts: [{:?}]\nscenarios: []\ntarget: {{kind: replay, history: history.jsonl}}\nreport: {{dir: out}}\n", contracts.display().to_string()),
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
    std::fs::write(dir.path().join("history.jsonl"), lines.join("\n") + "\n").unwrap();
    let (code, report, stderr) = run_json(dir.path(), &[]);
    assert_eq!(code, exit_code::SILENT_DEGRADATION, "{stderr}");
    assert_eq!(
        verdicts(&report),
        [
            ("conv-ok".to_string(), "pass".to_string()),
            ("conv-silent".into(), "silent_degradation".into()),
            ("conv-explicit".into(), "pass".into()),
            ("line-4".into(), "error".into()),
            ("conv-unknown".into(), "error".into()),
        ]
    );
    assert_eq!(report["cells"][1]["fault"], "TOOL_NOT_FOUND");
    let indexes: Vec<u64> = report["cells"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["index"].as_u64().unwrap())
        .collect();
    assert_eq!(indexes, [0, 1, 2, 3, 4], "history order, kept by `merge`");
    assert!(
        report["cells"][3]["findings"][0]["message"]
            .as_str()
            .unwrap()
            .starts_with("line 4: not JSON")
    );
}

/// Out-of-range flag values are refused, never quietly replaced (`--jobs 0` once ran with 1).
#[test]
fn flag_values_out_of_range_are_usage_errors() {
    let dir = project(&python("print(1)"), "");
    for (args, flag) in [
        (&["run", "--jobs", "0"][..], "--jobs"),
        (&["run", "--repeat", "0"], "--repeat"),
        (&["sample", "--history", "h", "--rate", "1.5"], "--rate"),
        (&["sample", "--history", "h", "--rate", "NaN"], "--rate"),
        (
            &["sample", "--history", "h", "--min-similarity", "5"],
            "--min-similarity",
        ),
        (
            &["sample", "--history", "h", "--max-instability=-0.1"],
            "--max-instability",
        ),
    ] {
        let out = Command::new(env!("CARGO_BIN_EXE_fibon-verify"))
            .current_dir(dir.path())
            .args(args)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(code(&out), exit_code::USAGE, "{args:?}: {stderr}");
        assert!(
            stderr.contains(&format!("for '{flag} <")),
            "{args:?}: {stderr}"
        );
    }
}

/// A report folder that cannot be written is found before any cell runs, and named.
#[test]
fn an_unwritable_report_dir_is_named_before_any_cell_runs() {
    let dir = project(&python("import time; time.sleep(60)"), "");
    for name in ["file", "h.jsonl", "r.json", "c.jsonl"] {
        std::fs::write(dir.path().join(name), "").unwrap();
    }
    for (args, path) in [
        (&["run", "--report-dir", "file"][..], "file"),
        (&["run", "--report-dir", "file/sub"], "file/sub"),
        (
            &["audit", "--history", "h.jsonl", "--report-dir", "file"],
            "file",
        ),
        (&["merge", "r.json", "--report-dir", "file"], "file"),
        (
            &["gate", "--candidates", "c.jsonl", "--report-dir", "file"],
            "file",
        ),
    ] {
        let t = Instant::now();
        let out = Command::new(env!("CARGO_BIN_EXE_fibon-verify"))
            .current_dir(dir.path())
            .args(args)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(code(&out), exit_code::USAGE, "{args:?}: {stderr}");
        assert!(
            stderr.contains(&format!("error: cannot write {path}: ")),
            "{args:?}: {stderr}"
        );
        assert!(t.elapsed() < Duration::from_secs(5), "no cell was run");
    }
}

/// What the agent prints after calling `lookup` (or, under a fault, after seeing it fail).
fn printing_agent(ok: &str, fail: &str) -> String {
    let script = format!(
        "import sys, json, urllib.request, urllib.error\nreq = json.load(sys.stdin)\nurl = req['tools']['http_url']\ntry:\n    urllib.request.urlopen(urllib.request.Request(url + '/lookup', data=b'{{}}', method='POST')).read()\n    sys.stdout.buffer.write({}.encode())\nexcept urllib.error.HTTPError:\n    sys.stdout.buffer.write({}.encode())\n",
        serde_json::to_string(ok).unwrap(),
        serde_json::to_string(fail).unwrap()
    );
    python(&script)
}

/// An answer that is empty, or that breaks the agent protocol, is named — never a pass,
/// and never mistaken for silent degradation.
#[test]
fn empty_answers_and_protocol_breaks_are_named() {
    let error =
        r#"{"status": "error", "error": {"code": "TOOL_NOT_FOUND", "message": "lookup is gone"}}"#;
    let cases = [
        // (what it prints when the tool works, when it fails, Q1 check, Q3 verdict, Q3 first check)
        ("", error, "empty_answer", "pass", None),
        (
            "{\"status\": \"ok\", \"output\": null}",
            error,
            "empty_answer",
            "pass",
            None,
        ),
        (
            "the answer is 42",
            &format!("\u{feff}{error}"),
            "",
            "pass",
            None,
        ),
        (
            "the answer is 42",
            &format!("calling lookup...\n{error}\n"),
            "",
            "contract_violation",
            Some("agent_protocol"),
        ),
        (
            "the answer is 42",
            &format!("{error}\n{error}"),
            "",
            "contract_violation",
            Some("agent_protocol"),
        ),
    ];
    for (ok, fail, q1_check, q3_verdict, q3_first) in cases {
        let dir = project(&printing_agent(ok, fail), "TOOL_NOT_FOUND");
        let (_, report, stderr) = run_json(dir.path(), &[]);
        let cells = report["cells"]
            .as_array()
            .unwrap_or_else(|| panic!("{stderr}"));
        let q1 = cells.iter().find(|c| c["quadrant"] == "Q1").unwrap();
        let q3 = cells.iter().find(|c| c["quadrant"] == "Q3").unwrap();
        let checks: Vec<&str> = q1["findings"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| f["check"].as_str().unwrap())
            .collect();
        if q1_check.is_empty() {
            assert_eq!(q1["verdict"], "pass", "{ok:?}: {q1:#}");
        } else {
            assert_eq!(q1["verdict"], "contract_violation", "{ok:?}: {q1:#}");
            assert!(checks.contains(&q1_check), "{ok:?}: {checks:?}");
        }
        assert_eq!(q3["verdict"], q3_verdict, "{fail:?}: {q3:#}");
        if let Some(first) = q3_first {
            assert_eq!(q3["findings"][0]["check"], first, "{fail:?}: {q3:#}");
        }
    }
}

/// A process that left the agent's process group (a daemon) does not outlive the run: the
/// verifier adopts such orphans and kills them at the end, and says so.
#[cfg(target_os = "linux")]
#[test]
fn processes_the_agent_left_running_are_killed_at_the_end() {
    let dir = tempfile::tempdir().unwrap();
    let pidfile = dir.path().join("daemon.pid");
    let script = format!(
        "import subprocess, sys\np = subprocess.Popen(['sleep', '300'], start_new_session=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)\nopen({:?}, 'w').write(str(p.pid))\nprint('the answer is 42')",
        pidfile.display().to_string()
    );
    let project = project(&python(&script), "");
    let (_, _, stderr) = run_json(project.path(), &[]);
    let pid = std::fs::read_to_string(&pidfile).unwrap();
    assert!(
        !Path::new(&format!("/proc/{pid}")).exists(),
        "the daemon {pid} outlived the run: {stderr}"
    );
    assert!(
        stderr.contains(&format!(
            "note: killed 1 process the agents left running: sleep (pid {pid})"
        )),
        "{stderr}"
    );
}

/// An HTTP target that was reached but whose answer is not HTTP that can be read (here a
/// head that never ends) is the verifier's `error` — and says it was reached.
#[test]
fn an_unreadable_http_answer_is_named_as_such() {
    use std::io::{Read, Write};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for stream in listener.incoming().take(4) {
            let Ok(mut stream) = stream else { continue };
            let mut buf = [0u8; 4096];
            let _ = stream.read(&mut buf);
            let _ = stream.write_all(b"HTTP/1.1 200 OK\r\n");
            let header = format!("X-Padding: {}\r\n", "y".repeat(1000));
            for _ in 0..2000 {
                if stream.write_all(header.as_bytes()).is_err() {
                    break;
                }
            }
        }
    });
    let dir = project(
        &format!("  kind: http\n  url: \"http://127.0.0.1:{port}/agent\"\n  timeout: 10s"),
        "",
    );
    let (code, report, stderr) = run_json(dir.path(), &[]);
    assert_eq!(code, exit_code::UNAVAILABLE, "{stderr}");
    let finding = &report["cells"][0]["findings"][0];
    assert_eq!(finding["check"], "target_unavailable");
    assert!(
        finding["message"]
            .as_str()
            .unwrap()
            .contains("gave no readable HTTP response"),
        "{finding:#}"
    );
}

/// The URL whitelist compares URLs, not text, and covers URLs the answer names.
#[test]
fn the_url_whitelist_is_not_fooled_by_look_alike_hosts() {
    for (url, passes) in [
        ("https://docs.example.com/limits", true),
        ("HTTPS://Docs.Example.com/limits", true),
        ("https://docs.example.com.evil.com/limits", false),
        ("https://docs.example.com@evil.com/limits", false),
    ] {
        let dir = project(
            &printing_agent(&format!("the answer is 42 (source: {url})"), "x"),
            "",
        );
        // The tool returned the URL, so it is not a forged citation: only the whitelist
        // decides.
        let scenario = dir.path().join("scenarios/lookup.yaml");
        let text = std::fs::read_to_string(&scenario).unwrap();
        std::fs::write(
            &scenario,
            text.replace(
                "\"the answer is 42\"",
                &format!("\"the answer is 42, see {url}\""),
            ),
        )
        .unwrap();
        let contract = dir.path().join("contracts/lookup.yaml");
        let text = std::fs::read_to_string(&contract).unwrap();
        std::fs::write(
            &contract,
            text + "enforced_url_prefix_whitelist: [\"https://docs.example.com\"]\n",
        )
        .unwrap();
        let (_, report, stderr) = run_json(dir.path(), &[]);
        let q1 = &report["cells"][0];
        if passes {
            assert_eq!(q1["verdict"], "pass", "{url}: {q1:#} {stderr}");
        } else {
            assert_eq!(q1["verdict"], "contract_violation", "{url}: {q1:#}");
            assert_eq!(q1["findings"][0]["check"], "url_whitelist", "{url}: {q1:#}");
            assert!(
                q1["findings"][0]["message"]
                    .as_str()
                    .unwrap()
                    .starts_with("the answer cites"),
                "{q1:#}"
            );
        }
    }
}

/// The stand-in for `claude -p PROMPT --mcp-config FILE --output-format json` (a Python
/// script under tests/fixtures/cli-agents), as a target with placeholders, `stdin: none`
/// and the given `answer:`; `mode` is its STANDIN_MODE.
fn cli_agent(answer: &str, mode: &str, seen: &Path) -> String {
    let standin = root().join("tests/fixtures/cli-agents/claude_standin.py");
    format!(
        "  kind: command\n  command: [python3, {:?}, -p, \"{{input}}\", --mcp-config, \"{{mcp_config}}\", --output-format, json]\n  stdin: none\n  answer: {answer}\n  env: {{STANDIN_MODE: {mode}, STANDIN_SEEN: {:?}}}\n  timeout: 10s",
        standin.display().to_string(),
        seen.display().to_string(),
    )
}

/// A project with a CLI agent as its target; the contract has no `failure_semantics`
/// (a CLI agent answers in prose: a refusal is what it can give).
fn cli_project(target: &str, faults: &str) -> tempfile::TempDir {
    let dir = project(target, faults);
    std::fs::write(
        dir.path().join("contracts/lookup.yaml"),
        "skill: lookup\nmust_call_tools: [lookup]\n",
    )
    .unwrap();
    dir
}

/// A CLI agent run without a wrapper: its input in argv, its MCP client config a file the
/// verifier writes per invocation (and removes), its answer at `$.result` in its JSON.
#[test]
fn cli_agents_run_without_a_wrapper() {
    let seen = tempfile::NamedTempFile::new().unwrap();
    let faults = "TOOL_NOT_FOUND, EMPTY_RESULT";
    let dir = cli_project(
        &cli_agent("{json: \"$.result\"}", "honest", seen.path()),
        faults,
    );
    let (code, report, stderr) = run_json(dir.path(), &[]);
    assert_eq!(code, exit_code::SUCCESS, "{stderr}\n{report:#}");
    let cells = report["cells"].as_array().unwrap();
    assert_eq!(cells.len(), 3, "{report:#}");
    assert_eq!(cells[0]["output"], "the answer is 42", "{:#}", cells[0]);
    for cell in &cells[1..] {
        assert_eq!(cell["verdict"], "pass", "{cell:#}");
        let behavior = cell["behavior"].as_str().unwrap();
        assert!(
            ["explicit_failure", "refused"].contains(&behavior),
            "{cell:#}"
        );
    }
    // One config file per invocation, each gone when its invocation ended.
    let paths = std::fs::read_to_string(seen.path()).unwrap();
    let paths: Vec<&str> = paths.lines().collect();
    assert_eq!(paths.len(), 3, "{paths:?}");
    for p in &paths {
        assert!(!Path::new(p).exists(), "{p} was left behind");
        assert!(
            !Path::new(p).parent().unwrap().exists(),
            "{p}'s folder was left behind"
        );
    }

    // The same agent answering from memory when its tool fails: caught.
    let dir = cli_project(
        &cli_agent("{json: \"$.result\"}", "fabricate", seen.path()),
        faults,
    );
    let (code, report, _) = run_json(dir.path(), &[]);
    assert_eq!(code, exit_code::SILENT_DEGRADATION, "{report:#}");
    let v = verdicts(&report);
    assert_eq!(v[0].1, "pass", "{v:?}");
    assert!(
        v[1..].iter().all(|(_, v)| v == "silent_degradation"),
        "{v:?}"
    );

    // `answer: text`: all of stdout is the answer, never read as a protocol response.
    let dir = cli_project(&cli_agent("text", "text", seen.path()), "TOOL_NOT_FOUND");
    let (code, report, stderr) = run_json(dir.path(), &[]);
    assert_eq!(code, exit_code::SUCCESS, "{stderr}\n{report:#}");
    assert_eq!(report["cells"][0]["output"], "the answer is 42\n");
    // JSON read as text stays text: `{"result": …}` is not an output.
    let dir = cli_project(&cli_agent("text", "honest", seen.path()), "");
    let (_, report, _) = run_json(dir.path(), &[]);
    let output = report["cells"][0]["output"].as_str().unwrap();
    assert!(output.starts_with("{\"type\": \"result\""), "{output}");

    // A path that selects nothing is a protocol break, never a quiet pass.
    let dir = cli_project(
        &cli_agent("{json: \"$.answer\"}", "honest", seen.path()),
        "",
    );
    let (code, report, _) = run_json(dir.path(), &[]);
    assert_ne!(code, exit_code::SUCCESS);
    let cell = &report["cells"][0];
    assert_eq!(cell["verdict"], "contract_violation", "{cell:#}");
    let finding = cell["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["check"] == "agent_protocol")
        .unwrap_or_else(|| panic!("{cell:#}"));
    assert!(
        finding["message"]
            .as_str()
            .unwrap()
            .starts_with("`$.answer` selects nothing in stdout's JSON"),
        "{finding:#}"
    );
    // Stdout that is not JSON, likewise.
    let dir = cli_project(&cli_agent("{json: \"$.result\"}", "text", seen.path()), "");
    let (_, report, _) = run_json(dir.path(), &[]);
    let cell = &report["cells"][0];
    assert_eq!(cell["verdict"], "contract_violation", "{cell:#}");
    assert_eq!(cell["findings"][0]["check"], "agent_protocol", "{cell:#}");
}

/// Placeholders are filled whole and inside arguments, never through a shell: a value
/// with spaces and quotes stays one argument.
#[test]
fn placeholders_are_filled_inside_arguments_without_a_shell() {
    let script = "import sys, json\nassert sys.stdin.read() == ''\na = sys.argv[1:]\nassert a[0] == '--prompt=look it up', a\nassert a[1] == 'lookup' and a[2].startswith('run-') and a[3].endswith('/tools') and a[4].endswith('/mcp'), a\nassert a[5] == '{{input}}', a  # (escaped: the script is an argument too)\nprint(json.dumps({'output': 'the answer is 42 ' + ' '.join(a)}))";
    let target = format!(
        "  kind: command\n  command: [python3, -c, {}, \"--prompt={{input}}\", \"{{skill}}\", \"{{run_id}}\", \"{{tools_url}}\", \"{{mcp_url}}\", \"{{{{input}}}}\"]\n  stdin: none\n  timeout: 10s",
        serde_json::to_string(script).unwrap()
    );
    let dir = project(&target, "");
    let (_, report, stderr) = run_json(dir.path(), &[]);
    let cell = &report["cells"][0];
    let output = cell["output"]
        .as_str()
        .unwrap_or_else(|| panic!("{stderr}\n{cell:#}"));
    assert!(
        output.starts_with("the answer is 42 --prompt=look it up lookup run-"),
        "{cell:#}"
    );
}
