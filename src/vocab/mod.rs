//! The vocabulary every layer shares, at the bottom of the tree: verdicts, behaviours,
//! findings and their check ids, quadrants, fault kinds with what each one does, and the
//! status of a call in the trace. It imports nothing of this crate (ARCHITECTURE.md).

mod fault;
mod quadrant;
mod shard;
mod verdict;

pub use fault::{FaultKind, Semantics, Status};
pub use quadrant::Quadrant;
pub use shard::Shard;
pub use verdict::{Behavior, CheckId, Finding, FindingSeverity, Verdict};
