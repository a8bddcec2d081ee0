//! Under GitHub Actions: a Markdown job summary (appended to `$GITHUB_STEP_SUMMARY`) and
//! `::error` annotations that point at the contract of each failing cell.

use super::tally::Tally;
use super::{Report, Verdict};

/// The Markdown summary of `report` (its counts, exit code and flags; not its cells) over
/// the tallied cells; `noun` names the cells report.json has beyond those shown.
pub fn summary_markdown(report: &Report, tally: &Tally, noun: &str) -> String {
    let s = &report.summary;
    let icon = if report.exit_code == 0 { "✅" } else { "❌" };
    let from = report
        .merged_from
        .as_ref()
        .map(|shards| format!(" from {} shard(s)", shards.len()))
        .unwrap_or_default();
    let mut md = format!("## {icon} fibon-verify: {} cells{from}\n\n", s.cells);
    md.push_str(&baseline_markdown(report));
    md.push_str("| pass | silent degradation | contract violation | quality fail | error | skipped |\n|---|---|---|---|---|---|\n");
    md.push_str(&format!(
        "| {} | {} | {} | {} | {} | {} |\n",
        s.pass, s.silent_degradation, s.contract_violation, s.quality_fail, s.error, s.skipped
    ));
    if !tally.risks.is_empty() {
        md.push_str("\n| skill | risk |\n|---|---|\n");
        for (skill, risk) in &tally.risks {
            md.push_str(&format!("| `{skill}` | {risk} |\n"));
        }
    }
    if !tally.shown.is_empty() {
        md.push_str("\n| cell | verdict | finding |\n|---|---|---|\n");
        for c in &tally.shown {
            let f = c
                .first
                .as_ref()
                .map(|(check, message)| format!("`{check}` {}", message.replace('|', "\\|")))
                .unwrap_or_default();
            md.push_str(&format!("| `{}` | {} | {f} |\n", c.id, c.verdict.as_str()));
        }
    }
    if tally.omitted > 0 {
        md.push_str(&format!(
            "\n_{} more failing {noun} in report.json._\n",
            tally.omitted
        ));
    }
    if let Some(i) = &report.intervention {
        md.push_str(&format!("\n{}\n", i.line()));
    }
    if report.interrupted {
        md.push_str("\n_The run was interrupted; these are the cells that finished._\n");
    }
    md
}

/// What this pull request changed, first: the count of each change against the
/// baseline, and the cells that are failing anew or fixed (up to a cap).
fn baseline_markdown(report: &Report) -> String {
    use super::baseline::{Change, FailOn};
    const SHOWN: usize = 50;
    let Some(b) = &report.baseline else {
        return String::new();
    };
    let mut md = format!(
        "**Against the baseline** `{}`{}:\n\n| change | cells |\n|---|---|\n",
        b.report,
        if b.fail_on == FailOn::New {
            " (`--fail-on new`: known failures do not fail the job; errors do)"
        } else {
            ""
        }
    );
    for c in Change::ALL {
        md.push_str(&format!("| {} | {} |\n", c.as_str(), b.count(c)));
    }
    let listed: Vec<_> = b
        .cells
        .iter()
        .filter(|e| !matches!(e.change, Change::StillFailing | Change::Unchanged))
        .filter(|e| e.change != Change::NewCell || e.now.is_some_and(|v| v != Verdict::Pass))
        .collect();
    if !listed.is_empty() {
        md.push_str("\n| cell | change | was | now |\n|---|---|---|---|\n");
        for e in listed.iter().take(SHOWN) {
            md.push_str(&format!(
                "| `{}` | **{}**{} | {} | {} |\n",
                e.id,
                e.change.as_str(),
                if e.note.is_empty() {
                    String::new()
                } else {
                    format!(" {}", e.note.replace('|', "\\|"))
                },
                e.was.map_or("—", Verdict::as_str),
                e.now.map_or("—", Verdict::as_str)
            ));
        }
        if listed.len() > SHOWN {
            md.push_str(&format!(
                "\n_{} more in report.json (`baseline`)._\n",
                listed.len() - SHOWN
            ));
        }
    }
    md.push('\n');
    md
}

/// One annotation per failing cell shown, on its contract's skill line: an error at
/// `risk_level: high` or `critical`, a warning below (and for a cell no contract covers,
/// an error: nothing says its risk is low).
pub fn annotations(tally: &Tally) -> Vec<String> {
    let esc = |s: &str| {
        s.replace('%', "%25")
            .replace('\r', "%0D")
            .replace('\n', "%0A")
    };
    let prop = |s: &str| esc(s).replace(':', "%3A").replace(',', "%2C");
    tally
        .shown
        .iter()
        .filter(|c| c.verdict != Verdict::Skipped)
        .map(|c| {
            let f = c
                .first
                .as_ref()
                .map(|(check, message)| format!("{check}: {message}"))
                .unwrap_or_default();
            let level = match c.risk {
                Some(r) if !r.is_high() => "warning",
                _ => "error",
            };
            format!(
                "::{level} file={},line={},title={}::{} — {}",
                prop(&c.contract),
                c.contract_line,
                prop(&format!("fibon {}", c.verdict.as_str())),
                esc(&c.id),
                esc(&f)
            )
        })
        .collect()
}
