//! Raw scenario -> [`Scenario`]: fixture bodies given exactly once and loaded, matchers
//! compiled, ids and inputs usable. Defaults that depend on the contract (`remove`,
//! `faults`) are resolved by the project loader, which sees both.

use indexmap::IndexMap;
use serde_json::Value;

use super::model::*;
use super::raw::{RawResponse, RawScenario};
use crate::diag::{Diagnostic, did_you_mean};
use crate::source::{Anchor, Document, join};

/// Validates a raw scenario; problems go to `diags`. `None` when any is an error.
/// `remove` and `faults` stay empty when the file leaves them out: see
/// [`crate::project`] for their defaults.
pub fn validate(doc: &Document, raw: RawScenario, diags: &mut Vec<Diagnostic>) -> Option<Scenario> {
    let before = diags.iter().filter(|d| d.is_error()).count();
    if raw.id.is_empty()
        || !raw
            .id
            .chars()
            .all(|c| c.is_alphanumeric() || "-_.".contains(c))
    {
        diags.push(
            doc.error(
                "invalid_id",
                "/id",
                Anchor::Value,
                format!("invalid scenario id `{}`", raw.id),
                "not a usable id",
            )
            .with_help(
                "ids appear in cell ids and file names: use letters, digits, `-`, `_` and `.`",
            ),
        );
    }
    if raw.input.trim().is_empty() {
        diags.push(
            doc.error(
                "empty_input",
                "/input",
                Anchor::Value,
                "the scenario's `input` is empty",
                "empty",
            )
            .with_help("write the user's request the agent is given"),
        );
    }
    let mut tools = IndexMap::new();
    for (name, tool) in raw.tools.unwrap_or_default() {
        let base = join("/tools", &name);
        let input_schema = tool
            .input_schema
            .map_or_else(|| serde_json::json!({"type": "object"}), Value::Object);
        if let Err(problem) = crate::schema::check_json_schema(&input_schema) {
            let pointer = format!("{}{}", join(&base, "input_schema"), problem.pointer);
            diags.push(
                doc.error(
                    "input_schema",
                    &pointer,
                    Anchor::Value,
                    format!(
                        "invalid `input_schema` of tool `{name}`: {}",
                        problem.message
                    ),
                    "invalid JSON Schema",
                )
                .with_help(problem.help),
            );
        }
        if tool.responses.is_empty() {
            diags.push(
                doc.error(
                    "no_responses",
                    &join(&base, "responses"),
                    Anchor::Key,
                    format!("tool `{name}` has no responses"),
                    "empty",
                )
                .with_help("add at least one response; a call that matches none is a fixture_miss"),
            );
        }
        let properties: Vec<String> = input_schema
            .get("properties")
            .and_then(Value::as_object)
            .map(|p| p.keys().cloned().collect())
            .unwrap_or_default();
        let responses = tool
            .responses
            .into_iter()
            .enumerate()
            .filter_map(|(i, r)| {
                response(
                    doc,
                    &join(&join(&base, "responses"), i),
                    r,
                    &properties,
                    diags,
                )
            })
            .collect();
        tools.insert(
            name,
            FixtureTool {
                description: tool.description.unwrap_or_default(),
                input_schema,
                responses,
            },
        );
    }
    let expect = raw.expect;
    let facts = expect
        .as_ref()
        .and_then(|e| e.facts.clone())
        .unwrap_or_default();
    let forbidden = expect.and_then(|e| e.forbidden).unwrap_or_default();
    for (list, values) in [("facts", &facts), ("forbidden", &forbidden)] {
        for (i, v) in values.iter().enumerate() {
            if v.trim().is_empty() {
                diags.push(
                    doc.error(
                        "empty_fact",
                        &format!("/expect/{list}/{i}"),
                        Anchor::Value,
                        format!("empty string in `expect.{list}`"),
                        "empty",
                    )
                    .with_help("an empty fact matches every answer; remove it"),
                );
            }
        }
    }
    for (i, f) in forbidden.iter().enumerate() {
        if facts.contains(f) {
            diags.push(
                doc.error(
                    "contradictory_facts",
                    &format!("/expect/forbidden/{i}"),
                    Anchor::Value,
                    format!("`{f}` is both an expected and a forbidden fact"),
                    "also in `facts`",
                )
                .with_help("remove it from one of the two lists"),
            );
        }
    }
    let mut schema_drift = IndexMap::new();
    for (tool, schema) in raw.schema_drift.unwrap_or_default() {
        let schema = Value::Object(schema);
        if let Err(problem) = crate::schema::check_json_schema(&schema) {
            let pointer = format!("{}{}", join("/schema_drift", &tool), problem.pointer);
            diags.push(
                doc.error(
                    "input_schema",
                    &pointer,
                    Anchor::Value,
                    format!("invalid drift schema of tool `{tool}`: {}", problem.message),
                    "invalid JSON Schema",
                )
                .with_help(problem.help),
            );
        }
        schema_drift.insert(tool, schema);
    }
    let failed = diags.iter().filter(|d| d.is_error()).count() > before;
    (!failed).then(|| Scenario {
        schema_drift,
        id: raw.id,
        skill: raw.skill,
        complexity: raw.complexity,
        input: raw.input,
        tools,
        remove: raw.remove.unwrap_or_default(),
        faults: raw.faults.unwrap_or_default(),
        approval: raw.approval.unwrap_or_default(),
        facts,
        forbidden,
        source: doc.file.path.clone(),
        digest: super::model::digest(&doc.file.text),
    })
}

fn response(
    doc: &Document,
    base: &str,
    r: RawResponse,
    properties: &[String],
    diags: &mut Vec<Diagnostic>,
) -> Option<FixtureResponse> {
    let given: Vec<&str> = [
        ("text", r.text.is_some()),
        ("file", r.file.is_some()),
        ("json", r.json.is_some()),
    ]
    .into_iter()
    .filter_map(|(k, present)| present.then_some(k))
    .collect();
    let body = match (given.as_slice(), r.text, r.file, r.json) {
        (["text"], Some(text), _, _) => Some(Body::Text(text)),
        (["json"], _, _, Some(json)) => Some(Body::Json(json)),
        (["file"], _, Some(rel), _) => {
            let path = doc.file.dir().join(&rel);
            match crate::source::read_text(&path, crate::source::MAX_FILE_BYTES) {
                Ok(text) => Some(Body::Text(text)),
                Err(e) => {
                    diags.push(
                        doc.error(
                            "fixture_file",
                            &join(base, "file"),
                            Anchor::Value,
                            format!("cannot read fixture file `{rel}`: {e}"),
                            "cannot read this file",
                        )
                        .with_help(format!(
                            "the path is relative to the scenario file; it resolved to {}",
                            path.display()
                        )),
                    );
                    None
                }
            }
        }
        ([], ..) => {
            diags.push(
                doc.error("response_body", base, Anchor::Value, "response has no body", "no `text`, `file` or `json`")
                    .with_help("give the response exactly one of `text: \"...\"`, `file: PATH` or `json: {...}`"),
            );
            None
        }
        _ => {
            diags.push(
                doc.error(
                    "response_body",
                    &join(base, given[1]),
                    Anchor::Key,
                    format!(
                        "response has {} bodies: `{}`",
                        given.len(),
                        given.join("` and `")
                    ),
                    "second body",
                )
                .with_help("give exactly one of `text`, `file` or `json`"),
            );
            None
        }
    };
    let mut when = Vec::new();
    for (arg, value) in r.when.unwrap_or_default() {
        let ptr = join(&join(base, "when"), &arg);
        if !properties.is_empty() && !properties.contains(&arg) {
            let hint = did_you_mean(&arg, properties.iter().map(String::as_str));
            diags.push(
                doc.warning(
                    "unknown_argument",
                    &ptr,
                    Anchor::Key,
                    format!("`{arg}` is not an argument of this tool's `input_schema`"),
                    "no such property",
                )
                .with_help(match hint {
                    Some(h) => format!("did you mean `{h}`?"),
                    None => format!("arguments are: {}", properties.join(", ")),
                }),
            );
        }
        if let Some(m) = matcher(doc, &ptr, value, diags) {
            when.push((arg, m));
        }
    }
    Some(FixtureResponse { when, body: body? })
}

/// `{prefix: s}`, `{regex: s}`, or any other value matched exactly.
fn matcher(
    doc: &Document,
    ptr: &str,
    value: Value,
    diags: &mut Vec<Diagnostic>,
) -> Option<Matcher> {
    let Value::Object(map) = &value else {
        return Some(Matcher::Exact(value));
    };
    if map.len() != 1 {
        if map.keys().any(|k| k == "prefix" || k == "regex") {
            diags.push(
                doc.error("matcher", ptr, Anchor::Value, "a matcher has exactly one key", "more than one key")
                    .with_help("write `{prefix: \"...\"}` or `{regex: \"...\"}`; to match a mapping exactly, give a mapping without those keys"),
            );
            return None;
        }
        return Some(Matcher::Exact(value));
    }
    let (key, inner) = map.iter().next().expect("one entry");
    let mut as_string = |what: &str| match inner.as_str() {
        Some(s) => Some(s.to_string()),
        None => {
            diags.push(
                doc.error(
                    "matcher",
                    &join(ptr, key),
                    Anchor::Value,
                    format!("a `{what}` matcher takes a string"),
                    "not a string",
                )
                .with_help("quote the value"),
            );
            None
        }
    };
    match key.as_str() {
        "prefix" => as_string("prefix").map(Matcher::Prefix),
        "regex" => {
            let src = as_string("regex")?;
            match regex::Regex::new(&src) {
                Ok(re) => Some(Matcher::Regex(re)),
                Err(e) => {
                    let why = e.to_string();
                    let why = why
                        .lines()
                        .rev()
                        .find(|l| l.starts_with("error:"))
                        .unwrap_or(&why)
                        .trim_start_matches("error: ");
                    diags.push(
                        doc.error("matcher", &join(ptr, "regex"), Anchor::Value, format!("invalid regex `{src}`: {why}"), "does not compile")
                            .with_help("write a regex in Rust `regex` syntax (no look-around or backreferences)"),
                    );
                    None
                }
            }
        }
        other => match did_you_mean(other, ["prefix", "regex"]) {
            Some(hint) => {
                diags.push(
                    doc.error("matcher", &join(ptr, other), Anchor::Key, format!("unknown matcher `{other}`"), format!("did you mean `{hint}`?"))
                        .with_help(format!("did you mean `{hint}`? matchers are an exact value, `{{prefix: ...}}` or `{{regex: ...}}`")),
                );
                None
            }
            None => Some(Matcher::Exact(value)),
        },
    }
}
