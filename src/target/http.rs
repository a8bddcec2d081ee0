//! An `http` target: the request POSTed as JSON (headers from the config, `${ENV}`
//! expanded), the response read from the body, capped. A 5xx with no usable body is a
//! hard interrupt; a refused connection or a 404 means the target cannot be evaluated.

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
    let client = match reqwest::Client::builder().no_proxy().build() {
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
            Err(e) => {
                return Invocation::Failed {
                    reason: format!("cannot reach the agent at {url}: {}", root_cause(&e)),
                };
            }
        };
        let status = resp.status();
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
        if usable && serde_json::from_slice::<serde_json::Value>(&body).is_ok() {
            return Invocation::Responded {
                response: Response::parse(&body),
                code,
                stderr: String::new(),
                truncated,
            };
        }
        let snippet: String = String::from_utf8_lossy(&body).chars().take(200).collect();
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
