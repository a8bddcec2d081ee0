//! The quality gate: scripted command judges and wiremock OpenAI-compatible judges through
//! every aggregation branch and every verdict rule, budgets, unstable judges, outages, and
//! the gate inside `run`.

mod common;

use std::path::Path;

use common::{code, fibon, root};
use fibon_verify::exit_code;
use serde_json::{Value, json};

fn judge(name: &str) -> String {
    format!(
        "{{id: {name}, kind: command, command: [\"python3\", {:?}, \"{name}\"], timeout: 10s}}",
        root()
            .join("tests/peers/scripted_judge.py")
            .display()
            .to_string()
    )
}

fn policy(dir: &Path, extra: &str) {
    std::fs::write(
        dir.join("policy.yaml"),
        format!(
            "policy: test\nversion: 1\ndimensions:\n  - {{id: safety, kind: hard_block, threshold: 9}}\n  - {{id: canon, kind: critical, threshold: 7}}\n  - {{id: style, kind: advisory, threshold: 5}}\njudges:\n  - {}\n  - {}\ntiebreak: {}\nbudget: {{planned_calls: 20, max_calls: 30, max_usd_per_call: 0.1, limit_usd: 5}}\n{extra}",
            judge("a"),
            judge("b"),
            judge("c")
        ),
    )
    .unwrap();
}

fn candidates(dir: &Path, texts: &[&str]) {
    let lines: Vec<String> = texts
        .iter()
        .enumerate()
        .map(|(i, t)| {
            json!({"id": format!("cand-{i}"), "input": "q", "output": t, "facts": []}).to_string()
        })
        .collect();
    std::fs::write(dir.join("candidates.jsonl"), lines.join("\n") + "\n").unwrap();
}

fn gate(dir: &Path, scores: &Value, extra_args: &[&str]) -> (i32, Value, Vec<Value>) {
    let log = dir.join("judge.log");
    let _ = std::fs::remove_file(&log);
    let out = fibon(dir)
        .env("FIBON_TEST_SCORES", scores.to_string())
        .env("FIBON_TEST_LOG", &log)
        .args([
            "gate",
            "--candidates",
            "candidates.jsonl",
            "--policy",
            "policy.yaml",
            "--format",
            "json",
            "--report-dir",
            "out",
        ])
        .args(extra_args)
        .output()
        .unwrap();
    let report: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|_| panic!("{}", String::from_utf8_lossy(&out.stderr)));
    let calls = std::fs::read_to_string(&log)
        .unwrap_or_default()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    (code(&out), report, calls)
}

fn state(report: &Value, i: usize) -> &str {
    report["cells"][i]["quality"]["state"]
        .as_str()
        .unwrap_or("none")
}

#[test]
fn aggregation_branches_and_the_ordered_verdict() {
    let dir = tempfile::tempdir().unwrap();
    policy(dir.path(), "");
    let texts = [
        "agree", "tiebreak", "unstable", "blocked", "conflict", "low", "advisory",
    ];
    candidates(dir.path(), &texts);
    let s = |safety: f64, canon: f64, style: f64| json!({"safety": safety, "canon": canon, "style": style});
    let scores = json!({
        "a": {"agree": s(10.0, 8.0, 6.0), "tiebreak": s(10.0, 6.0, 6.0), "unstable": s(10.0, 3.0, 6.0), "blocked": s(5.0, 9.0, 9.0), "conflict": {"safety": 10, "canon": 9, "style": 9, "conflict": true}, "low": s(10.0, 6.0, 6.0), "advisory": s(10.0, 8.0, 2.0)},
        "b": {"agree": s(10.0, 7.5, 6.0), "tiebreak": s(10.0, 8.0, 6.0), "unstable": s(10.0, 6.0, 6.0), "blocked": s(5.0, 9.0, 9.0), "conflict": s(10.0, 9.0, 9.0), "low": s(10.0, 6.5, 6.0), "advisory": s(10.0, 8.0, 2.0)},
        "c": {"tiebreak": s(10.0, 7.5, 6.0), "unstable": s(10.0, 9.0, 6.0)},
    });
    let (code, report, calls) = gate(dir.path(), &scores, &[]);
    assert_eq!(code, exit_code::QUALITY_GATE_FAILED, "{report:#}");
    // Two stable scores: their mean.
    assert_eq!(
        (
            state(&report, 0),
            report["cells"][0]["quality"]["scores"]["canon"].as_f64()
        ),
        ("pass", Some(7.75))
    );
    // 6 vs 8 differ by more than 0.5: the third judge, once; 7.5 pairs with 8: the median.
    assert_eq!(
        (
            state(&report, 1),
            report["cells"][1]["quality"]["scores"]["canon"].as_f64()
        ),
        ("pass", Some(7.5))
    );
    // 3, 6, 9: no pair within 0.5 — unstable, fail closed.
    assert_eq!(state(&report, 2), "needs_recheck");
    assert_eq!(report["cells"][2]["quality"]["unstable"], json!(["canon"]));
    assert_eq!(state(&report, 3), "blocked");
    assert_eq!(state(&report, 4), "high_risk");
    assert!(
        report["cells"][4]["quality"]["risk_markers"]
            .as_array()
            .unwrap()
            .contains(&json!("hard_fact_conflict"))
    );
    // Below a critical line, no rewriter (gate has no agent): high risk, no rewrites.
    assert_eq!(
        (
            state(&report, 5),
            report["cells"][5]["quality"]["rewrite_count"].as_u64()
        ),
        ("high_risk", Some(0))
    );
    // Advisory dimensions never block.
    assert_eq!(state(&report, 6), "pass");
    assert!(
        report["cells"][6]["quality"]["risk_markers"][0]
            .as_str()
            .unwrap()
            .starts_with("advisory: style")
    );
    // The tiebreak judge was called exactly for the two disputed candidates, once each.
    let c_calls: Vec<&str> = calls
        .iter()
        .filter(|c| c["judge"] == "c")
        .map(|c| c["request"]["candidate"].as_str().unwrap())
        .collect();
    assert_eq!(c_calls, ["tiebreak", "unstable"]);
    // Double-blind: a randomized id, never the candidate's own; the second judge sees the
    // dimensions in reverse order.
    let first_a = calls.iter().find(|c| c["judge"] == "a").unwrap();
    let first_b = calls
        .iter()
        .find(|c| c["judge"] == "b" && c["request"]["candidate"] == first_a["request"]["candidate"])
        .unwrap();
    let dims = |c: &Value| {
        c["request"]["dimensions"]
            .as_array()
            .unwrap()
            .iter()
            .map(|d| d["id"].as_str().unwrap().to_string())
            .collect::<Vec<_>>()
    };
    assert_eq!(dims(first_a), ["safety", "canon", "style"]);
    assert_eq!(dims(first_b), ["style", "canon", "safety"]);
    let blind = first_a["request"]["candidate_id"].as_str().unwrap();
    assert!(
        blind.starts_with("c-") && !blind.contains("cand"),
        "{blind}"
    );
    assert_eq!(report["quality_budget"]["calls"], 16);
}

#[test]
fn the_same_seed_gives_the_same_run() {
    let dir = tempfile::tempdir().unwrap();
    policy(dir.path(), "");
    candidates(dir.path(), &["x", "y"]);
    let scores = json!({"a": {"*": {"safety": 10, "canon": 8, "style": 6}}, "b": {"*": {"safety": 10, "canon": 8, "style": 6}}});
    let (_, r1, _) = gate(dir.path(), &scores, &["--seed", "42"]);
    let (_, r2, _) = gate(dir.path(), &scores, &["--seed", "42"]);
    let (_, r3, _) = gate(dir.path(), &scores, &["--seed", "43"]);
    let ids = |r: &Value| {
        r["cells"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c["quality"]["blind_id"].as_str().unwrap().to_string())
            .collect::<Vec<_>>()
    };
    assert_eq!(ids(&r1), ids(&r2));
    assert_ne!(ids(&r1), ids(&r3));
}

#[test]
fn judge_errors_fail_closed_and_an_outage_exits_69() {
    let dir = tempfile::tempdir().unwrap();
    policy(dir.path(), "");
    candidates(dir.path(), &["garbage", "offscale", "crash"]);
    let ok = json!({"safety": 10, "canon": 8, "style": 6});
    let scores = json!({"a": {"garbage": "garbage", "offscale": "offscale", "crash": "fail"}, "b": {"*": ok}});
    let (code, report, _) = gate(dir.path(), &scores, &[]);
    assert_eq!(code, exit_code::QUALITY_GATE_FAILED);
    for i in 0..3 {
        assert_eq!(state(&report, i), "unavailable", "{:#}", report["cells"][i]);
    }
    let why = report["cells"][1]["quality"]["explanation"]
        .as_str()
        .unwrap();
    assert!(why.contains("7.3, not on the scale"), "{why}");
    // No judge reachable at all: nothing was judged — exit 69.
    let (code, report, _) = gate(dir.path(), &json!({}), &[]);
    assert_eq!(code, exit_code::UNAVAILABLE);
    assert_eq!(report["cells"][0]["verdict"], "error");
}

#[test]
fn budgets_are_reserved_up_front_and_never_exceeded() {
    let dir = tempfile::tempdir().unwrap();
    // 20 planned calls × $0.1 = $2 reserved against a $1 limit: refused, statically.
    std::fs::write(
        dir.path().join("fibon.yaml"),
        "quality: {policy: policy.yaml}\n",
    )
    .unwrap();
    policy(dir.path(), "");
    let text = std::fs::read_to_string(dir.path().join("policy.yaml"))
        .unwrap()
        .replace("limit_usd: 5", "limit_usd: 1");
    std::fs::write(dir.path().join("policy.yaml"), text).unwrap();
    candidates(dir.path(), &["x"]);
    let out = fibon(dir.path())
        .args(["gate", "--candidates", "candidates.jsonl"])
        .output()
        .unwrap();
    assert_eq!(code(&out), exit_code::INVALID_INPUT);
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("over limit_usd"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // max_calls: 4 calls allow two candidates; the third gets no judge.
    policy(dir.path(), "");
    let text = std::fs::read_to_string(dir.path().join("policy.yaml"))
        .unwrap()
        .replace(
            "planned_calls: 20, max_calls: 30",
            "planned_calls: 4, max_calls: 4",
        );
    std::fs::write(dir.path().join("policy.yaml"), text).unwrap();
    candidates(dir.path(), &["x", "y", "z"]);
    let ok = json!({"safety": 10, "canon": 8, "style": 6});
    let (_, report, calls) = gate(dir.path(), &json!({"a": {"*": ok}, "b": {"*": ok}}), &[]);
    assert_eq!(calls.len(), 4, "never more than max_calls");
    assert_eq!(
        (state(&report, 0), state(&report, 1), state(&report, 2)),
        ("pass", "pass", "unavailable")
    );
    assert!(
        report["cells"][2]["quality"]["explanation"]
            .as_str()
            .unwrap()
            .contains("max_calls")
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn openai_judges_retry_and_validate() {
    use wiremock::matchers::{header, method, path};
    use wiremock::{Mock, MockServer, ResponseTemplate};
    let server = MockServer::start().await;
    let reply = |scores: Value| {
        ResponseTemplate::new(200)
            .set_body_json(json!({"choices": [{"message": {"content": scores.to_string()}}]}))
    };
    let good = json!({"scores": {"safety": {"score": 10, "reason": "ok"}, "canon": {"score": 8, "reason": "ok"}, "style": {"score": 6, "reason": "ok"}}, "hard_fact_conflict": false});
    Mock::given(method("POST"))
        .and(path("/v1/chat/completions"))
        .respond_with(ResponseTemplate::new(429).insert_header("retry-after", "0"))
        .up_to_n_times(1)
        .mount(&server)
        .await;
    Mock::given(method("POST"))
        .and(path("/v1/chat/completions"))
        .and(header("authorization", "Bearer k1"))
        .respond_with(reply(good))
        .mount(&server)
        .await;
    let bad = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(reply(json!({"scores": {"safety": {"score": "ten"}}})))
        .mount(&bad)
        .await;
    let dir = tempfile::tempdir().unwrap();
    let write = |a: &str| {
        let p = format!(
            "policy: o\nversion: 1\ndimensions:\n  - {{id: safety, kind: hard_block, threshold: 9}}\n  - {{id: canon, kind: critical, threshold: 7}}\n  - {{id: style, kind: advisory}}\njudges:\n  - {{id: a, kind: openai, base_url: \"{a}/v1\", model: m, api_key_env: FIBON_TEST_KEY, cost_usd: 0.01}}\n  - {{id: b, kind: builtin, name: citation_support}}\ntiebreak: {{id: c, kind: builtin, name: fact_coverage}}\nbudget: {{planned_calls: 10, max_calls: 10, max_usd_per_call: 0.05, limit_usd: 1}}\n"
        );
        std::fs::write(dir.path().join("policy.yaml"), p).unwrap();
    };
    candidates(dir.path(), &["a plain answer"]);
    write(&server.uri());
    let path = dir.path().to_path_buf();
    let out = tokio::task::spawn_blocking(move || {
        fibon(&path)
            .env("FIBON_TEST_KEY", "k1")
            .args([
                "gate",
                "--candidates",
                "candidates.jsonl",
                "--policy",
                "policy.yaml",
                "--format",
                "json",
                "--report-dir",
                "out",
            ])
            .output()
            .unwrap()
    })
    .await
    .unwrap();
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(code(&out), exit_code::SUCCESS, "{report:#}");
    assert_eq!(state(&report, 0), "pass");
    assert_eq!(report["quality_budget"]["cost_usd"], 0.01);
    assert!(
        !String::from_utf8_lossy(&out.stdout).contains("k1"),
        "the key never reaches the report"
    );
    write(&bad.uri());
    let path = dir.path().to_path_buf();
    let out = tokio::task::spawn_blocking(move || {
        fibon(&path)
            .env("FIBON_TEST_KEY", "k1")
            .args([
                "gate",
                "--candidates",
                "candidates.jsonl",
                "--policy",
                "policy.yaml",
                "--format",
                "json",
                "--report-dir",
                "out",
            ])
            .output()
            .unwrap()
    })
    .await
    .unwrap();
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(state(&report, 0), "unavailable");
    assert!(
        report["cells"][0]["quality"]["explanation"]
            .as_str()
            .unwrap()
            .contains("does not match fibon.judge/v1")
    );
}

#[test]
fn run_applies_the_gate_to_answered_cells() {
    let dir = tempfile::tempdir().unwrap();
    let config = std::fs::read_to_string(root().join("fibon.yaml"))
        .unwrap()
        .replace(
            "contracts: [contracts]",
            &format!(
                "contracts: [{:?}]",
                root().join("contracts").display().to_string()
            ),
        )
        .replace(
            "scenarios: [scenarios]",
            &format!(
                "scenarios: [{:?}]",
                root().join("scenarios").display().to_string()
            ),
        );
    std::fs::write(
        dir.path().join("fibon.yaml"),
        format!(
            "{config}quality: {{policy: {:?}}}\n",
            root()
                .join("examples/quality/narrative-policy.yaml")
                .display()
                .to_string()
        ),
    )
    .unwrap();
    let out = fibon(dir.path())
        .args(["run", "--format", "json", "--report-dir", "out"])
        .output()
        .unwrap();
    let report: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|_| panic!("{}", String::from_utf8_lossy(&out.stderr)));
    let gated: Vec<(&str, &str)> = report["cells"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["quality"].is_object())
        .map(|c| {
            (
                c["id"].as_str().unwrap(),
                c["quality"]["state"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        gated.len(),
        6,
        "the six available-tools cells are gated: {gated:?}"
    );
    assert!(report["quality_budget"]["calls"].as_u64().unwrap() >= 12);
    assert_eq!(code(&out), report["exit_code"].as_i64().unwrap() as i32);
    for (id, state) in &gated {
        assert!(
            ["pass", "rewritten_pass", "high_risk"].contains(state),
            "{id}: {state}"
        );
    }
}

#[test]
fn critical_failures_are_rewritten_a_bounded_number_of_times() {
    for (improves, expected_state, expected_rewrites) in
        [(true, "rewritten_pass", 1), (false, "high_risk", 2)]
    {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("contracts")).unwrap();
        std::fs::create_dir_all(dir.path().join("scenarios")).unwrap();
        let better = if improves {
            "The answer is 42."
        } else {
            "Still 43%."
        };
        let script = format!(
            "import sys, json, urllib.request\nreq = json.load(sys.stdin)\nurllib.request.urlopen(urllib.request.Request(req['tools']['http_url'] + '/lookup', data=b'{{}}', method='POST')).read()\nprint(json.dumps({{'output': {better:?} if 'revise' in req else 'The answer is 43%.'}}))"
        );
        std::fs::write(
            dir.path().join("fibon.yaml"),
            format!("target: {{kind: command, command: [\"python3\", \"-c\", {}], timeout: 10s}}\nquality: {{policy: policy.yaml}}\nreport: {{dir: out}}\n", serde_json::to_string(&script).unwrap()),
        )
        .unwrap();
        std::fs::write(
            dir.path().join("contracts/lookup.yaml"),
            "skill: lookup\nmust_call_tools: [lookup]\n",
        )
        .unwrap();
        std::fs::write(dir.path().join("scenarios/s.yaml"), "id: s\nskill: lookup\ncomplexity: simple\ninput: what is it?\ntools:\n  lookup:\n    responses:\n      - text: \"the answer is 42\"\nfaults: []\n").unwrap();
        std::fs::write(
            dir.path().join("policy.yaml"),
            "policy: p\nversion: 1\ndimensions:\n  - {id: grounded, kind: critical, threshold: 8}\njudges:\n  - {id: a, kind: builtin, name: citation_support}\n  - {id: b, kind: builtin, name: citation_support}\ntiebreak: {id: c, kind: builtin, name: citation_support}\nrewrite: {max: 2}\nbudget: {planned_calls: 10, max_calls: 10, max_usd_per_call: 0, limit_usd: 0}\n",
        )
        .unwrap();
        // "43%" is a key fact no tool result supports: citation support 0, below the line.
        let out = fibon(dir.path())
            .args(["run", "--format", "json"])
            .output()
            .unwrap();
        let report: Value = serde_json::from_slice(&out.stdout)
            .unwrap_or_else(|_| panic!("{}", String::from_utf8_lossy(&out.stderr)));
        let q = &report["cells"][0]["quality"];
        assert_eq!(
            (q["state"].as_str(), q["rewrite_count"].as_u64()),
            (Some(expected_state), Some(expected_rewrites)),
            "{q:#}"
        );
        assert_eq!(
            q["rewrites"].as_array().unwrap().len() as u64,
            expected_rewrites,
            "the rewrite trail is kept"
        );
        let expected_exit = if improves {
            exit_code::SUCCESS
        } else {
            exit_code::QUALITY_GATE_FAILED
        };
        assert_eq!(code(&out), expected_exit, "{report:#}");
    }
}

/// An experiment: `n` samples over `works`, five classes; arm scores from `f(sample) ->
/// (A, C)` for fidelity, style, tension (B = A).
fn experiment(
    dir: &Path,
    n: usize,
    works: usize,
    f: impl Fn(usize) -> ([f64; 3], [f64; 3]),
    tweak: impl Fn(usize, &mut Value),
) -> std::path::PathBuf {
    let classes = ["dialogue", "action", "reveal", "transition", "climax"];
    let arm = |s: [f64; 3]| json!({"scores": {"entity_fidelity": s[0], "style_consistency": s[1], "narrative_tension": s[2]}});
    let samples: Vec<Value> = (0..n)
        .map(|i| {
            let (a, c) = f(i);
            let mut s = json!({"id": format!("s{i}"), "work": format!("w{}", i % works), "scenario_class": classes[i % 5], "new_character": i % 3 == 0, "arms": {"A": arm(a), "B": arm(a), "C": arm(c)}});
            tweak(i, &mut s);
            s
        })
        .collect();
    let path = dir.join("experiment.json");
    std::fs::write(
        &path,
        json!({"experiment": "replay", "scenario_classes": classes, "samples": samples})
            .to_string(),
    )
    .unwrap();
    path
}

fn run_experiment(dir: &Path, extra: &[&str]) -> (i32, Value) {
    let out = fibon(dir)
        .args([
            "gate",
            "--experiment",
            "experiment.json",
            "--format",
            "json",
            "--report-dir",
            "out",
        ])
        .args(extra)
        .output()
        .unwrap();
    let report: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|_| panic!("{}", String::from_utf8_lossy(&out.stderr)));
    (code(&out), report)
}

#[test]
fn gate_a_and_gate_b_follow_their_ordered_rules() {
    let dir = tempfile::tempdir().unwrap();
    let states = |r: &Value| {
        (
            r["gate_a"]["state"].as_str().unwrap().to_string(),
            r["gate_b"]["state"].as_str().unwrap().to_string(),
            r["gate_b"]["rule"].as_u64().unwrap(),
        )
    };
    // A real gain in fidelity, nothing lost: passed.
    experiment(
        dir.path(),
        12,
        2,
        |_| ([6.0, 7.0, 7.0], [6.5, 7.0, 7.0]),
        |_, _| {},
    );
    let (code, r) = run_experiment(dir.path(), &[]);
    assert_eq!(
        (code, states(&r)),
        (exit_code::SUCCESS, ("passed".into(), "passed".into(), 5)),
        "{r:#}"
    );
    // No gain.
    experiment(
        dir.path(),
        12,
        2,
        |_| ([6.0, 7.0, 7.0], [6.0, 7.0, 7.0]),
        |_, _| {},
    );
    assert_eq!(
        states(&run_experiment(dir.path(), &[]).1),
        ("passed".into(), "no_gain".into(), 6)
    );
    // A gain, but style regresses among new characters only: failed.
    experiment(
        dir.path(),
        12,
        2,
        |i| {
            (
                [6.0, 7.0, 7.0],
                [7.0, if i % 3 == 0 { 6.5 } else { 7.5 }, 7.0],
            )
        },
        |_, _| {},
    );
    let (_, r) = run_experiment(dir.path(), &[]);
    assert_eq!(states(&r), ("passed".into(), "failed".into(), 4));
    assert!(
        r["gate_b"]["reason"]
            .as_str()
            .unwrap()
            .contains("new-character stratum"),
        "{r:#}"
    );
    // One work only: Gate A passes the chain, Gate B lacks evidence.
    experiment(
        dir.path(),
        12,
        1,
        |_| ([6.0, 7.0, 7.0], [7.0, 7.0, 7.0]),
        |_, _| {},
    );
    let (_, r) = run_experiment(dir.path(), &[]);
    assert_eq!(
        states(&r),
        ("passed".into(), "insufficient_evidence".into(), 3)
    );
    assert!(
        r["confounders"]
            .as_array()
            .unwrap()
            .iter()
            .any(|c| c.as_str().unwrap().starts_with("a single work"))
    );
    // Too few samples: Gate A already lacks evidence.
    experiment(
        dir.path(),
        4,
        2,
        |_| ([6.0, 7.0, 7.0], [7.0, 7.0, 7.0]),
        |_, _| {},
    );
    assert_eq!(
        states(&run_experiment(dir.path(), &[]).1),
        (
            "insufficient_evidence".into(),
            "insufficient_evidence".into(),
            2
        )
    );
    // Detector residue in arm C: Gate A fails at rule 3, and so does B.
    experiment(
        dir.path(),
        12,
        2,
        |_| ([6.0, 7.0, 7.0], [7.0, 7.0, 7.0]),
        |i, s| {
            if i == 5 {
                s["arms"]["C"]["detector_high_severity"] = json!(1);
            }
        },
    );
    let (_, r) = run_experiment(dir.path(), &[]);
    assert_eq!(
        (r["gate_a"]["state"].as_str(), r["gate_a"]["rule"].as_u64()),
        (Some("failed"), Some(3))
    );
    // An anomaly (a future-leak audit finding) fails both at rule 1, and is a confounder.
    experiment(
        dir.path(),
        12,
        2,
        |_| ([6.0, 7.0, 7.0], [7.0, 7.0, 7.0]),
        |i, s| {
            if i == 2 {
                s["anomalies"] = json!(["future leak in the outline"]);
            }
        },
    );
    let (code, r) = run_experiment(dir.path(), &[]);
    assert_eq!(
        (code, states(&r)),
        (
            exit_code::QUALITY_GATE_FAILED,
            ("failed".into(), "failed".into(), 1)
        )
    );
    assert!(
        r["confounders"]
            .as_array()
            .unwrap()
            .contains(&json!("future-leak findings: 1"))
    );
}

#[test]
fn experiment_arms_are_judged_blind() {
    let dir = tempfile::tempdir().unwrap();
    policy(dir.path(), "");
    experiment(
        dir.path(),
        5,
        1,
        |_| ([0.0; 3], [0.0; 3]),
        |i, s| {
            for arm in ["A", "B", "C"] {
                s["arms"][arm] = json!({"text": format!("sample {i} arm {arm} text")});
            }
        },
    );
    let ok = json!({"safety": 10, "canon": 8, "style": 6});
    let log = dir.path().join("judge.log");
    let out = fibon(dir.path())
        .env(
            "FIBON_TEST_SCORES",
            json!({"a": {"*": ok}, "b": {"*": ok}}).to_string(),
        )
        .env("FIBON_TEST_LOG", &log)
        .args([
            "gate",
            "--experiment",
            "experiment.json",
            "--policy",
            "policy.yaml",
            "--format",
            "json",
            "--report-dir",
            "out",
        ])
        .output()
        .unwrap();
    let report: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|_| panic!("{}", String::from_utf8_lossy(&out.stderr)));
    assert_eq!(report["scores"]["s0"]["C"]["canon"], 8.0, "{report:#}");
    let calls: Vec<Value> = std::fs::read_to_string(&log)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(calls.len(), 5 * 3 * 2);
    for c in &calls {
        let id = c["request"]["candidate_id"].as_str().unwrap();
        assert!(
            id.starts_with("c-") && !id.contains("/A") && !id.contains("/C"),
            "blind ids only: {id}"
        );
    }
}

/// `gate` reads its inputs whole, so a device or a folder is refused up front (it once
/// read /dev/zero until the kernel killed it).
#[test]
fn unreadable_inputs_are_usage_errors_not_a_hang() {
    let policy = root().join("examples/quality/narrative-policy.yaml");
    for (flag, path, why) in [
        ("--candidates", "/dev/zero", "it is not a regular file"),
        ("--candidates", "/tmp", "it is a folder"),
        ("--experiment", "/dev/zero", "it is not a regular file"),
    ] {
        let out = fibon(&root())
            .args(["gate", flag, path, "--policy"])
            .arg(&policy)
            .timeout(std::time::Duration::from_secs(60))
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(code(&out), exit_code::USAGE, "{flag} {path}: {stderr}");
        assert!(
            stderr.contains(&format!("cannot read {path}: {why}")),
            "{stderr}"
        );
    }
}

/// `gate --experiment` with what it cannot use: exit 65, before anything is judged, with
/// the file, the line and what is wrong.
fn refused_experiment(dir: &Path, name: &str, text: &str, extra: &[&str]) -> String {
    std::fs::write(dir.join(name), text).unwrap();
    let out = fibon(dir)
        .args(["gate", "--experiment", name, "--report-dir", "out"])
        .args(extra)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(code(&out), exit_code::INVALID_INPUT, "{text}\n{stderr}");
    assert!(!dir.join("out/experiment.json").exists(), "{stderr}");
    stderr
}

/// The 1-based line of the first occurrence of `needle` in `text`.
fn line_of(text: &str, needle: &str) -> usize {
    text[..text
        .find(needle)
        .unwrap_or_else(|| panic!("{needle} in {text}"))]
        .matches('\n')
        .count()
        + 1
}

#[test]
fn experiments_with_scores_off_the_scale_or_duplicate_ids_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    // A valid experiment, pretty-printed so every value has its own line.
    experiment(
        dir.path(),
        12,
        2,
        |_| ([6.0, 7.0, 7.0], [6.5, 7.0, 7.0]),
        |_, _| {},
    );
    let valid: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("experiment.json")).unwrap())
            .unwrap();
    let pretty = |v: &Value| serde_json::to_string_pretty(v).unwrap();
    let with = |f: &dyn Fn(&mut Value)| {
        let mut v = valid.clone();
        f(&mut v);
        pretty(&v)
    };
    let _ = std::fs::remove_file(dir.path().join("experiment.json"));

    // Scores outside the default 0–10 scale, either way.
    for score in [1e308, -1e308, 10.5] {
        let text =
            with(&|v| v["samples"][3]["arms"]["C"]["scores"]["entity_fidelity"] = json!(score));
        let stderr = refused_experiment(dir.path(), "exp.json", &text, &[]);
        let line = line_of(&text, &serde_json::to_string(&json!(score)).unwrap());
        assert!(
            stderr.contains(&format!("exp.json:{line}:")),
            "{score}: names the line {line}: {stderr}"
        );
        assert!(
            stderr.contains("entity_fidelity") && stderr.contains("outside the scale 0..10"),
            "{stderr}"
        );
    }
    // A number JSON cannot hold.
    let text = with(&|_| {}).replacen("6.5", "1e999", 1);
    let stderr = refused_experiment(dir.path(), "exp.json", &text, &[]);
    assert!(
        stderr.contains(&format!("exp.json:{}:", line_of(&text, "1e999"))),
        "{stderr}"
    );
    // NaN and infinity, which YAML can write: a score, and a coverage.
    let yaml = "experiment: nan\nscenario_classes: [dialogue]\nsamples:\n  - id: s0\n    work: w0\n    scenario_class: dialogue\n    arms:\n      A: {scores: {entity_fidelity: 6}}\n      B: {scores: {entity_fidelity: 6}}\n      C:\n        scores: {entity_fidelity: .nan}\n        hard_constraint_coverage: .inf\n";
    let stderr = refused_experiment(dir.path(), "exp.yaml", yaml, &[]);
    assert!(stderr.contains("exp.yaml:11:"), "{stderr}");
    assert!(stderr.contains("exp.yaml:12:"), "{stderr}");
    assert!(stderr.contains("hard_constraint_coverage"), "{stderr}");
    // With --policy, its scale is the one that counts.
    policy(dir.path(), "scale: {min: 0, max: 5, step: 0.5}\n");
    std::fs::write(
        dir.path().join("policy.yaml"),
        std::fs::read_to_string(dir.path().join("policy.yaml"))
            .unwrap()
            .replace("threshold: 9", "threshold: 5")
            .replace("threshold: 7", "threshold: 4"),
    )
    .unwrap();
    let text = with(&|_| {});
    let stderr = refused_experiment(dir.path(), "exp.json", &text, &["--policy", "policy.yaml"]);
    assert!(stderr.contains("outside the scale 0..5"), "{stderr}");

    // The same sample id twice: the second is named, with the line of the first.
    let text = with(&|v| v["samples"][7]["id"] = json!("s2"));
    let stderr = refused_experiment(dir.path(), "exp.json", &text, &[]);
    let first = line_of(&text, "\"s2\"");
    let at = text.find("\"s2\"").unwrap() + 1;
    let again = first + line_of(&text[at..], "\"s2\"") - 1;
    assert!(
        stderr.contains(&format!("exp.json:{again}:"))
            && stderr.contains("sample id `s2`")
            && stderr.contains(&format!("line {first}")),
        "{stderr}"
    );
    // An arm that is not A, B or C.
    let text = with(&|v| v["samples"][0]["arms"]["D"] = json!({"scores": {}}));
    let stderr = refused_experiment(dir.path(), "exp.json", &text, &[]);
    assert!(stderr.contains("arm `D`"), "{stderr}");
    // A misspelt dimension would leave the real one unscored, read as "no gain".
    let text = with(&|v| {
        let scores = v["samples"][5]["arms"]["B"]["scores"]
            .as_object_mut()
            .unwrap();
        let score = scores.remove("entity_fidelity").unwrap();
        scores.insert("entity_fidelty".into(), score);
    });
    let stderr = refused_experiment(dir.path(), "exp.json", &text, &[]);
    assert!(
        stderr.contains(&format!("exp.json:{}:", line_of(&text, "entity_fidelty")))
            && stderr.contains("`entity_fidelty` is not a dimension of this experiment")
            && stderr.contains("did you mean `entity_fidelity`?"),
        "{stderr}"
    );
}

#[test]
fn candidates_with_the_same_id_twice_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    policy(dir.path(), "");
    std::fs::write(
        dir.path().join("candidates.jsonl"),
        [
            json!({"id": "one", "output": "x"}),
            json!({"id": "two", "output": "y"}),
            json!({"id": "one", "output": "z"}),
        ]
        .map(|c| c.to_string())
        .join("\n"),
    )
    .unwrap();
    let log = dir.path().join("judge.log");
    let out = fibon(dir.path())
        .env("FIBON_TEST_LOG", &log)
        .args([
            "gate",
            "--candidates",
            "candidates.jsonl",
            "--policy",
            "policy.yaml",
            "--report-dir",
            "out",
        ])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(code(&out), exit_code::INVALID_INPUT, "{stderr}");
    assert!(
        stderr.contains("candidates.jsonl:3:")
            && stderr.contains("candidate id `one`")
            && stderr.contains("line 1"),
        "{stderr}"
    );
    assert!(!log.exists(), "nothing was judged");
    assert!(!dir.path().join("out/report.json").exists());
}

/// What people read names states as the reports do (`pass`, `blocked`, `no_gain`), never
/// as Rust spells its enums (`Pass`, `NoGain`).
#[test]
fn human_output_names_states_as_the_reports_do() {
    let dir = tempfile::tempdir().unwrap();
    let out = fibon(&root())
        .args([
            "--color",
            "never",
            "gate",
            "--candidates",
            "examples/quality/candidates.jsonl",
            "--policy",
            "examples/quality/narrative-policy.yaml",
            "--report-dir",
        ])
        .arg(dir.path())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(code(&out), exit_code::QUALITY_GATE_FAILED, "{stderr}");
    assert!(
        stderr.contains("cand-grounded ┆ pass ") && stderr.contains("cand-stale    ┆ blocked "),
        "{stderr}"
    );

    experiment(
        dir.path(),
        12,
        2,
        |_| ([6.0, 7.0, 7.0], [6.0, 7.0, 7.0]),
        |_, _| {},
    );
    let out = fibon(dir.path())
        .args([
            "gate",
            "--experiment",
            "experiment.json",
            "--report-dir",
            "out",
        ])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("Gate A: passed (rule 4)") && stderr.contains("Gate B: no_gain (rule 6)"),
        "{stderr}"
    );
    // Too few samples, one class uncovered: the class by name.
    experiment(
        dir.path(),
        4,
        2,
        |_| ([6.0, 7.0, 7.0], [7.0, 7.0, 7.0]),
        |_, _| {},
    );
    let (_, r) = run_experiment(dir.path(), &[]);
    assert_eq!(
        r["gate_a"]["reason"],
        "4 valid samples (need 5); classes not covered: climax"
    );
}
