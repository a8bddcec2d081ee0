//! Under GitHub Actions: a Markdown job summary (appended to `$GITHUB_STEP_SUMMARY`) and
//! `::error` annotations that point at the contract of each failing cell.

use super::{Report, Verdict};

/// The Markdown summary.
pub fn summary_markdown(report: &Report) -> String {
    let s = &report.summary;
    let icon = if report.exit_code == 0 { "✅" } else { "❌" };
    let mut md = format!("## {icon} fibon-verify: {} cells\n\n", s.cells);
    md.push_str("| pass | silent degradation | contract violation | quality fail | error | skipped |\n|---|---|---|---|---|---|\n");
    md.push_str(&format!(
        "| {} | {} | {} | {} | {} | {} |\n",
        s.pass, s.silent_degradation, s.contract_violation, s.quality_fail, s.error, s.skipped
    ));
    let failing: Vec<_> = report
        .cells
        .iter()
        .filter(|c| c.verdict != Verdict::Pass)
        .collect();
    if !failing.is_empty() {
        md.push_str("\n| cell | verdict | finding |\n|---|---|---|\n");
        for c in failing {
            let f = c
                .findings
                .first()
                .map(|f| format!("`{}` {}", f.check, f.message.replace('|', "\\|")))
                .unwrap_or_default();
            md.push_str(&format!("| `{}` | {} | {f} |\n", c.id, c.verdict.as_str()));
        }
    }
    if let Some(i) = &report.intervention {
        md.push_str(&format!("\n{}\n", i.line()));
    }
    if report.interrupted {
        md.push_str("\n_The run was interrupted; these are the cells that finished._\n");
    }
    md
}

/// One annotation per failing cell, on its contract's skill line.
pub fn annotations(report: &Report) -> Vec<String> {
    let esc = |s: &str| {
        s.replace('%', "%25")
            .replace('\r', "%0D")
            .replace('\n', "%0A")
    };
    let prop = |s: &str| esc(s).replace(':', "%3A").replace(',', "%2C");
    report
        .cells
        .iter()
        .filter(|c| c.verdict != Verdict::Pass && c.verdict != Verdict::Skipped)
        .map(|c| {
            let f = c
                .findings
                .first()
                .map(|f| format!("{}: {}", f.check, f.message))
                .unwrap_or_default();
            format!(
                "::error file={},line={},title={}::{} — {}",
                prop(&c.contract),
                c.contract_line,
                prop(&format!("fibon {}", c.verdict.as_str())),
                esc(&c.id),
                esc(&f)
            )
        })
        .collect()
}
