//! An `http` target: the request POSTed as JSON (headers from the config, `${ENV}`
//! expanded), the response read from the body, capped. A 5xx with no usable body is a
//! hard interrupt. The target cannot be evaluated — never a verdict on the agent — when the
//! connection is refused, on a 404/405, a redirect (never followed: whatever answers
//! elsewhere is not the agent configured), a 401/407 (the verifier was not let in), or a
//! 502/503/504 with no usable body (a proxy in front of the agent could not reach it).

use std::time::Duration;

use futures_util::StreamExt;
use indexmap::IndexMap;

use super::{Invocation, Limits, Request, Response};
use crate::config::expand_env;

pub(super) async fn invoke(
    url: &url::Url,
    headers: &IndexMap<String, String>,
    timeout: Duration,
    request: &Request,
    limits: Limits,
) -> Invocation {
    let client = match reqwest::Client::builder()
        .no_proxy()
        .redirect(reqwest::redirect::Policy::none())
        .build()
    {
        Ok(c) => c,
        Err(e) => {
            return Invocation::Failed {
                reason: format!("cannot build an HTTP client: {e}"),
            };
        }
    };
    let mut req = client.post(url.clone()).json(&request.to_json());
    for (k, v) in headers {
        req = req.header(k, expand_env(v));
    }
    let attempt = async {
        let resp = match req.send().await {
            Ok(r) => r,
            Err(e) if e.is_connect() => {
                return Invocation::Failed {
                    reason: format!("cannot reach the agent at {url}: {}", root_cause(&e)),
                };
            }
            // Reached, but no HTTP response came back that can be read (a connection
            // closed at once, a head that never ends): nothing of the agent to judge.
            Err(e) => {
                return Invocation::Failed {
                    reason: format!(
                        "the agent at {url} gave no readable HTTP response: {}",
                        root_cause(&e)
                    ),
                };
            }
        };
        let status = resp.status();
        let location = resp
            .headers()
            .get(reqwest::header::LOCATION)
            .and_then(|v| v.to_str().ok())
            .map(String::from);
        let mut body = Vec::new();
        let mut truncated = false;
        let mut stream = resp.bytes_stream();
        while let Some(chunk) = stream.next().await {
            match chunk {
                Ok(c) => {
                    if body.len() < limits.output_cap {
                        body.extend_from_slice(&c);
                    }
                    if body.len() > limits.output_cap {
                        body.truncate(limits.output_cap);
                        truncated = true;
                    }
                }
                Err(e) => {
                    return Invocation::HardInterrupt {
                        reason: format!("the response broke off: {}", root_cause(&e)),
                        stderr: String::new(),
                        notes: Vec::new(),
                    };
                }
            }
        }
        let code = Some(i32::from(status.as_u16()));
        let usable = !body.iter().all(u8::is_ascii_whitespace);
        if status.is_success() {
            return Invocation::Responded {
                response: Response::parse(&body),
                code,
                stderr: String::new(),
                truncated,
            };
        }
        if matches!(status.as_u16(), 404 | 405) {
            return Invocation::Failed {
                reason: format!(
                    "the agent endpoint {url} answered HTTP {status}: is the URL right?"
                ),
            };
        }
        if status.is_redirection() {
            let to = location.as_deref().unwrap_or("nowhere given");
            return Invocation::Failed {
                reason: format!(
                    "the agent endpoint {url} answered HTTP {status}, redirecting to {to}; redirects are not followed (whatever answers there is not the agent configured): point target.url at the agent itself"
                ),
            };
        }
        if matches!(status.as_u16(), 401 | 407) {
            return Invocation::Failed {
                reason: format!(
                    "the agent endpoint {url} answered HTTP {status}: the verifier was not let in, so the agent never ran; check target.headers"
                ),
            };
        }
        if usable && serde_json::from_slice::<serde_json::Value>(&body).is_ok() {
            return Invocation::Responded {
                response: Response::parse(&body),
                code,
                stderr: String::new(),
                truncated,
            };
        }
        let snippet: String = String::from_utf8_lossy(&body).chars().take(200).collect();
        if matches!(status.as_u16(), 502..=504) {
            return Invocation::Failed {
                reason: format!(
                    "the agent endpoint {url} answered HTTP {status} with no agent response (a proxy in front of the agent could not reach it?): {}",
                    snippet.trim()
                ),
            };
        }
        Invocation::HardInterrupt {
            reason: format!("HTTP {status} with no usable body: {snippet}"),
            stderr: String::new(),
            notes: Vec::new(),
        }
    };
    match tokio::time::timeout(timeout, attempt).await {
        Ok(inv) => inv,
        Err(_) => Invocation::TimedOut {
            after: timeout,
            stderr: String::new(),
            notes: Vec::new(),
        },
    }
}

fn root_cause(e: &(dyn std::error::Error + 'static)) -> String {
    let mut cur = e;
    while let Some(next) = cur.source() {
        cur = next;
    }
    cur.to_string()
}
