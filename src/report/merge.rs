//! `fibon-verify merge`: shard reports (`run`, `audit` or `sample --shard K/N` on parallel
//! CI jobs) read back as typed reports and combined into the report a single unsharded
//! command would have written — cells back in plan (or history) order, counts,
//! intervention rates and exit code recomputed. A sample's stability per Skill is
//! recomputed over the merged cells by the caller (`sample::stability::rejudge`), the
//! layer that knows it. Its JUnit and job summary are then written by the same sinks as
//! every other report's.

use std::collections::{BTreeMap, BTreeSet};

use serde::Deserialize;
use serde_json::{Value, json};

use super::{InterventionSummary, Report, SCHEMA, Verdict};

/// Reads one shard's report.json, named `name` in errors. What cannot be trusted is
/// refused, naming the cell where there is one (see [`check_report`]).
pub fn read(name: &str, text: &str) -> Result<Report, String> {
    let value: Value =
        serde_json::from_str(text).map_err(|e| format!("{name} cannot be read as JSON: {e}"))?;
    check_report(name, &value)?;
    Report::deserialize(&value).map_err(|e| format!("{name} is not a whole {SCHEMA} report: {e}"))
}

/// Merges reports. Overlapping shards are an error, and so is an incomplete set (shard
/// 3/3 missing, a whole run mixed with shards, shards of different N): a merged report
/// that silently covers part of the matrix would be a quiet pass.
pub fn merge(reports: Vec<(String, Report)>) -> Result<Report, String> {
    check_shard_set(&reports)?;
    let sampling = check_samplings(&reports)?;
    let mut cells = Vec::new();
    let mut seen: BTreeMap<String, String> = BTreeMap::new();
    let (mut started, mut duration, mut interrupted) = (None::<String>, 0u64, false);
    let mut shards = Vec::new();
    let (mut calls, mut cost, mut budget) = (0u64, 0f64, None::<Value>);
    let mut hits = 0u64;
    let mut model = None;
    for (name, r) in reports {
        for c in &r.cells {
            if let Some(other) = seen.insert(c.id.clone(), name.clone()) {
                return Err(format!(
                    "cell `{}` is in both {other} and {name}: do the shards overlap?",
                    c.id
                ));
            }
        }
        cells.extend(r.cells);
        if started.as_ref().is_none_or(|s| r.started_at < *s) {
            started = Some(r.started_at);
        }
        duration = duration.max(r.duration_ms);
        interrupted |= r.interrupted;
        shards.push(r.shard.unwrap_or_else(|| "whole".to_string()));
        if let Some(q) = r.quality_budget {
            calls += q["calls"].as_u64().unwrap_or(0);
            cost += q["cost_usd"].as_f64().unwrap_or(0.0);
            hits += q["cache_hits"].as_u64().unwrap_or(0);
            budget = Some(q);
        }
        model = model.or(r.intervention.map(|i| i.model));
    }
    cells.sort_by(|a, b| (a.index, &a.id).cmp(&(b.index, &b.id)));
    let mut out = Report::new(
        started.unwrap_or_default(),
        duration,
        cells,
        None,
        interrupted,
    );
    out.merged_from = Some(shards);
    out.sampling = sampling;
    if let Some(mut b) = budget {
        b["calls"] = json!(calls);
        b["cost_usd"] = json!(cost);
        b["cache_hits"] = json!(hits);
        out.quality_budget = Some(b);
    }
    // The rates over every shard's cells, not any one shard's.
    out.intervention = model.and_then(|m| InterventionSummary::of(&m, &out.cells));
    Ok(out)
}

/// A report whose cells can be counted: `fibon.report/v1`, with `cells`, each with an
/// `id` (once) and one of the defined verdicts. A cell that fits none of the counts would
/// drop out of the summary, and the merged exit code with it: a quiet pass. Checked on
/// the JSON, before the typed read, to name the file and the cell at fault.
fn check_report(name: &str, r: &Value) -> Result<(), String> {
    if r["schema"] != SCHEMA {
        return Err(format!("{name} is not a {SCHEMA} report"));
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

/// What the shards of a sample share (`sampling` but its per-Skill results, which are
/// the merge's to recompute): the same histories, selection and limits in every shard —
/// shards of different samples, or of a history that grew between them, are refused. No
/// report has `sampling` when none is a sample.
fn check_samplings(reports: &[(String, Report)]) -> Result<Option<Value>, String> {
    const SHARED: [&str; 6] = [
        "history",
        "lines",
        "rate",
        "seed",
        "max_instability",
        "min_similarity",
    ];
    let Some((first_name, first)) = reports.first() else {
        return Ok(None);
    };
    for (name, r) in &reports[1..] {
        match (&first.sampling, &r.sampling) {
            (None, None) => {}
            (Some(f), Some(s)) => {
                if let Some(key) = SHARED.iter().find(|k| s[**k] != f[**k]) {
                    return Err(format!(
                        "{name} and {first_name} are shards of different samples: their `sampling.{key}` differs ({} and {})",
                        s[*key], f[*key]
                    ));
                }
            }
            (f, _) => {
                let (sample, other) = if f.is_some() {
                    (first_name, name)
                } else {
                    (name, first_name)
                };
                return Err(format!(
                    "{sample} is a shard of `sample` and {other} is not: merge the shards of one command"
                ));
            }
        }
    }
    Ok(first.sampling.clone().map(|mut shared| {
        if let Some(m) = shared.as_object_mut() {
            m.shift_remove("skills");
            m.shift_remove("unstable_skills");
        }
        shared
    }))
}

/// Every report is a shard `K/N` of the same N and every K in 1..=N is there exactly once;
/// or there is a single unsharded report.
fn check_shard_set(reports: &[(String, Report)]) -> Result<(), String> {
    let mut total = None::<u64>;
    let mut seen: BTreeMap<u64, &str> = BTreeMap::new();
    for (name, r) in reports {
        let Some(shard) = &r.shard else {
            if reports.len() > 1 {
                return Err(format!(
                    "{name} is a whole run, not a shard: merge takes the reports of `run`, `audit` or `sample` with `--shard K/N`"
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
