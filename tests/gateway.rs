//! The tool gateway against real peers: server-everything, server-filesystem and
//! mcp-server-time from the registries, our misbehaving server, and the official `rmcp`
//! SDK as an independent client.

mod common;

use std::sync::Arc;
use std::time::{Duration, Instant};

use common::peers;
use fibon_verify::config::{McpServer, McpTransport};
use fibon_verify::contract::FaultKind;
use fibon_verify::gateway::{
    Fault, FaultPlan, Gateway, GatewayOptions, NotFoundStyle, SessionSpec, Status, Upstreams,
};
use fibon_verify::mcp::McpClient;
use fibon_verify::scenario::{Body, FixtureResponse, FixtureTool, Matcher};
use indexmap::IndexMap;
use serde_json::{Value, json};

const TIMEOUT: Duration = Duration::from_secs(30);

fn stdio(name: &str, command: Vec<String>) -> McpServer {
    McpServer {
        name: name.into(),
        transport: McpTransport::Stdio {
            command,
            env: IndexMap::new(),
        },
    }
}

/// A fixture tool `read_page` answering docs URLs, and a JSON tool `search`.
fn fixtures() -> IndexMap<String, FixtureTool> {
    let mut tools = IndexMap::new();
    tools.insert(
        "read_page".to_string(),
        FixtureTool {
            description: "Fetch a web page".into(),
            input_schema: json!({"type": "object", "properties": {"url": {"type": "string"}}, "required": ["url"]}),
            responses: vec![FixtureResponse {
                when: vec![("url".into(), Matcher::Prefix("https://docs.".into()))],
                body: Body::Text("claude-sonnet-4-6 is the latest model".into()),
            }],
        },
    );
    tools.insert(
        "search".to_string(),
        FixtureTool {
            description: "Search".into(),
            input_schema: json!({"type": "object"}),
            responses: vec![FixtureResponse {
                when: vec![],
                body: Body::Json(json!({"results": [1, 2]})),
            }],
        },
    );
    tools
}

fn spec(faults: FaultPlan) -> SessionSpec {
    let mut schema_drift = IndexMap::new();
    schema_drift.insert(
        "read_page".to_string(),
        json!({"type": "object", "properties": {"href": {"type": "string"}}}),
    );
    SessionSpec {
        fixtures: fixtures(),
        schema_drift,
        faults,
    }
}

fn fault(tool: &str, kind: FaultKind) -> FaultPlan {
    FaultPlan::on(&[tool.to_string()], Fault::new(kind))
}

async fn fixture_gateway(options: GatewayOptions) -> Gateway {
    Gateway::start(options, Upstreams::none()).await.unwrap()
}

fn fast() -> GatewayOptions {
    GatewayOptions {
        timeout_fault_delay: Duration::from_millis(300),
        latency_fault_delay: Duration::from_millis(200),
        ..GatewayOptions::default()
    }
}

/// POSTs one JSON-RPC message to an MCP endpoint; returns status, session header, body.
async fn rpc(url: &str, session: Option<&str>, body: Value) -> (u16, Option<String>, Value) {
    let mut req = reqwest::Client::new()
        .post(url)
        .header("accept", "application/json, text/event-stream")
        .json(&body);
    if let Some(s) = session {
        req = req.header("mcp-session-id", s);
    }
    let resp = req.send().await.unwrap();
    let status = resp.status().as_u16();
    let sid = resp
        .headers()
        .get("mcp-session-id")
        .map(|v| v.to_str().unwrap().to_string());
    let text = resp.text().await.unwrap();
    (
        status,
        sid,
        serde_json::from_str(&text).unwrap_or(Value::Null),
    )
}

async fn initialize(url: &str) -> String {
    let (status, sid, body) = rpc(
        url,
        None,
        json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}),
    )
    .await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["result"]["protocolVersion"], "2025-06-18");
    let sid = sid.expect("initialize hands out Mcp-Session-Id");
    let (status, _, _) = rpc(
        url,
        Some(&sid),
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
    )
    .await;
    assert_eq!(status, 202);
    sid
}

async fn mcp_call(url: &str, sid: &str, tool: &str, args: Value) -> Value {
    rpc(url, Some(sid), json!({"jsonrpc": "2.0", "id": 9, "method": "tools/call", "params": {"name": tool, "arguments": args}})).await.2
}

async fn rest_call(url: &str, tool: &str, args: Value) -> (u16, Value) {
    let resp = reqwest::Client::new()
        .post(format!("{url}/{tool}"))
        .json(&args)
        .send()
        .await
        .unwrap();
    (resp.status().as_u16(), resp.json().await.unwrap())
}

#[tokio::test(flavor = "multi_thread")]
async fn each_fault_gives_the_specified_reply_on_rest_and_mcp() {
    let gw = fixture_gateway(fast()).await;
    let docs = json!({"url": "https://docs.anthropic.com/models"});

    // No fault: the fixture answers on both transports.
    let s = gw.open_session(spec(FaultPlan::none()));
    assert_eq!(
        rest_call(&s.tools_url(), "read_page", docs.clone()).await,
        (
            200,
            json!({"content": [{"type": "text", "text": "claude-sonnet-4-6 is the latest model"}], "isError": false})
        )
    );
    let sid = initialize(&s.mcp_url()).await;
    assert_eq!(
        mcp_call(&s.mcp_url(), &sid, "read_page", docs.clone()).await["result"]["content"][0]["text"],
        "claude-sonnet-4-6 is the latest model"
    );

    // TOOL_NOT_FOUND: absent from both lists; 404 on REST; -32602 on MCP.
    let s = gw.open_session(spec(fault("read_page", FaultKind::ToolNotFound)));
    let listed: Value = reqwest::get(s.tools_url())
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(listed["tools"].as_array().unwrap().len(), 1);
    assert_eq!(listed["tools"][0]["name"], "search");
    let (status, body) = rest_call(&s.tools_url(), "read_page", docs.clone()).await;
    assert_eq!(
        (status, &body["error"]["code"]),
        (404, &json!("TOOL_NOT_FOUND"))
    );
    let sid = initialize(&s.mcp_url()).await;
    let list = rpc(
        &s.mcp_url(),
        Some(&sid),
        json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}),
    )
    .await
    .2;
    assert_eq!(list["result"]["tools"].as_array().unwrap().len(), 1);
    let reply = mcp_call(&s.mcp_url(), &sid, "read_page", docs.clone()).await;
    assert_eq!(
        reply["error"],
        json!({"code": -32602, "message": "Unknown tool: read_page"})
    );

    // ... or an isError result, as TypeScript SDK servers answer.
    let ts = fixture_gateway(GatewayOptions {
        not_found_style: NotFoundStyle::IsError,
        ..fast()
    })
    .await;
    let s2 = ts.open_session(spec(fault("read_page", FaultKind::ToolNotFound)));
    let sid2 = initialize(&s2.mcp_url()).await;
    let reply = mcp_call(&s2.mcp_url(), &sid2, "read_page", docs.clone()).await;
    assert_eq!(
        reply["result"],
        json!({"content": [{"type": "text", "text": "MCP error -32602: Tool read_page not found"}], "isError": true})
    );

    // PERMISSION_DENIED: 403; an isError result.
    let s = gw.open_session(spec(fault("read_page", FaultKind::PermissionDenied)));
    let (status, body) = rest_call(&s.tools_url(), "read_page", docs.clone()).await;
    assert_eq!(
        (status, &body["error"]["code"]),
        (403, &json!("PERMISSION_DENIED"))
    );
    let sid = initialize(&s.mcp_url()).await;
    let reply = mcp_call(&s.mcp_url(), &sid, "read_page", docs.clone()).await;
    assert_eq!(reply["result"]["isError"], true);

    // APPROVAL_DENIED: the person declined; 403 with the code, an isError result, both
    // saying so.
    let s = gw.open_session(spec(fault("read_page", FaultKind::ApprovalDenied)));
    let (status, body) = rest_call(&s.tools_url(), "read_page", docs.clone()).await;
    assert_eq!(
        (status, &body["error"]["code"]),
        (403, &json!("APPROVAL_DENIED"))
    );
    assert!(
        body["error"]["message"]
            .as_str()
            .unwrap()
            .starts_with("The user declined this action"),
        "{body}"
    );
    let sid = initialize(&s.mcp_url()).await;
    let reply = mcp_call(&s.mcp_url(), &sid, "read_page", docs.clone()).await;
    assert_eq!(reply["result"]["isError"], true);
    assert!(
        reply["result"]["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains("declined"),
        "{reply}"
    );

    // TIMEOUT: held for the configured delay, then 504 / -32001.
    let s = gw.open_session(spec(fault("read_page", FaultKind::Timeout)));
    let t = Instant::now();
    let (status, body) = rest_call(&s.tools_url(), "read_page", docs.clone()).await;
    assert_eq!((status, &body["error"]["code"]), (504, &json!("TIMEOUT")));
    assert!(
        t.elapsed() >= Duration::from_millis(300),
        "held for timeout_fault_delay"
    );
    let sid = initialize(&s.mcp_url()).await;
    assert_eq!(
        mcp_call(&s.mcp_url(), &sid, "read_page", docs.clone()).await["error"]["code"],
        -32001
    );

    // EMPTY_RESULT: 200 with no content, on both.
    let s = gw.open_session(spec(fault("read_page", FaultKind::EmptyResult)));
    assert_eq!(
        rest_call(&s.tools_url(), "read_page", docs.clone()).await,
        (200, json!({"content": [], "isError": false}))
    );
    let sid = initialize(&s.mcp_url()).await;
    assert_eq!(
        mcp_call(&s.mcp_url(), &sid, "read_page", docs.clone()).await["result"],
        json!({"content": [], "isError": false})
    );

    // SCHEMA_DRIFT: the older schema is advertised; calls checked against the real one.
    let s = gw.open_session(spec(fault("read_page", FaultKind::SchemaDrift)));
    let listed: Value = reqwest::get(s.tools_url())
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(
        listed["tools"][0]["inputSchema"]["properties"],
        json!({"href": {"type": "string"}})
    );
    let (status, body) = rest_call(
        &s.tools_url(),
        "read_page",
        json!({"href": "https://docs.x"}),
    )
    .await;
    assert_eq!(
        (status, &body["error"]["code"]),
        (400, &json!("INVALID_ARGUMENTS"))
    );

    // SERVER_DOWN: 503 / a JSON-RPC error naming the fault.
    let s = gw.open_session(spec(fault("read_page", FaultKind::ServerDown)));
    let (status, body) = rest_call(&s.tools_url(), "read_page", docs.clone()).await;
    assert_eq!(
        (status, &body["error"]["code"]),
        (503, &json!("SERVER_DOWN"))
    );
    let sid = initialize(&s.mcp_url()).await;
    assert_eq!(
        mcp_call(&s.mcp_url(), &sid, "read_page", docs.clone()).await["error"]["data"]["fault"],
        "SERVER_DOWN"
    );

    // LATENCY: answered normally, later.
    let s = gw.open_session(spec(fault("read_page", FaultKind::Latency)));
    let t = Instant::now();
    assert_eq!(
        rest_call(&s.tools_url(), "read_page", docs.clone()).await.0,
        200
    );
    assert!(t.elapsed() >= Duration::from_millis(200));

    // A call no fixture matches is a fixture_miss: a named scenario error.
    let s = gw.open_session(spec(FaultPlan::none()));
    let (status, body) = rest_call(
        &s.tools_url(),
        "read_page",
        json!({"url": "https://elsewhere"}),
    )
    .await;
    assert_eq!(
        (status, &body["error"]["code"]),
        (500, &json!("FIXTURE_MISS"))
    );
    assert_eq!(s.trace()[0].status, Status::FixtureMiss);
}

#[tokio::test(flavor = "multi_thread")]
async fn the_trace_records_what_really_happened() {
    let gw = fixture_gateway(fast()).await;
    let s = gw.open_session(spec(fault("search", FaultKind::EmptyResult)));
    reqwest::get(s.tools_url()).await.unwrap();
    rest_call(
        &s.tools_url(),
        "read_page",
        json!({"url": "https://docs.a"}),
    )
    .await;
    rest_call(&s.tools_url(), "search", json!({"q": "x"})).await;
    rest_call(&s.tools_url(), "nope", json!({})).await;
    let trace = s.trace();
    type Row<'a> = (u64, &'a str, Option<&'a str>, Status, Option<&'a str>);
    let summary: Vec<Row> = trace
        .iter()
        .map(|e| (e.seq, e.op, e.tool.as_deref(), e.status, e.fault.as_deref()))
        .collect();
    assert_eq!(
        summary,
        [
            (1, "list", None, Status::Ok, None),
            (2, "call", Some("read_page"), Status::Ok, None),
            (
                3,
                "call",
                Some("search"),
                Status::Empty,
                Some("EMPTY_RESULT")
            ),
            (4, "call", Some("nope"), Status::UnknownTool, None),
        ]
    );
    assert_eq!(
        trace[1].result_text,
        "claude-sonnet-4-6 is the latest model"
    );
    assert_eq!(trace[1].arguments, Some(json!({"url": "https://docs.a"})));
    assert!(
        trace.windows(2).all(|w| w[0].at_ms <= w[1].at_ms),
        "monotonic timestamps"
    );

    // Result text is capped, and says so.
    let capped = fixture_gateway(GatewayOptions {
        trace_text_cap: 10,
        ..fast()
    })
    .await;
    let s = capped.open_session(spec(FaultPlan::none()));
    rest_call(
        &s.tools_url(),
        "read_page",
        json!({"url": "https://docs.a"}),
    )
    .await;
    let e = &s.trace()[0];
    assert_eq!(
        (e.result_text.as_str(), e.truncated, e.result_bytes),
        ("claude-son", true, 37)
    );
}

/// The trace once `done` holds of it (polled for up to 3 s).
async fn trace_when(
    s: &fibon_verify::gateway::SessionHandle,
    done: impl Fn(&[fibon_verify::gateway::TraceEvent]) -> bool,
) -> Vec<fibon_verify::gateway::TraceEvent> {
    let deadline = Instant::now() + Duration::from_secs(3);
    loop {
        let trace = s.trace();
        if done(&trace) || Instant::now() > deadline {
            return trace;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// A call whose client gives up before the answer was still made: it is recorded when it
/// starts (`in_flight` while served), and `cancelled` when the client goes away — never
/// missing, or an honest agent's own report of it would pass for a forged call.
#[tokio::test(flavor = "multi_thread")]
async fn a_call_whose_client_goes_away_stays_in_the_trace() {
    let gw = fixture_gateway(GatewayOptions {
        timeout_fault_delay: Duration::from_secs(5),
        ..fast()
    })
    .await;
    let impatient = reqwest::Client::builder()
        .timeout(Duration::from_millis(300))
        .build()
        .unwrap();
    let args = json!({"url": "https://docs.a"});

    // REST: the client times out while TIMEOUT holds the call.
    let s = gw.open_session(spec(fault("read_page", FaultKind::Timeout)));
    let sent = impatient
        .post(format!("{}/read_page", s.tools_url()))
        .json(&args)
        .send()
        .await;
    assert!(sent.is_err(), "the client gave up first");
    let trace = trace_when(&s, |t| t.iter().any(|e| e.status == Status::Cancelled)).await;
    assert_eq!(trace.len(), 1, "{trace:?}");
    let e = &trace[0];
    assert_eq!(
        (e.seq, e.op, e.tool.as_deref(), e.status, e.fault.as_deref()),
        (
            1,
            "call",
            Some("read_page"),
            Status::Cancelled,
            Some("TIMEOUT")
        )
    );
    assert_eq!(e.arguments, Some(args.clone()));
    assert!(e.duration_ms < 5000.0, "{}", e.duration_ms);

    // MCP: the same.
    let s = gw.open_session(spec(fault("read_page", FaultKind::Timeout)));
    let sent = impatient
        .post(s.mcp_url())
        .header("accept", "application/json, text/event-stream")
        .json(&json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "read_page", "arguments": args}}))
        .send()
        .await;
    assert!(sent.is_err(), "the client gave up first");
    let trace = trace_when(&s, |t| t.iter().any(|e| e.status == Status::Cancelled)).await;
    assert_eq!(
        trace
            .iter()
            .map(|e| (e.transport, e.tool.as_deref(), e.status))
            .collect::<Vec<_>>(),
        [("mcp", Some("read_page"), Status::Cancelled)]
    );

    // A call still being served is in the trace, in the order calls started.
    let s = gw.open_session(spec(fault("read_page", FaultKind::Timeout)));
    let url = s.tools_url();
    let held = tokio::spawn(async move {
        rest_call(&url, "read_page", json!({"url": "https://docs.a"})).await
    });
    trace_when(&s, |t| !t.is_empty()).await;
    rest_call(&s.tools_url(), "search", json!({})).await;
    let trace = s.trace();
    type Row<'a> = (u64, Option<&'a str>, Status);
    let rows: Vec<Row> = trace
        .iter()
        .map(|e| (e.seq, e.tool.as_deref(), e.status))
        .collect();
    assert_eq!(
        rows,
        [
            (1, Some("read_page"), Status::InFlight),
            (2, Some("search"), Status::Ok)
        ]
    );
    assert!(trace[0].duration_ms > 0.0, "the time served so far");
    held.abort();
}

#[tokio::test(flavor = "multi_thread")]
async fn fifty_concurrent_sessions_never_mix_traces() {
    let gw = Arc::new(fixture_gateway(fast()).await);
    let kinds = [
        None,
        Some(FaultKind::ToolNotFound),
        Some(FaultKind::PermissionDenied),
        Some(FaultKind::EmptyResult),
        Some(FaultKind::ServerDown),
    ];
    let mut tasks = Vec::new();
    for i in 0..50 {
        let gw = Arc::clone(&gw);
        let kind = kinds[i % kinds.len()];
        tasks.push(tokio::spawn(async move {
            let plan = kind.map_or_else(FaultPlan::none, |k| fault("read_page", k));
            let s = gw.open_session(spec(plan));
            let url = format!("https://docs.example/{i}");
            for _ in 0..3 {
                rest_call(&s.tools_url(), "read_page", json!({"url": url})).await;
            }
            (i, kind, s.trace())
        }));
    }
    for t in tasks {
        let (i, kind, trace) = t.await.unwrap();
        assert_eq!(trace.len(), 3, "session {i} sees only its own calls");
        for e in &trace {
            assert_eq!(
                e.arguments,
                Some(json!({"url": format!("https://docs.example/{i}")})),
                "session {i}"
            );
            assert_eq!(e.fault.as_deref(), kind.map(|k| k.as_str()), "session {i}");
        }
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_timeout_in_one_session_does_not_delay_another() {
    let gw = Arc::new(
        fixture_gateway(GatewayOptions {
            timeout_fault_delay: Duration::from_secs(5),
            ..GatewayOptions::default()
        })
        .await,
    );
    let slow = gw.open_session(spec(fault("read_page", FaultKind::Timeout)));
    let quick = gw.open_session(spec(FaultPlan::none()));
    let slow_url = slow.tools_url();
    let held = tokio::spawn(async move {
        rest_call(&slow_url, "read_page", json!({"url": "https://docs.a"})).await
    });
    // The slow call is being served before the quick ones start.
    trace_when(&slow, |t| t.iter().any(|e| e.status == Status::InFlight)).await;
    let t = Instant::now();
    for _ in 0..5 {
        assert_eq!(
            rest_call(
                &quick.tools_url(),
                "read_page",
                json!({"url": "https://docs.b"})
            )
            .await
            .0,
            200
        );
    }
    assert!(
        t.elapsed() < Duration::from_secs(2),
        "the other session answered while one call was held: {:?}",
        t.elapsed()
    );
    assert!(!held.is_finished(), "the held call is still held");
    held.abort();
}

/// Whether the server closed the connection within `within` (EOF or reset).
async fn closed_within(c: &mut tokio::net::TcpStream, within: Duration) -> bool {
    use tokio::io::AsyncReadExt;
    let mut sink = Vec::new();
    tokio::time::timeout(within, c.read_to_end(&mut sink))
        .await
        .is_ok()
}

/// A client that never finishes a request's headers — only "GET ", or a byte at a time
/// (slowloris) — has its connection closed after `header_read_timeout`, while other
/// clients are served; a call held longer than that, and an SSE stream, are not cut off.
#[tokio::test(flavor = "multi_thread")]
async fn a_client_that_never_finishes_its_headers_is_cut_off() {
    use tokio::io::AsyncWriteExt;
    let gw = fixture_gateway(GatewayOptions {
        header_read_timeout: Duration::from_millis(500),
        timeout_fault_delay: Duration::from_millis(1500),
        ..fast()
    })
    .await;
    let s = gw.open_session(spec(fault("read_page", FaultKind::Timeout)));
    let mut stalled = Vec::new();
    for _ in 0..100 {
        let mut c = tokio::net::TcpStream::connect(gw.addr()).await.unwrap();
        c.write_all(b"GET ").await.unwrap();
        stalled.push(c);
    }
    assert_eq!(
        reqwest::get(s.tools_url()).await.unwrap().status().as_u16(),
        200,
        "others are served meanwhile"
    );
    let t = Instant::now();
    for c in &mut stalled {
        assert!(
            closed_within(c, Duration::from_secs(3)).await,
            "a stalled connection is still open after {:?}",
            t.elapsed()
        );
    }

    // One byte every 100 ms: the timeout is for the whole head, not between bytes.
    let mut drip = tokio::net::TcpStream::connect(gw.addr()).await.unwrap();
    let t = Instant::now();
    let head = format!(
        "GET /s/{}/tools HTTP/1.1\r\nhost: x\r\nx-pad: {}\r\n\r\n",
        s.session().id,
        "a".repeat(100)
    );
    let mut closed = false;
    for byte in head.as_bytes() {
        if drip.write_all(&[*byte]).await.is_err()
            || closed_within(&mut drip, Duration::from_millis(100)).await
        {
            closed = true;
            break;
        }
    }
    assert!(closed, "the dripping client was served the whole head");
    assert!(t.elapsed() < Duration::from_secs(3), "{:?}", t.elapsed());

    // Held longer than the header timeout, a call still gets its answer.
    let (status, _) = rest_call(
        &s.tools_url(),
        "read_page",
        json!({"url": "https://docs.a"}),
    )
    .await;
    assert_eq!(status, 504);
    // And an event stream outlives it.
    let sid = initialize(&s.mcp_url()).await;
    let resp = reqwest::Client::new()
        .get(s.mcp_url())
        .header("accept", "text/event-stream")
        .header("mcp-session-id", &sid)
        .send()
        .await
        .unwrap();
    let mut stream = resp.bytes_stream();
    tokio::time::sleep(Duration::from_millis(1200)).await;
    s.session()
        .set_fault("search", Some(Fault::new(FaultKind::ToolNotFound)));
    let chunk = tokio::time::timeout(
        Duration::from_secs(5),
        futures_util::StreamExt::next(&mut stream),
    )
    .await
    .unwrap()
    .unwrap()
    .unwrap();
    assert!(
        String::from_utf8_lossy(&chunk).contains("notifications/tools/list_changed"),
        "{chunk:?}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn list_changed_is_sent_when_a_fault_removes_a_tool_mid_session() {
    let gw = fixture_gateway(fast()).await;
    let s = gw.open_session(spec(FaultPlan::none()));
    let sid = initialize(&s.mcp_url()).await;
    let resp = reqwest::Client::new()
        .get(s.mcp_url())
        .header("accept", "text/event-stream")
        .header("mcp-session-id", &sid)
        .send()
        .await
        .unwrap();
    assert_eq!(resp.headers()["content-type"], "text/event-stream");
    // The stream subscribed to the session's events before its headers were sent.
    let mut stream = resp.bytes_stream();
    s.session()
        .set_fault("read_page", Some(Fault::new(FaultKind::ToolNotFound)));
    let chunk = tokio::time::timeout(
        Duration::from_secs(5),
        futures_util::StreamExt::next(&mut stream),
    )
    .await
    .unwrap()
    .unwrap()
    .unwrap();
    let text = String::from_utf8_lossy(&chunk);
    assert!(
        text.contains(r#""method":"notifications/tools/list_changed""#),
        "{text}"
    );
    let list = rpc(
        &s.mcp_url(),
        Some(&sid),
        json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}),
    )
    .await
    .2;
    let names: Vec<&str> = list["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["search"]);
}

#[tokio::test(flavor = "multi_thread")]
async fn both_protocol_eras_and_pagination() {
    let gw = fixture_gateway(GatewayOptions {
        page_size: 1,
        ..fast()
    })
    .await;
    let s = gw.open_session(spec(FaultPlan::none()));
    let meta = json!({"io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {}});
    // Stateless: no initialize, `_meta` on each request.
    let (status, _, discover) = rpc(
        &s.mcp_url(),
        None,
        json!({"jsonrpc": "2.0", "id": 1, "method": "server/discover", "params": {"_meta": meta}}),
    )
    .await;
    assert_eq!(status, 200);
    assert!(
        discover["result"]["supportedVersions"]
            .as_array()
            .unwrap()
            .contains(&json!("2026-07-28"))
    );
    assert_eq!(discover["result"]["resultType"], "complete");
    let page1 = rpc(
        &s.mcp_url(),
        None,
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {"_meta": meta}}),
    )
    .await
    .2;
    assert_eq!(page1["result"]["tools"].as_array().unwrap().len(), 1);
    assert_eq!(page1["result"]["resultType"], "complete");
    let cursor = page1["result"]["nextCursor"].as_str().unwrap().to_string();
    let page2 = rpc(&s.mcp_url(), None, json!({"jsonrpc": "2.0", "id": 3, "method": "tools/list", "params": {"cursor": cursor, "_meta": meta}})).await.2;
    assert_eq!(page2["result"]["tools"][0]["name"], "search");
    assert!(page2["result"].get("nextCursor").is_none());
    // A cursor the gateway did not hand out is invalid params, not a panic (u64::MAX
    // overflowed `offset + page_size`), nor a page.
    for cursor in [
        json!("18446744073709551615"),
        json!("3"),
        json!("-1"),
        json!("abc"),
        json!(1),
    ] {
        let (status, _, reply) = rpc(&s.mcp_url(), None, json!({"jsonrpc": "2.0", "id": 3, "method": "tools/list", "params": {"cursor": cursor, "_meta": meta}})).await;
        assert_eq!(
            (status, &reply["error"]["code"]),
            (200, &json!(-32602)),
            "{cursor}: {reply}"
        );
    }
    // An unsupported version is refused with the versions we speak.
    let (status, _, refused) = rpc(&s.mcp_url(), None, json!({"jsonrpc": "2.0", "id": 4, "method": "tools/list", "params": {"_meta": {"io.modelcontextprotocol/protocolVersion": "2099-01-01"}}})).await;
    assert_eq!(
        (status, refused["error"]["code"].as_i64()),
        (400, Some(-32022))
    );
    // Handshake era, an older version: negotiated down to what the client asked.
    let (_, _, init) = rpc(&s.mcp_url(), None, json!({"jsonrpc": "2.0", "id": 5, "method": "initialize", "params": {"protocolVersion": "2024-11-05", "capabilities": {}, "clientInfo": {"name": "old", "version": "0"}}})).await;
    assert_eq!(init["result"]["protocolVersion"], "2024-11-05");
    // Our own client pages through the whole list.
    let client = McpClient::connect(
        &fibon_verify::mcp::Endpoint::Http {
            url: s.mcp_url().parse().unwrap(),
            headers: Vec::new(),
        },
        TIMEOUT,
    )
    .await
    .unwrap();
    assert_eq!(client.identity().protocol_version, "2026-07-28");
    assert_eq!(client.list_tools().await.unwrap().len(), 2);
    // A stale session id is refused; garbage is a parse error.
    assert_eq!(
        rpc(
            &s.mcp_url(),
            Some("nope"),
            json!({"jsonrpc": "2.0", "id": 6, "method": "ping"})
        )
        .await
        .0,
        404
    );
    let garbage = reqwest::Client::new()
        .post(s.mcp_url())
        .body("{not json")
        .send()
        .await
        .unwrap();
    assert_eq!(garbage.status().as_u16(), 400);
}

/// JSON-RPC 2.0: an empty batch is an Invalid Request; a body over the limit is refused
/// in JSON on both transports, and on REST the refused call is in the trace.
#[tokio::test(flavor = "multi_thread")]
async fn empty_batches_and_oversized_bodies_get_json_errors() {
    let gw = fixture_gateway(fast()).await;
    let s = gw.open_session(spec(FaultPlan::none()));
    let (status, _, reply) = rpc(&s.mcp_url(), None, json!([])).await;
    assert_eq!(status, 400, "{reply}");
    assert_eq!(
        (&reply["jsonrpc"], &reply["id"], &reply["error"]["code"]),
        (&json!("2.0"), &Value::Null, &json!(-32600))
    );

    let huge = format!(
        r#"{{"url": "https://docs.{}"}}"#,
        "a".repeat(fibon_verify::gateway::BODY_LIMIT)
    );
    let post = |url: String| {
        let body = huge.clone();
        async move {
            let resp = reqwest::Client::new()
                .post(url)
                .header("accept", "application/json, text/event-stream")
                .header("content-type", "application/json")
                .body(body)
                .send()
                .await
                .unwrap();
            let status = resp.status().as_u16();
            let ct = resp.headers()["content-type"].to_str().unwrap().to_string();
            let text = resp.text().await.unwrap();
            (
                status,
                ct,
                serde_json::from_str::<Value>(&text).unwrap_or(json!(text)),
            )
        }
    };
    let (status, ct, reply) = post(s.mcp_url()).await;
    assert_eq!((status, ct.as_str()), (413, "application/json"), "{reply}");
    assert_eq!(reply["error"]["code"], -32600, "{reply}");
    assert!(
        reply["error"]["message"]
            .as_str()
            .unwrap()
            .contains("larger than the gateway's limit of 2 MiB"),
        "{reply}"
    );
    assert!(s.trace().is_empty(), "an unread MCP body names no call");

    let (status, ct, reply) = post(format!("{}/read_page", s.tools_url())).await;
    assert_eq!((status, ct.as_str()), (413, "application/json"), "{reply}");
    assert_eq!(reply["error"]["code"], "INVALID_ARGUMENTS", "{reply}");
    // A body that is not an object of arguments: refused, and recorded too.
    let (status, reply) = rest_call(&s.tools_url(), "search", json!([1])).await;
    assert_eq!(
        (status, &reply["error"]["code"]),
        (400, &json!("INVALID_ARGUMENTS"))
    );
    let trace = s.trace();
    type Row<'a> = (u64, Option<&'a str>, Status, Option<&'a Value>);
    let rows: Vec<Row> = trace
        .iter()
        .map(|e| (e.seq, e.tool.as_deref(), e.status, e.arguments.as_ref()))
        .collect();
    assert_eq!(
        rows,
        [
            (1, Some("read_page"), Status::InvalidArguments, None),
            (
                2,
                Some("search"),
                Status::InvalidArguments,
                Some(&json!([1]))
            )
        ]
    );
    assert!(trace[0].error.as_deref().unwrap().contains("2 MiB"));
}

#[tokio::test(flavor = "multi_thread")]
async fn proxied_tools_list_equals_upstream_minus_removed_with_unknown_fields_kept() {
    let direct = McpClient::connect(
        &fibon_verify::gateway::endpoint(&stdio("everything", peers::everything()).transport),
        TIMEOUT,
    )
    .await
    .unwrap();
    let upstream_tools = direct.list_tools().await.unwrap();
    assert!(upstream_tools.len() >= 5, "{upstream_tools:?}");
    direct.close().await;

    let upstreams = Upstreams::connect(&[stdio("everything", peers::everything())], TIMEOUT).await;
    let gw = Gateway::start(fast(), upstreams).await.unwrap();
    let s = gw.open_session(SessionSpec {
        faults: fault("echo", FaultKind::ToolNotFound),
        ..SessionSpec::default()
    });
    let sid = initialize(&s.mcp_url()).await;
    let list = rpc(
        &s.mcp_url(),
        Some(&sid),
        json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}),
    )
    .await
    .2;
    let proxied = list["result"]["tools"].as_array().unwrap().clone();
    let expected: Vec<Value> = upstream_tools
        .into_iter()
        .filter(|t| t["name"] != "echo")
        .collect();
    assert_eq!(
        proxied, expected,
        "every field of every tool, unchanged, minus the removed one"
    );

    // Calls go through to the real server; the trace names the provenance.
    let reply = mcp_call(&s.mcp_url(), &sid, "get-sum", json!({"a": 2, "b": 3})).await;
    assert!(
        reply["result"]["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains('5'),
        "{reply}"
    );
    let echo = mcp_call(&s.mcp_url(), &sid, "echo", json!({"message": "hi"})).await;
    assert_eq!(echo["error"]["code"], -32602);
    let trace = s.trace();
    let call = trace
        .iter()
        .find(|e| e.tool.as_deref() == Some("get-sum"))
        .unwrap();
    assert_eq!(
        (call.provenance.as_deref(), call.status),
        (Some("everything:get-sum"), Status::Ok)
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn rmcp_works_through_the_gateway() {
    use rmcp::ServiceExt;
    use rmcp::transport::StreamableHttpClientTransport;
    let upstreams = Upstreams::connect(&[stdio("everything", peers::everything())], TIMEOUT).await;
    let gw = Gateway::start(fast(), upstreams).await.unwrap();
    let mut fx = fixtures();
    fx.shift_remove("search");
    let s = gw.open_session(SessionSpec {
        fixtures: fx,
        ..SessionSpec::default()
    });
    let transport = StreamableHttpClientTransport::from_uri(s.mcp_url());
    let client = ().serve(transport).await.expect("rmcp connects through the gateway");
    let tools = client.list_all_tools().await.unwrap();
    let names: Vec<String> = tools.iter().map(|t| t.name.to_string()).collect();
    assert!(
        names.contains(&"read_page".to_string()) && names.contains(&"echo".to_string()),
        "{names:?}"
    );
    let args = serde_json::from_value(json!({"message": "through the gateway"})).unwrap();
    let result = client
        .call_tool(rmcp::model::CallToolRequestParams::new("echo").with_arguments(args))
        .await
        .unwrap();
    let text = serde_json::to_value(&result).unwrap();
    assert!(
        text.to_string().contains("Echo: through the gateway"),
        "{text}"
    );
    client.cancel().await.unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn filesystem_time_and_colliding_servers_flatten_into_one_namespace() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("note.txt"), "fibon").unwrap();
    let upstreams = Upstreams::connect(
        &[
            stdio("fs", peers::filesystem(dir.path())),
            stdio("time", peers::time()),
            stdio("a", peers::everything()),
            stdio("b", peers::everything()),
        ],
        TIMEOUT,
    )
    .await;
    for s in upstreams.servers() {
        assert!(s.error.is_none(), "{}: {:?}", s.name, s.error);
    }
    let gw = Gateway::start(fast(), upstreams).await.unwrap();
    let s = gw.open_session(SessionSpec::default());
    let cat = s.session().catalog();
    assert_eq!(cat.tools["read_text_file"].provenance, "fs:read_text_file");
    assert_eq!(
        cat.tools["get_current_time"].provenance,
        "time:get_current_time"
    );
    assert!(
        cat.tools.contains_key("a:echo")
            && cat.tools.contains_key("b:echo")
            && !cat.tools.contains_key("echo")
    );
    assert!(
        cat.problems
            .iter()
            .any(|p| p == "`echo` is offered by several servers: exposed as `a:echo`"),
        "{:?}",
        cat.problems
    );
    let (status, body) = rest_call(
        &s.tools_url(),
        "read_text_file",
        json!({"path": dir.path().join("note.txt")}),
    )
    .await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["content"][0]["text"], "fibon");
    let (status, body) = rest_call(
        &s.tools_url(),
        "get_current_time",
        json!({"timezone": "UTC"}),
    )
    .await;
    assert_eq!(status, 200, "{body}");
    assert!(body["content"][0]["text"].as_str().unwrap().contains("UTC"));
    let (status, body) = rest_call(&s.tools_url(), "b:echo", json!({"message": "m"})).await;
    assert_eq!(
        (status, body["content"][0]["text"].as_str()),
        (200, Some("Echo: m"))
    );
}

/// A gateway whose one upstream is the Streamable HTTP server on `port`, waiting (up to
/// 15 s) for the server to come up.
async fn gateway_over_http(name: &str, port: u16) -> Gateway {
    let server = McpServer {
        name: name.into(),
        transport: McpTransport::Http {
            url: format!("http://127.0.0.1:{port}/mcp").parse().unwrap(),
            headers: IndexMap::new(),
        },
    };
    let mut upstreams = Upstreams::connect(std::slice::from_ref(&server), TIMEOUT).await;
    for _ in 0..150 {
        if upstreams.servers()[0].error.is_none() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
        upstreams = Upstreams::connect(std::slice::from_ref(&server), TIMEOUT).await;
    }
    assert!(
        upstreams.servers()[0].error.is_none(),
        "{:?}",
        upstreams.servers()[0].error
    );
    Gateway::start(fast(), upstreams).await.unwrap()
}

#[tokio::test(flavor = "multi_thread")]
async fn an_http_upstream_is_proxied_too() {
    let port = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let mut argv = peers::everything_http();
    let mut child = tokio::process::Command::new(argv.remove(0))
        .args(argv)
        .env("PORT", port.to_string())
        .kill_on_drop(true)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let gw = gateway_over_http("web", port).await;
    let s = gw.open_session(SessionSpec::default());
    let (status, body) = rest_call(&s.tools_url(), "echo", json!({"message": "over http"})).await;
    assert_eq!(
        (status, body["content"][0]["text"].as_str()),
        (200, Some("Echo: over http")),
        "{body}"
    );
    child.kill().await.unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn an_upstream_behind_mcp_proxy_is_reached_over_the_handshake_era() {
    // mcp-proxy (PyPI) answers `server/discover` with HTTP 400 *and* a fresh session id;
    // the client must fall back to `initialize` without carrying that id along.
    let port = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let mut argv = peers::mcp_proxy(port, peers::everything());
    let mut child = tokio::process::Command::new(argv.remove(0))
        .args(argv)
        .kill_on_drop(true)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let gw = gateway_over_http("proxied", port).await;
    let s = gw.open_session(SessionSpec::default());
    let (status, body) = rest_call(&s.tools_url(), "echo", json!({"message": "via proxy"})).await;
    assert_eq!(
        (status, body["content"][0]["text"].as_str()),
        (200, Some("Echo: via proxy")),
        "{body}"
    );
    child.kill().await.unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn an_upstream_that_dies_mid_call_is_server_down_not_a_hang() {
    let upstreams = Upstreams::connect(&[stdio("bad", peers::misbehaving(&[]))], TIMEOUT).await;
    let gw = Gateway::start(fast(), upstreams).await.unwrap();
    let s = gw.open_session(SessionSpec::default());
    // Garbage on stdout is skipped; the real answer still arrives.
    let (status, body) = rest_call(&s.tools_url(), "garbage", json!({})).await;
    assert_eq!(
        (status, body["content"][0]["text"].as_str()),
        (200, Some("after garbage"))
    );
    let t = Instant::now();
    let (status, body) = rest_call(&s.tools_url(), "die", json!({})).await;
    assert_eq!(
        (status, &body["error"]["code"]),
        (503, &json!("SERVER_DOWN")),
        "{body}"
    );
    assert!(t.elapsed() < Duration::from_secs(10));
    assert!(
        body["error"]["message"]
            .as_str()
            .unwrap()
            .contains("dying mid-call"),
        "the server's last words are kept: {body}"
    );
    // Later calls fail at once, the same way.
    let (status, _) = rest_call(&s.tools_url(), "ok_tool", json!({})).await;
    assert_eq!(status, 503);
    assert_eq!(s.trace().last().unwrap().status, Status::ServerDown);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_malformed_tool_is_reported_for_that_tool_not_as_a_failed_list() {
    let upstreams = Upstreams::connect(&[stdio("bad", peers::misbehaving(&[]))], TIMEOUT).await;
    let gw = Gateway::start(fast(), upstreams).await.unwrap();
    let s = gw.open_session(SessionSpec::default());
    let cat = s.session().catalog();
    assert_eq!(
        cat.problems,
        ["server `bad`: tool `broken` has no inputSchema object; left out"]
    );
    let listed: Value = reqwest::get(s.tools_url())
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let names: Vec<&str> = listed["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["ok_tool", "die", "hang", "garbage"]);
    // Vendor fields reach MCP clients unchanged.
    let sid = initialize(&s.mcp_url()).await;
    let list = rpc(
        &s.mcp_url(),
        Some(&sid),
        json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}),
    )
    .await
    .2;
    assert_eq!(
        list["result"]["tools"][0]["x-vendor"],
        json!({"tier": "gold", "nested": [1, 2, {"k": null}]})
    );
    assert_eq!(
        list["result"]["tools"][0]["outputSchema"]["properties"]["a"]["type"],
        "string"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn unreachable_and_garbage_servers_are_named_problems() {
    let upstreams = Upstreams::connect(
        &[
            stdio("gone", peers::misbehaving(&["--exit-at-start"])),
            stdio("junk", peers::misbehaving(&["--garbage-only"])),
            stdio("nothing", vec!["/nonexistent/server".into()]),
        ],
        Duration::from_secs(3),
    )
    .await;
    let errors: Vec<String> = upstreams
        .servers()
        .iter()
        .map(|s| format!("{}: {}", s.name, s.error.clone().unwrap_or_default()))
        .collect();
    assert!(
        errors[0].contains("gone: server unavailable") && errors[0].contains("exiting at start"),
        "{errors:?}"
    );
    assert!(
        errors[1].starts_with("junk: no answer within 3s"),
        "{errors:?}"
    );
    assert!(
        errors[2].contains("cannot start `/nonexistent/server`"),
        "{errors:?}"
    );
}
