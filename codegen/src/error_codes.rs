//! Generates the `ErrorCode` enum from a table of Kafka's error codes.
//!
//! The table is tab-separated text with the header line [`HEADER`] (the
//! column names `code`, `name`, `retriable`, `description`), then one line
//! per code: the int16 code, Kafka's name for it
//! (`UNKNOWN_TOPIC_OR_PARTITION`), `true` or `false`, and a one-sentence
//! description. Each code becomes a variant
//! named in UpperCamelCase (`UnknownTopicOrPartition`), and `Unknown(i16)`
//! holds any code the table does not list.

use std::path::{Path, PathBuf};

use heck::ToUpperCamelCase;
use proc_macro2::{Literal, TokenStream};
use quote::quote;

use crate::rust_source::{doc_attrs, ident, parse_file, unparse};

/// The header line the table must start with.
pub const HEADER: &str = "code\tname\tretriable\tdescription";

/// One row of the table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ErrorCodeRow {
    /// The int16 code.
    pub code: i16,
    /// Kafka's name, such as `UNKNOWN_TOPIC_OR_PARTITION`.
    pub name: String,
    /// Whether a client may retry the request that failed with it.
    pub retriable: bool,
    /// What the code means.
    pub description: String,
}

/// A fault in the table, or in reading or writing it.
#[derive(Debug, thiserror::Error)]
pub enum ErrorCodesError {
    /// The table could not be read, or the output written.
    #[error("{}: {source}", path.display())]
    Io {
        /// The file involved.
        path: PathBuf,
        /// The underlying error.
        #[source]
        source: std::io::Error,
    },
    /// A line of the table is malformed.
    #[error("{}:{line}: {message}", path.display())]
    Table {
        /// The table's file.
        path: PathBuf,
        /// The 1-based line number.
        line: usize,
        /// What is wrong.
        message: String,
    },
    /// The generated code did not parse; a bug in the generator.
    #[error(transparent)]
    Emit(#[from] crate::error::EmitError),
}

/// Reads the table from `text`; `path` only names it in errors.
pub fn parse(text: &str, path: &Path) -> Result<Vec<ErrorCodeRow>, ErrorCodesError> {
    let fault = |line: usize, message: String| ErrorCodesError::Table {
        path: path.to_path_buf(),
        line,
        message,
    };
    let mut lines = text.lines().enumerate().map(|(i, l)| (i + 1, l));
    match lines.next() {
        Some((_, header)) if header == HEADER => {}
        _ => return Err(fault(1, format!("the first line must be `{HEADER}`"))),
    }
    let mut rows: Vec<ErrorCodeRow> = Vec::new();
    for (number, line) in lines.filter(|(_, l)| !l.is_empty()) {
        let columns: Vec<&str> = line.split('\t').collect();
        let [code, name, retriable, description] = columns[..] else {
            let found = columns.len();
            return Err(fault(
                number,
                format!("4 tab-separated columns, found {found}"),
            ));
        };
        let code: i16 = code
            .parse()
            .map_err(|_| fault(number, format!("code `{code}` is not an int16")))?;
        let valid_name = !name.is_empty()
            && name
                .bytes()
                .all(|b| b.is_ascii_uppercase() || b.is_ascii_digit() || b == b'_');
        if !valid_name {
            return Err(fault(
                number,
                format!("name `{name}` is not UPPER_SNAKE_CASE"),
            ));
        }
        let retriable = match retriable {
            "true" => true,
            "false" => false,
            other => {
                return Err(fault(
                    number,
                    format!("retriable must be true or false, not `{other}`"),
                ))
            }
        };
        if description.trim().is_empty() {
            return Err(fault(number, format!("{name} has no description")));
        }
        if let Some(earlier) = rows.iter().find(|r| r.code == code || r.name == name) {
            return Err(fault(
                number,
                format!(
                    "{name} ({code}) repeats the code or name of {} ({})",
                    earlier.name, earlier.code
                ),
            ));
        }
        rows.push(ErrorCodeRow {
            code,
            name: name.to_owned(),
            retriable,
            description: description.trim().to_owned(),
        });
    }
    Ok(rows)
}

/// The Rust source of the `ErrorCode` enum for `rows`, formatted.
pub fn generate(rows: &[ErrorCodeRow]) -> Result<String, ErrorCodesError> {
    let variants: Vec<_> = rows
        .iter()
        .map(|r| ident(&r.name.to_upper_camel_case()))
        .collect();
    let codes: Vec<_> = rows
        .iter()
        .map(|r| Literal::i16_unsuffixed(r.code))
        .collect();
    let names = rows.iter().map(|r| r.name.as_str());
    let descriptions = rows.iter().map(|r| r.description.as_str());
    let definitions = rows.iter().zip(&variants).map(|(row, variant)| {
        let retriable = if row.retriable {
            "retriable"
        } else {
            "not retriable"
        };
        let doc = doc_attrs(&format!(
            "{}\n\nCode {}, `{}`, {retriable}.",
            row.description, row.code, row.name
        ));
        quote!(#doc #variant,)
    });
    let retriable = rows
        .iter()
        .zip(&variants)
        .filter(|(row, _)| row.retriable)
        .map(|(_, variant)| quote!(Self::#variant));
    let (variants_a, variants_b, variants_c, variants_d) = (
        variants.iter(),
        variants.iter(),
        variants.iter(),
        variants.iter(),
    );
    let (codes_a, codes_b) = (codes.iter(), codes.iter());
    let tokens: TokenStream = quote! {
        /// An error code of the Kafka protocol, as responses carry it in
        /// their `error_code` fields.
        ///
        /// [`ErrorCode::from_code`] reads one; codes this version does not
        /// know are kept as [`ErrorCode::Unknown`], so that no code is lost.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum ErrorCode {
            #(#definitions)*
            /// A code this version of the crate does not know, kept as sent.
            Unknown(i16),
        }

        impl ErrorCode {
            /// The error code for `code`; [`ErrorCode::Unknown`] for one this
            /// version does not know.
            pub const fn from_code(code: i16) -> Self {
                match code {
                    #(#codes_a => Self::#variants_a,)*
                    other => Self::Unknown(other),
                }
            }

            /// The int16 code on the wire.
            pub const fn code(self) -> i16 {
                match self {
                    #(Self::#variants_b => #codes_b,)*
                    Self::Unknown(code) => code,
                }
            }

            /// Kafka's name for the code, such as `UNKNOWN_TOPIC_OR_PARTITION`;
            /// `UNKNOWN` for a code this version does not know.
            pub const fn name(self) -> &'static str {
                match self {
                    #(Self::#variants_c => #names,)*
                    Self::Unknown(_) => "UNKNOWN",
                }
            }

            /// What the code means, in a sentence.
            pub const fn description(self) -> &'static str {
                match self {
                    #(Self::#variants_d => #descriptions,)*
                    Self::Unknown(_) => "A code this version of the crate does not know.",
                }
            }

            /// Whether a client may retry the request that failed with this
            /// code, perhaps after refreshing its metadata. False for unknown
            /// codes.
            pub const fn is_retriable(self) -> bool {
                matches!(self, #(#retriable)|*)
            }

            /// True for every code but `NONE` (0).
            pub const fn is_error(self) -> bool {
                self.code() != 0
            }

            /// `Ok(())` for `NONE` (0), and the code as an error otherwise,
            /// so that a response's code can be checked with `?`.
            pub const fn into_result(self) -> Result<(), ErrorCode> {
                if self.is_error() {
                    Err(self)
                } else {
                    Ok(())
                }
            }
        }

        impl From<i16> for ErrorCode {
            fn from(code: i16) -> Self {
                ErrorCode::from_code(code)
            }
        }

        impl From<ErrorCode> for i16 {
            fn from(code: ErrorCode) -> i16 {
                code.code()
            }
        }

        /// Kafka's name and the code, such as `UNKNOWN_TOPIC_OR_PARTITION (3)`.
        impl std::fmt::Display for ErrorCode {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                write!(f, "{} ({})", self.name(), self.code())
            }
        }

        impl std::error::Error for ErrorCode {}
    };
    let parsed = parse_file("error_code.rs", tokens)?;
    Ok(unparse(
        "// @generated by kafka-codegen from a table of Kafka's error codes. Do not edit.\n\n",
        &parsed,
    ))
}

/// Reads the table at `table` and writes the enum to `out`, leaving the file
/// untouched when its contents would not change.
pub fn compile(table: &Path, out: &Path) -> Result<usize, ErrorCodesError> {
    let io = |path: &Path| {
        let path = path.to_path_buf();
        move |source| ErrorCodesError::Io { path, source }
    };
    let text = std::fs::read_to_string(table).map_err(io(table))?;
    let rows = parse(&text, table)?;
    let source = generate(&rows)?;
    let unchanged = std::fs::read_to_string(out).is_ok_and(|old| old == source);
    if !unchanged {
        std::fs::write(out, source).map_err(io(out))?;
    }
    Ok(rows.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table(rows: &str) -> String {
        format!("{HEADER}\n{rows}")
    }

    #[test]
    fn rows_become_variants_with_their_facts() {
        let text =
            table("0\tNONE\tfalse\tNo error.\n3\tUNKNOWN_TOPIC_OR_PARTITION\ttrue\tNot here.\n");
        let rows = parse(&text, Path::new("t.tsv")).unwrap();
        assert_eq!(rows.len(), 2);
        let source = generate(&rows).unwrap();
        assert!(source.contains("UnknownTopicOrPartition,"), "{source}");
        assert!(
            source.contains("3 => Self::UnknownTopicOrPartition"),
            "{source}"
        );
        assert!(source.contains("Code 3, `UNKNOWN_TOPIC_OR_PARTITION`, retriable."));
        assert!(source.contains("matches!(self, Self::UnknownTopicOrPartition)"));
    }

    #[test]
    fn malformed_rows_are_named_by_line() {
        let cases = [
            ("x\tNONE\tfalse\tNo error.", "2: code `x` is not an int16"),
            (
                "0\tNone\tfalse\tNo error.",
                "2: name `None` is not UPPER_SNAKE_CASE",
            ),
            (
                "0\tNONE\tmaybe\tNo error.",
                "2: retriable must be true or false, not `maybe`",
            ),
            ("0\tNONE\tfalse", "2: 4 tab-separated columns, found 3"),
            ("0\tNONE\tfalse\t ", "2: NONE has no description"),
            (
                "0\tNONE\tfalse\tA.\n0\tOTHER\tfalse\tB.",
                "3: OTHER (0) repeats the code or name of NONE (0)",
            ),
        ];
        for (rows, expected) in cases {
            let error = parse(&table(rows), Path::new("t.tsv"))
                .unwrap_err()
                .to_string();
            assert_eq!(error, format!("t.tsv:{expected}"));
        }
        let error = parse("code\tname\n", Path::new("t.tsv"))
            .unwrap_err()
            .to_string();
        assert!(
            error.starts_with("t.tsv:1: the first line must be"),
            "{error}"
        );
    }
}
