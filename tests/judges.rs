//! Model judges on the wire (wiremock OpenAI-compatible endpoints): the policy's JSON
//! Schema in `response_format`, the `json_object` fallback of an endpoint that refuses it,
//! the one repair retry and failing closed after it, and the judge cache — hits with no
//! call and no cost, misses on any change, a corrupt entry re-asked and rewritten,
//! `--no-cache` and `cache clear`.

mod common;

use std::path::{Path, PathBuf};

use common::{code, fibon};
use fibon_verify::exit_code;
use serde_json::{Value, json};
use wiremock::matchers::{body_partial_json, method, path};
use wiremock::{Mock, MockServer, Request, Respond, ResponseTemplate};

/// Two `openai` judges on `url` (model `model`), a builtin tiebreak.
fn policy(dir: &Path, url: &str, model: &str, version: u32) {
    std::fs::write(
        dir.join("policy.yaml"),
        format!(
            "policy: wire\nversion: {version}\nscale: {{min: 0, max: 10, step: 0.5}}\ndimensions:\n  - {{id: safety, kind: hard_block, threshold: 9}}\n  - {{id: canon, kind: critical, threshold: 7}}\n  - {{id: style, kind: advisory}}\njudges:\n  - {{id: a, kind: openai, base_url: \"{url}/v1\", model: {model}, cost_usd: 0.01}}\n  - {{id: b, kind: openai, base_url: \"{url}/v1\", model: {model}, cost_usd: 0.01}}\ntiebreak: {{id: c, kind: builtin, name: fact_coverage}}\nbudget: {{planned_calls: 20, max_calls: 20, max_usd_per_call: 0.05, limit_usd: 1}}\n"
        ),
    )
    .unwrap();
}

fn candidates(dir: &Path, texts: &[&str]) {
    let lines: Vec<String> = texts
        .iter()
        .enumerate()
        .map(|(i, t)| json!({"id": format!("cand-{i}"), "input": "q", "output": t}).to_string())
        .collect();
    std::fs::write(dir.join("candidates.jsonl"), lines.join("\n") + "\n").unwrap();
}

fn answer(scores: Value) -> ResponseTemplate {
    ResponseTemplate::new(200)
        .set_body_json(json!({"choices": [{"message": {"content": scores.to_string()}}]}))
}

fn good() -> Value {
    json!({"scores": {"safety": {"score": 10, "reason": "ok"}, "canon": {"score": 8, "reason": "ok"},
                      "style": {"score": 6, "reason": "ok"}}, "hard_fact_conflict": false})
}

/// `gate` in `dir` with `args` added; the exit code and report.json.
async fn gate(dir: &Path, args: &[&str]) -> (i32, Value) {
    let dir: PathBuf = dir.to_path_buf();
    let args: Vec<String> = args.iter().map(|s| s.to_string()).collect();
    tokio::task::spawn_blocking(move || {
        let out = fibon(&dir)
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
            .args(&args)
            .output()
            .unwrap();
        let report: Value = serde_json::from_slice(&out.stdout)
            .unwrap_or_else(|_| panic!("{}", String::from_utf8_lossy(&out.stderr)));
        (code(&out), report)
    })
    .await
    .unwrap()
}

fn record(report: &Value, cell: usize, judge: usize) -> &Value {
    &report["cells"][cell]["quality"]["judges"][judge]
}

async fn bodies(server: &MockServer) -> Vec<Value> {
    server
        .received_requests()
        .await
        .unwrap()
        .iter()
        .map(|r| serde_json::from_slice(&r.body).unwrap())
        .collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn judges_ask_in_the_policys_schema_and_fall_back_to_json_object_once() {
    let server = MockServer::start().await;
    // Like an endpoint without structured outputs: json_schema refused with a 400 naming
    // response_format, json_object served.
    Mock::given(method("POST"))
        .and(path("/v1/chat/completions"))
        .and(body_partial_json(json!({"response_format": {"type": "json_schema"}})))
        .respond_with(ResponseTemplate::new(400).set_body_json(json!({"error": {
            "message": "Invalid parameter: 'response_format' of type 'json_schema' is not supported with this model.",
            "param": "response_format"}})))
        .mount(&server)
        .await;
    Mock::given(method("POST"))
        .and(path("/v1/chat/completions"))
        .and(body_partial_json(
            json!({"response_format": {"type": "json_object"}}),
        ))
        .respond_with(answer(good()))
        .mount(&server)
        .await;
    let dir = tempfile::tempdir().unwrap();
    policy(dir.path(), &server.uri(), "m", 1);
    candidates(dir.path(), &["a plain answer"]);
    let (code, report) = gate(dir.path(), &["--no-cache"]).await;
    assert_eq!(code, exit_code::SUCCESS, "{report:#}");
    for j in 0..2 {
        let r = record(&report, 0, j);
        assert_eq!(r["response_format"], "json_object", "{r:#}");
        assert!(
            r["fallback"].as_str().unwrap().contains("HTTP 400"),
            "{r:#}"
        );
        assert!(r["fallback"].as_str().unwrap().contains("response_format"));
        let attempts = r["attempts"].as_array().unwrap();
        assert_eq!(attempts.len(), 2, "{r:#}");
        assert_eq!(attempts[0]["response_format"], "json_schema");
        assert!(attempts[0]["error"].is_string());
        assert_eq!(attempts[1], json!({"response_format": "json_object"}));
        assert!(r["cache"].is_null(), "--no-cache: no cache record");
    }
    // Two judges, each refused once and served once; both fallbacks count in the budget.
    let sent = bodies(&server).await;
    assert_eq!(sent.len(), 4);
    assert_eq!(report["quality_budget"]["calls"], 4);
    let schema_requests: Vec<&Value> = sent
        .iter()
        .filter(|b| b["response_format"]["type"] == "json_schema")
        .collect();
    assert_eq!(schema_requests.len(), 2);
    let mut orders = Vec::new();
    for b in schema_requests {
        let js = &b["response_format"]["json_schema"];
        assert_eq!(js["name"], "fibon_judge");
        assert_eq!(js["strict"], true);
        let schema = &js["schema"];
        assert_eq!(schema["required"], json!(["scores", "hard_fact_conflict"]));
        assert_eq!(schema["additionalProperties"], false);
        let scores = &schema["properties"]["scores"];
        assert_eq!(scores["additionalProperties"], false);
        let required: Vec<&str> = scores["required"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_str().unwrap())
            .collect();
        let mut sorted = required.clone();
        sorted.sort_unstable();
        assert_eq!(
            sorted,
            ["canon", "safety", "style"],
            "every dimension required"
        );
        let score = &scores["properties"]["canon"]["properties"]["score"];
        let steps: Vec<f64> = score["enum"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_f64().unwrap())
            .collect();
        assert_eq!(steps.len(), 21, "0 to 10 in steps of 0.5: {score}");
        assert_eq!((steps[0], steps[1], steps[20]), (0.0, 0.5, 10.0));
        assert_eq!(
            scores["properties"]["canon"]["required"],
            json!(["score", "reason"])
        );
        orders.push(required.join(","));
    }
    orders.sort();
    assert_eq!(
        orders,
        ["safety,canon,style", "style,canon,safety"],
        "the second judge sees the dimensions reversed, its schema too"
    );
}

/// Answers from a list, in order, then the last one again.
struct Scripted(std::sync::Mutex<Vec<Value>>);

impl Respond for Scripted {
    fn respond(&self, _: &Request) -> ResponseTemplate {
        let mut v = self.0.lock().unwrap();
        let next = if v.len() > 1 {
            v.remove(0)
        } else {
            v[0].clone()
        };
        answer(next)
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn an_answer_off_the_schema_is_repaired_once_then_the_judge_fails_closed() {
    let off_scale = json!({"scores": {"safety": {"score": 11, "reason": "x"}, "canon": {"score": 8, "reason": "x"},
                                      "style": {"score": 6, "reason": "x"}}, "hard_fact_conflict": false});
    // Repaired: off the scale, then a good answer.
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(Scripted(std::sync::Mutex::new(vec![
            off_scale.clone(),
            good(),
        ])))
        .mount(&server)
        .await;
    let dir = tempfile::tempdir().unwrap();
    // One judge on this server, the other on a good one.
    let fine = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(answer(good()))
        .mount(&fine)
        .await;
    policy(dir.path(), &server.uri(), "m", 1);
    let text = std::fs::read_to_string(dir.path().join("policy.yaml"))
        .unwrap()
        .replacen(&server.uri(), &fine.uri(), 2)
        .replacen(&fine.uri(), &server.uri(), 1);
    std::fs::write(dir.path().join("policy.yaml"), text).unwrap();
    candidates(dir.path(), &["a plain answer"]);
    let (code, report) = gate(dir.path(), &["--no-cache"]).await;
    assert_eq!(code, exit_code::SUCCESS, "{report:#}");
    let r = record(&report, 0, 0);
    let attempts = r["attempts"].as_array().unwrap();
    assert_eq!(attempts.len(), 2, "both attempts recorded: {r:#}");
    assert!(
        attempts[0]["error"]
            .as_str()
            .unwrap()
            .contains("`safety` scored 11, not on the scale"),
        "{r:#}"
    );
    assert!(attempts[0]["answer"].as_str().unwrap().contains("11"));
    assert!(attempts[1]["error"].is_null());
    assert_eq!(r["report"]["scores"]["safety"]["score"], 10.0);
    assert_eq!(
        record(&report, 0, 1)["attempts"].as_array().unwrap().len(),
        1
    );
    let sent = bodies(&server).await;
    assert_eq!(sent.len(), 2);
    let messages = sent[1]["messages"].as_array().unwrap();
    assert_eq!(messages.len(), 4, "the answer is sent back with the error");
    assert_eq!(messages[2]["role"], "assistant");
    assert_eq!(messages[2]["content"], off_scale.to_string());
    let repair = messages[3]["content"].as_str().unwrap();
    assert!(
        repair.starts_with("Your answer did not match: `safety` scored 11"),
        "{repair}"
    );
    assert_eq!(sent[1]["response_format"]["type"], "json_schema");
    assert_eq!(report["quality_budget"]["calls"], 3, "the repair is a call");

    // Never repaired: off the schema twice is the judge's error, after exactly two calls.
    let bad = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(answer(json!({"verdict": "fine"})))
        .mount(&bad)
        .await;
    policy(dir.path(), &bad.uri(), "m", 1);
    let (code, report) = gate(dir.path(), &["--no-cache"]).await;
    // No judgement was had at all: the cell is `error` (exit 69), failing closed.
    assert_eq!(code, exit_code::UNAVAILABLE, "{report:#}");
    assert_eq!(report["cells"][0]["quality"]["state"], "unavailable");
    let r = record(&report, 0, 0);
    assert!(
        r["error"]
            .as_str()
            .unwrap()
            .contains("did not match after a repair retry"),
        "{r:#}"
    );
    assert_eq!(r["attempts"].as_array().unwrap().len(), 2, "{r:#}");
    assert_eq!(bodies(&bad).await.len(), 4, "two judges, two calls each");
}

/// The file of a judge record's cache entry: `cache/KEY.json`.
fn entry(dir: &Path, report: &Value, cell: usize, judge: usize) -> PathBuf {
    let key = record(report, cell, judge)["cache"]["key"]
        .as_str()
        .unwrap();
    dir.join("cache").join(format!("{key}.json"))
}

fn statuses(report: &Value) -> Vec<String> {
    report["cells"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|c| c["quality"]["judges"].as_array().unwrap().iter())
        .filter(|j| j["judge"] != "c")
        .map(|j| j["cache"]["status"].as_str().unwrap_or("none").to_string())
        .collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn the_cache_serves_a_repeat_for_nothing_and_misses_on_any_change() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(answer(good()))
        .mount(&server)
        .await;
    let dir = tempfile::tempdir().unwrap();
    let cache = ["--cache", "cache"];
    policy(dir.path(), &server.uri(), "m", 1);
    candidates(dir.path(), &["first answer", "second answer"]);
    let (code, first) = gate(dir.path(), &cache).await;
    assert_eq!(code, exit_code::SUCCESS, "{first:#}");
    assert_eq!(statuses(&first), ["miss"; 4]);
    assert_eq!(bodies(&server).await.len(), 4);
    let stored: Value =
        serde_json::from_str(&std::fs::read_to_string(entry(dir.path(), &first, 0, 0)).unwrap())
            .unwrap();
    assert_eq!(stored["format"], "fibon.judge-cache/v1");
    assert_eq!(stored["answer"], good(), "the validated answer is stored");

    // The same run again: served from the cache, no call, no cost, the same result.
    let (code, again) = gate(dir.path(), &cache).await;
    assert_eq!(code, exit_code::SUCCESS);
    assert_eq!(statuses(&again), ["hit"; 4]);
    assert_eq!(bodies(&server).await.len(), 4, "no model call");
    assert_eq!(again["quality_budget"]["cost_usd"], 0.0);
    assert_eq!(again["quality_budget"]["calls"], 0);
    assert_eq!(again["quality_budget"]["cache_hits"], 4);
    assert!(record(&again, 0, 0)["attempts"].is_null());
    for c in 0..2 {
        assert_eq!(
            again["cells"][c]["quality"]["scores"],
            first["cells"][c]["quality"]["scores"]
        );
        assert_eq!(
            again["cells"][c]["quality"]["blind_id"], first["cells"][c]["quality"]["blind_id"],
            "blind ids seeded: the same run, the same entries"
        );
    }

    // A changed candidate misses (the other one still hits).
    candidates(dir.path(), &["first answer, edited", "second answer"]);
    let (_, edited) = gate(dir.path(), &cache).await;
    assert_eq!(statuses(&edited), ["miss", "miss", "hit", "hit"]);
    assert_eq!(bodies(&server).await.len(), 6);
    // Another seed shows other blind ids: other requests.
    let (_, seeded) = gate(dir.path(), &["--cache", "cache", "--seed", "7"]).await;
    assert_eq!(statuses(&seeded), ["miss"; 4]);
    // Another model, or another policy version, misses.
    policy(dir.path(), &server.uri(), "m2", 1);
    let (_, model) = gate(dir.path(), &cache).await;
    assert_eq!(statuses(&model), ["miss"; 4]);
    policy(dir.path(), &server.uri(), "m", 2);
    let (_, version) = gate(dir.path(), &cache).await;
    assert_eq!(statuses(&version), ["miss"; 4]);
    // A changed rubric (the scale is in the prompt and the schema) misses.
    let text = std::fs::read_to_string(dir.path().join("policy.yaml"))
        .unwrap()
        .replace("step: 0.5", "step: 1");
    std::fs::write(dir.path().join("policy.yaml"), text).unwrap();
    let (_, rubric) = gate(dir.path(), &cache).await;
    assert_eq!(statuses(&rubric), ["miss"; 4]);
    let calls = bodies(&server).await.len();
    assert_eq!(calls, 6 + 4 * 4);
    // Another endpoint serving a model of the same name misses.
    let other = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(answer(good()))
        .mount(&other)
        .await;
    policy(dir.path(), &other.uri(), "m", 1);
    let (_, endpoint) = gate(dir.path(), &cache).await;
    assert_eq!(statuses(&endpoint), ["miss"; 4]);
    assert_eq!(bodies(&other).await.len(), 4);

    // A corrupt entry (cut short, or another answer that does not validate) is a named
    // miss: asked again and rewritten; never a crash or a wrong answer.
    policy(dir.path(), &server.uri(), "m", 1);
    candidates(dir.path(), &["first answer", "second answer"]);
    let a = entry(dir.path(), &first, 0, 0);
    let b = entry(dir.path(), &first, 1, 1);
    std::fs::write(&a, "{\"format\": \"fibon.judge-cache/v1\", \"ke").unwrap();
    let mut wrong = stored.clone();
    wrong["key"] = b.file_stem().unwrap().to_str().unwrap().into();
    wrong["answer"] = json!({"scores": {"safety": {"score": 99}}});
    std::fs::write(&b, wrong.to_string()).unwrap();
    let (code, repaired) = gate(dir.path(), &cache).await;
    assert_eq!(code, exit_code::SUCCESS, "{repaired:#}");
    assert_eq!(statuses(&repaired), ["corrupt", "hit", "hit", "corrupt"]);
    let note = record(&repaired, 0, 0)["cache"]["note"].as_str().unwrap();
    assert!(note.ends_with("is not JSON"), "{note}");
    let note = record(&repaired, 1, 1)["cache"]["note"].as_str().unwrap();
    assert!(note.contains("its answer does not match"), "{note}");
    assert_eq!(bodies(&server).await.len(), calls + 2);
    let (_, healed) = gate(dir.path(), &cache).await;
    assert_eq!(
        statuses(&healed),
        ["hit"; 4],
        "rewritten entries serve again"
    );

    // --no-cache asks again and records no cache use; `cache clear` empties it.
    let (_, uncached) = gate(dir.path(), &["--no-cache"]).await;
    assert_eq!(statuses(&uncached), ["none"; 4]);
    assert_eq!(bodies(&server).await.len(), calls + 6);
    std::fs::write(dir.path().join("cache/keep.txt"), "mine").unwrap();
    let out = fibon(dir.path())
        .args(["cache", "clear", "--cache", "cache"])
        .output()
        .unwrap();
    assert_eq!(common::code(&out), exit_code::SUCCESS);
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(said.starts_with("removed "), "{said}");
    let left: Vec<String> = std::fs::read_dir(dir.path().join("cache"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(left, ["keep.txt"], "only the cache's own files are removed");
    let (_, cleared) = gate(dir.path(), &cache).await;
    assert_eq!(statuses(&cleared), ["miss"; 4]);
}

#[tokio::test(flavor = "multi_thread")]
async fn an_unwritable_cache_folder_is_refused_before_any_judge_is_asked() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(answer(good()))
        .mount(&server)
        .await;
    let dir = tempfile::tempdir().unwrap();
    policy(dir.path(), &server.uri(), "m", 1);
    candidates(dir.path(), &["an answer"]);
    std::fs::write(dir.path().join("file"), "").unwrap();
    let path = dir.path().to_path_buf();
    let out = tokio::task::spawn_blocking(move || {
        fibon(&path)
            .args([
                "gate",
                "--candidates",
                "candidates.jsonl",
                "--policy",
                "policy.yaml",
                "--cache",
                "file/cache",
            ])
            .output()
            .unwrap()
    })
    .await
    .unwrap();
    assert_eq!(code(&out), exit_code::USAGE);
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(said.contains("file/cache"), "{said}");
    assert!(bodies(&server).await.is_empty());
}
