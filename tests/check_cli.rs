//! `fibon-verify check` and `schema` driven as a user would: exit codes (asserted by
//! their named constants), output formats, and the shipped examples.

mod common;

use common::{code, fibon, root};
use fibon_verify::exit_code;

#[test]
fn shipped_project_is_valid() {
    let out = fibon(&root()).arg("check").output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(code(&out), exit_code::SUCCESS, "{stderr}");
    assert!(stderr.contains("no problems"), "{stderr}");
}

#[test]
fn misspelled_key_prints_line_caret_and_suggestion_and_exits_65() {
    let out = fibon(&root().join("tests/fixtures/invalid"))
        .args(["check", "--color", "never", "contract-misspelled-key.yaml"])
        .output()
        .unwrap();
    assert_eq!(code(&out), exit_code::INVALID_INPUT);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("unknown key `must_cal_tools`"), "{stderr}");
    assert!(
        stderr.contains("[contract-misspelled-key.yaml:"),
        "file:line:col: {stderr}"
    );
    assert!(
        stderr.contains("must_cal_tools: [search_docs]"),
        "the source line: {stderr}"
    );
    assert!(stderr.contains("──┬──"), "a caret under the key: {stderr}");
    assert!(
        stderr.contains("help: did you mean `must_call_tools`?"),
        "{stderr}"
    );
}

#[test]
fn every_problem_in_every_file_is_reported() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("a.yaml"),
        "skill: a\nmust_cal_tools: [x]\nrisk_level: severe\n",
    )
    .unwrap();
    std::fs::write(
        dir.path().join("b.json"),
        r#"{"skill_name": "b", "contracts": {"strict_citation_required": "yes"}}"#,
    )
    .unwrap();
    let out = fibon(dir.path())
        .args(["check", "--format", "json", "."])
        .output()
        .unwrap();
    assert_eq!(code(&out), exit_code::INVALID_INPUT);
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["schema"], "fibon.check/v1");
    assert_eq!(report["files"], 2);
    assert_eq!(report["errors"], 3, "{report:#}");
    let codes: Vec<&str> = report["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["code"].as_str().unwrap())
        .collect();
    assert_eq!(
        codes,
        [
            "fibon::unknown_key",
            "fibon::unknown_value",
            "fibon::wrong_type"
        ]
    );
    let first = &report["diagnostics"][0];
    assert_eq!(
        (
            first["file"].as_str(),
            first["line"].as_u64(),
            first["col"].as_u64()
        ),
        (Some("./a.yaml"), Some(2), Some(1))
    );
    assert_eq!(first["help"], "did you mean `must_call_tools`?");
}

#[test]
fn github_actions_get_error_annotations() {
    let out = fibon(&root().join("tests/fixtures/invalid"))
        .env("GITHUB_ACTIONS", "true")
        .args(["check", "contract-misspelled-key.yaml"])
        .output()
        .unwrap();
    assert_eq!(code(&out), exit_code::INVALID_INPUT);
    let stderr = String::from_utf8_lossy(&out.stderr);
    let line = stderr
        .lines()
        .find(|l| l.starts_with("::error "))
        .unwrap_or_else(|| panic!("{stderr}"));
    assert!(
        line.starts_with("::error file=contract-misspelled-key.yaml,line=")
            && line.contains(",col=1,title=fibon%3A%3Aunknown_key::unknown key `must_cal_tools`"),
        "{line}"
    );
}

#[test]
fn usage_errors_exit_64_not_clap_2() {
    for args in [
        &["check", "--no-such-flag"][..],
        &["no-such-command"],
        &["check", "--format", "xml"],
        &["schema", "agent"],
        &[],
    ] {
        let out = fibon(&root()).args(args).output().unwrap();
        assert_eq!(
            code(&out),
            exit_code::USAGE,
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

#[test]
fn help_and_version_exit_0() {
    for args in [
        &["--help"][..],
        &["--version"],
        &["check", "--help"],
        &["help", "schema"],
    ] {
        let out = fibon(&root()).args(args).output().unwrap();
        assert_eq!(code(&out), exit_code::SUCCESS, "{args:?}");
        assert!(!out.stdout.is_empty());
    }
}

#[test]
fn missing_config_or_path_is_a_usage_error() {
    let dir = tempfile::tempdir().unwrap();
    let out = fibon(dir.path()).arg("check").output().unwrap();
    assert_eq!(code(&out), exit_code::USAGE);
    assert!(String::from_utf8_lossy(&out.stderr).contains("no config file at fibon.yaml"));
    let out = fibon(dir.path())
        .args(["check", "nope.yaml"])
        .output()
        .unwrap();
    assert_eq!(code(&out), exit_code::USAGE);
    let out = fibon(&root())
        .args(["--config", "nope/fibon.yaml", "check"])
        .output()
        .unwrap();
    assert_eq!(code(&out), exit_code::USAGE);
}

#[test]
fn config_flag_selects_the_project() {
    let out = fibon(&root().join("tests"))
        .args([
            "check",
            "--config",
            "fixtures/invalid/config-misspelled-key/fibon.yaml",
        ])
        .output()
        .unwrap();
    assert_eq!(code(&out), exit_code::INVALID_INPUT);
    assert!(String::from_utf8_lossy(&out.stderr).contains("unknown key `scenarioz`"));
}

#[test]
fn warnings_pass_unless_denied() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("c.yaml"), "skill: lonely\n").unwrap();
    std::fs::write(
        dir.path().join("s.yaml"),
        "id: only-simple\nskill: lonely\ncomplexity: simple\ninput: hi\n",
    )
    .unwrap();
    let out = fibon(dir.path())
        .args(["check", "--color", "never", "c.yaml", "s.yaml"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(code(&out), exit_code::SUCCESS, "{stderr}");
    assert!(
        stderr.contains(
            "skill `lonely` has no complex scenario: quadrants Q2 and Q4 are not covered"
        ),
        "{stderr}"
    );
    let out = fibon(dir.path())
        .args(["check", "--deny-warnings", "c.yaml", "s.yaml"])
        .output()
        .unwrap();
    assert_eq!(code(&out), exit_code::INVALID_INPUT);
}

#[test]
fn valid_fixtures_load_without_problems() {
    let out = fibon(&root().join("tests/fixtures"))
        .args(["check", "--format", "json", "valid"])
        .output()
        .unwrap();
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(code(&out), exit_code::SUCCESS, "{report:#}");
    assert_eq!(report["errors"], 0, "{report:#}");
    assert_eq!(report["files"], 4);
}

#[test]
fn a_file_of_no_known_kind_is_an_error_when_named() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("x.yaml"), "type: object\n").unwrap();
    let out = fibon(dir.path())
        .args(["check", "x.yaml"])
        .output()
        .unwrap();
    assert_eq!(code(&out), exit_code::INVALID_INPUT);
    assert!(
        String::from_utf8_lossy(&out.stderr)
            .contains("cannot tell whether x.yaml is a contract, a scenario or a config")
    );
}

#[test]
fn hostile_input_gets_a_diagnostic_not_a_panic() {
    let dir = tempfile::tempdir().unwrap();
    let deep = "[".repeat(10_000);
    let cases: [(&str, &[u8]); 6] = [
        ("empty.yaml", b""),
        ("binary.yaml", b"\xff\xfe\x00skill"),
        ("list.yaml", b"- skill: a\n"),
        ("deep.json", deep.as_bytes()),
        ("tabs.yaml", b"skill:\t\"a\"\n\tversion: 1\n"),
        ("multi.yaml", b"skill: a\n---\nskill: b\n"),
    ];
    for (name, bytes) in cases {
        std::fs::write(dir.path().join(name), bytes).unwrap();
        let out = fibon(dir.path()).args(["check", name]).output().unwrap();
        assert_eq!(
            code(&out),
            exit_code::INVALID_INPUT,
            "{name}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(
            !String::from_utf8_lossy(&out.stderr).contains("panicked"),
            "{name}"
        );
    }
}

#[test]
fn schema_prints_each_kind() {
    for kind in ["contract", "scenario", "config"] {
        let out = fibon(&root()).args(["schema", kind]).output().unwrap();
        assert_eq!(code(&out), exit_code::SUCCESS);
        let schema: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(
            schema["$id"],
            format!("https://fibon-verify.dev/schemas/{kind}.schema.json")
        );
    }
}

#[test]
fn closed_stdout_is_not_an_error() {
    use std::process::{Command, Stdio};
    let mut child = Command::new(env!("CARGO_BIN_EXE_fibon-verify"))
        .args(["schema", "contract"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    let out = child.wait_with_output().unwrap();
    assert_eq!(
        code(&out),
        exit_code::SUCCESS,
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn a_duplicate_id_is_reported_even_when_the_first_scenario_is_invalid() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("c.yaml"), "skill: s\n").unwrap();
    std::fs::write(
        dir.path().join("a.yaml"),
        "id: same\nskill: s\ncomplexity: simple\ninput: \"\"\n",
    )
    .unwrap();
    std::fs::write(
        dir.path().join("b.yaml"),
        "id: same\nskill: s\ncomplexity: complex\ninput: hi\n",
    )
    .unwrap();
    let out = fibon(dir.path())
        .args(["check", "--format", "json", "."])
        .output()
        .unwrap();
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let codes: Vec<&str> = report["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["code"].as_str().unwrap())
        .collect();
    assert_eq!(
        codes,
        ["fibon::empty_input", "fibon::duplicate_id"],
        "no coverage warning either: {report:#}"
    );
}

#[test]
fn an_error_in_the_config_does_not_hide_the_errors_of_the_contracts() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("contracts")).unwrap();
    std::fs::write(dir.path().join("fibon.yaml"), "matrix: {jobs: 0}\n").unwrap();
    std::fs::write(
        dir.path().join("contracts/c.yaml"),
        "skill: s\nrisk_level: severe\n",
    )
    .unwrap();
    let out = fibon(dir.path())
        .args(["check", "--format", "json"])
        .output()
        .unwrap();
    assert_eq!(code(&out), exit_code::INVALID_INPUT);
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let codes: Vec<&str> = report["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["code"].as_str().unwrap())
        .collect();
    assert!(
        codes.contains(&"fibon::out_of_range") && codes.contains(&"fibon::unknown_value"),
        "{report:#}"
    );
}

#[test]
fn json_files_may_name_their_schema() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("c.json"),
        r#"{"$schema": "../schemas/contract.schema.json", "skill": "s"}"#,
    )
    .unwrap();
    let out = fibon(dir.path())
        .args(["check", "c.json"])
        .output()
        .unwrap();
    assert_eq!(
        code(&out),
        exit_code::SUCCESS,
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// `check scenarios/x.yaml` alone (as an editor runs it) still checks the scenario
/// against the contracts of its project: the nearest folder above with a fibon.yaml.
#[test]
fn a_scenario_checked_alone_is_checked_against_its_projects_contracts() {
    let dir = tempfile::tempdir().unwrap();
    let project = dir.path().join("project");
    std::fs::create_dir_all(project.join("contracts")).unwrap();
    std::fs::create_dir_all(project.join("scenarios/deep")).unwrap();
    std::fs::write(
        project.join("fibon.yaml"),
        "target: {kind: command, command: [\"true\"]}\n",
    )
    .unwrap();
    std::fs::write(
        project.join("contracts/docs.yaml"),
        "skill: search_docs\nmust_call_tools: [search]\nfailure_semantics: {TOOL_NOT_FOUND: explicit, SCHEMA_DRIFT: explicit}\n",
    )
    .unwrap();
    let scenario = |skill: &str, fault: &str| {
        format!("id: s1\nskill: {skill}\ncomplexity: simple\ninput: q\nfaults: [{fault}]\n")
    };
    let file = project.join("scenarios/deep/s1.yaml");

    std::fs::write(&file, scenario("search_doc", "TOOL_NOT_FOUND")).unwrap();
    let out = fibon(&project)
        .args(["check", "scenarios/deep/s1.yaml"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(code(&out), exit_code::INVALID_INPUT, "{stderr}");
    assert!(
        stderr.contains("no contract for skill `search_doc`"),
        "{stderr}"
    );
    assert!(stderr.contains("did you mean `search_docs`?"), "{stderr}");
    assert!(
        stderr.contains("checked 1 file"),
        "only the named file: {stderr}"
    );

    // Resolved against the contract: SCHEMA_DRIFT on the tools it must call (`remove`
    // defaults to them) needs their older schema.
    std::fs::write(&file, scenario("search_docs", "SCHEMA_DRIFT")).unwrap();
    let out = fibon(dir.path())
        .args(["check", "project/scenarios/deep/s1.yaml"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(code(&out), exit_code::INVALID_INPUT, "{stderr}");
    assert!(
        stderr.contains("SCHEMA_DRIFT needs the older input schema of `search`"),
        "{stderr}"
    );

    std::fs::write(&file, scenario("search_docs", "TOOL_NOT_FOUND")).unwrap();
    let out = fibon(&project)
        .args(["check", "scenarios/deep/s1.yaml"])
        .output()
        .unwrap();
    assert_eq!(code(&out), exit_code::SUCCESS);

    // Outside any project there is nothing to check the skill against.
    let alone = dir.path().join("alone.yaml");
    std::fs::write(&alone, scenario("anything", "TOOL_NOT_FOUND")).unwrap();
    let out = fibon(dir.path())
        .args(["check", "alone.yaml"])
        .output()
        .unwrap();
    assert_eq!(
        code(&out),
        exit_code::SUCCESS,
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Minified JSON: an error past column 65,535 once panicked in the renderer. The place is
/// named instead of showing a line nobody can read.
#[test]
fn an_error_on_a_very_long_line_names_the_place() {
    let dir = tempfile::tempdir().unwrap();
    let long = "a".repeat(66_000);
    std::fs::write(
        dir.path().join("x.json"),
        format!("{{\"skill_name\": \"x\", \"version\": \"{long}\", \"bogus\": 1}}\n"),
    )
    .unwrap();
    let out = fibon(dir.path())
        .args(["check", "x.json"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(code(&out), exit_code::INVALID_INPUT, "{stderr}");
    assert!(stderr.contains("unknown key `bogus`"), "{stderr}");
    assert!(
        stderr.contains("at x.json:1:66036 (the line is too long to show)"),
        "{stderr}"
    );
    assert!(
        stderr.len() < 4000,
        "the line is not printed: {} bytes",
        stderr.len()
    );
}

/// Symlinks back up the tree, a FIFO and a device: `check` finishes, walks each folder
/// once, and names what is not a regular file, found in a folder or named on the command
/// line (tests/hostile/inputs.rs has every other kind of unreadable file).
#[test]
fn loops_fifos_and_devices_neither_hang_nor_duplicate() {
    let dir = tempfile::tempdir().unwrap();
    let project = dir.path();
    for entry in ["fibon.yaml", "contracts", "scenarios"] {
        let status = std::process::Command::new("cp")
            .arg("-r")
            .arg(root().join(entry))
            .arg(project)
            .status()
            .unwrap();
        assert!(status.success());
    }
    std::os::unix::fs::symlink("..", project.join("scenarios/search_docs/up")).unwrap();
    std::os::unix::fs::symlink("../scenarios", project.join("scenarios/again")).unwrap();
    let out = fibon(project)
        .arg("check")
        .timeout(std::time::Duration::from_secs(60))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(code(&out), exit_code::SUCCESS, "{stderr}");
    assert!(
        stderr.contains("6 valid scenarios; no problems"),
        "{stderr}"
    );

    let fifo = project.join("scenarios/pipe.yaml");
    assert!(
        std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap()
            .success()
    );
    let out = fibon(project)
        .arg("check")
        .timeout(std::time::Duration::from_secs(60))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(code(&out), exit_code::INVALID_INPUT, "{stderr}");
    assert!(
        stderr.contains("cannot read scenarios/pipe.yaml: it is not a regular file"),
        "{stderr}"
    );

    for named in [fifo.to_str().unwrap(), "/dev/zero"] {
        let out = fibon(project)
            .args(["check", named])
            .timeout(std::time::Duration::from_secs(60))
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(code(&out), exit_code::INVALID_INPUT, "{stderr}");
        assert!(stderr.contains("it is not a regular file"), "{stderr}");
    }
}

/// A misspelled placeholder in a command target's argv is named at its argument, with a
/// "did you mean"; so are an unknown `answer` mode and a JSONPath that does not parse.
#[test]
fn an_unknown_placeholder_is_named_at_its_argument() {
    let dir = tempfile::tempdir().unwrap();
    for folder in ["contracts", "scenarios"] {
        std::fs::create_dir(dir.path().join(folder)).unwrap();
    }
    std::fs::write(
        dir.path().join("fibon.yaml"),
        "target:\n  kind: command\n  command: [claude, -p, \"{inptu}\", --mcp-config, \"{mcp_config}\", \"--x={{input}}\", \"${home}\", \"f'{text}'\"]\n  stdin: none\n  answer: {json: \"$.result\"}\n",
    )
    .unwrap();
    let out = fibon(dir.path())
        .args(["check", "--color", "never"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(code(&out), exit_code::INVALID_INPUT, "{stderr}");
    assert!(
        stderr.contains("`{inptu}` in the target command is not a placeholder"),
        "{stderr}"
    );
    assert!(stderr.contains("help: did you mean `{input}`?"), "{stderr}");
    assert!(stderr.contains("[fibon.yaml:3:"), "{stderr}");
    assert_eq!(
        stderr.matches("not a placeholder").count(),
        1,
        "`{{input}}`, `${{home}}` and `{{text}}` are text: {stderr}"
    );

    std::fs::write(
        dir.path().join("fibon.yaml"),
        "target:\n  kind: command\n  command: [claude]\n  stdin: nothing\n  answer: {json: \"result[\"}\n",
    )
    .unwrap();
    let out = fibon(dir.path())
        .args(["check", "--format", "json"])
        .output()
        .unwrap();
    assert_eq!(code(&out), exit_code::INVALID_INPUT);
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let codes: Vec<&str> = report["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["code"].as_str().unwrap())
        .collect();
    assert!(codes.contains(&"fibon::unknown_value"), "{report:#}");

    std::fs::write(
        dir.path().join("fibon.yaml"),
        "target:\n  kind: command\n  command: [claude]\n  answer: {json: \"result[\"}\n",
    )
    .unwrap();
    let out = fibon(dir.path())
        .args(["check", "--format", "json"])
        .output()
        .unwrap();
    assert_eq!(code(&out), exit_code::INVALID_INPUT);
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        report["diagnostics"][0]["code"], "fibon::invalid_json_path",
        "{report:#}"
    );
}
