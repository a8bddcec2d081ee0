//! Printing diagnostics three ways: for people (miette, with the source line and a caret),
//! as JSON for tools (`--format json`), and as GitHub Actions annotations.

use std::fmt;

use miette::{GraphicalReportHandler, GraphicalTheme, LabeledSpan, SourceCode};
use serde_json::json;

use super::{Diagnostic, Severity};

/// How a command prints its diagnostics.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// Rendered for people, on stderr.
    Human,
    /// One JSON document on stdout.
    Json,
}

/// The human rendering of one diagnostic: `× message`, the file:line:col, the source
/// line with a caret under the span and its label, then `help:`.
pub fn render_human(diag: &Diagnostic, color: bool, width: usize) -> String {
    let theme = if color {
        GraphicalTheme::unicode()
    } else {
        GraphicalTheme::unicode_nocolor()
    };
    let handler = GraphicalReportHandler::new_themed(theme)
        .with_width(width)
        .with_links(false)
        .with_context_lines(1);
    let mut out = String::new();
    let shown = Shown::new(diag);
    if handler.render_report(&mut out, &shown).is_err() {
        // Rendering into a String cannot fail short of a miette bug; never lose the message.
        out = format!("{}: {}\n", shown.severity_word(), diag.message);
    }
    out
}

/// The JSON rendering of a whole check: `fibon.check/v1`.
pub fn render_json(diags: &[Diagnostic], files: usize) -> serde_json::Value {
    let (errors, warnings) = counts(diags);
    let items: Vec<_> = diags
        .iter()
        .map(|d| {
            let (file, line, col) = match d.position() {
                Some((f, l, c)) => (Some(f), Some(l), Some(c)),
                None => (None, None, None),
            };
            json!({
                "severity": d.severity,
                "code": format!("fibon::{}", d.code),
                "message": d.message,
                "file": file,
                "line": line,
                "col": col,
                "label": d.location.as_ref().map(|l| &l.label).filter(|l| !l.is_empty()),
                "help": d.help,
            })
        })
        .collect();
    json!({
        "schema": "fibon.check/v1",
        "files": files,
        "errors": errors,
        "warnings": warnings,
        "diagnostics": items,
    })
}

/// GitHub workflow commands, one line per diagnostic:
/// `::error file=F,line=L,col=C,title=fibon::code::message`.
pub fn render_github(diag: &Diagnostic) -> String {
    let level = match diag.severity {
        Severity::Error => "error",
        Severity::Warning => "warning",
    };
    let mut props = Vec::new();
    if let Some((file, line, col)) = diag.position() {
        props.push(format!("file={}", escape_property(&file)));
        props.push(format!("line={line}"));
        props.push(format!("col={col}"));
    }
    props.push(format!(
        "title={}",
        escape_property(&format!("fibon::{}", diag.code))
    ));
    let mut message = diag.message.clone();
    if let Some(help) = &diag.help {
        message.push_str("\nhelp: ");
        message.push_str(help);
    }
    format!("::{level} {}::{}", props.join(","), escape_data(&message))
}

/// Error and warning counts.
pub(crate) fn counts(diags: &[Diagnostic]) -> (usize, usize) {
    let errors = diags.iter().filter(|d| d.is_error()).count();
    (errors, diags.len() - errors)
}

fn escape_data(s: &str) -> String {
    s.replace('%', "%25")
        .replace('\r', "%0D")
        .replace('\n', "%0A")
}

fn escape_property(s: &str) -> String {
    escape_data(s).replace(':', "%3A").replace(',', "%2C")
}

/// Source lines longer than this (minified JSON, a fixture inlined on one line) are not
/// shown under a diagnostic: the place is named instead. Such a line is unreadable in a
/// terminal, and miette cannot render columns past 65,535.
const MAX_SHOWN_LINE: usize = 1000;

/// Adapts a [`Diagnostic`] to miette's trait for rendering.
struct Shown<'a> {
    diag: &'a Diagnostic,
    source: Option<Window>,
    /// `FILE:LINE:COL` when the source line is too long to show.
    place_only: Option<String>,
}

impl<'a> Shown<'a> {
    fn new(diag: &'a Diagnostic) -> Self {
        let Some(l) = diag.location.as_ref() else {
            return Shown {
                diag,
                source: None,
                place_only: None,
            };
        };
        match Window::around(&l.file, l.span.clone()) {
            Some(window) => Shown {
                diag,
                source: Some(window),
                place_only: None,
            },
            None => {
                let (line, col) = l.file.line_col(l.span.start);
                Shown {
                    diag,
                    source: None,
                    place_only: Some(format!("{}:{line}:{col}", l.file.display_path())),
                }
            }
        }
    }

    fn severity_word(&self) -> &'static str {
        match self.diag.severity {
            Severity::Error => "error",
            Severity::Warning => "warning",
        }
    }
}

impl fmt::Debug for Shown<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.diag.message)
    }
}

impl fmt::Display for Shown<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.diag.message)?;
        if let Some(place) = &self.place_only {
            write!(f, "\n  at {place} (the line is too long to show)")?;
        }
        Ok(())
    }
}

/// The lines a snippet shows (the span's, one either side), cut from the file: miette
/// finds lines by scanning its source from the start, so handing it the whole file made
/// each diagnostic cost the file's size.
struct Window {
    name: String,
    text: String,
    /// Where `text` starts in the file: its byte offset and 0-based line.
    offset: usize,
    line: usize,
}

impl Window {
    /// `None` when a line it would show is too long to show, or the span is not at
    /// character boundaries.
    fn around(file: &super::SourceFile, span: std::ops::Range<usize>) -> Option<Window> {
        let text = &file.text;
        let start = span.start.min(text.len());
        let end = span.end.clamp(start, text.len());
        if !text.is_char_boundary(start) || !text.is_char_boundary(end) {
            return None;
        }
        let (first, _) = file.line_col(start);
        let (last, _) = file.line_col(end);
        // 0-based: the line before the span's first, to the line after its last.
        let (from_line, to_line) = ((first - 1).saturating_sub(1), last);
        let lines: Vec<std::ops::Range<usize>> =
            (from_line..=to_line).map(|l| file.line_range(l)).collect();
        if lines.iter().any(|r| r.len() > MAX_SHOWN_LINE) {
            return None;
        }
        let (from, to) = (lines[0].start, lines[lines.len() - 1].end);
        Some(Window {
            name: file.display_path(),
            text: text[from..to].to_string(),
            offset: from,
            line: from_line,
        })
    }
}

impl SourceCode for Window {
    fn read_span<'a>(
        &'a self,
        span: &miette::SourceSpan,
        context_lines_before: usize,
        context_lines_after: usize,
    ) -> Result<Box<dyn miette::SpanContents<'a> + 'a>, miette::MietteError> {
        let local =
            miette::SourceSpan::new(span.offset().saturating_sub(self.offset).into(), span.len());
        let inner = self
            .text
            .read_span(&local, context_lines_before, context_lines_after)?;
        Ok(Box::new(
            miette::MietteSpanContents::new_named(
                self.name.clone(),
                inner.data(),
                miette::SourceSpan::new(
                    (inner.span().offset() + self.offset).into(),
                    inner.span().len(),
                ),
                inner.line() + self.line,
                inner.column(),
                inner.line_count(),
            )
            .with_language("yaml"),
        ))
    }
}

impl std::error::Error for Shown<'_> {}

impl miette::Diagnostic for Shown<'_> {
    fn code<'b>(&'b self) -> Option<Box<dyn fmt::Display + 'b>> {
        Some(Box::new(format!("fibon::{}", self.diag.code)))
    }

    fn severity(&self) -> Option<miette::Severity> {
        Some(match self.diag.severity {
            Severity::Error => miette::Severity::Error,
            Severity::Warning => miette::Severity::Warning,
        })
    }

    fn help<'b>(&'b self) -> Option<Box<dyn fmt::Display + 'b>> {
        self.diag
            .help
            .as_ref()
            .map(|h| Box::new(h) as Box<dyn fmt::Display>)
    }

    fn source_code(&self) -> Option<&dyn SourceCode> {
        self.source.as_ref().map(|s| s as &dyn SourceCode)
    }

    fn labels(&self) -> Option<Box<dyn Iterator<Item = LabeledSpan> + '_>> {
        let loc = self.diag.location.as_ref()?;
        let label = (!loc.label.is_empty()).then(|| loc.label.clone());
        let len = loc.span.end.saturating_sub(loc.span.start);
        Some(Box::new(std::iter::once(LabeledSpan::new(
            label,
            loc.span.start,
            len,
        ))))
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;
    use std::sync::Arc;

    use super::*;
    use crate::diag::SourceFile;

    #[test]
    fn github_annotations_escape_their_fields() {
        let file = Arc::new(SourceFile::from_text(
            Path::new("a,b.yaml"),
            "x: 1\ny: 2\n".into(),
        ));
        let d = Diagnostic::error("unknown_key", "unknown key `y`: 100%")
            .at(&file, 5..6, "here")
            .with_help("remove it");
        assert_eq!(
            render_github(&d),
            "::error file=a%2Cb.yaml,line=2,col=1,title=fibon%3A%3Aunknown_key::unknown key `y`: 100%25%0Ahelp: remove it"
        );
    }
}
