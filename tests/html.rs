//! report.html in a real browser (Debian's `chromium`, headless, driven over the DevTools
//! protocol on a pipe by tests/browser/cdp.py): the grid matches report.json, a filter
//! hides what it should, a cell's details open, nothing is fetched and nothing is logged;
//! an answer that is markup stays text; secrets stay redacted. And `--baseline` with
//! `--fail-on new`: a pull request that breaks one Skill fails, main's known failures
//! do not.

mod common;

use std::path::{Path, PathBuf};

use common::{code, fibon, root};
use fibon_verify::exit_code;
use serde_json::{Value, json};

/// What cdp.py saw of `page` (at `#hash`), with the values of `evals` in order.
fn browse(page: &Path, hash: &str, evals: &[&str]) -> Value {
    let mut cmd = std::process::Command::new("python3");
    cmd.arg(root().join("tests/browser/cdp.py"))
        .arg(page)
        .args(["--hash", hash]);
    for e in evals {
        cmd.args(["--eval", e]);
    }
    let out = cmd.output().expect("python3 runs");
    assert!(
        out.status.success(),
        "cdp.py failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

/// Nothing but the page itself was requested, and nothing was logged or thrown.
fn quiet(seen: &Value, page: &Path) {
    let url = format!("file://{}", page.canonicalize().unwrap().display());
    let requests: Vec<&str> = seen["requests"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r.as_str().unwrap())
        .collect();
    assert!(
        requests
            .iter()
            .all(|r| r.split('#').next() == Some(url.as_str())),
        "{requests:?}"
    );
    assert_eq!(seen["console"], json!([]), "{seen}");
    assert_eq!(seen["exceptions"], json!([]), "{seen}");
}

fn naive_run(dir: &Path, extra: &[&str]) -> (i32, Value) {
    let out = fibon(&root())
        .args(["run", "--config", "fibon.naive.yaml", "--format", "json"])
        .args(["--report-dir", dir.to_str().unwrap()])
        .args(extra)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    let report = serde_json::from_slice(&out.stdout).unwrap_or_else(|_| panic!("{stderr}"));
    (code(&out), report)
}

#[test]
fn the_naive_matrix_page_matches_its_report_filters_and_opens_a_cell() {
    let dir = tempfile::tempdir().unwrap();
    let (code, report) = naive_run(dir.path(), &[]);
    assert_eq!(code, exit_code::SILENT_DEGRADATION);
    let page = dir.path().join("report.html");
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(!html.contains("http://") || !html.contains("src=\"http"));
    assert!(
        !html.contains("<link") && !html.contains("@import"),
        "nothing external"
    );
    let silent = report["cells"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["verdict"] == "silent_degradation" && c["fault"] == "TIMEOUT")
        .unwrap()["id"]
        .as_str()
        .unwrap()
        .to_string();
    let seen = browse(
        &page,
        "",
        &[
            // Every chip: its id, verdict, Skill and quadrant as the page placed it.
            "[...document.querySelectorAll('.cell')].map(b => [b.dataset.id, b.dataset.verdict, b.closest('.skill').dataset.skill, b.closest('.quad').dataset.quadrant])",
            "[...document.querySelectorAll('.quad')].map(q => [q.closest('.skill').dataset.skill, q.dataset.quadrant, q.querySelector('.qcount').textContent])",
            // The verdict filter: only passing cells stay.
            "(() => { const s = document.getElementById('filter-verdict'); s.value = 'pass'; s.dispatchEvent(new Event('change')); return [...document.querySelectorAll('.cell')].filter(b => !b.hidden).map(b => b.dataset.verdict); })()",
            "(() => { const s = document.getElementById('filter-verdict'); s.value = '*'; s.dispatchEvent(new Event('change')); const f = document.getElementById('filter-fault'); f.value = 'TIMEOUT'; f.dispatchEvent(new Event('change')); return [...document.querySelectorAll('.cell')].filter(b => !b.hidden).map(b => b.dataset.id); })()",
            // One click on a silent cell: why, the marked answer, the dual track, the trace.
            &format!(
                "(() => {{ document.querySelector('.cell[data-id=\"{silent}\"]').click(); return {{why: document.getElementById('why').textContent, marked: [...document.querySelectorAll('#answer mark.unsupported')].map(m => m.textContent), dual: !!document.querySelector('[data-dual-track]'), trace: document.querySelectorAll('#trace tbody tr').length, hash: location.hash}}; }})()"
            ),
        ],
    );
    quiet(&seen, &page);
    let r = &seen["results"];
    let cells = report["cells"].as_array().unwrap();
    let want: Vec<Value> = cells
        .iter()
        .map(|c| json!([c["id"], c["verdict"], c["skill"], c["quadrant"]]))
        .collect();
    let mut got = r[0].as_array().unwrap().clone();
    let key = |v: &Value| v[0].as_str().unwrap().to_string();
    got.sort_by_key(key);
    let mut want = want;
    want.sort_by_key(key);
    assert_eq!(got, want);
    // The count in each quadrant is the report's.
    for q in r[1].as_array().unwrap() {
        let (skill, quadrant, text) = (&q[0], &q[1], q[2].as_str().unwrap());
        let n = cells
            .iter()
            .filter(|c| &c["skill"] == skill && &c["quadrant"] == quadrant)
            .count();
        let shown: usize = text
            .split(" · ")
            .filter_map(|p| p.split(' ').next()?.parse::<usize>().ok())
            .sum();
        assert_eq!(shown, n, "{skill} {quadrant}: {text}");
    }
    let passing = report["summary"]["pass"].as_u64().unwrap() as usize;
    assert_eq!(r[2].as_array().unwrap().len(), passing);
    assert!(r[2].as_array().unwrap().iter().all(|v| v == "pass"));
    let timeouts = cells.iter().filter(|c| c["fault"] == "TIMEOUT").count();
    assert_eq!(r[3].as_array().unwrap().len(), timeouts);
    let d = &r[4];
    assert!(
        d["why"]
            .as_str()
            .unwrap()
            .starts_with("silent degradation under TIMEOUT"),
        "{d}"
    );
    assert!(!d["marked"].as_array().unwrap().is_empty(), "{d}");
    assert_eq!(d["dual"], true);
    assert!(d["trace"].as_u64().unwrap() >= 1, "{d}");
    assert!(d["hash"].as_str().unwrap().contains("cell="), "{d}");
    // The address opens the same cell.
    let again = browse(
        &page,
        &format!("cell={silent}"),
        &["document.querySelector('#details h2').textContent"],
    );
    assert_eq!(again["results"][0], json!(silent));
}

/// A project of the shipped Skills whose agent is `naive` for the Skills named in
/// `naive.txt` beside it, and grounded for the others.
fn project(dir: &Path) -> PathBuf {
    for sub in ["contracts", "scenarios"] {
        copy(&root().join(sub), &dir.join(sub));
    }
    std::fs::write(
        dir.join("agent.py"),
        r#"import json, pathlib, subprocess, sys
req = sys.stdin.read()
naive = pathlib.Path(__file__).with_name("naive.txt").read_text().split()
mode = "naive" if json.loads(req)["skill"] in naive else "grounded"
sys.exit(subprocess.run([sys.argv[1], "agent", "--mode", mode], input=req.encode()).returncode)
"#,
    )
    .unwrap();
    let config = dir.join("fibon.yaml");
    std::fs::write(
        &config,
        format!(
            "target:\n  kind: command\n  command: [python3, agent.py, {:?}]\n  timeout: 30s\nmatrix:\n  jobs: 4\n  timeout_fault_delay: 1s\n",
            env!("CARGO_BIN_EXE_fibon-verify")
        ),
    )
    .unwrap();
    config
}

fn copy(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        if e.file_type().unwrap().is_dir() {
            copy(&e.path(), &to.join(e.file_name()));
        } else {
            std::fs::copy(e.path(), to.join(e.file_name())).unwrap();
        }
    }
}

fn run_in(dir: &Path, report_dir: &str, args: &[&str]) -> (i32, Value, String) {
    let summary = dir.join(format!("{report_dir}.summary.md"));
    let out = fibon(dir)
        .args(["run", "--format", "json", "--report-dir", report_dir])
        .args(args)
        .env("GITHUB_ACTIONS", "true")
        .env("GITHUB_STEP_SUMMARY", &summary)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    let report = serde_json::from_slice(&out.stdout).unwrap_or_else(|_| panic!("{stderr}"));
    let md = std::fs::read_to_string(summary).unwrap_or_default();
    (code(&out), report, format!("{stderr}\n{md}"))
}

#[test]
fn a_pull_request_that_breaks_one_skill_fails_the_new_gate_and_mains_known_failures_do_not() {
    let dir = tempfile::tempdir().unwrap();
    project(dir.path());
    let naive = dir.path().join("naive.txt");
    // main: search_docs is known to degrade silently.
    std::fs::write(&naive, "search_docs\n").unwrap();
    let (code, main, _) = run_in(dir.path(), "main", &[]);
    assert_eq!(code, exit_code::SILENT_DEGRADATION);
    let known = main["summary"]["silent_degradation"].as_u64().unwrap();
    assert!(known > 0);
    // main against itself, gating on new failures only: its known failures pass.
    let (code, same, _) = run_in(
        dir.path(),
        "again",
        &["--baseline", "main/report.json", "--fail-on", "new"],
    );
    assert_eq!(code, exit_code::SUCCESS, "{}", same["baseline"]);
    assert_eq!(same["baseline"]["counts"]["still_failing"], known);
    assert_eq!(same["baseline"]["counts"]["new_failure"], 0);
    // Without --fail-on new the same run fails, as it always did.
    let (code, _, _) = run_in(dir.path(), "all", &["--baseline", "main/report.json"]);
    assert_eq!(code, exit_code::SILENT_DEGRADATION);

    // The pull request breaks contract_review too.
    std::fs::write(&naive, "search_docs\ncontract_review\n").unwrap();
    let (code, pr, shown) = run_in(
        dir.path(),
        "pr",
        &["--baseline", "main/report.json", "--fail-on", "new"],
    );
    assert_eq!(code, exit_code::SILENT_DEGRADATION);
    let b = &pr["baseline"];
    assert_eq!(b["fail_on"], "new");
    assert_eq!(b["counts"]["still_failing"], known);
    let new: Vec<&Value> = b["cells"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["change"] == "new_failure")
        .collect();
    assert!(!new.is_empty());
    assert!(new.iter().all(
        |e| e["id"].as_str().unwrap().starts_with("contract_review/")
            && e["was"] == "pass"
            && e["now"] == "silent_degradation"
    ));
    // What changed comes first in the listing, the table and the job summary.
    assert_eq!(b["cells"][0]["change"], "new_failure");
    assert!(shown.contains("NEW_FAILURE contract_review/"), "{shown}");
    let md = shown.split_once("## ").map(|(_, md)| md).unwrap();
    let (before_counts, _) = md.split_once("| pass |").unwrap();
    assert!(before_counts.contains("**new_failure**"), "{md}");
    // JUnit says so per testcase.
    let junit = std::fs::read_to_string(dir.path().join("pr/junit.xml")).unwrap();
    assert!(junit.contains("<property name=\"baseline\" value=\"new_failure\"/>"));
    assert!(junit.contains("<property name=\"baseline\" value=\"still_failing\"/>"));
    // And the page: the change on each chip, the comparison on top.
    let page = dir.path().join("pr/report.html");
    let seen = browse(
        &page,
        "change=new_failure",
        &[
            "[...document.querySelectorAll('.cell')].filter(b => !b.hidden).map(b => b.dataset.id)",
            "document.getElementById('baseline').textContent",
        ],
    );
    quiet(&seen, &page);
    assert_eq!(seen["results"][0].as_array().unwrap().len(), new.len());
    assert!(seen["results"][1].as_str().unwrap().contains("new_failure"));

    // A scenario edited in the pull request is not compared with main's.
    let scenario = dir.path().join("scenarios/contract_review/simple.yaml");
    if let Ok(text) = std::fs::read_to_string(&scenario) {
        std::fs::write(&scenario, format!("{text}\n# edited\n")).unwrap();
        let (_, edited, _) = run_in(
            dir.path(),
            "edited",
            &["--baseline", "main/report.json", "--fail-on", "new"],
        );
        let inc: Vec<&Value> = edited["baseline"]["cells"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|e| e["change"] == "incomparable")
            .collect();
        assert!(!inc.is_empty(), "{}", edited["baseline"]);
        assert!(
            inc[0]["note"]
                .as_str()
                .unwrap()
                .contains("scenario version")
        );
    }
}

#[test]
fn a_baseline_that_cannot_be_read_or_is_not_a_report_is_refused_before_any_cell() {
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("bad.json");
    std::fs::write(&bad, "{\"schema\": \"something/v9\", \"cells\": []}").unwrap();
    for (path, want, says) in [
        (
            dir.path().join("missing.json"),
            exit_code::USAGE,
            "missing.json",
        ),
        (
            bad.clone(),
            exit_code::INVALID_INPUT,
            "not a usable baseline",
        ),
    ] {
        let out = fibon(&root())
            .args(["run", "--config", "fibon.naive.yaml", "--baseline"])
            .arg(&path)
            .args(["--report-dir", dir.path().join("r").to_str().unwrap()])
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(code(&out), want, "{stderr}");
        assert!(stderr.contains(says), "{stderr}");
        assert!(!dir.path().join("r/report.json").exists());
    }
    // --fail-on needs a baseline.
    let out = fibon(&root())
        .args(["merge", "x.json", "--fail-on", "new"])
        .output()
        .unwrap();
    assert_eq!(code(&out), exit_code::USAGE);
}

#[test]
fn an_answer_that_is_markup_is_shown_as_text_and_secrets_stay_redacted() {
    let dir = tempfile::tempdir().unwrap();
    project(dir.path());
    let hostile =
        "</script><script>window.pwned=1</script><img src=x onerror=\"window.pwned=2\"><!-- key: ";
    std::fs::write(
        dir.path().join("hostile.py"),
        format!(
            "import json, os, sys\nsys.stdin.read()\nprint(json.dumps({{\"output\": {hostile:?} + os.environ['API_KEY'], \"status\": \"ok\"}}))\n"
        ),
    )
    .unwrap();
    std::fs::write(
        dir.path().join("fibon.yaml"),
        "target:\n  kind: command\n  command: [python3, hostile.py]\n  env: {API_KEY: \"${FIBON_TEST_KEY}\"}\nmatrix: {timeout_fault_delay: 1s}\n",
    )
    .unwrap();
    let key = "sk-canary-html-0123456789abcdef";
    let out = fibon(dir.path())
        .args(["run", "--skill", "search_docs", "--html", "page.html"])
        .env("FIBON_TEST_KEY", key)
        .output()
        .unwrap();
    assert!(code(&out) != exit_code::SUCCESS);
    let page = dir.path().join("page.html");
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(!html.contains(key), "the key reached report.html");
    assert!(html.contains("[redacted:FIBON_TEST_KEY]"));
    assert_eq!(html.matches("</script>").count(), 4, "only the page's own");
    let seen = browse(
        &page,
        "",
        &[
            "document.querySelector('.cell').click(); [String(window.pwned), document.querySelectorAll('#app img, #app script').length, document.getElementById('answer').textContent]",
        ],
    );
    quiet(&seen, &page);
    let r = &seen["results"][0];
    assert_eq!(r[0], "undefined");
    assert_eq!(r[1], 0);
    assert_eq!(
        r[2].as_str().unwrap(),
        format!("{hostile}[redacted:FIBON_TEST_KEY]")
    );
}

#[test]
fn report_html_false_turns_it_off_and_html_places_it() {
    let dir = tempfile::tempdir().unwrap();
    project(dir.path());
    let config = dir.path().join("fibon.yaml");
    let text = std::fs::read_to_string(&config).unwrap();
    std::fs::write(&config, format!("{text}report:\n  html: false\n")).unwrap();
    std::fs::write(dir.path().join("naive.txt"), "").unwrap();
    let (_, _, _) = run_in(dir.path(), "off", &["--skill", "search_docs"]);
    assert!(dir.path().join("off/report.json").exists());
    assert!(!dir.path().join("off/report.html").exists());
    // A folder that does not exist is refused before any cell, naming the path.
    let out = fibon(dir.path())
        .args([
            "run",
            "--skill",
            "search_docs",
            "--html",
            "elsewhere/page.html",
        ])
        .output()
        .unwrap();
    assert_eq!(code(&out), exit_code::USAGE);
    assert!(String::from_utf8_lossy(&out.stderr).contains("elsewhere/page.html"));
    std::fs::create_dir(dir.path().join("elsewhere")).unwrap();
    let (_, _, _) = run_in(
        dir.path(),
        "on",
        &["--skill", "search_docs", "--html", "elsewhere/page.html"],
    );
    assert!(dir.path().join("elsewhere/page.html").exists());
    assert!(!dir.path().join("on/report.html").exists());
    // merge writes one too, beside its report.json.
    let out = fibon(dir.path())
        .args(["merge", "on/report.json", "--report-dir", "merged"])
        .output()
        .unwrap();
    assert_eq!(
        code(&out),
        exit_code::SUCCESS,
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(dir.path().join("merged/report.html").exists());
}
