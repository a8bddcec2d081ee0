//! `expect.facts` (in the answer of an available-tools cell) and `expect.forbidden` (in no
//! answer, ever).

use serde_json::json;

use super::CellInput;
use crate::target::Response;
use crate::text;
use crate::vocab::{Behavior, CheckId, Finding};

pub(crate) fn check(
    input: &CellInput<'_>,
    response: &Response,
    behavior: Behavior,
    out: &mut Vec<Finding>,
) {
    let answer = response.output_text();
    for f in input
        .scenario
        .forbidden
        .iter()
        .filter(|f| text::contains(&answer, f))
    {
        out.push(
            Finding::error(
                CheckId::ForbiddenFacts,
                format!("the answer contains the forbidden `{f}`"),
            )
            .with_evidence(json!({"fact": f})),
        );
    }
    if input.fault.is_none() && behavior == Behavior::Answered {
        let missing: Vec<&String> = input
            .scenario
            .facts
            .iter()
            .filter(|f| !text::contains(&answer, f))
            .collect();
        if !missing.is_empty() {
            out.push(
                Finding::error(
                    CheckId::ExpectedFacts,
                    format!(
                        "the answer lacks {}",
                        missing
                            .iter()
                            .map(|f| format!("`{f}`"))
                            .collect::<Vec<_>>()
                            .join(", ")
                    ),
                )
                .with_evidence(json!({"missing": missing})),
            );
        }
    }
}
