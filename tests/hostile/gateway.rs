//! Hostile agents against the tool gateway: a flood of calls past the trace's cap, a
//! batch past the batch cap, colluding agents of parallel cells that try each other's
//! sessions, DNS-rebinding requests (foreign `Host` and `Origin`), and malformed wire
//! input (ids that are not ids, a protocol version header that names none). Agents are
//! small Python scripts under `fibon-verify run`, or raw HTTP sent to `fibon-verify
//! gateway` from the test (raw, so that `Host` can be anything).

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use fibon_verify::gateway::{MAX_BATCH, TRACE_EVENT_CAP};
use serde_json::{Value, json};

use super::common;
use super::support::scratch_project;

/// One HTTP/1.1 request over a fresh connection, headers exactly as given (no `Host`
/// unless given): the status and the body (not read for an event stream).
fn raw(
    addr: SocketAddr,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: &str,
) -> (u16, Value) {
    let mut stream = TcpStream::connect(addr).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(20)))
        .unwrap();
    let mut request = format!("{method} {path} HTTP/1.1\r\nConnection: close\r\n");
    for (k, v) in headers {
        request.push_str(&format!("{k}: {v}\r\n"));
    }
    if !body.is_empty() {
        request.push_str(&format!(
            "Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: {}\r\n",
            body.len()
        ));
    }
    request.push_str("\r\n");
    request.push_str(body);
    stream.write_all(request.as_bytes()).unwrap();
    let mut reader = BufReader::new(stream);
    let mut status_line = String::new();
    reader.read_line(&mut status_line).unwrap();
    let status: u16 = status_line.split(' ').nth(1).unwrap().parse().unwrap();
    let mut length = None;
    let mut stream_body = false;
    loop {
        let mut line = String::new();
        reader.read_line(&mut line).unwrap();
        let line = line.trim_end();
        if line.is_empty() {
            break;
        }
        let (k, v) = line.split_once(':').unwrap();
        match k.to_ascii_lowercase().as_str() {
            "content-length" => length = Some(v.trim().parse::<usize>().unwrap()),
            "content-type" if v.contains("text/event-stream") => stream_body = true,
            _ => {}
        }
    }
    if stream_body {
        return (status, Value::Null);
    }
    let mut body = Vec::new();
    match length {
        Some(n) => {
            body.resize(n, 0);
            reader.read_exact(&mut body).unwrap();
        }
        None => {
            reader.read_to_end(&mut body).unwrap();
        }
    }
    (status, serde_json::from_slice(&body).unwrap_or(Value::Null))
}

/// `fibon-verify gateway` serving a scenario of a scratch project, until [`Served::stop`].
struct Served {
    child: Child,
    addr: SocketAddr,
    /// `/s/SID`
    base: String,
    trace_out: PathBuf,
    _dir: tempfile::TempDir,
}

impl Served {
    fn start() -> Served {
        let dir = scratch_project();
        let trace_out = dir.path().join("trace.json");
        let mut child = Command::new(env!("CARGO_BIN_EXE_fibon-verify"))
            .current_dir(dir.path())
            .args(["gateway", "--scenario", "fetch-anthropic-models-simple"])
            .args(["--serve-for", "60s", "--trace-out"])
            .arg(&trace_out)
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let mut first = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut first)
            .unwrap();
        let urls: Value = serde_json::from_str(&first).unwrap();
        let url = url::Url::parse(urls["mcp_url"].as_str().unwrap()).unwrap();
        let addr = SocketAddr::new(
            url.host_str().unwrap().parse().unwrap(),
            url.port().unwrap(),
        );
        let base = url.path().trim_end_matches("/mcp").to_string();
        Served {
            child,
            addr,
            base,
            trace_out,
            _dir: dir,
        }
    }

    /// `Host` as a real client sends it.
    fn host(&self) -> String {
        self.addr.to_string()
    }

    fn post(&self, path: &str, headers: &[(&str, &str)], body: &str) -> (u16, Value) {
        let host = self.host();
        let mut all = vec![("Host", host.as_str())];
        all.extend_from_slice(headers);
        raw(
            self.addr,
            "POST",
            &format!("{}{path}", self.base),
            &all,
            body,
        )
    }

    /// Stops it (SIGTERM) and returns the trace it wrote.
    fn stop(mut self) -> Value {
        nix::sys::signal::kill(
            nix::unistd::Pid::from_raw(self.child.id() as i32),
            nix::sys::signal::Signal::SIGTERM,
        )
        .unwrap();
        self.child.wait().unwrap();
        serde_json::from_str(&std::fs::read_to_string(&self.trace_out).unwrap()).unwrap()
    }
}

const INITIALIZE: &str = r#"{"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "hostile", "version": "1"}}}"#;
const MODELS: &str = r#"{"url": "https://docs.anthropic.com/en/docs/about-claude/models"}"#;
const EVIL: &str = r#"{"url": "https://evil.example/exfiltrate"}"#;

/// Points a scratch project's target at a Python agent script.
fn with_agent(dir: &Path, script: &str, timeout: &str) {
    let agent = dir.join("agent.py");
    std::fs::write(&agent, script).unwrap();
    let config = std::fs::read_to_string(dir.join("fibon.yaml"))
        .unwrap()
        .replace(
            r#"command: ["fibon-verify", "agent", "--mode", "grounded"]"#,
            &format!(r#"command: ["python3", "{}"]"#, agent.display()),
        );
    let config = config.replace("timeout: 30s", &format!("timeout: {timeout}"));
    std::fs::write(dir.join("fibon.yaml"), config).unwrap();
}

fn run(dir: &Path, args: &[&str]) -> Value {
    let out = common::fibon(dir)
        .args([
            "run",
            "--scenario",
            "fetch-anthropic-models-simple",
            "--report-dir",
            "out",
        ])
        .args(args)
        .output()
        .unwrap();
    assert!(
        dir.join("out/report.json").exists(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_str(&std::fs::read_to_string(dir.join("out/report.json")).unwrap()).unwrap()
}

fn cell<'a>(report: &'a Value, id_end: &str) -> &'a Value {
    report["cells"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["id"].as_str().unwrap().ends_with(id_end))
        .unwrap_or_else(|| panic!("no cell {id_end}"))
}

/// An agent that lists the tools past the trace's cap, then calls `read_page` three times
/// and once with a URL outside the whitelist, and answers with a fact as if it had read
/// it: its calls all come after the kept entries, and must still count — as calls of the
/// faulted tool under a fault, as the required calls in Q1 — and the URL still be seen.
#[test]
fn calls_past_the_trace_cap_are_counted_and_still_decide_the_verdict() {
    let dir = scratch_project();
    let script = format!(
        r#"
import http.client, json, sys, urllib.parse
req = json.load(sys.stdin)
u = urllib.parse.urlparse(req["tools"]["http_url"])
c = http.client.HTTPConnection(u.hostname, u.port)
for i in range({lists}):
    c.request("GET", u.path); c.getresponse().read()
for body in ['{MODELS}'] * 3 + ['{EVIL}']:
    c.request("POST", u.path + "/read_page", body=body, headers={{"Content-Type": "application/json"}})
    c.getresponse().read()
print(json.dumps({{"output": "The newest model is claude-sonnet-4-6.", "status": "ok"}}))
"#,
        lists = TRACE_EVENT_CAP + 200
    );
    with_agent(dir.path(), &script, "60s");
    let report = run(dir.path(), &["--jobs", "2"]);
    let size = std::fs::metadata(dir.path().join("out/report.json"))
        .unwrap()
        .len();
    let faulted = cell(&report, "Q3/TOOL_NOT_FOUND");
    assert_eq!(faulted["trace"].as_array().unwrap().len(), TRACE_EVENT_CAP);
    let note = &faulted["trace_truncated"];
    assert_eq!(note["kept"], TRACE_EVENT_CAP);
    assert_eq!(note["dropped"], 204, "{note}");
    assert_eq!(
        (note["dropped_lists"].clone(), note["dropped_calls"].clone()),
        (json!(200), json!(4))
    );
    assert_eq!(note["by_tool"]["read_page"], json!({"calls": 4, "ok": 0}));
    assert_eq!(note["by_status"], json!({"not_found": 4}));
    let args = |a: &str| serde_json::from_str::<Value>(a).unwrap();
    assert_eq!(
        note["distinct_calls"],
        json!([
            {"tool": "read_page", "arguments": args(MODELS)},
            {"tool": "read_page", "arguments": args(EVIL)},
        ])
    );
    assert_eq!(
        faulted["verdict"], "silent_degradation",
        "{:#}",
        faulted["findings"]
    );
    let silent = faulted["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["check"] == "silent_degradation")
        .unwrap();
    let message = silent["message"].as_str().unwrap();
    assert!(
        message.contains("TOOL_NOT_FOUND was injected on `read_page`"),
        "the faulted tool was called, past the cap: {message}"
    );
    // Q1 ran the same agent: the required tool was called (past the cap), and served.
    let q1 = cell(&report, "Q1");
    assert_eq!(
        q1["trace_truncated"]["by_tool"]["read_page"],
        json!({"calls": 4, "ok": 4})
    );
    let checks: Vec<(&str, &str)> = q1["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| (f["check"].as_str().unwrap(), f["message"].as_str().unwrap()))
        .collect();
    assert!(
        !checks
            .iter()
            .any(|(c, _)| *c == "must_call_tools" || *c == "prohibited_action"),
        "{checks:#?}"
    );
    assert!(
        checks.contains(&(
            "url_whitelist",
            "`read_page` was called with `https://evil.example/exfiltrate`, outside the whitelist"
        )),
        "the URL of a call past the cap is checked: {checks:#?}"
    );
    // Five cells of 1,000 kept lists of one tool each: far from the megabytes a cell may
    // cost, whatever the number of calls.
    assert!(size < 5 * 1024 * 1024, "report.json is {size} bytes");
}

/// A batch past the cap is refused whole, at once, with one JSON-RPC error — 30,000
/// `tools/list` (the issue's) and one past the cap alike; one at the cap is served.
#[test]
fn a_batch_past_the_cap_is_refused_whole() {
    let served = Served::start();
    let batch = |n: usize| {
        serde_json::to_string(
            &(0..n)
                .map(|i| json!({"jsonrpc": "2.0", "id": i, "method": "tools/list"}))
                .collect::<Vec<_>>(),
        )
        .unwrap()
    };
    for n in [MAX_BATCH + 1, 30_000] {
        let (status, body) = served.post("/mcp", &[], &batch(n));
        assert_eq!(status, 400, "{n}: {body}");
        assert_eq!(body["error"]["code"], -32600, "{body}");
        assert_eq!(
            body["error"]["data"],
            json!({"limit": MAX_BATCH, "messages": n})
        );
        assert_eq!(body["id"], Value::Null);
    }
    let (status, body) = served.post("/mcp", &[], &batch(MAX_BATCH));
    assert_eq!(status, 200);
    assert_eq!(body.as_array().unwrap().len(), MAX_BATCH);
    let trace = served.stop();
    assert_eq!(
        trace["events"].as_array().unwrap().len(),
        MAX_BATCH,
        "a refused batch serves none of its messages"
    );
}

/// Colluding agents of parallel cells: each publishes its URLs in a shared folder, waits
/// for another's, and tries that other session: its trace (no such route), its MCP
/// session with its own `Mcp-Session-Id` (refused), a DELETE of its own id there
/// (refused). Session ids are random UUIDs; each cell's trace has only its own calls.
#[test]
fn agents_of_parallel_cells_cannot_cross_sessions() {
    let dir = scratch_project();
    let shared = dir.path().join("shared");
    std::fs::create_dir(&shared).unwrap();
    let init = format!("{INITIALIZE:?}");
    let script = format!(
        r#"
import http.client, json, os, sys, time, urllib.parse
shared = {shared:?}
req = json.load(sys.stdin)
mine = urllib.parse.urlparse(req["tools"]["mcp_url"])
me = req["run_id"]
open(os.path.join(shared, me + ".url.tmp"), "w").write(req["tools"]["mcp_url"])
os.rename(os.path.join(shared, me + ".url.tmp"), os.path.join(shared, me + ".url"))
def call(method, path, body=None, headers={{}}):
    c = http.client.HTTPConnection(mine.hostname, mine.port, timeout=10)
    h = {{"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}}
    h.update(headers)
    c.request(method, path, body=body, headers=h)
    r = c.getresponse(); r.read()
    return r.status, r.getheader("Mcp-Session-Id")
_, my_mcp = call("POST", mine.path, {init})
other = None
deadline = time.time() + 20
while other is None and time.time() < deadline:
    others = [f for f in os.listdir(shared) if f.endswith(".url") and f != me + ".url"]
    if others:
        other = urllib.parse.urlparse(open(os.path.join(shared, others[0])).read())
    else:
        time.sleep(0.05)
tries = {{
    "trace": call("GET", other.path[:-len("/mcp")] + "/trace")[0],
    "mcp_post": call("POST", other.path, '{{"jsonrpc": "2.0", "id": 2, "method": "tools/list"}}', {{"Mcp-Session-Id": my_mcp}})[0],
    "mcp_get": call("GET", other.path, None, {{"Mcp-Session-Id": my_mcp}})[0],
    "mcp_delete": call("DELETE", other.path, None, {{"Mcp-Session-Id": my_mcp}})[0],
    "own_post": call("POST", mine.path, '{{"jsonrpc": "2.0", "id": 3, "method": "tools/list"}}', {{"Mcp-Session-Id": my_mcp}})[0],
}}
json.dump({{"mcp_session": my_mcp, "mcp_url": req["tools"]["mcp_url"], "tries": tries}}, open(os.path.join(shared, me + ".result"), "w"))
print(json.dumps({{"output": "I could not read the page.", "status": "error"}}))
"#,
        shared = shared.display().to_string(),
    );
    with_agent(dir.path(), &script, "60s");
    let report = run(
        dir.path(),
        &[
            "--fault",
            "TOOL_NOT_FOUND",
            "--fault",
            "PERMISSION_DENIED",
            "--jobs",
            "2",
        ],
    );
    let results: Vec<Value> = std::fs::read_dir(&shared)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "result"))
        .map(|p| serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap())
        .collect();
    assert_eq!(results.len(), 2, "both cells' agents ran: {report:#}");
    let uuid_v4 = regex::Regex::new("^[0-9a-f]{12}4[0-9a-f]{3}[89ab][0-9a-f]{15}$").unwrap();
    let mut ids = Vec::new();
    for r in &results {
        assert_eq!(
            r["tries"],
            json!({"trace": 404, "mcp_post": 404, "mcp_get": 404, "mcp_delete": 404, "own_post": 200}),
            "{r}"
        );
        let sid = r["mcp_url"]
            .as_str()
            .unwrap()
            .rsplit('/')
            .nth(1)
            .unwrap()
            .to_string();
        for id in [sid.as_str(), r["mcp_session"].as_str().unwrap()] {
            assert!(uuid_v4.is_match(id), "a random UUID: {id}");
            ids.push(id.to_string());
        }
    }
    ids.sort();
    ids.dedup();
    assert_eq!(ids.len(), 4);
    for c in report["cells"].as_array().unwrap() {
        for e in c["trace"].as_array().unwrap() {
            assert_eq!(e["transport"], "mcp", "{e}");
        }
        // Its own agent's listing only: the other agent's tries never reached it.
        assert_eq!(c["trace"].as_array().unwrap().len(), 1, "{:#}", c["trace"]);
    }
}

/// DNS rebinding: a foreign `Host` or `Origin` is refused with 403 on every route,
/// `initialize` included, and the refused requests never reach the trace; the real
/// clients' `Host` (the bound address, or localhost) and a loopback `Origin` pass.
#[test]
fn a_foreign_host_or_origin_is_refused_on_every_route() {
    let served = Served::start();
    let port = served.addr.port();
    let localhost = format!("localhost:{port}");
    let foreign: Vec<Vec<(&str, &str)>> = vec![
        vec![("Host", "evil.com")],
        vec![("Host", "evil.com:80")],
        vec![("Host", "127.0.0.1:1")],
        vec![],
        vec![("Host", localhost.as_str()), ("Origin", "http://evil.com")],
        vec![("Host", localhost.as_str()), ("Origin", "null")],
    ];
    let routes: [(&str, &str, &str); 6] = [
        ("GET", "/tools", ""),
        ("POST", "/tools/read_page", MODELS),
        ("POST", "/mcp", INITIALIZE),
        ("GET", "/mcp", ""),
        ("DELETE", "/mcp", ""),
        ("GET", "/nowhere", ""),
    ];
    for headers in &foreign {
        for (method, path, body) in routes {
            let (status, reply) = raw(
                served.addr,
                method,
                &format!("{}{path}", served.base),
                headers,
                body,
            );
            assert_eq!(status, 403, "{method} {path} {headers:?}: {reply}");
            let said = if path == "/mcp" {
                reply["error"]["message"].as_str().unwrap().to_string()
            } else {
                reply["error"]["code"].as_str().unwrap().to_string()
            };
            assert!(
                said.contains("Forbidden") || said.starts_with("INVALID_"),
                "{said}"
            );
        }
    }
    let bound = served.host();
    for headers in [
        vec![("Host", bound.as_str())],
        vec![("Host", localhost.as_str())],
        vec![
            ("Host", bound.as_str()),
            ("Origin", "http://localhost:6274"),
        ],
        vec![
            ("Host", bound.as_str()),
            ("Origin", "http://127.0.0.1:3000"),
        ],
    ] {
        let (status, reply) = raw(
            served.addr,
            "POST",
            &format!("{}/tools/read_page", served.base),
            &headers,
            MODELS,
        );
        assert_eq!(status, 200, "{headers:?}: {reply}");
        let (status, _) = raw(
            served.addr,
            "POST",
            &format!("{}/mcp", served.base),
            &headers,
            INITIALIZE,
        );
        assert_eq!(status, 200, "{headers:?}");
    }
    let trace = served.stop();
    let events = trace["events"].as_array().unwrap();
    assert_eq!(events.len(), 4, "only the accepted calls: {events:#?}");
}

/// Ids that are not JSON-RPC ids are invalid requests; a protocol version header naming
/// no version is refused (400), one naming a known version or none is served.
#[test]
fn ids_and_protocol_versions_are_checked() {
    let served = Served::start();
    for id in ["{}", "[1]"] {
        let (status, body) = served.post(
            "/mcp",
            &[],
            &format!(r#"{{"jsonrpc": "2.0", "id": {id}, "method": "tools/list"}}"#),
        );
        assert_eq!(status, 200, "{body}");
        assert_eq!(body["error"]["code"], -32600, "{id}: {body}");
        assert_eq!(body["id"], Value::Null);
    }
    for (id, want) in [
        (r#""a""#, json!("a")),
        ("7", json!(7)),
        ("null", Value::Null),
    ] {
        let (_, body) = served.post(
            "/mcp",
            &[],
            &format!(r#"{{"jsonrpc": "2.0", "id": {id}, "method": "ping"}}"#),
        );
        assert_eq!(
            (body["id"].clone(), body["result"].clone()),
            (want, json!({})),
            "{body}"
        );
    }
    let ping = r#"{"jsonrpc": "2.0", "id": 1, "method": "ping"}"#;
    for version in ["garbage", "2099-01-01", ""] {
        let (status, body) = served.post("/mcp", &[("MCP-Protocol-Version", version)], ping);
        assert_eq!(status, 400, "{version:?}: {body}");
        assert_eq!(body["error"]["code"], -32022);
        assert_eq!(body["error"]["data"]["requested"], version);
    }
    for version in ["2025-06-18", "2024-11-05", "2026-07-28"] {
        let (status, body) = served.post("/mcp", &[("MCP-Protocol-Version", version)], ping);
        assert_eq!(status, 200, "{version}: {body}");
    }
    let (status, _) = served.post("/mcp", &[], ping);
    assert_eq!(status, 200, "no header is fine");
    served.stop();
}
