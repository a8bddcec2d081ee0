//! The JSON Schemas of contracts, scenarios and `fibon.yaml`, generated from the raw
//! structs, and the structural check that runs them over a parsed file. Generating them
//! keeps three things in step: what serde accepts, what `fibon-verify schema` prints (and
//! `schemas/*.json` commits, for editors), and what `check` reports.

mod structure;

use schemars::JsonSchema;
use serde_json::Value;

pub use structure::check_structure;

/// The kinds of input file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, clap::ValueEnum)]
pub enum FileKind {
    /// A Skill contract (`contracts/*.yaml|*.yml|*.json`).
    Contract,
    /// A scenario (`scenarios/**/*.yaml`).
    Scenario,
    /// The project config (`fibon.yaml`).
    Config,
    /// A quality policy (`quality.policy` in fibon.yaml).
    Policy,
}

impl FileKind {
    /// Every kind.
    pub const ALL: [FileKind; 4] = [
        FileKind::Contract,
        FileKind::Scenario,
        FileKind::Config,
        FileKind::Policy,
    ];

    /// The kind's name, as in `schemas/NAME.schema.json`.
    pub fn name(self) -> &'static str {
        match self {
            FileKind::Contract => "contract",
            FileKind::Scenario => "scenario",
            FileKind::Config => "config",
            FileKind::Policy => "policy",
        }
    }
}

/// A kind's JSON Schema, with its compiled validator. The registry of the four kinds is
/// the loading layer's ([`crate::project::schema_of`]), which knows their raw structs.
pub struct Schema {
    /// The kind of file it describes.
    pub kind: FileKind,
    /// The schema (what `fibon-verify schema KIND` prints).
    pub value: Value,
    validator: jsonschema::Validator,
}

impl Schema {
    /// The schema generated from the raw struct `T`.
    pub fn of<T: JsonSchema>(kind: FileKind) -> Schema {
        let value = generate::<T>(kind);
        let validator = jsonschema::validator_for(&value).expect("generated schemas compile");
        Schema {
            kind,
            value,
            validator,
        }
    }
}

/// The schema of `T`, tidied for people and for precise errors: `Option<Struct>` becomes
/// the struct's schema (no `anyOf` with `null`, whose errors say nothing useful).
fn generate<T: JsonSchema>(kind: FileKind) -> Value {
    let mut schema = schemars::schema_for!(T).to_value();
    drop_null_branches(&mut schema);
    if let Value::Object(map) = &mut schema {
        map.insert(
            "$id".into(),
            Value::String(format!(
                "https://fibon-verify.dev/schemas/{}.schema.json",
                kind.name()
            )),
        );
    }
    schema
}

fn drop_null_branches(v: &mut Value) {
    match v {
        Value::Object(map) => {
            if let Some(Value::Array(branches)) = map.get("anyOf") {
                let non_null: Vec<Value> = branches
                    .iter()
                    .filter(|b| b.get("type") != Some(&Value::String("null".into())))
                    .cloned()
                    .collect();
                if non_null.len() == 1 && branches.len() == 2 {
                    map.remove("anyOf");
                    if let Value::Object(inner) = &non_null[0] {
                        for (k, val) in inner {
                            map.entry(k.clone()).or_insert_with(|| val.clone());
                        }
                    }
                }
            }
            map.values_mut().for_each(drop_null_branches);
        }
        Value::Array(items) => items.iter_mut().for_each(drop_null_branches),
        _ => {}
    }
}

/// Why a user's JSON Schema (an `input_schema`) is invalid: the pointer inside it, a
/// message and a help line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SchemaProblem {
    /// JSON Pointer of the offending part, inside the schema.
    pub pointer: String,
    /// What is wrong.
    pub message: String,
    /// What to do.
    pub help: String,
}

/// Checks that a value is a valid JSON Schema (against its draft's meta-schema) that
/// compiles.
pub fn check_json_schema(schema: &Value) -> Result<(), SchemaProblem> {
    const TYPES: [&str; 7] = [
        "string", "number", "integer", "boolean", "object", "array", "null",
    ];
    let at = |p: &str| {
        if p.is_empty() {
            String::new()
        } else {
            format!(" at `{p}`")
        }
    };
    let e = match jsonschema::meta::validate(schema) {
        // Valid against the meta-schema, but it must also compile (a `pattern` that is not
        // a regular expression, say): a schema that cannot be applied would check nothing.
        Ok(()) => {
            match jsonschema::validator_for(schema) {
                Ok(_) => return Ok(()),
                Err(e) => {
                    let pointer = e.instance_path().as_str().to_string();
                    let regex = matches!(e.kind(), jsonschema::error::ValidationErrorKind::Format { format } if format == "regex");
                    return Err(if regex {
                        SchemaProblem {
                        message: format!(
                            "{} is not a regular expression{}",
                            e.instance(),
                            at(&pointer)
                        ),
                        help: "a `pattern` is an ECMA-262 regular expression; a schema that cannot be compiled would check nothing".into(),
                        pointer,
                    }
                    } else {
                        SchemaProblem {
                        message: format!("the schema cannot be compiled{}: {e}", at(&pointer)),
                        help: "fix the keyword; a schema that cannot be compiled would check nothing".into(),
                        pointer,
                    }
                    });
                }
            }
        }
        Err(e) => e,
    };
    let pointer = e.instance_path().as_str().to_string();
    if pointer.ends_with("/type")
        && let Some(word) = schema.pointer(&pointer).and_then(Value::as_str)
    {
        return Err(SchemaProblem {
            message: format!("`{word}` is not a JSON Schema type{}", at(&pointer)),
            help: crate::diag::suggestion_help(word, &TYPES, "type"),
            pointer,
        });
    }
    Err(SchemaProblem {
        message: format!("not a valid JSON Schema{}: {e}", at(&pointer)),
        help:
            "fix the schema; https://json-schema.org/understanding-json-schema lists the keywords"
                .into(),
        pointer,
    })
}

/// A file parsed and checked against its kind's schema: the document (for pointing
/// diagnostics at it), the raw struct when the structure is sound, and the problems.
#[derive(Debug)]
pub struct Parsed<T> {
    /// The parsed document, unless the syntax is broken.
    pub doc: Option<std::sync::Arc<crate::source::Document>>,
    /// The raw struct, unless the syntax or structure is broken.
    pub raw: Option<T>,
    /// Every problem found so far.
    pub diags: Vec<crate::diag::Diagnostic>,
}

/// Parses a file as a `kind`: syntax, then the schema (every problem), then serde.
pub fn parse_as<T: serde::de::DeserializeOwned>(
    schema: &Schema,
    file: std::sync::Arc<crate::source::SourceFile>,
) -> Parsed<T> {
    let (doc, mut diags) = match crate::source::Document::parse(file) {
        Ok(parsed) => parsed,
        Err(diag) => {
            return Parsed {
                doc: None,
                raw: None,
                diags: vec![*diag],
            };
        }
    };
    diags.extend(check_structure(schema, &doc));
    let raw = if diags.iter().any(|d| d.is_error()) {
        None
    } else {
        match serde_json::from_value::<T>(doc.value.clone()) {
            Ok(raw) => Some(raw),
            Err(err) => {
                // The schema is generated from `T`, so this means the two disagree: a bug,
                // but the user still gets a located message rather than a panic.
                diags.push(
                    crate::diag::Diagnostic::error(
                        "invalid",
                        format!("invalid {}: {err}", schema.kind.name()),
                    )
                    .in_file(&doc.file),
                );
                None
            }
        }
    };
    Parsed {
        doc: Some(std::sync::Arc::new(doc)),
        raw,
        diags,
    }
}
