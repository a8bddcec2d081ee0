//! OpenAI-compatible chat completions: the one client the `openai` target, the quality
//! judges and the refusal judge share — bearer key from an environment variable, retries
//! on 429 (honouring `Retry-After`) and 5xx with exponential backoff, and errors that say
//! which endpoint failed and how; judgements in structured outputs with one repair
//! (`structured`), and the judge cache (`cache`).

pub mod cache;
pub mod structured;

use std::time::Duration;

use serde_json::Value;

/// A chat-completions endpoint.
#[derive(Debug, Clone)]
pub struct ChatClient {
    client: reqwest::Client,
    url: String,
    key: Option<String>,
    attempts: u32,
}

/// Why a completion could not be had. Every variant means "could not evaluate".
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ChatError {
    /// The client cannot be set up: the API key's variable is not set.
    #[error("the API key variable `{var}` is not set")]
    NoKey {
        /// The variable (`api_key_env`).
        var: String,
    },
    /// The client cannot be set up: the HTTP client cannot be built.
    #[error("cannot build an HTTP client: {0}")]
    Client(String),
    /// Not reachable (connection refused, DNS, TLS) after the retries.
    #[error("{0}")]
    Unreachable(String),
    /// 429 or 5xx on every attempt.
    #[error("{0}")]
    GaveUp(String),
    /// A status that retrying cannot fix (400, 401, 404…).
    #[error("{0}")]
    Rejected(String),
    /// A 2xx whose body is not a chat completion.
    #[error("{0}")]
    Malformed(String),
}

impl ChatClient {
    /// A client for `base_url` (`…/v1`); the key is read from `api_key_env` when named.
    /// `timeout` bounds each HTTP request.
    pub fn new(
        base_url: &url::Url,
        api_key_env: Option<&str>,
        timeout: Duration,
    ) -> Result<ChatClient, ChatError> {
        let key = match api_key_env {
            Some(var) => Some(std::env::var(var).map_err(|_| ChatError::NoKey {
                var: var.to_string(),
            })?),
            None => None,
        };
        let client = reqwest::Client::builder()
            .timeout(timeout)
            .no_proxy()
            .build()
            .map_err(|e| ChatError::Client(e.to_string()))?;
        Ok(ChatClient {
            client,
            url: format!(
                "{}/chat/completions",
                base_url.as_str().trim_end_matches('/')
            ),
            key,
            attempts: 4,
        })
    }

    /// The endpoint's URL.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// POSTs a chat-completions request; the reply's JSON.
    pub async fn complete(&self, body: &Value) -> Result<Value, ChatError> {
        let mut last = ChatError::GaveUp(format!("{} gave no answer", self.url));
        for attempt in 0..self.attempts {
            let mut req = self.client.post(&self.url).json(body);
            if let Some(k) = &self.key {
                req = req.bearer_auth(k);
            }
            let resp = match req.send().await {
                Ok(r) => r,
                Err(e) => {
                    last = ChatError::Unreachable(format!(
                        "{} is unreachable: {}",
                        self.url,
                        root_cause(&e)
                    ));
                    if attempt + 1 < self.attempts {
                        tokio::time::sleep(backoff(attempt, None)).await;
                    }
                    continue;
                }
            };
            let status = resp.status();
            if status.as_u16() == 429 || status.is_server_error() {
                let retry_after = resp
                    .headers()
                    .get("retry-after")
                    .and_then(|v| v.to_str().ok())
                    .and_then(|v| v.trim().parse::<u64>().ok());
                last = ChatError::GaveUp(format!(
                    "{} answered HTTP {status} on {} attempts",
                    self.url, self.attempts
                ));
                if attempt + 1 < self.attempts {
                    tokio::time::sleep(backoff(attempt, retry_after)).await;
                }
                continue;
            }
            if !status.is_success() {
                let text = resp.text().await.unwrap_or_default();
                // Redacted before it is cut: a key the endpoint echoes is not left half
                // there (crate::secrets).
                let text = crate::secrets::redact(&text);
                let text: String = text.chars().take(300).collect();
                return Err(ChatError::Rejected(format!(
                    "{} answered HTTP {status}: {text}",
                    self.url
                )));
            }
            return read_capped(resp).await.and_then(|body| {
                serde_json::from_slice::<Value>(&body).map_err(|e| {
                    ChatError::Malformed(format!("{}'s reply is not JSON: {e}", self.url))
                })
            });
        }
        Err(last)
    }
}

/// The most bytes of one reply read: an endpoint that floods is cut off, not buffered.
pub const REPLY_CAP: usize = 16 * 1024 * 1024;

async fn read_capped(resp: reqwest::Response) -> Result<Vec<u8>, ChatError> {
    use futures_util::StreamExt;
    let url = resp.url().to_string();
    let mut body = Vec::new();
    let mut stream = resp.bytes_stream();
    while let Some(chunk) = stream.next().await {
        let chunk = chunk.map_err(|e| {
            ChatError::Malformed(format!("{url}: the reply broke off: {}", root_cause(&e)))
        })?;
        if body.len() + chunk.len() > REPLY_CAP {
            return Err(ChatError::Malformed(format!(
                "{url}: the reply is larger than {} MiB",
                REPLY_CAP / (1024 * 1024)
            )));
        }
        body.extend_from_slice(&chunk);
    }
    Ok(body)
}

/// `Retry-After` seconds (capped at 30), else 200 ms doubling.
fn backoff(attempt: u32, retry_after: Option<u64>) -> Duration {
    match retry_after {
        Some(s) => Duration::from_secs(s.min(30)),
        None => Duration::from_millis(200 * 2u64.pow(attempt)),
    }
}

fn root_cause(e: &(dyn std::error::Error + 'static)) -> String {
    let mut cur = e;
    while let Some(next) = cur.source() {
        cur = next;
    }
    cur.to_string()
}

/// The first choice's message content as text, if any.
pub fn content(reply: &Value) -> Option<&str> {
    reply["choices"][0]["message"]["content"].as_str()
}
