//! Gateway overhead on loopback: `cargo bench --bench gateway` (needs the test peers:
//! `npm ci --prefix tests/peers`). Prints rows of the README's benchmark table.
//!
//! - proxied MCP call: `echo` on server-everything through the gateway (our client over
//!   Streamable HTTP -> gateway -> stdio upstream), against the same client calling the
//!   server directly over stdio; the difference is the gateway's added latency.
//! - REST fixture call: `POST /s/SID/tools/NAME` answered from a fixture (the whole
//!   cost is the gateway's: HTTP parse, session lookup, fault check, trace record).
//! - a peer proxy for comparison: PyPI `mcp-proxy` 0.13.0 exposing the same stdio server
//!   over Streamable HTTP (our client -> mcp-proxy -> stdio), when it is installed in
//!   `target/proxy-venv` (`python3 -m venv target/proxy-venv && target/proxy-venv/bin/pip
//!   install mcp-proxy==0.13.0`; a separate venv, as it pins an older `mcp`).
//! - peak RSS of the process while 100 sessions call concurrently.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use fibon_verify::config::{McpServer, McpTransport};
use fibon_verify::gateway::{FaultPlan, Gateway, GatewayOptions, SessionSpec, Upstreams};
use fibon_verify::mcp::McpClient;
use fibon_verify::scenario::{Body, FixtureResponse, FixtureTool};
use indexmap::IndexMap;
use serde_json::json;

const CALLS: usize = 10_000;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn everything() -> McpTransport {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let script =
        root.join("tests/peers/node_modules/@modelcontextprotocol/server-everything/dist/index.js");
    assert!(script.is_file(), "run `npm ci --prefix tests/peers` first");
    McpTransport::Stdio {
        command: vec!["node".into(), script.display().to_string(), "stdio".into()],
        env: IndexMap::new(),
    }
}

fn percentile(sorted: &[Duration], p: f64) -> f64 {
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i].as_secs_f64() * 1000.0
}

async fn measure<F, Fut>(n: usize, mut call: F) -> (f64, f64, f64)
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = ()>,
{
    for _ in 0..200 {
        call().await; // warm-up
    }
    let mut samples = Vec::with_capacity(n);
    let start = Instant::now();
    for _ in 0..n {
        let t = Instant::now();
        call().await;
        samples.push(t.elapsed());
    }
    let total = start.elapsed();
    samples.sort();
    (
        percentile(&samples, 0.5),
        percentile(&samples, 0.99),
        n as f64 / total.as_secs_f64(),
    )
}

fn peak_rss_mb() -> f64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find(|l| l.starts_with("VmHWM:"))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|kb| kb.parse::<f64>().ok())
        .map_or(f64::NAN, |kb| kb / 1024.0)
}

fn main() {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let timeout = Duration::from_secs(30);
        let args = json!({"message": "benchmark"});

        let direct = McpClient::connect(&fibon_verify::gateway::endpoint(&everything()), timeout).await.unwrap();
        let (d50, d99, dtput) = measure(CALLS, || async { direct.call_tool("echo", args.clone(), None).await.unwrap(); }).await;

        let upstreams = Upstreams::connect(&[McpServer { name: "everything".into(), transport: everything() }], timeout).await;
        let gw = Gateway::start(GatewayOptions::default(), upstreams).await.unwrap();
        let session = gw.open_session(SessionSpec::default());
        let via = McpClient::connect(&fibon_verify::mcp::Endpoint::Http { url: session.mcp_url().parse().unwrap(), headers: Vec::new() }, timeout).await.unwrap();
        let (g50, g99, gtput) = measure(CALLS, || async { via.call_tool("echo", args.clone(), None).await.unwrap(); }).await;

        // The peer proxy, if installed.
        let proxy_bin = root().join("target/proxy-venv/bin/mcp-proxy");
        let peer = if proxy_bin.is_file() {
            let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
            let server = root().join("tests/peers/node_modules/@modelcontextprotocol/server-everything/dist/index.js");
            let mut child = std::process::Command::new(&proxy_bin)
                .args(["--port", &port.to_string(), "--host", "127.0.0.1", "--log-level", "WARNING", "--", "node"])
                .arg(server)
                .stdout(std::process::Stdio::null())
                .stderr(std::process::Stdio::null())
                .spawn()
                .unwrap();
            let transport = McpTransport::Http { url: format!("http://127.0.0.1:{port}/mcp").parse().unwrap(), headers: IndexMap::new() };
            let mut client = None;
            for _ in 0..100 {
                if let Ok(c) = McpClient::connect(&fibon_verify::gateway::endpoint(&transport), timeout).await {
                    client = Some(c);
                    break;
                }
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
            let client = client.expect("mcp-proxy did not come up within 10 s");
            let result = measure(CALLS, || async { client.call_tool("echo", args.clone(), None).await.unwrap(); }).await;
            client.close().await;
            let _ = child.kill();
            let _ = child.wait();
            Some(result)
        } else {
            None
        };

        let mut fixtures = IndexMap::new();
        fixtures.insert(
            "lookup".to_string(),
            FixtureTool { description: String::new(), input_schema: json!({"type": "object"}), responses: vec![FixtureResponse { when: vec![], body: Body::Text("ok".into()) }] },
        );
        let rest_session = gw.open_session(SessionSpec { fixtures: fixtures.clone(), schema_drift: IndexMap::new(), faults: FaultPlan::none() });
        let http = reqwest::Client::new();
        let url = format!("{}/lookup", rest_session.tools_url());
        let (r50, r99, rtput) = measure(CALLS, || async { http.post(&url).json(&json!({"q": 1})).send().await.unwrap().bytes().await.unwrap(); }).await;

        // 100 concurrent sessions, each making 50 calls.
        let mut handles = Vec::new();
        let sessions: Vec<_> = (0..100).map(|_| gw.open_session(SessionSpec { fixtures: fixtures.clone(), schema_drift: IndexMap::new(), faults: FaultPlan::none() })).collect();
        for s in &sessions {
            let url = format!("{}/lookup", s.tools_url());
            let http = http.clone();
            handles.push(tokio::spawn(async move {
                for _ in 0..50 {
                    http.post(&url).json(&json!({"q": 1})).send().await.unwrap().bytes().await.unwrap();
                }
            }));
        }
        for h in handles {
            h.await.unwrap();
        }
        let rss = peak_rss_mb();

        let title = format!("MCP `tools/call` (`echo`) to server-everything, {CALLS} sequential calls");
        let (peer50, peer99, peer_tput, peer_over50, peer_over99) = match peer {
            Some((p50, p99, ptput)) => (format!("; mcp-proxy 0.13.0 {p50:.3} ms"), format!("; mcp-proxy {p99:.3} ms"), format!("; mcp-proxy {ptput:.0}"), format!(" (mcp-proxy adds {:.3} ms)", p50 - d50), format!(" (mcp-proxy adds {:.3} ms)", p99 - d99)),
            None => ("; mcp-proxy not installed in target/proxy-venv".into(), String::new(), String::new(), String::new(), String::new()),
        };
        let (o50, o99) = (g50 - d50, g99 - d99);
        let goal = if o99 <= 1.0 { "goal met" } else { "**goal missed**" };
        println!("| {title} | p50 latency | {g50:.3} ms | direct (stdio) {d50:.3} ms{peer50} | the gateway adds {o50:.3} ms{peer_over50} |");
        println!("| | p99 latency | {g99:.3} ms | direct {d99:.3} ms{peer99} | **the gateway adds {o99:.3} ms** ({goal}: ≤ 1 ms){peer_over99} |");
        println!("| | throughput (calls/s) | {gtput:.0} | direct {dtput:.0}{peer_tput} | |");
        println!("| gateway REST fixture call (`POST /s/SID/tools/NAME`), {CALLS} sequential | p50 · p99 · calls/s | {r50:.3} ms · {r99:.3} ms · {rtput:.0} | | the whole cost is the gateway's |");
        println!("| gateway, 100 concurrent sessions × 50 calls | peak RSS (gateway + load generator) | {rss:.1} MB | | |");
        direct.close().await;
    });
}
