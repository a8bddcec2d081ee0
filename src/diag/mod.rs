//! Diagnostics: every problem fibon-verify finds in a user's files, with the file, the
//! span to put a caret under, and a `help:` that says what to do. Loading collects them
//! all (every problem in every file, not only the first); `render` prints them.

pub mod file;
pub(crate) mod render;
pub use file::{MAX_FILE_BYTES, SourceFile, read_text, regular_file};
mod suggest;

use std::ops::Range;
use std::sync::Arc;

pub use render::{Format, render_github, render_human, render_json};
pub use suggest::{did_you_mean, suggestion_help};

/// How bad a problem is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// The file is still usable; `check` exits 0.
    Warning,
    /// The file is invalid; `check` exits 65.
    Error,
}

/// One problem in one place.
#[derive(Debug, Clone)]
pub struct Diagnostic {
    /// Error or warning.
    pub severity: Severity,
    /// A stable, machine-readable id, such as `unknown_key` (shown as `fibon::unknown_key`).
    pub code: &'static str,
    /// A lowercase fragment saying what is wrong.
    pub message: String,
    /// The file and the byte range it points at, with the label under the caret.
    pub location: Option<Location>,
    /// What to do about it.
    pub help: Option<String>,
}

/// Where a diagnostic points.
#[derive(Debug, Clone)]
pub struct Location {
    /// The file.
    pub file: Arc<SourceFile>,
    /// Byte range in the file's text.
    pub span: Range<usize>,
    /// The text under the caret.
    pub label: String,
}

impl Diagnostic {
    /// An error.
    pub fn error(code: &'static str, message: impl Into<String>) -> Diagnostic {
        Diagnostic {
            severity: Severity::Error,
            code,
            message: message.into(),
            location: None,
            help: None,
        }
    }

    /// A warning.
    pub fn warning(code: &'static str, message: impl Into<String>) -> Diagnostic {
        Diagnostic {
            severity: Severity::Warning,
            ..Diagnostic::error(code, message)
        }
    }

    /// Points the diagnostic at a span of a file.
    pub fn at(
        mut self,
        file: &Arc<SourceFile>,
        span: Range<usize>,
        label: impl Into<String>,
    ) -> Self {
        self.location = Some(Location {
            file: Arc::clone(file),
            span,
            label: label.into(),
        });
        self
    }

    /// Names a file without a span (the problem is the file as a whole).
    pub fn in_file(self, file: &Arc<SourceFile>) -> Self {
        self.at(file, 0..0, "")
    }

    /// Adds the help line.
    pub fn with_help(mut self, help: impl Into<String>) -> Self {
        self.help = Some(help.into());
        self
    }

    /// Adds a help line if there is one.
    pub fn with_help_opt(mut self, help: Option<String>) -> Self {
        if help.is_some() {
            self.help = help;
        }
        self
    }

    /// Is it an error?
    pub fn is_error(&self) -> bool {
        self.severity == Severity::Error
    }

    /// The path, 1-based line and column it points at, if it points anywhere.
    pub fn position(&self) -> Option<(String, usize, usize)> {
        let loc = self.location.as_ref()?;
        let (line, col) = loc.file.line_col(loc.span.start);
        Some((loc.file.display_path(), line, col))
    }
}

/// Sorts diagnostics into a stable order: by file, then position, then message.
pub fn sort(diags: &mut [Diagnostic]) {
    diags.sort_by(|a, b| {
        let key = |d: &Diagnostic| {
            d.location
                .as_ref()
                .map(|l| (l.file.display_path(), l.span.start))
                .unwrap_or_default()
        };
        key(a).cmp(&key(b)).then_with(|| a.message.cmp(&b.message))
    });
}
