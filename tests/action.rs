//! The GitHub Action and the workflows: `action.yml` is structurally sound (every input and
//! output documented, every step well formed, no expression expanded inside a script), the
//! workflows pin their actions by commit SHA with read-only permissions, and the action's
//! shell steps, executed locally as GitHub would run them (inputs through `env`,
//! `GITHUB_OUTPUT` / `GITHUB_STEP_SUMMARY` / `GITHUB_PATH` as temp files), set the outputs
//! and write the summary.

mod common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use common::{code, root};
use serde_yaml::Value;

fn yaml(path: &Path) -> Value {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_yaml::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn action() -> Value {
    yaml(&root().join("action.yml"))
}

fn str_of<'a>(v: &'a Value, key: &str) -> Option<&'a str> {
    v.get(key).and_then(Value::as_str)
}

fn steps(action: &Value) -> &Vec<Value> {
    action["runs"]["steps"].as_sequence().expect("runs.steps")
}

/// Every `${{ … }}` expression in `text`, trimmed.
fn expressions(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = text;
    while let Some(start) = rest.find("${{") {
        let end = rest[start..].find("}}").expect("closed expression") + start;
        out.push(rest[start + 3..end].trim().to_string());
        rest = &rest[end + 2..];
    }
    out
}

#[test]
fn action_yml_is_well_formed() {
    let action = action();
    assert!(str_of(&action, "name").is_some_and(|s| !s.is_empty()));
    assert!(str_of(&action, "description").is_some_and(|s| !s.is_empty()));
    assert_eq!(str_of(&action["runs"], "using"), Some("composite"));

    let inputs = action["inputs"].as_mapping().expect("inputs");
    for wanted in [
        "command",
        "args",
        "config",
        "version",
        "fail",
        "job-summary",
        "junit-path",
        "baseline",
        "fail-on",
    ] {
        assert!(inputs.contains_key(wanted), "input `{wanted}` is missing");
    }
    for (name, input) in inputs {
        let name = name.as_str().unwrap();
        assert!(
            str_of(input, "description").is_some_and(|d| d.len() > 10),
            "input `{name}` is not documented"
        );
        let required = input.get("required").and_then(Value::as_bool) == Some(true);
        assert!(
            required || input.get("default").is_some(),
            "optional input `{name}` has no default"
        );
    }
    assert_eq!(str_of(&action["inputs"]["fail"], "default"), Some("true"));
    assert_eq!(
        str_of(&action["inputs"]["job-summary"], "default"),
        Some("true")
    );

    // Steps: named, bash, a script or an action (not both), no expression inside a script
    // (inputs reach scripts through env only: no script injection).
    let mut used_inputs = Vec::new();
    let mut ids = Vec::new();
    for step in steps(&action) {
        let name = str_of(step, "name").expect("every step is named");
        assert!(
            step.get("run").is_some() != step.get("uses").is_some(),
            "step `{name}` must have exactly one of run/uses"
        );
        if let Some(run) = str_of(step, "run") {
            assert_eq!(str_of(step, "shell"), Some("bash"), "step `{name}`");
            assert!(
                !run.contains("${{"),
                "step `{name}` expands an expression inside its script"
            );
            // The scripts it calls exist and are bash.
            for word in run.split_whitespace() {
                if let Some(rel) = word.trim_matches('"').strip_prefix("$ACTION_PATH/") {
                    let script = root().join(rel);
                    let text = std::fs::read_to_string(&script)
                        .unwrap_or_else(|e| panic!("{}: {e}", script.display()));
                    assert!(text.starts_with("#!/usr/bin/env bash\n"), "{rel}");
                }
            }
        }
        if let Some(id) = str_of(step, "id") {
            ids.push(id.to_string());
        }
        if let Some(env) = step.get("env").and_then(Value::as_mapping) {
            for value in env.values() {
                for expr in expressions(value.as_str().unwrap_or_default()) {
                    if let Some(input) = expr.strip_prefix("inputs.") {
                        assert!(
                            inputs.contains_key(input),
                            "step `{name}` reads undeclared input `{input}`"
                        );
                        used_inputs.push(input.to_string());
                    } else {
                        assert_eq!(expr, "github.action_path", "step `{name}`");
                    }
                }
            }
        }
    }
    for name in inputs.keys() {
        let name = name.as_str().unwrap();
        assert!(
            used_inputs.iter().any(|u| u == name),
            "input `{name}` is never used"
        );
    }

    // Outputs: documented, and read from a step that exists and writes them.
    let run_script = std::fs::read_to_string(root().join(".github/action/run.sh")).unwrap();
    let outputs = action["outputs"].as_mapping().expect("outputs");
    for wanted in ["exit_code", "report", "html"] {
        assert!(outputs.contains_key(wanted), "output `{wanted}` is missing");
    }
    for (name, output) in outputs {
        let name = name.as_str().unwrap();
        assert!(
            str_of(output, "description").is_some_and(|d| d.len() > 10),
            "output `{name}` is not documented"
        );
        let exprs = expressions(str_of(output, "value").expect("output value"));
        let [expr] = exprs.as_slice() else {
            panic!("output `{name}`: one expression")
        };
        let parts: Vec<&str> = expr.split('.').collect();
        assert!(
            matches!(parts.as_slice(), ["steps", id, "outputs", out] if ids.iter().any(|i| i == id) && *out == name),
            "output `{name}` reads `{expr}`"
        );
        assert!(
            run_script.contains(&format!("echo \"{name}=")),
            "run.sh never writes `{name}`"
        );
    }

    // The command input names real subcommands, and run.sh accepts exactly those.
    let description = str_of(&action["inputs"]["command"], "description").unwrap();
    for command in ["run", "probe", "sample", "audit", "check", "merge"] {
        assert!(description.contains(command), "command input: `{command}`");
        assert!(
            run_script.contains(&format!("{command}|"))
                || run_script.contains(&format!("|{command})"))
        );
        let out = common::fibon(&root())
            .args([command, "--help"])
            .output()
            .unwrap();
        assert_eq!(code(&out), 0, "`fibon-verify {command}` is a subcommand");
    }
}

#[test]
fn workflows_pin_actions_and_read_only_permissions() {
    let dir = root().join(".github/workflows");
    let mut names = Vec::new();
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().to_string();
        let workflow = yaml(&path);
        assert_eq!(
            workflow["permissions"]["contents"].as_str(),
            Some("read"),
            "{name}: permissions: contents: read"
        );
        for (_, job) in workflow["jobs"].as_mapping().expect("jobs") {
            assert!(
                job.get("timeout-minutes").is_some(),
                "{name}: every job has a timeout"
            );
            for step in job["steps"].as_sequence().expect("steps") {
                let Some(uses) = str_of(step, "uses") else {
                    continue;
                };
                if uses == "./" {
                    continue;
                }
                let (_, reference) = uses.split_once('@').expect("uses owner/repo@ref");
                assert!(
                    reference.len() == 40 && reference.bytes().all(|b| b.is_ascii_hexdigit()),
                    "{name}: `{uses}` is not pinned by commit SHA"
                );
            }
        }
        names.push(name);
    }
    names.sort();
    assert_eq!(
        names,
        [
            "action.yml",
            "ci.yml",
            "merge-gate.yml",
            "nightly-sampling.yml",
            "release.yml"
        ]
    );
    // The release publishes an asset for every target the installer maps a runner to,
    // under the name it downloads.
    let install = std::fs::read_to_string(root().join(".github/action/install.sh")).unwrap();
    let release = yaml(&dir.join("release.yml"));
    let release_text = std::fs::read_to_string(dir.join("release.yml")).unwrap();
    let targets: Vec<&str> = release["jobs"]["binary"]["strategy"]["matrix"]["include"]
        .as_sequence()
        .unwrap()
        .iter()
        .filter_map(|i| str_of(i, "target"))
        .collect();
    let mapped: Vec<&str> = install
        .lines()
        .filter_map(|l| l.split_once("target=")?.1.split_whitespace().next())
        .filter(|t| t.contains('-'))
        .collect();
    let (mut targets_sorted, mut mapped_sorted) = (targets.clone(), mapped.clone());
    targets_sorted.sort();
    mapped_sorted.sort();
    assert_eq!(
        targets_sorted, mapped_sorted,
        "release targets = installer targets"
    );
    assert!(install.contains("fibon-verify-$target.tar.gz"));
    assert!(release_text.contains("\"fibon-verify-$TARGET.tar.gz\""));

    // The repository's CI runs on Linux and macOS.
    let ci = yaml(&dir.join("ci.yml"));
    let os: Vec<&str> = ci["jobs"]["test"]["strategy"]["matrix"]["os"]
        .as_sequence()
        .unwrap()
        .iter()
        .filter_map(Value::as_str)
        .collect();
    assert_eq!(os, ["ubuntu-latest", "macos-latest"]);
}

/// A local runner for the action's composite steps: what GitHub does, minus the network.
struct Runner {
    temp: tempfile::TempDir,
    inputs: BTreeMap<String, String>,
}

struct Ran {
    /// The exit code of each step run, in order (stops at the first failure).
    codes: Vec<i32>,
    outputs: BTreeMap<String, String>,
    summary: String,
    /// stdout then stderr of every step (the runner reads workflow commands from both).
    log: String,
}

impl Runner {
    /// Inputs at the defaults embedded in action.yml, with `overrides`.
    fn new(overrides: &[(&str, &str)]) -> Runner {
        let temp = tempfile::tempdir().unwrap();
        let mut inputs = BTreeMap::new();
        for (name, input) in action()["inputs"].as_mapping().unwrap() {
            let default = str_of(input, "default").unwrap_or_default();
            inputs.insert(name.as_str().unwrap().to_string(), default.to_string());
        }
        // Reports go to a temp dir, not into the checkout.
        let report_dir = temp.path().join("fibon");
        inputs.insert(
            "report-dir".into(),
            report_dir.to_string_lossy().into_owned(),
        );
        for (k, v) in overrides {
            assert!(inputs.contains_key(*k), "unknown input `{k}`");
            inputs.insert(k.to_string(), v.to_string());
        }
        Runner { temp, inputs }
    }

    /// The same runner with one more input set (for values that name its temp dir).
    fn with(mut self, input: &str, value: &Path) -> Runner {
        assert!(self.inputs.contains_key(input), "unknown input `{input}`");
        let value = value.to_string_lossy().into_owned();
        self.inputs.insert(input.to_string(), value);
        self
    }

    fn file(&self, name: &str) -> PathBuf {
        self.temp.path().join(name)
    }

    fn expand(&self, value: &str) -> String {
        let mut out = value.to_string();
        for expr in expressions(value) {
            let replacement = match expr.strip_prefix("inputs.") {
                Some(input) => self.inputs[input].clone(),
                None if expr == "github.action_path" => root().to_string_lossy().into_owned(),
                None => panic!("no local value for `{expr}`"),
            };
            out = out.replacen(&format!("${{{{ {expr} }}}}"), &replacement, 1);
        }
        out
    }

    /// Every step, with the fibon-verify under test first on PATH (so `version: local`
    /// keeps it and the install step builds nothing).
    fn run(&self) -> Ran {
        let bin_dir = Path::new(env!("CARGO_BIN_EXE_fibon-verify"))
            .parent()
            .unwrap();
        let path = format!(
            "{}:{}",
            bin_dir.display(),
            std::env::var("PATH").unwrap_or_default()
        );
        self.run_steps(usize::MAX, &path, &[])
    }

    /// The first `count` steps with this PATH and extra environment.
    fn run_steps(&self, count: usize, path: &str, extra: &[(&str, String)]) -> Ran {
        for name in ["output", "summary", "path", "env"] {
            std::fs::write(self.file(name), "").unwrap();
        }
        let mut codes = Vec::new();
        let mut log = String::new();
        for step in steps(&action()).iter().take(count) {
            let script = str_of(step, "run").expect("a shell step");
            let mut cmd = Command::new("bash");
            cmd.args(["--noprofile", "--norc", "-eo", "pipefail", "-c", script])
                .current_dir(root())
                .env_clear()
                .env("PATH", path)
                .env("HOME", self.temp.path())
                .env("GITHUB_ACTIONS", "true")
                .env("GITHUB_WORKSPACE", root())
                .env("RUNNER_TEMP", self.temp.path())
                .env("GITHUB_OUTPUT", self.file("output"))
                .env("GITHUB_STEP_SUMMARY", self.file("summary"))
                .env("GITHUB_PATH", self.file("path"))
                .env("GITHUB_ENV", self.file("env"));
            for (k, v) in step["env"].as_mapping().into_iter().flatten() {
                cmd.env(k.as_str().unwrap(), self.expand(v.as_str().unwrap()));
            }
            cmd.envs(extra.iter().map(|(k, v)| (k, v)));
            let out: Output = cmd.output().unwrap();
            log.push_str(&String::from_utf8_lossy(&out.stdout));
            log.push_str(&String::from_utf8_lossy(&out.stderr));
            codes.push(code(&out));
            if !out.status.success() {
                break;
            }
        }
        let outputs = std::fs::read_to_string(self.file("output"))
            .unwrap()
            .lines()
            .filter_map(|l| l.split_once('='))
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        Ran {
            codes,
            outputs,
            summary: std::fs::read_to_string(self.file("summary")).unwrap(),
            log,
        }
    }
}

#[test]
fn action_runs_the_default_matrix_and_sets_outputs_and_summary() {
    let runner = Runner::new(&[]);
    let junit = runner.file("junit/fibon.xml");
    let runner = runner.with("junit-path", &junit);
    let ran = runner.run();
    assert_eq!(ran.codes, [0, 0], "{}", ran.log);
    assert!(ran.log.contains("is already installed"), "{}", ran.log);
    assert_eq!(ran.outputs["exit_code"], "0");
    let report = PathBuf::from(&ran.outputs["report"]);
    assert_eq!(report, runner.file("fibon/report.json"));
    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&report).unwrap()).unwrap();
    assert_eq!(report["summary"]["cells"], 31);
    assert!(
        ran.summary.starts_with("## ✅ fibon-verify: 31 cells"),
        "{}",
        ran.summary
    );
    let junit = std::fs::read_to_string(&junit).unwrap();
    assert!(junit.contains("<testsuites"), "{junit}");
}

#[test]
fn action_reports_silent_degradation_without_failing_when_fail_is_false() {
    let ran = Runner::new(&[("config", "fibon.naive.yaml"), ("fail", "false")]).run();
    assert_eq!(ran.codes, [0, 0], "{}", ran.log);
    assert_eq!(ran.outputs["exit_code"], "1");
    assert!(ran.summary.starts_with("## ❌ fibon-verify: 31 cells"));
    assert!(ran.summary.contains("silent_degradation"));
    // Annotations point at the contract: warnings, the shipped Skills are below high risk.
    assert!(
        ran.log
            .contains("::warning file=contracts/contract_review.yaml,line="),
        "{}",
        ran.log
    );
}

#[test]
fn action_fails_the_step_on_silent_degradation_by_default() {
    let ran = Runner::new(&[("config", "fibon.naive.yaml"), ("job-summary", "false")]).run();
    assert_eq!(ran.codes, [0, 1], "{}", ran.log);
    assert_eq!(ran.outputs["exit_code"], "1");
    assert_eq!(ran.summary, "", "job-summary: false writes no summary");
    assert!(
        ran.log
            .contains("::error title=fibon-verify::fibon-verify run exited 1")
    );
}

#[test]
fn action_rejects_an_unknown_command_and_passes_args_through() {
    let ran = Runner::new(&[("command", "deploy")]).run();
    assert_eq!(ran.codes, [0, 64], "{}", ran.log);

    // `check` with an extra argument: the args input is split on whitespace, unevaluated.
    let ran = Runner::new(&[("command", "check"), ("args", "--format json")]).run();
    assert_eq!(ran.codes, [0, 0], "{}", ran.log);
    assert_eq!(ran.outputs["exit_code"], "0");
    assert_eq!(ran.outputs["report"], "", "check writes no report");
    let runner = Runner::new(&[("command", "check")]);
    let canary = runner.file("pwned");
    let args = PathBuf::from(format!("$(touch {}) --nope", canary.display()));
    let ran = runner.with("args", &args).run();
    assert_eq!(ran.codes, [0, 64], "{}", ran.log);
    assert!(!canary.exists(), "the args input was evaluated by a shell");
}

#[test]
fn action_runs_the_merge_gate_workflow_shards_then_merge() {
    // What merge-gate.yml does: `run --shard K/N` per job, then `merge` of the reports.
    let shards = tempfile::tempdir().unwrap();
    let mut reports = Vec::new();
    for k in 1..=2 {
        let dir = shards.path().join(format!("shard-{k}"));
        let args = PathBuf::from(format!("--shard {k}/2"));
        let ran = Runner::new(&[("fail", "false"), ("job-summary", "false")])
            .with("report-dir", &dir)
            .with("args", &args)
            .run();
        assert_eq!(ran.codes, [0, 0], "{}", ran.log);
        assert_eq!(ran.outputs["exit_code"], "0");
        reports.push(ran.outputs["report"].clone());
    }
    let args = PathBuf::from(reports.join(" "));
    let ran = Runner::new(&[("command", "merge")])
        .with("args", &args)
        .run();
    assert_eq!(ran.codes, [0, 0], "{}", ran.log);
    assert_eq!(ran.outputs["exit_code"], "0");
    assert!(
        ran.summary.starts_with("## ✅ fibon-verify: 31 cells"),
        "{}",
        ran.summary
    );
}

#[test]
fn action_gates_on_new_failures_against_a_baseline_and_outputs_the_page() {
    // main's report, with its known failures, then the same matrix against it.
    let main = tempfile::tempdir().unwrap();
    let ran = Runner::new(&[
        ("config", "fibon.naive.yaml"),
        ("fail", "false"),
        ("job-summary", "false"),
    ])
    .with("report-dir", main.path())
    .run();
    assert_eq!(ran.outputs["exit_code"], "1", "{}", ran.log);
    assert_eq!(
        PathBuf::from(&ran.outputs["html"]),
        main.path().join("report.html")
    );
    let baseline = main.path().join("report.json");
    let runner = Runner::new(&[("config", "fibon.naive.yaml"), ("fail-on", "new")])
        .with("baseline", &baseline);
    let ran = runner.run();
    assert_eq!(ran.codes, [0, 0], "{}", ran.log);
    assert_eq!(ran.outputs["exit_code"], "0");
    assert!(
        ran.summary.contains("**Against the baseline**"),
        "{}",
        ran.summary
    );
    assert!(std::path::Path::new(&ran.outputs["html"]).exists());
    // A baseline that is not there is an error, not a run without one.
    let ran = Runner::new(&[("config", "fibon.naive.yaml"), ("fail-on", "new")])
        .with("baseline", &main.path().join("missing.json"))
        .run();
    assert_eq!(ran.codes, [0, 64], "{}", ran.log);
}

#[test]
fn action_runs_the_nightly_sampling_workflow_shards_and_merge() {
    // Each `sample` shard of nightly-sampling.yml with its own inputs (run number 1), then
    // the merge job's step over their reports: the whole sample, as one unsharded run.
    let workflow = yaml(&root().join(".github/workflows/nightly-sampling.yml"));
    let action_step = |job: &str| {
        workflow["jobs"][job]["steps"]
            .as_sequence()
            .unwrap()
            .iter()
            .find(|s| str_of(s, "uses") == Some("./"))
            .expect("the step that uses the action")
            .clone()
    };
    let sample = action_step("sample");
    let with = &sample["with"];
    let shards: Vec<u64> = workflow["jobs"]["sample"]["strategy"]["matrix"]["shard"]
        .as_sequence()
        .unwrap()
        .iter()
        .map(|k| k.as_u64().unwrap())
        .collect();
    let args = str_of(with, "args")
        .unwrap()
        .replace("${{ github.run_number }}", "1");
    assert!(
        args.contains(&format!("/{}", shards.len())),
        "`--shard K/N` names as many shards as the matrix has: {args}"
    );
    let mut reports = Vec::new();
    let mut runners = Vec::new();
    for k in &shards {
        let runner = Runner::new(&[
            ("command", str_of(with, "command").unwrap()),
            ("fail", str_of(with, "fail").unwrap()),
            ("args", &args.replace("${{ matrix.shard }}", &k.to_string())),
        ]);
        let ran = runner.run();
        assert_eq!(ran.codes, [0, 0], "{}", ran.log);
        reports.push(ran.outputs["report"].clone());
        runners.push(runner);
    }
    let merge = action_step("merge");
    let merge_args = str_of(&merge["with"], "args")
        .unwrap()
        .replace("${{ steps.shards.outputs.reports }}", &reports.join(" "));
    // Each runner keeps its temporary folder, and the report in it, while it lives.
    let merger = Runner::new(&[
        ("command", str_of(&merge["with"], "command").unwrap()),
        ("fail", str_of(&merge["with"], "fail").unwrap()),
        ("args", &merge_args),
    ]);
    let ran = merger.run();
    assert_eq!(ran.codes, [0, 0], "{}", ran.log);
    assert_eq!(ran.outputs["exit_code"], "0", "{}", ran.log);
    let read = |path: &str| -> serde_json::Value {
        serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
    };
    let merged = read(&ran.outputs["report"]);
    let unsharded = Runner::new(&[
        ("command", "sample"),
        ("args", args.split(" --shard").next().unwrap()),
    ]);
    let whole = read(&unsharded.run().outputs["report"]);
    assert_eq!(merged["sampling"]["skills"], whole["sampling"]["skills"]);
    let sampled: u64 = merged["sampling"]["skills"]
        .as_object()
        .expect("per-skill sampling stats")
        .values()
        .map(|s| s["sampled"].as_u64().unwrap())
        .sum();
    assert!(
        sampled > 0,
        "the seeded 10% picks some conversations: {merged}"
    );
}

/// PATH without the fibon-verify under test (nor any other installed one).
/// `PATH` with no `fibon-verify` on it, everything else kept: a folder that holds one
/// (`~/.cargo/bin` after `cargo install`, which holds `cargo` too) is replaced by a folder
/// of links to its other programs, made under `scratch`.
fn path_without_fibon(scratch: &Path) -> String {
    without_fibon(&std::env::var("PATH").unwrap_or_default(), scratch)
}

fn without_fibon(path: &str, scratch: &Path) -> String {
    path.split(':')
        .enumerate()
        .map(|(i, dir)| {
            if !Path::new(dir).join("fibon-verify").exists() {
                return dir.to_string();
            }
            let shim = scratch.join(format!("path-{i}"));
            std::fs::create_dir_all(&shim).unwrap();
            for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
                if entry.file_name() != "fibon-verify" {
                    let _ = std::os::unix::fs::symlink(entry.path(), shim.join(entry.file_name()));
                }
            }
            shim.to_string_lossy().into_owned()
        })
        .collect::<Vec<_>>()
        .join(":")
}

#[test]
fn a_path_without_fibon_keeps_the_other_programs_of_its_folders() {
    let bin = tempfile::tempdir().unwrap();
    for name in ["fibon-verify", "cargo"] {
        std::fs::write(bin.path().join(name), "").unwrap();
    }
    let scratch = tempfile::tempdir().unwrap();
    let path = without_fibon(
        &format!("{}:/usr/bin", bin.path().display()),
        scratch.path(),
    );
    let dirs: Vec<&str> = path.split(':').collect();
    assert!(Path::new(dirs[0]).join("cargo").exists(), "{path}");
    assert!(!Path::new(dirs[0]).join("fibon-verify").exists(), "{path}");
    assert_eq!(dirs[1], "/usr/bin");
}

#[tokio::test(flavor = "multi_thread")]
async fn install_step_downloads_the_release_binary_for_the_runner() {
    use wiremock::matchers::{method, path};
    use wiremock::{Mock, MockServer, ResponseTemplate};

    // A release asset as the release workflow would publish it: the binary in a tar.gz.
    let assets = tempfile::tempdir().unwrap();
    std::fs::copy(
        env!("CARGO_BIN_EXE_fibon-verify"),
        assets.path().join("fibon-verify"),
    )
    .unwrap();
    let tar = Command::new("tar")
        .args(["-czf", "asset.tar.gz", "fibon-verify"])
        .current_dir(assets.path())
        .status()
        .unwrap();
    assert!(tar.success());
    let asset = std::fs::read(assets.path().join("asset.tar.gz")).unwrap();

    let server = MockServer::start().await;
    Mock::given(method("GET"))
        .and(path(
            "/acme/fibon-verify/releases/download/v9.9.9/fibon-verify-aarch64-unknown-linux-gnu.tar.gz",
        ))
        .respond_with(ResponseTemplate::new(200).set_body_bytes(asset))
        .expect(1)
        .mount(&server)
        .await;

    let runner = Runner::new(&[("version", "v9.9.9")]);
    let extra = [
        ("GITHUB_SERVER_URL", server.uri()),
        ("FIBON_VERIFY_REPOSITORY", "acme/fibon-verify".to_string()),
        ("RUNNER_OS", "Linux".to_string()),
        ("RUNNER_ARCH", "ARM64".to_string()),
    ];
    let ran = tokio::task::block_in_place(|| {
        runner.run_steps(1, &path_without_fibon(&runner.file("no-fibon")), &extra)
    });
    assert_eq!(ran.codes, [0], "{}", ran.log);
    // The binary's directory is on GITHUB_PATH for the next steps, and it runs.
    let added = std::fs::read_to_string(runner.file("path")).unwrap();
    let installed = Path::new(added.trim()).join("fibon-verify");
    assert!(installed.starts_with(runner.temp.path()), "{added}");
    let version = Command::new(&installed).arg("--version").output().unwrap();
    assert!(String::from_utf8_lossy(&version.stdout).starts_with("fibon-verify "));
}

#[tokio::test(flavor = "multi_thread")]
async fn install_step_fails_loudly_when_neither_a_release_nor_a_build_is_possible() {
    // No release asset (404) and no git repository to build from: the step fails; the
    // action never goes on with some other fibon-verify.
    let server = wiremock::MockServer::start().await;
    let runner = Runner::new(&[("version", "v9.9.9")]);
    let extra = [
        ("GITHUB_SERVER_URL", server.uri()),
        ("FIBON_VERIFY_REPOSITORY", "acme/fibon-verify".to_string()),
        ("RUNNER_OS", "Linux".to_string()),
        ("RUNNER_ARCH", "X64".to_string()),
        ("CARGO_NET_RETRY", "0".to_string()),
        (
            "CARGO_HOME",
            runner.file("cargo-home").to_string_lossy().into_owned(),
        ),
    ];
    // HOME is the runner's temp dir: rustup's toolchains are where they really are.
    let home = std::env::var("HOME").unwrap_or_default();
    let rustup_home = std::env::var("RUSTUP_HOME").unwrap_or(format!("{home}/.rustup"));
    let mut extra = extra.to_vec();
    extra.push(("RUSTUP_HOME", rustup_home));
    if let Ok(toolchain) = std::env::var("RUSTUP_TOOLCHAIN") {
        extra.push(("RUSTUP_TOOLCHAIN", toolchain));
    }
    let ran = tokio::task::block_in_place(|| {
        runner.run_steps(1, &path_without_fibon(&runner.file("no-fibon")), &extra)
    });
    assert_ne!(ran.codes, [0], "{}", ran.log);
    assert!(
        ran.log.contains("404"),
        "cargo tried the repository: {}",
        ran.log
    );
    assert!(
        ran.log.contains("no prebuilt binary for v9.9.9"),
        "{}",
        ran.log
    );
    assert_eq!(std::fs::read_to_string(runner.file("path")).unwrap(), "");
}
