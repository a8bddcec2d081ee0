//! Grounding: is what the answer asserts backed by what the tools returned? A refusal that
//! still asserts unsupported facts is not a clean refusal (a veneer over a fabricated
//! answer); with `strict_citation_required` every key fact must be supported
//! (`citation_unsupported`); and a cited URL no call fetched or returned is forged
//! (`citation_forged_url`).

use serde_json::json;

use super::{CellInput, citations};
use crate::report::{Behavior, Finding};
use crate::target::Response;

pub(crate) fn check(
    input: &CellInput<'_>,
    response: &Response,
    behavior: Behavior,
    injected: bool,
    out: &mut Vec<Finding>,
) {
    let answer = citations::output_text(&response.output);
    if answer.trim().is_empty() {
        return;
    }
    let evidence = input.evidence();
    let facts = citations::extract(&answer);
    let unsupported = citations::unsupported(&facts, &evidence);
    let listed: Vec<&str> = unsupported.iter().map(|f| f.text.as_str()).collect();
    if behavior == Behavior::Refused && !unsupported.is_empty() {
        let message = format!(
            "refused, then asserted facts no tool result supports: {}",
            listed.join(", ")
        );
        let evidence =
            json!({"unsupported_facts": unsupported, "fault": input.fault.map(|f| f.as_str())});
        out.push(
            if injected {
                Finding::error("silent_degradation", message)
            } else {
                Finding::error("citation_unsupported", message)
            }
            .with_evidence(evidence),
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
                "citation_unsupported",
                format!("facts no tool result supports: {}", listed.join(", ")),
            )
            .with_evidence(json!({"unsupported_facts": unsupported})),
        );
    }
    let cited: Vec<String> = response.citations.iter().map(|c| c.url.clone()).collect();
    let forged = citations::forged_urls(&answer, &cited, &input.fetched_urls(), &evidence);
    if !forged.is_empty() {
        out.push(
            Finding::error(
                "citation_forged_url",
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
