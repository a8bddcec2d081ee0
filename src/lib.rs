//! fibon-verify: a contract verifier and CI gate for LLM agent Skills.
//!
//! It loads Skill contracts and scenarios, and checks that a system fails loudly and
//! predictably when a tool a Skill depends on is missing or failing — instead of silently
//! degrading into a confident, fabricated answer. See `docs/README.md` for the normative
//! interfaces and the README for usage.
//!
//! Data flows load → plan → gateway session → target → checks → report → exit code; the
//! modules are layered bottom to top ([`vocab`] … [`cli`]) and a module uses only lower
//! layers (ARCHITECTURE.md; `tests/layers.rs` enforces it).

pub mod agent;
pub mod chat;
pub mod checks;
pub mod cli;
pub mod config;
pub mod contract;
pub mod diag;
pub mod errors;
pub mod exit_code;
pub mod gate;
pub mod gateway;
pub mod history;
pub mod lexicon;
pub mod matrix;

pub mod mcp;
pub mod policy;
pub mod probe;
pub mod project;
pub mod quality;
pub mod report;
pub mod sample;
pub mod scenario;
pub mod schema;
pub mod secrets;
pub mod source;
pub mod target;
pub mod text;
pub mod vocab;

pub use cli::main_impl;
