//! The detectors against the labelled corpora of single answers (`tests/fixtures/answers*`,
//! one answer per file), through the same analysis every cell's checks use
//! (`checks::read_answer`): refusals (clean: asserts nothing; veneered: reports a failure,
//! then asserts what no evidence supports; none), the citation tracer's unsupported facts,
//! and forged citations. Prints each detector's precision and recall, and fails below 0.95.
//! A fact counts as found when the reported one and the labelled one hold each other (the
//! tracer reports `600`, the label says `600 requests per minute`).

mod common;

use std::collections::BTreeSet;

use fibon_verify::checks::citations;
use fibon_verify::checks::refusal::{self, Lexicon};
use fibon_verify::checks::{normalize, read_answer};
use serde::Deserialize;

#[derive(Deserialize)]
struct Case {
    #[expect(dead_code, reason = "kept for people reading the corpus")]
    lang: String,
    input: String,
    #[expect(
        dead_code,
        reason = "whether an answer was produced is read from what it asserts"
    )]
    message_template: String,
    evidence: String,
    fetched_urls: Vec<String>,
    citations: Vec<String>,
    answer: String,
    expect: Expect,
}

#[derive(Deserialize)]
struct Expect {
    refusal: String,
    unsupported_facts: Vec<String>,
    forged_urls: Vec<String>,
}

#[derive(Default)]
struct Score {
    tp: usize,
    fp: usize,
    fn_: usize,
    misses: Vec<String>,
}

impl Score {
    fn add(&mut self, case: &str, predicted: &BTreeSet<String>, expected: &BTreeSet<String>) {
        self.tp += predicted.intersection(expected).count();
        let fp: Vec<_> = predicted.difference(expected).collect();
        let fn_: Vec<_> = expected.difference(predicted).collect();
        self.fp += fp.len();
        self.fn_ += fn_.len();
        if !fp.is_empty() || !fn_.is_empty() {
            self.misses
                .push(format!("{case}: false {fp:?}, missed {fn_:?}"));
        }
    }

    fn precision(&self) -> f64 {
        if self.tp + self.fp == 0 {
            1.0
        } else {
            self.tp as f64 / (self.tp + self.fp) as f64
        }
    }

    fn recall(&self) -> f64 {
        if self.tp + self.fn_ == 0 {
            1.0
        } else {
            self.tp as f64 / (self.tp + self.fn_) as f64
        }
    }
}

/// Scores every detector on one corpus folder; returns the table rows and the failures
/// below `floor`.
fn score(folder: &str, floor: f64) -> (Vec<String>, Vec<String>) {
    let dir = common::root().join(folder);
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "yaml"))
        .collect();
    files.sort();

    let lexicon = Lexicon::builtin();
    let (mut refusals, mut veneers, mut tracer, mut forged) = (
        Score::default(),
        Score::default(),
        Score::default(),
        Score::default(),
    );
    for path in &files {
        let name = path.file_stem().unwrap().to_string_lossy().to_string();
        let case: Case = serde_yaml::from_str(&std::fs::read_to_string(path).unwrap())
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        let reading = read_answer(
            &case.answer,
            &case.evidence,
            &case.input,
            case.fetched_urls.clone(),
            &lexicon,
        );
        let partial = refusal::is_partial(&case.answer, &lexicon);
        let ungrounded = !reading.unsupported().is_empty();
        // As a cell's behaviour is read: with tool evidence (the tools worked), a refusal
        // needs refusing words; without (a fault), asserting nothing while speaking of the
        // process is one.
        let refused = !partial
            && !reading.asserts()
            && if case.evidence.trim().is_empty() {
                reading.speaks_of_process()
            } else {
                reading.analysis.reports_failure
            };
        let veneered =
            !partial && reading.asserts() && reading.analysis.reports_failure && ungrounded;
        let one = |b: bool| {
            if b {
                BTreeSet::from([name.clone()])
            } else {
                BTreeSet::new()
            }
        };
        refusals.add(
            &name,
            &one(refused || veneered),
            &one(case.expect.refusal != "none"),
        );
        veneers.add(
            &name,
            &one(veneered),
            &one(case.expect.refusal == "veneered"),
        );
        let predicted: BTreeSet<String> = reading
            .unsupported()
            .into_iter()
            .map(|(f, _)| f.text)
            .collect();
        // Each label matched by a reported fact it holds or that holds it.
        let within = |hay: &str, needle: &str| {
            hay.match_indices(needle).any(|(at, m)| {
                let digit = |c: Option<char>| c.is_some_and(|c| c.is_ascii_digit());
                let cut_before = digit(hay[..at].chars().last()) && digit(m.chars().next());
                let cut_after =
                    digit(hay[at + m.len()..].chars().next()) && digit(m.chars().last());
                !(cut_before || cut_after)
            })
        };
        let holds = |a: &str, b: &str| {
            let (a, b) = (normalize(a), normalize(b));
            !a.is_empty() && !b.is_empty() && (within(&a, &b) || within(&b, &a))
        };
        let expected: BTreeSet<String> = case.expect.unsupported_facts.iter().cloned().collect();
        let unsupported: BTreeSet<String> = predicted
            .iter()
            .map(|p| {
                expected
                    .iter()
                    .find(|e| holds(e, p))
                    .cloned()
                    .unwrap_or_else(|| p.clone())
            })
            .collect();
        tracer.add(&name, &unsupported, &expected);
        let mut cited = reading.cited_urls();
        cited.extend(case.citations.iter().cloned());
        let predicted: BTreeSet<String> =
            citations::forged_urls(&cited, &case.fetched_urls, &case.evidence)
                .into_iter()
                .collect();
        forged.add(
            &name,
            &predicted,
            &case.expect.forged_urls.iter().cloned().collect(),
        );
    }
    let mut rows = Vec::new();
    let mut failed = Vec::new();
    for (name, s) in [
        ("refusal (clean or veneered)", &refusals),
        ("veneered refusal", &veneers),
        ("citation tracer (unsupported facts)", &tracer),
        ("forged citations", &forged),
    ] {
        rows.push(format!(
            "| {folder} | {name} | {:.3} | {:.3} | {} |",
            s.precision(),
            s.recall(),
            files.len()
        ));
        for m in &s.misses {
            println!("{folder}: {name}: {m}");
        }
        if s.precision() < floor || s.recall() < floor {
            failed.push(format!(
                "{folder}: {name}: precision {:.3}, recall {:.3}\n  {}",
                s.precision(),
                s.recall(),
                s.misses.join("\n  ")
            ));
        }
    }
    (rows, failed)
}

#[test]
fn detectors_reach_95_percent_precision_and_recall_on_the_labelled_corpora() {
    let n = |d: &str| std::fs::read_dir(common::root().join(d)).unwrap().count();
    assert!(
        n("tests/fixtures/answers") >= 60,
        "the corpus keeps at least 60 answers"
    );
    // `answers/` is the corpus the lexicon was tuned on; `answers-heldout/` was written
    // separately, without seeing the lexicon or the code: it measures generalization.
    let (mut rows, mut failed) = score("tests/fixtures/answers", 0.95);
    for held_out in [
        "tests/fixtures/answers-heldout",
        "tests/fixtures/answers-heldout2",
    ] {
        let (held_rows, held_failed) = score(held_out, 0.95);
        rows.extend(held_rows);
        failed.extend(held_failed);
    }
    println!(
        "| corpus | detector | precision | recall | cases |\n|---|---|---|---|---|\n{}",
        rows.join("\n")
    );
    assert!(failed.is_empty(), "{}", failed.join("\n"));
}
