//! Reachability of the platform's named network endpoints: an HTTP GET for URLs (a 2xx or
//! 3xx answer counts), a TCP connect for `host:port`, each within a timeout.

use std::collections::HashMap;
use std::time::Duration;

use indexmap::IndexMap;

/// Endpoint name -> `Ok(())` or why it is not reachable.
pub(crate) type Reachability = HashMap<String, Result<(), String>>;

pub(crate) async fn check_all(
    network: &IndexMap<String, String>,
    timeout: Duration,
) -> Reachability {
    let checks = network
        .iter()
        .map(|(name, endpoint)| async move { (name.clone(), check(endpoint, timeout).await) });
    futures_util::future::join_all(checks)
        .await
        .into_iter()
        .collect()
}

async fn check(endpoint: &str, timeout: Duration) -> Result<(), String> {
    if endpoint.starts_with("http://") || endpoint.starts_with("https://") {
        let client = reqwest::Client::builder()
            .timeout(timeout)
            .no_proxy()
            .build()
            .map_err(|e| e.to_string())?;
        match client.get(endpoint).send().await {
            Ok(r) if r.status().is_success() || r.status().is_redirection() => Ok(()),
            Ok(r) => Err(format!("GET {endpoint} answered HTTP {}", r.status())),
            Err(e) if e.is_timeout() => Err(format!(
                "GET {endpoint} timed out after {}",
                humantime::format_duration(timeout)
            )),
            Err(e) => Err(format!("GET {endpoint} failed: {}", root_cause(&e))),
        }
    } else {
        match tokio::time::timeout(timeout, tokio::net::TcpStream::connect(endpoint)).await {
            Ok(Ok(_)) => Ok(()),
            Ok(Err(e)) => Err(format!("TCP connect to {endpoint} failed: {e}")),
            Err(_) => Err(format!(
                "TCP connect to {endpoint} timed out after {}",
                humantime::format_duration(timeout)
            )),
        }
    }
}

fn root_cause(e: &(dyn std::error::Error + 'static)) -> String {
    let mut cur = e;
    while let Some(next) = cur.source() {
        cur = next;
    }
    cur.to_string()
}
