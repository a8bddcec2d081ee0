//! The `openai` target against a scripted OpenAI-compatible endpoint (wiremock): the
//! tool-calling loop through the gateway, the session's current tools offered (a removed
//! tool is absent), `tool_calls` and the legacy `function_call`, content beside tool calls,
//! malformed arguments as a finding (also when the model never answers), 429 with
//! Retry-After and 5xx retried, an endless tool-call loop stopped by max_steps, and an
//! unreachable endpoint or a reply of the wrong shape as `error` (exit 69).

mod common;

use std::path::Path;

use common::{code, fibon};
use fibon_verify::exit_code;
use serde_json::{Value, json};
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, Request, ResponseTemplate};

/// A one-skill project (`lookup`, which must call the tool `lookup`; its fixture answers
/// "the answer is 42") driven by the model at `base_url`.
fn project(base_url: &str, extra: &str, faults: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("contracts")).unwrap();
    std::fs::create_dir_all(dir.path().join("scenarios")).unwrap();
    std::fs::write(
        dir.path().join("fibon.yaml"),
        format!(
            "target:\n  kind: openai\n  base_url: \"{base_url}\"\n  model: scripted\n  timeout: 10s\n{extra}matrix: {{jobs: 2, timeout_fault_delay: 200ms}}\nreport: {{dir: out}}\n"
        ),
    )
    .unwrap();
    std::fs::write(
        dir.path().join("contracts/lookup.yaml"),
        "skill: lookup\nmust_call_tools: [lookup]\nfailure_semantics: {TOOL_NOT_FOUND: explicit}\n",
    )
    .unwrap();
    std::fs::write(
        dir.path().join("scenarios/lookup.yaml"),
        format!("id: lookup-simple\nskill: lookup\ncomplexity: simple\ninput: look it up\ntools:\n  lookup:\n    description: Looks a thing up\n    input_schema: {{type: object, properties: {{q: {{type: string}}}}}}\n    responses:\n      - text: \"the answer is 42\"\nfaults: [{faults}]\nexpect: {{facts: [\"42\"]}}\n"),
    )
    .unwrap();
    dir
}

async fn run(dir: &Path, args: &[&str]) -> (i32, Value, String) {
    let dir = dir.to_path_buf();
    let args: Vec<String> = args.iter().map(|s| s.to_string()).collect();
    tokio::task::spawn_blocking(move || {
        let out = fibon(&dir)
            .args(["run", "--format", "json"])
            .args(&args)
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

fn body(req: &Request) -> Value {
    serde_json::from_slice(&req.body).unwrap()
}

fn completion(message: Value) -> ResponseTemplate {
    ResponseTemplate::new(200).set_body_json(json!({
        "id": "x", "object": "chat.completion", "model": "scripted",
        "choices": [{"index": 0, "message": message, "finish_reason": "stop"}]
    }))
}

fn tool_call(id: &str, name: &str, arguments: &str) -> Value {
    json!({"id": id, "type": "function", "function": {"name": name, "arguments": arguments}})
}

/// A model that calls `lookup` when it is offered and nothing has been looked up yet,
/// then answers with what the tool said (or that the tool is missing).
fn well_behaved(req: &Request) -> ResponseTemplate {
    let b = body(req);
    let messages = b["messages"].as_array().unwrap();
    let last = messages.last().unwrap();
    let offered = b["tools"]
        .as_array()
        .is_some_and(|ts| ts.iter().any(|t| t["function"]["name"] == "lookup"));
    if last["role"] == "user" && offered {
        return completion(json!({
            "role": "assistant",
            "content": "Let me look that up.",
            "tool_calls": [tool_call("call_1", "lookup", "{\"q\": \"it\"}")]
        }));
    }
    if last["role"] == "tool" {
        let result = last["content"].as_str().unwrap();
        return completion(json!({"role": "assistant", "content": format!("Found: {result}")}));
    }
    completion(
        json!({"role": "assistant", "content": "I cannot answer: the lookup tool is not available."}),
    )
}

#[tokio::test(flavor = "multi_thread")]
async fn the_loop_runs_tools_through_the_gateway_and_offers_only_current_tools() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/v1/chat/completions"))
        .respond_with(well_behaved)
        .mount(&server)
        .await;
    let dir = project(
        &format!("{}/v1", server.uri()),
        "  system_prompt: Use the tools.\n",
        "TOOL_NOT_FOUND",
    );
    let (code, report, stderr) = run(dir.path(), &[]).await;
    assert_eq!(code, exit_code::SUCCESS, "{stderr}\n{report:#}");
    let cells = report["cells"].as_array().unwrap();
    let q1 = cells.iter().find(|c| c["quadrant"] == "Q1").unwrap();
    // The call went through the gateway (its authoritative trace), the answer came back.
    assert_eq!(q1["trace"][1]["tool"], "lookup", "{q1:#}");
    assert_eq!(q1["trace"][1]["status"], "ok");
    assert!(q1["output"].as_str().unwrap().contains("the answer is 42"));

    // What the model was sent: the system prompt, function tools from tools/list, and
    // the tool result as a `tool` message answering its call id.
    let requests = server.received_requests().await.unwrap();
    let bodies: Vec<Value> = requests.iter().map(body).collect();
    let second = bodies
        .iter()
        .find(|b| b["messages"].as_array().unwrap().len() == 4)
        .expect("the turn after the tool call");
    assert_eq!(
        second["messages"][0],
        json!({"role": "system", "content": "Use the tools."})
    );
    assert_eq!(second["messages"][2]["content"], "Let me look that up.");
    assert_eq!(second["messages"][3]["role"], "tool");
    assert_eq!(second["messages"][3]["tool_call_id"], "call_1");
    assert_eq!(second["messages"][3]["content"], "the answer is 42");
    assert_eq!(second["temperature"], 0.0);
    let tools = second["tools"].as_array().unwrap();
    assert_eq!(tools[0]["function"]["name"], "lookup");
    assert_eq!(tools[0]["function"]["parameters"]["type"], "object");
    // Under TOOL_NOT_FOUND the tool is really absent from what the model is offered.
    assert!(
        bodies
            .iter()
            .any(|b| b.get("tools").is_none() && b["messages"].as_array().unwrap().len() == 2),
        "a request without the removed tool"
    );
    let q3 = cells.iter().find(|c| c["quadrant"] == "Q3").unwrap();
    assert_eq!(q3["verdict"], "pass", "{q3:#}");
}

#[tokio::test(flavor = "multi_thread")]
async fn legacy_function_call_and_malformed_arguments() {
    let server = MockServer::start().await;
    // Turn 1: a legacy function_call with broken JSON; turn 2: a valid legacy call;
    // turn 3: the answer.
    Mock::given(method("POST"))
        .respond_with(|req: &Request| {
            let b = body(req);
            let messages = b["messages"].as_array().unwrap();
            match messages.len() {
                1 => completion(json!({"role": "assistant", "content": null,
                    "function_call": {"name": "lookup", "arguments": "{\"q\": \"it\""}})),
                3 => completion(json!({"role": "assistant", "content": null,
                    "function_call": {"name": "lookup", "arguments": "{\"q\": \"it\"}"}})),
                _ => completion(json!({"role": "assistant",
                    "content": format!("Found: {}", messages.last().unwrap()["content"].as_str().unwrap())})),
            }
        })
        .mount(&server)
        .await;
    let dir = project(&server.uri(), "", "");
    let (code, report, stderr) = run(dir.path(), &[]).await;
    let cell = &report["cells"][0];
    // The malformed call is a finding (a contract violation), not a crash.
    assert_eq!(code, exit_code::CONTRACT_VIOLATION, "{stderr}\n{report:#}");
    assert!(
        cell["findings"]
            .as_array()
            .unwrap()
            .iter()
            .any(|f| f["check"] == "malformed_tool_call"
                && f["message"].as_str().unwrap().contains("not valid JSON")),
        "{cell:#}"
    );
    assert!(cell["output"].as_str().unwrap().contains("42"));
    let bodies: Vec<Value> = server
        .received_requests()
        .await
        .unwrap()
        .iter()
        .map(body)
        .collect();
    // Legacy replies go back as `function` messages; the model was told what was wrong.
    let turn2 = &bodies[1]["messages"][2];
    assert_eq!(turn2["role"], "function");
    assert_eq!(turn2["name"], "lookup");
    assert!(
        turn2["content"]
            .as_str()
            .unwrap()
            .contains("INVALID_ARGUMENTS")
    );
    assert_eq!(bodies[2]["messages"][4]["content"], "the answer is 42");
}

#[tokio::test(flavor = "multi_thread")]
async fn rate_limits_and_server_errors_are_retried() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(429).insert_header("retry-after", "1"))
        .up_to_n_times(1)
        .with_priority(1)
        .mount(&server)
        .await;
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(500))
        .up_to_n_times(1)
        .with_priority(2)
        .mount(&server)
        .await;
    Mock::given(method("POST"))
        .respond_with(well_behaved)
        .with_priority(3)
        .mount(&server)
        .await;
    let dir = project(&server.uri(), "", "");
    let started = std::time::Instant::now();
    let (code, report, stderr) = run(dir.path(), &[]).await;
    assert_eq!(code, exit_code::SUCCESS, "{stderr}\n{report:#}");
    assert!(
        started.elapsed() >= std::time::Duration::from_secs(1),
        "Retry-After was honoured"
    );
    assert_eq!(server.received_requests().await.unwrap().len(), 4);
}

#[tokio::test(flavor = "multi_thread")]
async fn an_endpoint_that_keeps_failing_or_is_unreachable_is_an_error() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(503))
        .mount(&server)
        .await;
    let dir = project(&server.uri(), "", "");
    let (code, report, _) = run(dir.path(), &[]).await;
    assert_eq!(code, exit_code::UNAVAILABLE, "{report:#}");
    assert_eq!(report["cells"][0]["verdict"], "error");
    let message = report["cells"][0]["findings"][0]["message"]
        .as_str()
        .unwrap();
    assert!(message.contains("HTTP 503"), "{message}");

    // Nothing listens on port 9 of the loopback.
    let dir = project("http://127.0.0.1:9/v1", "", "");
    let (code, report, _) = run(dir.path(), &[]).await;
    assert_eq!(code, exit_code::UNAVAILABLE, "{report:#}");
    assert_eq!(
        report["cells"][0]["findings"][0]["check"],
        "target_unavailable"
    );

    // A key variable that is named but not set is an error too, before any request.
    let dir = project(&server.uri(), "  api_key_env: FIBON_TEST_UNSET_KEY\n", "");
    let (code, report, _) = run(dir.path(), &[]).await;
    assert_eq!(code, exit_code::UNAVAILABLE);
    let message = report["cells"][0]["findings"][0]["message"]
        .as_str()
        .unwrap();
    assert!(message.contains("FIBON_TEST_UNSET_KEY"), "{message}");
}

#[tokio::test(flavor = "multi_thread")]
async fn an_endless_tool_call_loop_is_stopped_by_max_steps() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(|_: &Request| {
            completion(json!({"role": "assistant", "content": "",
                "tool_calls": [tool_call("c", "lookup", "{}")]}))
        })
        .mount(&server)
        .await;
    let dir = project(&server.uri(), "  max_steps: 3\n", "");
    let (code, report, _) = run(dir.path(), &[]).await;
    assert_eq!(code, exit_code::CONTRACT_VIOLATION, "{report:#}");
    let cell = &report["cells"][0];
    assert_eq!(cell["behavior"], "hard_interrupt", "{cell:#}");
    assert_eq!(server.received_requests().await.unwrap().len(), 3);
    assert!(
        cell.to_string().contains("max_steps (3)"),
        "the report says why: {cell:#}"
    );
}

/// A model that calls `lookup` only when pushed at `stage` (1 warned, 2 forced; 3: it
/// never calls but restates a result it is handed; 0: never complies).
fn stubborn(stage: u8) -> impl Fn(&Request) -> ResponseTemplate {
    move |req: &Request| {
        let b = body(req);
        let messages = b["messages"].as_array().unwrap();
        let last = messages.last().unwrap();
        let text = |m: &Value| m["content"].as_str().unwrap_or_default().to_string();
        let warned = messages
            .iter()
            .any(|m| m["role"] == "system" && text(m).contains("you must call `lookup`"));
        let forced = b["tool_choice"]["function"]["name"] == "lookup";
        let handed = text(last).contains("was called for you");
        if last["role"] == "tool" {
            return completion(
                json!({"role": "assistant", "content": format!("Found: {}", text(last))}),
            );
        }
        let call = match stage {
            1 => warned,
            2 => forced,
            _ => false,
        };
        if call {
            return completion(json!({"role": "assistant", "content": null,
                "tool_calls": [tool_call("c1", "lookup", "{\"q\": \"it\"}")]}));
        }
        if handed && stage == 3 {
            return completion(json!({"role": "assistant", "content": "The answer is 42."}));
        }
        completion(json!({"role": "assistant", "content": "From memory: the answer is 7."}))
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn the_intervention_ladder_records_where_the_model_complied() {
    for (stage, expected) in [(1u8, Some(1)), (2, Some(2)), (3, Some(3)), (0, None)] {
        let server = MockServer::start().await;
        Mock::given(method("POST"))
            .respond_with(stubborn(stage))
            .mount(&server)
            .await;
        let dir = project(&server.uri(), "  intervene: true\n", "");
        let (code, report, stderr) = run(dir.path(), &[]).await;
        // The verdict stands: the model did not call the tool unprompted.
        assert_eq!(code, exit_code::CONTRACT_VIOLATION, "{stderr}");
        let cell = &report["cells"][0];
        assert_eq!(cell["verdict"], "contract_violation");
        let ladder = &cell["intervention"];
        assert_eq!(
            ladder["complied_at"],
            json!(expected),
            "stage {stage}: {ladder:#}"
        );
        let tried = ladder["stages"].as_array().unwrap();
        assert_eq!(tried.len(), expected.unwrap_or(3) as usize, "{ladder:#}");
        assert!(
            tried[..tried.len() - 1]
                .iter()
                .all(|s| s["complied"] == false)
        );
        let summary = &report["intervention"];
        assert_eq!(summary["model"], "scripted");
        assert_eq!(summary["violations"], 1);
        let mut at = [0, 0, 0];
        if let Some(s) = expected {
            at[s as usize - 1] = 1;
        }
        assert_eq!(summary["complied_at_stage"], json!(at));
        assert_eq!(summary["never"], if expected.is_none() { 1 } else { 0 });
        assert!(
            stderr.contains("intervention (scripted): 1 must_call_tools violation"),
            "{stderr}"
        );
        // Stage 3: the verifier made the call itself, through the gateway.
        if stage == 3 {
            let requests = server.received_requests().await.unwrap();
            let last = body(requests.last().unwrap());
            assert!(
                last.get("tools").is_none(),
                "nothing to call in translation"
            );
            assert!(last.to_string().contains("the answer is 42"));
        }
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_flooding_or_garbage_endpoint_is_an_error_not_a_crash() {
    for body in [
        vec![b'x'; 20 * 1024 * 1024],
        b"\x00\x01<html>not json".to_vec(),
        br#"{"choices": []}"#.to_vec(),
    ] {
        let server = MockServer::start().await;
        Mock::given(method("POST"))
            .respond_with(ResponseTemplate::new(200).set_body_bytes(body.clone()))
            .mount(&server)
            .await;
        let dir = project(&server.uri(), "", "");
        let (code, report, _) = run(dir.path(), &[]).await;
        assert_eq!(code, exit_code::UNAVAILABLE, "{report:#}");
        let cell = &report["cells"][0];
        assert_eq!(cell["verdict"], "error");
        assert_eq!(cell["findings"][0]["check"], "target_unavailable");
        let message = cell["findings"][0]["message"].as_str().unwrap();
        if body.len() > fibon_verify::chat::REPLY_CAP {
            assert!(message.contains("larger than 16 MiB"), "{message}");
        }
    }
}

/// Stage 3 carries a chain: the verifier calls every required tool in order, the first
/// with arguments from the input, the next with the result before it, and hands the model
/// all the results.
#[tokio::test(flavor = "multi_thread")]
async fn degraded_translation_carries_a_two_tool_chain() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(|req: &Request| {
            let b = body(req);
            let last = b["messages"].as_array().unwrap().last().unwrap().clone();
            let text = last["content"].as_str().unwrap_or_default();
            if text.contains("was called for you") {
                return completion(
                    json!({"role": "assistant", "content": "Summary: payment is due within 45 days."}),
                );
            }
            completion(json!({"role": "assistant", "content": "From memory: 30 days."}))
        })
        .mount(&server)
        .await;
    let dir = project(&server.uri(), "  intervene: true\n", "");
    std::fs::write(
        dir.path().join("contracts/lookup.yaml"),
        "skill: lookup\nmust_call_tools: [read_doc, summarize]\nfailure_semantics: {TOOL_NOT_FOUND: explicit}\n",
    )
    .unwrap();
    std::fs::write(
        dir.path().join("scenarios/lookup.yaml"),
        r#"id: chain
skill: lookup
complexity: simple
input: "Summarize the payment terms of https://example.com/contract.pdf"
tools:
  read_doc:
    input_schema: {type: object, required: [url], properties: {url: {type: string}}}
    responses:
      - when: {url: "https://example.com/contract.pdf"}
        text: "Clause 4: the buyer pays within 45 days of delivery."
  summarize:
    input_schema: {type: object, required: [text], properties: {text: {type: string}}}
    responses:
      - when: {text: {regex: "Clause 4: the buyer pays within 45 days"}}
        text: "Summary: payment is due within 45 days."
faults: []
expect: {facts: ["45 days"]}
"#,
    )
    .unwrap();
    let (code, report, stderr) = run(dir.path(), &[]).await;
    assert_eq!(code, exit_code::CONTRACT_VIOLATION, "{stderr}");
    let ladder = &report["cells"][0]["intervention"];
    assert_eq!(ladder["complied_at"], 3, "{ladder:#}");
    // The model was handed both results: each fixture matched only the right arguments.
    let requests = server.received_requests().await.unwrap();
    let handed = body(requests.last().unwrap()).to_string();
    assert!(handed.contains("`read_doc` was called for you"), "{handed}");
    assert!(
        handed.contains("Clause 4: the buyer pays within 45 days"),
        "{handed}"
    );
    assert!(
        handed.contains("`summarize` was called for you"),
        "{handed}"
    );
    assert!(
        handed.contains("Summary: payment is due within 45 days."),
        "{handed}"
    );
    assert!(!handed.contains("FIXTURE_MISS"), "{handed}");
}

/// A 200 reply whose message has the wrong shape — a `content` that is neither text nor
/// null, `tool_calls` that is not an array, a call without a `function` object — is the
/// endpoint breaking the protocol: the cell is `error` naming what was wrong, never an
/// empty answer that the checks then judge.
#[tokio::test(flavor = "multi_thread")]
async fn a_malformed_model_reply_is_an_error_not_an_empty_answer() {
    for (message, what) in [
        (json!({"content": 5, "tool_calls": "x"}), "content"),
        (json!({"role": "assistant", "content": 5}), "content"),
        (
            json!({"role": "assistant", "content": {"text": "hi"}}),
            "content",
        ),
        (
            json!({"role": "assistant", "content": null, "tool_calls": "x"}),
            "tool_calls",
        ),
        (
            json!({"role": "assistant", "content": null, "tool_calls": {"id": "c"}}),
            "tool_calls",
        ),
        (
            json!({"role": "assistant", "content": null, "tool_calls": ["lookup"]}),
            "tool_calls[0]",
        ),
        (
            json!({"role": "assistant", "content": null,
                "tool_calls": [{"id": "c", "type": "function", "function": "lookup"}]}),
            "tool_calls[0].function",
        ),
        (
            json!({"role": "assistant", "content": null,
                "tool_calls": [{"id": "c", "type": "function", "function": {"name": 7, "arguments": "{}"}}]}),
            "name",
        ),
        (
            json!({"role": "assistant", "content": null, "function_call": "lookup"}),
            "function_call",
        ),
        (json!("just text"), "message"),
    ] {
        let server = MockServer::start().await;
        Mock::given(method("POST"))
            .respond_with(completion(message.clone()))
            .mount(&server)
            .await;
        let dir = project(&server.uri(), "", "TOOL_NOT_FOUND");
        let (code, report, stderr) = run(dir.path(), &[]).await;
        assert_eq!(
            code,
            exit_code::UNAVAILABLE,
            "{message}: {stderr}\n{report:#}"
        );
        for cell in report["cells"].as_array().unwrap() {
            assert_eq!(cell["verdict"], "error", "{message}: {cell:#}");
            assert_eq!(cell["behavior"], "not_run", "{message}: {cell:#}");
            let finding = &cell["findings"][0];
            assert_eq!(
                finding["check"], "target_unavailable",
                "{message}: {cell:#}"
            );
            let text = finding["message"].as_str().unwrap();
            assert!(
                text.contains("malformed") && text.contains(what),
                "{message}: names what was wrong: {text}"
            );
        }
    }
}

/// Content given as text parts, and a `refusal` beside a null content, are the answer.
#[tokio::test(flavor = "multi_thread")]
async fn text_parts_and_a_refusal_are_read_as_the_answer() {
    for (message, answer) in [
        (
            json!({"role": "assistant", "content": [{"type": "text", "text": "the answer "}, {"type": "text", "text": "is 42"}]}),
            "the answer is 42",
        ),
        (
            json!({"role": "assistant", "content": null, "refusal": "I cannot help with that."}),
            "I cannot help with that.",
        ),
    ] {
        let server = MockServer::start().await;
        Mock::given(method("POST"))
            .respond_with(completion(message.clone()))
            .mount(&server)
            .await;
        let dir = project(&server.uri(), "", "");
        let (_, report, stderr) = run(dir.path(), &[]).await;
        let cell = &report["cells"][0];
        assert_eq!(cell["output"], answer, "{message}: {stderr}\n{cell:#}");
    }
}

/// A model that keeps calling a tool with arguments that are not JSON until `max_steps`
/// (or until the timeout) has behaved — `hard_interrupt` or `timeout` — and its malformed
/// calls are still findings: on a fault cell whose contract accepts a hard interrupt
/// (`hard`), they are what fails the cell, not lost with the answer it never gave.
#[tokio::test(flavor = "multi_thread")]
async fn malformed_calls_are_findings_when_the_model_never_answers() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(|_: &Request| {
            completion(json!({"role": "assistant", "content": null,
                "tool_calls": [tool_call("c", "lookup", "{\"q\": oops")]}))
        })
        .mount(&server)
        .await;
    let dir = project(&server.uri(), "  max_steps: 2\n", "TOOL_NOT_FOUND");
    std::fs::write(
        dir.path().join("contracts/lookup.yaml"),
        "skill: lookup\nmust_call_tools: [lookup]\nfailure_semantics: {TOOL_NOT_FOUND: hard}\n",
    )
    .unwrap();
    let (code, report, stderr) = run(dir.path(), &[]).await;
    assert_eq!(code, exit_code::CONTRACT_VIOLATION, "{stderr}\n{report:#}");
    let cells = report["cells"].as_array().unwrap();
    let checks = |c: &Value| -> Vec<String> {
        c["findings"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| f["check"].as_str().unwrap().to_string())
            .collect()
    };
    for cell in cells {
        assert_eq!(cell["behavior"], "hard_interrupt", "{cell:#}");
        assert_eq!(cell["verdict"], "contract_violation", "{cell:#}");
        let found = checks(cell);
        assert_eq!(
            found.iter().filter(|c| *c == "malformed_tool_call").count(),
            2,
            "one per call: {cell:#}"
        );
        assert!(
            cell["findings"]
                .as_array()
                .unwrap()
                .iter()
                .any(|f| f["check"] == "malformed_tool_call"
                    && f["message"].as_str().unwrap().contains("not valid JSON")),
            "{cell:#}"
        );
    }
    // With its tools, the hard interrupt itself still fails the cell.
    let q1 = cells.iter().find(|c| c["quadrant"] == "Q1").unwrap();
    assert!(checks(q1).contains(&"hard_interrupt".to_string()), "{q1:#}");

    // The same model cut off by the timeout: its malformed call is still a finding.
    let slow = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(|req: &Request| {
            let turn = body(req)["messages"].as_array().unwrap().len();
            let reply = completion(json!({"role": "assistant", "content": null,
                "tool_calls": [tool_call("c", "lookup", "{\"q\": oops")]}));
            if turn > 1 {
                reply.set_delay(std::time::Duration::from_secs(30))
            } else {
                reply
            }
        })
        .mount(&slow)
        .await;
    let dir = project(&slow.uri(), "", "");
    let config = dir.path().join("fibon.yaml");
    let text = std::fs::read_to_string(&config)
        .unwrap()
        .replace("timeout: 10s", "timeout: 2s");
    std::fs::write(&config, text).unwrap();
    let (code, report, stderr) = run(dir.path(), &[]).await;
    assert_eq!(code, exit_code::CONTRACT_VIOLATION, "{stderr}\n{report:#}");
    let cell = &report["cells"][0];
    assert_eq!(cell["behavior"], "timeout", "{cell:#}");
    let found = checks(cell);
    assert!(found.contains(&"timeout".to_string()), "{cell:#}");
    assert!(
        found.contains(&"malformed_tool_call".to_string()),
        "{cell:#}"
    );
}

/// A refusal where the contract wants an error or a hard interrupt: the finding names the
/// semantics as the contract spells them (`retry_then_degrade`), in its message and its
/// evidence.
#[tokio::test(flavor = "multi_thread")]
async fn failure_semantics_are_named_as_the_contract_spells_them() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(well_behaved)
        .mount(&server)
        .await;
    let dir = project(&server.uri(), "", "TOOL_NOT_FOUND");
    std::fs::write(
        dir.path().join("contracts/lookup.yaml"),
        "skill: lookup\nmust_call_tools: [lookup]\nfailure_semantics: {TOOL_NOT_FOUND: retry_then_degrade}\ndegradation: {mode: hard_fail}\n",
    )
    .unwrap();
    let (code, report, stderr) = run(dir.path(), &["--fault", "TOOL_NOT_FOUND"]).await;
    assert_eq!(code, exit_code::CONTRACT_VIOLATION, "{stderr}");
    let finding = &report["cells"][0]["findings"][0];
    assert_eq!(finding["check"], "failure_semantics", "{finding:#}");
    assert!(
        finding["message"]
            .as_str()
            .unwrap()
            .contains("the contract (retry_then_degrade) wants"),
        "{finding:#}"
    );
    assert_eq!(finding["evidence"]["semantics"], "retry_then_degrade");
    assert!(stderr.contains("(retry_then_degrade)"), "{stderr}");
}
