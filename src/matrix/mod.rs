//! The four-quadrant matrix: which cells to run (skills × scenarios × quadrants × faults,
//! filtered and sharded, in a deterministic order) and the runner that executes them on
//! tokio with bounded concurrency, one gateway session per cell.

mod intervene;
mod plan;
mod replay;
mod runner;

use std::fmt;

use serde::Serialize;

pub use plan::{Filters, Shard, plan};
pub use replay::{check_conversation, check_item, replay, unknown_skill};
pub use runner::{RunOptions, run_cells};

use crate::contract::FaultKind;

/// A quadrant (DESIGN.md, normative).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, clap::ValueEnum)]
#[value(rename_all = "UPPER")]
pub enum Quadrant {
    /// Tools available, simple input.
    Q1,
    /// Tools available, complex input.
    Q2,
    /// Tools removed or failing, simple input.
    Q3,
    /// Tools removed or failing, complex input.
    Q4,
}

impl Quadrant {
    /// Every quadrant.
    pub const ALL: [Quadrant; 4] = [Quadrant::Q1, Quadrant::Q2, Quadrant::Q3, Quadrant::Q4];

    /// Whether the tools are available in this quadrant.
    pub fn available(self) -> bool {
        matches!(self, Quadrant::Q1 | Quadrant::Q2)
    }
}

/// The report's name for it (the vocabulary's quadrant, which report.json carries).
impl From<Quadrant> for crate::vocab::Quadrant {
    fn from(q: Quadrant) -> crate::vocab::Quadrant {
        match q {
            Quadrant::Q1 => crate::vocab::Quadrant::Q1,
            Quadrant::Q2 => crate::vocab::Quadrant::Q2,
            Quadrant::Q3 => crate::vocab::Quadrant::Q3,
            Quadrant::Q4 => crate::vocab::Quadrant::Q4,
        }
    }
}

impl fmt::Display for Quadrant {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{self:?}")
    }
}

/// One cell of the plan.
#[derive(Debug, Clone)]
pub struct Cell {
    /// `SKILL/SCENARIO/Q` or `SKILL/SCENARIO/Q/FAULT`: stable across runs.
    pub id: String,
    /// Index of the contract in the project.
    pub contract: usize,
    /// Index of the scenario in the project.
    pub scenario: usize,
    /// The quadrant.
    pub quadrant: Quadrant,
    /// The fault injected (Q3/Q4).
    pub fault: Option<FaultKind>,
    /// The tools the fault hits.
    pub removed_tools: Vec<String>,
    /// Its position in the whole (unsharded) plan: shard reports merge back in this order.
    pub index: usize,
}
