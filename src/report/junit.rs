//! `junit.xml`: one testsuite per skill, one testcase per cell; failures carry their
//! findings.

use std::collections::BTreeMap;
use std::time::Duration;

use quick_junit::{NonSuccessKind, TestCase, TestCaseStatus, TestSuite};

use super::{Report, Verdict};

/// Renders the JUnit XML.
pub fn render(report: &Report) -> String {
    let mut junit = quick_junit::Report::new("fibon-verify");
    let mut suites: BTreeMap<&str, TestSuite> = BTreeMap::new();
    for c in &report.cells {
        let status = match c.verdict {
            Verdict::Pass => TestCaseStatus::success(),
            Verdict::Skipped => TestCaseStatus::skipped(),
            v => {
                let kind = if v == Verdict::Error {
                    NonSuccessKind::Error
                } else {
                    NonSuccessKind::Failure
                };
                let mut s = TestCaseStatus::non_success(kind);
                let first = c
                    .findings
                    .first()
                    .map(|f| f.message.clone())
                    .unwrap_or_default();
                s.set_type(v.as_str());
                s.set_message(format!("{}: {first}", v.as_str()));
                let details: Vec<String> = c
                    .findings
                    .iter()
                    .map(|f| format!("[{}] {}", f.check, f.message))
                    .collect();
                s.set_description(details.join("\n"));
                s
            }
        };
        let mut case = TestCase::new(c.id.clone(), status);
        case.set_classname(format!("{}.{}", c.skill, c.quadrant));
        case.set_time(Duration::from_millis(c.duration_ms));
        if !c.stderr.is_empty() {
            case.set_system_err_lossy(c.stderr.as_bytes());
        }
        suites
            .entry(&c.skill)
            .or_insert_with(|| TestSuite::new(c.skill.clone()))
            .add_test_case(case);
    }
    junit.add_test_suites(suites.into_values());
    junit.set_time(Duration::from_millis(report.duration_ms));
    junit.to_string().unwrap_or_default()
}
