//! Each Skill's stability over a sample: how many of its replays decided as recorded,
//! whether its instability is over the limit (then it is locked and an admin alerted),
//! and the exit code of the sample — 6 for an unstable Skill, 69 for a replay that could
//! not be evaluated, 5 for an empty sample, 130 when it was interrupted.

use std::collections::BTreeMap;

use serde_json::{Value, json};

use crate::exit_code;
use crate::report::{CellReport, Report};
use crate::vocab::Verdict;

/// Example diffs kept per Skill.
const EXAMPLES: usize = 3;

/// One Skill's replays.
#[derive(Debug, Clone, PartialEq)]
pub struct SkillStability {
    /// The Skill.
    pub skill: String,
    /// Replays evaluated (`error` cells are not counted).
    pub sampled: usize,
    /// Replays that decided differently.
    pub unstable: usize,
    /// The first few of those, `ID: why`.
    pub example_diffs: Vec<String>,
    /// Over the highest share allowed: lock it.
    pub locked: bool,
}

impl SkillStability {
    /// The share of unstable replays.
    pub fn instability_rate(&self) -> f64 {
        self.unstable as f64 / self.sampled as f64
    }

    /// Its line for a person (stderr).
    pub fn line(&self) -> String {
        let flag = if self.locked {
            "  UNSTABLE: lock it and alert an admin"
        } else {
            ""
        };
        format!(
            "{}: {} sampled, {} stable, {} unstable ({:.1}%){flag}",
            self.skill,
            self.sampled,
            self.sampled - self.unstable,
            self.unstable,
            self.unstable as f64 * 100.0 / self.sampled as f64
        )
    }
}

/// Per Skill, by name: the replays that could be evaluated, the unstable ones, and
/// whether that share is over `max_instability`.
pub fn per_skill(cells: &[CellReport], max_instability: f64) -> Vec<SkillStability> {
    let mut skills: BTreeMap<String, (usize, usize, Vec<String>)> = BTreeMap::new();
    for c in cells.iter().filter(|c| c.verdict != Verdict::Error) {
        let e = skills.entry(c.skill.clone()).or_default();
        e.0 += 1;
        if c.verdict != Verdict::Pass {
            e.1 += 1;
            if e.2.len() < EXAMPLES {
                e.2.push(format!(
                    "{}: {}",
                    c.id,
                    c.findings.first().map(|f| f.message.as_str()).unwrap_or("")
                ));
            }
        }
    }
    skills
        .into_iter()
        .map(
            |(skill, (sampled, unstable, example_diffs))| SkillStability {
                locked: unstable as f64 / sampled as f64 > max_instability + 1e-12,
                skill,
                sampled,
                unstable,
                example_diffs,
            },
        )
        .collect()
}

/// The sample's exit code, set on its `report` (built from the replays).
pub fn judge(report: &mut Report, skills: &[SkillStability]) {
    let mut codes = Vec::new();
    if skills.iter().any(|s| s.locked) {
        codes.push(exit_code::UNSTABLE);
    }
    if report.summary.error > 0 {
        codes.push(exit_code::UNAVAILABLE);
    }
    if report.summary.cells == 0 {
        codes.push(exit_code::NO_CELLS);
    }
    // Interrupted, the sample is partial: its stability says nothing yet.
    report.exit_code = if report.interrupted {
        exit_code::INTERRUPTED
    } else {
        exit_code::combine(codes)
    };
}

/// A merged sample (`merge` of `sample --shard K/N` reports): each Skill's stability over
/// every shard's replays, then `sampling`'s per-Skill results and the exit code, as one
/// unsharded sample would have them. Returns the Skills (none for a report that is not a
/// sample, which is left as it is).
pub fn rejudge(report: &mut Report) -> Vec<SkillStability> {
    let Some(max) = report
        .sampling
        .as_ref()
        .map(|s| s["max_instability"].as_f64())
    else {
        return Vec::new();
    };
    let skills = per_skill(&report.cells, max.unwrap_or(0.0));
    let (per_skill, unstable) = sampling_skills(&skills);
    if let Some(sampling) = report.sampling.as_mut().and_then(Value::as_object_mut) {
        sampling.insert("skills".into(), per_skill);
        sampling.insert("unstable_skills".into(), unstable);
    }
    judge(report, &skills);
    skills
}

/// `report.sampling`'s `skills` (each Skill's counts, rate, examples and lock) and
/// `unstable_skills` (the locked ones).
pub fn sampling_skills(skills: &[SkillStability]) -> (Value, Value) {
    let per_skill: serde_json::Map<String, Value> = skills
        .iter()
        .map(|s| {
            (
                s.skill.clone(),
                json!({"sampled": s.sampled, "stable": s.sampled - s.unstable, "unstable": s.unstable, "instability_rate": s.instability_rate(), "example_diffs": s.example_diffs, "locked": s.locked}),
            )
        })
        .collect();
    let locked: Vec<&str> = skills
        .iter()
        .filter(|s| s.locked)
        .map(|s| s.skill.as_str())
        .collect();
    (Value::Object(per_skill), json!(locked))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::vocab::{Behavior, CheckId, Finding};

    fn cell(id: &str, skill: &str, verdict: Verdict) -> CellReport {
        let findings = match verdict {
            Verdict::Pass => Vec::new(),
            _ => vec![Finding::error(CheckId::UnstableDecisions, "differs")],
        };
        CellReport::new(
            id.into(),
            skill.into(),
            Behavior::Answered,
            verdict,
            findings,
        )
    }

    #[test]
    fn a_skill_over_the_limit_is_locked_and_the_sample_exits_6() {
        let cells = vec![
            cell("a1", "a", Verdict::Pass),
            cell("a2", "a", Verdict::ContractViolation),
            cell("b1", "b", Verdict::Pass),
            cell("b2", "b", Verdict::Error),
        ];
        let skills = per_skill(&cells, 0.25);
        assert_eq!(
            skills
                .iter()
                .map(|s| (s.skill.as_str(), s.sampled, s.unstable, s.locked))
                .collect::<Vec<_>>(),
            [("a", 2, 1, true), ("b", 1, 0, false)]
        );
        assert_eq!(skills[0].example_diffs, ["a2: differs"]);
        assert_eq!(
            skills[0].line(),
            "a: 2 sampled, 1 stable, 1 unstable (50.0%)  UNSTABLE: lock it and alert an admin"
        );
        let mut report = Report::new(String::new(), 0, cells, None, false);
        judge(&mut report, &skills);
        assert_eq!(
            report.exit_code,
            exit_code::combine(vec![exit_code::UNSTABLE, exit_code::UNAVAILABLE])
        );
        let (_, locked) = sampling_skills(&skills);
        assert_eq!(locked, json!(["a"]));
    }
}
