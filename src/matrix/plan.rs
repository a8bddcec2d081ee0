//! The plan: every cell of the matrix in a deterministic order — contracts by skill,
//! their scenarios by id, the available quadrant first, then one cell per fault kind —
//! then the filters and the shard. The same project gives the same ids in the same order.

use super::{Cell, Quadrant};
use crate::contract::FaultKind;
use crate::errors::ExpectedError;
use crate::project::ValidProject;
use crate::scenario::{Approval, Complexity};
pub use crate::vocab::Shard;

/// `--skill`, `--scenario`, `--quadrant`, `--fault`: each empty list means "all".
#[derive(Debug, Clone, Default)]
pub struct Filters {
    /// Skills to keep.
    pub skills: Vec<String>,
    /// Scenario ids to keep.
    pub scenarios: Vec<String>,
    /// Quadrants to keep.
    pub quadrants: Vec<Quadrant>,
    /// Fault kinds to keep (cells without a fault are dropped when this is set).
    pub faults: Vec<FaultKind>,
}

impl Filters {
    /// The `--skill` and `--scenario` values that name nothing in `project`, each with the
    /// flag and the closest name there is ("did you mean"): a typo would otherwise select
    /// no cell at all.
    pub fn unknown(&self, project: &ValidProject) -> Vec<UnknownFilter> {
        let skills: Vec<&str> = project.contracts.iter().map(|c| c.skill.as_str()).collect();
        let scenarios: Vec<&str> = project.scenarios.iter().map(|s| s.id.as_str()).collect();
        let mut out = Vec::new();
        for (flag, values, known) in [
            ("--skill", &self.skills, &skills),
            ("--scenario", &self.scenarios, &scenarios),
        ] {
            for v in values.iter().filter(|v| !known.contains(&v.as_str())) {
                out.push(UnknownFilter {
                    flag,
                    value: v.clone(),
                    suggestion: crate::diag::did_you_mean(v, known.iter().copied())
                        .map(str::to_string),
                });
            }
        }
        out
    }

    /// Refuses (64) the first `--skill` or `--scenario` value that names nothing in
    /// `project` — a typo, not an empty selection — with the closest name and the names
    /// there are.
    pub fn check(&self, project: &ValidProject) -> Result<(), ExpectedError> {
        let Some(u) = self.unknown(project).into_iter().next() else {
            return Ok(());
        };
        let skill = u.flag == "--skill";
        let known: Vec<String> = if skill {
            project.contracts.iter().map(|c| c.skill.clone()).collect()
        } else {
            project.scenarios.iter().map(|s| s.id.clone()).collect()
        };
        Err(ExpectedError::Unknown {
            what: if skill { "skill" } else { "scenario" },
            value: u.value,
            within: None,
            suggestion: u.suggestion,
            known,
        })
    }
}

/// A filter value that names nothing in the project.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnknownFilter {
    /// `--skill` or `--scenario`.
    pub flag: &'static str,
    /// The value given.
    pub value: String,
    /// The closest known name.
    pub suggestion: Option<String>,
}

impl std::fmt::Display for UnknownFilter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} `{}` names nothing in the project",
            self.flag, self.value
        )?;
        if let Some(s) = &self.suggestion {
            write!(f, "; did you mean `{s}`?")?;
        }
        Ok(())
    }
}

/// Every cell of the project, filtered and sharded.
pub fn plan(project: &ValidProject, filters: &Filters, shard: Option<Shard>) -> Vec<Cell> {
    let mut contracts: Vec<usize> = (0..project.contracts.len()).collect();
    contracts.sort_by(|a, b| {
        project.contracts[*a]
            .skill
            .cmp(&project.contracts[*b].skill)
    });
    let mut cells = Vec::new();
    for ci in contracts {
        let contract = &project.contracts[ci];
        let mut scenarios: Vec<usize> = (0..project.scenarios.len())
            .filter(|s| project.scenarios[*s].skill == contract.skill)
            .collect();
        scenarios.sort_by(|a, b| project.scenarios[*a].id.cmp(&project.scenarios[*b].id));
        for si in scenarios {
            let s = &project.scenarios[si];
            let (available, failing) = match s.complexity {
                Complexity::Simple => (Quadrant::Q1, Quadrant::Q3),
                Complexity::Complex => (Quadrant::Q2, Quadrant::Q4),
            };
            let base = format!("{}/{}", contract.skill, s.id);
            cells.push(Cell {
                id: format!("{base}/{available}"),
                contract: ci,
                scenario: si,
                quadrant: available,
                fault: None,
                removed_tools: Vec::new(),
                index: 0,
            });
            for fault in &s.faults {
                cells.push(Cell {
                    id: format!("{base}/{failing}/{fault}"),
                    contract: ci,
                    scenario: si,
                    quadrant: failing,
                    fault: Some(*fault),
                    removed_tools: s.remove.clone(),
                    index: 0,
                });
            }
            // A person asked to approve each call of an approval tool says no: one cell
            // per such tool the scenario hosts (the approved path is the available cell).
            if s.approval == Approval::Denied {
                let hosted = |t: &&String| s.tools.is_empty() || s.tools.contains_key(*t);
                for tool in contract.approval.iter().filter(hosted) {
                    cells.push(Cell {
                        id: format!("{base}/{failing}/{}/{tool}", FaultKind::ApprovalDenied),
                        contract: ci,
                        scenario: si,
                        quadrant: failing,
                        fault: Some(FaultKind::ApprovalDenied),
                        removed_tools: vec![tool.clone()],
                        index: 0,
                    });
                }
            }
        }
    }
    cells.retain(|c| {
        let contract = &project.contracts[c.contract];
        let scenario = &project.scenarios[c.scenario];
        (filters.skills.is_empty() || filters.skills.contains(&contract.skill))
            && (filters.scenarios.is_empty() || filters.scenarios.contains(&scenario.id))
            && (filters.quadrants.is_empty() || filters.quadrants.contains(&c.quadrant))
            && (filters.faults.is_empty() || c.fault.is_some_and(|f| filters.faults.contains(&f)))
    });
    for (i, c) in cells.iter_mut().enumerate() {
        c.index = i;
    }
    cells.retain(|c| shard.is_none_or(|s| s.takes(&c.id)));
    cells
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shards_partition_the_cells() {
        let ids: Vec<String> = (0..1000)
            .map(|i| format!("skill/scenario-{i}/Q3/TIMEOUT"))
            .collect();
        let shards: Vec<Shard> = (1..=4).map(|k| Shard { index: k, total: 4 }).collect();
        for id in &ids {
            assert_eq!(
                shards.iter().filter(|s| s.takes(id)).count(),
                1,
                "{id} is in exactly one shard"
            );
        }
        let sizes: Vec<usize> = shards
            .iter()
            .map(|s| ids.iter().filter(|id| s.takes(id)).count())
            .collect();
        assert!(
            sizes.iter().all(|n| (200..300).contains(n)),
            "balanced: {sizes:?}"
        );
        assert!("2/4".parse::<Shard>().is_ok());
        assert!(
            "0/4".parse::<Shard>().is_err()
                && "5/4".parse::<Shard>().is_err()
                && "x".parse::<Shard>().is_err()
        );
    }
}
