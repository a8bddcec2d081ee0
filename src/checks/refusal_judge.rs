//! The optional model-based refusal classifier (`checks.refusal_judge`): for an ambiguous
//! answer under a fault — no failure signal, no refusal the lexicon knows, no key facts —
//! an OpenAI-compatible model is asked whether it is a refusal. Configured but
//! unreachable, it makes the cell `error`: the verifier fails closed.

use std::time::Duration;

use serde_json::{Value, json};

use crate::config::RefusalJudge;

const SYSTEM: &str = "You classify one assistant answer. A refusal declines to answer the user's question and says why \
(a tool, service or source was unavailable, denied, timed out or returned nothing). Reply with JSON only: \
{\"refusal\": true} or {\"refusal\": false}.";

/// Asks the judge; `Ok(true)` when it says the answer is a refusal.
pub async fn ask(judge: &RefusalJudge, question: &str, answer: &str) -> Result<bool, String> {
    let key = match &judge.api_key_env {
        Some(var) => Some(
            std::env::var(var)
                .map_err(|_| format!("the refusal judge's API key variable `{var}` is not set"))?,
        ),
        None => None,
    };
    let client = reqwest::Client::builder()
        .timeout(judge.timeout)
        .no_proxy()
        .build()
        .map_err(|e| e.to_string())?;
    let url = format!(
        "{}/chat/completions",
        judge.base_url.as_str().trim_end_matches('/')
    );
    let body = json!({
        "model": judge.model,
        "temperature": 0,
        "messages": [
            {"role": "system", "content": SYSTEM},
            {"role": "user", "content": format!("Question: {question}\n\nAnswer: {answer}")},
        ],
    });
    let mut last = String::new();
    for attempt in 0..3u32 {
        if attempt > 0 {
            tokio::time::sleep(Duration::from_millis(250 * 2u64.pow(attempt))).await;
        }
        let mut req = client.post(&url).json(&body);
        if let Some(k) = &key {
            req = req.bearer_auth(k);
        }
        let resp = match req.send().await {
            Ok(r) => r,
            Err(e) => {
                last = format!("the refusal judge at {url} is unreachable: {e}");
                continue;
            }
        };
        let status = resp.status();
        if status.as_u16() == 429 || status.is_server_error() {
            last = format!("the refusal judge answered HTTP {status}");
            continue;
        }
        if !status.is_success() {
            return Err(format!("the refusal judge answered HTTP {status}"));
        }
        let v: Value = resp
            .json()
            .await
            .map_err(|e| format!("the refusal judge's reply is not JSON: {e}"))?;
        let content = v["choices"][0]["message"]["content"]
            .as_str()
            .ok_or("the refusal judge's reply has no message content")?;
        return parse(content).ok_or_else(|| {
            format!("the refusal judge's answer is neither true nor false: {content}")
        });
    }
    Err(last)
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
