//! The `kafka-codegen diff` command, kept here so that the binary stays thin
//! and the command can be tested in-process.

use std::io::{self, Write};
use std::path::Path;

use super::{diff_sets, to_json, unloadable_files, DiffError, DiffSummary};
use crate::model::SchemaSet;

/// The output format of `kafka-codegen diff`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[cfg_attr(feature = "cli", derive(clap::ValueEnum))]
pub enum Format {
    /// One line per change, then a summary line.
    #[default]
    Text,
    /// A JSON array of changes; the summary goes to standard error.
    Json,
}

/// Runs `kafka-codegen diff OLD NEW` and returns its exit status:
///
/// - `0`: no breaking change and no removed message;
/// - `1`: a breaking change or a removed message, or a schema that could not
///   be read or failed validation (its errors are written to `err`). With
///   `skip_invalid`, files that failed to load are left out of the comparison
///   (named on `err`) instead.
///
/// Changes go to `out`; diagnostics, notes and (for JSON) the summary go to `err`.
pub fn run(
    old: &Path,
    new: &Path,
    format: Format,
    skip_invalid: bool,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> u8 {
    match run_inner(old, new, format, skip_invalid, out, err) {
        Ok(status) => status,
        Err(error) => {
            // Nothing more can be reported if standard error is gone too.
            let _ = writeln!(err, "error: {error}");
            1
        }
    }
}

#[derive(Debug, thiserror::Error)]
enum RunError {
    #[error(transparent)]
    Diff(#[from] DiffError),
    #[error("cannot write output: {0}")]
    Io(#[from] io::Error),
}

fn run_inner(
    old: &Path,
    new: &Path,
    format: Format,
    skip_invalid: bool,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> Result<u8, RunError> {
    let old_set = SchemaSet::load(&[old]).map_err(|source| DiffError::Load {
        side: "old",
        source,
    })?;
    let new_set = SchemaSet::load(&[new]).map_err(|source| DiffError::Load {
        side: "new",
        source,
    })?;
    let mut errors = 0;
    for diagnostic in old_set.diagnostics.iter().chain(&new_set.diagnostics) {
        if diagnostic.is_error() {
            writeln!(err, "{diagnostic}")?;
            errors += 1;
        }
    }
    if errors > 0 {
        if !skip_invalid {
            writeln!(
                err,
                "error: {errors} schema error(s); fix them, or pass --skip-invalid to compare the other files"
            )?;
            return Ok(1);
        }
        for file in unloadable_files(&old_set, &new_set) {
            writeln!(
                err,
                "warning: {file} left out of the comparison: it failed to load in one of the sets"
            )?;
        }
    }
    let changes = diff_sets(&old_set, &new_set);
    let summary = DiffSummary::of(&changes);
    match format {
        Format::Text => {
            for change in &changes {
                writeln!(out, "{change}")?;
            }
            writeln!(out, "{summary}")?;
        }
        Format::Json => {
            out.write_all(to_json(&changes)?.as_bytes())?;
            writeln!(err, "{summary}")?;
        }
    }
    out.flush()?;
    Ok(u8::from(summary.fails()))
}
