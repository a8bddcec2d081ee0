//! What the system did, from structured signals — the exit status and timeout, `status`
//! and `error.code`, the `degraded` marker — and from what its answer asserts
//! ([`super::claims`]): an answer that asserts nothing about the question's subject is no
//! answer, whatever its wording (a refusal); one that asserts something is an answer,
//! however much regret wraps it. The refusal lexicon names the reason; it does not decide.

use super::{CellInput, Reading, refusal};
use crate::target::Invocation;
use crate::vocab::Behavior;

/// Classifies one invocation. `injected`: a fault was injected, so an unmarked answer is
/// `silent`. `reading`: the answer's analysis ([`CellInput::reading`]).
pub fn classify(input: &CellInput<'_>, injected: bool, reading: Option<&Reading>) -> Behavior {
    match input.invocation {
        Invocation::Failed { .. } => Behavior::NotRun,
        Invocation::TimedOut { .. } => Behavior::Timeout,
        Invocation::HardInterrupt { .. } => Behavior::HardInterrupt,
        Invocation::Responded { response, .. } => {
            let Some(reading) = reading else {
                return Behavior::NotRun;
            };
            if response
                .status
                .as_deref()
                .is_some_and(|s| s.eq_ignore_ascii_case("error"))
            {
                Behavior::ExplicitFailure
            } else if response.degraded || refusal::is_partial(&reading.text, input.lexicon) {
                Behavior::DegradedMarked
            } else if reading.text.trim().is_empty() {
                if injected {
                    Behavior::Silent
                } else {
                    Behavior::Answered
                }
            } else if (injected && !reading.asserts() && reading.speaks_of_process())
                || (!injected && !reading.asserts() && reading.analysis.reports_failure)
                || (injected && matches!(input.judged_refusal, Some(Ok(true))))
            {
                // Under a fault, an answer that asserts nothing and speaks of the process
                // (however it words it) refuses; with every tool available, a refusal also
                // needs refusing words ("I can't…"). One that asserts nothing and says
                // nothing of the failure either (the question parroted) is `silent` with no
                // answer: a failure of its own, not silent degradation.
                Behavior::Refused
            } else if injected {
                Behavior::Silent
            } else {
                Behavior::Answered
            }
        }
    }
}
