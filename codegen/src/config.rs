//! The public face of the generator: a builder in the style of prost-build.
//!
//! ```no_run
//! // build.rs
//! kafka_codegen::Config::new()
//!     .schema_dir("schemas")
//!     .compile()
//!     .expect("schemas are valid");
//! ```

use std::fs;
use std::path::{Path, PathBuf};

use crate::diagnostics::Located;
use crate::emit::{self, EmitOptions, GeneratedFile, Layout};
use crate::ir::{self, MessageIr};
use crate::model::{MessageKind, Schema, SchemaSet};
use crate::CodegenError;

/// What a generation run did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Summary {
    /// Schemas read.
    pub schemas: usize,
    /// APIs with both a request and a response.
    pub apis: usize,
    /// Message versions covered, summed over all schemas.
    pub versions: usize,
    /// Files written (or generated, when nothing was written).
    pub files: usize,
    /// Warnings about the schemas, which did not stop generation.
    pub warnings: Vec<Located>,
}

/// Configures and runs the generator.
#[derive(Debug, Clone)]
pub struct Config {
    schema_paths: Vec<PathBuf>,
    out_dir: Option<PathBuf>,
    runtime_path: String,
    layout: Layout,
    include: Option<Vec<String>>,
    listeners: Option<Vec<String>>,
    metadata_records: bool,
    strict: bool,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            schema_paths: Vec::new(),
            out_dir: None,
            runtime_path: "::kafka_wire::runtime".into(),
            layout: Layout::OutDir,
            include: None,
            listeners: None,
            metadata_records: true,
            strict: false,
        }
    }
}

impl Config {
    /// A configuration with no schemas, writing to `OUT_DIR`.
    pub fn new() -> Self {
        Config::default()
    }

    /// Adds a schema file, or a directory searched recursively for `.json` files.
    pub fn schema_dir(&mut self, path: impl AsRef<Path>) -> &mut Self {
        self.schema_paths.push(path.as_ref().to_path_buf());
        self
    }

    /// Where to write the generated files. Defaults to `OUT_DIR`.
    pub fn out_dir(&mut self, path: impl AsRef<Path>) -> &mut Self {
        self.out_dir = Some(path.as_ref().to_path_buf());
        self
    }

    /// The path through which generated code reaches the runtime. Defaults
    /// to `::kafka_wire::runtime`.
    pub fn runtime_path(&mut self, path: impl Into<String>) -> &mut Self {
        self.runtime_path = path.into();
        self
    }

    /// How the generated files refer to each other. Defaults to
    /// [`Layout::OutDir`], for build scripts.
    pub fn layout(&mut self, layout: Layout) -> &mut Self {
        self.layout = layout;
        self
    }

    /// Generates only these messages, named with or without their Request
    /// or Response suffix (`Vote` selects both halves of the Vote API).
    pub fn include<I, S>(&mut self, names: I) -> &mut Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.include = Some(names.into_iter().map(Into::into).collect());
        self
    }

    /// Generates only the APIs served on one of these listeners (`broker`,
    /// `controller`), as each request schema's `listeners` says. Headers and
    /// data schemas are always generated.
    pub fn listeners<I, S>(&mut self, listeners: I) -> &mut Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.listeners = Some(listeners.into_iter().map(Into::into).collect());
        self
    }

    /// Whether to generate KRaft metadata records and other stored records
    /// (on by default).
    pub fn metadata_records(&mut self, generate: bool) -> &mut Self {
        self.metadata_records = generate;
        self
    }

    /// Treats warnings, such as trailing commas, as errors.
    pub fn strict(&mut self, strict: bool) -> &mut Self {
        self.strict = strict;
        self
    }

    /// Reads and validates the schemas.
    pub fn load(&self) -> Result<SchemaSet, CodegenError> {
        let set = SchemaSet::load(&self.schema_paths)?;
        let fatal = set.has_errors() || (self.strict && !set.diagnostics.is_empty());
        if fatal {
            return Err(CodegenError::Schema(set.diagnostics));
        }
        Ok(set)
    }

    /// Lowers the selected schemas.
    fn lower(&self, set: &SchemaSet) -> Vec<MessageIr> {
        set.schemas
            .iter()
            .filter(|s| self.selected(&s.name) && self.served(s, set))
            .map(ir::lower)
            .collect()
    }

    /// Whether a schema passes the listener and metadata-record filters.
    fn served(&self, schema: &Schema, set: &SchemaSet) -> bool {
        let request = match schema.kind {
            MessageKind::Request => schema,
            MessageKind::Response => {
                match set
                    .of_kind(MessageKind::Request)
                    .find(|r| r.api_key == schema.api_key)
                {
                    Some(request) => request,
                    None => return self.listeners.is_none(),
                }
            }
            MessageKind::Header | MessageKind::Data => return true,
            MessageKind::Metadata | MessageKind::CoordinatorKey | MessageKind::CoordinatorValue => {
                return self.metadata_records
            }
        };
        match &self.listeners {
            None => true,
            Some(wanted) => request.listeners.iter().any(|l| wanted.contains(l)),
        }
    }

    fn selected(&self, name: &str) -> bool {
        let Some(include) = &self.include else {
            return true;
        };
        let bare = name
            .strip_suffix("Request")
            .or_else(|| name.strip_suffix("Response"))
            .unwrap_or(name);
        include
            .iter()
            .any(|n| n.eq_ignore_ascii_case(name) || n.eq_ignore_ascii_case(bare))
    }

    /// Generates the files in memory, without writing them.
    pub fn generate(&self) -> Result<(Vec<GeneratedFile>, Summary), CodegenError> {
        let set = self.load()?;
        let messages = self.lower(&set);
        let options = EmitOptions {
            runtime_path: self.runtime_path.clone(),
            layout: self.layout,
        };
        let files = emit::generate(&messages, &options).map_err(CodegenError::Emit)?;
        let requests = messages.iter().filter(|m| m.kind == MessageKind::Request);
        let apis = requests
            .filter(|r| {
                messages
                    .iter()
                    .any(|m| m.kind == MessageKind::Response && m.api_key == r.api_key)
            })
            .count();
        let summary = Summary {
            schemas: messages.len(),
            apis,
            versions: messages
                .iter()
                .map(|m| m.valid_versions.iter().count())
                .sum(),
            files: files.len(),
            warnings: set.diagnostics,
        };
        Ok((files, summary))
    }

    /// Generates the files and writes them to the output directory, removing
    /// stale `.rs` files left there by an earlier run. In a build script,
    /// also tells cargo to rerun when a schema changes.
    pub fn compile(&self) -> Result<Summary, CodegenError> {
        let out_dir = match &self.out_dir {
            Some(dir) => dir.clone(),
            None => std::env::var_os("OUT_DIR")
                .map(PathBuf::from)
                .ok_or(CodegenError::NoOutDir)?,
        };
        let (files, summary) = self.generate()?;
        let io = |path: &Path| {
            let path = path.to_path_buf();
            move |source| CodegenError::Io { path, source }
        };
        fs::create_dir_all(&out_dir).map_err(io(&out_dir))?;
        for entry in fs::read_dir(&out_dir).map_err(io(&out_dir))? {
            let path = entry.map_err(io(&out_dir))?.path();
            let stale = path.extension().is_some_and(|e| e == "rs")
                && !files
                    .iter()
                    .any(|f| path.file_name() == Some(f.name.as_ref()));
            if stale {
                fs::remove_file(&path).map_err(io(&path))?;
            }
        }
        for file in &files {
            let path = out_dir.join(&file.name);
            let unchanged = fs::read_to_string(&path).is_ok_and(|old| old == file.contents);
            if !unchanged {
                fs::write(&path, &file.contents).map_err(io(&path))?;
            }
        }
        if std::env::var_os("CARGO_MANIFEST_DIR").is_some() && self.out_dir.is_none() {
            for path in &self.schema_paths {
                println!("cargo:rerun-if-changed={}", path.display());
            }
        }
        Ok(summary)
    }
}
