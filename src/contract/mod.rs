//! Skill contracts: loading a contract file (YAML or JSON, either form of docs/contract.md) into
//! a validated [`Contract`].

mod model;
pub mod raw;
mod rule;
mod validate;

pub use model::*;
pub use rule::{CmpOp, Rule, RuleError, is_singular};
pub(crate) use validate::absolute_http_url;
pub use validate::validate;
