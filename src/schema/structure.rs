//! Structural check of a parsed file against its kind's JSON Schema. Reports every
//! problem at once, each pointing at the key or value, with "did you mean" for unknown
//! keys and enum values.

use jsonschema::ValidationError;
use jsonschema::error::{TypeKind, ValidationErrorKind};
use serde_json::Value;

use super::Schema;
use crate::diag::{Diagnostic, suggestion_help};
use crate::source::{Anchor, Document, join};

/// Every structural problem of `doc` against `schema`.
pub fn check_structure(schema: &Schema, doc: &Document) -> Vec<Diagnostic> {
    let mut diags = Vec::new();
    for err in schema.validator.iter_errors(&doc.value) {
        explain(&schema.value, doc, &err, &mut diags);
    }
    diags
}

fn explain(schema: &Value, doc: &Document, err: &ValidationError<'_>, out: &mut Vec<Diagnostic>) {
    let pointer = err.instance_path().as_str().to_string();
    let field = field_name(&pointer);
    let at = |anchor, label: String| (doc.span(&pointer, anchor), label);
    let diag = match err.kind() {
        ValidationErrorKind::AdditionalProperties { unexpected } => {
            let allowed = allowed_keys(schema, &pointer);
            let allowed: Vec<&str> = allowed.iter().map(String::as_str).collect();
            for key in unexpected {
                let key_ptr = join(&pointer, key);
                let help = suggestion_help(key, &allowed, "key");
                let label = match crate::diag::did_you_mean(key, allowed.iter().copied()) {
                    Some(s) => format!("did you mean `{s}`?"),
                    None => "unknown key".to_string(),
                };
                out.push(
                    Diagnostic::error(
                        "unknown_key",
                        format!("unknown key `{key}`{}", within(&pointer)),
                    )
                    .at(&doc.file, doc.span(&key_ptr, Anchor::Key), label)
                    .with_help(help),
                );
            }
            return;
        }
        ValidationErrorKind::Enum { .. } | ValidationErrorKind::OneOfNotValid { .. }
            if !enum_options(schema, schema_at(schema, &pointer)).is_empty() =>
        {
            let options = enum_options(schema, schema_at(schema, &pointer));
            let options: Vec<&str> = options.iter().map(String::as_str).collect();
            let found = doc.get(&pointer).map(show).unwrap_or_default();
            let word = doc.get(&pointer).and_then(Value::as_str).unwrap_or("");
            let help = suggestion_help(word, &options, "value");
            let (span, label) = at(Anchor::Value, short_label(&help));
            Diagnostic::error(
                "unknown_value",
                format!("unknown value {found}{}", for_field(&pointer)),
            )
            .at(&doc.file, span, label)
            .with_help(help)
        }
        ValidationErrorKind::PropertyNames { error } => {
            // A map whose keys are an enum (fault kinds): the offending key is the instance.
            let key = error.instance().as_str().unwrap_or_default().to_string();
            let names = schema_at(schema, &pointer).and_then(|n| n.get("propertyNames"));
            let options = enum_options(schema, names);
            let options: Vec<&str> = options.iter().map(String::as_str).collect();
            let help = suggestion_help(&key, &options, "key");
            Diagnostic::error(
                "unknown_key",
                format!("unknown key `{key}`{}", within(&pointer)),
            )
            .at(
                &doc.file,
                doc.span(&join(&pointer, &key), Anchor::Key),
                short_label(&help),
            )
            .with_help(help)
        }
        ValidationErrorKind::Required { property } => {
            let name = property.as_str().unwrap_or_default();
            let (span, _) = at(Anchor::Key, String::new());
            let label = if pointer.is_empty() {
                "in this file".to_string()
            } else {
                format!("`{name}` missing here")
            };
            Diagnostic::error(
                "missing_key",
                format!("missing required key `{name}`{}", within(&pointer)),
            )
            .at(&doc.file, span, label)
            .with_help(format!(
                "add `{name}:`{}",
                describe_property(schema, &pointer, name)
            ))
        }
        ValidationErrorKind::Type { kind: expected } => {
            let expected = type_names(expected);
            let found = doc.get(&pointer).map(type_of).unwrap_or("nothing");
            let (span, label) = at(Anchor::Value, format!("expected {expected}"));
            let help = match (expected.as_str(), found) {
                ("a string", "a number" | "a boolean") => {
                    "quote the value so YAML reads it as a string".to_string()
                }
                _ => format!("give {} {expected}", field_or_value(&field)),
            };
            Diagnostic::error(
                "wrong_type",
                format!("{} must be {expected}, found {found}", subject(&field)),
            )
            .at(&doc.file, span, label)
            .with_help(help)
        }
        ValidationErrorKind::Minimum { limit } => {
            let (span, label) = at(Anchor::Value, format!("must be at least {limit}"));
            Diagnostic::error(
                "out_of_range",
                format!("{} must be at least {limit}", subject(&field)),
            )
            .at(&doc.file, span, label)
            .with_help(format!("use a value of {limit} or more"))
        }
        ValidationErrorKind::AnyOf { context } | ValidationErrorKind::OneOfNotValid { context } => {
            // Only the `input_schema: path | inline schema` union reaches here.
            let _ = context;
            let (span, label) = at(Anchor::Value, "not a path or a schema object".into());
            Diagnostic::error(
                "wrong_type",
                format!(
                    "{} must be a file path or an inline JSON Schema object",
                    subject(&field)
                ),
            )
            .at(&doc.file, span, label)
            .with_help(
                "give a path such as `./schema/input.json`, or a mapping such as `{type: object}`",
            )
        }
        _ => {
            let (span, label) = at(Anchor::Value, "here".into());
            Diagnostic::error("invalid", format!("{}: {}", subject(&field), err))
                .at(&doc.file, span, label)
        }
    };
    out.push(diag);
}

/// The values an enum schema allows: `enum`, or a `oneOf`/`anyOf` of `const`s (what
/// schemars generates for documented enum variants).
fn enum_options(root: &Value, node: Option<&Value>) -> Vec<String> {
    let Some(node) = node.map(|n| resolve(root, n)) else {
        return Vec::new();
    };
    if let Some(values) = node.get("enum").and_then(Value::as_array) {
        return values
            .iter()
            .filter_map(Value::as_str)
            .map(String::from)
            .collect();
    }
    ["oneOf", "anyOf"]
        .iter()
        .filter_map(|k| node.get(*k)?.as_array())
        .flatten()
        .filter_map(|b| resolve(root, b).get("const")?.as_str().map(String::from))
        .collect()
}

/// The keys a mapping at `pointer` may hold, found by walking the schema along the path.
fn allowed_keys(schema: &Value, pointer: &str) -> Vec<String> {
    let node = schema_at(schema, pointer);
    node.and_then(|n| n.get("properties"))
        .and_then(Value::as_object)
        .map(|p| p.keys().cloned().collect())
        .unwrap_or_default()
}

fn describe_property(schema: &Value, pointer: &str, name: &str) -> String {
    schema_at(schema, pointer)
        .and_then(|n| n.get("properties")?.get(name)?.get("description")?.as_str())
        .map(|d| {
            let words: Vec<&str> = d.split_whitespace().collect();
            format!(
                ": {}",
                lowercase_first(words.join(" ").trim_end_matches('.'))
            )
        })
        .unwrap_or_default()
}

fn lowercase_first(s: &str) -> String {
    let mut chars = s.chars();
    chars
        .next()
        .map_or_else(String::new, |c| c.to_lowercase().chain(chars).collect())
}

fn schema_at<'a>(root: &'a Value, pointer: &str) -> Option<&'a Value> {
    let mut node = resolve(root, root);
    for token in pointer.split('/').skip(1) {
        let token = token.replace("~1", "/").replace("~0", "~");
        let next = node
            .get("properties")
            .and_then(|p| p.get(&token))
            .or_else(|| node.get("additionalProperties").filter(|a| a.is_object()))
            .or_else(|| node.get("items").filter(|_| token.parse::<usize>().is_ok()))?;
        node = resolve(root, next);
    }
    Some(node)
}

fn resolve<'a>(root: &'a Value, mut node: &'a Value) -> &'a Value {
    for _ in 0..16 {
        match node
            .get("$ref")
            .and_then(Value::as_str)
            .and_then(|r| r.strip_prefix('#'))
        {
            Some(p) => match root.pointer(p) {
                Some(n) => node = n,
                None => break,
            },
            None => break,
        }
    }
    node
}

fn field_name(pointer: &str) -> String {
    pointer
        .rsplit('/')
        .next()
        .unwrap_or("")
        .replace("~1", "/")
        .replace("~0", "~")
}

fn within(pointer: &str) -> String {
    if pointer.is_empty() {
        String::new()
    } else {
        format!(" in `{}`", readable_path(pointer))
    }
}

/// `/io_contract/output_assertions/0/rule` -> `io_contract.output_assertions[0].rule`.
pub(crate) fn readable_path(pointer: &str) -> String {
    let mut out = String::new();
    for token in pointer.split('/').skip(1) {
        let token = token.replace("~1", "/").replace("~0", "~");
        if token.parse::<usize>().is_ok() {
            out.push_str(&format!("[{token}]"));
        } else {
            if !out.is_empty() {
                out.push('.');
            }
            out.push_str(&token);
        }
    }
    out
}

fn subject(field: &str) -> String {
    if field.is_empty() {
        "the file".into()
    } else if field.parse::<usize>().is_ok() {
        format!("item {field}")
    } else {
        format!("`{field}`")
    }
}

fn field_or_value(field: &str) -> String {
    if field.is_empty() || field.parse::<usize>().is_ok() {
        "the value as".into()
    } else {
        format!("`{field}` as")
    }
}

/// ` for `mode`` or ` in `faults`` (for a list item).
fn for_field(pointer: &str) -> String {
    let unescape = |t: &str| t.replace("~1", "/").replace("~0", "~");
    let mut tokens = pointer.rsplit('/');
    match (tokens.next(), tokens.next()) {
        (Some(last), Some(parent)) if last.parse::<usize>().is_ok() && !parent.is_empty() => {
            format!(" in `{}`", unescape(parent))
        }
        (Some(last), _) if !last.is_empty() => format!(" for `{}`", unescape(last)),
        _ => String::new(),
    }
}

fn short_label(help: &str) -> String {
    if help.starts_with("did you mean") {
        help.to_string()
    } else {
        "not an allowed value".to_string()
    }
}

fn show(v: &Value) -> String {
    match v {
        Value::String(s) => format!("`{s}`"),
        other => format!("`{other}`"),
    }
}

fn type_of(v: &Value) -> &'static str {
    match v {
        Value::Null => "nothing (null)",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "a list",
        Value::Object(_) => "a mapping",
    }
}

fn type_names(kind: &TypeKind) -> String {
    let name = |t: &str| match t {
        "string" => "a string",
        "boolean" => "a boolean",
        "integer" => "a whole number",
        "number" => "a number",
        "array" => "a list",
        "object" => "a mapping",
        "null" => "null",
        _ => "a value",
    };
    match kind {
        TypeKind::Single(t) => name(&t.to_string()).to_string(),
        TypeKind::Multiple(set) => {
            let names: Vec<&str> = set
                .iter()
                .map(|t| name(&t.to_string()))
                .filter(|n| *n != "null")
                .collect();
            names.join(" or ")
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn readable_paths() {
        assert_eq!(
            readable_path("/io_contract/output_assertions/0/rule"),
            "io_contract.output_assertions[0].rule"
        );
        assert_eq!(readable_path(""), "");
    }
}
