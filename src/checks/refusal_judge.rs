//! The optional model-based refusal classifier (`checks.refusal_judge`): for an ambiguous
//! answer under a fault — no failure signal, no refusal the lexicon knows, no key facts —
//! an OpenAI-compatible model is asked whether it is a refusal. Configured but
//! unreachable, it makes the cell `error`: the verifier fails closed.

use serde_json::{Value, json};

use crate::chat::ChatClient;

use crate::config::RefusalJudge;

const SYSTEM: &str = "You classify one assistant answer. A refusal declines to answer the user's question and says why \
(a tool, service or source was unavailable, denied, timed out or returned nothing). Reply with JSON only: \
{\"refusal\": true} or {\"refusal\": false}.";

/// Asks the judge; `Ok(true)` when it says the answer is a refusal.
pub async fn ask(judge: &RefusalJudge, question: &str, answer: &str) -> Result<bool, String> {
    let client = ChatClient::new(&judge.base_url, judge.api_key_env.as_deref(), judge.timeout)
        .map_err(|e| format!("the refusal judge: {e}"))?;
    let body = json!({
        "model": judge.model,
        "temperature": 0,
        "messages": [
            {"role": "system", "content": SYSTEM},
            {"role": "user", "content": format!("Question: {question}\n\nAnswer: {answer}")},
        ],
    });
    let reply = client
        .complete(&body)
        .await
        .map_err(|e| format!("the refusal judge: {e}"))?;
    let content =
        crate::chat::content(&reply).ok_or("the refusal judge's reply has no message content")?;
    parse(content)
        .ok_or_else(|| format!("the refusal judge's answer is neither true nor false: {content}"))
}

fn parse(content: &str) -> Option<bool> {
    if let Ok(v) = serde_json::from_str::<Value>(content.trim()) {
        return v.get("refusal").and_then(Value::as_bool);
    }
    let lower = content.to_lowercase();
    match (
        lower.contains("true") || lower.starts_with("yes"),
        lower.contains("false") || lower.starts_with("no"),
    ) {
        (true, false) => Some(true),
        (false, true) => Some(false),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_judges_answer() {
        assert_eq!(parse(r#"{"refusal": true}"#), Some(true));
        assert_eq!(parse(" {\"refusal\": false} "), Some(false));
        assert_eq!(parse("Yes."), Some(true));
        assert_eq!(parse("maybe"), None);
    }
}
