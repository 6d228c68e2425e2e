//! A set of schema files, read from disk and checked against each other.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

use super::build::build_schema;
use super::spec::Schema;
use crate::diagnostics::{Diagnostic, Located, Span};
use crate::error::CodegenError;
use crate::parse::{self, Node, Value};
use crate::primitives::MessageKind;

/// What a file says it is, read even when the rest of it is invalid, so that
/// collisions are reported for broken files too.
#[derive(Debug, Clone)]
struct Identity {
    file: PathBuf,
    name: Option<(String, Span)>,
    kind: Option<MessageKind>,
    api_key: Option<(i64, Span)>,
}

impl Identity {
    fn read(path: &Path, root: &Node) -> Identity {
        let mut identity = Identity {
            file: path.to_path_buf(),
            name: None,
            kind: None,
            api_key: None,
        };
        if let Value::Object(members) = &root.value {
            for (key, node) in members {
                match (key.name.as_str(), &node.value) {
                    ("name", Value::String(s)) => identity.name = Some((s.clone(), node.span)),
                    ("type", Value::String(s)) => identity.kind = MessageKind::parse(s),
                    ("apiKey", Value::Number(n) | Value::String(n)) => {
                        identity.api_key = n.parse().ok().map(|k| (k, node.span));
                    }
                    _ => {}
                }
            }
        }
        identity
    }
}

/// A schema file's text, kept so diagnostics can be located.
#[derive(Debug, Clone)]
pub struct SourceFile {
    /// Where it was read from.
    pub path: PathBuf,
    /// Its contents.
    pub text: String,
}

/// The validated schemas of a set of files, with every diagnostic found.
#[derive(Debug, Default)]
pub struct SchemaSet {
    /// The schemas that passed their own checks, sorted by file.
    pub schemas: Vec<Schema>,
    /// Every error and warning, sorted by file and position.
    pub diagnostics: Vec<Located>,
}

/// Parses and validates one file. Warnings are returned beside the schema.
pub fn load_file(source: &SourceFile) -> (Option<Schema>, Vec<Located>) {
    let (schema, diagnostics, _) = load_with_identity(source);
    (schema, diagnostics)
}

fn load_with_identity(source: &SourceFile) -> (Option<Schema>, Vec<Located>, Option<Identity>) {
    let locate = |d: Diagnostic| d.locate(&source.path, &source.text);
    match parse::parse(&source.text) {
        Err(error) => (None, vec![locate(error)], None),
        Ok(parsed) => {
            let identity = Identity::read(&source.path, &parsed.root);
            let mut diagnostics: Vec<Located> = parsed.warnings.into_iter().map(locate).collect();
            let (schema, found) = build_schema(&source.path, &parsed.root);
            diagnostics.extend(found.into_iter().map(locate));
            (schema, diagnostics, Some(identity))
        }
    }
}

impl SchemaSet {
    /// Reads every `.json` file under each path (a file or a directory,
    /// searched recursively), validates each one, then checks the set for
    /// duplicate names and API keys.
    pub fn load<P: AsRef<Path>>(paths: &[P]) -> Result<SchemaSet, CodegenError> {
        let mut files = Vec::new();
        for path in paths {
            collect_json_files(path.as_ref(), &mut files)?;
        }
        files.sort();
        files.dedup();
        let mut sources = Vec::new();
        for path in files {
            let text = fs::read_to_string(&path).map_err(|source| CodegenError::Io {
                path: path.clone(),
                source,
            })?;
            sources.push(SourceFile { path, text });
        }
        Ok(SchemaSet::from_sources(&sources))
    }

    /// Validates schema texts already in memory.
    pub fn from_sources(sources: &[SourceFile]) -> SchemaSet {
        let mut set = SchemaSet::default();
        let mut texts = BTreeMap::new();
        let mut identities = Vec::new();
        for source in sources {
            let (schema, diagnostics, identity) = load_with_identity(source);
            set.diagnostics.extend(diagnostics);
            texts.insert(source.path.clone(), source.text.as_str());
            set.schemas.extend(schema);
            identities.extend(identity);
        }
        set.diagnostics.extend(collisions(&identities, &texts));
        set.diagnostics.sort();
        set
    }

    /// True when any diagnostic is an error.
    pub fn has_errors(&self) -> bool {
        self.diagnostics.iter().any(Located::is_error)
    }

    /// The schema of a given name.
    pub fn find(&self, name: &str) -> Option<&Schema> {
        self.schemas.iter().find(|s| s.name == name)
    }

    /// The schemas of one kind, in file order.
    pub fn of_kind(&self, kind: MessageKind) -> impl Iterator<Item = &Schema> {
        self.schemas.iter().filter(move |s| s.kind == kind)
    }
}

/// A message name must be unique across the set, and an API key unique
/// within its kind. Each collision names both files.
fn collisions(identities: &[Identity], texts: &BTreeMap<PathBuf, &str>) -> Vec<Located> {
    let mut found = Vec::new();
    for (i, this) in identities.iter().enumerate() {
        for earlier in &identities[..i] {
            if let (Some((name, span)), Some((earlier_name, _))) = (&this.name, &earlier.name) {
                if name == earlier_name {
                    found.push((
                        this,
                        *span,
                        format!(
                            "message name \"{name}\" is already defined in {}",
                            earlier.file.display()
                        ),
                    ));
                }
            }
            let (Some((key, span)), Some((earlier_key, _))) = (this.api_key, earlier.api_key)
            else {
                continue;
            };
            let Some(kind) = this.kind.filter(|k| k.has_api_key()) else {
                continue;
            };
            if key == earlier_key && earlier.kind == Some(kind) {
                let name_of =
                    |id: &Identity| id.name.as_ref().map_or("?".to_owned(), |n| n.0.clone());
                found.push((
                    this,
                    span,
                    format!(
                        "{} apiKey {key} of \"{}\" is already used by \"{}\" in {}",
                        kind.as_str(),
                        name_of(this),
                        name_of(earlier),
                        earlier.file.display()
                    ),
                ));
            }
        }
    }
    found
        .into_iter()
        .map(|(identity, span, message)| {
            let text = texts.get(&identity.file).copied().unwrap_or("");
            Diagnostic::error(span, message).locate(&identity.file, text)
        })
        .collect()
}

fn collect_json_files(path: &Path, out: &mut Vec<PathBuf>) -> Result<(), CodegenError> {
    let io = |source| CodegenError::Io {
        path: path.to_path_buf(),
        source,
    };
    let meta = fs::metadata(path).map_err(io)?;
    if meta.is_file() {
        out.push(path.to_path_buf());
        return Ok(());
    }
    for entry in fs::read_dir(path).map_err(io)? {
        let entry_path = entry.map_err(io)?.path();
        if entry_path.is_dir() {
            collect_json_files(&entry_path, out)?;
        } else if entry_path.extension().is_some_and(|e| e == "json") {
            out.push(entry_path);
        }
    }
    Ok(())
}
