//! What the system did, from structured signals: the exit status and timeout, `status`
//! and `error.code`, the `degraded` marker, and the contract's `message_template`. A
//! refusal in free prose is the detectors' job (next to this file).

use crate::contract::Contract;
use crate::report::Behavior;
use crate::target::Invocation;

use super::text;

/// Classifies one invocation. `injected`: a fault was injected, so an unmarked answer is
/// `silent`.
pub fn classify(invocation: &Invocation, contract: &Contract, injected: bool) -> Behavior {
    match invocation {
        Invocation::Failed { .. } => Behavior::NotRun,
        Invocation::TimedOut { .. } => Behavior::Timeout,
        Invocation::HardInterrupt { .. } => Behavior::HardInterrupt,
        Invocation::Responded { response, .. } => {
            if response
                .status
                .as_deref()
                .is_some_and(|s| s.eq_ignore_ascii_case("error"))
            {
                Behavior::ExplicitFailure
            } else if response.degraded {
                Behavior::DegradedMarked
            } else if contract
                .degradation
                .message_template
                .as_deref()
                .is_some_and(|t| text::contains(&response.output_text(), t))
            {
                Behavior::Refused
            } else if injected {
                Behavior::Silent
            } else {
                Behavior::Answered
            }
        }
    }
}
