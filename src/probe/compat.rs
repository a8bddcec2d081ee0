//! Is the contract's `io_contract.input_schema` compatible with the input schema a tool
//! advertises? Every property the contract requires must exist in the tool's schema with
//! a compatible type, and the tool must not require a property the contract does not
//! know. Anything else is SCHEMA_DRIFT: the tool changed under the Skill.

use serde_json::Value;

/// The incompatibilities, each a sentence; empty when compatible.
pub(crate) fn incompatibilities(contract: &Value, tool: &Value) -> Vec<String> {
    let props = |s: &Value| {
        s.get("properties")
            .and_then(Value::as_object)
            .cloned()
            .unwrap_or_default()
    };
    let required = |s: &Value| -> Vec<String> {
        s.get("required")
            .and_then(Value::as_array)
            .map(|r| {
                r.iter()
                    .filter_map(Value::as_str)
                    .map(String::from)
                    .collect()
            })
            .unwrap_or_default()
    };
    let (c_props, t_props) = (props(contract), props(tool));
    let mut out = Vec::new();
    for name in required(contract) {
        if !t_props.contains_key(&name) && !t_props.is_empty() {
            out.push(format!(
                "the contract requires `{name}`, which the tool's inputSchema does not have"
            ));
        }
    }
    for name in required(tool) {
        if !c_props.contains_key(&name) && !c_props.is_empty() {
            out.push(format!(
                "the tool now requires `{name}`, which the contract does not know"
            ));
        }
    }
    for (name, c) in &c_props {
        if let Some(t) = t_props.get(name) {
            let (ct, tt) = (types(c), types(t));
            if !ct.is_empty()
                && !tt.is_empty()
                && !ct.iter().any(|x| tt.iter().any(|y| compatible(x, y)))
            {
                out.push(format!(
                    "`{name}` is {} in the contract but {} in the tool",
                    ct.join("|"),
                    tt.join("|")
                ));
            }
        }
    }
    out
}

fn types(schema: &Value) -> Vec<String> {
    match schema.get("type") {
        Some(Value::String(t)) => vec![t.clone()],
        Some(Value::Array(ts)) => ts
            .iter()
            .filter_map(Value::as_str)
            .map(String::from)
            .collect(),
        _ => Vec::new(),
    }
}

fn compatible(a: &str, b: &str) -> bool {
    a == b || matches!((a, b), ("integer", "number") | ("number", "integer"))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn finds_missing_required_and_type_changes() {
        let contract = json!({"type": "object", "properties": {"query": {"type": "string"}, "top_k": {"type": "integer"}}, "required": ["query"]});
        assert!(
            incompatibilities(
                &contract,
                &json!({"properties": {"query": {"type": "string"}, "top_k": {"type": "number"}}})
            )
            .is_empty()
        );
        let drifted = json!({"properties": {"q": {"type": "string"}, "top_k": {"type": "string"}}, "required": ["q"]});
        assert_eq!(
            incompatibilities(&contract, &drifted),
            [
                "the contract requires `query`, which the tool's inputSchema does not have",
                "the tool now requires `q`, which the contract does not know",
                "`top_k` is integer in the contract but string in the tool",
            ]
        );
    }
}
