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
        return experiment(globals, &args, path);
    }
    let loaded = match &args.policy {
        Some(p) => {
            if !p.is_file() {
                return Err(ExpectedError::PathNotFound { path: p.clone() });
            }
            crate::project::load_paths(std::slice::from_ref(p))
        }
        None if globals.config.is_file() => crate::project::load_config(&globals.config),
        None => {
            return Err(ExpectedError::ConfigNotFound {
                path: globals.config.clone(),
            });
        }
    };
    if loaded.has_errors() {
        let mut stderr = std::io::stderr().lock();
        for d in loaded.diagnostics.iter().filter(|d| d.is_error()) {
            std::io::Write::write_all(
                &mut stderr,
                crate::diag::render_human(d, globals.color, 100).as_bytes(),
            )?;
        }
        return Ok(exit_code::INVALID_INPUT);
    }
    let Some(policy) = loaded.project.policy else {
        eprintln!(
            "error: no quality policy: pass --policy FILE or set `quality: {{policy: FILE}}` in {}",
            globals.config.display()
        );
        return Ok(exit_code::USAGE);
    };
    if policy.budget.reservation() > policy.budget.limit_usd {
        eprintln!(
            "error: the plan reserves ${:.2}, over the budget's limit ${:.2}; nothing was judged",
            policy.budget.reservation(),
            policy.budget.limit_usd
        );
        return Ok(exit_code::INVALID_INPUT);
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
        for d in &duplicates {
            eprint!("{}", crate::diag::render_human(d, globals.color, 100));
        }
        return Ok(exit_code::INVALID_INPUT);
    }
    let started_at = humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string();
    let start = Instant::now();
    let ledger = Ledger::default();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
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
fn experiment(
    globals: &Globals,
    args: &GateArgs,
    path: &std::path::Path,
) -> Result<i32, ExpectedError> {
    let text = super::read_input(path)?;
    let policy = match &args.policy {
        Some(p) => {
            let loaded = crate::project::load_paths(std::slice::from_ref(p));
            if loaded.has_errors() {
                for d in loaded.diagnostics.iter().filter(|d| d.is_error()) {
                    eprint!("{}", crate::diag::render_human(d, globals.color, 100));
                }
                return Ok(exit_code::INVALID_INPUT);
            }
            loaded.project.policy
        }
        None => None,
    };
    // The document for the lines of what is wrong; the typed read keeps what JSON cannot
    // hold (YAML's .nan and .inf), so that it is refused rather than turned into null.
    let file = Arc::new(SourceFile::from_text(path, text));
    let refuse = |diags: &[Diagnostic]| {
        for d in diags {
            eprint!("{}", crate::diag::render_human(d, globals.color, 100));
        }
        Ok(exit_code::INVALID_INPUT)
    };
    let (doc, mut diags) = match Document::parse(Arc::clone(&file)) {
        Ok(parsed) => parsed,
        Err(d) => return refuse(&[*d]),
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
            return refuse(&diags);
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
        return refuse(&diags);
    }
    let ledger = Ledger::default();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    let report = match runtime.block_on(quality::experiment::evaluate(
        &exp,
        policy.as_ref(),
        &ledger,
        args.seed,
    )) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("error: {}: {e}", path.display());
            return Ok(exit_code::INVALID_INPUT);
        }
    };
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
