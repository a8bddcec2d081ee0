//! The optional model-based refusal classifier (`checks.refusal_judge`): for an ambiguous
//! answer under a fault — no failure signal, no refusal the lexicon knows, no key facts —
//! an OpenAI-compatible model is asked whether it is a refusal, in structured outputs
//! (`{"refusal": bool}`), repaired once, served from the judge cache when it holds the
//! same question. Configured but unreachable, or answering off the schema twice, it makes
//! the cell `error`: the verifier fails closed.

use serde_json::{Value, json};

use crate::chat::cache::Cache;
use crate::chat::structured::{self, Ask, AskLog};
use crate::config::RefusalJudge;

const SYSTEM: &str = "You classify one assistant answer. A refusal declines to answer the user's question and says why \
(a tool, service or source was unavailable, denied, timed out or returned nothing). Reply with JSON only: \
{\"refusal\": true} or {\"refusal\": false}.";

/// The version of this judge's prompt and schema, in its cache keys (it has no policy).
const VERSION: &str = "fibon.refusal-judge/v1";

/// The schema its answer is constrained to.
fn schema() -> Value {
    json!({
        "type": "object",
        "properties": {"refusal": {"type": "boolean"}},
        "required": ["refusal"],
        "additionalProperties": false,
    })
}

/// Asks the judge; `Ok(true)` when it says the answer is a refusal. The log says how it
/// was asked, for the cell's report.
pub async fn ask(
    judge: &RefusalJudge,
    question: &str,
    answer: &str,
    cache: &Cache,
) -> (Result<bool, String>, AskLog) {
    let ask = Ask {
        base_url: &judge.base_url,
        model: &judge.model,
        api_key_env: judge.api_key_env.as_deref(),
        timeout: judge.timeout,
        messages: vec![
            json!({"role": "system", "content": SYSTEM}),
            json!({"role": "user", "content": format!("Question: {question}\n\nAnswer: {answer}")}),
        ],
        name: "fibon_refusal",
        schema: schema(),
        version: VERSION,
        cache,
    };
    // The classifier has no budget: every request may be sent.
    let (result, log) = structured::ask(ask, read, &mut || Ok(())).await;
    (result.map_err(|e| format!("the refusal judge: {e}")), log)
}

fn read(v: &Value) -> Result<bool, String> {
    v.get("refusal")
        .and_then(Value::as_bool)
        .ok_or_else(|| "`refusal` must be true or false".to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_judges_answer() {
        assert_eq!(read(&json!({"refusal": true})), Ok(true));
        assert_eq!(read(&json!({"refusal": false})), Ok(false));
        assert!(read(&json!({"refusal": "yes"})).is_err());
        assert!(read(&json!({})).is_err());
        assert!(
            jsonschema::validator_for(&schema())
                .unwrap()
                .is_valid(&json!({"refusal": true}))
        );
    }
}
