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
use crate::emit::{self, EmitOptions, Gates, GeneratedFile, Layout};
use crate::error::CodegenError;
use crate::ir::{self, MessageIr};
use crate::model::{MessageKind, Schema, SchemaSet};

/// The file in the output directory that lists the files
/// [`Config::compile`] wrote, one name per line, so that a later run removes
/// only those of them it no longer writes.
pub const MANIFEST: &str = ".kafka-codegen-files";

/// True for a bare `name.rs`: a manifest line that could name anything
/// else (a path, a hidden file) is never acted on.
fn is_plain_rs_name(name: &str) -> bool {
    name.ends_with(".rs") && !name.starts_with('.') && !name.contains(['/', '\\'])
}

/// What a generation run did, as [`Config::compile`] returns it and
/// `kafka-codegen generate` prints it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GenerationSummary {
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
    require_docs: bool,
    json_form: bool,
    gates: Gates,
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
            require_docs: false,
            json_form: false,
            gates: Gates::default(),
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

    /// Requires an `about` text on every message, field and common struct,
    /// so that no generated item is documented with its versions alone.
    /// Off by default: Kafka's own schemas leave some fields undocumented.
    pub fn require_docs(&mut self, require: bool) -> &mut Self {
        self.require_docs = require;
        self
    }

    /// Whether to generate the JSON form: a `JsonForm` impl for every struct
    /// and `to_json`/`from_json` on the body enums. Off by default; the code
    /// it generates needs kafka-wire's `json` feature, which brings in
    /// serde_json.
    pub fn json_form(&mut self, generate: bool) -> &mut Self {
        self.json_form = generate;
        self
    }

    /// Generates the APIs of `listener` (`broker`, `controller`) behind
    /// `predicate`, a `cfg` predicate such as `feature = "client-apis"`,
    /// instead of choosing them now: the files then serve every feature
    /// combination of the crate that includes them. An API served on
    /// several gated listeners is compiled when any of their predicates
    /// holds.
    pub fn gate_listener(
        &mut self,
        listener: impl Into<String>,
        predicate: impl Into<String>,
    ) -> &mut Self {
        self.gates
            .listeners
            .push((listener.into(), predicate.into()));
        self
    }

    /// Generates each API behind a `cfg` predicate of its own, made from
    /// `template` by putting the API's name in kebab-case for `{api}`
    /// ([`emit::api_name`]: its request's name without `Request`): with
    /// `feature = "{api}"`, Produce is compiled under `feature = "produce"`
    /// and ApiVersions under `feature = "api-versions"`, so that a user
    /// compiles the APIs it names alone. The predicate gates the request
    /// and response modules and the API's items in `ApiKey`, `RequestBody`,
    /// `ResponseBody` and their dispatch.
    ///
    /// It replaces [`Config::gate_listener`]: generating fails when both
    /// are set. The crate can still offer a feature per listener that
    /// enables the features of the APIs it serves, as kafka-wire does.
    /// What needs at least one API is compiled under `any(..)` of every
    /// API's predicate unless [`Config::gate_any_api`] names a shorter one.
    pub fn gate_each_api(&mut self, template: impl Into<String>) -> &mut Self {
        self.gates.each_api = Some(template.into());
        self
    }

    /// Generates what needs at least one API (the `ApiKey` enum, the body
    /// enums, the `Request` trait) behind `predicate`, which must hold
    /// exactly when the predicate of one of the generated APIs does: a
    /// `cfg` that the crate's build script sets when it sees one of their
    /// features on, for instance. Without it, that code is compiled under
    /// `any(..)` of the APIs' predicates (of the listeners', with
    /// [`Config::gate_listener`]).
    pub fn gate_any_api(&mut self, predicate: impl Into<String>) -> &mut Self {
        self.gates.any_api = Some(predicate.into());
        self
    }

    /// Generates the KRaft metadata records (and the other stored records)
    /// behind the `cfg` predicate `predicate`.
    pub fn gate_metadata_records(&mut self, predicate: impl Into<String>) -> &mut Self {
        self.gates.metadata_records = Some(predicate.into());
        self
    }

    /// Generates the JSON form behind the `cfg` predicate `predicate`, such
    /// as `feature = "json"`.
    pub fn gate_json_form(&mut self, predicate: impl Into<String>) -> &mut Self {
        self.gates.json_form = Some(predicate.into());
        self
    }

    /// Marks every generated function `#[cfg_attr(not(<predicate>),
    /// inline)]`, for a library that ships generated messages to its users
    /// (as kafka-wire does). Rust compiles a function that is neither
    /// generic nor `#[inline]` in its own crate, used or not; marked, each
    /// is compiled only in the crates that call it, so that a user who
    /// calls a few messages compiles those alone. Where `predicate` holds
    /// (such as `feature = "precompile"`), the library compiles every
    /// message itself, once, as it does without this setting: for programs
    /// that use most messages, whose own rebuilds then compile none of
    /// them.
    pub fn inline_unless(&mut self, predicate: impl Into<String>) -> &mut Self {
        self.gates.compiled_here = Some(predicate.into());
        self
    }

    /// Reads and validates the schemas.
    pub fn load(&self) -> Result<SchemaSet, CodegenError> {
        let mut set = SchemaSet::load(&self.schema_paths)?;
        if self.require_docs {
            for schema in &set.schemas {
                let missing = crate::model::undocumented(schema);
                if missing.is_empty() {
                    continue;
                }
                let text = fs::read_to_string(&schema.file).map_err(|source| CodegenError::Io {
                    path: schema.file.clone(),
                    source,
                })?;
                set.diagnostics
                    .extend(missing.into_iter().map(|d| d.locate(&schema.file, &text)));
            }
            set.diagnostics.sort();
        }
        let fatal = set.has_errors() || (self.strict && !set.diagnostics.is_empty());
        if fatal {
            return Err(CodegenError::Schema(set.diagnostics));
        }
        Ok(set)
    }

    /// Lowers the selected schemas. A removed API (`"validVersions": "none"`)
    /// has no version to generate, so it is left out.
    fn lower(&self, set: &SchemaSet) -> Vec<MessageIr> {
        set.schemas
            .iter()
            .filter(|s| !s.valid_versions.is_empty())
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
    pub fn generate(&self) -> Result<(Vec<GeneratedFile>, GenerationSummary), CodegenError> {
        emit::check_gates(&self.gates).map_err(|message| {
            CodegenError::Emit(emit::EmitError {
                file: "mod.rs".into(),
                message,
            })
        })?;
        let set = self.load()?;
        let messages = self.lower(&set);
        let options = EmitOptions {
            runtime_path: self.runtime_path.clone(),
            layout: self.layout,
            json: self.json_form || self.gates.json_form.is_some(),
            gates: self.gates.clone(),
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
        let summary = GenerationSummary {
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

    /// Generates the files and writes them to the output directory, leaving
    /// a file unchanged when its contents are. In a build script, also tells
    /// cargo to rerun when a schema changes.
    ///
    /// The names written are kept in [`MANIFEST`] in the output directory.
    /// A file that an earlier run wrote and this run does not (a message
    /// that is no longer selected) is removed; no other file is ever
    /// touched, so the output directory may be shared with other sources.
    pub fn compile(&self) -> Result<GenerationSummary, CodegenError> {
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
        let manifest = out_dir.join(MANIFEST);
        let written_before = match fs::read_to_string(&manifest) {
            Ok(text) => text.lines().map(str::to_owned).collect(),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Vec::new(),
            Err(e) => return Err(io(&manifest)(e)),
        };
        for name in written_before.iter().filter(|name| is_plain_rs_name(name)) {
            if !files.iter().any(|f| &f.name == name) {
                let path = out_dir.join(name);
                match fs::remove_file(&path) {
                    Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(io(&path)(e)),
                    _ => {}
                }
            }
        }
        for file in &files {
            let path = out_dir.join(&file.name);
            let unchanged = fs::read_to_string(&path).is_ok_and(|old| old == file.contents);
            if !unchanged {
                fs::write(&path, &file.contents).map_err(io(&path))?;
            }
        }
        let names: String = files.iter().map(|f| format!("{}\n", f.name)).collect();
        fs::write(&manifest, names).map_err(io(&manifest))?;
        if std::env::var_os("CARGO_MANIFEST_DIR").is_some() && self.out_dir.is_none() {
            for path in &self.schema_paths {
                println!("cargo:rerun-if-changed={}", path.display());
            }
        }
        Ok(summary)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A fresh directory under the system's temporary directory.
    fn scratch(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("kafka-codegen-{name}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(&dir).unwrap();
        dir
    }

    fn schema(name: &str, key: i16) -> String {
        format!(
            r#"{{ "apiKey": {key}, "type": "data", "name": "{name}", "validVersions": "0",
                 "flexibleVersions": "none", "fields": [] }}"#
        )
    }

    #[test]
    fn compile_removes_only_files_it_wrote_itself() {
        let dir = scratch("manifest");
        let (schemas, out) = (dir.join("schemas"), dir.join("src"));
        fs::create_dir_all(&schemas).unwrap();
        fs::create_dir_all(&out).unwrap();
        fs::write(schemas.join("First.json"), schema("First", 1)).unwrap();
        fs::write(schemas.join("Second.json"), schema("Second", 2)).unwrap();
        // The user's own sources share the output directory.
        fs::write(out.join("lib.rs"), "// mine\n").unwrap();
        fs::write(out.join("other.rs"), "// mine too\n").unwrap();

        let mut config = Config::new();
        config
            .schema_dir(&schemas)
            .out_dir(&out)
            .layout(Layout::Files);
        config.compile().unwrap();
        assert!(out.join("first.rs").exists() && out.join("second.rs").exists());
        let manifest = fs::read_to_string(out.join(MANIFEST)).unwrap();
        assert_eq!(manifest, "first.rs\nsecond.rs\nmod.rs\n");

        // A message no longer selected: its file goes, the user's stay.
        config.include(["First"]);
        config.compile().unwrap();
        assert!(out.join("first.rs").exists());
        assert!(
            !out.join("second.rs").exists(),
            "a file this tool wrote is removed"
        );
        assert_eq!(fs::read_to_string(out.join("lib.rs")).unwrap(), "// mine\n");
        assert_eq!(
            fs::read_to_string(out.join("other.rs")).unwrap(),
            "// mine too\n"
        );
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_removed_api_is_accepted_and_generates_nothing() {
        // Kafka keeps the files of a removed API, with `"validVersions":
        // "none"` and no `flexibleVersions`, so that its key stays taken.
        let dir = scratch("removed");
        let api = |kind: &str, name: &str, key: i16, versions: &str| {
            let text =
                format!(r#"{{ "apiKey": {key}, "type": "{kind}", "name": "{name}", {versions} }}"#);
            fs::write(dir.join(format!("{name}.json")), text).unwrap();
        };
        let live = r#""validVersions": "0", "flexibleVersions": "none", "fields": []"#;
        api("request", "LiveRequest", 3, live);
        api("response", "LiveResponse", 3, live);
        api("request", "GoneRequest", 4, r#""validVersions": "none""#);
        api("response", "GoneResponse", 4, r#""validVersions": "none""#);

        let mut config = Config::new();
        config.schema_dir(&dir);
        let (files, summary) = config.generate().unwrap();
        let names: Vec<&str> = files.iter().map(|f| f.name.as_str()).collect();
        assert_eq!(names, ["live_request.rs", "live_response.rs", "mod.rs"]);
        assert_eq!((summary.schemas, summary.apis, summary.versions), (2, 1, 2));
        let root = &files[2].contents;
        assert!(root.contains("Live"), "{root}");
        assert!(!root.contains("Gone"), "{root}");
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn each_api_is_gated_on_its_own_predicate() {
        let dir = scratch("each-api");
        let live = r#""validVersions": "0", "flexibleVersions": "none", "fields": []"#;
        for (kind, name) in [
            ("request", "ApiVersionsRequest"),
            ("response", "ApiVersionsResponse"),
        ] {
            let text = format!(
                r#"{{ "apiKey": 18, "type": "{kind}", "name": "{name}", "listeners": ["broker"], {live} }}"#
            );
            fs::write(dir.join(format!("{name}.json")), text).unwrap();
        }
        let mut config = Config::new();
        config
            .schema_dir(&dir)
            .layout(Layout::Files)
            .gate_each_api(r#"feature = "{api}""#)
            .gate_any_api("kafka_apis");
        let (files, _) = config.generate().unwrap();
        let root = &files.iter().find(|f| f.name == "mod.rs").unwrap().contents;
        let gate = "#[cfg(feature = \"api-versions\")]\npub mod api_versions_request;";
        assert!(root.contains(gate), "{root}");
        assert!(
            root.contains("#[cfg(kafka_apis)]\npub enum ApiKey"),
            "{root}"
        );
        assert!(
            root.contains("#[cfg(kafka_apis)]\nuse ::kafka_wire::runtime as rt;"),
            "{root}"
        );
        // One way of gating the APIs at a time.
        config.gate_listener("broker", r#"feature = "client-apis""#);
        assert!(config.generate().is_err());
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_manifest_line_that_is_not_a_plain_file_name_is_ignored() {
        assert!(is_plain_rs_name("vote_request.rs"));
        for name in ["../lib.rs", "sub/x.rs", ".hidden.rs", "mod.txt", "a\\b.rs"] {
            assert!(!is_plain_rs_name(name), "{name}");
        }
    }

    #[test]
    fn require_docs_names_every_place_without_an_about() {
        let dir = scratch("docs");
        let text = r#"{
  "type": "data", "name": "Doc", "about": "A documented message.",
  "validVersions": "0", "flexibleVersions": "none",
  "fields": [
    { "name": "Good", "type": "int32", "versions": "0+", "about": "Has one." },
    { "name": "Bad", "type": "[]Inner", "versions": "0+", "about": "Has one.",
      "fields": [ { "name": "Deep", "type": "int8", "versions": "0+" } ] }
  ]
}"#;
        fs::write(dir.join("Doc.json"), text).unwrap();
        let mut config = Config::new();
        config.schema_dir(&dir);
        assert!(config.load().is_ok(), "off by default");
        let Err(CodegenError::Schema(errors)) = config.require_docs(true).load() else {
            panic!("an undocumented field must be an error");
        };
        let printed: Vec<String> = errors.iter().map(|e| e.to_string()).collect();
        let file = dir.join("Doc.json");
        assert_eq!(
            printed,
            [format!(
                "{}:7:19: error: field \"Deep\" has no \"about\"",
                file.display()
            )]
        );
        fs::remove_dir_all(&dir).unwrap();
    }
}
