//! The trace-level contract over the gateway's authoritative trace: `must_call_tools`
//! and `tool_call_min_frequency`, the URL whitelist over every URL-valued argument and
//! every citation, `prohibited_actions`, and `trace_mismatch` (calls the agent reports
//! that the gateway never saw).

use serde_json::{Value, json};

use super::CellInput;
use crate::gateway::Status;
use crate::target::Response;
use crate::vocab::{Behavior, CheckId, Finding};

/// The action an answer without a successful call to a required tool amounts to.
pub(crate) const CUTOFF_MEMORY: &str = "reply_with_cutoff_memory_directly";

pub(crate) fn check(
    input: &CellInput<'_>,
    response: &Response,
    reading: Option<&super::Reading>,
    behavior: Behavior,
    out: &mut Vec<Finding>,
) {
    let rules = &input.contract.trace;
    // Every call the gateway saw, whatever its status: one whose client gave up before the
    // answer (`cancelled`) or still served when the agent returned (`in_flight`) was made.
    let calls: Vec<_> = input.trace.iter().filter(|e| e.op == "call").collect();
    // Calls past the trace's cap are counted, not kept: they count wherever calls are
    // counted, and what only a kept call could show (its arguments) fails closed.
    let dropped = input.truncated;
    let dropped_calls_of = |tool: &str| dropped.map_or(0, |t| t.calls_of(tool));
    let answered = matches!(behavior, Behavior::Answered | Behavior::Silent);
    // An APPROVAL_DENIED cell whose approval tool was never asked for is a cell with every
    // tool available (nobody was asked): the tools it must call still count.
    let unasked =
        input.fault == Some(crate::vocab::FaultKind::ApprovalDenied) && !super::injected(input);
    if answered && (input.fault.is_none() || unasked) {
        for tool in &rules.must_call_tools {
            let n = calls
                .iter()
                .filter(|e| e.tool.as_deref() == Some(tool))
                .count() as u64
                + dropped_calls_of(tool);
            if n == 0 {
                out.push(Finding::error(
                    CheckId::MustCallTools,
                    format!("`{tool}` was never called"),
                ));
            } else if n < rules.tool_call_min_frequency {
                out.push(Finding::error(
                    CheckId::ToolCallMinFrequency,
                    format!(
                        "`{tool}` was called {n} times, fewer than {}",
                        rules.tool_call_min_frequency
                    ),
                ));
            }
        }
    }
    if !rules.url_whitelist.is_empty() {
        let allowed = |u: &str| rules.url_whitelist.iter().any(|p| url_within(u, p));
        // The kept calls, then the distinct calls the note kept past the trace's cap.
        let called = calls
            .iter()
            .map(|e| (e.tool.as_deref().unwrap_or("?"), e.arguments.as_ref()))
            .chain(
                dropped
                    .into_iter()
                    .flat_map(|t| &t.distinct_calls)
                    .map(|c| (c.tool.as_str(), Some(&c.arguments))),
            );
        for (tool, arguments) in called {
            let mut urls = Vec::new();
            collect_urls(arguments.unwrap_or(&Value::Null), &mut urls);
            for u in urls.into_iter().filter(|u| !allowed(u)) {
                out.push(
                    Finding::error(
                        CheckId::UrlWhitelist,
                        format!("`{tool}` was called with `{u}`, outside the whitelist"),
                    )
                    .with_evidence(json!({"url": u, "whitelist": rules.url_whitelist})),
                );
            }
        }
        if let Some(t) = dropped.filter(|t| t.arguments_not_kept > 0) {
            out.push(Finding::error(
                CheckId::UrlWhitelist,
                format!(
                    "{} calls past the trace's first {} entries were counted, not kept, with \
                     arguments too many or too long to keep: they could not be checked \
                     against the whitelist",
                    t.arguments_not_kept, t.kept
                ),
            ));
        }
        for c in response.citations.iter().filter(|c| !allowed(&c.url)) {
            out.push(
                Finding::error(
                    CheckId::UrlWhitelist,
                    format!("cited `{}`, outside the whitelist", c.url),
                )
                .with_evidence(json!({"url": c.url})),
            );
        }
        // A URL named in the answer is cited as much as one in `citations`.
        let named: Vec<String> = reading
            .map(|r| {
                r.analysis
                    .claims
                    .iter()
                    .filter(|c| c.fact.kind == super::citations::FactKind::Url)
                    .map(|c| c.fact.text.clone())
                    .collect::<Vec<_>>()
            })
            .unwrap_or_default()
            .into_iter()
            .filter(|u| !allowed(u) && !response.citations.iter().any(|c| &c.url == u))
            .collect();
        for u in named {
            out.push(
                Finding::error(
                    CheckId::UrlWhitelist,
                    format!("the answer cites `{u}`, outside the whitelist"),
                )
                .with_evidence(json!({"url": u})),
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
                })
                || dropped.is_some_and(|d| required.iter().any(|t| d.ok_calls_of(t) > 0));
            if answered && !grounded && !response.output_text().trim().is_empty() {
                out.push(Finding::error(
                    CheckId::ProhibitedAction,
                    format!(
                        "`{CUTOFF_MEMORY}`: answered without a successful call to {}",
                        list(&required)
                    ),
                ));
            }
        } else if calls
            .iter()
            .any(|e| e.tool.as_deref() == Some(action.as_str()))
            || dropped_calls_of(action) > 0
        {
            out.push(Finding::error(
                CheckId::ProhibitedAction,
                format!("called the prohibited `{action}`"),
            ));
        } else if let Some(t) = dropped.filter(|t| t.other_tools > 0) {
            out.push(Finding::error(
                CheckId::ProhibitedAction,
                format!(
                    "{} calls past the trace's first {} entries went to tool names too many to \
                     count by name: whether `{action}` was called cannot be told",
                    t.other_tools, t.kept
                ),
            ));
        }
    }
    for reported in &response.trace {
        let matches = |tool: Option<&str>, arguments: Option<&Value>| {
            tool == Some(reported.tool.as_str())
                && (reported.arguments.is_null() || arguments == Some(&reported.arguments))
        };
        // Past the trace's cap: a distinct call the note kept, or, when some arguments
        // were not kept, a call of the same tool.
        let seen = calls
            .iter()
            .any(|e| matches(e.tool.as_deref(), e.arguments.as_ref()))
            || dropped.is_some_and(|t| {
                t.distinct_calls
                    .iter()
                    .any(|c| matches(Some(c.tool.as_str()), Some(&c.arguments)))
                    || (t.calls_of(&reported.tool) > 0
                        && (reported.arguments.is_null() || t.arguments_not_kept > 0))
            });
        if !seen {
            out.push(
                Finding::error(
                    CheckId::TraceMismatch,
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
        Value::String(s) => urls_in(s, out),
        Value::Array(items) => items.iter().for_each(|i| collect_urls(i, out)),
        Value::Object(map) => map.values().for_each(|i| collect_urls(i, out)),
        _ => {}
    }
}

/// The URLs in a string: every `http://` or `https://` in it, whatever its case and
/// wherever it stands (`see https://…`), and a string that is a scheme-relative
/// `//host/…` URL.
fn urls_in(s: &str, out: &mut Vec<String>) {
    let t = s.trim();
    if t.starts_with("//") && t.len() > 2 && !t[2..].starts_with('/') {
        out.push(t.split_whitespace().next().unwrap_or(t).to_string());
    }
    let lower = t.to_ascii_lowercase();
    let mut from = 0;
    // The nearer of the two schemes, each time.
    let next = |from: usize| {
        ["http://", "https://"]
            .iter()
            .filter_map(|p| lower[from..].find(p).map(|i| i + from))
            .min()
    };
    while let Some(at) = next(from) {
        let end = t[at..]
            .find(|c: char| c.is_whitespace() || "\"'<>()[]{}`".contains(c))
            .map_or(t.len(), |i| at + i);
        out.push(
            t[at..end]
                .trim_end_matches(['.', ',', ';', ':', '!', '?'])
                .to_string(),
        );
        from = end.max(at + 1);
    }
}

/// Whether `url` lies within the whitelisted `prefix`, compared as URLs, not text: the
/// same scheme, host (case-insensitive; `docs.example.com.evil.com` is another host) and
/// port, no user information (`docs.example.com@evil.com`), and the prefix's path as
/// whole segments (`/api` covers `/api/x`, not `/apiv2`). A scheme-relative URL is read
/// as https.
pub(crate) fn url_within(url: &str, prefix: &str) -> bool {
    let absolute = match url.strip_prefix("//") {
        Some(rest) => format!("https://{rest}"),
        None => url.to_string(),
    };
    let (Ok(u), Ok(p)) = (url::Url::parse(&absolute), url::Url::parse(prefix)) else {
        return false;
    };
    if !u.username().is_empty() || u.password().is_some() {
        return false;
    }
    if u.scheme() != p.scheme()
        || u.host_str() != p.host_str()
        || u.port_or_known_default() != p.port_or_known_default()
    {
        return false;
    }
    let (up, pp) = (u.path(), p.path());
    pp.ends_with('/') && up.starts_with(pp)
        || up == pp
        || up
            .strip_prefix(pp)
            .is_some_and(|rest| rest.starts_with('/'))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn whitelisted_urls_are_compared_as_urls() {
        let p = "https://docs.anthropic.com";
        for ok in [
            "https://docs.anthropic.com/en/docs/models",
            "HTTPS://DOCS.Anthropic.com/x",
            "https://docs.anthropic.com:443/x",
            "//docs.anthropic.com/x",
        ] {
            assert!(url_within(ok, p), "{ok}");
        }
        for bad in [
            "https://docs.anthropic.com.evil.com/x",
            "https://docs.anthropic.com@evil.com/x",
            "https://user:pw@docs.anthropic.com/x",
            "http://docs.anthropic.com/x",
            "https://docs.anthropic.com:8443/x",
            "https://evil.com/https://docs.anthropic.com",
            "//evil.com/x",
            "not a url",
        ] {
            assert!(!url_within(bad, p), "{bad}");
        }
        assert!(url_within("https://a.com/api/x", "https://a.com/api"));
        assert!(url_within("https://a.com/api", "https://a.com/api"));
        assert!(!url_within("https://a.com/apiv2", "https://a.com/api"));
        assert!(url_within("https://a.com/api/v2", "https://a.com/api/"));
    }

    #[test]
    fn urls_are_found_anywhere_in_strings() {
        let mut out = Vec::new();
        collect_urls(
            &json!({"a": ["see https://evil.com/inline, then HTTPS://EVIL.COM/p.", " https://x.io/y "], "b": {"c": "//evil.com/m"}, "d": "no url"}),
            &mut out,
        );
        assert_eq!(
            out,
            [
                "https://evil.com/inline",
                "HTTPS://EVIL.COM/p",
                "https://x.io/y",
                "//evil.com/m"
            ]
        );
    }
}
