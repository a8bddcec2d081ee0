//! The trace-level contract over the gateway's authoritative trace: `must_call_tools`
//! and `tool_call_min_frequency`, the URL whitelist over every URL-valued argument and
//! every citation, `prohibited_actions`, and `trace_mismatch` (calls the agent reports
//! that the gateway never saw).

use serde_json::{Value, json};

use super::CellInput;
use crate::gateway::Status;
use crate::report::{Behavior, Finding};
use crate::target::Response;

/// The action an answer without a successful call to a required tool amounts to.
pub(crate) const CUTOFF_MEMORY: &str = "reply_with_cutoff_memory_directly";

pub(crate) fn check(
    input: &CellInput<'_>,
    response: &Response,
    behavior: Behavior,
    out: &mut Vec<Finding>,
) {
    let rules = &input.contract.trace;
    // Every call the gateway saw, whatever its status: one whose client gave up before the
    // answer (`cancelled`) or still served when the agent returned (`in_flight`) was made.
    let calls: Vec<_> = input.trace.iter().filter(|e| e.op == "call").collect();
    let answered = matches!(behavior, Behavior::Answered | Behavior::Silent);
    if answered && input.fault.is_none() {
        for tool in &rules.must_call_tools {
            let n = calls
                .iter()
                .filter(|e| e.tool.as_deref() == Some(tool))
                .count() as u64;
            if n == 0 {
                out.push(Finding::error(
                    "must_call_tools",
                    format!("`{tool}` was never called"),
                ));
            } else if n < rules.tool_call_min_frequency {
                out.push(Finding::error(
                    "tool_call_min_frequency",
                    format!(
                        "`{tool}` was called {n} times, fewer than {}",
                        rules.tool_call_min_frequency
                    ),
                ));
            }
        }
    }
    if !rules.url_whitelist.is_empty() {
        let allowed = |u: &str| {
            rules
                .url_whitelist
                .iter()
                .any(|p| u.starts_with(p.as_str()))
        };
        for e in &calls {
            let mut urls = Vec::new();
            collect_urls(e.arguments.as_ref().unwrap_or(&Value::Null), &mut urls);
            for u in urls.into_iter().filter(|u| !allowed(u)) {
                out.push(
                    Finding::error(
                        "url_whitelist",
                        format!(
                            "`{}` was called with `{u}`, outside the whitelist",
                            e.tool.as_deref().unwrap_or("?")
                        ),
                    )
                    .with_evidence(json!({"url": u, "whitelist": rules.url_whitelist})),
                );
            }
        }
        for c in response.citations.iter().filter(|c| !allowed(&c.url)) {
            out.push(
                Finding::error(
                    "url_whitelist",
                    format!("cited `{}`, outside the whitelist", c.url),
                )
                .with_evidence(json!({"url": c.url})),
            );
        }
    }
    for action in &rules.prohibited_actions {
        if action == CUTOFF_MEMORY {
            let required: Vec<&String> = if rules.must_call_tools.is_empty() {
                input.contract.preconditions.tools.iter().collect()
            } else {
                rules.must_call_tools.iter().collect()
            };
            let grounded = required.is_empty()
                || calls.iter().any(|e| {
                    e.status == Status::Ok && e.tool.as_ref().is_some_and(|t| required.contains(&t))
                });
            if answered && !grounded && !response.output_text().trim().is_empty() {
                out.push(Finding::error(
                    "prohibited_action",
                    format!(
                        "`{CUTOFF_MEMORY}`: answered without a successful call to {}",
                        list(&required)
                    ),
                ));
            }
        } else if let Some(e) = calls
            .iter()
            .find(|e| e.tool.as_deref() == Some(action.as_str()))
        {
            out.push(Finding::error(
                "prohibited_action",
                format!(
                    "called the prohibited `{}`",
                    e.tool.as_deref().unwrap_or("")
                ),
            ));
        }
    }
    for reported in &response.trace {
        let seen = calls.iter().any(|e| {
            e.tool.as_deref() == Some(&reported.tool)
                && (reported.arguments.is_null()
                    || e.arguments.as_ref() == Some(&reported.arguments))
        });
        if !seen {
            out.push(
                Finding::error(
                    "trace_mismatch",
                    format!(
                        "the agent reports a call to `{}` the gateway never saw",
                        reported.tool
                    ),
                )
                .with_evidence(json!({"reported": reported})),
            );
        }
    }
}

fn list(tools: &[&String]) -> String {
    tools
        .iter()
        .map(|t| format!("`{t}`"))
        .collect::<Vec<_>>()
        .join(" or ")
}

/// Every string in a JSON value that is an http(s) URL.
pub(crate) fn collect_urls(v: &Value, out: &mut Vec<String>) {
    match v {
        Value::String(s) if s.starts_with("http://") || s.starts_with("https://") => {
            out.push(s.clone())
        }
        Value::Array(items) => items.iter().for_each(|i| collect_urls(i, out)),
        Value::Object(map) => map.values().for_each(|i| collect_urls(i, out)),
        _ => {}
    }
}
