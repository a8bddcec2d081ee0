//! Grounding: is what the answer asserts backed by what the tools returned? A failure
//! signal (an error status, a refusal the judge confirmed) wrapped around ungrounded
//! assertions is a veneer over a fabricated answer; with `strict_citation_required` every
//! key fact must be supported (`citation_unsupported`) — in any notation, in its context,
//! or as a simple computation from the evidence; and a cited URL no call fetched or
//! returned is forged (`citation_forged_url`).

use serde_json::json;

use super::{CellInput, Reading};
use crate::target::Response;
use crate::vocab::{Behavior, CheckId, Finding};

pub(crate) fn check(
    input: &CellInput<'_>,
    response: &Response,
    reading: &Reading,
    behavior: Behavior,
    injected: bool,
    out: &mut Vec<Finding>,
) {
    if reading.text.trim().is_empty() {
        return;
    }
    let unsupported = reading.unsupported();
    let listed: Vec<String> = unsupported
        .iter()
        .map(|(f, why)| match why {
            Some(why) => format!("{} ({why})", f.text),
            None => f.text.clone(),
        })
        .collect();
    // A refusal the judge confirmed is judged on its facts alone (the judge is asked only
    // when there are none); an error status around statements of the subject is a veneer.
    let ungrounded = if behavior == Behavior::Refused {
        unsupported.iter().map(|(f, _)| f.text.clone()).collect()
    } else {
        reading.ungrounded()
    };
    let derived = reading.derived();
    if injected
        && matches!(behavior, Behavior::ExplicitFailure | Behavior::Refused)
        && !ungrounded.is_empty()
    {
        let signal = if behavior == Behavior::ExplicitFailure {
            "reported an error"
        } else {
            "refused"
        };
        out.push(
            Finding::error(
                CheckId::SilentDegradation,
                format!(
                    "{signal}, then asserted what no tool result supports: {}",
                    ungrounded.join(", ")
                ),
            )
            .with_evidence(json!({
                "unsupported_facts": listed,
                "ungrounded": ungrounded,
                "fault": input.fault.map(|f| f.as_str()),
            })),
        );
    } else if !injected && behavior == Behavior::Refused && !unsupported.is_empty() {
        out.push(
            Finding::error(
                CheckId::CitationUnsupported,
                format!(
                    "refused, then asserted facts no tool result supports: {}",
                    listed.join(", ")
                ),
            )
            .with_evidence(json!({"unsupported_facts": listed})),
        );
    } else if input.contract.trace.strict_citation_required
        && matches!(
            behavior,
            Behavior::Answered | Behavior::Silent | Behavior::DegradedMarked
        )
        && !unsupported.is_empty()
    {
        out.push(
            Finding::error(
                CheckId::CitationUnsupported,
                format!("facts no tool result supports: {}", listed.join(", ")),
            )
            .with_evidence(json!({"unsupported_facts": listed, "computed_facts": derived})),
        );
    }
    // Citations: the `citations` field, and URLs the answer names outside talk of the
    // process.
    let mut cited: Vec<String> = response.citations.iter().map(|c| c.url.clone()).collect();
    cited.extend(reading.cited_urls());
    let forged = super::citations::forged_urls(&cited, &input.fetched_urls(), &input.evidence());
    if !forged.is_empty() {
        out.push(
            Finding::error(
                CheckId::CitationForgedUrl,
                format!(
                    "cites {} that no call fetched",
                    forged
                        .iter()
                        .map(|u| format!("`{u}`"))
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            )
            .with_evidence(json!({"forged_urls": forged})),
        );
    }
}
