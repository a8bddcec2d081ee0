//! Gate A and Gate B for offline arm experiments (docs/background.md, "Gate A and Gate B"): samples,
//! each with arms A/B/C, judged blind (arm texts under randomized ids, through the
//! policy's judges) or given as scores, then the ordered rules — the first that applies
//! decides — to the terminal states `failed`, `insufficient_evidence`, `passed`,
//! `no_gain`, with the confounders listed. What the rules cannot use — a score off the
//! scale (or NaN), a coverage outside 0..1, a sample id given twice, an arm other than
//! A/B/C — is refused up front ([`validate`]), pointing at its line.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use indexmap::IndexMap;
use serde::{Deserialize, Serialize};

use super::{Candidate, Ledger, Policy, Scale, blind_id, gate};
use crate::diag::Diagnostic;
use crate::errors::ExpectedError;
use crate::exit_code;
use crate::source::{Anchor, Document, SourceFile, join};

/// The experiment file.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Experiment {
    /// Its name.
    pub experiment: String,
    /// The pre-registered scenario classes every run must cover (default: five).
    #[serde(default)]
    pub scenario_classes: Vec<String>,
    /// Dimension ids (defaults: §10.1's five).
    #[serde(default)]
    pub dimensions: Dimensions,
    /// The samples.
    pub samples: Vec<Sample>,
}

/// Which dimension plays which role.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Dimensions {
    /// Setting and entity fidelity (the gain Gate B looks for).
    pub fidelity: String,
    /// Style consistency (must not regress).
    pub style: String,
    /// Narrative tension (must not regress).
    pub tension: String,
}

impl Default for Dimensions {
    fn default() -> Self {
        Dimensions {
            fidelity: "entity_fidelity".into(),
            style: "style_consistency".into(),
            tension: "narrative_tension".into(),
        }
    }
}

/// One sample.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Sample {
    /// Its id.
    pub id: String,
    /// The work it comes from.
    pub work: String,
    /// Its scenario class.
    pub scenario_class: String,
    /// Whether it introduces a new character (a stratum of its own).
    #[serde(default)]
    pub new_character: bool,
    /// Whether that new character has no card (a confounder).
    #[serde(default)]
    pub new_character_without_card: bool,
    /// Anomalies recorded for it: missing calls, schema, hash, freeze, authorization,
    /// future-leak audit, model receipt. Any one fails the gate.
    #[serde(default)]
    pub anomalies: Vec<String>,
    /// Whether the sample is valid (excluded samples are counted but not used).
    #[serde(default = "yes")]
    pub valid: bool,
    /// Facts and evidence shown to the judges.
    #[serde(default)]
    pub facts: Vec<String>,
    /// Evidence shown to the judges.
    #[serde(default)]
    pub evidence: String,
    /// Arms A, B, C.
    pub arms: BTreeMap<String, Arm>,
}

fn yes() -> bool {
    true
}

/// One arm of a sample.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Arm {
    /// The text, judged blind by the policy's judges; or
    pub text: Option<String>,
    /// scores already judged.
    pub scores: Option<IndexMap<String, f64>>,
    /// Share of the outline's hard constraints met (1.0 = all).
    #[serde(default = "one")]
    pub hard_constraint_coverage: f64,
    /// High-severity residue the semantic detector left.
    #[serde(default)]
    pub detector_high_severity: u32,
    /// Detector false positives found on review (a confounder).
    #[serde(default)]
    pub detector_false_positives: u32,
    /// Detector false negatives found on review (a confounder).
    #[serde(default)]
    pub detector_false_negatives: u32,
}

fn one() -> f64 {
    1.0
}

/// A terminal state.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum GateState {
    /// A rule failed.
    Failed,
    /// Not enough evidence to decide.
    InsufficientEvidence,
    /// Passed.
    Passed,
    /// Ran cleanly; no gain shown.
    NoGain,
}

impl GateState {
    /// The name in reports.
    pub fn as_str(self) -> &'static str {
        match self {
            GateState::Failed => "failed",
            GateState::InsufficientEvidence => "insufficient_evidence",
            GateState::Passed => "passed",
            GateState::NoGain => "no_gain",
        }
    }
}

/// One gate's decision: the state and the rule that decided it.
#[derive(Debug, Clone, Serialize)]
pub struct GateDecision {
    /// The state.
    pub state: GateState,
    /// The number of the rule that decided.
    pub rule: u32,
    /// Why.
    pub reason: String,
}

/// The C−A delta of one dimension.
#[derive(Debug, Clone, Serialize)]
pub struct Delta {
    /// Mean of C − A over valid samples.
    pub mean: f64,
    /// Share of valid samples where C − A > 0.
    pub share_positive: f64,
}

/// The experiment's report (`fibon.experiment/v1`).
#[derive(Debug, Clone, Serialize)]
pub struct ExperimentReport {
    /// `fibon.experiment/v1`.
    pub schema: &'static str,
    /// The experiment.
    pub experiment: String,
    /// Gate A.
    pub gate_a: GateDecision,
    /// Gate B.
    pub gate_b: GateDecision,
    /// Samples, valid samples, works.
    pub samples: usize,
    /// Valid samples.
    pub valid_samples: usize,
    /// Valid samples per work.
    pub works: BTreeMap<String, usize>,
    /// Valid samples per scenario class.
    pub scenario_classes: BTreeMap<String, usize>,
    /// C − A per dimension, overall.
    pub deltas: BTreeMap<String, Delta>,
    /// The confounders, listed.
    pub confounders: Vec<String>,
    /// The final scores used, per sample and arm (arm names revealed after judging).
    pub scores: BTreeMap<String, BTreeMap<String, IndexMap<String, f64>>>,
}

impl ExperimentReport {
    /// The exit code: 0 when Gate B passed, else 3.
    pub fn exit_code(&self) -> i32 {
        if self.gate_b.state == GateState::Passed {
            exit_code::SUCCESS
        } else {
            exit_code::QUALITY_GATE_FAILED
        }
    }

    /// What was decided, for a person (stderr), a line each: the samples, Gate A, Gate B
    /// and the confounders.
    pub fn summary(&self) -> String {
        let mut lines = vec![
            format!(
                "experiment `{}`: {} samples ({} valid) from {} work(s)",
                self.experiment,
                self.samples,
                self.valid_samples,
                self.works.len()
            ),
            format!(
                "Gate A: {} (rule {}) — {}",
                self.gate_a.state.as_str(),
                self.gate_a.rule,
                self.gate_a.reason
            ),
            format!(
                "Gate B: {} (rule {}) — {}",
                self.gate_b.state.as_str(),
                self.gate_b.rule,
                self.gate_b.reason
            ),
        ];
        lines.extend(
            self.confounders
                .iter()
                .map(|c| format!("  confounder: {c}")),
        );
        lines.iter().map(|l| format!("{l}\n")).collect()
    }
}

/// Parses the experiment file at `path` (its `text`) and checks it ([`validate`])
/// against the policy that will judge its arms, if any: exit 65 with every problem at its
/// line when it cannot be used.
pub fn parse(
    path: &std::path::Path,
    text: String,
    policy: Option<&Policy>,
) -> Result<Experiment, ExpectedError> {
    // The document for the lines of what is wrong; the typed read keeps what JSON cannot
    // hold (YAML's .nan and .inf), so that it is refused rather than turned into null.
    let file = std::sync::Arc::new(SourceFile::from_text(path, text));
    let refuse = |diagnostics: Vec<Diagnostic>| {
        Err(ExpectedError::InvalidFile {
            path: path.to_path_buf(),
            diagnostics,
        })
    };
    let (doc, mut diags) = match Document::parse(std::sync::Arc::clone(&file)) {
        Ok(parsed) => parsed,
        Err(d) => return refuse(vec![*d]),
    };
    let exp: Experiment = match serde_yaml::from_str(&file.text) {
        Ok(e) => e,
        Err(e) => {
            let at = e.location().map_or(0, |l| l.index());
            diags.push(
                Diagnostic::error("invalid", format!("not an experiment file: {e}"))
                    .at(&file, at..at, "here")
                    .with_help("an experiment has `experiment`, `scenario_classes` and `samples` (README, \"Gate A and Gate B\")"),
            );
            return refuse(diags);
        }
    };
    let scale = policy.map_or_else(Scale::default, |p| p.scale);
    let policy_dimensions: Vec<&str> = policy
        .iter()
        .flat_map(|p| p.dimensions.iter().map(|d| d.id.as_str()))
        .collect();
    diags.extend(validate(
        &doc,
        &exp,
        scale,
        policy.is_some(),
        &policy_dimensions,
    ));
    if diags.iter().any(Diagnostic::is_error) {
        crate::diag::sort(&mut diags);
        return refuse(diags);
    }
    Ok(exp)
}

/// The arms a sample has.
const ARMS: [&str; 3] = ["A", "B", "C"];

/// Checks what the file's structure cannot: every score finite and within `scale` (the
/// policy's, else 0–10), every coverage within 0..1, each sample id once, arms A/B/C only,
/// each arm with `scores`, or `text` and a policy to judge it (`judged`). `doc` is the
/// same file, for the lines. Every problem is returned, not only the first.
pub fn validate(
    doc: &Document,
    exp: &Experiment,
    scale: Scale,
    judged: bool,
    policy_dimensions: &[&str],
) -> Vec<Diagnostic> {
    // A score under a misspelt dimension would leave the real one unscored: Gate B would
    // read "no gain" where it was never measured.
    let known: Vec<&str> = [
        exp.dimensions.fidelity.as_str(),
        exp.dimensions.style.as_str(),
        exp.dimensions.tension.as_str(),
    ]
    .into_iter()
    .chain(policy_dimensions.iter().copied())
    .collect();
    let mut diags = Vec::new();
    let line = |ptr: &str| doc.file.line_col(doc.span(ptr, Anchor::Value).start).0;
    if exp.scenario_classes.is_empty() {
        diags.push(
            doc.error(
                "scenario_classes",
                "/scenario_classes",
                Anchor::Key,
                "the experiment must pre-register its `scenario_classes`",
                "none registered",
            )
            .with_help("list the classes every run must cover, such as `scenario_classes: [dialogue, action]`"),
        );
    }
    let mut first: HashMap<&str, usize> = HashMap::new();
    for (i, sample) in exp.samples.iter().enumerate() {
        let ptr = format!("/samples/{i}");
        if let Some(&j) = first.get(sample.id.as_str()) {
            diags.push(
                doc.error(
                    "duplicate_id",
                    &join(&ptr, "id"),
                    Anchor::Value,
                    format!(
                        "sample id `{}` is used again (first on line {})",
                        sample.id,
                        line(&format!("/samples/{j}/id"))
                    ),
                    "again",
                )
                .with_help("give each sample its own id: scores and deltas are keyed by it"),
            );
        } else {
            first.insert(&sample.id, i);
        }
        for (name, arm) in &sample.arms {
            let arm_ptr = join(&join(&ptr, "arms"), name);
            if !ARMS.contains(&name.as_str()) {
                diags.push(
                    doc.error(
                        "arm",
                        &arm_ptr,
                        Anchor::Key,
                        format!("sample `{}`: arm `{name}` is not one of A, B, C", sample.id),
                        "unknown arm",
                    )
                    .with_help("arms are A (baseline), B and C"),
                );
            }
            match (&arm.scores, &arm.text) {
                (Some(scores), _) => {
                    for (dim, &score) in scores {
                        if !known.contains(&dim.as_str()) {
                            let hint = crate::diag::did_you_mean(dim, known.iter().copied())
                                .map(|h| format!("did you mean `{h}`? "))
                                .unwrap_or_default();
                            diags.push(
                                doc.error(
                                    "score",
                                    &join(&join(&arm_ptr, "scores"), dim),
                                    Anchor::Key,
                                    format!(
                                        "sample `{}` arm {name}: `{dim}` is not a dimension of this experiment",
                                        sample.id
                                    ),
                                    "unknown dimension",
                                )
                                .with_help(format!("{hint}dimensions: {}", known.join(", "))),
                            );
                            continue;
                        }
                        if !scale.contains(score) {
                            diags.push(
                                doc.error(
                                    "score",
                                    &join(&join(&arm_ptr, "scores"), dim),
                                    Anchor::Value,
                                    format!(
                                        "sample `{}` arm {name}: `{dim}` scores {}, outside the scale {}..{}",
                                        sample.id,
                                        number(score),
                                        scale.min,
                                        scale.max
                                    ),
                                    "off the scale",
                                )
                                .with_help("give a score the judges could give"),
                            );
                        }
                    }
                }
                (None, Some(_)) if !judged => diags.push(
                    doc.error(
                        "arm",
                        &join(&arm_ptr, "text"),
                        Anchor::Key,
                        format!(
                            "sample `{}` arm {name} has text but no policy was given to judge it",
                            sample.id
                        ),
                        "nothing to judge it",
                    )
                    .with_help("pass --policy FILE, or give the arm's `scores`"),
                ),
                (None, Some(_)) => {}
                (None, None) => diags.push(
                    doc.error(
                        "arm",
                        &arm_ptr,
                        Anchor::Key,
                        format!(
                            "sample `{}` arm {name} has neither `text` nor `scores`",
                            sample.id
                        ),
                        "nothing to score",
                    )
                    .with_help("give the arm's `text` (judged through --policy) or its `scores`"),
                ),
            }
            let coverage = arm.hard_constraint_coverage;
            if !(coverage.is_finite() && (0.0..=1.0).contains(&coverage)) {
                diags.push(
                    doc.error(
                        "coverage",
                        &join(&arm_ptr, "hard_constraint_coverage"),
                        Anchor::Value,
                        format!(
                            "sample `{}` arm {name}: `hard_constraint_coverage` is {}, not a share from 0 to 1",
                            sample.id,
                            number(coverage)
                        ),
                        "not a share",
                    )
                    .with_help("the share of the outline's hard constraints met: 1.0 is all"),
                );
            }
        }
    }
    diags
}

/// A number for a message: plain when it is ordinary, else in exponent form (1e308, not
/// 309 digits).
fn number(x: f64) -> String {
    if x.is_finite() && x != 0.0 && !(1e-3..1e6).contains(&x.abs()) {
        format!("{x:e}")
    } else {
        x.to_string()
    }
}

/// Why an experiment cannot be evaluated: what [`validate`] does not catch. Each is bad
/// data in the experiment file (exit 65).
#[derive(Debug, thiserror::Error)]
pub enum ExperimentError {
    /// No `scenario_classes`.
    #[error("the experiment must pre-register its `scenario_classes`")]
    NoScenarioClasses,
    /// An arm to judge from its text, and no policy to judge it with.
    #[error("sample `{sample}` arm {arm} has text but no policy was given to judge it (--policy)")]
    NoPolicy {
        /// The sample's id.
        sample: String,
        /// The arm.
        arm: String,
    },
    /// An arm with nothing to score.
    #[error("sample `{sample}` arm {arm} has neither `text` nor `scores`")]
    EmptyArm {
        /// The sample's id.
        sample: String,
        /// The arm.
        arm: String,
    },
}

/// Judges the arms given as text (blind, through the policy) and applies Gate A, then B.
/// The experiment is expected to have passed [`validate`].
pub async fn evaluate(
    exp: &Experiment,
    policy: Option<&Policy>,
    ledger: &Ledger,
    seed: u64,
) -> Result<ExperimentReport, ExperimentError> {
    let classes: Vec<String> = if exp.scenario_classes.is_empty() {
        return Err(ExperimentError::NoScenarioClasses);
    } else {
        exp.scenario_classes.clone()
    };
    let mut anomalies: Vec<String> = Vec::new();
    let mut scores: BTreeMap<String, BTreeMap<String, IndexMap<String, f64>>> = BTreeMap::new();
    let mut unstable_judging = 0usize;
    for s in &exp.samples {
        for a in &s.anomalies {
            anomalies.push(format!("{}: {a}", s.id));
        }
        for arm in ["A", "B", "C"] {
            if !s.arms.contains_key(arm) {
                anomalies.push(format!("{}: arm {arm} is missing", s.id));
            }
        }
        for (name, arm) in &s.arms {
            let final_scores = match (&arm.scores, &arm.text, policy) {
                (Some(sc), _, _) => sc.clone(),
                (None, Some(text), Some(policy)) => {
                    // Blind: the judges see a randomized id, never the arm's name.
                    let c = Candidate {
                        id: format!("{}/{name}", s.id),
                        input: String::new(),
                        output: text.clone(),
                        facts: s.facts.clone(),
                        forbidden: Vec::new(),
                        evidence: s.evidence.clone(),
                        assertions: None,
                    };
                    let blind = blind_id(seed, &c.id);
                    let (finals, _, unstable, error, _) =
                        gate::score(policy, ledger, &c, &blind).await;
                    if let Some(e) = error {
                        anomalies.push(format!("{}: judge error: {e}", s.id));
                    }
                    if !unstable.is_empty() {
                        unstable_judging += 1;
                        anomalies.push(format!(
                            "{}: judge instability on {}",
                            s.id,
                            unstable.join(", ")
                        ));
                    }
                    finals
                }
                (None, Some(_), None) => {
                    return Err(ExperimentError::NoPolicy {
                        sample: s.id.clone(),
                        arm: name.clone(),
                    });
                }
                (None, None, _) => {
                    return Err(ExperimentError::EmptyArm {
                        sample: s.id.clone(),
                        arm: name.clone(),
                    });
                }
            };
            scores
                .entry(s.id.clone())
                .or_default()
                .insert(name.clone(), final_scores);
        }
    }
    let valid: Vec<&Sample> = exp.samples.iter().filter(|s| s.valid).collect();
    let mut works: BTreeMap<String, usize> = BTreeMap::new();
    let mut by_class: BTreeMap<String, usize> = BTreeMap::new();
    for s in &valid {
        *works.entry(s.work.clone()).or_default() += 1;
        *by_class.entry(s.scenario_class.clone()).or_default() += 1;
    }
    let covered: BTreeSet<&String> = by_class.keys().collect();
    let missing_classes: Vec<&String> = classes.iter().filter(|c| !covered.contains(c)).collect();
    let c_residue = valid.iter().any(|s| {
        s.arms
            .get("C")
            .is_some_and(|c| c.detector_high_severity > 0 || c.hard_constraint_coverage < 1.0)
    });
    let d = &exp.dimensions;
    let delta = |samples: &[&Sample], dim: &str| -> Option<Delta> {
        let diffs: Vec<f64> = samples
            .iter()
            .filter_map(|s| {
                let arms = scores.get(&s.id)?;
                Some(arms.get("C")?.get(dim)? - arms.get("A")?.get(dim)?)
            })
            .collect();
        (!diffs.is_empty()).then(|| Delta {
            mean: diffs.iter().sum::<f64>() / diffs.len() as f64,
            share_positive: diffs.iter().filter(|x| **x > 0.0).count() as f64 / diffs.len() as f64,
        })
    };
    let mut deltas = BTreeMap::new();
    for dim in [&d.fidelity, &d.style, &d.tension] {
        if let Some(x) = delta(&valid, dim) {
            deltas.insert(dim.clone(), x);
        }
    }
    let new_chars: Vec<&Sample> = valid.iter().copied().filter(|s| s.new_character).collect();
    let regressed = [&d.style, &d.tension].iter().find_map(|dim| {
        let overall = deltas.get(*dim).is_some_and(|x| x.mean < 0.0);
        let stratum = !new_chars.is_empty() && delta(&new_chars, dim).is_some_and(|x| x.mean < 0.0);
        (overall || stratum).then(|| {
            format!(
                "C−A {dim} regresses{}",
                if stratum && !overall {
                    " in the new-character stratum"
                } else {
                    ""
                }
            )
        })
    });

    // Gate A: the chain runs.
    let gate_a = if !anomalies.is_empty() {
        GateDecision {
            state: GateState::Failed,
            rule: 1,
            reason: format!("anomalies: {}", anomalies.join("; ")),
        }
    } else if valid.len() < 5 || !missing_classes.is_empty() {
        GateDecision {
            state: GateState::InsufficientEvidence,
            rule: 2,
            reason: format!(
                "{} valid samples (need 5); classes not covered: {}",
                valid.len(),
                if missing_classes.is_empty() {
                    "none".to_string()
                } else {
                    missing_classes
                        .iter()
                        .map(|c| c.as_str())
                        .collect::<Vec<_>>()
                        .join(", ")
                }
            ),
        }
    } else if c_residue {
        GateDecision {
            state: GateState::Failed,
            rule: 3,
            reason:
                "arm C has high-severity detector residue or hard-constraint coverage below 100%"
                    .into(),
        }
    } else {
        GateDecision {
            state: GateState::Passed,
            rule: 4,
            reason: "the chain runs (this does not pass the prose layer)".into(),
        }
    };
    // Gate B: the prose layer, formally.
    let thin_work = works.iter().find(|(_, n)| **n < 5);
    let gate_b = if !anomalies.is_empty() {
        GateDecision {
            state: GateState::Failed,
            rule: 1,
            reason: "anomalies in the run (see Gate A)".into(),
        }
    } else if gate_a.state == GateState::Failed {
        GateDecision {
            state: GateState::Failed,
            rule: 2,
            reason: "Gate A failed".into(),
        }
    } else if gate_a.state == GateState::InsufficientEvidence {
        GateDecision {
            state: GateState::InsufficientEvidence,
            rule: 2,
            reason: "Gate A has insufficient evidence".into(),
        }
    } else if works.len() < 2
        || thin_work.is_some()
        || valid.len() < 10
        || !missing_classes.is_empty()
    {
        GateDecision {
            state: GateState::InsufficientEvidence,
            rule: 3,
            reason: format!(
                "{} works (need 2), {} valid samples (need 10){}",
                works.len(),
                valid.len(),
                thin_work
                    .map(|(w, n)| format!(", work `{w}` has {n} (need 5)"))
                    .unwrap_or_default()
            ),
        }
    } else if c_residue || regressed.is_some() {
        GateDecision {
            state: GateState::Failed,
            rule: 4,
            reason: regressed.unwrap_or_else(|| {
                "arm C has detector residue or hard-constraint coverage below 100%".into()
            }),
        }
    } else if deltas
        .get(&d.fidelity)
        .is_some_and(|x| x.mean >= 0.25 && x.share_positive >= 0.6)
    {
        let x = &deltas[&d.fidelity];
        GateDecision {
            state: GateState::Passed,
            rule: 5,
            reason: format!(
                "C−A {} +{:.2} on average, positive in {:.0}% of samples",
                d.fidelity,
                x.mean,
                x.share_positive * 100.0
            ),
        }
    } else {
        let x = deltas.get(&d.fidelity);
        GateDecision {
            state: GateState::NoGain,
            rule: 6,
            reason: format!(
                "C−A {}: {}",
                d.fidelity,
                x.map_or("no scores".into(), |x| format!(
                    "{:+.2} on average, positive in {:.0}%",
                    x.mean,
                    x.share_positive * 100.0
                ))
            ),
        }
    };
    let mut confounders = Vec::new();
    let fp: u32 = exp
        .samples
        .iter()
        .flat_map(|s| s.arms.values())
        .map(|a| a.detector_false_positives)
        .sum();
    let fneg: u32 = exp
        .samples
        .iter()
        .flat_map(|s| s.arms.values())
        .map(|a| a.detector_false_negatives)
        .sum();
    confounders.push(format!(
        "detector false positives: {fp}, false negatives: {fneg}"
    ));
    let leaks = exp
        .samples
        .iter()
        .filter(|s| s.anomalies.iter().any(|a| a.contains("leak")))
        .count();
    confounders.push(format!("future-leak findings: {leaks}"));
    confounders.push(format!("judge instability: {unstable_judging} sample(s)"));
    confounders.push(format!(
        "new characters without a card: {}",
        exp.samples
            .iter()
            .filter(|s| s.new_character_without_card)
            .count()
    ));
    if let Some((class, n)) = by_class.iter().max_by_key(|(_, n)| **n)
        && valid.len() >= 2
        && *n * 2 > valid.len()
    {
        confounders.push(format!(
            "scene selection bias: {n} of {} valid samples are `{class}`",
            valid.len()
        ));
    } else {
        confounders
            .push("scene selection bias: none detected (no class over half the samples)".into());
    }
    if works.len() < 2 {
        confounders.push("a single work: no general conclusion may be drawn".into());
    }
    Ok(ExperimentReport {
        schema: "fibon.experiment/v1",
        experiment: exp.experiment.clone(),
        gate_a,
        gate_b,
        samples: exp.samples.len(),
        valid_samples: valid.len(),
        works,
        scenario_classes: by_class,
        deltas,
        confounders,
        scores,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn state_names_are_the_reports() {
        for s in [
            GateState::Failed,
            GateState::InsufficientEvidence,
            GateState::Passed,
            GateState::NoGain,
        ] {
            assert_eq!(serde_json::to_value(s).unwrap(), s.as_str());
        }
    }
}
