//! `fibon-verify gate --candidates FILE`: the quality gate over candidates, without
//! running agents. Exit 3 when a candidate ends blocked, high_risk, unavailable or
//! needs_recheck; 69 when no judge could be reached at all. `--experiment FILE`: Gate A,
//! then Gate B. Input the gate cannot use — a candidate id given twice, an experiment
//! score off the scale — is refused (65) at its line before anything is judged.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

use serde_json::{Value, json};

use super::Globals;
use crate::diag::{Diagnostic, Format};
use crate::errors::ExpectedError;
use crate::exit_code;
use crate::quality::{self, Candidate, Ledger};
use crate::report::{self, CellReport, Outputs, Report};
use crate::source::{Document, SourceFile};
use crate::vocab::{Behavior, CheckId, Finding, Verdict};

#[derive(Debug, clap::Args)]
#[command(group(clap::ArgGroup::new("input").required(true).multiple(false).args(["candidates", "experiment"])))]
pub(crate) struct GateArgs {
    /// Candidates, JSONL: `{"id", "input", "output", "facts"}` per line (also `forbidden`,
    /// `evidence`).
    #[arg(long, value_name = "FILE")]
    candidates: Option<PathBuf>,

    /// An offline arm experiment (YAML or JSON): Gate A, then Gate B, over arms A/B/C.
    #[arg(long, value_name = "FILE")]
    experiment: Option<PathBuf>,

    /// The quality policy [default: quality.policy of --config]
    #[arg(long, value_name = "FILE")]
    policy: Option<PathBuf>,

    /// Seed of the blind candidate ids (the same seed, the same run).
    #[arg(long, value_name = "N", default_value_t = 0)]
    seed: u64,

    /// Where report.json and junit.xml go.
    #[arg(long, value_name = "DIR", default_value = "target/fibon-gate")]
    report_dir: PathBuf,

    /// Also print report.json on stdout.
    #[arg(long, value_name = "FORMAT", default_value = "human")]
    format: Format,
}

pub(crate) fn run(globals: &Globals, args: GateArgs) -> Result<i32, ExpectedError> {
    crate::report::prepare_dir(&args.report_dir)?;
    if let Some(path) = &args.experiment {
        return experiment(&args, path);
    }
    let (policy, policy_path) = match &args.policy {
        Some(p) => (policy_file(p)?, p.clone()),
        None => {
            let (config, project) = super::load_valid_project(globals)?;
            let path = config
                .quality_policy
                .unwrap_or_else(|| globals.config.clone());
            (project.policy, path)
        }
    };
    let Some(policy) = policy else {
        return Err(ExpectedError::NoPolicy {
            config: globals.config.clone(),
        });
    };
    if policy.budget.reservation() > policy.budget.limit_usd {
        return Err(ExpectedError::OverBudget {
            policy: policy_path,
            reserved: policy.budget.reservation(),
            limit: policy.budget.limit_usd,
        });
    }
    let candidates_path = args
        .candidates
        .clone()
        .expect("clap requires --candidates or --experiment");
    let text = super::read_input(&candidates_path)?;
    let file = Arc::new(SourceFile::from_text(&candidates_path, text));
    let mut parsed: Vec<Result<Candidate, Box<CellReport>>> = Vec::new();
    // Each id once: the report's cells are keyed by it.
    let mut first: HashMap<String, usize> = HashMap::new();
    let mut duplicates = Vec::new();
    let mut offset = 0;
    for (i, raw) in file.text.split_inclusive('\n').enumerate() {
        let span = offset..offset + raw.trim_end().len();
        offset += raw.len();
        let line = raw.trim_end_matches(['\n', '\r']);
        if line.trim().is_empty() {
            continue;
        }
        let c = candidate(i + 1, line);
        if let Ok(c) = &c {
            match first.get(&c.id) {
                Some(&at) => duplicates.push(
                    Diagnostic::error(
                        "duplicate_id",
                        format!("candidate id `{}` is used again (first on line {at})", c.id),
                    )
                    .at(&file, span, "again")
                    .with_help(
                        "give each candidate its own id: the report's cells are keyed by it",
                    ),
                ),
                None => {
                    first.insert(c.id.clone(), i + 1);
                }
            }
        }
        parsed.push(c);
    }
    if !duplicates.is_empty() {
        return Err(ExpectedError::InvalidFile {
            path: candidates_path,
            diagnostics: duplicates,
        });
    }
    let started_at = humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string();
    let start = Instant::now();
    let ledger = Ledger::default();
    let runtime = super::runtime()?;
    let mut cells: Vec<CellReport> = runtime.block_on(async {
        let mut out = Vec::new();
        for p in parsed {
            out.push(match p {
                Err(cell) => *cell,
                Ok(c) => {
                    let q = quality::gate(&policy, &ledger, args.seed, &c, None).await;
                    let failed = q.state.fails();
                    let (verdict, findings) = if failed {
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
    let (calls, cost, reached) = ledger.totals();
    // No judge could be reached at all: nothing was evaluated (fail closed, exit 69).
    if reached == 0 && calls > 0 {
        for c in cells
            .iter_mut()
            .filter(|c| c.verdict == Verdict::QualityFail)
        {
            c.verdict = Verdict::Error;
        }
    }
    let mut report = Report::new(
        started_at,
        start.elapsed().as_millis() as u64,
        cells,
        None,
        false,
    );
    report.quality_budget = Some(json!({
        "policy": policy.name, "policy_version": policy.version, "seed": args.seed,
        "calls": calls, "max_calls": policy.budget.max_calls, "cost_usd": cost,
        "reserved_usd": policy.budget.reservation(), "limit_usd": policy.budget.limit_usd,
    }));
    let written = report::write_all(&report, &Outputs::new(&args.report_dir, globals.github))?;
    if args.format == Format::Json {
        written.print_json(&mut super::stdout())?;
    }
    Ok(written.exit_code)
}

/// The quality policy of `--policy`: exit 64 naming it when it cannot be read, 65 with its
/// errors when it is invalid. `None` when the file is not a policy.
fn policy_file(path: &std::path::Path) -> Result<Option<quality::Policy>, ExpectedError> {
    // Read here too, so that a file that cannot be read is refused as every input named
    // on the command line is (64), not reported as a diagnostic.
    super::read_input(path)?;
    let loaded = crate::project::load_paths(std::slice::from_ref(&path.to_path_buf()));
    if loaded.has_errors() {
        return Err(ExpectedError::InvalidFile {
            path: path.to_path_buf(),
            diagnostics: loaded
                .diagnostics
                .into_iter()
                .filter(|d| d.is_error())
                .collect(),
        });
    }
    Ok(loaded.project.policy)
}

fn candidate(line_no: usize, line: &str) -> Result<Candidate, Box<CellReport>> {
    let bad = |why: String| {
        Box::new(CellReport::not_run(
            format!("line-{line_no}"),
            String::new(),
            Finding::error(CheckId::CandidateParse, format!("line {line_no}: {why}")),
        ))
    };
    let v: Value = serde_json::from_str(line).map_err(|e| bad(format!("not JSON: {e}")))?;
    let text = |k: &str| v[k].as_str().map(String::from);
    let list = |k: &str| {
        v[k].as_array()
            .map(|a| {
                a.iter()
                    .filter_map(Value::as_str)
                    .map(String::from)
                    .collect()
            })
            .unwrap_or_default()
    };
    let id = text("id").ok_or_else(|| bad("no `id`".into()))?;
    let output = match &v["output"] {
        Value::String(s) => s.clone(),
        Value::Null => return Err(bad("no `output`".into())),
        other => other.to_string(),
    };
    Ok(Candidate {
        id,
        input: text("input").unwrap_or_default(),
        output,
        facts: list("facts"),
        forbidden: list("forbidden"),
        evidence: text("evidence").unwrap_or_default(),
        assertions: None,
    })
}

/// `gate --experiment`: Gate A, then Gate B.
fn experiment(args: &GateArgs, path: &std::path::Path) -> Result<i32, ExpectedError> {
    let text = super::read_input(path)?;
    let policy = match &args.policy {
        Some(p) => policy_file(p)?,
        None => None,
    };
    // The document for the lines of what is wrong; the typed read keeps what JSON cannot
    // hold (YAML's .nan and .inf), so that it is refused rather than turned into null.
    let file = Arc::new(SourceFile::from_text(path, text));
    let refuse = |diagnostics: Vec<Diagnostic>| {
        Err(ExpectedError::InvalidFile {
            path: path.to_path_buf(),
            diagnostics,
        })
    };
    let (doc, mut diags) = match Document::parse(Arc::clone(&file)) {
        Ok(parsed) => parsed,
        Err(d) => return refuse(vec![*d]),
    };
    let exp: quality::experiment::Experiment = match serde_yaml::from_str(&file.text) {
        Ok(e) => e,
        Err(e) => {
            let at = e.location().map_or(0, |l| l.index());
            diags.push(
                Diagnostic::error("invalid", format!("not an experiment file: {e}"))
                    .at(&file, at..at, "here")
                    .with_help("an experiment has `experiment`, `scenario_classes` and `samples` (README, \"Gate A and Gate B\")"),
            );
            return refuse(diags);
        }
    };
    let scale = policy
        .as_ref()
        .map_or_else(quality::Scale::default, |p| p.scale);
    let policy_dimensions: Vec<&str> = policy
        .iter()
        .flat_map(|p| p.dimensions.iter().map(|d| d.id.as_str()))
        .collect();
    diags.extend(quality::experiment::validate(
        &doc,
        &exp,
        scale,
        policy.is_some(),
        &policy_dimensions,
    ));
    if diags.iter().any(Diagnostic::is_error) {
        crate::diag::sort(&mut diags);
        return refuse(diags);
    }
    let ledger = Ledger::default();
    let runtime = super::runtime()?;
    let report = runtime
        .block_on(quality::experiment::evaluate(
            &exp,
            policy.as_ref(),
            &ledger,
            args.seed,
        ))
        .map_err(|e| ExpectedError::InvalidData {
            path: path.to_path_buf(),
            reason: e.to_string(),
        })?;
    let json = serde_json::to_string_pretty(&report).expect("serializes");
    crate::report::write_atomic(&args.report_dir.join("experiment.json"), json.as_bytes())?;
    eprintln!(
        "experiment `{}`: {} samples ({} valid) from {} work(s)",
        report.experiment,
        report.samples,
        report.valid_samples,
        report.works.len()
    );
    eprintln!(
        "Gate A: {} (rule {}) — {}",
        report.gate_a.state.as_str(),
        report.gate_a.rule,
        report.gate_a.reason
    );
    eprintln!(
        "Gate B: {} (rule {}) — {}",
        report.gate_b.state.as_str(),
        report.gate_b.rule,
        report.gate_b.reason
    );
    for c in &report.confounders {
        eprintln!("  confounder: {c}");
    }
    eprintln!(
        "report: {}",
        args.report_dir.join("experiment.json").display()
    );
    if args.format == Format::Json {
        super::print_line(json)?;
    }
    Ok(
        if report.gate_b.state == quality::experiment::GateState::Passed {
            exit_code::SUCCESS
        } else {
            exit_code::QUALITY_GATE_FAILED
        },
    )
}
