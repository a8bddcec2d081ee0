//! Candidates for `fibon-verify gate`, read from JSONL (`{"id", "input", "output",
//! "facts"}` per line, also `forbidden` and `evidence`): a line that cannot be used is
//! kept as such, for the report to name; a candidate id given twice is refused (65) at
//! its line before anything is judged, since the report's cells are keyed by it.

use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;

use serde_json::Value;

use super::Candidate;
use crate::diag::Diagnostic;
use crate::errors::ExpectedError;
use crate::source::SourceFile;

/// A line that is not a candidate.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnusableLine {
    /// Its number, from 1.
    pub line: usize,
    /// Why, for a person.
    pub reason: String,
}

/// Reads the candidates file named on the command line: one entry per non-blank line, in
/// order. Exit 64 naming it when it cannot be read, 65 at each id given again.
pub fn read(path: &Path) -> Result<Vec<Result<Candidate, UnusableLine>>, ExpectedError> {
    let text = crate::source::read_input(path)?;
    let file = Arc::new(SourceFile::from_text(path, text));
    let mut parsed = Vec::new();
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
        let c = parse(line).map_err(|reason| UnusableLine {
            line: i + 1,
            reason,
        });
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
            path: path.to_path_buf(),
            diagnostics: duplicates,
        });
    }
    Ok(parsed)
}

/// One line as a candidate, or why it is not one.
fn parse(line: &str) -> Result<Candidate, String> {
    let v: Value = serde_json::from_str(line).map_err(|e| format!("not JSON: {e}"))?;
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
    let id = text("id").ok_or_else(|| "no `id`".to_string())?;
    let output = match &v["output"] {
        Value::String(s) => s.clone(),
        Value::Null => return Err("no `output`".into()),
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_line_without_output_or_json_says_why() {
        assert_eq!(parse("{\"id\": \"a\"}").unwrap_err(), "no `output`");
        assert!(parse("nope").unwrap_err().starts_with("not JSON"));
        let c = parse(r#"{"id": "a", "output": {"k": 1}, "facts": ["x", 2]}"#).unwrap();
        assert_eq!(
            (c.output.as_str(), c.facts),
            ("{\"k\":1}", vec!["x".to_string()])
        );
    }
}
