//! Rendering a probe: tables for people (stderr), JSON (`--format json`, stdout), and
//! GitHub annotations that point at the contract of each unavailable Skill.

use comfy_table::{ContentArrangement, Table, presets::UTF8_FULL_CONDENSED};

use super::{Availability, LockStatus, ProbeReport};

/// The human rendering.
pub fn render_table(report: &ProbeReport, width: u16) -> String {
    let mut out = String::new();
    if !report.servers.is_empty() {
        let mut t = Table::new();
        t.load_style(UTF8_FULL_CONDENSED)
            .set_content_arrangement(ContentArrangement::Dynamic)
            .set_width(width);
        t.set_header(vec![
            "server", "status", "version", "protocol", "tools", "problems",
        ]);
        for s in &report.servers {
            t.add_row(vec![
                s.name.clone(),
                if s.reachable {
                    "reachable".into()
                } else {
                    format!("UNREACHABLE: {}", s.error.clone().unwrap_or_default())
                },
                s.server_version.clone().unwrap_or_default(),
                s.protocol_version.clone().unwrap_or_default(),
                s.tools.to_string(),
                s.problems.join("\n"),
            ]);
        }
        out.push_str(&t.to_string());
        out.push('\n');
    }
    let mut t = Table::new();
    t.load_style(UTF8_FULL_CONDENSED)
        .set_content_arrangement(ContentArrangement::Dynamic)
        .set_width(width);
    t.set_header(vec!["skill", "availability", "unmet preconditions"]);
    for s in &report.skills {
        let status = match s.availability {
            Availability::Available => "available",
            Availability::Restricted => "restricted",
            Availability::Unavailable => "UNAVAILABLE",
        };
        let critical = if s.critical { "" } else { " (non-critical)" };
        let unmet: Vec<String> = s
            .unmet
            .iter()
            .map(|u| format!("{}: {}", u.kind, u.message))
            .collect();
        t.add_row(vec![
            s.skill.clone(),
            format!("{status}{critical}"),
            unmet.join("\n"),
        ]);
    }
    out.push_str(&t.to_string());
    out.push('\n');
    let lock = &report.lock;
    let path = lock.path.display();
    let line = match lock.status {
        LockStatus::Missing => format!(
            "lockfile: {path} does not exist; run `fibon-verify probe --update-lock` to pin the tools found"
        ),
        LockStatus::Matches => format!("lockfile: {path} matches"),
        LockStatus::Drifted if lock.drift_allowed => {
            format!("lockfile: {path} DRIFTED (allowed by --allow-drift)")
        }
        LockStatus::Drifted => format!(
            "lockfile: {path} DRIFTED; review the changes, then `probe --update-lock` (or pass --allow-drift)"
        ),
        LockStatus::Updated => format!("lockfile: {path} written"),
        LockStatus::Unverified => format!(
            "lockfile: {path} NOT VERIFIED for the tools of unreachable servers (what could be checked matches)"
        ),
        LockStatus::Unusable => format!("lockfile: {}", lock.error.clone().unwrap_or_default()),
    };
    out.push_str(&line);
    out.push('\n');
    for c in &lock.changes {
        out.push_str("  ");
        out.push_str(&c.detail);
        out.push('\n');
    }
    out
}

/// GitHub annotations: an error per unavailable Skill (on its contract), a warning per
/// restricted one, an error per failing lock change and per unreachable server.
pub fn render_github(report: &ProbeReport) -> Vec<String> {
    let esc = |s: &str| {
        s.replace('%', "%25")
            .replace('\r', "%0D")
            .replace('\n', "%0A")
    };
    let prop = |s: &str| esc(s).replace(':', "%3A").replace(',', "%2C");
    let mut out = Vec::new();
    for s in &report.skills {
        let level = match s.availability {
            Availability::Available => continue,
            Availability::Restricted => "warning",
            Availability::Unavailable => "error",
        };
        let reasons: Vec<&str> = s.unmet.iter().map(|u| u.message.as_str()).collect();
        out.push(format!(
            "::{level} file={},line={},title={}::skill `{}` is {}: {}",
            prop(&s.source),
            s.line,
            prop("fibon::probe"),
            s.skill,
            s.availability.as_str(),
            esc(&reasons.join("; "))
        ));
    }
    for c in report
        .lock
        .changes
        .iter()
        .filter(|c| c.failing && !report.lock.drift_allowed)
    {
        out.push(format!(
            "::error file={},title={}::{}",
            prop(&report.lock.path.display().to_string()),
            prop("fibon::lock"),
            esc(&c.detail)
        ));
    }
    for s in report.servers.iter().filter(|s| !s.reachable) {
        out.push(format!(
            "::error title={}::MCP server `{}` is unreachable: {}",
            prop("fibon::probe"),
            s.name,
            esc(s.error.as_deref().unwrap_or(""))
        ));
    }
    out
}
