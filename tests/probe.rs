//! `fibon-verify probe` and `init` against real MCP servers, wiremock network endpoints
//! and our misbehaving server.

mod common;

use std::path::Path;

use common::{code, fibon, peers};
use fibon_verify::exit_code;
use serde_json::{Value, json};

/// A project: fibon.yaml with `platform` (YAML) and contracts (name -> YAML).
fn project(platform: &str, contracts: &[(&str, &str)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("contracts")).unwrap();
    std::fs::create_dir(dir.path().join("scenarios")).unwrap();
    std::fs::write(
        dir.path().join("fibon.yaml"),
        format!("platform:\n{platform}\n"),
    )
    .unwrap();
    for (name, yaml) in contracts {
        std::fs::write(dir.path().join("contracts").join(name), yaml).unwrap();
    }
    dir
}

fn server(name: &str, argv: Vec<String>) -> String {
    format!(
        "    - {{name: {name}, command: {}}}\n",
        serde_json::to_string(&argv).unwrap()
    )
}

fn probe_json(dir: &Path, extra: &[&str]) -> (i32, Value) {
    let out = fibon(dir)
        .args(["probe", "--format", "json", "--server-timeout", "20s"])
        .args(extra)
        .output()
        .unwrap();
    let report = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|_| panic!("{}", String::from_utf8_lossy(&out.stderr)));
    (code(&out), report)
}

fn skill<'a>(report: &'a Value, name: &str) -> &'a Value {
    report["skills"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["skill"] == name)
        .unwrap()
}

#[test]
fn skills_are_available_restricted_or_unavailable_with_reasons() {
    let platform = format!(
        "  mcp_servers:\n{}",
        server("everything", peers::everything())
    );
    let dir = project(
        &platform,
        &[
            ("ok.yaml", "skill: echoer\nmust_call_tools: [echo]\n"),
            (
                "soft.yaml",
                "skill: soft\ncritical: false\nmust_call_tools: [echo, teleport]\n",
            ),
            ("hard.yaml", "skill: hard\nmust_call_tools: [teleport]\n"),
        ],
    );
    let (code, report) = probe_json(dir.path(), &[]);
    assert_eq!(code, exit_code::PROBE_FAILED, "{report:#}");
    assert_eq!(skill(&report, "echoer")["availability"], "available");
    assert_eq!(skill(&report, "soft")["availability"], "restricted");
    assert_eq!(
        skill(&report, "soft")["unmet"],
        json!([{"kind": "tool", "message": "tool `teleport` is not offered by any MCP server of the platform"}])
    );
    assert_eq!(skill(&report, "hard")["availability"], "unavailable");
    let server = &report["servers"][0];
    assert_eq!(
        (server["name"].as_str(), server["reachable"].as_bool()),
        (Some("everything"), Some(true))
    );
    assert!(server["tools"].as_u64().unwrap() >= 5);

    // Without the critical Skill, the probe passes (restricted is reported, not failed).
    std::fs::remove_file(dir.path().join("contracts/hard.yaml")).unwrap();
    let (code, _) = probe_json(dir.path(), &[]);
    assert_eq!(code, exit_code::SUCCESS);
}

#[tokio::test(flavor = "multi_thread")]
async fn plugin_versions_scopes_network_and_schema_drift_are_checked() {
    use wiremock::matchers::path;
    use wiremock::{Mock, MockServer, ResponseTemplate};
    let health = MockServer::start().await;
    Mock::given(path("/ok"))
        .respond_with(ResponseTemplate::new(200))
        .mount(&health)
        .await;
    Mock::given(path("/sick"))
        .respond_with(ResponseTemplate::new(503))
        .mount(&health)
        .await;
    let closed = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap();
    let open = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let platform = format!(
        "  mcp_servers:\n{}  plugins: {{doc-search: \"1.3.0\"}}\n  scopes: [\"docs:read\"]\n  network:\n    up: \"{}/ok\"\n    sick: \"{}/sick\"\n    refused: \"http://{closed}/health\"\n    db: \"{}\"\n",
        server("everything", peers::everything()),
        health.uri(),
        health.uri(),
        open.local_addr().unwrap()
    );
    let contract = "skill: search\nmust_call_tools: [echo]\npreconditions:\n  plugin: doc-search\n  min_plugin_version: \">=1.4.0\"\n  scopes: [\"docs:read\", \"docs:write\"]\n  network: [up, sick, refused, db, nowhere]\nio_contract:\n  input_schema: {type: object, properties: {query: {type: string}}, required: [query]}\n";
    let dir = project(&platform, &[("search.yaml", contract)]);
    let dir_path = dir.path().to_path_buf();
    let (code, report) =
        tokio::task::spawn_blocking(move || probe_json(&dir_path, &["--network-timeout", "2s"]))
            .await
            .unwrap();
    assert_eq!(code, exit_code::PROBE_FAILED);
    let unmet: Vec<String> = skill(&report, "search")["unmet"]
        .as_array()
        .unwrap()
        .iter()
        .map(|u| {
            format!(
                "{}: {}",
                u["kind"].as_str().unwrap(),
                u["message"].as_str().unwrap()
            )
        })
        .collect();
    let expected_prefixes = [
        "plugin: plugin `doc-search` is 1.3.0, which does not satisfy >=1.4.0",
        "scope: scope `docs:write` is not granted",
        "network: network endpoint `sick` is unreachable: GET",
        "network: network endpoint `refused` is unreachable: GET",
        "network: network endpoint `nowhere` is not in platform.network",
        "schema_drift: SCHEMA_DRIFT on `echo` (everything:echo): the contract requires `query`, which the tool's inputSchema does not have",
        "schema_drift: SCHEMA_DRIFT on `echo` (everything:echo): the tool now requires `message`, which the contract does not know",
    ];
    assert_eq!(unmet.len(), expected_prefixes.len(), "{unmet:#?}");
    for (got, want) in unmet.iter().zip(expected_prefixes) {
        assert!(got.starts_with(want), "{got}\n  should start with\n{want}");
    }
    assert!(unmet[2].contains("HTTP 503"));
    drop(open);
}

#[test]
fn the_lockfile_catches_changed_descriptions_and_schemas() {
    let platform = format!("  mcp_servers:\n{}", server("bad", peers::misbehaving(&[])));
    let dir = project(
        &platform,
        &[("ok.yaml", "skill: s\nmust_call_tools: [ok_tool]\n")],
    );
    let (code, report) = probe_json(dir.path(), &[]);
    assert_eq!(
        (code, report["lock"]["status"].as_str()),
        (exit_code::SUCCESS, Some("missing"))
    );
    let (code, report) = probe_json(dir.path(), &["--update-lock"]);
    assert_eq!(
        (code, report["lock"]["status"].as_str()),
        (exit_code::SUCCESS, Some("updated"))
    );
    let lock_path = dir.path().join("fibon.lock");
    let lock: Value = serde_json::from_str(&std::fs::read_to_string(&lock_path).unwrap()).unwrap();
    let names: Vec<&str> = lock["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        ["die", "garbage", "hang", "ok_tool"],
        "sorted; the malformed tool is not locked"
    );
    let (code, report) = probe_json(dir.path(), &[]);
    assert_eq!(
        (code, report["lock"]["status"].as_str()),
        (exit_code::SUCCESS, Some("matches"))
    );

    // What a rug pull looks like: the lock says the description was something else.
    let mut tampered = lock.clone();
    tampered["tools"][3]["description_sha256"] = json!("0".repeat(64));
    tampered["tools"][0]["input_schema_sha256"] = json!("1".repeat(64));
    tampered["tools"].as_array_mut().unwrap().remove(1);
    std::fs::write(&lock_path, serde_json::to_string_pretty(&tampered).unwrap()).unwrap();
    let out = fibon(dir.path())
        .args(["probe", "--color", "never"])
        .output()
        .unwrap();
    assert_eq!(code_of(&out), exit_code::PROBE_FAILED);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("DRIFTED"), "{stderr}");
    assert!(
        stderr.contains("~ bad:ok_tool description changed (000000000000 -> "),
        "{stderr}"
    );
    assert!(
        stderr.contains("possible tool poisoning or rug pull"),
        "{stderr}"
    );
    assert!(
        stderr.contains("~ bad:die inputSchema changed (111111111111 -> "),
        "{stderr}"
    );
    assert!(
        stderr.contains("+ bad:garbage is new"),
        "new tools are reported: {stderr}"
    );
    let (code, report) = probe_json(dir.path(), &["--allow-drift"]);
    assert_eq!(
        (code, report["lock"]["status"].as_str()),
        (exit_code::SUCCESS, Some("drifted"))
    );

    // `run` refuses to start on a drifted platform.
    std::fs::write(
        dir.path().join("fibon.yaml"),
        format!(
            "platform:\n{platform}\ntarget: {{kind: command, command: [python3, -c, 'print(1)']}}\n"
        ),
    )
    .unwrap();
    std::fs::write(
        dir.path().join("scenarios/s.yaml"),
        "id: s1\nskill: s\ncomplexity: simple\ninput: hi\n",
    )
    .unwrap();
    let out = fibon(dir.path()).arg("run").output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(code_of(&out), exit_code::PROBE_FAILED, "{stderr}");
    assert!(stderr.contains("fibon.lock drifted"), "{stderr}");
    assert!(stderr.contains("no cell was run"), "{stderr}");
    let out = fibon(dir.path())
        .args(["run", "--allow-drift"])
        .output()
        .unwrap();
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("s1"),
        "with --allow-drift the cells run: {}",
        String::from_utf8_lossy(&out.stderr)
    );

    // A lockfile that is not one is a failure, not a quiet pass; so is one from a
    // future version.
    std::fs::write(&lock_path, "{not json").unwrap();
    let (code, report) = probe_json(dir.path(), &[]);
    assert_eq!(
        (code, report["lock"]["status"].as_str()),
        (exit_code::PROBE_FAILED, Some("unusable"))
    );
    let mut future = lock.clone();
    future["version"] = json!(2);
    std::fs::write(&lock_path, serde_json::to_string(&future).unwrap()).unwrap();
    let (code, report) = probe_json(dir.path(), &[]);
    assert_eq!(
        (code, report["lock"]["status"].as_str()),
        (exit_code::PROBE_FAILED, Some("unusable"))
    );
    assert!(
        report["lock"]["error"]
            .as_str()
            .unwrap()
            .ends_with("is lockfile version 2; this fibon-verify reads version 1"),
        "{report:#}"
    );
}

#[test]
fn a_server_that_is_down_leaves_its_pins_unverified_and_kept() {
    let up = format!("  mcp_servers:\n{}", server("bad", peers::misbehaving(&[])));
    let dir = project(
        &up,
        &[(
            "ok.yaml",
            "skill: s\ncritical: false\nmust_call_tools: [ok_tool]\n",
        )],
    );
    let (code, _) = probe_json(dir.path(), &["--update-lock"]);
    assert_eq!(code, exit_code::SUCCESS);
    let lock_path = dir.path().join("fibon.lock");
    let pinned = std::fs::read_to_string(&lock_path).unwrap();

    // The same server, now failing to start.
    let down = format!(
        "  mcp_servers:\n{}",
        server("bad", vec!["/nonexistent/mcp-server".into()])
    );
    std::fs::write(
        dir.path().join("fibon.yaml"),
        format!("platform:\n{down}\n"),
    )
    .unwrap();
    let (code, report) = probe_json(dir.path(), &[]);
    assert_eq!(code, exit_code::UNAVAILABLE, "{report:#}");
    assert_eq!(report["lock"]["status"], "unverified", "not `matches`");
    let kinds: Vec<&str> = report["lock"]["changes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["kind"].as_str().unwrap())
        .collect();
    assert_eq!(kinds, ["unverified"; 4], "never `removed`: {report:#}");

    // Rewriting the lock now would drop the server's pins: refused, the file kept.
    let (code, report) = probe_json(dir.path(), &["--update-lock"]);
    assert_eq!(code, exit_code::PROBE_FAILED, "{report:#}");
    assert_eq!(report["lock"]["status"], "unusable");
    assert!(
        report["lock"]["error"]
            .as_str()
            .unwrap()
            .contains("was not written: server `bad` could not be reached"),
        "{report:#}"
    );
    assert_eq!(std::fs::read_to_string(&lock_path).unwrap(), pinned);

    // `run` does not let the missing tools pass for removed ones.
    std::fs::write(
        dir.path().join("scenarios/s.yaml"),
        "id: s1\nskill: s\ncomplexity: simple\ninput: hi\n",
    )
    .unwrap();
    std::fs::write(
        dir.path().join("fibon.yaml"),
        format!(
            "platform:\n{down}\ntarget: {{kind: command, command: [python3, -c, 'print(1)']}}\n"
        ),
    )
    .unwrap();
    let out = fibon(dir.path()).arg("run").output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(code_of(&out), exit_code::UNAVAILABLE, "{stderr}");
    assert!(
        stderr.contains("error: MCP server `bad` could not be reached"),
        "{stderr}"
    );
}

fn code_of(out: &std::process::Output) -> i32 {
    code(out)
}

#[test]
fn broken_servers_are_reported_precisely() {
    let platform = format!(
        "  mcp_servers:\n{}{}{}",
        server("bad", peers::misbehaving(&[])),
        server("junk", peers::misbehaving(&["--garbage-only"])),
        server("gone", peers::misbehaving(&["--exit-at-start"])),
    );
    let dir = project(
        &platform,
        &[(
            "ok.yaml",
            "skill: s\ncritical: false\nmust_call_tools: [ok_tool]\n",
        )],
    );
    let out = fibon(dir.path())
        .args(["probe", "--format", "json", "--server-timeout", "2s"])
        .output()
        .unwrap();
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(code(&out), exit_code::UNAVAILABLE, "{report:#}");
    let servers = report["servers"].as_array().unwrap();
    assert_eq!(
        servers[0]["problems"],
        json!(["server `bad`: tool `broken` has no inputSchema object; left out"])
    );
    assert_eq!(servers[0]["tools"], 4);
    assert!(
        servers[1]["error"]
            .as_str()
            .unwrap()
            .starts_with("no answer within 2s"),
        "{:#}",
        servers[1]
    );
    assert!(
        servers[2]["error"]
            .as_str()
            .unwrap()
            .contains("exiting at start"),
        "{:#}",
        servers[2]
    );
    assert_eq!(skill(&report, "s")["availability"], "available");
}

#[test]
fn github_annotations_point_at_the_contract() {
    let dir = project(
        "  scopes: []\n",
        &[(
            "hard.yaml",
            "# a comment\nskill: hard\nmust_call_tools: [teleport]\n",
        )],
    );
    let out = fibon(dir.path())
        .env("GITHUB_ACTIONS", "true")
        .arg("probe")
        .output()
        .unwrap();
    assert_eq!(code(&out), exit_code::PROBE_FAILED);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("::error file=contracts/hard.yaml,line=2,title=fibon%3A%3Aprobe::skill `hard` is unavailable: tool `teleport` is not offered"), "{stderr}");
}

#[test]
fn init_drafts_contracts_that_check_accepts() {
    let platform = format!(
        "  mcp_servers:\n{}",
        server("everything", peers::everything())
    );
    let dir = project(&platform, &[]);
    let out = fibon(dir.path())
        .args(["init", "--from-mcp", "everything"])
        .output()
        .unwrap();
    assert_eq!(
        code(&out),
        exit_code::SUCCESS,
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let draft = std::fs::read_to_string(dir.path().join("contracts/everything.yaml")).unwrap();
    assert!(
        draft.contains("\"echo\"") && draft.contains("plugin: \"everything\""),
        "{draft}"
    );
    std::fs::write(dir.path().join("SKILL.md"), "---\nname: pdf-review\ndescription: Reviews PDF contracts\nallowed-tools: [read_pdf, summarize_text]\n---\nBody.\n").unwrap();
    let out = fibon(dir.path())
        .args(["init", "--from-skill", "SKILL.md"])
        .output()
        .unwrap();
    assert_eq!(
        code(&out),
        exit_code::SUCCESS,
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let out = fibon(dir.path())
        .args(["check", "contracts"])
        .output()
        .unwrap();
    assert_eq!(
        code(&out),
        exit_code::SUCCESS,
        "drafts are valid contracts: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let out = fibon(dir.path())
        .args([
            "init",
            "--from-skill",
            "SKILL.md",
            "--out",
            "contracts/review.yaml",
        ])
        .output()
        .unwrap();
    assert_eq!(
        code(&out),
        exit_code::SUCCESS,
        "--out with a source: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    std::fs::remove_file(dir.path().join("contracts/review.yaml")).unwrap();
    // No overwrite without --force; exactly one source.
    let out = fibon(dir.path())
        .args(["init", "--from-skill", "SKILL.md"])
        .output()
        .unwrap();
    assert_eq!(code(&out), exit_code::USAGE);
    // With no source, init scaffolds a project: not over an existing fibon.yaml.
    let out = fibon(dir.path()).args(["init"]).output().unwrap();
    assert_eq!(code(&out), exit_code::USAGE);
    assert!(String::from_utf8_lossy(&out.stderr).contains("fibon.yaml already exists"));
    let out = fibon(dir.path())
        .args([
            "init",
            "--from-skill",
            "SKILL.md",
            "--from-mcp",
            "everything",
        ])
        .output()
        .unwrap();
    assert_eq!(code(&out), exit_code::USAGE);
    let out = fibon(dir.path())
        .args(["init", "--from-mcp", "nope"])
        .output()
        .unwrap();
    assert_eq!(code(&out), exit_code::USAGE);
}

#[test]
fn init_in_an_empty_folder_scaffolds_a_project_that_runs() {
    let dir = tempfile::tempdir().unwrap();
    let out = fibon(dir.path()).arg("init").output().unwrap();
    assert_eq!(
        code(&out),
        exit_code::SUCCESS,
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    for f in [
        "fibon.yaml",
        "contracts/weather.yaml",
        "scenarios/weather/simple.yaml",
        "scenarios/weather/complex.yaml",
        "agent.py",
    ] {
        assert!(dir.path().join(f).is_file(), "{f}");
    }
    let out = fibon(dir.path())
        .args(["run", "--format", "json"])
        .output()
        .unwrap();
    assert_eq!(
        code(&out),
        exit_code::SUCCESS,
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["summary"]["cells"], 10);
    assert_eq!(report["summary"]["pass"], 10);
    // Nothing is overwritten: the whole scaffold is refused before any file is written.
    std::fs::remove_file(dir.path().join("fibon.yaml")).unwrap();
    let out = fibon(dir.path()).arg("init").output().unwrap();
    assert_eq!(code(&out), exit_code::USAGE);
    assert!(!dir.path().join("fibon.yaml").exists());
}

#[test]
fn init_from_mcp_in_a_folder_with_only_fibon_yaml_drafts_what_probe_accepts() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("fibon.yaml"),
        format!(
            "platform:\n  mcp_servers:\n{}",
            server("everything", peers::everything())
        ),
    )
    .unwrap();
    let out = fibon(dir.path())
        .args(["init", "--from-mcp", "everything"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).to_string();
    assert_eq!(code(&out), exit_code::SUCCESS, "{stderr}");
    assert!(
        dir.path().join("scenarios").is_dir(),
        "the folders it needs"
    );
    // It says exactly what platform.plugins needs; with that added, probe passes.
    let line = stderr
        .lines()
        .find(|l| l.trim_start().starts_with("plugins: {everything:"))
        .unwrap_or_else(|| panic!("{stderr}"))
        .trim()
        .to_string();
    let config = std::fs::read_to_string(dir.path().join("fibon.yaml")).unwrap();
    std::fs::write(
        dir.path().join("fibon.yaml"),
        config.replace("platform:\n", &format!("platform:\n  {line}\n")),
    )
    .unwrap();
    let (code, report) = probe_json(dir.path(), &[]);
    assert_eq!(code, exit_code::SUCCESS, "{report}");
    // A broken config is named, not hidden behind "no MCP server".
    std::fs::write(
        dir.path().join("fibon.yaml"),
        "platform: {mcp_servers: 3}\n",
    )
    .unwrap();
    let out = fibon(dir.path())
        .args(["init", "--from-mcp", "everything", "--force"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(common::code(&out), exit_code::INVALID_INPUT, "{stderr}");
    assert!(stderr.contains("fibon.yaml"), "{stderr}");
}

#[test]
fn filesystem_and_time_servers_are_probed_too() {
    let data = tempfile::tempdir().unwrap();
    let platform = format!(
        "  mcp_servers:\n{}{}",
        server("fs", peers::filesystem(data.path())),
        server("time", peers::time())
    );
    let dir = project(
        &platform,
        &[
            (
                "clock.yaml",
                "skill: clock\nmust_call_tools: [get_current_time, convert_time]\nio_contract:\n  input_schema: {type: object, properties: {timezone: {type: string}}, required: [timezone]}\n",
            ),
            (
                "files.yaml",
                "skill: files\nmust_call_tools: [read_text_file, list_directory]\n",
            ),
        ],
    );
    let (code, report) = probe_json(dir.path(), &[]);
    assert_eq!(code, exit_code::SUCCESS, "{report:#}");
    assert_eq!(skill(&report, "clock")["availability"], "available");
    assert_eq!(skill(&report, "files")["availability"], "available");
    let names: Vec<&str> = report["servers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["server_name"].as_str().unwrap())
        .collect();
    assert_eq!(names.len(), 2, "{names:?}");
    assert!(report["servers"].as_array().unwrap().iter().all(|s| {
        s["protocol_version"]
            .as_str()
            .is_some_and(|v| v.starts_with("20"))
    }));
}
