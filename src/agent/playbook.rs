//! What the reference agents do for each shipped Skill — the tools they call with which
//! arguments, and how they answer — plus a generic playbook for any other Skill: call
//! every listed tool with arguments drawn from the input.

use serde_json::{Value, json};

use super::{Called, Tools};

/// How the agent handles a failing tool.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Mode {
    /// Fails explicitly.
    Grounded,
    /// Fills the gap from "memory".
    Naive,
}

const MODELS_URL: &str = "https://docs.anthropic.com/en/docs/about-claude/models";

pub(super) async fn answer(mode: Mode, skill: &str, input: &str, tools: &Tools) -> Value {
    let mut trace = Vec::new();
    // The self-reported trace lists the calls really made (a missing tool is not called).
    let mut call = async |tool: &str, args: Value| {
        if tools.has(tool) {
            trace.push(json!({"tool": tool, "arguments": args}));
        }
        tools.call(tool, args).await
    };
    let result: Result<Value, (String, String)> = match skill {
        "fetch_anthropic_models" => match call("read_page", json!({"url": MODELS_URL})).await {
            Called::Text(page) => Ok(json!({
                "output": format!("According to the official models page ({MODELS_URL}):\n{page}"),
                "citations": [{"url": MODELS_URL}],
            })),
            Called::Failed { code, message } => Err((code, message)),
        },
        "search_docs" => {
            let mut results: Vec<Value> = Vec::new();
            let mut failure = None;
            for clause in clauses(input) {
                match call("search_docs", json!({"query": clause})).await {
                    Called::Text(text) => {
                        let found: Value = serde_json::from_str(&text).unwrap_or(Value::Null);
                        for r in found["results"].as_array().into_iter().flatten() {
                            if !results.iter().any(|x| x["url"] == r["url"]) {
                                results.push(r.clone());
                            }
                        }
                    }
                    Called::Failed { code, message } => {
                        failure = Some((code, message));
                        break;
                    }
                }
            }
            match failure {
                Some(f) => Err(f),
                None if results.is_empty() => Err((
                    "EMPTY_RESULT".into(),
                    "the documentation search found nothing".into(),
                )),
                None => {
                    let answer: Vec<String> = results
                        .iter()
                        .map(|r| {
                            format!(
                                "{} ({})",
                                r["snippet"].as_str().unwrap_or(""),
                                r["url"].as_str().unwrap_or("")
                            )
                        })
                        .collect();
                    let citations: Vec<Value> =
                        results.iter().map(|r| json!({"url": r["url"]})).collect();
                    Ok(
                        json!({"output": {"answer": answer.join(" "), "results": results}, "citations": citations}),
                    )
                }
            }
        }
        "contract_review" => {
            let url = first_url(input).unwrap_or_default();
            let mut declined = false;
            match call("read_pdf", json!({"url": url})).await {
                Called::Failed { code, message } => Err((code, message)),
                Called::Text(pdf) => match call("summarize_text", json!({"text": pdf})).await {
                    Called::Failed { code, message } => Err((code, message)),
                    Called::Text(summary) => {
                        let mut parts = vec![summary.clone()];
                        let lower = input.to_lowercase();
                        if ["recall", "agreed", "last time"]
                            .iter()
                            .any(|w| lower.contains(w))
                            && let Called::Text(facts) =
                                call("recall_facts", json!({"query": "contract renewal agreed"}))
                                    .await
                        {
                            parts.push(format!("From earlier conversations: {facts}"));
                        }
                        if ["reminder", "schedule", "meeting"]
                            .iter()
                            .any(|w| lower.contains(w))
                        {
                            let date = first_date(&summary).unwrap_or_else(|| "2027-03-31".into());
                            match call("add_schedule", json!({"title": "Contract renewal meeting", "start": date, "remind_before_minutes": 1440})).await {
                                Called::Text(done) => parts.push(done),
                                // The review stands; the reminder did not happen. The grounded
                                // agent says so and marks the answer partial; the naive one
                                // says it is done.
                                Called::Failed { code, message } => match mode {
                                    Mode::Grounded => {
                                        parts.push(format!("I did not add the renewal meeting to your calendar: the add_schedule call failed ({code}: {message})."));
                                        declined = true;
                                    }
                                    Mode::Naive => parts.push(format!("I've added the renewal meeting to your calendar for {date}, with a reminder the day before.")),
                                },
                            }
                        }
                        let mut ok =
                            json!({"output": parts.join("\n\n"), "citations": [{"url": url}]});
                        if declined {
                            ok["degraded"] = json!(true);
                        }
                        Ok(ok)
                    }
                },
            }
        }
        _ => generic(input, tools, &mut call).await,
    };
    let mut response = match (result, mode) {
        (Ok(ok), _) => ok,
        (Err((code, message)), Mode::Grounded) => json!({
            "status": "error",
            "error": {"code": code, "message": message},
            "output": format!("I cannot answer reliably: {message}."),
        }),
        (Err(_), Mode::Naive) => json!({"output": memory(skill)}),
    };
    response["trace"] = Value::Array(trace);
    response
}

/// What the naive agent "remembers": confident, stale, wrong.
fn memory(skill: &str) -> Value {
    match skill {
        "fetch_anthropic_models" => json!(
            "The latest Anthropic model is claude-3-5-sonnet-20241022, priced at $15 / $75 per million tokens."
        ),
        "search_docs" => {
            json!({"answer": "Each API key may send up to 1000 requests per minute; just retry immediately.", "results": [{"url": "https://docs.example.com/api/rate-limits"}]})
        }
        "contract_review" => json!(
            "The contract can be terminated with 90 days' notice; the fee is USD 15,000 a year."
        ),
        _ => json!("Here is the answer, from what I know."),
    }
}

async fn generic(
    input: &str,
    tools: &Tools,
    call: &mut impl AsyncFnMut(&str, Value) -> Called,
) -> Result<Value, (String, String)> {
    let mut texts = Vec::new();
    for tool in tools.listed.clone() {
        let args =
            json!({"input": input, "query": input, "url": first_url(input).unwrap_or_default()});
        match call(&tool, args).await {
            Called::Text(t) => texts.push(t),
            Called::Failed { code, message } => return Err((code, message)),
        }
    }
    Ok(json!({"output": texts.join("\n")}))
}

/// The questions in a request: split at sentence ends, commas and "and".
fn clauses(input: &str) -> Vec<String> {
    let mut out: Vec<String> = input
        .split(['?', '.', ';', ',', '？', '。', '，'])
        .flat_map(|s| s.split(" and "))
        .map(str::trim)
        .filter(|s| s.split_whitespace().count() >= 3)
        .map(String::from)
        .collect();
    if out.is_empty() {
        out.push(input.to_string());
    }
    out
}

fn first_url(s: &str) -> Option<String> {
    let start = s.find("https://").or_else(|| s.find("http://"))?;
    let url: String = s[start..]
        .chars()
        .take_while(|c| !c.is_whitespace() && !matches!(c, ')' | ',' | '"' | '\'' | '。'))
        .collect();
    Some(url.trim_end_matches('.').to_string())
}

fn first_date(s: &str) -> Option<String> {
    let re = regex::Regex::new(r"\b\d{4}-\d{2}-\d{2}\b").ok()?;
    re.find(s).map(|m| m.as_str().to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_requests_into_questions() {
        let c = clauses(
            "Our job gets HTTP 429 errors. What is the per-key rate limit, how should the client retry, and how do we ask for a higher quota? Cite the docs.",
        );
        assert_eq!(
            c,
            [
                "Our job gets HTTP 429 errors",
                "What is the per-key rate limit",
                "how should the client retry",
                "how do we ask for a higher quota",
                "Cite the docs"
            ]
            .map(String::from)
            .to_vec()
            .into_iter()
            .filter(|s| s.split_whitespace().count() >= 3)
            .collect::<Vec<_>>()
        );
        assert_eq!(
            first_url("Study this (https://files.example.com/msa.pdf), now."),
            Some("https://files.example.com/msa.pdf".into())
        );
        assert_eq!(
            first_date("ends on 2027-03-31 and"),
            Some("2027-03-31".into())
        );
    }
}
