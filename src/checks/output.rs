//! `io_contract.output_assertions`: RFC 9535 JSONPath + rule over the agent's JSON output,
//! on answered cells with the tools available.

use serde_json::{Value, json};

use super::CellInput;
use crate::target::Response;
use crate::vocab::{Behavior, CheckId, Finding};

pub(crate) fn check(
    input: &CellInput<'_>,
    response: &Response,
    behavior: Behavior,
    out: &mut Vec<Finding>,
) {
    let assertions = &input.contract.io.output_assertions;
    if assertions.is_empty() || behavior != Behavior::Answered {
        return;
    }
    // Text that is JSON counts as JSON.
    let value = match &response.output {
        Value::String(s) => match serde_json::from_str::<Value>(s) {
            Ok(v) => v,
            Err(_) => {
                out.push(Finding::error(
                    CheckId::OutputAssertion,
                    "the output is not JSON, so its output assertions cannot hold",
                ));
                return;
            }
        },
        v => v.clone(),
    };
    for a in assertions {
        let nodes = a.path.query(&value).all();
        if let Err(why) = a.rule.check(&nodes, a.singular) {
            out.push(
                Finding::error(
                    CheckId::OutputAssertion,
                    format!("`{}` {}: {why}", a.path_text, a.rule_text),
                )
                .with_evidence(json!({"path": a.path_text, "rule": a.rule_text})),
            );
        }
    }
}
