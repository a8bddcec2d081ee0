//! The intervention ladder (docs/background.md, "The intervention ladder"), for an
//! `openai` target with `intervene: true` whose cell violated `must_call_tools` with the
//! tools available: the cell again, with (1) a system warning, (2) `tool_choice` forced to
//! the first required tool, (3) degraded translation — the verifier calls the required
//! tools itself, in order, and the model only restates — until the model complies. The
//! cell's verdict does not change; where it complied is reported.

use serde_json::Value;

use super::Cell;
use super::runner::{RunOptions, open};
use crate::checks::{CellInput, evaluate};
use crate::config::Target;
use crate::gateway::{FaultPlan, Gateway, Session};
use crate::project::ValidProject;
use crate::report::{InterventionResult, InterventionStage};
use crate::target::{Intervention, TranslatedCall, invoke};
use crate::vocab::{CheckId, Finding, Verdict};

/// The trace's `transport` for the calls the verifier makes itself in stage 3.
const VERIFIER: &str = "verifier";

/// Runs the ladder for `cell` and says where the model complied, if it did.
pub(super) async fn ladder(
    project: &ValidProject,
    target: &Target,
    gateway: &Gateway,
    cell: &Cell,
    options: &RunOptions,
) -> InterventionResult {
    let contract = &project.contracts[cell.contract];
    let scenario = &project.scenarios[cell.scenario];
    let required = contract.trace.must_call_tools.clone();
    let first = required.first().cloned().unwrap_or_default();
    let mut stages = Vec::new();
    for stage in 1..=3u8 {
        let name = ["warning", "forced_tool_choice", "degraded_translation"][stage as usize - 1];
        let (session, mut request) = open(gateway, project, cell, FaultPlan::none());
        request.intervention = Some(match stage {
            1 => Intervention::Warn(required.clone()),
            2 => Intervention::Force(first.clone()),
            _ => match translate(session.session(), &required, &scenario.input).await {
                Ok(calls) => Intervention::Translate(calls),
                Err(note) => {
                    stages.push(InterventionStage {
                        stage,
                        name,
                        complied: false,
                        verdict: Verdict::Error,
                        note,
                    });
                    break;
                }
            },
        });
        let invocation = invoke(target, &request, options.limits).await;
        let recorded = session.recorded();
        drop(session);
        let trace = recorded.events;
        let outcome = evaluate(&CellInput {
            contract,
            scenario,
            fault: None,
            removed: &[],
            invocation: &invocation,
            trace: &trace,
            truncated: recorded.truncated.as_ref(),
            lexicon: &options.lexicon,
            judged_refusal: None,
        });
        let deciding: Vec<&Finding> = outcome
            .findings
            .iter()
            .filter(|f| {
                f.check == CheckId::MustCallTools
                    || f.check == CheckId::TargetUnavailable
                    || (stage == 3
                        && matches!(f.check, CheckId::ExpectedFacts | CheckId::ForbiddenFacts))
            })
            .collect();
        let complied = outcome.verdict != Verdict::Error && deciding.is_empty();
        stages.push(InterventionStage {
            stage,
            name,
            complied,
            verdict: outcome.verdict,
            note: deciding
                .iter()
                .map(|f| format!("{}: {}", f.check, f.message))
                .collect::<Vec<_>>()
                .join("; "),
        });
        if complied {
            return InterventionResult {
                complied_at: Some(stage),
                stages,
            };
        }
    }
    InterventionResult {
        complied_at: None,
        stages,
    }
}

/// Stage 3: the verifier calls each required tool, in order, through the cell's session
/// (recorded with transport `verifier`). The first tool's arguments come from the input;
/// each later tool's from the result before it, so a chain such as `read_pdf` →
/// `summarize_text` is carried through. A failed call does not stop the chain: the model
/// is handed the error like any result. `Err` (the stage's note) when a tool's arguments
/// cannot be derived.
async fn translate(
    session: &Session,
    required: &[String],
    input: &str,
) -> Result<Vec<TranslatedCall>, String> {
    let listed = session.list_page(VERIFIER, false);
    let mut calls: Vec<TranslatedCall> = Vec::new();
    for tool in required {
        let schema = listed
            .iter()
            .find(|t| t["name"] == tool.as_str())
            .map_or(Value::Null, |t| t["inputSchema"].clone());
        let source = calls.last().map_or(input, |c| c.result.as_str());
        let arguments = derive_arguments(&schema, source, input).map_err(|property| {
            format!(
                "no arguments for `{tool}` could be derived: its required property `{property}` is not a string"
            )
        })?;
        let outcome = session.call(VERIFIER, tool, arguments.clone(), None).await;
        calls.push(TranslatedCall {
            tool: tool.clone(),
            arguments,
            result: outcome.reply_text(),
        });
    }
    Ok(calls)
}

/// Arguments for one of the verifier's own calls, from the tool's input schema: each
/// required string property gets `source` (the input, or the result of the call before);
/// a property whose name says `url`/`uri` gets the first URL of `source`, else of
/// `input`. `Err(property)` when a required property is not a string.
fn derive_arguments(schema: &Value, source: &str, input: &str) -> Result<Value, String> {
    let first_url = |text: &str| {
        text.split_whitespace()
            .find(|w| w.starts_with("http://") || w.starts_with("https://"))
            .map(|w| w.trim_end_matches(['.', ',', ')', '"', '\'']).to_string())
    };
    let url = first_url(source).or_else(|| first_url(input));
    let mut args = serde_json::Map::new();
    for name in schema["required"].as_array().into_iter().flatten() {
        let Some(name) = name.as_str() else { continue };
        let kind = schema["properties"][name]["type"]
            .as_str()
            .unwrap_or("string");
        if kind != "string" {
            return Err(name.to_string());
        }
        let value = match &url {
            Some(url) if name.contains("url") || name.contains("uri") => url.clone(),
            _ => source.to_string(),
        };
        args.insert(name.to_string(), Value::String(value));
    }
    Ok(Value::Object(args))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::derive_arguments;

    #[test]
    fn each_required_string_gets_the_source_and_urls_get_a_url() {
        let schema = json!({"type": "object", "required": ["url", "question"],
            "properties": {"url": {"type": "string"}, "question": {"type": "string"}, "n": {"type": "integer"}}});
        let args = derive_arguments(
            &schema,
            "Read https://example.com/a.pdf, please.",
            "ignored",
        )
        .unwrap();
        assert_eq!(
            args,
            json!({"url": "https://example.com/a.pdf", "question": "Read https://example.com/a.pdf, please."})
        );
    }

    #[test]
    fn a_later_call_takes_the_previous_result_and_the_inputs_url() {
        let schema = json!({"required": ["text", "source_url"],
            "properties": {"text": {"type": "string"}, "source_url": {"type": "string"}}});
        let args = derive_arguments(
            &schema,
            "Clause 4: payment within 45 days.",
            "Review https://example.com/c.pdf",
        )
        .unwrap();
        assert_eq!(
            args,
            json!({"text": "Clause 4: payment within 45 days.", "source_url": "https://example.com/c.pdf"})
        );
    }

    #[test]
    fn a_required_property_that_is_not_a_string_is_named() {
        let schema = json!({"required": ["q", "limit"],
            "properties": {"q": {"type": "string"}, "limit": {"type": "integer"}}});
        assert_eq!(
            derive_arguments(&schema, "x", "x"),
            Err("limit".to_string())
        );
        // No schema (or no required properties): no arguments.
        assert_eq!(
            derive_arguments(&serde_json::Value::Null, "x", "x"),
            Ok(json!({}))
        );
    }
}
