//! The quality gate: a versioned policy of dimensions and thresholds, judges (command,
//! OpenAI-compatible, built-in), double-blind aggregation with one tiebreak, the ordered
//! verdict with bounded rewrites and a call budget — a Candidate Quality Result per
//! answered cell, and the candidates and experiments `fibon-verify gate` judges without
//! agents.

pub mod candidates;
pub mod experiment;
mod gate;
mod judge;

pub use crate::policy::{
    Budget, BuiltinJudge, Dimension, JudgeImpl, JudgeSpec, Policy, Scale, raw, validate,
};
pub use gate::{
    JudgeOutcome, JudgeRecord, Ledger, QualityResult, QualityState, Rewriter, blind_id, gate,
};
pub use judge::{Candidate, Report as JudgeReport, Score};
