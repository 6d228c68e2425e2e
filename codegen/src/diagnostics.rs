//! Errors and warnings about schema files, located by file, line and column.

use std::fmt;
use std::path::{Path, PathBuf};

/// A position in a schema file, as a byte offset into its text.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Default)]
pub struct Span {
    /// Byte offset from the start of the file.
    pub offset: usize,
}

impl Span {
    /// The span starting at `offset`.
    pub fn at(offset: usize) -> Self {
        Span { offset }
    }
}

/// How serious a diagnostic is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Severity {
    /// Generation goes on; the schema should still be fixed.
    Warning,
    /// The schema cannot be used.
    Error,
}

impl fmt::Display for Severity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Severity::Warning => "warning",
            Severity::Error => "error",
        })
    }
}

/// A problem found in one file, before it is tied to the file's name.
#[derive(Debug, Clone, PartialEq)]
pub struct Diagnostic {
    /// Where the problem is.
    pub span: Span,
    /// Error or warning.
    pub severity: Severity,
    /// What is wrong, in one sentence.
    pub message: String,
}

impl Diagnostic {
    /// An error at `span`.
    pub fn error(span: Span, message: impl Into<String>) -> Self {
        Diagnostic {
            span,
            severity: Severity::Error,
            message: message.into(),
        }
    }

    /// A warning at `span`.
    pub fn warning(span: Span, message: impl Into<String>) -> Self {
        Diagnostic {
            span,
            severity: Severity::Warning,
            message: message.into(),
        }
    }

    /// Ties this diagnostic to `file`, turning its offset into line and column.
    pub fn locate(self, file: &Path, text: &str) -> Located {
        let (line, column) = line_column(text, self.span.offset);
        Located {
            file: file.to_path_buf(),
            line,
            column,
            severity: self.severity,
            message: self.message,
        }
    }
}

/// A diagnostic with its file, line and column, printed as
/// `file:line:col: error: message`.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Located {
    /// The schema file.
    pub file: PathBuf,
    /// 1-based line.
    pub line: usize,
    /// 1-based column, counted in characters.
    pub column: usize,
    /// Error or warning.
    pub severity: Severity,
    /// What is wrong.
    pub message: String,
}

impl Located {
    /// True for errors, false for warnings.
    pub fn is_error(&self) -> bool {
        self.severity == Severity::Error
    }
}

impl fmt::Display for Located {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}:{}:{}: {}: {}",
            self.file.display(),
            self.line,
            self.column,
            self.severity,
            self.message
        )
    }
}

/// The 1-based line and column of a byte offset.
pub fn line_column(text: &str, offset: usize) -> (usize, usize) {
    let offset = offset.min(text.len());
    let before = text.get(..offset).unwrap_or(text);
    let line = before.matches('\n').count() + 1;
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    let column = before[line_start..].chars().count() + 1;
    (line, column)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_and_column_are_one_based() {
        let text = "ab\ncd\n\te";
        assert_eq!(line_column(text, 0), (1, 1));
        assert_eq!(line_column(text, 4), (2, 2));
        assert_eq!(line_column(text, 7), (3, 2));
    }

    #[test]
    fn located_prints_like_a_compiler() {
        let d = Diagnostic::error(Span::at(3), "bad").locate(Path::new("x.json"), "ab\ncd");
        assert_eq!(d.to_string(), "x.json:2:1: error: bad");
    }
}
