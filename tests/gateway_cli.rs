//! `fibon-verify gateway`, the command: a scenario served standalone, its trace printed,
//! and the named errors of bad arguments (the wire behaviour is tests/gateway.rs's).

mod common;

use serde_json::{Value, json};

/// A REST tool call: the status and the JSON body.
async fn rest_call(url: &str, tool: &str, args: Value) -> (u16, Value) {
    let resp = reqwest::Client::new()
        .post(format!("{url}/{tool}"))
        .json(&args)
        .send()
        .await
        .unwrap();
    (resp.status().as_u16(), resp.json().await.unwrap())
}

/// `fibon-verify gateway` serving `scenario` with `fault` for 3 s: the child, its stdout
/// after the URLs line, and the REST tools URL.
fn serve(
    scenario: &str,
    fault: &str,
) -> (
    std::process::Child,
    std::io::BufReader<std::process::ChildStdout>,
    String,
) {
    use std::io::BufRead;
    use std::process::{Command, Stdio};
    let mut child = Command::new(env!("CARGO_BIN_EXE_fibon-verify"))
        .current_dir(common::root())
        .args([
            "gateway",
            "--scenario",
            scenario,
            "--fault",
            fault,
            "--serve-for",
            "3s",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdout = std::io::BufReader::new(child.stdout.take().unwrap());
    let mut first = String::new();
    stdout.read_line(&mut first).unwrap();
    let urls: Value = serde_json::from_str(&first).unwrap();
    let tools_url = urls["tools_url"].as_str().unwrap().to_string();
    (child, stdout, tools_url)
}

#[test]
fn the_gateway_command_serves_a_scenario_and_prints_the_trace() {
    let (child, mut stdout, tools_url) =
        serve("fetch-anthropic-models-simple", "read_page=EMPTY_RESULT");
    assert!(
        tools_url.starts_with("http://127.0.0.1:"),
        "binds loopback by default: {tools_url}"
    );
    let rt = tokio::runtime::Runtime::new().unwrap();
    let (status, body) = rt.block_on(rest_call(
        &tools_url,
        "read_page",
        json!({"url": "https://docs.anthropic.com/en/docs/about-claude/models"}),
    ));
    assert_eq!(
        (status, body),
        (200, json!({"content": [], "isError": false}))
    );
    let mut rest = String::new();
    std::io::Read::read_to_string(&mut stdout, &mut rest).unwrap();
    let out = child.wait_with_output().unwrap();
    assert_eq!(
        out.status.code(),
        Some(fibon_verify::exit_code::SUCCESS),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let trace: Value = serde_json::from_str(&rest).unwrap();
    assert_eq!(trace["scenario"], "fetch-anthropic-models-simple");
    assert_eq!(trace["events"][0]["fault"], "EMPTY_RESULT");
    assert_eq!(trace["events"][0]["status"], "empty");
}

#[test]
fn the_gateway_command_rejects_an_unknown_scenario_and_a_bad_fault() {
    let out = common::fibon(&common::root())
        .args(["gateway", "--scenario", "search-docs-simpel"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(fibon_verify::exit_code::USAGE));
    assert!(String::from_utf8_lossy(&out.stderr).contains("did you mean `search-docs-simple`?"));
    let out = common::fibon(&common::root())
        .args([
            "gateway",
            "--scenario",
            "search-docs-simple",
            "--fault",
            "x=SLOW",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(fibon_verify::exit_code::USAGE));
    assert!(String::from_utf8_lossy(&out.stderr).contains("unknown fault kind `SLOW`"));
}

/// A fault on a tool the session does not serve would inject nothing; a trace file that
/// cannot be written would lose the session. Both are refused before serving (exit 64).
#[test]
fn the_gateway_command_refuses_a_fault_it_cannot_inject_and_an_unwritable_trace() {
    let out = common::fibon(&common::root())
        .args([
            "gateway",
            "--scenario",
            "search-docs-simple",
            "--fault",
            "search_doc=TOOL_NOT_FOUND",
            "--serve-for",
            "30s",
        ])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        out.status.code(),
        Some(fibon_verify::exit_code::USAGE),
        "{stderr}"
    );
    assert!(
        stderr.contains("error: --fault on `search_doc`, which this session does not serve"),
        "{stderr}"
    );
    assert!(stderr.contains("did you mean `search_docs`?"), "{stderr}");
    assert!(out.stdout.is_empty(), "nothing was served");

    for (trace_out, why) in [
        ("/nonexistent/trace.json", "its folder does not exist"),
        ("/tmp", "it is a folder"),
    ] {
        let out = common::fibon(&common::root())
            .args([
                "gateway",
                "--scenario",
                "search-docs-simple",
                "--serve-for",
                "30s",
            ])
            .args(["--trace-out", trace_out])
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(
            out.status.code(),
            Some(fibon_verify::exit_code::USAGE),
            "{stderr}"
        );
        assert!(
            stderr.contains(&format!("cannot write {trace_out}: {why}")),
            "{stderr}"
        );
    }
}

/// An address the gateway cannot listen on is the user's to fix (exit 64, naming it), not
/// an internal error.
#[test]
fn the_gateway_command_names_an_address_it_cannot_listen_on() {
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = taken.local_addr().unwrap().port().to_string();
    for (flags, said) in [
        (
            ["--port", port.as_str()],
            format!("cannot listen on 127.0.0.1:{port}: the address is already in use"),
        ),
        (
            // TEST-NET-1 (RFC 5737): never an address of this host.
            ["--bind", "192.0.2.1"],
            "cannot listen on 192.0.2.1:0: it is not an address of this host".to_string(),
        ),
    ] {
        let out = common::fibon(&common::root())
            .args([
                "gateway",
                "--scenario",
                "search-docs-simple",
                "--serve-for",
                "30s",
            ])
            .args(flags)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(
            out.status.code(),
            Some(fibon_verify::exit_code::USAGE),
            "{flags:?}: {stderr}"
        );
        assert!(stderr.contains(&said), "{flags:?}: {stderr}");
        assert!(stderr.contains("help: pick a free --port"), "{stderr}");
        assert!(out.stdout.is_empty(), "nothing was served");
    }
    drop(taken);
}

#[test]
fn a_signal_during_serve_for_still_writes_the_trace() {
    use std::io::{BufRead, BufReader};
    use std::process::{Command, Stdio};
    let dir = tempfile::tempdir().unwrap();
    let trace_out = dir.path().join("trace.json");
    for signal in [
        nix::sys::signal::Signal::SIGTERM,
        nix::sys::signal::Signal::SIGINT,
    ] {
        let _ = std::fs::remove_file(&trace_out);
        let mut child = Command::new(env!("CARGO_BIN_EXE_fibon-verify"))
            .current_dir(common::root())
            .args(["gateway", "--scenario", "fetch-anthropic-models-simple"])
            .args(["--serve-for", "60s", "--trace-out"])
            .arg(&trace_out)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        // The URL line says the session is up; one call makes the trace worth keeping.
        let mut first = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut first)
            .unwrap();
        let urls: Value = serde_json::from_str(&first).unwrap();
        let rt = tokio::runtime::Runtime::new().unwrap();
        rt.block_on(rest_call(
            urls["tools_url"].as_str().unwrap(),
            "read_page",
            json!({"url": "https://docs.anthropic.com/en/docs/about-claude/models"}),
        ));
        let t = std::time::Instant::now();
        nix::sys::signal::kill(nix::unistd::Pid::from_raw(child.id() as i32), signal).unwrap();
        let out = child.wait_with_output().unwrap();
        assert!(t.elapsed() < std::time::Duration::from_secs(10), "{signal}");
        assert_eq!(
            out.status.code(),
            Some(fibon_verify::exit_code::INTERRUPTED),
            "{signal}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let trace: Value =
            serde_json::from_str(&std::fs::read_to_string(&trace_out).unwrap()).unwrap();
        assert_eq!(trace["events"][0]["tool"], "read_page", "{signal}");
    }
}

#[test]
fn the_gateway_command_serves_an_approval_denied_fault() {
    let (child, mut stdout, tools_url) =
        serve("contract-review-simple", "add_schedule=APPROVAL_DENIED");
    let rt = tokio::runtime::Runtime::new().unwrap();
    let (status, body) = rt.block_on(rest_call(
        &tools_url,
        "add_schedule",
        json!({"title": "Renewal meeting", "start": "2027-03-17"}),
    ));
    assert_eq!(status, 403, "{body}");
    assert_eq!(body["error"]["code"], "APPROVAL_DENIED");
    assert!(
        body["error"]["message"]
            .as_str()
            .unwrap()
            .contains("declined"),
        "{body}"
    );
    let mut rest = String::new();
    std::io::Read::read_to_string(&mut stdout, &mut rest).unwrap();
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(fibon_verify::exit_code::SUCCESS));
    let trace: Value = serde_json::from_str(&rest).unwrap();
    assert_eq!(trace["events"][0]["fault"], "APPROVAL_DENIED");
}
