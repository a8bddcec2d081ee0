//! `fibon-verify gate`: the quality gate without agents. Candidates (JSONL) are judged
//! through the policy into a report — exit 3 when one ends blocked, high_risk,
//! unavailable or needs_recheck, 69 when no judge could be reached at all; an offline arm
//! experiment goes through Gate A, then Gate B, into experiment.json.

use std::path::{Path, PathBuf};
use std::time::Instant;

use serde_json::Value;

use crate::chat::cache::Cache;
use crate::errors::ExpectedError;
use crate::quality::experiment::{self, ExperimentReport};
use crate::quality::{self, Ledger, Policy};
use crate::report::{self, CellReport, Report};
use crate::vocab::{Behavior, CheckId, Finding, Verdict};

/// The policy to judge with: `--policy` when given (exit 64 when it cannot be read, 65
/// when invalid), else the `quality.policy` of the config at `config`, whose project must
/// be valid. Exit 64 when neither names a policy, 65 when its plan reserves more than its
/// budget allows.
pub fn policy(explicit: Option<&Path>, config: &Path) -> Result<Policy, ExpectedError> {
    let (policy, path) = match explicit {
        Some(p) => (crate::project::load_policy(p)?, p.to_path_buf()),
        None => {
            let project = crate::project::load_valid(config)?;
            let path = project
                .config
                .quality_policy
                .unwrap_or_else(|| config.to_path_buf());
            (project.policy, path)
        }
    };
    let Some(policy) = policy else {
        return Err(ExpectedError::NoPolicy {
            config: config.to_path_buf(),
        });
    };
    if policy.budget.reservation() > policy.budget.limit_usd {
        return Err(ExpectedError::OverBudget {
            policy: path,
            reserved: policy.budget.reservation(),
            limit: policy.budget.limit_usd,
        });
    }
    Ok(policy)
}

/// Judges each candidate of the file at `path` through `policy` (`seed`: the blind ids);
/// a line that is not a candidate is an `error` cell naming it; `openai` judgements go
/// through `cache`. Exit 64 when the file cannot be read or the cache folder cannot be
/// created, 65 when a candidate id is given twice.
pub fn candidates(
    policy: &Policy,
    path: &Path,
    seed: u64,
    cache: Cache,
) -> Result<Report, ExpectedError> {
    let parsed = quality::candidates::read(path)?;
    prepare_cache(&cache, Some(policy))?;
    let started_at = humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string();
    let start = Instant::now();
    let ledger = Ledger::with_cache(cache);
    let runtime = crate::errors::runtime()?;
    let mut cells: Vec<CellReport> = runtime.block_on(async {
        let mut out = Vec::new();
        for p in parsed {
            out.push(match p {
                Err(bad) => {
                    CellReport::unusable_line(CheckId::CandidateParse, bad.line, &bad.reason)
                }
                Ok(c) => {
                    let q = quality::gate(policy, &ledger, seed, &c, None).await;
                    let (verdict, findings) = if q.state.fails() {
                        let finding = Finding::error(CheckId::QualityGate, q.explanation.clone());
                        (Verdict::QualityFail, vec![finding])
                    } else {
                        (Verdict::Pass, Vec::new())
                    };
                    CellReport::new(
                        c.id.clone(),
                        String::new(),
                        Behavior::Answered,
                        verdict,
                        findings,
                    )
                    .with_output(Value::String(c.output.clone()))
                    .with_quality(Some(q))
                }
            });
        }
        out
    });
    for (i, c) in cells.iter_mut().enumerate() {
        c.index = i;
    }
    let budget = report::quality_budget(&mut cells, policy, seed, &ledger);
    let mut report = Report::new(
        started_at,
        start.elapsed().as_millis() as u64,
        cells,
        None,
        false,
    );
    report.quality_budget = Some(budget);
    Ok(report)
}

/// The cache folder created, when a model judge of `policy` will use it: exit 64 when it
/// cannot be (before anything is judged). A policy without `openai` judges leaves no
/// folder behind.
pub fn prepare_cache(cache: &Cache, policy: Option<&Policy>) -> Result<(), ExpectedError> {
    match cache.dir() {
        Some(dir) if policy.is_some_and(Policy::asks_models) => {
            std::fs::create_dir_all(dir).map_err(ExpectedError::unwritable(dir))
        }
        _ => Ok(()),
    }
}

/// An experiment evaluated and written.
#[derive(Debug)]
pub struct Experimented {
    /// The decisions.
    pub report: ExperimentReport,
    /// experiment.json, as written.
    pub json: String,
    /// Where.
    pub path: PathBuf,
}

/// `gate --experiment`: the experiment at `path` checked (exit 64 when it cannot be read,
/// 65 at every problem), its arms given as text judged blind through the `policy` file,
/// if any, then Gate A and Gate B; the report written to `report_dir/experiment.json`.
pub fn experiment(
    path: &Path,
    policy: Option<&Path>,
    seed: u64,
    report_dir: &Path,
    cache: Cache,
) -> Result<Experimented, ExpectedError> {
    let text = crate::source::read_input(path)?;
    let policy = match policy {
        Some(p) => crate::project::load_policy(p)?,
        None => None,
    };
    let exp = experiment::parse(path, text, policy.as_ref())?;
    prepare_cache(&cache, policy.as_ref())?;
    let ledger = Ledger::with_cache(cache);
    let runtime = crate::errors::runtime()?;
    let report = runtime
        .block_on(experiment::evaluate(&exp, policy.as_ref(), &ledger, seed))
        .map_err(|e| ExpectedError::InvalidData {
            path: path.to_path_buf(),
            reason: e.to_string(),
        })?;
    // Judges' replies and errors are in it: redacted as the report model is.
    let mut value = serde_json::to_value(&report).expect("serializes");
    crate::secrets::current().redact_value(&mut value);
    let json = serde_json::to_string_pretty(&value).expect("serializes");
    let out = report_dir.join("experiment.json");
    report::write_atomic(&out, json.as_bytes())?;
    Ok(Experimented {
        report,
        json,
        path: out,
    })
}
