//! What the system did, from structured signals — the exit status and timeout, `status`
//! and `error.code`, the `degraded` marker — and from its words: a partial answer that
//! says so, the contract's `message_template`, or a refusal in prose ([`super::refusal`]). An answer that mentions
//! a problem but states facts the tools supported is still an answer.

use super::CellInput;
use super::citations;
use super::refusal;
use crate::report::Behavior;
use crate::target::Invocation;

/// Classifies one invocation. `injected`: a fault was injected, so an unmarked answer is
/// `silent`.
pub fn classify(input: &CellInput<'_>, injected: bool) -> Behavior {
    match input.invocation {
        Invocation::Failed { .. } => Behavior::NotRun,
        Invocation::TimedOut { .. } => Behavior::Timeout,
        Invocation::HardInterrupt { .. } => Behavior::HardInterrupt,
        Invocation::Responded { response, .. } => {
            let answer = citations::output_text(&response.output);
            if response
                .status
                .as_deref()
                .is_some_and(|s| s.eq_ignore_ascii_case("error"))
            {
                Behavior::ExplicitFailure
            } else if response.degraded || refusal::is_partial(&answer, input.lexicon) {
                Behavior::DegradedMarked
            } else if refusal::classify(
                &answer,
                input.contract.degradation.message_template.as_deref(),
                &input.tool_evidence(),
                &input.scenario.input,
                input.lexicon,
            ) != refusal::RefusalKind::None
                || (injected && matches!(input.judged_refusal, Some(Ok(true))))
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
