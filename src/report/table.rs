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
    out.push_str(&baseline_lines(report));
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

/// Compared with a baseline: the count of each change, then each cell that changed for
/// the worse, then the first fixed ones (report.json lists them all).
pub fn baseline_lines(report: &Report) -> String {
    use super::baseline::{Change, FailOn};
    const SHOWN: usize = 20;
    let Some(b) = &report.baseline else {
        return String::new();
    };
    let counts: Vec<String> = Change::ALL
        .iter()
        .filter(|c| b.count(**c) > 0)
        .map(|c| format!("{} {}", b.count(*c), c.as_str()))
        .collect();
    let mut out = format!(
        "baseline {}: {}{}\n",
        b.report,
        counts.join(", "),
        if b.fail_on == FailOn::New {
            " (--fail-on new: only what is failing anew, and errors, fail)"
        } else {
            ""
        }
    );
    // What changed, in `Change::ALL`'s order (worst first); known failures and unchanged
    // cells are not news.
    let changed = Change::ALL
        .into_iter()
        .filter(|c| !matches!(c, Change::StillFailing | Change::Unchanged));
    let mut shown = 0;
    for change in changed {
        for e in b.of(change) {
            if change == Change::NewCell && e.now.is_none_or(|v| v == Verdict::Pass) {
                continue;
            }
            if shown == SHOWN {
                out.push_str("  … more in report.json (baseline)\n");
                return out;
            }
            shown += 1;
            out.push_str(&format!(
                "  {} {} ({} → {}){}\n",
                change.as_str().to_uppercase(),
                e.id,
                e.was.map_or("—", Verdict::as_str),
                e.now.map_or("—", Verdict::as_str),
                if e.note.is_empty() {
                    String::new()
                } else {
                    format!(" {}", e.note)
                }
            ));
        }
    }
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
        "{t}\n{}{} candidates: {} pass, {} quality_fail, {} error\n",
        baseline_lines(report),
        s.cells,
        s.pass,
        s.quality_fail,
        s.error
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
