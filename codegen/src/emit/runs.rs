//! Groups a struct's fields into the pieces its readers and writers handle
//! one at a time: a single field, or a run of consecutive fixed-width
//! fields that are in the struct body in the same versions, which the
//! runtime reads with one length check and writes with one capacity check
//! (`rt::Reader::read_fixed`, `rt::Writer::put_fixed`).

use proc_macro2::{Literal, TokenStream};
use quote::quote;

use crate::ir::{Cond, FieldIr, FieldKind};
use crate::primitives::Scalar;

/// A field read or written on its own, or a run of two or more.
#[derive(Debug)]
pub enum Piece<'f> {
    /// One field, in whatever form it takes.
    Single(&'f FieldIr),
    /// Consecutive fixed-width fields, all in the body when `cond` holds.
    Run {
        /// When the run is in the struct body.
        cond: Cond,
        /// Its fields, in wire order.
        fields: Vec<(&'f FieldIr, Scalar)>,
    },
}

/// The fields of a struct, in order, with each run of fixed-width body
/// fields that share their versions made one piece. Bools stay single,
/// since reading one also notes a non-canonical byte.
pub fn pieces(fields: &[FieldIr]) -> Vec<Piece<'_>> {
    let mut pieces = Vec::new();
    let mut run: Vec<(&FieldIr, Scalar)> = Vec::new();
    let mut run_cond = Cond::Never;
    for field in fields {
        match fixed_width(field) {
            Some(scalar) if !run.is_empty() && field.untagged == run_cond => {
                run.push((field, scalar));
            }
            scalar => {
                flush(&mut pieces, &mut run, run_cond);
                match scalar {
                    Some(scalar) => {
                        run.push((field, scalar));
                        run_cond = field.untagged;
                    }
                    None => pieces.push(Piece::Single(field)),
                }
            }
        }
    }
    flush(&mut pieces, &mut run, run_cond);
    pieces
}

/// Ends the run being gathered: a run of one is a single field.
fn flush<'f>(pieces: &mut Vec<Piece<'f>>, run: &mut Vec<(&'f FieldIr, Scalar)>, cond: Cond) {
    match run.len() {
        0 => {}
        1 => pieces.push(Piece::Single(run[0].0)),
        _ => pieces.push(Piece::Run {
            cond,
            fields: std::mem::take(run),
        }),
    }
    run.clear();
}

/// The scalar of a field that may join a run: fixed-width, not a bool,
/// never tagged, and in the body in some version.
fn fixed_width(field: &FieldIr) -> Option<Scalar> {
    match field.kind {
        FieldKind::Scalar(scalar)
            if scalar != Scalar::Bool && field.tagged.is_none() && field.untagged.is_possible() =>
        {
            Some(scalar)
        }
        _ => None,
    }
}

/// The run's width in bytes, as a literal.
pub fn run_width(fields: &[(&FieldIr, Scalar)]) -> Literal {
    Literal::usize_unsuffixed(fields.iter().map(|(_, s)| s.width()).sum())
}

/// The `&[(name, width), ..]` list a run's truncation error is found in.
pub fn run_layout(fields: &[(&FieldIr, Scalar)]) -> TokenStream {
    let entries = fields.iter().map(|(field, scalar)| {
        let name = &field.rust_name;
        let width = Literal::usize_unsuffixed(scalar.width());
        quote!((#name, #width))
    });
    quote!(&[#(#entries),*])
}

/// The name of the run method that reads or writes `scalar`.
pub fn run_method(scalar: Scalar) -> proc_macro2::Ident {
    let name = match scalar {
        Scalar::Int8 => "i8",
        Scalar::Int16 => "i16",
        Scalar::Uint16 => "u16",
        Scalar::Int32 => "i32",
        Scalar::Uint32 => "u32",
        Scalar::Int64 => "i64",
        Scalar::Float64 => "f64",
        Scalar::Uuid => "uuid",
        // Never in a run (see `fixed_width`).
        Scalar::Bool => "bool",
    };
    proc_macro2::Ident::new(name, proc_macro2::Span::call_site())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::lower;
    use crate::model::{load_file, SourceFile};

    /// The pieces of a request's top-level struct, written as names: a run
    /// as `[a b]`.
    fn shape(fields: &str) -> Vec<String> {
        let text = format!(
            r#"{{ "apiKey": 900, "type": "request", "listeners": ["broker"],
                 "name": "RunsRequest", "validVersions": "0-3", "flexibleVersions": "2+",
                 "fields": [ {fields} ] }}"#
        );
        let source = SourceFile {
            path: "RunsRequest.json".into(),
            text,
        };
        let (schema, diagnostics) = load_file(&source);
        let schema = schema.unwrap_or_else(|| panic!("{diagnostics:?}"));
        let ir = lower(&schema);
        pieces(&ir.top().fields)
            .iter()
            .map(|piece| match piece {
                Piece::Single(field) => field.rust_name.clone(),
                Piece::Run { fields, .. } => {
                    let names: Vec<_> = fields.iter().map(|(f, _)| f.rust_name.as_str()).collect();
                    format!("[{}]", names.join(" "))
                }
            })
            .collect()
    }

    #[test]
    fn consecutive_fixed_width_fields_of_the_same_versions_form_runs() {
        let fields = r#"
            { "name": "A", "type": "int32", "versions": "0+" },
            { "name": "B", "type": "int64", "versions": "0+" },
            { "name": "C", "type": "uuid", "versions": "1+" },
            { "name": "D", "type": "int16", "versions": "1+" },
            { "name": "E", "type": "int8", "versions": "0+" },
            { "name": "F", "type": "bool", "versions": "0+" },
            { "name": "G", "type": "int32", "versions": "0+" },
            { "name": "H", "type": "string", "versions": "0+" },
            { "name": "I", "type": "int32", "versions": "0+" },
            { "name": "J", "type": "int32", "versions": "0+" },
            { "name": "K", "type": "int32", "versions": "3+", "taggedVersions": "3+", "tag": 0 },
            { "name": "L", "type": "float64", "versions": "0+" },
            { "name": "M", "type": "uint16", "versions": "0+" }
        "#;
        assert_eq!(
            shape(fields),
            ["[a b]", "[c d]", "e", "f", "g", "h", "[i j]", "k", "[l m]"]
        );
    }

    #[test]
    fn a_run_knows_its_width_and_the_layout_of_its_errors() {
        let source = SourceFile {
            path: "RunsRequest.json".into(),
            text: r#"{ "apiKey": 900, "type": "request", "listeners": ["broker"],
                "name": "RunsRequest", "validVersions": "0", "flexibleVersions": "none",
                "fields": [ { "name": "A", "type": "int32", "versions": "0+" },
                            { "name": "B", "type": "uuid", "versions": "0+" } ] }"#
                .into(),
        };
        let ir = lower(&load_file(&source).0.expect("a valid schema"));
        let pieces = pieces(&ir.top().fields);
        let [Piece::Run { cond, fields }] = pieces.as_slice() else {
            panic!("one run expected, got {pieces:?}");
        };
        assert_eq!(*cond, Cond::Always);
        assert_eq!(run_width(fields).to_string(), "20");
        assert_eq!(
            run_layout(fields).to_string(),
            r#"& [("a" , 4) , ("b" , 16)]"#
        );
        assert_eq!(run_method(fields[1].1).to_string(), "uuid");
    }
}
