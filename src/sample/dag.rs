//! Decision DAGs: a conversation's tool calls as nodes (tool + normalized arguments) and
//! the data dependencies between them as edges (a call whose arguments contain text from
//! an earlier result depends on it; a call that depends on nothing follows the one before)
//! — and their comparison: same tools, same edges, similar arguments.

use std::collections::BTreeSet;

use serde::Serialize;
use serde_json::Value;

use crate::checks::normalize;

/// One call.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Node {
    /// The tool.
    pub tool: String,
    /// Its arguments' normalized string tokens.
    pub tokens: Vec<String>,
}

/// A decision DAG.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Dag {
    /// Calls in order.
    pub nodes: Vec<Node>,
    /// `(from, to, kind)`: `data` or `order`.
    pub edges: Vec<(usize, usize, &'static str)>,
}

/// Shortest argument text that counts as carrying data from a result.
const MIN_CARRIED: usize = 6;

fn tokens(v: &Value, out: &mut Vec<String>) {
    match v {
        Value::String(s) => out.push(normalize(s)),
        Value::Number(n) => out.push(n.to_string()),
        Value::Bool(b) => out.push(b.to_string()),
        Value::Array(items) => items.iter().for_each(|i| tokens(i, out)),
        Value::Object(map) => map.iter().for_each(|(k, v)| {
            let mut inner = Vec::new();
            tokens(v, &mut inner);
            out.extend(inner.into_iter().map(|t| format!("{k}={t}")));
        }),
        Value::Null => {}
    }
}

impl Dag {
    /// Builds the DAG of calls `(tool, arguments, result text)`.
    pub fn build(calls: &[(String, Value, String)]) -> Dag {
        let nodes: Vec<Node> = calls
            .iter()
            .map(|(tool, args, _)| {
                let mut t = Vec::new();
                tokens(args, &mut t);
                t.sort();
                Node {
                    tool: tool.clone(),
                    tokens: t,
                }
            })
            .collect();
        let results: Vec<String> = calls.iter().map(|(_, _, r)| normalize(r)).collect();
        let mut edges = Vec::new();
        for (j, (_, args, _)) in calls.iter().enumerate() {
            let mut strings = Vec::new();
            collect_strings(args, &mut strings);
            let deps: Vec<usize> = (0..j)
                .filter(|&i| {
                    strings.iter().any(|s| {
                        s.chars().count() >= MIN_CARRIED && results[i].contains(s.as_str())
                    })
                })
                .collect();
            if deps.is_empty() {
                if j > 0 {
                    edges.push((j - 1, j, "order"));
                }
            } else {
                edges.extend(deps.into_iter().map(|i| (i, j, "data")));
            }
        }
        Dag { nodes, edges }
    }

    fn tool_multiset(&self) -> Vec<String> {
        let mut t: Vec<String> = self.nodes.iter().map(|n| n.tool.clone()).collect();
        t.sort();
        t
    }

    fn edge_set(&self) -> BTreeSet<(String, String, &'static str)> {
        self.edges
            .iter()
            .map(|(i, j, k)| (self.nodes[*i].tool.clone(), self.nodes[*j].tool.clone(), *k))
            .collect()
    }
}

fn collect_strings(v: &Value, out: &mut Vec<String>) {
    match v {
        Value::String(s) => out.push(normalize(s)),
        Value::Array(items) => items.iter().for_each(|i| collect_strings(i, out)),
        Value::Object(map) => map.values().for_each(|i| collect_strings(i, out)),
        _ => {}
    }
}

/// How a replay compares with the recording.
#[derive(Debug, Clone, Serialize)]
pub struct Comparison {
    /// Same tools (as a multiset).
    pub same_tools: bool,
    /// Same edges (by tool names and kind).
    pub same_edges: bool,
    /// Mean Jaccard similarity of the arguments of calls paired by tool, in order.
    pub argument_similarity: f64,
    /// Stable: same tools, same edges, similarity at or above the threshold.
    pub stable: bool,
    /// What differs, for people.
    pub diff: Vec<String>,
}

/// Compares a replay's DAG with the recorded one.
pub fn compare(recorded: &Dag, replayed: &Dag, min_similarity: f64) -> Comparison {
    let (rt, pt) = (recorded.tool_multiset(), replayed.tool_multiset());
    let (re, pe) = (recorded.edge_set(), replayed.edge_set());
    let mut diff = Vec::new();
    if rt != pt {
        diff.push(format!("tools: recorded {rt:?}, replay {pt:?}"));
    }
    if re != pe {
        let only_r: Vec<String> = re
            .difference(&pe)
            .map(|(a, b, k)| format!("{a}->{b} ({k})"))
            .collect();
        let only_p: Vec<String> = pe
            .difference(&re)
            .map(|(a, b, k)| format!("{a}->{b} ({k})"))
            .collect();
        diff.push(format!(
            "edges: only recorded {only_r:?}, only replay {only_p:?}"
        ));
    }
    // Pair calls by tool, in order, and compare their argument tokens.
    let mut sims = Vec::new();
    let mut used = vec![false; replayed.nodes.len()];
    for n in &recorded.nodes {
        if let Some(k) =
            (0..replayed.nodes.len()).find(|&k| !used[k] && replayed.nodes[k].tool == n.tool)
        {
            used[k] = true;
            let a: BTreeSet<&String> = n.tokens.iter().collect();
            let b: BTreeSet<&String> = replayed.nodes[k].tokens.iter().collect();
            let union = a.union(&b).count();
            let sim = if union == 0 {
                1.0
            } else {
                a.intersection(&b).count() as f64 / union as f64
            };
            if sim < 1.0 {
                diff.push(format!(
                    "{} arguments: recorded {:?}, replay {:?}",
                    n.tool, n.tokens, replayed.nodes[k].tokens
                ));
            }
            sims.push(sim);
        } else {
            sims.push(0.0);
        }
    }
    let argument_similarity = if sims.is_empty() {
        if replayed.nodes.is_empty() { 1.0 } else { 0.0 }
    } else {
        sims.iter().sum::<f64>() / sims.len() as f64
    };
    let stable = rt == pt && re == pe && argument_similarity + 1e-9 >= min_similarity;
    Comparison {
        same_tools: rt == pt,
        same_edges: re == pe,
        argument_similarity,
        stable,
        diff,
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn call(tool: &str, args: Value, result: &str) -> (String, Value, String) {
        (tool.into(), args, result.into())
    }

    #[test]
    fn data_edges_follow_results_into_arguments() {
        let d = Dag::build(&[
            call(
                "search",
                json!({"q": "rate limits"}),
                "see https://docs.example.com/limits",
            ),
            call(
                "read_page",
                json!({"url": "https://docs.example.com/limits"}),
                "600 rpm",
            ),
            call("add_schedule", json!({"title": "x"}), "ok"),
        ]);
        assert_eq!(d.edges, [(0, 1, "data"), (1, 2, "order")]);
    }

    #[test]
    fn comparison_finds_changed_plans() {
        let rec = Dag::build(&[
            call("search", json!({"q": "rate limits"}), "https://a/1"),
            call("read_page", json!({"url": "https://a/1"}), "x"),
        ]);
        assert!(compare(&rec, &rec, 0.8).stable);
        let other = Dag::build(&[call("read_page", json!({"url": "https://b/2"}), "x")]);
        let c = compare(&rec, &other, 0.8);
        assert!(!c.stable && !c.same_tools);
        let reworded = Dag::build(&[
            call("search", json!({"q": "rate limit"}), "https://a/1"),
            call("read_page", json!({"url": "https://a/1"}), "x"),
        ]);
        let c = compare(&rec, &reworded, 0.8);
        assert!(c.same_tools && c.same_edges && c.argument_similarity < 1.0);
    }
}
