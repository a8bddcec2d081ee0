//! Input files as fibon-verify sees them: the text, the parsed value and, for every value,
//! where it sits in the text — so that every diagnostic can point at a line and column.

mod named;
mod spans;

use std::ops::Range;
use std::sync::Arc;

use serde_json::Value;

use crate::diag::Diagnostic;
pub use crate::diag::file::Format;
pub use crate::diag::{MAX_FILE_BYTES, SourceFile, read_text, regular_file};
pub use named::{check_input, check_output_file, read_input};
pub use spans::{Duplicate, MAX_NESTING, SpanIndex, TooDeep};

/// A parsed file: its value and the span of every value and key in it.
#[derive(Debug)]
pub struct Document {
    /// The file.
    pub file: Arc<SourceFile>,
    /// The parsed content, YAML mapped onto the JSON data model.
    pub value: Value,
    /// Where each value sits, by JSON Pointer.
    pub spans: SpanIndex,
}

/// Where a diagnostic should point within a value's entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Anchor {
    /// The mapping key that holds the value (falls back to the value).
    Key,
    /// The value itself.
    Value,
}

impl Document {
    /// Parses a file. Syntax errors come back as the error; duplicate keys come back as
    /// error diagnostics beside the document, which the caller reports with the rest.
    /// Nesting deeper than [`MAX_NESTING`] is refused first, where it starts: the parsers
    /// would take minutes over it.
    pub fn parse(file: Arc<SourceFile>) -> Result<(Document, Vec<Diagnostic>), Box<Diagnostic>> {
        let (spans, duplicates) = SpanIndex::build(&file.text).map_err(|deep| {
            Box::new(
                Diagnostic::error(
                    "too_deep",
                    format!("lists and mappings are nested deeper than {MAX_NESTING} levels"),
                )
                .at(
                    &file,
                    deep.span,
                    if deep.exact {
                        format!("level {} starts here", MAX_NESTING + 1)
                    } else {
                        "over 255 levels deep here".to_string()
                    },
                )
                .with_help(format!(
                    "flatten the structure: fibon-verify reads at most {MAX_NESTING} levels of nesting"
                )),
            )
        })?;
        let value = match file.format {
            Format::Json => serde_json::from_str::<Value>(&file.text).map_err(|err| {
                let offset = offset_of_line_col(&file.text, err.line(), err.column());
                let msg = strip_position(&err.to_string());
                Box::new(
                    Diagnostic::error("syntax", format!("invalid JSON: {msg}"))
                        .at(&file, offset..offset, "here")
                        .with_help(
                            "fix the JSON syntax; JSON allows no trailing commas or comments",
                        ),
                )
            })?,
            Format::Yaml => serde_yaml::from_str::<Value>(&file.text).map_err(|err| {
                let offset = err.location().map_or(0, |l| l.index());
                let msg = strip_position(&err.to_string());
                Box::new(
                    Diagnostic::error("syntax", format!("invalid YAML: {msg}"))
                        .at(&file, offset..offset, "here")
                        .with_help("fix the YAML syntax: check indentation, quotes and brackets"),
                )
            })?,
        };
        let problems = duplicates
            .into_iter()
            .map(|(key, span)| {
                Diagnostic::error("duplicate_key", format!("duplicate key `{key}`"))
                    .at(&file, span, "given again here")
                    .with_help("remove one of the two; only the last one would take effect")
            })
            .collect();
        Ok((Document { file, value, spans }, problems))
    }

    /// The span to point at for the value at `pointer`: the nearest ancestor that has a
    /// span, so a diagnostic always lands somewhere sensible.
    pub fn span(&self, pointer: &str, anchor: Anchor) -> Range<usize> {
        let mut p = pointer;
        loop {
            if let Some(entry) = self.spans.get(p) {
                return match anchor {
                    Anchor::Key => entry.key.clone().unwrap_or_else(|| entry.value.clone()),
                    Anchor::Value => entry.value.clone(),
                };
            }
            match p.rfind('/') {
                Some(i) => p = &p[..i],
                None => return 0..0,
            }
        }
    }

    /// An error pointing at the key or value at `pointer`.
    pub fn error(
        &self,
        code: &'static str,
        pointer: &str,
        anchor: Anchor,
        message: impl Into<String>,
        label: impl Into<String>,
    ) -> Diagnostic {
        Diagnostic::error(code, message).at(&self.file, self.span(pointer, anchor), label)
    }

    /// A warning pointing at the key or value at `pointer`.
    pub fn warning(
        &self,
        code: &'static str,
        pointer: &str,
        anchor: Anchor,
        message: impl Into<String>,
        label: impl Into<String>,
    ) -> Diagnostic {
        Diagnostic::warning(code, message).at(&self.file, self.span(pointer, anchor), label)
    }

    /// `path:line` of the value at `pointer`, for messages that refer to another place.
    pub fn place(&self, pointer: &str) -> String {
        let (line, _) = self.file.line_col(self.span(pointer, Anchor::Value).start);
        format!("{}:{line}", self.file.display_path())
    }

    /// The value at a JSON Pointer.
    pub fn get(&self, pointer: &str) -> Option<&Value> {
        self.value.pointer(pointer)
    }
}

/// Byte offset of a 1-based line and column.
fn offset_of_line_col(text: &str, line: usize, col: usize) -> usize {
    let mut offset = 0;
    for (i, l) in text.split_inclusive('\n').enumerate() {
        if i + 1 == line {
            let col_bytes: usize = l
                .chars()
                .take(col.saturating_sub(1))
                .map(char::len_utf8)
                .sum();
            return offset + col_bytes.min(l.len());
        }
        offset += l.len();
    }
    text.len()
}

/// Drops the " at line X column Y" that parsers append: the caret already says it.
fn strip_position(msg: &str) -> String {
    match msg.find(" at line ") {
        Some(i) => msg[..i].to_string(),
        None => msg.to_string(),
    }
}

/// Escapes one JSON Pointer reference token (RFC 6901).
pub fn escape_token(token: &str) -> String {
    token.replace('~', "~0").replace('/', "~1")
}

/// Joins a pointer and a token.
pub fn join(pointer: &str, token: impl std::fmt::Display) -> String {
    format!("{pointer}/{}", escape_token(&token.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    #[test]
    fn line_col_counts_characters_not_bytes() {
        let f = SourceFile::from_text(Path::new("a.yaml"), "a: 1\nb: \"检索\" x\n".into());
        let x = f.text.find('x').unwrap();
        assert_eq!(f.line_col(x), (2, 9));
        assert_eq!(f.line_col(0), (1, 1));
    }

    #[test]
    fn offsets_of_line_and_column() {
        assert_eq!(offset_of_line_col("ab\ncd\n", 2, 2), 4);
        assert_eq!(offset_of_line_col("ab", 9, 1), 2);
    }
}
