//! `audit` and `sample` at production-log scale: an audit on every core writes what one
//! thread writes; `--shard K/N` reports of either, merged, are the unsharded report cell
//! for cell; several histories (named, or a pattern) are read as one; merge refuses
//! shards that overlap, are missing or come from different samples.

mod common;

use std::path::Path;

use common::{code, fibon, root};
use fibon_verify::exit_code;
use serde_json::{Value, json};

/// The shipped `fetch_anthropic_models` contract, and `docs` (search, then read_page).
fn project(dir: &Path, agent: &str) {
    std::fs::create_dir_all(dir.join("contracts")).unwrap();
    std::fs::copy(
        root().join("contracts/fetch_anthropic_models.json"),
        dir.join("contracts/fetch_anthropic_models.json"),
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

/// Conversation `i` of the `docs` plan: search, then read the page found.
fn recorded(i: usize) -> String {
    let url = format!("https://docs.example.com/page-{i}");
    let answer = if i.is_multiple_of(7) {
        format!("answer {i}: the limit is {} requests per minute", i * 10)
    } else {
        format!("answer {i}")
    };
    json!({
        "id": format!("conv-{i:04}"), "skill": "docs", "input": format!("question number {i}"),
        "trace": [
            {"tool": "search", "arguments": {"query": format!("question number {i}")}, "result": {"content": [{"type": "text", "text": format!("see {url}")}], "isError": false}},
            {"tool": "read_page", "arguments": {"url": url}, "result": {"content": [{"type": "text", "text": format!("answer {i}")}], "isError": false}}
        ],
        "output": answer, "status": "ok"
    })
    .to_string()
}

/// 300 lines of every kind an audit meets: passes, unsupported facts, silent degradation,
/// a Skill with no contract, lines that are not conversations, an OTLP export request.
fn varied_history() -> Vec<u8> {
    let otlp =
        std::fs::read_to_string(root().join("tests/fixtures/otlp/genai-export.jsonl")).unwrap();
    let mut out = Vec::new();
    for i in 0..300 {
        let line = match i % 50 {
            13 => json!({"id": format!("silent-{i}"), "skill": "fetch_anthropic_models", "input": "latest?", "trace": [{"tool": "read_page", "arguments": {"url": "https://docs.anthropic.com/x"}, "error": {"code": "TOOL_NOT_FOUND", "message": "no"}}], "output": "It is claude-3-5-sonnet-20241022.", "status": "ok"}).to_string(),
            21 => json!({"id": format!("other-{i}"), "skill": "billing", "input": "x"}).to_string(),
            29 => "not json".to_string(),
            31 => r#"{"skill": "docs"}"#.to_string(),
            37 if i == 37 => otlp.lines().next().unwrap().to_string(),
            _ => recorded(i),
        };
        out.extend(line.into_bytes());
        out.push(b'\n');
        if i == 100 {
            out.extend(b"{\"id\": \"latin1\", \"input\": \"caf\xe9\"}\n\n");
        }
    }
    out
}

/// `audit` in `dir` with `args`, its report in `dir/REPORT_DIR`: the exit code and the report.
fn audit(dir: &Path, report_dir: &str, args: &[&str]) -> (i32, Value) {
    let out = fibon(dir)
        .args(["audit", "--report-dir", report_dir])
        .args(args)
        .output()
        .unwrap();
    let text = std::fs::read_to_string(dir.join(report_dir).join("report.json"))
        .unwrap_or_else(|_| panic!("{}", String::from_utf8_lossy(&out.stderr)));
    (code(&out), serde_json::from_str(&text).unwrap())
}

/// A report.json's text without the run's timings (when it started, how long it took).
fn untimed(text: &str) -> String {
    let text = regex::Regex::new(r#"(?m)^  "(started_at|duration_ms)": [^\n]*\n"#)
        .unwrap()
        .replace_all(text, "");
    regex::Regex::new(r#" time="[^"]*""#)
        .unwrap()
        .replace_all(&text, "")
        .into_owned()
}

fn merge(dir: &Path, report_dir: &str, reports: &[String]) -> (i32, String) {
    let out = fibon(dir)
        .args(["merge", "--report-dir", report_dir])
        .args(reports)
        .output()
        .unwrap();
    (
        code(&out),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn cells(report: &Value) -> &Vec<Value> {
    report["cells"].as_array().unwrap()
}

#[test]
fn an_audit_on_every_core_writes_what_one_thread_writes() {
    let dir = tempfile::tempdir().unwrap();
    project(dir.path(), "print('{}')");
    std::fs::write(dir.path().join("history.jsonl"), varied_history()).unwrap();
    let (one, report) = audit(
        dir.path(),
        "one",
        &["--history", "history.jsonl", "--jobs", "1"],
    );
    assert_eq!(one, exit_code::combine(vec![1, 2, 69]), "{report:#}");
    assert_eq!(report["summary"]["cells"], 302, "{:#}", report["summary"]);
    for jobs in ["2", "5"] {
        let (code, _) = audit(
            dir.path(),
            jobs,
            &["--history", "history.jsonl", "--jobs", jobs],
        );
        assert_eq!(code, one);
        for file in ["report.json", "junit.xml"] {
            let read = |d: &str| std::fs::read_to_string(dir.path().join(d).join(file)).unwrap();
            assert_eq!(
                untimed(&read(jobs)),
                untimed(&read("one")),
                "--jobs {jobs}: {file}"
            );
        }
    }
    // The default is every core: the same again.
    let (code, default) = audit(dir.path(), "default", &["--history", "history.jsonl"]);
    assert_eq!((code, cells(&default)), (one, cells(&report)));
}

#[test]
fn audit_shards_merged_are_the_whole_audit_cell_for_cell() {
    let dir = tempfile::tempdir().unwrap();
    project(dir.path(), "print('{}')");
    std::fs::write(dir.path().join("history.jsonl"), varied_history()).unwrap();
    for filter in [&[][..], &["--skill", "docs"][..]] {
        let (whole_code, whole) = audit(
            dir.path(),
            "whole",
            &[&["--history", "history.jsonl"], filter].concat(),
        );
        let mut reports = Vec::new();
        let mut sizes = Vec::new();
        for k in 1..=3 {
            let shard = format!("{k}/3");
            let report_dir = format!("shard-{k}");
            let (_, r) = audit(
                dir.path(),
                &report_dir,
                &[
                    &[
                        "--history",
                        "history.jsonl",
                        "--shard",
                        &shard,
                        "--jobs",
                        "2",
                    ],
                    filter,
                ]
                .concat(),
            );
            assert_eq!(r["shard"], shard.as_str());
            sizes.push(cells(&r).len());
            reports.push(format!("{report_dir}/report.json"));
        }
        assert!(
            sizes.iter().all(|n| *n > 50),
            "{sizes:?}: every shard has its share"
        );
        let (merged_code, stderr) = merge(dir.path(), "merged", &reports);
        assert_eq!(merged_code, whole_code, "{stderr}");
        let merged: Value = serde_json::from_str(
            &std::fs::read_to_string(dir.path().join("merged/report.json")).unwrap(),
        )
        .unwrap();
        // Every cell, all of it (id, index, verdict, findings, trace), in history order.
        assert_eq!(cells(&merged), cells(&whole), "{filter:?}");
        assert_eq!(merged["summary"], whole["summary"]);
        assert_eq!(merged["exit_code"], whole["exit_code"]);
    }
    // Overlapping and missing shards are refused, naming them.
    let (code, stderr) = merge(
        dir.path(),
        "bad",
        &[
            "shard-1/report.json".into(),
            "shard-1/report.json".into(),
            "shard-3/report.json".into(),
        ],
    );
    assert_eq!(code, exit_code::INVALID_INPUT, "{stderr}");
    assert!(stderr.contains("both shard 1/3"), "{stderr}");
    let (code, stderr) = merge(
        dir.path(),
        "bad",
        &["shard-1/report.json".into(), "shard-3/report.json".into()],
    );
    assert_eq!(code, exit_code::INVALID_INPUT, "{stderr}");
    assert!(stderr.contains("shard 2/3 missing"), "{stderr}");
}

#[test]
fn several_histories_are_read_as_one_and_a_pattern_names_them() {
    let dir = tempfile::tempdir().unwrap();
    project(dir.path(), "print('{}')");
    let all = varied_history();
    let lines: Vec<&[u8]> = all.split_inclusive(|b| *b == b'\n').collect();
    std::fs::create_dir_all(dir.path().join("logs/2026-12-01")).unwrap();
    let (first, second) = lines.split_at(150);
    std::fs::write(dir.path().join("logs/2026-12-01/h09.jsonl"), first.concat()).unwrap();
    std::fs::write(
        dir.path().join("logs/2026-12-01/h10.jsonl"),
        second.concat(),
    )
    .unwrap();
    std::fs::write(dir.path().join("logs/2026-12-01/notes.txt"), "not a log").unwrap();
    let (code_named, named) = audit(
        dir.path(),
        "named",
        &[
            "--history",
            "logs/2026-12-01/h09.jsonl",
            "--history",
            "logs/2026-12-01/h10.jsonl",
        ],
    );
    let (code_glob, globbed) = audit(dir.path(), "glob", &["--history", "logs/*/h*.jsonl"]);
    assert_eq!((code_glob, cells(&globbed)), (code_named, cells(&named)));
    let ids: Vec<&str> = cells(&named)
        .iter()
        .map(|c| c["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids.len(), 302);
    // A line that is not a conversation is named by its file and its line there.
    assert!(
        ids.contains(&"logs/2026-12-01/h09.jsonl:line-30"),
        "{ids:?}"
    );
    let bad = cells(&named)
        .iter()
        .find(|c| {
            c["id"]
                .as_str()
                .unwrap()
                .starts_with("logs/2026-12-01/h10.jsonl:line-")
        })
        .expect("a bad line of the second file");
    let line = bad["id"].as_str().unwrap().rsplit('-').next().unwrap();
    assert!(
        bad["findings"][0]["message"]
            .as_str()
            .unwrap()
            .starts_with(&format!("logs/2026-12-01/h10.jsonl, line {line}: ")),
        "{bad:#}"
    );
    // Conversations keep their ids, in the files' order.
    let whole: Vec<&str> = ids
        .iter()
        .copied()
        .filter(|id| !id.contains("line-"))
        .collect();
    assert!(
        whole.windows(2).any(|w| w == ["conv-0149", "conv-0150"]),
        "{whole:?}"
    );
    // A pattern that matches nothing, and a file named twice, are refused.
    for args in [
        &["--history", "logs/*.yaml"][..],
        &[
            "--history",
            "logs/2026-12-01/h09.jsonl",
            "--history",
            "logs/*/h0*.jsonl",
        ][..],
    ] {
        let out = fibon(dir.path()).arg("audit").args(args).output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(code(&out), exit_code::USAGE, "{stderr}");
        assert!(
            stderr.contains("no file matches this pattern") || stderr.contains("named twice"),
            "{stderr}"
        );
    }
}

/// Searches, then reads the page found — except for questions whose number is a multiple
/// of 4, where it guesses a page: unstable on those conversations, on every run.
const HALF_STABLE: &str = "import sys, json, re, urllib.request\nreq = json.load(sys.stdin)\nbase = req['tools']['http_url']\ndef call(t, a):\n    r = urllib.request.Request(base + '/' + t, data=json.dumps(a).encode(), method='POST')\n    try:\n        return ''.join(p.get('text', '') for p in json.loads(urllib.request.urlopen(r).read())['content'])\n    except Exception:\n        return ''\nn = int(req['input'].split()[-1])\nif n % 4 == 0:\n    answer = call('read_page', {'url': 'https://docs.example.com/guess'})\nelse:\n    found = call('search', {'query': req['input']})\n    m = re.search(r'https://\\S+', found)\n    answer = call('read_page', {'url': m.group(0)}) if m else ''\nprint(json.dumps({'output': answer}))";

fn sample(dir: &Path, report_dir: &str, extra: &[&str]) -> (i32, Value, String) {
    let out = fibon(dir)
        .args([
            "sample",
            "--history",
            "history.jsonl",
            "--rate",
            "0.5",
            "--seed",
            "3",
            "--max-instability",
            "0.2",
            "--report-dir",
            report_dir,
        ])
        .args(extra)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    let text = std::fs::read_to_string(dir.join(report_dir).join("report.json"))
        .unwrap_or_else(|_| panic!("{stderr}"));
    (code(&out), serde_json::from_str(&text).unwrap(), stderr)
}

/// What a sampled cell says, without the timings of its replay.
fn outcome(c: &Value) -> Value {
    let calls: Vec<&Value> = c["trace"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["op"] == "call")
        .map(|e| &e["tool"])
        .collect();
    json!([
        c["id"],
        c["index"],
        c["skill"],
        c["verdict"],
        c["behavior"],
        c["findings"],
        c["output"],
        calls
    ])
}

#[test]
fn sample_shards_merged_are_the_whole_sample_with_its_stability_per_skill() {
    let dir = tempfile::tempdir().unwrap();
    project(dir.path(), HALF_STABLE);
    let mut lines: Vec<String> = (1..=24).map(recorded).collect();
    lines.insert(5, "{broken line".into());
    std::fs::write(dir.path().join("history.jsonl"), lines.join("\n") + "\n").unwrap();
    let (whole_code, whole, stderr) = sample(dir.path(), "whole", &[]);
    assert_eq!(whole_code, exit_code::combine(vec![6, 69]), "{stderr}");
    let skill = &whole["sampling"]["skills"]["docs"];
    assert!(
        skill["unstable"].as_u64().unwrap() >= 1 && skill["locked"] == true,
        "{skill:#}"
    );
    let mut reports = Vec::new();
    for k in 1..=2 {
        let shard = format!("{k}/2");
        let (_, r, stderr) = sample(dir.path(), &format!("s{k}"), &["--shard", &shard]);
        assert_eq!(r["shard"], shard.as_str(), "{stderr}");
        assert!(
            !cells(&r).is_empty(),
            "shard {shard} replayed nothing: {stderr}"
        );
        reports.push(format!("s{k}/report.json"));
    }
    let (merged_code, stderr) = merge(dir.path(), "merged", &reports);
    assert_eq!(merged_code, whole_code, "{stderr}");
    assert!(
        stderr.contains("docs: "),
        "each Skill's line is said: {stderr}"
    );
    let merged: Value = serde_json::from_str(
        &std::fs::read_to_string(dir.path().join("merged/report.json")).unwrap(),
    )
    .unwrap();
    let outcomes = |r: &Value| cells(r).iter().map(outcome).collect::<Vec<_>>();
    assert_eq!(outcomes(&merged), outcomes(&whole));
    assert_eq!(merged["summary"], whole["summary"]);
    // Stability over the whole sample: the same counts, rate, examples and lock.
    assert_eq!(merged["sampling"]["skills"], whole["sampling"]["skills"]);
    assert_eq!(merged["sampling"]["unstable_skills"], json!(["docs"]));
    // The dry run of a shard lists that shard's share of the selection.
    let ids = |extra: &[&str]| -> Vec<String> {
        let out = fibon(dir.path())
            .args([
                "sample",
                "--history",
                "history.jsonl",
                "--rate",
                "0.5",
                "--seed",
                "3",
                "--dry-run",
            ])
            .args(extra)
            .output()
            .unwrap();
        String::from_utf8(out.stdout)
            .unwrap()
            .lines()
            .map(String::from)
            .collect()
    };
    let mut both = [ids(&["--shard", "1/2"]), ids(&["--shard", "2/2"])].concat();
    both.sort();
    assert_eq!(both, ids(&[]));
    // Shards of another sample (another similarity threshold) are refused.
    let (_, _, _) = sample(
        dir.path(),
        "other",
        &["--shard", "2/2", "--min-similarity", "0.9"],
    );
    let (code, stderr) = merge(
        dir.path(),
        "bad",
        &["s1/report.json".into(), "other/report.json".into()],
    );
    assert_eq!(code, exit_code::INVALID_INPUT, "{stderr}");
    assert!(
        stderr.contains("shards of different samples: their `sampling.min_similarity` differs"),
        "{stderr}"
    );
}
