//! The one place the report model is redacted (crate::secrets): each cell as it enters
//! the sinks, and what surrounds the cells, before report.json, JUnit, the table, the job
//! summary or an annotation is made of them — so every projection, whatever it escapes,
//! is made of redacted text.

use std::borrow::Cow;

use serde::Serialize;
use serde::de::DeserializeOwned;

use super::{CellReport, Report};
use crate::secrets::Redactor;

/// `c` with every string in it redacted (the cell itself when there is nothing to).
pub(super) fn cell<'a>(redactor: &Redactor, c: &'a CellReport) -> Cow<'a, CellReport> {
    match redacted(redactor, c) {
        Some(Ok(r)) => Cow::Owned(r),
        Some(Err(())) => Cow::Owned(withheld(redactor, c)),
        None => Cow::Borrowed(c),
    }
}

/// Everything of `report` but its cells, redacted.
pub(super) fn header(redactor: &Redactor, report: &Report) -> Report {
    let header = report.header();
    match redacted(redactor, &header) {
        Some(Ok(r)) => r,
        // A secret that is a fixed word of the header: keep the counts, drop the rest.
        Some(Err(())) => Report {
            shard: None,
            merged_from: None,
            quality_budget: None,
            sampling: None,
            intervention: None,
            baseline: None,
            ..header
        },
        None => header,
    }
}

/// Through its JSON form, so that every string of every field (present and future) is
/// seen: `None` when nothing changed, `Err` when the redacted form no longer reads back
/// (a secret that is a fixed word, such as a verdict's name).
fn redacted<T: Serialize + DeserializeOwned>(
    redactor: &Redactor,
    value: &T,
) -> Option<Result<T, ()>> {
    if redactor.is_empty() {
        return None;
    }
    let mut json = serde_json::to_value(value).ok()?;
    redactor
        .redact_value(&mut json)
        .then(|| serde_json::from_value(json).map_err(|_| ()))
}

/// A cell whose redacted form does not read back: its outcome kept, its texts redacted
/// one by one, and what the agent said and did withheld.
fn withheld(redactor: &Redactor, c: &CellReport) -> CellReport {
    let text = |s: &str| redactor.redact(s).into_owned();
    let mut out = CellReport::new(
        text(&c.id),
        text(&c.skill),
        c.behavior,
        c.verdict,
        c.findings
            .iter()
            .map(|f| {
                let mut f = f.clone();
                f.message = text(&f.message);
                redactor.redact_value(&mut f.evidence);
                f
            })
            .collect(),
    )
    .at(c.index)
    .of_contract(text(&c.contract), c.contract_line)
    .with_attempts(c.attempts);
    out.scenario = text(&c.scenario);
    out.quadrant = c.quadrant;
    out.fault = c.fault.as_deref().map(text);
    out.removed_tools = c.removed_tools.iter().map(|t| text(t)).collect();
    out.duration_ms = c.duration_ms;
    out.risk_level = c.risk_level;
    out.output = serde_json::Value::String(
        "[withheld: it held a secret where the report has a fixed word]".into(),
    );
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::vocab::{Behavior, CheckId, Finding, Verdict};

    #[test]
    fn a_cell_is_redacted_in_every_field_and_reads_back() {
        let r = Redactor::new(&[("KEY".into(), "sk-canary-0123456789abcdef".into())]);
        let c = CellReport::new(
            "id".into(),
            "s".into(),
            Behavior::Answered,
            Verdict::Error,
            vec![Finding::error(
                CheckId::TargetUnavailable,
                "HTTP 401: bad key Bearer sk-canary-0123456789abcdef",
            )],
        )
        .with_output(serde_json::json!({"answer": "sk-canary-0123456789abcdef"}))
        // A stderr tail that begins inside the key.
        .with_stderr("0123456789abcdef was refused\n".into());
        let out = cell(&r, &c);
        let json = serde_json::to_string(&*out).unwrap();
        assert!(!json.contains("0123456789abcdef"), "{json}");
        assert_eq!(
            out.findings[0].message,
            "HTTP 401: bad key Bearer [redacted:KEY]"
        );
        assert_eq!(out.verdict, Verdict::Error);
        assert!(matches!(cell(&Redactor::default(), &c), Cow::Borrowed(_)));
    }

    #[test]
    fn a_secret_that_is_a_fixed_word_withholds_the_cell_but_keeps_its_outcome() {
        let r = Redactor::new(&[("KEY".into(), "degradation".into())]);
        let c = CellReport::new(
            "id".into(),
            "s".into(),
            Behavior::Silent,
            Verdict::SilentDegradation,
            vec![Finding::error(
                CheckId::SilentDegradation,
                "degradation said",
            )],
        )
        .with_output(serde_json::json!("degradation"));
        let out = cell(&r, &c);
        assert_eq!(out.verdict, Verdict::SilentDegradation);
        assert_eq!(out.findings[0].message, "[redacted:KEY] said");
        assert!(
            !serde_json::to_string(&out.output)
                .unwrap()
                .contains("degradation")
        );
    }
}
