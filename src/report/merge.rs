//! `fibon-verify merge`: shard reports (`run --shard K/N` on parallel CI jobs) combined into
//! the report a single unsharded run would have written — cells back in plan order, counts
//! and exit code recomputed — with its JUnit and job-summary projections.

use std::collections::{BTreeMap, BTreeSet};
use std::io::Write;

use serde_json::{Value, json};

use super::junit::xml_escape as esc;
use super::{Summary, Verdict};

/// Merges reports (each `fibon.report/v1`). Overlapping shards are an error, and so is an
/// incomplete set (shard 3/3 missing, a whole run mixed with shards, shards of different
/// N): a merged report that silently covers part of the matrix would be a quiet pass.
pub fn merge(reports: &[(String, Value)]) -> Result<Value, String> {
    for (name, r) in reports {
        check_report(name, r)?;
    }
    check_shard_set(reports)?;
    let mut cells: Vec<Value> = Vec::new();
    let mut seen: BTreeMap<String, String> = BTreeMap::new();
    let (mut started, mut duration, mut interrupted) = (None::<String>, 0u64, false);
    let mut shards = Vec::new();
    let (mut calls, mut cost, mut budget) = (0u64, 0f64, None::<Value>);
    for (name, r) in reports {
        for c in r["cells"].as_array().into_iter().flatten() {
            let id = c["id"].as_str().unwrap_or_default().to_string();
            if let Some(other) = seen.insert(id.clone(), name.clone()) {
                return Err(format!(
                    "cell `{id}` is in both {other} and {name}: do the shards overlap?"
                ));
            }
            cells.push(c.clone());
        }
        let s = r["started_at"].as_str().map(String::from);
        if started.is_none() || s.as_deref() < started.as_deref() {
            started = s;
        }
        duration = duration.max(r["duration_ms"].as_u64().unwrap_or(0));
        interrupted |= r["interrupted"].as_bool().unwrap_or(false);
        shards.push(r["shard"].as_str().unwrap_or("whole").to_string());
        if let Some(q) = r.get("quality_budget") {
            calls += q["calls"].as_u64().unwrap_or(0);
            cost += q["cost_usd"].as_f64().unwrap_or(0.0);
            budget = Some(q.clone());
        }
    }
    cells.sort_by(|a, b| {
        (a["index"].as_u64(), a["id"].as_str()).cmp(&(b["index"].as_u64(), b["id"].as_str()))
    });
    let count = |v: &str| cells.iter().filter(|c| c["verdict"] == v).count();
    let summary = Summary {
        cells: cells.len(),
        pass: count("pass"),
        silent_degradation: count("silent_degradation"),
        contract_violation: count("contract_violation"),
        quality_fail: count("quality_fail"),
        error: count("error"),
        skipped: count("skipped"),
    };
    let exit_code = if interrupted {
        crate::exit_code::INTERRUPTED
    } else {
        summary.exit_code()
    };
    let mut out = json!({
        "schema": "fibon.report/v1",
        "version": env!("CARGO_PKG_VERSION"),
        "started_at": started,
        "duration_ms": duration,
        "merged_from": shards,
        "cells": cells,
        "summary": summary,
        "exit_code": exit_code,
    });
    if interrupted {
        out["interrupted"] = json!(true);
    }
    if let Some(mut b) = budget {
        b["calls"] = json!(calls);
        b["cost_usd"] = json!(cost);
        out["quality_budget"] = b;
    }
    Ok(out)
}

/// A report whose cells can be counted: `fibon.report/v1`, with `cells`, each with an
/// `id` (once) and one of the defined verdicts. A cell that fits none of the counts would
/// drop out of the summary, and the merged exit code with it: a quiet pass.
fn check_report(name: &str, r: &Value) -> Result<(), String> {
    if r["schema"] != "fibon.report/v1" {
        return Err(format!("{name} is not a fibon.report/v1 report"));
    }
    let Some(cells) = r["cells"].as_array() else {
        return Err(format!("{name} has no `cells`: it is not a whole report"));
    };
    let mut ids = BTreeSet::new();
    for (i, c) in cells.iter().enumerate() {
        let Some(id) = c["id"].as_str() else {
            return Err(format!("{name}: cell {} has no `id`", i + 1));
        };
        if !ids.insert(id) {
            return Err(format!("{name} has cell `{id}` twice"));
        }
        let verdict = &c["verdict"];
        if !Verdict::ALL.iter().any(|v| verdict == v.as_str()) {
            let names: Vec<&str> = Verdict::ALL.iter().map(|v| v.as_str()).collect();
            return Err(format!(
                "{name}: cell `{id}`: verdict `{}` is not one of {}",
                verdict
                    .as_str()
                    .map_or_else(|| verdict.to_string(), String::from),
                names.join(", ")
            ));
        }
    }
    Ok(())
}

/// Every report is a shard `K/N` of the same N and every K in 1..=N is there exactly once;
/// or there is a single unsharded report.
fn check_shard_set(reports: &[(String, Value)]) -> Result<(), String> {
    let mut total = None::<u64>;
    let mut seen: BTreeMap<u64, &str> = BTreeMap::new();
    for (name, r) in reports {
        let Some(shard) = r["shard"].as_str() else {
            if reports.len() > 1 {
                return Err(format!(
                    "{name} is a whole run, not a shard: merge takes the reports of `run --shard K/N`"
                ));
            }
            return Ok(());
        };
        let parsed = shard
            .split_once('/')
            .and_then(|(k, n)| Some((k.parse::<u64>().ok()?, n.parse::<u64>().ok()?)));
        let Some((k, n)) = parsed else {
            return Err(format!("{name}: shard `{shard}` is not K/N"));
        };
        match total {
            Some(t) if t != n => {
                return Err(format!(
                    "{name} is shard {k}/{n} but the other reports are shards of {t}"
                ));
            }
            _ => total = Some(n),
        }
        if let Some(other) = seen.insert(k, name) {
            return Err(format!("{other} and {name} are both shard {k}/{n}"));
        }
    }
    if let Some(n) = total {
        let missing: Vec<String> = (1..=n)
            .filter(|k| !seen.contains_key(k))
            .map(|k| format!("{k}/{n}"))
            .collect();
        if !missing.is_empty() {
            return Err(format!(
                "shard {} missing: the merged report would cover only part of the matrix",
                missing.join(", ")
            ));
        }
    }
    Ok(())
}

/// The merged report's JUnit: one testsuite per skill, one testcase per cell.
pub fn junit(report: &Value) -> String {
    let mut by: BTreeMap<String, Vec<&Value>> = BTreeMap::new();
    for c in report["cells"].as_array().into_iter().flatten() {
        by.entry(c["skill"].as_str().unwrap_or_default().to_string())
            .or_default()
            .push(c);
    }
    let failing = |c: &&&Value| {
        c["verdict"] != "pass" && c["verdict"] != "skipped" && c["verdict"] != "error"
    };
    let mut w = Vec::new();
    let s = &report["summary"];
    let _ = writeln!(w, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>");
    let _ = writeln!(
        w,
        "<testsuites name=\"fibon-verify\" tests=\"{}\" failures=\"{}\" errors=\"{}\">",
        s["cells"],
        s["silent_degradation"].as_u64().unwrap_or(0)
            + s["contract_violation"].as_u64().unwrap_or(0)
            + s["quality_fail"].as_u64().unwrap_or(0),
        s["error"]
    );
    for (skill, cells) in &by {
        let f = cells.iter().filter(failing).count();
        let e = cells.iter().filter(|c| c["verdict"] == "error").count();
        let _ = writeln!(
            w,
            "    <testsuite name=\"{}\" tests=\"{}\" failures=\"{f}\" errors=\"{e}\">",
            esc(skill),
            cells.len()
        );
        for c in cells {
            let id = esc(c["id"].as_str().unwrap_or_default());
            let class = esc(&format!(
                "{}.{}",
                skill,
                c["quadrant"].as_str().unwrap_or_default()
            ));
            let verdict = c["verdict"].as_str().unwrap_or_default();
            if verdict == "pass" {
                let _ = writeln!(w, "        <testcase name=\"{id}\" classname=\"{class}\"/>");
                continue;
            }
            let tag = if verdict == "error" {
                "error"
            } else {
                "failure"
            };
            let findings: Vec<String> = c["findings"]
                .as_array()
                .into_iter()
                .flatten()
                .map(|f| {
                    format!(
                        "[{}] {}",
                        f["check"].as_str().unwrap_or(""),
                        f["message"].as_str().unwrap_or("")
                    )
                })
                .collect();
            let first = c["findings"][0]["message"].as_str().unwrap_or("");
            let _ = writeln!(
                w,
                "        <testcase name=\"{id}\" classname=\"{class}\">\n            <{tag} type=\"{verdict}\" message=\"{}\">{}</{tag}>\n        </testcase>",
                esc(&format!("{verdict}: {first}")),
                esc(&findings.join("\n"))
            );
        }
        let _ = writeln!(w, "    </testsuite>");
    }
    let _ = writeln!(w, "</testsuites>");
    String::from_utf8(w).unwrap_or_default()
}

/// The merged report's job summary.
pub fn summary_markdown(report: &Value) -> String {
    let s = &report["summary"];
    let icon = if report["exit_code"] == 0 {
        "✅"
    } else {
        "❌"
    };
    let shards = report["merged_from"]
        .as_array()
        .map(|a| a.len())
        .unwrap_or(1);
    let mut md = format!(
        "## {icon} fibon-verify: {} cells from {shards} shard(s)\n\n",
        s["cells"]
    );
    md.push_str("| pass | silent degradation | contract violation | quality fail | error | skipped |\n|---|---|---|---|---|---|\n");
    md.push_str(&format!(
        "| {} | {} | {} | {} | {} | {} |\n",
        s["pass"],
        s["silent_degradation"],
        s["contract_violation"],
        s["quality_fail"],
        s["error"],
        s["skipped"]
    ));
    let failing: Vec<&Value> = report["cells"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|c| c["verdict"] != "pass")
        .collect();
    if !failing.is_empty() {
        md.push_str("\n| cell | verdict | finding |\n|---|---|---|\n");
        for c in failing {
            let f = &c["findings"][0];
            md.push_str(&format!(
                "| `{}` | {} | `{}` {} |\n",
                c["id"].as_str().unwrap_or(""),
                c["verdict"].as_str().unwrap_or(""),
                f["check"].as_str().unwrap_or(""),
                f["message"].as_str().unwrap_or("").replace('|', "\\|")
            ));
        }
    }
    md
}
