//! Secrets never echoed (issue 18, item 5): endpoints that echo the key they were sent —
//! in a 401 body, a 400 body cut at its 300th character, an assistant message, tool-call
//! arguments, a judge's reason, a recorded conversation, an agent's stdout and stderr —
//! and every file and stream the verifier writes checked for the canary: it is nowhere,
//! not even in part, and `[redacted:NAME]` is where it was.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, Request, ResponseTemplate};

use super::common::{code, fibon};

const CANARY: &str = "sk-canary-0123456789abcdef";

/// What a run wrote: every file of the report folder and the job summary, stdout, stderr.
struct Written {
    code: i32,
    files: Vec<(PathBuf, String)>,
    stdout: String,
    stderr: String,
}

impl Written {
    /// No output holds the canary or any 8 bytes of it.
    fn sealed(&self) {
        let pieces: Vec<&str> = (0..=CANARY.len() - 8).map(|i| &CANARY[i..i + 8]).collect();
        let streams = [("stdout", &self.stdout), ("stderr", &self.stderr)];
        let all = self
            .files
            .iter()
            .map(|(p, t)| (p.display().to_string(), t))
            .chain(streams.iter().map(|(n, t)| (n.to_string(), *t)));
        for (name, text) in all {
            for piece in &pieces {
                assert!(
                    !text.contains(piece),
                    "{name} holds `{piece}` of the key:\n{text}"
                );
            }
        }
    }

    fn file(&self, name: &str) -> &str {
        self.files
            .iter()
            .find(|(p, _)| p.file_name().is_some_and(|n| n == name))
            .map(|(_, t)| t.as_str())
            .unwrap_or_else(|| panic!("no {name} written: {}", self.stderr))
    }

    fn report(&self) -> Value {
        serde_json::from_str(self.file("report.json")).unwrap()
    }
}

/// Runs `args` in `dir` under GitHub Actions (annotations on stderr, the job summary),
/// with `env` set, and collects every output.
async fn written(dir: &Path, args: &[&str], env: &[(&str, &str)]) -> Written {
    let (dir, summary) = (dir.to_path_buf(), dir.join("step-summary.md"));
    let args: Vec<String> = args.iter().map(|s| s.to_string()).collect();
    let env: Vec<(String, String)> = env
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    tokio::task::spawn_blocking(move || {
        let out = fibon(&dir)
            .env("GITHUB_ACTIONS", "true")
            .env("GITHUB_STEP_SUMMARY", &summary)
            .envs(env)
            .args(&args)
            .output()
            .unwrap();
        let mut files = Vec::new();
        for entry in std::fs::read_dir(dir.join("out")).into_iter().flatten() {
            let p = entry.unwrap().path();
            files.push((p.clone(), std::fs::read_to_string(&p).unwrap()));
        }
        if let Ok(text) = std::fs::read_to_string(&summary) {
            files.push((summary, text));
        }
        Written {
            code: code(&out),
            files,
            stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        }
    })
    .await
    .unwrap()
}

fn completion(message: Value) -> ResponseTemplate {
    ResponseTemplate::new(200).set_body_json(json!({
        "id": "x", "object": "chat.completion", "model": "echo",
        "choices": [{"index": 0, "message": message, "finish_reason": "stop"}]
    }))
}

/// An OpenAI-compatible model that echoes the Authorization header it is sent, in the way
/// the user's message names: a 401 body, a 400 body whose 300-character cut falls inside
/// the key, its answer, or the arguments of a tool call (and then its answer).
fn echo(req: &Request) -> ResponseTemplate {
    let auth = req
        .headers
        .get("authorization")
        .and_then(|v| v.to_str().ok())
        .unwrap_or("none")
        .to_string();
    let body: Value = serde_json::from_slice(&req.body).unwrap();
    let messages = body["messages"].as_array().unwrap();
    let input = messages
        .iter()
        .find(|m| m["role"] == "user")
        .and_then(|m| m["content"].as_str())
        .unwrap_or_default();
    let last = messages.last().unwrap();
    match input {
        "mode 401" => ResponseTemplate::new(401).set_body_json(
            json!({"error": {"message": format!("Incorrect API key provided: {auth}"), "type": "invalid_request_error"}}),
        ),
        "mode 400" => ResponseTemplate::new(400)
            .set_body_string(format!("{}{auth} is not allowed here", "x".repeat(280))),
        "mode message" => completion(
            json!({"role": "assistant", "content": format!("The answer is 42; you sent {auth}.")}),
        ),
        _ if last["role"] == "tool" => completion(
            json!({"role": "assistant", "content": format!("Found: the answer is 42 for {auth}")}),
        ),
        _ => completion(json!({
            "role": "assistant", "content": null,
            "tool_calls": [{"id": "c1", "type": "function",
                "function": {"name": "lookup", "arguments": json!({"q": auth}).to_string()}}]
        })),
    }
}

/// A one-skill project (`lookup`, which must call `lookup`), a scenario per echo mode,
/// with `target` as its target.
fn project(target: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    std::fs::create_dir_all(root.join("contracts")).unwrap();
    std::fs::create_dir_all(root.join("scenarios")).unwrap();
    std::fs::write(
        root.join("fibon.yaml"),
        format!("target:\n{target}matrix: {{jobs: 2, timeout_fault_delay: 200ms}}\nreport: {{dir: out}}\n"),
    )
    .unwrap();
    std::fs::write(
        root.join("contracts/lookup.yaml"),
        "skill: lookup\nmust_call_tools: [lookup]\nfailure_semantics: {TOOL_NOT_FOUND: explicit}\n",
    )
    .unwrap();
    for mode in ["401", "400", "message", "tool"] {
        std::fs::write(
            root.join(format!("scenarios/{mode}.yaml")),
            format!("id: echo-{mode}\nskill: lookup\ncomplexity: simple\ninput: mode {mode}\ntools:\n  lookup:\n    description: Looks a thing up\n    input_schema: {{type: object, properties: {{q: {{type: string}}}}}}\n    responses:\n      - text: \"the answer is 42\"\nfaults: [TOOL_NOT_FOUND]\nexpect: {{facts: [\"42\"]}}\n"),
        )
        .unwrap();
    }
    dir
}

const MARK: &str = "[redacted:FIBON_CANARY_KEY]";

#[tokio::test(flavor = "multi_thread")]
async fn a_model_echoing_its_key_reaches_no_output() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/v1/chat/completions"))
        .respond_with(echo)
        .mount(&server)
        .await;
    let dir = project(&format!(
        "  kind: openai\n  base_url: \"{}/v1\"\n  model: echo\n  api_key_env: FIBON_CANARY_KEY\n  timeout: 10s\n",
        server.uri()
    ));
    let out = written(
        dir.path(),
        &["run", "--format", "json"],
        &[("FIBON_CANARY_KEY", CANARY)],
    )
    .await;
    // The endpoint did get the key: the echo is real.
    let sent = server.received_requests().await.unwrap();
    assert!(
        sent.iter()
            .all(|r| r.headers["authorization"] == format!("Bearer {CANARY}").as_str())
    );
    out.sealed();
    assert_ne!(out.code, 0, "{}", out.stderr);
    let report = out.report();
    let cells = report["cells"].as_array().unwrap();
    let cell = |scenario: &str| {
        cells
            .iter()
            .find(|c| c["scenario"] == scenario && c["quadrant"] == "Q1")
            .unwrap_or_else(|| panic!("no Q1 cell of {scenario}: {report:#}"))
    };
    let text = |v: &Value| v.to_string();
    // (a) 401 and (b) 400: the finding says what the endpoint answered, key redacted.
    assert!(text(&cell("echo-401")["findings"]).contains(&format!("Bearer {MARK}")));
    // The body is cut after it is redacted: what is left of the key is the marker's start.
    assert!(text(&cell("echo-400")["findings"]).contains("Bearer [redacted:"));
    // (c) the answer, and (d) the arguments of the call in the gateway's trace.
    assert!(text(&cell("echo-message")["output"]).contains(MARK));
    let tool = cell("echo-tool");
    assert_eq!(tool["trace"][1]["arguments"]["q"], format!("Bearer {MARK}"));
    assert!(text(&tool["output"]).contains(MARK));
    // The projections are made of the redacted model.
    assert!(out.file("junit.xml").contains(MARK));
    assert!(
        // Annotations of a low-risk Skill are warnings.
        out.stderr.contains("::warning") && out.stderr.contains(MARK),
        "{}",
        out.stderr
    );
    assert!(out.stdout.contains(MARK));
    assert!(out.file("step-summary.md").contains("fibon-verify"));
}

#[tokio::test(flavor = "multi_thread")]
async fn judges_echoing_their_keys_reach_no_output() {
    let reason = |req: &Request| {
        let auth = req.headers["authorization"].to_str().unwrap().to_string();
        let s = |score: u32| json!({"score": score, "reason": format!("judged with {auth}")});
        let scores = json!({"scores": {"safety": s(10), "canon": s(8), "style": s(6)}, "hard_fact_conflict": false});
        ResponseTemplate::new(200)
            .set_body_json(json!({"choices": [{"message": {"content": scores.to_string()}}]}))
    };
    let good = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(reason)
        .mount(&good)
        .await;
    let refusing = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(|req: &Request| {
            let auth = req.headers["authorization"].to_str().unwrap().to_string();
            ResponseTemplate::new(401).set_body_string(format!("{{\"error\": \"bad key {auth}\"}}"))
        })
        .mount(&refusing)
        .await;
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("policy.yaml"),
        format!(
            "policy: o\nversion: 1\ndimensions:\n  - {{id: safety, kind: hard_block, threshold: 9}}\n  - {{id: canon, kind: critical, threshold: 7}}\n  - {{id: style, kind: advisory}}\njudges:\n  - {{id: a, kind: openai, base_url: \"{}/v1\", model: m, api_key_env: FIBON_JUDGE_KEY, cost_usd: 0.01}}\n  - {{id: b, kind: openai, base_url: \"{}/v1\", model: m, api_key_env: FIBON_JUDGE_KEY, cost_usd: 0.01}}\ntiebreak: {{id: c, kind: builtin, name: fact_coverage}}\nbudget: {{planned_calls: 10, max_calls: 10, max_usd_per_call: 0.05, limit_usd: 1}}\n",
            good.uri(),
            refusing.uri()
        ),
    )
    .unwrap();
    std::fs::write(
        dir.path().join("candidates.jsonl"),
        json!({"id": "c1", "input": "q", "output": "the answer is 42", "facts": ["42"]})
            .to_string()
            + "\n",
    )
    .unwrap();
    let out = written(
        dir.path(),
        &[
            "gate",
            "--candidates",
            "candidates.jsonl",
            "--policy",
            "policy.yaml",
            "--format",
            "json",
            "--report-dir",
            "out",
        ],
        &[("FIBON_JUDGE_KEY", CANARY)],
    )
    .await;
    out.sealed();
    let judges = out.report()["cells"][0]["quality"]["judges"].to_string();
    assert!(
        judges.contains("judged with Bearer [redacted:FIBON_JUDGE_KEY]"),
        "{judges}"
    );
    assert!(
        judges.contains("bad key Bearer [redacted:FIBON_JUDGE_KEY]"),
        "{judges}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_recorded_conversation_holding_the_key_is_audited_redacted() {
    let dir = project(
        "  kind: openai\n  base_url: \"http://127.0.0.1:9/v1\"\n  model: echo\n  api_key_env: FIBON_CANARY_KEY\n",
    );
    let line = json!({
        "id": "conv-1", "skill": "lookup", "input": "look it up", "status": "ok",
        "trace": [{"tool": "lookup", "arguments": {"q": format!("Bearer {CANARY}")}, "result": {"content": [{"type": "text", "text": "the answer is 42"}], "isError": false}}],
        "output": format!("The answer is 42 (key {CANARY})")
    });
    std::fs::write(dir.path().join("history.jsonl"), line.to_string() + "\n").unwrap();
    let out = written(
        dir.path(),
        &["audit", "--history", "history.jsonl", "--format", "json"],
        &[("FIBON_CANARY_KEY", CANARY)],
    )
    .await;
    out.sealed();
    let cell = &out.report()["cells"][0];
    assert_eq!(
        cell["trace"][0]["arguments"]["q"],
        format!("Bearer {MARK}"),
        "{cell:#}"
    );
    assert!(cell["output"].as_str().unwrap().contains(MARK));
}

#[tokio::test(flavor = "multi_thread")]
async fn agents_echoing_env_and_header_secrets_reach_no_output() {
    // A command agent handed the key through `env: ${VAR}`, printing it in its answer and
    // on stderr; a short secret is named by the warning, not redacted.
    let dir = project(
        "  kind: command\n  command: [python3, agent.py]\n  env: {AGENT_KEY: \"${FIBON_CMD_KEY}\", PIN: \"${FIBON_PIN}\"}\n  timeout: 10s\n",
    );
    std::fs::write(
        dir.path().join("agent.py"),
        "import json, os, sys\nk = os.environ['AGENT_KEY']\nprint('using ' + k, file=sys.stderr)\nprint(json.dumps({'output': 'The answer is 42, key ' + k + ' pin ' + os.environ['PIN']}))\n",
    )
    .unwrap();
    let out = written(
        dir.path(),
        &["run", "--format", "json"],
        &[("FIBON_CMD_KEY", CANARY), ("FIBON_PIN", "4711")],
    )
    .await;
    out.sealed();
    let cell = &out.report()["cells"][0];
    assert!(
        cell["output"]
            .as_str()
            .unwrap()
            .contains("[redacted:FIBON_CMD_KEY] pin 4711"),
        "{cell:#}"
    );
    assert!(
        cell["stderr"]
            .as_str()
            .unwrap()
            .contains("using [redacted:FIBON_CMD_KEY]")
    );
    assert!(
        out.stderr
            .contains("the secret `FIBON_PIN` is shorter than 8 bytes"),
        "{}",
        out.stderr
    );

    // An http target sent `Authorization: Bearer ${VAR}`, answering with what it got.
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(|req: &Request| {
            let auth = req.headers["authorization"].to_str().unwrap().to_string();
            ResponseTemplate::new(200)
                .set_body_json(json!({"output": format!("The answer is 42 for {auth}")}))
        })
        .mount(&server)
        .await;
    let dir = project(&format!(
        "  kind: http\n  url: \"{}/agent\"\n  headers: {{Authorization: \"Bearer ${{FIBON_HTTP_KEY}}\"}}\n  timeout: 10s\n",
        server.uri()
    ));
    let out = written(
        dir.path(),
        &["run", "--format", "json"],
        &[("FIBON_HTTP_KEY", CANARY)],
    )
    .await;
    out.sealed();
    assert!(
        out.report()["cells"][0]["output"]
            .to_string()
            .contains("Bearer [redacted:FIBON_HTTP_KEY]")
    );
}
