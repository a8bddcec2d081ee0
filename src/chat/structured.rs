//! A judgement from a chat endpoint in structured outputs: the request carries the judge's
//! JSON Schema as `response_format: json_schema` (strict); an endpoint that refuses it
//! (HTTP 400 naming `response_format`) is asked once more in `json_object` mode; an
//! answer the caller's validation rejects is sent back once with the error; the cache is
//! read first and given every validated answer. Each attempt is logged for the report.

use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use super::cache::{Cache, CacheUse, Lookup};
use super::{ChatClient, ChatError};

/// The most characters of a rejected answer kept in its attempt's record.
const ANSWER_KEPT: usize = 2000;

/// One judgement to ask for.
#[derive(Debug)]
pub struct Ask<'a> {
    /// The endpoint (`…/v1`).
    pub base_url: &'a url::Url,
    /// The model.
    pub model: &'a str,
    /// The key variable, if any.
    pub api_key_env: Option<&'a str>,
    /// Per HTTP request.
    pub timeout: Duration,
    /// The system and user messages.
    pub messages: Vec<Value>,
    /// The schema's name in `json_schema`.
    pub name: &'a str,
    /// The schema the answer must match.
    pub schema: Value,
    /// The policy version (part of the cache key).
    pub version: &'a str,
    /// Where validated answers are kept.
    pub cache: &'a Cache,
}

/// One request made and what came of it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Attempt {
    /// `json_schema` or `json_object`.
    pub response_format: String,
    /// The answer's text, when it did not match (cut at 2,000 characters).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub answer: Option<String>,
    /// Why the attempt failed; absent when its answer was accepted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// How a judgement was had: the record a report keeps beside its outcome.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct AskLog {
    /// The mode the last request used: `json_schema`, or `json_object` after a fallback.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub response_format: Option<String>,
    /// Why the endpoint was asked in `json_object` mode: its refusal of `json_schema`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fallback: Option<String>,
    /// Every request made, in order (none for a cache hit).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub attempts: Vec<Attempt>,
    /// How the cache was used (absent with `--no-cache`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache: Option<CacheUse>,
}

impl AskLog {
    /// Served from the cache, without a model call.
    pub fn cached(&self) -> bool {
        self.cache.as_ref().is_some_and(|c| c.status == "hit")
    }
}

/// Whether an error is an endpoint refusing structured outputs.
fn refuses_json_schema(e: &ChatError) -> bool {
    match e {
        ChatError::Rejected(text) => {
            text.contains("answered HTTP 400")
                && (text.contains("response_format") || text.contains("json_schema"))
        }
        _ => false,
    }
}

fn response_format(ask: &Ask<'_>, schema_mode: bool) -> Value {
    if schema_mode {
        json!({"type": "json_schema", "json_schema": {
            "name": ask.name, "schema": ask.schema, "strict": true,
        }})
    } else {
        json!({"type": "json_object"})
    }
}

fn body(ask: &Ask<'_>, messages: &[Value], schema_mode: bool) -> Value {
    json!({
        "model": ask.model,
        "temperature": 0,
        "response_format": response_format(ask, schema_mode),
        "messages": messages,
    })
}

/// Asks for one judgement. `validate` turns an answer (parsed JSON) into the result or
/// says why it does not match; `charge` is called before every request sent (the budget;
/// its error ends the judgement). A cache hit sends nothing and charges nothing.
pub async fn ask<T>(
    ask: Ask<'_>,
    validate: impl Fn(&Value) -> Result<T, String>,
    charge: &mut (dyn FnMut() -> Result<(), String> + Send),
) -> (Result<T, String>, AskLog) {
    let mut log = AskLog::default();
    let key = Cache::key(
        ask.base_url.as_str(),
        ask.model,
        &body(&ask, &ask.messages, true),
        ask.version,
    );
    let mut status = "miss";
    let mut note = None;
    match ask.cache.get(&key) {
        Lookup::Off => {}
        Lookup::Miss => {}
        Lookup::Hit(answer) => match validate(&answer) {
            Ok(v) => {
                log.cache = Some(CacheUse {
                    status: "hit".into(),
                    key,
                    note: None,
                });
                return (Ok(v), log);
            }
            Err(e) => {
                status = "corrupt";
                note = Some(format!("its answer does not match: {e}"));
            }
        },
        Lookup::Corrupt(why) => {
            status = "corrupt";
            note = Some(why);
        }
    }
    let cache_on = ask.cache.dir().is_some();
    let result = asked(&ask, &validate, charge, &mut log).await;
    if cache_on {
        if let Ok((_, answer)) = &result
            && let Err(e) = ask.cache.put(&key, ask.model, ask.version, answer)
        {
            note = Some(match note {
                Some(n) => format!("{n}; {e}"),
                None => e,
            });
        }
        log.cache = Some(CacheUse {
            status: status.into(),
            key,
            note,
        });
    }
    (result.map(|(v, _)| v), log)
}

/// The requests themselves: schema mode (or the fallback), then one repair.
async fn asked<T>(
    ask: &Ask<'_>,
    validate: &impl Fn(&Value) -> Result<T, String>,
    charge: &mut (dyn FnMut() -> Result<(), String> + Send),
    log: &mut AskLog,
) -> Result<(T, Value), String> {
    let client =
        ChatClient::new(ask.base_url, ask.api_key_env, ask.timeout).map_err(|e| e.to_string())?;
    let mut messages = ask.messages.clone();
    let mut schema_mode = true;
    loop {
        let mode = if schema_mode {
            "json_schema"
        } else {
            "json_object"
        };
        log.response_format = Some(mode.into());
        charge()?;
        let sent = client.complete(&body(ask, &messages, schema_mode)).await;
        let reply = match sent {
            Ok(r) => r,
            Err(e) => {
                log.attempts.push(Attempt {
                    response_format: mode.into(),
                    answer: None,
                    error: Some(e.to_string()),
                });
                if schema_mode && log.fallback.is_none() && refuses_json_schema(&e) {
                    log.fallback = Some(e.to_string());
                    schema_mode = false;
                    continue;
                }
                return Err(e.to_string());
            }
        };
        let content = super::content(&reply).unwrap_or_default().to_string();
        let checked = if super::content(&reply).is_none() {
            Err("the reply has no message content".to_string())
        } else {
            serde_json::from_str::<Value>(content.trim())
                .map_err(|e| format!("the answer is not JSON: {e}"))
                .and_then(|v| validate(&v).map(|t| (t, v)))
        };
        match checked {
            Ok(done) => {
                log.attempts.push(Attempt {
                    response_format: mode.into(),
                    answer: None,
                    error: None,
                });
                return Ok(done);
            }
            Err(e) => {
                log.attempts.push(Attempt {
                    response_format: mode.into(),
                    answer: Some(cut(&content)),
                    error: Some(e.clone()),
                });
                let repairs = log.attempts.iter().filter(|a| a.answer.is_some()).count();
                if repairs > 1 {
                    return Err(format!(
                        "the answer did not match after a repair retry: {e}"
                    ));
                }
                // The one repair: the answer sent back with what is wrong with it.
                messages.push(json!({"role": "assistant", "content": content}));
                messages.push(json!({"role": "user", "content": format!(
                    "Your answer did not match: {e}. Reply again with JSON only, matching the schema exactly."
                )}));
            }
        }
    }
}

fn cut(s: &str) -> String {
    match s.char_indices().nth(ANSWER_KEPT) {
        Some((i, _)) => format!("{}…", &s[..i]),
        None => s.to_string(),
    }
}
