//! The terminal summary: a grid of skills × quadrants with counts, then one line per
//! failing cell with its first finding (a table per Skill for sampled conversations, and
//! one row per candidate for `gate`).

use std::collections::BTreeMap;

use comfy_table::presets::UTF8_FULL_CONDENSED;
use comfy_table::{ContentArrangement, Table};

use super::tally::{COLUMNS, Tally};
use super::{Quadrant, Report, Verdict};

/// Renders the summary of `report` (whose counts and flags are read, not its cells) over
/// the tallied cells; `noun` names them in the count line ("cells", "conversations").
pub fn render(report: &Report, tally: &Tally, width: u16, noun: &str) -> String {
    if tally.summary.cells > 0 && !tally.placed && tally.judged {
        return render_candidates(report, tally, width);
    }
    if tally.summary.cells > 0 && !tally.placed {
        return render_by_skill(report, tally, width);
    }
    // Cells outside the matrix (an unreadable line in a replay) get a column of their
    // own, only when there are some: they are in no quadrant.
    let unplaced = tally
        .grid
        .values()
        .any(|columns| !columns[COLUMNS - 1].is_empty());
    let mut t = table(width);
    let mut header = vec![
        "skill",
        "Q1 tools·simple",
        "Q2 tools·complex",
        "Q3 fault·simple",
        "Q4 fault·complex",
    ];
    if unplaced {
        header.push("none");
    }
    t.set_header(header);
    let shown = if unplaced {
        COLUMNS
    } else {
        Quadrant::ALL.len()
    };
    for (skill, columns) in &tally.grid {
        let mut row = vec![skill_cell(tally, skill)];
        for counts in &columns[..shown] {
            row.push(if counts.is_empty() {
                "—".to_string()
            } else {
                verdict_counts(counts, "\n")
            });
        }
        t.add_row(row);
    }
    let mut out = t.to_string();
    out.push('\n');
    for c in &tally.shown {
        out.push_str(&failing_line(&c.id, c.verdict, c.decisive.as_ref()));
    }
    out.push_str(&omitted_line(tally, noun));
    let s = &report.summary;
    out.push_str(&format!(
        "{} {noun}: {} pass, {} silent_degradation, {} contract_violation, {} quality_fail, {} error, {} skipped{}\n",
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
fn render_candidates(report: &Report, tally: &Tally, width: u16) -> String {
    let mut t = table(width);
    t.set_header(vec!["candidate", "quality", "scores", "explanation"]);
    for c in &tally.candidates {
        t.add_row(vec![
            c.id.clone(),
            c.state.to_string(),
            c.scores.join("\n"),
            c.explanation.clone(),
        ]);
    }
    let s = &report.summary;
    format!(
        "{t}\n{} candidates: {} pass, {} quality_fail, {} error\n",
        s.cells, s.pass, s.quality_fail, s.error
    )
}

/// Cells without quadrants (sampled conversations): verdict counts per Skill.
fn render_by_skill(report: &Report, tally: &Tally, width: u16) -> String {
    let mut t = table(width);
    t.set_header(vec!["skill", "conversations"]);
    for (skill, columns) in &tally.grid {
        let mut counts: BTreeMap<Verdict, usize> = BTreeMap::new();
        for (v, n) in columns.iter().flatten() {
            *counts.entry(*v).or_default() += n;
        }
        t.add_row(vec![
            skill_cell(tally, skill),
            verdict_counts(&counts, ", "),
        ]);
    }
    let mut out = format!("{t}\n");
    for c in &tally.shown {
        out.push_str(&failing_line(&c.id, c.verdict, c.first.as_ref()));
    }
    out.push_str(&omitted_line(tally, "conversations"));
    let s = &report.summary;
    out.push_str(&format!(
        "{} conversations: {} pass, {} unstable or failing, {} error\n",
        s.cells,
        s.pass,
        s.contract_violation + s.silent_degradation,
        s.error
    ));
    out
}

fn table(width: u16) -> Table {
    let mut t = Table::new();
    t.load_style(UTF8_FULL_CONDENSED)
        .set_content_arrangement(ContentArrangement::Dynamic)
        .set_width(width);
    t
}

/// A cell whose line could not be read has no skill.
fn skill_name(skill: &str) -> &str {
    if skill.is_empty() {
        "(unreadable)"
    } else {
        skill
    }
}

/// A Skill's name, and under it its contract's risk level (none for cells no contract
/// covers): on a line of its own, so that long names do not wrap.
fn skill_cell(tally: &Tally, skill: &str) -> String {
    match tally.risks.get(skill) {
        Some(r) => format!("{}\nrisk {r}", skill_name(skill)),
        None => skill_name(skill).to_string(),
    }
}

/// The worst verdicts first.
fn verdict_counts(counts: &BTreeMap<Verdict, usize>, sep: &str) -> String {
    counts
        .iter()
        .rev()
        .map(|(v, n)| format!("{n} {}", v.as_str()))
        .collect::<Vec<_>>()
        .join(sep)
}

fn failing_line(id: &str, verdict: Verdict, finding: Option<&(super::CheckId, String)>) -> String {
    let detail = finding
        .map(|(check, message)| format!("{check}: {message}"))
        .unwrap_or_default();
    format!("{} {id} — {detail}\n", verdict.as_str().to_uppercase())
}

/// Streamed, only the first failing cells are kept: say how many more report.json has.
fn omitted_line(tally: &Tally, noun: &str) -> String {
    if tally.omitted == 0 {
        return String::new();
    }
    format!(
        "… and {} more failing {noun} in report.json\n",
        tally.omitted
    )
}
