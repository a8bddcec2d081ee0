//! One failure, one exit code: every failure a user can cause, in every command it applies
//! to, exits with the code docs/reference.md gives it and names what is at fault on stderr
//! (the file, the flag's value, the server or the URL). The table below is the mapping;
//! docs/reference.md ("Exit codes by failure") prints the same one.

mod common;

use std::path::Path;
use std::time::Duration;

use common::{code, fibon, peers};
use fibon_verify::exit_code::{INVALID_INPUT, NO_CELLS, PROBE_FAILED, UNAVAILABLE, USAGE};

/// A valid project: one contract, a simple and a complex scenario, the reference agent as
/// the target, a history of one conversation, candidates and a quality policy with
/// built-in judges.
fn project() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path();
    std::fs::create_dir(p.join("contracts")).unwrap();
    std::fs::create_dir(p.join("scenarios")).unwrap();
    std::fs::write(
        p.join("contracts/docs.yaml"),
        "skill: docs\nmust_call_tools: [search]\n",
    )
    .unwrap();
    for (id, complexity) in [("s1", "simple"), ("s2", "complex")] {
        std::fs::write(
            p.join(format!("scenarios/{id}.yaml")),
            format!("id: {id}\nskill: docs\ncomplexity: {complexity}\ninput: what is in the docs?\ntools:\n  search:\n    responses:\n      - text: the docs say hello\n"),
        )
        .unwrap();
    }
    write_config(p, "");
    std::fs::write(
        p.join("h.jsonl"),
        r#"{"id": "c1", "skill": "docs", "input": "q", "trace": [{"tool": "search", "arguments": {}, "result": {"content": [{"type": "text", "text": "hello"}]}}], "output": "hello", "status": "ok"}"#.to_string() + "\n",
    )
    .unwrap();
    std::fs::write(
        p.join("c.jsonl"),
        r#"{"id": "one", "output": "hello", "facts": ["hello"]}"#.to_string() + "\n",
    )
    .unwrap();
    std::fs::write(
        p.join("policy.yaml"),
        "policy: p\nversion: 1\ndimensions:\n  - {id: grounded, kind: critical, threshold: 8}\njudges:\n  - {id: a, kind: builtin, name: fact_coverage}\n  - {id: b, kind: builtin, name: fact_coverage}\ntiebreak: {id: c, kind: builtin, name: fact_coverage}\nbudget: {planned_calls: 10, max_calls: 10, max_usd_per_call: 0, limit_usd: 0}\n",
    )
    .unwrap();
    std::fs::write(p.join("SKILL.md"), "---\nname: docs-skill\n---\n").unwrap();
    dir
}

/// fibon.yaml with the reference agent as target, and `extra` appended.
fn write_config(p: &Path, extra: &str) {
    std::fs::write(
        p.join("fibon.yaml"),
        format!("contracts: [contracts]\nscenarios: [scenarios]\ntarget: {{kind: command, command: [fibon-verify, agent], timeout: 20s}}\nmatrix: {{jobs: 2}}\nreport: {{dir: out}}\n{extra}"),
    )
    .unwrap();
}

fn write(p: &Path, name: &str, text: &str) {
    if let Some(dir) = Path::new(name).parent() {
        std::fs::create_dir_all(p.join(dir)).unwrap();
    }
    std::fs::write(p.join(name), text).unwrap();
}

/// A folder at `name`, not empty (so nothing can be renamed over it).
fn folder(p: &Path, name: &str) {
    std::fs::create_dir_all(p.join(name).join("inside")).unwrap();
}

/// An MCP server that works (the misbehaving peer's well-behaved tools).
fn working_server(p: &Path) {
    write_config(
        p,
        &format!(
            "platform:\n  mcp_servers:\n    - {{name: up, command: {}}}\n",
            serde_json::to_string(&peers::misbehaving(&[])).unwrap()
        ),
    );
}

/// A quality policy whose judges all listen on a port nobody serves.
const UNREACHABLE_JUDGES: &str = "policy: p\nversion: 1\ndimensions:\n  - {id: grounded, kind: critical, threshold: 8}\njudges:\n  - {id: a, kind: openai, base_url: \"http://127.0.0.1:1/v1\", model: m}\n  - {id: b, kind: openai, base_url: \"http://127.0.0.1:1/v1\", model: m}\ntiebreak: {id: c, kind: openai, base_url: \"http://127.0.0.1:1/v1\", model: m}\nbudget: {planned_calls: 10, max_calls: 10, max_usd_per_call: 0, limit_usd: 0}\n";

/// One user-caused failure: how to cause it in the project, and what each command it
/// applies to does — its arguments, its exit code, and what its stderr must name.
struct Case {
    failure: &'static str,
    setup: fn(&Path),
    runs: &'static [(&'static [&'static str], i32, &'static str)],
}

/// The commands that load the project of `--config`.
macro_rules! with_project {
    ($code:expr, $named:expr) => {
        &[
            (&["check"], $code, $named),
            (&["run"], $code, $named),
            (&["audit", "--history", "h.jsonl"], $code, $named),
            (&["sample", "--history", "h.jsonl"], $code, $named),
            (&["gate", "--candidates", "c.jsonl"], $code, $named),
            (&["probe"], $code, $named),
            (
                &["gateway", "--scenario", "s1", "--serve-for", "0s"],
                $code,
                $named,
            ),
        ]
    };
}

const CASES: &[Case] = &[
    Case {
        failure: "no fibon.yaml",
        setup: |p| std::fs::remove_file(p.join("fibon.yaml")).unwrap(),
        runs: &[
            (&["check"], USAGE, "no config file at fibon.yaml"),
            (&["run"], USAGE, "no config file at fibon.yaml"),
            (&["audit", "--history", "h.jsonl"], USAGE, "fibon.yaml"),
            (&["sample", "--history", "h.jsonl"], USAGE, "fibon.yaml"),
            (&["gate", "--candidates", "c.jsonl"], USAGE, "fibon.yaml"),
            (&["probe"], USAGE, "fibon.yaml"),
            (&["gateway", "--scenario", "s1"], USAGE, "fibon.yaml"),
            (&["init", "--from-mcp", "up"], USAGE, "fibon.yaml"),
        ],
    },
    Case {
        failure: "--config names a folder",
        setup: |p| folder(p, "conf"),
        runs: &[
            (&["--config", "conf", "check"], USAGE, "conf"),
            (&["--config", "conf", "run"], USAGE, "conf"),
            (
                &["--config", "conf", "audit", "--history", "h.jsonl"],
                USAGE,
                "conf",
            ),
            (&["--config", "conf", "probe"], USAGE, "conf"),
        ],
    },
    Case {
        failure: "fibon.yaml is not UTF-8",
        setup: |p| std::fs::write(p.join("fibon.yaml"), b"target: \xff\xfe\n").unwrap(),
        runs: with_project!(INVALID_INPUT, "fibon.yaml"),
    },
    Case {
        failure: "a contract that is not YAML",
        setup: |p| write(p, "contracts/docs.yaml", "skill: [docs\n"),
        runs: with_project!(INVALID_INPUT, "docs.yaml"),
    },
    Case {
        failure: "checks.refusal_lexicon is not a lexicon",
        setup: |p| {
            write(p, "lex.txt", "[not, a, mapping]\n");
            write_config(p, "checks: {refusal_lexicon: lex.txt}\n");
        },
        runs: with_project!(INVALID_INPUT, "lex.txt"),
    },
    Case {
        failure: "checks.refusal_lexicon does not exist",
        setup: |p| write_config(p, "checks: {refusal_lexicon: nolex.yaml}\n"),
        runs: with_project!(INVALID_INPUT, "nolex.yaml"),
    },
    Case {
        failure: "no target",
        setup: |p| {
            write(
                p,
                "fibon.yaml",
                "contracts: [contracts]\nscenarios: [scenarios]\n",
            )
        },
        runs: &[
            (&["run"], USAGE, "fibon.yaml has no `target:`"),
            (
                &["sample", "--history", "h.jsonl"],
                USAGE,
                "fibon.yaml has no `target:`",
            ),
        ],
    },
    Case {
        failure: "a replay target for sample",
        setup: |p| {
            write(
                p,
                "fibon.yaml",
                "contracts: [contracts]\nscenarios: [scenarios]\ntarget: {kind: replay, history: h.jsonl}\n",
            );
        },
        runs: &[(&["sample", "--history", "h.jsonl"], USAGE, "fibon.yaml")],
    },
    Case {
        failure: "--history does not exist",
        setup: |_| {},
        runs: &[
            (&["audit", "--history", "nope.jsonl"], USAGE, "nope.jsonl"),
            (&["sample", "--history", "nope.jsonl"], USAGE, "nope.jsonl"),
            (
                &["sample", "--history", "nope.jsonl", "--dry-run"],
                USAGE,
                "nope.jsonl",
            ),
        ],
    },
    Case {
        failure: "--history is a folder",
        setup: |p| folder(p, "hist"),
        runs: &[
            (
                &["audit", "--history", "hist"],
                USAGE,
                "cannot read hist: it is a folder",
            ),
            (
                &["sample", "--history", "hist"],
                USAGE,
                "cannot read hist: it is a folder",
            ),
            (
                &["sample", "--history", "hist", "--dry-run"],
                USAGE,
                "cannot read hist",
            ),
        ],
    },
    Case {
        failure: "target.history (in the config) is a folder",
        setup: |p| {
            folder(p, "hist");
            write(
                p,
                "fibon.yaml",
                "contracts: [contracts]\nscenarios: [scenarios]\ntarget: {kind: replay, history: hist}\n",
            );
        },
        runs: &[
            (&["check"], INVALID_INPUT, "hist"),
            (&["run"], INVALID_INPUT, "hist"),
        ],
    },
    Case {
        failure: "a history line that is not JSON",
        setup: |p| {
            write(p, "h.jsonl", "not json\n");
            write(
                p,
                "fibon.yaml",
                "contracts: [contracts]\nscenarios: [scenarios]\ntarget: {kind: replay, history: h.jsonl}\nreport: {dir: out}\n",
            );
            write(
                p,
                "agent.yaml",
                "contracts: [contracts]\nscenarios: [scenarios]\ntarget: {kind: command, command: [fibon-verify, agent]}\nreport: {dir: out}\n",
            );
        },
        runs: &[
            (
                &["audit", "--history", "h.jsonl"],
                UNAVAILABLE,
                "line 1: not JSON",
            ),
            (
                &[
                    "--config",
                    "agent.yaml",
                    "sample",
                    "--history",
                    "h.jsonl",
                    "--rate",
                    "1",
                ],
                UNAVAILABLE,
                "line 1: not JSON",
            ),
            (&["run"], UNAVAILABLE, "line 1: not JSON"),
        ],
    },
    Case {
        failure: "--report-dir is a file",
        setup: |p| write(p, "afile", ""),
        runs: &[
            (
                &["run", "--report-dir", "afile"],
                USAGE,
                "cannot write afile",
            ),
            (
                &["audit", "--history", "h.jsonl", "--report-dir", "afile"],
                USAGE,
                "cannot write afile",
            ),
            (
                &["sample", "--history", "h.jsonl", "--report-dir", "afile"],
                USAGE,
                "cannot write afile",
            ),
            (
                &[
                    "gate",
                    "--candidates",
                    "c.jsonl",
                    "--policy",
                    "policy.yaml",
                    "--report-dir",
                    "afile",
                ],
                USAGE,
                "cannot write afile",
            ),
            (
                &["merge", "r.json", "--report-dir", "afile"],
                USAGE,
                "cannot write afile",
            ),
        ],
    },
    Case {
        failure: "report.json in the report folder is a folder",
        setup: |p| {
            folder(p, "out/report.json");
            write(
                p,
                "r.json",
                r#"{"schema": "fibon.report/v1", "version": "0.1.0", "cells": []}"#,
            );
        },
        runs: &[
            (
                &["run", "--report-dir", "out"],
                USAGE,
                "cannot write out/report.json",
            ),
            (
                &["audit", "--history", "h.jsonl", "--report-dir", "out"],
                USAGE,
                "cannot write out/report.json",
            ),
            (
                &[
                    "sample",
                    "--history",
                    "h.jsonl",
                    "--rate",
                    "1",
                    "--report-dir",
                    "out",
                ],
                USAGE,
                "cannot write out/report.json",
            ),
            (
                &[
                    "gate",
                    "--candidates",
                    "c.jsonl",
                    "--policy",
                    "policy.yaml",
                    "--report-dir",
                    "out",
                ],
                USAGE,
                "cannot write out/report.json",
            ),
            (
                &["merge", "r.json", "--report-dir", "out"],
                USAGE,
                "cannot write out/report.json",
            ),
        ],
    },
    Case {
        failure: "--candidates does not exist or is a folder",
        setup: |p| folder(p, "cands"),
        runs: &[
            (
                &[
                    "gate",
                    "--candidates",
                    "nope.jsonl",
                    "--policy",
                    "policy.yaml",
                ],
                USAGE,
                "nope.jsonl",
            ),
            (
                &["gate", "--candidates", "cands", "--policy", "policy.yaml"],
                USAGE,
                "cannot read cands",
            ),
        ],
    },
    Case {
        failure: "a candidates line that is not JSON",
        setup: |p| write(p, "c.jsonl", "not json\n"),
        runs: &[(
            &["gate", "--candidates", "c.jsonl", "--policy", "policy.yaml"],
            UNAVAILABLE,
            "line 1: not JSON",
        )],
    },
    Case {
        failure: "a candidate id given twice",
        setup: |p| {
            write(
                p,
                "c.jsonl",
                "{\"id\": \"one\", \"output\": \"a\"}\n{\"id\": \"one\", \"output\": \"b\"}\n",
            )
        },
        runs: &[(
            &["gate", "--candidates", "c.jsonl", "--policy", "policy.yaml"],
            INVALID_INPUT,
            "c.jsonl",
        )],
    },
    Case {
        failure: "--policy does not exist",
        setup: |p| write(p, "exp.yaml", "experiment: e\n"),
        runs: &[
            (
                &["gate", "--candidates", "c.jsonl", "--policy", "nope.yaml"],
                USAGE,
                "nope.yaml",
            ),
            (
                &["gate", "--experiment", "exp.yaml", "--policy", "nope.yaml"],
                USAGE,
                "nope.yaml",
            ),
        ],
    },
    Case {
        failure: "no quality policy (no --policy, no quality.policy)",
        setup: |_| {},
        runs: &[(
            &["gate", "--candidates", "c.jsonl"],
            USAGE,
            "no quality policy",
        )],
    },
    Case {
        failure: "a policy whose plan reserves more than limit_usd",
        setup: |p| {
            let policy = std::fs::read_to_string(p.join("policy.yaml")).unwrap();
            write(
                p,
                "policy.yaml",
                &policy.replace(
                    "max_usd_per_call: 0, limit_usd: 0",
                    "max_usd_per_call: 1, limit_usd: 5",
                ),
            );
        },
        runs: &[(
            &["gate", "--candidates", "c.jsonl", "--policy", "policy.yaml"],
            INVALID_INPUT,
            "policy.yaml",
        )],
    },
    Case {
        failure: "an invalid --policy",
        setup: |p| {
            write(
                p,
                "policy.yaml",
                "policy: p\nversion: 1\ndimensions: []\njudges: nope\n",
            );
            write(p, "exp.yaml", "experiment: e\n");
        },
        runs: &[
            (
                &["gate", "--candidates", "c.jsonl", "--policy", "policy.yaml"],
                INVALID_INPUT,
                "policy.yaml",
            ),
            (
                &[
                    "gate",
                    "--experiment",
                    "exp.yaml",
                    "--policy",
                    "policy.yaml",
                ],
                INVALID_INPUT,
                "policy.yaml",
            ),
        ],
    },
    Case {
        failure: "--experiment that is not an experiment",
        setup: |p| write(p, "exp.json", "{\"samples\": 3}\n"),
        runs: &[(
            &["gate", "--experiment", "exp.json"],
            INVALID_INPUT,
            "exp.json",
        )],
    },
    Case {
        failure: "no quality judge can be reached",
        setup: |p| write(p, "policy.yaml", UNREACHABLE_JUDGES),
        runs: &[(
            &["gate", "--candidates", "c.jsonl", "--policy", "policy.yaml"],
            UNAVAILABLE,
            "127.0.0.1:1",
        )],
    },
    Case {
        failure: "a shard report that does not exist, or is not JSON",
        setup: |p| write(p, "r.json", "{not json"),
        runs: &[
            (&["merge", "nope.json"], USAGE, "nope.json"),
            (&["merge", "r.json"], INVALID_INPUT, "r.json"),
        ],
    },
    Case {
        failure: "--skill or --scenario that names nothing",
        setup: |_| {},
        runs: &[
            (&["run", "--skill", "nope"], USAGE, "no skill `nope`"),
            (&["run", "--scenario", "nope"], USAGE, "no scenario `nope`"),
            (
                &["audit", "--history", "h.jsonl", "--skill", "nope"],
                NO_CELLS,
                "0 conversations",
            ),
            (
                &["gateway", "--scenario", "nope"],
                USAGE,
                "no scenario `nope`",
            ),
        ],
    },
    Case {
        failure: "an unreachable target URL",
        setup: |p| {
            write(
                p,
                "fibon.yaml",
                "contracts: [contracts]\nscenarios: [scenarios]\ntarget: {kind: http, url: \"http://127.0.0.1:1/agent\", timeout: 5s}\nreport: {dir: out}\n",
            )
        },
        runs: &[
            (&["run"], UNAVAILABLE, "127.0.0.1:1"),
            (
                &["sample", "--history", "h.jsonl", "--rate", "1"],
                UNAVAILABLE,
                "127.0.0.1:1",
            ),
        ],
    },
    Case {
        failure: "a target command that cannot be started",
        setup: |p| {
            write(
                p,
                "fibon.yaml",
                "contracts: [contracts]\nscenarios: [scenarios]\ntarget: {kind: command, command: [/nonexistent/agent]}\nreport: {dir: out}\n",
            )
        },
        runs: &[
            (&["run"], UNAVAILABLE, "/nonexistent/agent"),
            (
                &["sample", "--history", "h.jsonl", "--rate", "1"],
                UNAVAILABLE,
                "/nonexistent/agent",
            ),
        ],
    },
    Case {
        failure: "no judge of the config's quality policy can be reached",
        setup: |p| {
            write(p, "policy.yaml", UNREACHABLE_JUDGES);
            write_config(p, "quality: {policy: policy.yaml}\n");
        },
        runs: &[
            // Q1 only: the cells that are judged (the others' contract findings would
            // outrank 69).
            (&["run", "--quadrant", "Q1"], UNAVAILABLE, "127.0.0.1:1"),
            (
                &["gate", "--candidates", "c.jsonl"],
                UNAVAILABLE,
                "127.0.0.1:1",
            ),
        ],
    },
    Case {
        failure: "--candidates or --policy that is not UTF-8",
        setup: |p| {
            std::fs::write(p.join("bin.jsonl"), b"\xff\xfe\n").unwrap();
            std::fs::write(p.join("bin.yaml"), b"policy: \xff\n").unwrap();
            write(p, "exp.yaml", "experiment: e\n");
        },
        runs: &[
            (
                &[
                    "gate",
                    "--candidates",
                    "bin.jsonl",
                    "--policy",
                    "policy.yaml",
                ],
                USAGE,
                "cannot read bin.jsonl",
            ),
            (
                &["gate", "--candidates", "c.jsonl", "--policy", "bin.yaml"],
                USAGE,
                "cannot read bin.yaml",
            ),
            (
                &["gate", "--experiment", "exp.yaml", "--policy", "bin.yaml"],
                USAGE,
                "cannot read bin.yaml",
            ),
        ],
    },
    Case {
        failure: "an MCP server that cannot be started",
        setup: |p| {
            write_config(
                p,
                "platform:\n  mcp_servers:\n    - {name: gone, command: [/nonexistent/mcp-server]}\n",
            );
            // Not critical: an unavailable critical Skill would make the probe's code 4.
            write(
                p,
                "contracts/docs.yaml",
                "skill: docs\ncritical: false\nmust_call_tools: [search]\n",
            );
        },
        runs: &[
            (
                &["run"],
                UNAVAILABLE,
                "MCP server `gone` could not be reached",
            ),
            (&["probe"], UNAVAILABLE, "gone"),
            (
                &["gateway", "--scenario", "s1", "--serve-for", "0s"],
                UNAVAILABLE,
                "MCP server `gone` could not be reached",
            ),
            (
                &["init", "--from-mcp", "gone", "--out", "draft.yaml"],
                UNAVAILABLE,
                "MCP server `gone` could not be reached",
            ),
        ],
    },
    Case {
        failure: "fibon.lock is a folder",
        setup: |p| {
            working_server(p);
            folder(p, "fibon.lock");
        },
        runs: &[
            (
                &["probe"],
                PROBE_FAILED,
                "cannot read fibon.lock: it is a folder",
            ),
            (
                &["run"],
                PROBE_FAILED,
                "cannot read fibon.lock: it is a folder",
            ),
            (
                &["probe", "--update-lock"],
                USAGE,
                "cannot write fibon.lock: it is a folder",
            ),
        ],
    },
    Case {
        failure: "an output file in a folder that does not exist",
        setup: |p| working_server(p),
        runs: &[
            (
                &["probe", "--update-lock", "--lock", "nodir/fibon.lock"],
                USAGE,
                "cannot write nodir/fibon.lock",
            ),
            (
                &[
                    "gateway",
                    "--scenario",
                    "s1",
                    "--serve-for",
                    "0s",
                    "--trace-out",
                    "nodir/t.json",
                ],
                USAGE,
                "cannot write nodir/t.json",
            ),
        ],
    },
    Case {
        failure: "init: SKILL.md missing, without frontmatter, or the draft exists",
        setup: |p| {
            write(p, "plain.md", "no frontmatter\n");
            write(p, "contracts/docs-skill.yaml", "skill: docs-skill\n");
        },
        runs: &[
            (&["init", "--from-skill", "nope.md"], USAGE, "nope.md"),
            (
                &["init", "--from-skill", "plain.md"],
                INVALID_INPUT,
                "plain.md",
            ),
            (
                &["init", "--from-skill", "SKILL.md"],
                USAGE,
                "contracts/docs-skill.yaml already exists",
            ),
        ],
    },
    Case {
        failure: "agent: stdin that is not a request",
        setup: |_| {},
        runs: &[(&["agent"], USAGE, "stdin is not a fibon.agent/v1 request")],
    },
];

#[test]
fn each_failure_exits_with_the_same_code_in_every_command_and_names_its_cause() {
    let mut wrong = Vec::new();
    let mut runs = 0;
    for case in CASES {
        for (args, want, named) in case.runs {
            // Each command gets a fresh project, so that what one writes cannot hide
            // another's failure.
            let dir = project();
            (case.setup)(dir.path());
            let out = fibon(dir.path())
                .args(*args)
                .write_stdin("not a request")
                .timeout(Duration::from_secs(120))
                .output()
                .unwrap();
            runs += 1;
            let stderr = String::from_utf8_lossy(&out.stderr);
            let got = code(&out);
            if got != *want || !stderr.contains(named) {
                wrong.push(format!(
                    "{}: `fibon-verify {}` exited {got} (want {want}); stderr should contain {named:?}:\n{stderr}",
                    case.failure,
                    args.join(" ")
                ));
            }
            assert!(
                !stderr.contains("internal error") && !stderr.contains("panicked"),
                "{}: {args:?}: {stderr}",
                case.failure
            );
        }
    }
    assert!(
        wrong.is_empty(),
        "{} of {runs} runs:\n\n{}",
        wrong.len(),
        wrong.join("\n\n")
    );
}

/// The job summary is an output too: under GitHub Actions, a `GITHUB_STEP_SUMMARY` that
/// cannot be appended to is named (64) by every command that writes one.
#[test]
fn a_job_summary_that_cannot_be_written_is_named() {
    let runs: &[&[&str]] = &[
        &["run", "--quadrant", "Q1"],
        &["audit", "--history", "h.jsonl"],
        &["sample", "--history", "h.jsonl", "--rate", "1"],
        &["gate", "--candidates", "c.jsonl", "--policy", "policy.yaml"],
        &["merge", "out/report.json", "--report-dir", "merged"],
    ];
    let mut wrong = Vec::new();
    for args in runs {
        let dir = project();
        folder(dir.path(), "summary.md");
        if args[0] == "merge" {
            let out = fibon(dir.path())
                .args(["audit", "--history", "h.jsonl"])
                .output()
                .unwrap();
            assert_eq!(code(&out), 0, "{}", String::from_utf8_lossy(&out.stderr));
        }
        let out = fibon(dir.path())
            .env("GITHUB_ACTIONS", "true")
            .env("GITHUB_STEP_SUMMARY", dir.path().join("summary.md"))
            .args(*args)
            .timeout(Duration::from_secs(120))
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        if code(&out) != USAGE || !stderr.contains("summary.md") {
            wrong.push(format!(
                "`fibon-verify {}` exited {}:\n{stderr}",
                args.join(" "),
                code(&out)
            ));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n\n"));
}
