//! The dual-track comparison: each scenario's answers under a fault (Q3/Q4) against its
//! answer with the tools available (Q1/Q2) and against its facts. What a fault-cell answer
//! asserts that the available-quadrant evidence does not hold, or that contradicts the
//! scenario's facts, is attached to its silent-degradation finding as fidelity evidence.
//! Only a passing available-quadrant cell is a reference; without one, the scenario's
//! facts are.

use std::collections::HashMap;

use serde_json::{Value, json};

use crate::checks::citations;
use crate::gateway::Status;
use crate::lexicon::Lexicon;
use crate::report::CellReport;
use crate::scenario::Scenario;
use crate::vocab::{CheckId, Verdict};

/// Attaches fidelity evidence to the silent-degradation findings of `cells`.
pub(super) fn attach(cells: &mut [CellReport], scenarios: &[Scenario]) {
    // The evidence and answer of each scenario's passing available-quadrant cell.
    let mut reference: HashMap<String, (String, String)> = HashMap::new();
    for c in cells
        .iter()
        .filter(|c| c.fault.is_none() && c.verdict == Verdict::Pass)
    {
        let evidence: Vec<&str> = c
            .trace
            .iter()
            .filter(|e| e.op == "call" && e.status == Status::Ok)
            .map(|e| e.result_text.as_str())
            .collect();
        reference.insert(c.scenario.clone(), (evidence.join("\n"), text(&c.output)));
    }
    let lexicon = Lexicon::builtin();
    for c in cells.iter_mut().filter(|c| c.fault.is_some()) {
        let Some(scenario) = scenarios.iter().find(|s| s.id == c.scenario) else {
            continue;
        };
        let (against, available_answer) = match reference.get(&c.scenario) {
            Some((evidence, answer)) => (format!("{evidence}\n{answer}"), Some(answer.clone())),
            None => (scenario.facts.join("\n"), None),
        };
        let answer = citations::output_text(&c.output);
        let reading =
            crate::checks::read_answer(&answer, &against, &scenario.input, Vec::new(), &lexicon);
        let absent: Vec<String> = reading
            .unsupported()
            .into_iter()
            .map(|(f, _)| f.text)
            .collect();
        let contradicting: Vec<&String> = scenario
            .forbidden
            .iter()
            .filter(|f| crate::text::contains(&answer, f))
            .collect();
        for f in c
            .findings
            .iter_mut()
            .filter(|f| f.check == CheckId::SilentDegradation)
        {
            if !f.evidence.is_object() {
                f.evidence = json!({});
            }
            f.evidence["dual_track"] = match &available_answer {
                Some(a) => json!({
                    "reference": "available_quadrant",
                    "absent_from_available_quadrant": absent,
                    "contradicts_scenario_facts": contradicting,
                    "available_answer_excerpt": a.chars().take(200).collect::<String>(),
                }),
                None => json!({
                    "reference": "scenario_facts",
                    "absent_from_scenario_facts": absent,
                    "contradicts_scenario_facts": contradicting,
                }),
            };
        }
    }
}

fn text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Null => String::new(),
        other => other.to_string(),
    }
}
