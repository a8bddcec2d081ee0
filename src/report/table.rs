//! The terminal summary: a grid of skills × quadrants with counts, then one line per
//! failing cell with its first finding.

use std::collections::BTreeMap;

use comfy_table::presets::UTF8_FULL_CONDENSED;
use comfy_table::{ContentArrangement, Table};

use super::{Report, Verdict};

/// Renders the summary.
pub fn render(report: &Report, width: u16) -> String {
    if !report.cells.is_empty()
        && report
            .cells
            .iter()
            .all(|c| c.quadrant.is_empty() && c.quality.is_some())
    {
        return render_candidates(report, width);
    }
    if !report.cells.is_empty() && report.cells.iter().all(|c| c.quadrant.is_empty()) {
        return render_by_skill(report, width);
    }
    let mut grid: BTreeMap<&str, [BTreeMap<Verdict, usize>; 4]> = BTreeMap::new();
    for c in &report.cells {
        let q = match c.quadrant.as_str() {
            "Q1" => 0,
            "Q2" => 1,
            "Q3" => 2,
            _ => 3,
        };
        *grid.entry(&c.skill).or_default()[q]
            .entry(c.verdict)
            .or_default() += 1;
    }
    let mut t = Table::new();
    t.load_style(UTF8_FULL_CONDENSED)
        .set_content_arrangement(ContentArrangement::Dynamic)
        .set_width(width);
    t.set_header(vec![
        "skill",
        "Q1 tools·simple",
        "Q2 tools·complex",
        "Q3 fault·simple",
        "Q4 fault·complex",
    ]);
    for (skill, quadrants) in &grid {
        let mut row = vec![skill.to_string()];
        for counts in quadrants {
            row.push(if counts.is_empty() {
                "—".to_string()
            } else {
                counts
                    .iter()
                    .rev()
                    .map(|(v, n)| format!("{n} {}", v.as_str()))
                    .collect::<Vec<_>>()
                    .join("\n")
            });
        }
        t.add_row(row);
    }
    let mut out = t.to_string();
    out.push('\n');
    for c in report.cells.iter().filter(|c| c.verdict != Verdict::Pass) {
        let first = c
            .findings
            .iter()
            .find(|f| f.severity == super::FindingSeverity::Error)
            .or(c.findings.first());
        let detail = first
            .map(|f| format!("{}: {}", f.check, f.message))
            .unwrap_or_default();
        out.push_str(&format!(
            "{} {} — {detail}\n",
            c.verdict.as_str().to_uppercase(),
            c.id
        ));
    }
    let s = &report.summary;
    out.push_str(&format!(
        "{} cells: {} pass, {} silent_degradation, {} contract_violation, {} quality_fail, {} error, {} skipped{}\n",
        s.cells,
        s.pass,
        s.silent_degradation,
        s.contract_violation,
        s.quality_fail,
        s.error,
        s.skipped,
        if report.interrupted { " (interrupted)" } else { "" }
    ));
    out
}

/// `gate` candidates: one row each with the qualityState, the final scores and why.
fn render_candidates(report: &Report, width: u16) -> String {
    let mut t = Table::new();
    t.load_style(UTF8_FULL_CONDENSED)
        .set_content_arrangement(ContentArrangement::Dynamic)
        .set_width(width);
    t.set_header(vec!["candidate", "quality", "scores", "explanation"]);
    for c in &report.cells {
        let Some(q) = &c.quality else { continue };
        let scores: Vec<String> = q.scores.iter().map(|(d, s)| format!("{d} {s}")).collect();
        t.add_row(vec![
            c.id.clone(),
            q.state.as_str().to_string(),
            scores.join("\n"),
            q.explanation.clone(),
        ]);
    }
    let s = &report.summary;
    format!(
        "{t}\n{} candidates: {} pass, {} quality_fail, {} error\n",
        s.cells, s.pass, s.quality_fail, s.error
    )
}

/// Cells without quadrants (sampled conversations): verdict counts per Skill.
fn render_by_skill(report: &Report, width: u16) -> String {
    let mut by: BTreeMap<&str, BTreeMap<Verdict, usize>> = BTreeMap::new();
    for c in &report.cells {
        *by.entry(if c.skill.is_empty() {
            "(unreadable)"
        } else {
            &c.skill
        })
        .or_default()
        .entry(c.verdict)
        .or_default() += 1;
    }
    let mut t = Table::new();
    t.load_style(UTF8_FULL_CONDENSED)
        .set_content_arrangement(ContentArrangement::Dynamic)
        .set_width(width);
    t.set_header(vec!["skill", "conversations"]);
    for (skill, counts) in &by {
        t.add_row(vec![
            skill.to_string(),
            counts
                .iter()
                .rev()
                .map(|(v, n)| format!("{n} {}", v.as_str()))
                .collect::<Vec<_>>()
                .join(", "),
        ]);
    }
    let mut out = format!("{t}\n");
    for c in report.cells.iter().filter(|c| c.verdict != Verdict::Pass) {
        let f = c
            .findings
            .first()
            .map(|f| format!("{}: {}", f.check, f.message))
            .unwrap_or_default();
        out.push_str(&format!(
            "{} {} — {f}\n",
            c.verdict.as_str().to_uppercase(),
            c.id
        ));
    }
    out.push_str(&format!(
        "{} conversations: {} pass, {} unstable or failing, {} error\n",
        report.summary.cells,
        report.summary.pass,
        report.summary.contract_violation + report.summary.silent_degradation,
        report.summary.error
    ));
    out
}
