//! Scenarios: one input for one Skill, with fixtures, faults and expected facts.

mod model;
pub mod raw;
mod validate;

pub use model::*;
pub use validate::validate;
