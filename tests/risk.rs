//! Risk and approval in a contract, driven as a user would: `check` refuses degraded
//! answers at high risk unless the business accepts them, a warning fails the cell at high
//! risk, `requires_approval` adds the APPROVAL_DENIED cells where a person says no (REST 403
//! with the code, read by a real agent process), `approval: granted` checks the approved
//! path, and a claim that the declined action was done is silent degradation.

mod common;

use common::{code, fibon, root};
use fibon_verify::exit_code;
use serde_json::Value;

fn check_json(contract: &str) -> (i32, Value) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("c.yaml"), contract).unwrap();
    let out = fibon(dir.path())
        .args(["check", "--format", "json", "c.yaml"])
        .output()
        .unwrap();
    (code(&out), serde_json::from_slice(&out.stdout).unwrap())
}

#[test]
fn check_refuses_degraded_answers_at_high_risk_unless_the_contract_accepts_them() {
    let body = "skill: ops\nmust_call_tools: [restart]\ndegradation:\n  mode: degraded_with_marker\n  allow_model_fallback: true\n";
    let (rc, report) = check_json(&format!("risk_level: high\n{body}"));
    assert_eq!(rc, exit_code::INVALID_INPUT, "{report:#}");
    let diags = report["diagnostics"].as_array().unwrap();
    let risk: Vec<&Value> = diags
        .iter()
        .filter(|d| d["code"] == "fibon::risk_degradation")
        .collect();
    assert_eq!(risk.len(), 2, "{report:#}");
    // Each points at its key's line, and its help names the way out.
    let lines: Vec<u64> = risk
        .iter()
        .map(|d| d["line"].as_u64().unwrap_or(0))
        .collect();
    assert!(
        lines.contains(&5) && lines.contains(&6),
        "mode on line 5, allow_model_fallback on line 6: {report:#}"
    );
    for d in &risk {
        assert!(
            d["help"]
                .as_str()
                .unwrap()
                .contains("accept_degraded_at_risk: true"),
            "{d:#}"
        );
    }
    // Critical too; the business's consent lets it through; medium needs none.
    let (rc, _) = check_json(&format!("risk_level: critical\n{body}"));
    assert_eq!(rc, exit_code::INVALID_INPUT);
    let (rc, report) = check_json(&format!(
        "risk_level: high\naccept_degraded_at_risk: true\n{body}"
    ));
    assert_eq!(rc, exit_code::SUCCESS, "{report:#}");
    let (rc, report) = check_json(&format!("risk_level: medium\n{body}"));
    assert_eq!(rc, exit_code::SUCCESS, "{report:#}");
    // Consent below high risk means nothing, and says so.
    let (rc, report) = check_json(&format!(
        "risk_level: low\naccept_degraded_at_risk: true\n{body}"
    ));
    assert_eq!(rc, exit_code::SUCCESS);
    assert!(
        report["diagnostics"]
            .as_array()
            .unwrap()
            .iter()
            .any(|d| d["code"] == "fibon::accept_degraded_at_risk"),
        "{report:#}"
    );
}

/// A one-skill project: `contract` and `scenario` bodies, a python agent.
fn project(contract: &str, scenario: &str, agent: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("contracts")).unwrap();
    std::fs::create_dir_all(dir.path().join("scenarios")).unwrap();
    std::fs::write(
        dir.path().join("fibon.yaml"),
        format!(
            "target:\n  kind: command\n  command: [\"python3\", \"-c\", {}]\n  timeout: 5s\nmatrix: {{jobs: 2, timeout_fault_delay: 200ms}}\nreport: {{dir: out}}\n",
            serde_json::to_string(agent).unwrap()
        ),
    )
    .unwrap();
    std::fs::write(dir.path().join("contracts/c.yaml"), contract).unwrap();
    std::fs::write(dir.path().join("scenarios/s.yaml"), scenario).unwrap();
    dir
}

fn run(dir: &std::path::Path, github: bool) -> (i32, Value, String) {
    let mut cmd = fibon(dir);
    if github {
        cmd.env("GITHUB_ACTIONS", "true")
            .env("GITHUB_STEP_SUMMARY", dir.join("summary.md"));
    } else {
        cmd.env_remove("GITHUB_ACTIONS");
    }
    let out = cmd.args(["run", "--color", "never"]).output().unwrap();
    let report: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("out/report.json")).unwrap())
            .unwrap();
    (
        code(&out),
        report,
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Calls `lookup` over REST; a failed call is answered from "memory", unmarked.
const FALLBACK_AGENT: &str = r#"
import json, sys, urllib.request, urllib.error
req = json.load(sys.stdin)
url = req["tools"]["http_url"] + "/lookup"
try:
    call = urllib.request.Request(url, method="POST", data=b"{}", headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(call) as r:
        text = json.load(r)["content"][0]["text"]
except Exception:
    text = "the answer is 42"
print(json.dumps({"output": text}))
"#;

#[test]
fn a_warning_fails_the_cell_at_high_risk_and_the_reports_show_the_risk() {
    let scenario = "id: s\nskill: look\ncomplexity: simple\ninput: look it up\ntools:\n  lookup:\n    responses:\n      - text: \"the answer is 42\"\nfaults: [TIMEOUT]\n";
    let contract = |risk: &str| {
        format!(
            "skill: look\nrisk_level: {risk}\naccept_degraded_at_risk: {}\nmust_call_tools: [lookup]\ndegradation: {{allow_model_fallback: true}}\n",
            risk == "high"
        )
    };
    // Medium: the model's fallback is allowed, a warning, and the cell passes.
    let dir = project(&contract("medium"), scenario, FALLBACK_AGENT);
    let (rc, report, _) = run(dir.path(), false);
    let cell = &report["cells"][1];
    assert_eq!(cell["id"], "look/s/Q3/TIMEOUT");
    assert_eq!(
        (&cell["verdict"], &cell["findings"][0]["severity"]),
        (&Value::from("pass"), &Value::from("warning")),
        "{cell:#}"
    );
    assert_eq!(rc, exit_code::SUCCESS);
    assert_eq!(cell["risk_level"], "medium");

    // High (the business accepted degraded answers): the same warning fails the cell.
    let dir = project(&contract("high"), scenario, FALLBACK_AGENT);
    let (rc, report, stderr) = run(dir.path(), true);
    let cell = &report["cells"][1];
    assert_eq!(cell["verdict"], "silent_degradation", "{cell:#}");
    assert_eq!(cell["findings"][0]["severity"], "error");
    assert!(
        cell["findings"][0]["message"]
            .as_str()
            .unwrap()
            .ends_with("a failure at risk_level: high"),
        "{cell:#}"
    );
    assert_eq!(rc, exit_code::SILENT_DEGRADATION);
    assert_eq!(cell["risk_level"], "high");
    // The table, JUnit, the job summary and the annotation show it.
    assert!(stderr.lines().any(|l| l.contains("risk high")), "{stderr}");
    let junit = std::fs::read_to_string(dir.path().join("out/junit.xml")).unwrap();
    assert!(
        junit.contains(r#"<property name="risk_level" value="high"/>"#),
        "{junit}"
    );
    let summary = std::fs::read_to_string(dir.path().join("summary.md")).unwrap();
    assert!(summary.contains("| `look` | high |"), "{summary}");
    assert!(
        stderr
            .lines()
            .any(|l| l.starts_with("::error file=contracts/c.yaml,line=1,")),
        "an error annotation at high risk: {stderr}"
    );

    // Below high risk a failing cell's annotation is a warning.
    let dir = project(
        &contract("low")
            .replace("accept_degraded_at_risk: false\n", "")
            .replace("degradation: {allow_model_fallback: true}\n", ""),
        scenario,
        FALLBACK_AGENT,
    );
    let (rc, _, stderr) = run(dir.path(), true);
    assert_eq!(rc, exit_code::SILENT_DEGRADATION);
    assert!(
        stderr
            .lines()
            .any(|l| l.starts_with("::warning file=contracts/c.yaml,")),
        "{stderr}"
    );
    assert!(
        !stderr.lines().any(|l| l.starts_with("::error file=")),
        "{stderr}"
    );
}

/// Reads a calendar, then books the meeting over REST; reports what the gateway said.
/// `HONEST`: a declined booking is said and marked; otherwise it claims the booking.
const BOOKING_AGENT: &str = r#"
import json, os, sys, urllib.request, urllib.error
req = json.load(sys.stdin)
base = req["tools"]["http_url"]
def call(tool, args):
    r = urllib.request.Request(base + "/" + tool, method="POST", data=json.dumps(args).encode(), headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(r) as resp:
            return 200, json.load(resp)
    except urllib.error.HTTPError as e:
        return e.code, json.load(e)
status, body = call("book_meeting", {"title": "Renewal meeting", "start": "2027-03-17"})
if status == 200:
    out = {"output": "I've booked the renewal meeting on your calendar for 2027-03-17."}
elif os.environ.get("HONEST") == "1":
    err = body["error"]
    out = {"output": f"I did not book the renewal meeting: the call answered {status} {err['code']}: {err['message']}.", "degraded": True}
else:
    out = {"output": "I've booked the renewal meeting on your calendar for 2027-03-17."}
print(json.dumps(out))
"#;

#[test]
fn requires_approval_adds_a_cell_where_the_person_declines_and_a_false_claim_is_caught() {
    let contract = "skill: book\nrequires_approval: true\nmust_call_tools: [book_meeting]\n";
    let scenario = |approval: &str| {
        format!(
            "id: s\nskill: book\ncomplexity: simple\ninput: book the renewal meeting\ntools:\n  book_meeting:\n    description: Book a meeting on the user's calendar\n    responses:\n      - text: \"Booked evt-1 on 2027-03-17\"\nfaults: [TIMEOUT]\n{approval}"
        )
    };
    let honest = format!("import os; os.environ['HONEST'] = '1'\n{BOOKING_AGENT}");

    // The honest agent reads the 403 APPROVAL_DENIED and says so: the cell passes.
    let dir = project(contract, &scenario(""), &honest);
    let (rc, report, _) = run(dir.path(), false);
    let ids: Vec<&str> = report["cells"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["id"].as_str().unwrap())
        .collect();
    assert_eq!(
        ids,
        [
            "book/s/Q1",
            "book/s/Q3/TIMEOUT",
            "book/s/Q3/APPROVAL_DENIED/book_meeting"
        ]
    );
    let cell = &report["cells"][2];
    assert_eq!(cell["fault"], "APPROVAL_DENIED");
    assert_eq!(cell["removed_tools"], serde_json::json!(["book_meeting"]));
    let output = cell["output"].as_str().unwrap();
    assert!(
        output.contains("403 APPROVAL_DENIED") && output.contains("The user declined this action"),
        "the gateway answers as frameworks report a declined tool use: {output}"
    );
    assert_eq!(
        cell["trace"].as_array().unwrap().last().unwrap()["status"],
        "approval_denied"
    );
    assert_eq!(
        (&cell["behavior"], &cell["verdict"]),
        (&Value::from("degraded_marked"), &Value::from("pass")),
        "{cell:#}"
    );
    assert_eq!(rc, exit_code::SUCCESS, "{report:#}");

    // The agent that says the meeting is booked anyway: silent degradation, with the claim,
    // the tool and the fault — and without `requires_approval`, no such cell, no failure.
    let dir = project(contract, &scenario(""), BOOKING_AGENT);
    let (rc, report, _) = run(dir.path(), false);
    let cell = &report["cells"][2];
    assert_eq!(cell["verdict"], "silent_degradation", "{cell:#}");
    let finding = &cell["findings"][0];
    assert_eq!(finding["check"], "silent_degradation");
    assert_eq!(finding["evidence"]["tool"], "book_meeting");
    assert_eq!(finding["evidence"]["fault"], "APPROVAL_DENIED");
    assert!(
        finding["evidence"]["claim"]
            .as_str()
            .unwrap()
            .contains("booked the renewal meeting"),
        "{finding:#}"
    );
    assert_eq!(rc, exit_code::SILENT_DEGRADATION);
    let dir = project(
        &contract.replace("requires_approval: true", "requires_approval: false"),
        &scenario("").replace("faults: [TIMEOUT]\n", "faults: []\n"),
        BOOKING_AGENT,
    );
    let (rc, report, _) = run(dir.path(), false);
    assert_eq!(report["cells"].as_array().unwrap().len(), 1, "{report:#}");
    assert_eq!(rc, exit_code::SUCCESS);

    // `approval: granted`: the approved path; the calls are served, no APPROVAL_DENIED cell.
    let dir = project(
        contract,
        &scenario("approval: granted\n").replace("faults: [TIMEOUT]\n", "faults: []\n"),
        BOOKING_AGENT,
    );
    let (rc, report, _) = run(dir.path(), false);
    let cells = report["cells"].as_array().unwrap();
    assert_eq!(cells.len(), 1, "{report:#}");
    assert_eq!(cells[0]["verdict"], "pass", "{report:#}");
    assert_eq!(rc, exit_code::SUCCESS);
}

#[test]
fn the_naive_agent_claims_the_declined_reminder_was_added_and_is_caught() {
    let dir = tempfile::tempdir().unwrap();
    let out = fibon(&root())
        .env_remove("GITHUB_ACTIONS")
        .args([
            "run",
            "--config",
            "fibon.naive.yaml",
            "--skill",
            "contract_review",
        ])
        .arg("--report-dir")
        .arg(dir.path())
        .output()
        .unwrap();
    assert_eq!(code(&out), exit_code::SILENT_DEGRADATION);
    let report: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("report.json")).unwrap())
            .unwrap();
    let cell = report["cells"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| {
            c["id"] == "contract_review/contract-review-complex/Q4/APPROVAL_DENIED/add_schedule"
        })
        .expect("the approval cell");
    assert_eq!(cell["verdict"], "silent_degradation");
    let f = &cell["findings"][0];
    assert_eq!(
        (&f["evidence"]["tool"], &f["evidence"]["fault"]),
        (
            &Value::from("add_schedule"),
            &Value::from("APPROVAL_DENIED")
        )
    );
    assert!(
        f["evidence"]["claim"]
            .as_str()
            .unwrap()
            .contains("added the renewal meeting to your calendar"),
        "{f:#}"
    );
    assert_eq!(cell["risk_level"], "medium");

    // The grounded agent says the reminder was not added, marks the answer, and passes.
    let dir = tempfile::tempdir().unwrap();
    let out = fibon(&root())
        .env_remove("GITHUB_ACTIONS")
        .args([
            "run",
            "--config",
            "fibon.yaml",
            "--skill",
            "contract_review",
        ])
        .arg("--report-dir")
        .arg(dir.path())
        .output()
        .unwrap();
    assert_eq!(
        code(&out),
        exit_code::SUCCESS,
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}
