//! The dual-track comparison: each scenario's answers under a fault (Q3/Q4) against its
//! answer with the tools available (Q1/Q2) and against its facts. What a fault-cell answer
//! asserts that the available-quadrant evidence does not hold, or that contradicts the
//! scenario's facts, is attached to its silent-degradation finding as fidelity evidence.

use std::collections::HashMap;

use serde_json::{Value, json};

use super::citations;
use crate::gateway::Status;
use crate::report::CellReport;
use crate::scenario::Scenario;

/// Attaches fidelity evidence to the silent-degradation findings of `cells`.
pub fn attach(cells: &mut [CellReport], scenarios: &[Scenario]) {
    // The available-quadrant evidence and answer of each scenario.
    let mut reference: HashMap<String, (String, String)> = HashMap::new();
    for c in cells.iter().filter(|c| c.fault.is_none()) {
        let evidence: Vec<&str> = c
            .trace
            .iter()
            .filter(|e| e.op == "call" && e.status == Status::Ok)
            .map(|e| e.result_text.as_str())
            .collect();
        reference.insert(c.scenario.clone(), (evidence.join("\n"), text(&c.output)));
    }
    for c in cells.iter_mut().filter(|c| c.fault.is_some()) {
        let Some((evidence, available_answer)) = reference.get(&c.scenario) else {
            continue;
        };
        let Some(scenario) = scenarios.iter().find(|s| s.id == c.scenario) else {
            continue;
        };
        let answer = citations::output_text(&c.output);
        let facts = citations::extract(&answer);
        let absent: Vec<String> = citations::unsupported(
            &facts,
            &format!("{evidence}\n{available_answer}\n{}", scenario.input),
        )
        .into_iter()
        .map(|f| f.text)
        .collect();
        let contradicting: Vec<&String> = scenario
            .forbidden
            .iter()
            .filter(|f| super::text::contains(&answer, f))
            .collect();
        for f in c
            .findings
            .iter_mut()
            .filter(|f| f.check == "silent_degradation")
        {
            if !f.evidence.is_object() {
                f.evidence = json!({});
            }
            f.evidence["dual_track"] = json!({
                "absent_from_available_quadrant": absent,
                "contradicts_scenario_facts": contradicting,
                "available_answer_excerpt": available_answer.chars().take(200).collect::<String>(),
            });
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
