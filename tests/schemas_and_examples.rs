//! The committed `schemas/*.json` match the code, and every shipped example — contracts,
//! scenarios, `fibon.yaml`, the valid fixtures — validates against them and loads clean.

mod common;

use std::path::{Path, PathBuf};

use common::root;
use fibon_verify::project;
use fibon_verify::schema::FileKind;

fn committed(kind: FileKind) -> serde_json::Value {
    let path = root().join(format!("schemas/{}.schema.json", kind.name()));
    serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap()
}

#[test]
fn committed_schemas_match_the_code() {
    for kind in FileKind::ALL {
        assert!(
            committed(kind) == fibon_verify::project::schema_of(kind).value,
            "schemas/{0}.schema.json is stale: run `cargo run -- schema {0} > schemas/{0}.schema.json`",
            kind.name()
        );
    }
}

fn files(dir: &Path, exts: &[&str]) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            if path
                .file_name()
                .is_some_and(|n| n != "schema" && n != "fixtures")
            {
                out.extend(files(&path, exts));
            }
        } else if path
            .extension()
            .and_then(|e| e.to_str())
            .is_some_and(|e| exts.contains(&e))
        {
            out.push(path);
        }
    }
    out.sort();
    out
}

fn value_of(path: &Path) -> serde_json::Value {
    let text = std::fs::read_to_string(path).unwrap();
    if path.extension().is_some_and(|e| e == "json") {
        serde_json::from_str(&text).unwrap()
    } else {
        serde_yaml::from_str(&text).unwrap()
    }
}

#[test]
fn shipped_examples_validate_against_the_committed_schemas() {
    let mut checked = 0;
    let sets = [
        (
            FileKind::Contract,
            files(&root().join("contracts"), &["yaml", "yml", "json"]),
        ),
        (
            FileKind::Scenario,
            files(&root().join("scenarios"), &["yaml", "yml"]),
        ),
        (
            FileKind::Config,
            vec![
                root().join("fibon.yaml"),
                root().join("fibon.naive.yaml"),
                root().join("fibon.smollm2.yaml"),
            ],
        ),
        (
            FileKind::Policy,
            vec![root().join("examples/quality/narrative-policy.yaml")],
        ),
    ];
    for (kind, paths) in sets {
        let validator = jsonschema::validator_for(&committed(kind)).unwrap();
        assert!(!paths.is_empty());
        for path in paths {
            let errors: Vec<String> = validator
                .iter_errors(&value_of(&path))
                .map(|e| e.to_string())
                .collect();
            assert!(errors.is_empty(), "{}: {errors:?}", path.display());
            checked += 1;
        }
    }
    assert_eq!(
        checked,
        3 + 6 + 3 + 1,
        "three skills, two scenarios each, three configs, one policy"
    );
}

#[test]
fn every_shipped_example_loads_into_the_model() {
    let loaded = project::load_config(&root().join("fibon.yaml"));
    assert!(loaded.diagnostics.is_empty(), "{:#?}", loaded.diagnostics);
    let p = &loaded.project;
    let skills: Vec<&str> = p.contracts.iter().map(|c| c.skill.as_str()).collect();
    assert_eq!(
        skills,
        ["contract_review", "fetch_anthropic_models", "search_docs"]
    );
    assert_eq!(p.scenarios.len(), 6);

    let search = &p.contracts[2];
    assert_eq!(search.version.as_deref(), Some("2.1.0"));
    assert!(
        search
            .preconditions
            .min_plugin_version
            .as_ref()
            .unwrap()
            .matches(&semver::Version::new(1, 5, 0))
    );
    assert_eq!(
        search.preconditions.tools,
        ["search_docs"],
        "defaults to must_call_tools"
    );
    assert_eq!(search.io.output_assertions.len(), 2);
    assert_eq!(
        search.io.input_schema.as_ref().unwrap()["required"],
        serde_json::json!(["query"])
    );
    assert_eq!(
        search.degradation.message_template.as_deref(),
        Some("检索工具当前不可用，无法给出有依据的回答。")
    );

    let fetch = &p.contracts[1];
    assert_eq!(
        fetch.trace.must_call_tools,
        ["read_page"],
        "rules under `contracts:`"
    );
    assert_eq!(fetch.trace.url_whitelist, ["https://docs.anthropic.com"]);
    assert!(fetch.trace.strict_citation_required);
    assert_eq!(fetch.failure_semantics.len(), 4, "the documented defaults");
    assert!(
        fetch
            .failure_semantics
            .values()
            .all(|s| *s == fibon_verify::contract::Semantics::Explicit)
    );

    let review = &p.contracts[0];
    assert_eq!(review.risk_level, fibon_verify::contract::RiskLevel::Medium);
    assert_eq!(
        review.trace.must_call_tools,
        ["read_pdf", "summarize_text"],
        "rules under `trace:`"
    );

    let latest = p
        .scenarios
        .iter()
        .find(|s| {
            s.skill == "fetch_anthropic_models"
                && s.complexity == fibon_verify::scenario::Complexity::Simple
        })
        .unwrap();
    assert_eq!(
        latest.remove,
        ["read_page"],
        "defaults to the contract's must_call_tools"
    );
    assert_eq!(
        latest.faults.len(),
        4,
        "defaults to the contract's failure_semantics"
    );
    let read_page = &latest.tools["read_page"];
    let official = read_page
        .respond(
            &serde_json::json!({"url": "https://docs.anthropic.com/en/docs/about-claude/models"}),
        )
        .unwrap();
    assert!(
        matches!(official, fibon_verify::scenario::Body::Text(t) if t.contains("claude-sonnet-4-6"))
    );
    assert!(
        read_page
            .respond(&serde_json::json!({"url": "https://example.org"}))
            .is_some(),
        "catch-all"
    );
}

/// The shipped History (used by the example nightly workflow) is what a healthy agent
/// records: it audits clean. Its answers are JSON objects stored as strings, as many
/// recorders store them — their keys are not claims. Read with stdout already closed, as
/// `| head` leaves it: the exit code is the audit's, not a panic's.
#[test]
fn the_shipped_history_audits_clean() {
    let dir = tempfile::tempdir().unwrap();
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_fibon-verify"))
        .current_dir(root())
        .args([
            "audit",
            "--history",
            "examples/history/recorded.jsonl",
            "--format",
            "json",
        ])
        .arg("--report-dir")
        .arg(dir.path())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(stderr.contains("24 conversations: 24 pass,"), "{stderr}");
}

fn agent_schema(name: &str) -> serde_json::Value {
    let path = root().join(format!("schemas/agent-{name}.schema.json"));
    serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap()
}

/// The JSON blocks of docs/agent-protocol.md.
fn protocol_doc_examples() -> Vec<serde_json::Value> {
    let doc = std::fs::read_to_string(root().join("docs/agent-protocol.md")).unwrap();
    doc.split("```json\n")
        .skip(1)
        .filter_map(|block| block.split("\n```").next())
        .map(|json| serde_json::from_str(json).unwrap_or_else(|e| panic!("{e}: {json}")))
        .collect()
}

#[test]
fn the_agent_protocol_schemas_describe_what_the_code_sends_and_the_docs_show() {
    let request = agent_schema("request");
    let response = agent_schema("response");
    for schema in [&request, &response] {
        jsonschema::meta::validate(schema).unwrap();
    }
    let request = jsonschema::validator_for(&request).unwrap();
    let response = jsonschema::validator_for(&response).unwrap();
    // What the code sends, with and without a rewrite request.
    let mut sent = fibon_verify::target::Request {
        run_id: "run-1".into(),
        skill: "weather".into(),
        input: "Which is warmer?".into(),
        tools_url: "http://127.0.0.1:9/s/a/tools".into(),
        mcp_url: "http://127.0.0.1:9/s/a/mcp".into(),
        revise: None,
        intervention: None,
    };
    for revise in [None, Some(("before".to_string(), "cite it".to_string()))] {
        sent.revise = revise;
        let wire = sent.to_json();
        let errors: Vec<String> = request.iter_errors(&wire).map(|e| e.to_string()).collect();
        assert!(errors.is_empty(), "{wire}: {errors:?}");
    }
    // A field the schema does not know is drift: the code would send something undocumented.
    let mut extra = sent.to_json();
    extra["quadrant"] = "Q3".into();
    assert!(!request.is_valid(&extra));
    // Every example in docs/agent-protocol.md is a valid request or response.
    let examples = protocol_doc_examples();
    assert!(examples.len() >= 3, "{}", examples.len());
    for example in &examples {
        let validator = if example.get("protocol").is_some() {
            &request
        } else {
            &response
        };
        let errors: Vec<String> = validator
            .iter_errors(example)
            .map(|e| e.to_string())
            .collect();
        assert!(errors.is_empty(), "{example}: {errors:?}");
    }
    // `fibon-verify schema agent-request|agent-response` prints the committed files.
    for name in ["request", "response"] {
        let out = common::fibon(&root())
            .args(["schema", &format!("agent-{name}")])
            .output()
            .unwrap();
        let printed: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(printed, agent_schema(name), "agent-{name}");
    }
    // A response with none of the protocol's keys is output, not a protocol response.
    assert!(!response.is_valid(&serde_json::json!({"answer": "42"})));
    assert!(response.is_valid(&serde_json::json!({"status": "ERROR", "error": "down"})));
}
