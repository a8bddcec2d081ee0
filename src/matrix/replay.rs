//! The `replay` target: recorded conversations (docs/history.md, History JSONL) re-
//! checked without invoking anything — the post-hoc audit of production logs. Each line is
//! a cell whose id is the conversation's id; its recorded tool calls stand in for the
//! gateway's trace, a recorded tool error on a required tool for the fault. Lines that do
//! not parse, or name an unknown skill, are `error` cells naming the line: fail closed.

use std::path::Path;

use indexmap::IndexMap;

use crate::checks::refusal::Lexicon;
use crate::checks::{CellInput, evaluate};
use crate::contract::FaultKind;
use crate::gateway::{Status, TraceEvent, result_text};
use crate::history::{Conversation, Item};
use crate::project::ValidProject;
use crate::report::CellReport;
use crate::scenario::{Complexity, Scenario};
use crate::target::{Invocation, Response};
use crate::vocab::{CheckId, Quadrant};

/// Checks every conversation of a history (History JSONL or OTLP JSON).
pub fn replay(
    project: &ValidProject,
    history: &Path,
    lexicon: &Lexicon,
) -> Result<Vec<CellReport>, crate::history::HistoryError> {
    let mut cells = Vec::new();
    crate::history::stream(history, |item, _| {
        let mut cell = check_item(project, item, lexicon);
        // History order, so that `merge` of sharded replays keeps it.
        cell.index = cells.len();
        cells.push(cell)
    })?;
    Ok(cells)
}

/// One history item as a cell.
pub fn check_item(project: &ValidProject, item: Item, lexicon: &Lexicon) -> CellReport {
    match item {
        Item::Conversation(c) => check_conversation(project, &c, lexicon),
        Item::Bad { line, reason } => {
            CellReport::unusable_line(CheckId::HistoryParse, line, &reason)
        }
    }
}

/// One recorded conversation, checked against its contract.
pub fn check_conversation(
    project: &ValidProject,
    conv: &Conversation,
    lexicon: &Lexicon,
) -> CellReport {
    let id = conv.id.clone();
    let skill = conv.skill.clone();
    let Some(contract) = project.contracts.iter().find(|c| c.skill == skill) else {
        return CellReport::unknown_skill(conv);
    };
    let required: Vec<&String> = if contract.trace.must_call_tools.is_empty() {
        contract.preconditions.tools.iter().collect()
    } else {
        contract.trace.must_call_tools.iter().collect()
    };
    let mut trace = Vec::new();
    let mut fault: Option<(FaultKind, String)> = None;
    let text_cap = crate::gateway::GatewayOptions::default().trace_text_cap;
    for (i, call) in conv.trace.iter().enumerate() {
        let tool = call.tool.clone();
        let mut result_bytes = 0;
        let (status, text, kind, error) = match (&call.result, &call.error) {
            (_, Some(e)) => {
                let code = e["code"].as_str().unwrap_or("ERROR").to_string();
                let kind: Option<FaultKind> = code.parse().ok();
                let status = kind
                    .and_then(FaultKind::call_status)
                    .unwrap_or(Status::ToolError);
                (
                    status,
                    String::new(),
                    kind,
                    Some(e["message"].as_str().unwrap_or(&code).to_string()),
                )
            }
            (Some(r), _) => {
                let mut text = result_text(r);
                // Kept as the gateway keeps a live call's result (its trace text cap).
                if text.len() > text_cap {
                    result_bytes = text.len();
                    text.truncate(text.floor_char_boundary(text_cap));
                }
                if r["isError"].as_bool() == Some(true) {
                    (Status::ToolError, text, None, None)
                } else if r["content"].as_array().is_some_and(Vec::is_empty)
                    || text.trim().is_empty()
                {
                    (Status::Empty, text, Some(FaultKind::EmptyResult), None)
                } else {
                    (Status::Ok, text, None, None)
                }
            }
            (None, _) => (Status::Ok, String::new(), None, None),
        };
        if let Some(k) = kind
            && fault.is_none()
            && required.contains(&&tool)
        {
            fault = Some((k, tool.clone()));
        }
        trace.push(TraceEvent {
            seq: i as u64 + 1,
            at_ms: 0.0,
            transport: "history",
            op: "call",
            tool: Some(tool),
            provenance: None,
            arguments: Some(call.arguments.clone()),
            fault: kind.map(|k| k.as_str().to_string()),
            status,
            result_bytes: result_bytes.max(text.len()),
            truncated: result_bytes > text.len(),
            result_text: text,
            tools: None,
            error,
            duration_ms: 0.0,
        });
    }
    // A recorded answer is judged on as much as a live one would be (the output cap).
    let output_cap = crate::target::Limits::default().output_cap;
    let mut truncated = false;
    let cut =
        |text: &str| serde_json::Value::String(text[..text.floor_char_boundary(output_cap)].into());
    let recorded: serde_json::Map<String, serde_json::Value> = conv
        .response
        .as_object()
        .into_iter()
        .flatten()
        .map(|(key, value)| {
            let value = match value {
                serde_json::Value::String(s) if key == "output" && s.len() > output_cap => {
                    truncated = true;
                    cut(s)
                }
                serde_json::Value::Array(_) | serde_json::Value::Object(_) if key == "output" => {
                    let text = value.to_string();
                    if text.len() > output_cap {
                        truncated = true;
                        cut(&text)
                    } else {
                        value.clone()
                    }
                }
                _ => value.clone(),
            };
            (key.clone(), value)
        })
        .collect();
    let recorded = serde_json::Value::Object(recorded);
    let response = Response::parse(recorded.to_string().as_bytes());
    let invocation = Invocation::Responded {
        response: response.clone(),
        code: None,
        stderr: String::new(),
        truncated,
    };
    let scenario = Scenario {
        id: id.clone(),
        skill: skill.clone(),
        complexity: Complexity::Simple,
        input: conv.input.clone(),
        tools: IndexMap::new(),
        remove: Vec::new(),
        faults: Vec::new(),
        approval: Default::default(),
        facts: Vec::new(),
        forbidden: Vec::new(),
        schema_drift: IndexMap::new(),
        source: Default::default(),
        digest: String::new(),
    };
    let removed: Vec<String> = fault.iter().map(|(_, t)| t.clone()).collect();
    let outcome = evaluate(&CellInput {
        contract,
        scenario: &scenario,
        fault: fault.as_ref().map(|(k, _)| *k),
        removed: &removed,
        invocation: &invocation,
        trace: &trace,
        truncated: None,
        lexicon,
        judged_refusal: None,
    });
    let quadrant = if fault.is_some() {
        Quadrant::Q3
    } else {
        Quadrant::Q1
    };
    CellReport::new(
        id,
        skill,
        outcome.behavior,
        outcome.verdict,
        outcome.findings,
    )
    .placed(
        String::new(),
        quadrant,
        fault.as_ref().map(|(k, _)| *k),
        removed,
    )
    .of_contract(contract.source.display().to_string(), contract.source_line)
    .versioned(contract.version.clone(), None)
    .at_risk(contract.risk_level)
    .with_output(response.output)
    .with_trace(trace)
    .with_claims(Vec::new(), response.citations)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::vocab::Verdict;

    #[test]
    fn an_unparsable_line_is_an_error_cell_naming_the_line() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("fibon.yaml"),
            "contracts: []\nscenarios: []\n",
        )
        .unwrap();
        let project = crate::project::load_valid(&dir.path().join("fibon.yaml")).unwrap();
        let c = check_item(
            &project,
            Item::Bad {
                line: 7,
                reason: "not JSON: x".into(),
            },
            &Lexicon::builtin(),
        );
        assert_eq!((c.id.as_str(), c.verdict), ("line-7", Verdict::Error));
        assert!(c.findings[0].message.starts_with("line 7: not JSON"));
    }
}
