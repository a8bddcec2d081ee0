//! Hostile input, end to end (issue 18): agents that flood, collude or echo secrets, and
//! files and requests built to exhaust the verifier. Each module reproduces one class of
//! attack with small scripts as agents and asserts the documented cap or refusal
//! (README, "Limits and threat model").

mod common;

#[path = "hostile/support.rs"]
mod support;

#[path = "hostile/floods.rs"]
mod floods;
#[path = "hostile/gateway.rs"]
mod gateway;
#[path = "hostile/inputs.rs"]
mod inputs;
#[path = "hostile/secrets.rs"]
mod secrets;
