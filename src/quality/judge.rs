//! Judges: a `command` speaking `fibon.judge/v1` on stdin/stdout, any OpenAI-compatible
//! chat endpoint (a rubric prompt, JSON output validated against a schema, retries with
//! backoff on 429 and 5xx), and `builtin` deterministic judges so the gate runs in CI
//! without model cost. Every judge returns one score per dimension on the policy's scale.

use std::process::Stdio;
use std::sync::OnceLock;
use std::time::Duration;

use indexmap::IndexMap;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use crate::chat::cache::Cache;
use crate::chat::structured::{self, Ask, AskLog};
use crate::policy::{BuiltinJudge, JudgeImpl, JudgeSpec, Policy};

/// What a judge is shown (and the deterministic judges compute from).
#[derive(Debug, Clone, Default)]
pub struct Candidate {
    /// The candidate's own id (never shown to judges: they get the blind id).
    pub id: String,
    /// The request it answers.
    pub input: String,
    /// The candidate text.
    pub output: String,
    /// Facts it should state.
    pub facts: Vec<String>,
    /// Facts it must not state (a conflict is a hard fact conflict).
    pub forbidden: Vec<String>,
    /// The evidence it may rely on (tool results).
    pub evidence: String,
    /// Output assertions passed and total, when known.
    pub assertions: Option<(usize, usize)>,
}

/// One score with its reason.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Score {
    /// On the policy's scale.
    pub score: f64,
    /// Why.
    pub reason: String,
}

/// A judge's report.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Report {
    /// Dimension id -> score.
    pub scores: IndexMap<String, Score>,
    /// The candidate contradicts established facts.
    pub hard_fact_conflict: bool,
}

/// Asks one judge about one candidate, shown under `blind_id`, with the dimensions in
/// reverse order when `reversed` (the second blind judge). `charge` is called before each
/// request (the budget); an `openai` judge is asked in structured outputs, repaired once,
/// and served from `cache` when it holds the same request.
pub(super) async fn ask(
    spec: &JudgeSpec,
    policy: &Policy,
    c: &Candidate,
    blind_id: &str,
    reversed: bool,
    cache: &Cache,
    charge: &mut (dyn FnMut() -> Result<(), String> + Send),
) -> (Result<Report, String>, AskLog) {
    let mut dims: Vec<Value> = policy
        .dimensions
        .iter()
        .map(|d| json!({"id": d.id, "description": d.description}))
        .collect();
    if reversed {
        dims.reverse();
    }
    let named = |e: String| format!("judge `{}`: {e}", spec.id);
    let raw = match &spec.kind {
        JudgeImpl::Builtin(b) => {
            return (charge().map(|()| builtin(*b, policy, c)), AskLog::default());
        }
        JudgeImpl::Command(argv) => match charge() {
            Err(e) => Err(e),
            Ok(()) => command(argv, spec.timeout, &request(c, blind_id, &dims)).await,
        },
        JudgeImpl::Openai {
            base_url,
            model,
            api_key_env,
        } => {
            let ask = Ask {
                base_url,
                model,
                api_key_env: api_key_env.as_deref(),
                timeout: spec.timeout,
                messages: vec![
                    json!({"role": "system", "content": rubric(policy)}),
                    json!({"role": "user", "content": request(c, blind_id, &dims).to_string()}),
                ],
                name: "fibon_judge",
                schema: response_schema(policy, &dims),
                version: &policy.version,
                cache,
            };
            let (result, log) = structured::ask(ask, |v| read(v, policy), charge).await;
            return (result.map_err(named), log);
        }
    };
    (
        raw.and_then(|raw| read(&raw, policy)).map_err(named),
        AskLog::default(),
    )
}

/// The most steps of a scale listed as an `enum` of scores in the response schema; a
/// finer scale is given as `minimum`/`maximum` (the step is then checked on reading).
const ENUM_STEPS: f64 = 200.0;

/// The JSON Schema an `openai` judge's answer is constrained to: every dimension a
/// required property (in the order the judge is shown them), each score one of the
/// scale's steps, a reason, and the conflict flag — all required, nothing else
/// (what `strict` structured outputs need, and what llama.cpp turns into a grammar).
pub(super) fn response_schema(policy: &Policy, dims: &[Value]) -> Value {
    let s = policy.scale;
    let steps = ((s.max - s.min) / s.step).round();
    let score = if steps <= ENUM_STEPS {
        let values: Vec<Value> = (0..=steps as i64)
            .map(|i| {
                let v = s.min + i as f64 * s.step;
                // Whole scores as integers: `10`, not `10.0`.
                if v.fract() == 0.0 && v.abs() < 1e15 {
                    json!(v as i64)
                } else {
                    json!(v)
                }
            })
            .collect();
        json!({"type": "number", "enum": values})
    } else {
        json!({"type": "number", "minimum": s.min, "maximum": s.max})
    };
    let ids: Vec<&str> = dims.iter().filter_map(|d| d["id"].as_str()).collect();
    let properties: serde_json::Map<String, Value> = ids
        .iter()
        .map(|id| {
            (
                (*id).to_string(),
                json!({
                    "type": "object",
                    "properties": {"score": score, "reason": {"type": "string"}},
                    "required": ["score", "reason"],
                    "additionalProperties": false,
                }),
            )
        })
        .collect();
    json!({
        "type": "object",
        "properties": {
            "scores": {
                "type": "object",
                "properties": properties,
                "required": ids,
                "additionalProperties": false,
            },
            "hard_fact_conflict": {"type": "boolean"},
        },
        "required": ["scores", "hard_fact_conflict"],
        "additionalProperties": false,
    })
}

/// The `fibon.judge/v1` request.
fn request(c: &Candidate, blind_id: &str, dims: &[Value]) -> Value {
    json!({
        "protocol": "fibon.judge/v1",
        "candidate_id": blind_id,
        "input": c.input,
        "candidate": c.output,
        "dimensions": dims,
        "context": {"facts": c.facts, "evidence": c.evidence},
    })
}

fn schema() -> &'static jsonschema::Validator {
    static V: OnceLock<jsonschema::Validator> = OnceLock::new();
    V.get_or_init(|| {
        jsonschema::validator_for(&json!({
            "type": "object",
            "required": ["scores"],
            "properties": {
                "scores": {"type": "object", "additionalProperties": {
                    "type": "object", "required": ["score"],
                    "properties": {"score": {"type": "number"}, "reason": {"type": "string"}}
                }},
                "hard_fact_conflict": {"type": "boolean"}
            }
        }))
        .expect("the judge schema compiles")
    })
}

/// Validates a judge's answer: the schema, a score for every dimension, each on the scale.
pub(super) fn read(raw: &Value, policy: &Policy) -> Result<Report, String> {
    if let Some(e) = schema().iter_errors(raw).next() {
        return Err(format!(
            "the answer does not match fibon.judge/v1: {e} at `{}`",
            e.instance_path().as_str()
        ));
    }
    let mut scores = IndexMap::new();
    for d in &policy.dimensions {
        let Some(s) = raw["scores"].get(&d.id) else {
            return Err(format!("no score for `{}`", d.id));
        };
        let score = s["score"].as_f64().unwrap_or(f64::NAN);
        if !policy.scale.accepts(score) {
            return Err(format!(
                "`{}` scored {score}, not on the scale {}..{} in steps of {}",
                d.id, policy.scale.min, policy.scale.max, policy.scale.step
            ));
        }
        scores.insert(
            d.id.clone(),
            Score {
                score,
                reason: s["reason"].as_str().unwrap_or("").to_string(),
            },
        );
    }
    Ok(Report {
        scores,
        hard_fact_conflict: raw["hard_fact_conflict"].as_bool().unwrap_or(false),
    })
}

async fn command(argv: &[String], timeout: Duration, request: &Value) -> Result<Value, String> {
    let (program, args) = argv.split_first().ok_or("empty command")?;
    let mut child = tokio::process::Command::new(program)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .map_err(|e| format!("cannot start `{program}`: {e}"))?;
    let mut stdin = child.stdin.take().expect("piped");
    let body = request.to_string();
    let mut stdout = child.stdout.take().expect("piped");
    let run = async {
        let _ = stdin.write_all(body.as_bytes()).await;
        drop(stdin);
        let mut out = Vec::new();
        let _ = (&mut stdout)
            .take(4 * 1024 * 1024)
            .read_to_end(&mut out)
            .await;
        let status = child.wait().await.map_err(|e| e.to_string())?;
        Ok::<_, String>((status, out))
    };
    let (status, out) = tokio::time::timeout(timeout, run)
        .await
        .map_err(|_| format!("no answer within {}", humantime::format_duration(timeout)))??;
    if !status.success() {
        return Err(format!("exited with {status}"));
    }
    serde_json::from_slice(&out).map_err(|e| format!("its answer is not JSON: {e}"))
}

/// The system prompt of an `openai` judge, with the policy's scale.
fn rubric(policy: &Policy) -> String {
    let s = policy.scale;
    format!(
        "You are a blind judge. Score the candidate on each dimension listed, from {} to {} in steps of {}, \
using only the input, the candidate and the context. Reply with JSON only, exactly: \
{{\"scores\": {{\"<dimension id>\": {{\"score\": <number>, \"reason\": \"<why, citing evidence>\"}}}}, \
\"hard_fact_conflict\": <true if the candidate contradicts the given facts or evidence>}}.",
        s.min, s.max, s.step
    )
}

/// The deterministic judges: one share in [0, 1] mapped onto the scale (rounded down to a
/// step), the same for every dimension.
fn builtin(b: BuiltinJudge, policy: &Policy, c: &Candidate) -> Report {
    let (share, reason) = match b {
        BuiltinJudge::FactCoverage => {
            let hit = c
                .facts
                .iter()
                .filter(|f| {
                    crate::checks::normalize(&c.output).contains(&crate::checks::normalize(f))
                })
                .count();
            if c.facts.is_empty() {
                (1.0, "no expected facts to cover".to_string())
            } else {
                (
                    hit as f64 / c.facts.len() as f64,
                    format!("states {hit} of {} expected facts", c.facts.len()),
                )
            }
        }
        BuiltinJudge::CitationSupport => {
            let reading = crate::checks::read_answer(
                &c.output,
                &c.evidence,
                &c.input,
                Vec::new(),
                &crate::checks::refusal::Lexicon::builtin(),
            );
            let (all, bad) = reading.claimed();
            if all == 0 {
                (1.0, "asserts no key facts".to_string())
            } else {
                (
                    (all - bad) as f64 / all as f64,
                    format!("{} of {all} key facts supported by the evidence", all - bad),
                )
            }
        }
        BuiltinJudge::AssertionPass => match c.assertions {
            Some((_, 0)) | None => (1.0, "no output assertions".to_string()),
            Some((p, t)) => (
                p as f64 / t as f64,
                format!("{p} of {t} output assertions pass"),
            ),
        },
    };
    let s = policy.scale;
    let raw = s.min + share * (s.max - s.min);
    let score = s.min + ((raw - s.min) / s.step).floor() * s.step;
    let conflict = c
        .forbidden
        .iter()
        .any(|f| crate::checks::normalize(&c.output).contains(&crate::checks::normalize(f)));
    Report {
        scores: policy
            .dimensions
            .iter()
            .map(|d| {
                (
                    d.id.clone(),
                    Score {
                        score,
                        reason: reason.clone(),
                    },
                )
            })
            .collect(),
        hard_fact_conflict: conflict,
    }
}
