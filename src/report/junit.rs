//! `junit.xml`: one testsuite per skill, one testcase per cell; failures carry their
//! findings. Also the XML escaping of the JUnit written by hand (`merge`, and `audit` as it
//! streams): whatever a recording or an agent put in an id or a message, the file stays
//! well-formed XML 1.0.

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
                s.set_message(xml_text(&format!("{}: {first}", v.as_str())));
                let details: Vec<String> = c
                    .findings
                    .iter()
                    .map(|f| format!("[{}] {}", f.check, f.message))
                    .collect();
                s.set_description(xml_text(&details.join("\n")));
                s
            }
        };
        let mut case = TestCase::new(xml_text(&c.id), status);
        case.set_classname(xml_text(&format!("{}.{}", c.skill, c.quadrant)));
        case.set_time(Duration::from_millis(c.duration_ms));
        if !c.stderr.is_empty() {
            case.set_system_err(xml_text(&c.stderr));
        }
        suites
            .entry(&c.skill)
            .or_insert_with(|| TestSuite::new(xml_text(&c.skill)))
            .add_test_case(case);
    }
    junit.add_test_suites(suites.into_values());
    junit.set_time(Duration::from_millis(report.duration_ms));
    junit.to_string().unwrap_or_default()
}

/// Whether XML 1.0 allows `c` at all (its `Char` production): not the control characters
/// other than tab, newline and carriage return, nor U+FFFE and U+FFFF.
fn xml_char(c: char) -> bool {
    matches!(c, '\t' | '\n' | '\r' | '\u{20}'..='\u{D7FF}' | '\u{E000}'..='\u{FFFD}' | '\u{10000}'..)
}

/// `s` without the characters XML 1.0 does not allow. No character reference can carry
/// them either, so they are left out (quick-junit does the same with control characters,
/// but keeps U+FFFE and U+FFFF); report.json keeps them.
pub fn xml_text(s: &str) -> String {
    s.chars().filter(|c| xml_char(*c)).collect()
}

/// `s` for XML 1.0 text or a double-quoted attribute: `&`, `<`, `>` and `"` as entities,
/// the characters XML does not allow left out (see [`xml_text`]).
pub fn xml_escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            c if xml_char(c) => out.push(c),
            _ => {}
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_markup_and_leaves_out_what_xml_does_not_allow() {
        assert_eq!(
            xml_escape("a\u{1}<&>\"\u{0}\u{b}\u{ffff}\u{fffe}\tz\u{1F600}"),
            "a&lt;&amp;&gt;&quot;\tz\u{1F600}"
        );
        assert_eq!(xml_text("x\u{1b}[1m\u{ffff}<"), "x[1m<");
    }
}
