//! The four-quadrant matrix: which cells to run (skills × scenarios × quadrants × faults,
//! filtered and sharded, in a deterministic order), the runner that executes them on
//! tokio with bounded concurrency, one gateway session per cell, and [`run`], the whole
//! `run` pipeline around it; recorded History checked the same way, for a `replay` target
//! and for [`audit`].

mod audit;
mod dual_track;
mod intervene;
mod plan;
mod replay;
mod run;
mod runner;

pub use audit::{AuditSpec, Audited, audit};
pub use plan::{Filters, Shard, UnknownFilter, plan};
pub use replay::{check_conversation, check_item, replay};
pub use run::{Ran, RunSpec, run};
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
