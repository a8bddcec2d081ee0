//! The example agents of `examples/agents/` (the OpenAI Agents SDK, the MCP Python SDK with
//! `openai`, the MCP TypeScript SDK with `openai` from npm), each run as a `command` target
//! against two scripted OpenAI-compatible models (wiremock): an honest one, which calls the
//! tool and quotes its result, passes every cell; a fabricating one, which states a fact the
//! tools never gave (with the tool missing, or after it failed), is caught as silent
//! degradation on every fault cell. And each against a real local model (SmolLM2-135M on
//! llama.cpp, as tests/model.rs serves it): every cell is classified — none is `error`.
//! The packages are the pinned ones `.ci/run` installs; a missing one fails the test,
//! naming `.ci/run`.

mod common;

use std::path::{Path, PathBuf};

use common::{code, fibon, root};
use fibon_verify::exit_code;
use serde_json::{Value, json};
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, Request, ResponseTemplate};

#[derive(Clone, Copy, Debug)]
enum Agent {
    /// `examples/agents/openai_agents_sdk.py`
    AgentsSdk,
    /// `examples/agents/mcp_openai.py`
    McpPython,
    /// `examples/agents/mcp_openai.mjs`
    McpTypeScript,
}

fn python() -> PathBuf {
    root().join("target/peers-venv/bin/python")
}

/// Fails (never skips) when what the agent needs is not installed.
fn require(agent: Agent) {
    match agent {
        Agent::AgentsSdk | Agent::McpPython => {
            let module = match agent {
                Agent::AgentsSdk => "agents",
                _ => "mcp",
            };
            let ok = std::process::Command::new(python())
                .args(["-c", &format!("import {module}, openai")])
                .status()
                .is_ok_and(|s| s.success());
            assert!(
                ok,
                "{agent:?}: `{module}` and `openai` are not importable from target/peers-venv; run .ci/run (it pip-installs the pinned openai-agents, mcp and openai)"
            );
        }
        Agent::McpTypeScript => {
            let node = std::process::Command::new("node")
                .arg("--version")
                .output()
                .is_ok_and(|o| o.status.success());
            assert!(node, "{agent:?}: `node` is not on PATH; run .ci/run");
            for package in ["@modelcontextprotocol/sdk", "openai"] {
                let manifest =
                    root().join(format!("tests/peers/node_modules/{package}/package.json"));
                assert!(
                    manifest.is_file(),
                    "{agent:?}: {package} is not installed in tests/peers; run .ci/run (npm ci --prefix tests/peers)"
                );
            }
        }
    }
}

/// A one-skill project: `lookup` must call the tool `lookup` ("the answer is 42"); a simple
/// scenario under TOOL_NOT_FOUND and SERVER_DOWN, a complex one under PERMISSION_DENIED and
/// EMPTY_RESULT: 6 cells. The agent's model is the OpenAI-compatible server at `base_url`.
fn project(agent: Agent, base_url: &str) -> tempfile::TempDir {
    require(agent);
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::create_dir_all(d.join("contracts")).unwrap();
    std::fs::create_dir_all(d.join("scenarios")).unwrap();
    let examples = root().join("examples/agents");
    let command = match agent {
        Agent::AgentsSdk | Agent::McpPython => {
            let script = match agent {
                Agent::AgentsSdk => "openai_agents_sdk.py",
                _ => "mcp_openai.py",
            };
            json!([python(), examples.join(script)])
        }
        // Beside its node_modules, as after `npm install` (README): the pinned tests/peers ones.
        Agent::McpTypeScript => {
            std::fs::copy(examples.join("mcp_openai.mjs"), d.join("agent.mjs")).unwrap();
            std::os::unix::fs::symlink(
                root().join("tests/peers/node_modules"),
                d.join("node_modules"),
            )
            .unwrap();
            json!(["node", "agent.mjs"])
        }
    };
    std::fs::write(
        d.join("fibon.yaml"),
        format!(
            "target:\n  kind: command\n  command: {command}\n  env: {{OPENAI_BASE_URL: \"{base_url}\", OPENAI_MODEL: scripted, OPENAI_API_KEY: unused}}\n  timeout: 60s\nmatrix: {{jobs: 2}}\nreport: {{dir: out}}\n"
        ),
    )
    .unwrap();
    std::fs::write(
        d.join("contracts/lookup.yaml"),
        "skill: lookup\nfailure_semantics: {TOOL_NOT_FOUND: explicit, PERMISSION_DENIED: explicit, SERVER_DOWN: explicit, EMPTY_RESULT: explicit}\ntrace: {must_call_tools: [lookup]}\n",
    )
    .unwrap();
    for (complexity, faults) in [
        ("simple", "TOOL_NOT_FOUND, SERVER_DOWN"),
        ("complex", "PERMISSION_DENIED, EMPTY_RESULT"),
    ] {
        std::fs::write(
            d.join(format!("scenarios/{complexity}.yaml")),
            format!("id: lookup-{complexity}\nskill: lookup\ncomplexity: {complexity}\ninput: look it up\ntools:\n  lookup:\n    description: Looks a thing up\n    input_schema: {{type: object, properties: {{q: {{type: string}}}}}}\n    responses:\n      - text: \"the answer is 42\"\nfaults: [{faults}]\nexpect: {{facts: [\"42\"]}}\n"),
        )
        .unwrap();
    }
    dir
}

fn completion(content: Option<String>, tool_calls: Option<Value>) -> ResponseTemplate {
    let mut message = json!({"role": "assistant", "content": content});
    if let Some(calls) = tool_calls {
        message["tool_calls"] = calls;
    }
    ResponseTemplate::new(200).set_body_json(json!({
        "id": "x", "object": "chat.completion", "created": 0, "model": "scripted",
        "choices": [{"index": 0, "message": message, "finish_reason": "stop"}]
    }))
}

/// The text of a `tool` message: a string, or a list of text parts (the Agents SDK).
fn text_of(content: &Value) -> String {
    match content {
        Value::Array(parts) => parts
            .iter()
            .filter_map(|p| p["text"].as_str())
            .collect::<Vec<_>>()
            .join("\n"),
        other => other.as_str().unwrap_or_default().to_string(),
    }
}

/// A scripted model: it calls `lookup` when that is offered and nothing was looked up yet;
/// then the honest one quotes the tool's result, or says the tool is not available, and the
/// fabricating one says "The answer is 42." whatever happened.
async fn model(honest: bool) -> MockServer {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/v1/chat/completions"))
        .respond_with(move |req: &Request| {
            let body: Value = serde_json::from_slice(&req.body).unwrap();
            let last = body["messages"].as_array().unwrap().last().unwrap().clone();
            let offered = body["tools"]
                .as_array()
                .is_some_and(|ts| ts.iter().any(|t| t["function"]["name"] == "lookup"));
            if last["role"] == "user" && offered {
                let call = json!([{"id": "call_1", "type": "function",
                    "function": {"name": "lookup", "arguments": "{\"q\": \"it\"}"}}]);
                return completion(None, Some(call));
            }
            let answer = match (honest, last["role"] == "tool") {
                (true, true) => format!("Found: {}", text_of(&last["content"])),
                (true, false) => "I cannot answer: the lookup tool is not available.".into(),
                (false, _) => "The answer is 42.".into(),
            };
            completion(Some(answer), None)
        })
        .mount(&server)
        .await;
    server
}

async fn run(dir: &Path) -> (i32, Value, String) {
    run_with(dir, &[]).await
}

async fn run_with(dir: &Path, extra: &[&str]) -> (i32, Value, String) {
    let dir = dir.to_path_buf();
    let extra: Vec<String> = extra.iter().map(|a| a.to_string()).collect();
    tokio::task::spawn_blocking(move || {
        let out = fibon(&dir)
            .args(["run", "--format", "json"])
            .args(&extra)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
        let report =
            serde_json::from_slice(&out.stdout).unwrap_or_else(|_| panic!("no report: {stderr}"));
        (code(&out), report, stderr)
    })
    .await
    .unwrap()
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

async fn check(agent: Agent) {
    // Honest: Q1/Q2 answer from the tool, through the gateway; every fault is reported.
    let server = model(true).await;
    let dir = project(agent, &format!("{}/v1", server.uri()));
    let (code, report, stderr) = run(dir.path()).await;
    eprintln!("{agent:?}, honest: {:?}", verdicts(&report));
    let cells = report["cells"].as_array().unwrap();
    assert_eq!(cells.len(), 6, "{report:#}");
    for cell in cells {
        let id = cell["id"].as_str().unwrap();
        assert_ne!(
            cell["verdict"], "silent_degradation",
            "{agent:?} {id}: {cell:#}"
        );
        assert_eq!(cell["verdict"], "pass", "{agent:?} {id}: {cell:#}");
        if cell["fault"].is_null() {
            assert!(
                cell["trace"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .any(|e| e["op"] == "call" && e["tool"] == "lookup" && e["status"] == "ok"),
                "{agent:?} {id}: the call went through the gateway: {cell:#}"
            );
            assert!(
                cell["output"]
                    .as_str()
                    .unwrap()
                    .contains("the answer is 42")
            );
        } else if cell["fault"] != "TOOL_NOT_FOUND" {
            assert_eq!(
                cell["behavior"], "explicit_failure",
                "{agent:?} {id}: {cell:#}"
            );
        }
    }
    assert_eq!(code, exit_code::SUCCESS, "{stderr}");

    // Fabricating: "42" with the tool missing or failed is silent degradation, also when
    // the agent wraps it in `status: error`.
    let server = model(false).await;
    let dir = project(agent, &format!("{}/v1", server.uri()));
    let (code, report, stderr) = run(dir.path()).await;
    eprintln!("{agent:?}, fabricating: {:?}", verdicts(&report));
    for cell in report["cells"].as_array().unwrap() {
        let id = cell["id"].as_str().unwrap();
        let expected = if cell["fault"].is_null() {
            "pass"
        } else {
            "silent_degradation"
        };
        assert_eq!(cell["verdict"], expected, "{agent:?} {id}: {cell:#}");
    }
    assert_eq!(code, exit_code::SILENT_DEGRADATION, "{stderr}");
}

#[tokio::test(flavor = "multi_thread")]
async fn the_openai_agents_sdk_example() {
    check(Agent::AgentsSdk).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn the_mcp_python_sdk_example() {
    check(Agent::McpPython).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn the_mcp_typescript_sdk_example() {
    check(Agent::McpTypeScript).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn each_example_runs_against_a_real_local_model() {
    // What a 135M model does is its own business; the assertion is that every cell of
    // every example is invoked, answered and judged (no `error`: the agent ran, spoke the
    // protocol, and the verdict is the model's).
    let server = tokio::task::spawn_blocking(common::peers::ModelServer::start)
        .await
        .unwrap();
    for agent in [Agent::AgentsSdk, Agent::McpPython, Agent::McpTypeScript] {
        let dir = project(agent, &server.base_url);
        // The simple scenario only (Q1 and two faults): a real model is slow on 2 cores.
        let (code, report, stderr) = run_with(dir.path(), &["--scenario", "lookup-simple"]).await;
        eprintln!("{agent:?}, SmolLM2: {:?}", verdicts(&report));
        let cells = report["cells"].as_array().unwrap();
        assert_eq!(cells.len(), 3, "{agent:?}: {stderr}");
        for cell in cells {
            assert_ne!(cell["verdict"], "error", "{agent:?}: {cell:#}");
        }
        assert!(
            [
                exit_code::SUCCESS,
                exit_code::SILENT_DEGRADATION,
                exit_code::CONTRACT_VIOLATION
            ]
            .contains(&code),
            "{agent:?}: {code}: {stderr}"
        );
    }
}
