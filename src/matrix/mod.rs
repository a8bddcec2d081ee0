//! The four-quadrant matrix: which cells to run (skills × scenarios × quadrants × faults,
//! filtered and sharded, in a deterministic order) and the runner that executes them on
//! tokio with bounded concurrency, one gateway session per cell.

mod dual_track;
mod intervene;
mod plan;
mod replay;
mod runner;

pub use plan::{Filters, Shard, UnknownFilter, plan};
pub use replay::{check_conversation, check_item, replay, unknown_skill};
pub use runner::{RunOptions, run_cells};

use crate::contract::FaultKind;
pub use crate::vocab::Quadrant;

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
