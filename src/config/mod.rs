//! `fibon.yaml`: where the contracts and scenarios are, the target, the platform, the
//! matrix and the report directory.

mod model;
pub mod placeholder;
pub mod raw;
mod validate;

pub use model::*;
pub use validate::{DEFAULT_TIMEOUT, validate};
