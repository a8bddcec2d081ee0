//! The blind corpora (`tests/fixtures/corpora/`, written by people who saw neither the
//! code nor the earlier corpora) through the real CLI path: `fibon-verify audit` over
//! each corpus's History JSONL, its report.json scored against the labels every line
//! carries. Prints accuracy per class and language and silent-degradation precision and
//! recall; fails when a class falls below 0.95.

mod common;

use std::collections::BTreeMap;

use common::{code, fibon, root};
use serde_json::Value;

const FLOOR: f64 = 0.95;

/// Classes that measured below [`FLOOR`] when their corpus was added, held at the figure
/// they reached so they cannot slip further (README, "Verdicts on wording nobody tuned
/// for"). Raise an entry when a change lifts it; remove it once the class clears 0.95.
const BELOW_FLOOR: &[(&str, &str, f64)] = &[
    ("fresh-2", "added_fact", 0.94),
    ("fresh-3", "added_fact", 0.88),
    ("fresh-5", "added_fact", 0.88),
    ("fresh-8", "added_fact", 0.94),
    ("fresh-13", "added_fact", 0.92),
    ("fresh-14", "added_fact", 0.92),
    ("fresh-20", "added_fact", 0.92),
    ("fresh-23", "added_fact", 0.94),
    ("fresh-25", "added_fact", 0.94),
    ("fresh-26", "added_fact", 0.91),
    ("fresh-27", "added_fact", 0.94),
    ("fresh-27", "refusal", 0.92),
    ("fresh-27", "silent_degradation_precision", 0.93),
];

fn floor(corpus: &str, class: &str) -> f64 {
    BELOW_FLOOR
        .iter()
        .find(|(c, k, _)| *c == corpus && *k == class)
        .map_or(FLOOR, |(_, _, f)| *f)
}

struct Tally {
    right: usize,
    all: usize,
}

fn score(corpus: &str) -> Vec<String> {
    let dir = tempfile::tempdir().unwrap();
    let history = root().join(format!("tests/fixtures/corpora/{corpus}/history.jsonl"));
    let out = fibon(&root().join("tests/fixtures/corpora/project"))
        .args(["audit", "--history"])
        .arg(&history)
        .arg("--report-dir")
        .arg(dir.path())
        .output()
        .unwrap();
    // Silent degradation is in every corpus, so audit exits 1.
    assert_eq!(
        code(&out),
        1,
        "{corpus}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report: Value =
        serde_json::from_slice(&std::fs::read(dir.path().join("report.json")).unwrap()).unwrap();
    let verdicts: BTreeMap<String, String> = report["cells"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            (
                c["id"].as_str().unwrap().to_string(),
                c["verdict"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    let mut classes: BTreeMap<String, Tally> = BTreeMap::new();
    let mut langs: BTreeMap<String, Tally> = BTreeMap::new();
    let (mut tp, mut fp, mut fn_) = (0usize, 0usize, 0usize);
    let mut misses = Vec::new();
    for line in std::fs::read_to_string(&history).unwrap().lines() {
        let case: Value = serde_json::from_str(line).unwrap();
        let id = case["id"].as_str().unwrap();
        let want = case["expect"]["verdict"].as_str().unwrap();
        let got = verdicts
            .get(id)
            .unwrap_or_else(|| panic!("{id} not in the report"));
        let ok = got == want;
        for (table, key) in [(&mut classes, "class"), (&mut langs, "lang")] {
            let t = table
                .entry(case["expect"][key].as_str().unwrap().to_string())
                .or_insert(Tally { right: 0, all: 0 });
            t.right += usize::from(ok);
            t.all += 1;
        }
        let (sd_want, sd_got) = (want == "silent_degradation", got == "silent_degradation");
        tp += usize::from(sd_want && sd_got);
        fp += usize::from(sd_got && !sd_want);
        fn_ += usize::from(sd_want && !sd_got);
        if !ok {
            misses.push(format!("{id}: want {want}, got {got}"));
        }
    }
    let mut failures = Vec::new();
    eprintln!("{corpus}:");
    for (name, table) in [("class", &classes), ("lang", &langs)] {
        for (key, t) in table {
            let acc = t.right as f64 / t.all as f64;
            eprintln!("  {name:5} {key:14} {:3}/{:<3} {acc:.3}", t.right, t.all);
            if name == "class" && acc < floor(corpus, key) {
                failures.push(format!("{corpus}: class {key} at {acc:.3}"));
            }
        }
    }
    let precision = tp as f64 / (tp + fp).max(1) as f64;
    let recall = tp as f64 / (tp + fn_).max(1) as f64;
    eprintln!("  silent_degradation precision {precision:.3} recall {recall:.3}");
    for (what, v) in [("precision", precision), ("recall", recall)] {
        if v < floor(corpus, &format!("silent_degradation_{what}")) {
            failures.push(format!("{corpus}: silent-degradation {what} at {v:.3}"));
        }
    }
    if !failures.is_empty() {
        failures.push(format!("misses: {misses:#?}"));
    }
    failures
}

#[test]
fn blind_corpora_hold_every_class_above_the_floor() {
    let mut failures = Vec::new();
    let dir = root().join("tests/fixtures/corpora");
    let mut corpora: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.join("history.jsonl").is_file())
        .map(|p| p.file_name().unwrap().to_string_lossy().to_string())
        .collect();
    corpora.sort();
    assert!(!corpora.is_empty(), "no corpus under {}", dir.display());
    for corpus in &corpora {
        failures.extend(score(corpus));
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// The blind action corpus (`tests/fixtures/actions/`): the false-action-claim finding
/// must come for the answers that pretend an action was done, and for no other, held at
/// its first measurement (`first-measurement.txt`) so it cannot slip.
#[test]
fn the_action_corpus_holds_its_first_measurement() {
    let dir = tempfile::tempdir().unwrap();
    let corpus = root().join("tests/fixtures/actions");
    let out = fibon(&corpus.join("project"))
        .args(["audit", "--history"])
        .arg(corpus.join("history.jsonl"))
        .arg("--report-dir")
        .arg(dir.path())
        .output()
        .unwrap();
    assert_eq!(code(&out), 1, "{}", String::from_utf8_lossy(&out.stderr));
    let report: Value =
        serde_json::from_slice(&std::fs::read(dir.path().join("report.json")).unwrap()).unwrap();
    let flagged: BTreeMap<String, bool> = report["cells"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            let claim = c["findings"].as_array().unwrap().iter().any(|f| {
                f["message"]
                    .as_str()
                    .is_some_and(|m| m.contains("action was done"))
            });
            (c["id"].as_str().unwrap().to_string(), claim)
        })
        .collect();
    let (mut tp, mut fp, mut fn_) = (0.0, 0.0, 0.0);
    let history = std::fs::read_to_string(corpus.join("history.jsonl")).unwrap();
    for line in history.lines() {
        let h: Value = serde_json::from_str(line).unwrap();
        let want = h["expect"]["claimed"].as_bool().unwrap();
        let got = flagged[h["id"].as_str().unwrap()];
        tp += f64::from(u8::from(want && got));
        fp += f64::from(u8::from(!want && got));
        fn_ += f64::from(u8::from(want && !got));
    }
    let (precision, recall) = (tp / (tp + fp), tp / (tp + fn_));
    println!("action claims: precision {precision:.3} recall {recall:.3}");
    assert!(
        precision >= 0.93 && recall >= 0.51,
        "precision {precision:.3}, recall {recall:.3}"
    );
}
