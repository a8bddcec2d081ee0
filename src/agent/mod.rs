//! Reference agents for the shipped example Skills, so `run` works on a fresh clone.
//! Both speak the command protocol for real: a separate process, the request on stdin,
//! the gateway's REST tools over HTTP, the response on stdout.
//!
//! - `grounded` uses the tools and fails explicitly (`status: error` with the code) when
//!   one it needs is missing, denied, slow, empty or down: it passes every quadrant.
//! - `naive` uses the tools when they work and, when they do not, fills the gap from
//!   "memory" with a confident, stale answer: the silent degradation fibon-verify exists
//!   to catch.

mod playbook;

use std::time::Duration;

use serde_json::{Value, json};

pub use playbook::Mode;

/// A tool call's outcome, as the agent sees it over REST.
enum Called {
    Text(String),
    Failed { code: String, message: String },
}

struct Tools {
    client: reqwest::Client,
    url: String,
    listed: Vec<String>,
}

impl Tools {
    async fn open(url: &str) -> Result<Tools, String> {
        let client = reqwest::Client::builder()
            .timeout(Duration::from_secs(60))
            .no_proxy()
            // Idle pooled connections are dropped before a server's idle limit can close
            // one under a request (the gateway's is 120 s).
            .pool_idle_timeout(std::time::Duration::from_secs(20))
            .build()
            .map_err(|e| e.to_string())?;
        let listed: Value = client
            .get(url)
            .send()
            .await
            .map_err(|e| format!("cannot list tools: {e}"))?
            .json()
            .await
            .map_err(|e| format!("cannot read the tool list: {e}"))?;
        let listed = listed["tools"]
            .as_array()
            .map(|ts| {
                ts.iter()
                    .filter_map(|t| t["name"].as_str().map(String::from))
                    .collect()
            })
            .unwrap_or_default();
        Ok(Tools {
            client,
            url: url.to_string(),
            listed,
        })
    }

    fn has(&self, tool: &str) -> bool {
        self.listed.iter().any(|t| t == tool)
    }

    async fn call(&self, tool: &str, args: Value) -> Called {
        if !self.has(tool) {
            return Called::Failed {
                code: "TOOL_NOT_FOUND".into(),
                message: format!("the tool `{tool}` is not available"),
            };
        }
        let resp = match self
            .client
            .post(format!("{}/{tool}", self.url))
            .json(&args)
            .send()
            .await
        {
            Ok(r) => r,
            Err(e) if e.is_timeout() => {
                return Called::Failed {
                    code: "TIMEOUT".into(),
                    message: format!("`{tool}` did not answer"),
                };
            }
            Err(e) => {
                return Called::Failed {
                    code: "SERVER_DOWN".into(),
                    message: format!("`{tool}` is unreachable: {e}"),
                };
            }
        };
        let status = resp.status().as_u16();
        let body: Value = resp.json().await.unwrap_or(Value::Null);
        if status != 200 {
            let code = body["error"]["code"]
                .as_str()
                .map(String::from)
                .unwrap_or_else(|| format!("HTTP_{status}"));
            let message = body["error"]["message"]
                .as_str()
                .unwrap_or("the tool call failed")
                .to_string();
            return Called::Failed { code, message };
        }
        let text: Vec<&str> = body["content"]
            .as_array()
            .map(|c| c.iter().filter_map(|p| p["text"].as_str()).collect())
            .unwrap_or_default();
        if text.is_empty() || text.iter().all(|t| t.trim().is_empty()) {
            return Called::Failed {
                code: "EMPTY_RESULT".into(),
                message: format!("`{tool}` returned nothing"),
            };
        }
        if body["isError"].as_bool() == Some(true) {
            return Called::Failed {
                code: "TOOL_ERROR".into(),
                message: text.join("\n"),
            };
        }
        Called::Text(text.join("\n"))
    }
}

/// Reads the request from stdin, answers on stdout.
pub async fn serve(mode: Mode, request: &Value) -> Value {
    let url = request["tools"]["http_url"].as_str().unwrap_or_default();
    let skill = request["skill"].as_str().unwrap_or_default();
    let input = request["input"].as_str().unwrap_or_default();
    let tools = match Tools::open(url).await {
        Ok(t) => t,
        Err(e) => {
            return json!({"status": "error", "error": {"code": "SERVER_DOWN", "message": e}, "output": e});
        }
    };
    playbook::answer(mode, skill, input, &tools).await
}
