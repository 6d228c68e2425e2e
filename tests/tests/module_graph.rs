//! The import graph of a crate, read from its sources: which module uses
//! which. [`ModuleGraph::problems`] reports every import circle and, given
//! an order of layers, every arrow from a module to one of a higher layer.
//!
//! The scan is textual: a tokenizer that drops comments and literals, then
//! declarations and paths read from the tokens, with no Rust parser.
//!
//! - `mod name;` is read from `name.rs` or `name/mod.rs`. The graph's nodes
//!   are files: an inline `mod name { .. }` has its own names, but what it
//!   imports, and what imports it, counts for the file that holds it.
//! - Every `use` tree, and every path in code that starts with `crate::`,
//!   `super::`, `self::`, a child module or a name a `use` brought in, is
//!   resolved to the module that defines the item. Re-exports (`pub use`)
//!   are followed, so `crate::CodegenError` leads to the module that defines
//!   `CodegenError`, not to the crate root that re-exports it.
//! - Declaring a module and re-exporting items of one's own descendants is
//!   structure, not a dependency, and makes no arrow. Any other use counts,
//!   between parent and child too: a `mod.rs` that calls its children while
//!   they use items it defines is in a circle with them.
//! - Items under `#[cfg(test)]` (test modules, test helpers) are left out,
//!   and so are the bodies of `quote!`-like macros, whose paths belong to
//!   the code they generate.
//!
//! To check another crate, `ModuleGraph::read(src).problems(layers)`, with
//! its `src/` directory and its layers, lowest first, or `None` for circles
//! alone.

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::fmt::Write as _;
use std::fs;
use std::path::{Path, PathBuf};

use kafka_wire_tests::workspace_root;

/// The generator's layers, lowest first: each module may import only from
/// its own layer and those below it. A name stands for the module and
/// everything inside it; `crate` is the crate root (`lib.rs`).
const CODEGEN_LAYERS: &[&[&str]] = &[
    &["diagnostics", "error"],
    &["parse"],
    &["model"],
    &["ir"],
    &["emit", "diff"],
    &["config", "error_codes", "crate"],
];

#[test]
fn the_generator_imports_run_one_way_through_its_pipeline() {
    let graph = ModuleGraph::read(&workspace_root().join("codegen/src"));
    println!("{}", graph.overview());
    let mut problems = graph.problems(Some(CODEGEN_LAYERS));
    // The arrows of the pipeline itself (an empty graph would have no
    // problem), and the diff's shapes come from the IR.
    let arrows = graph.top_level_arrows();
    for (from, to) in [
        ("parse", "diagnostics"),
        ("model", "parse"),
        ("ir", "model"),
        ("emit", "ir"),
        ("diff", "ir"),
        ("config", "emit"),
    ] {
        if !arrows.contains(&(from.to_owned(), to.to_owned())) {
            problems.push(format!("no arrow {from} -> {to}"));
        }
    }
    assert!(
        problems.is_empty(),
        "the generator's import graph:\n{}",
        problems.join("\n")
    );
}

/// Every package of the library, the command-line tool and the example
/// broker: no import circle.
#[test]
fn no_package_has_an_import_circle() {
    let mut circles = Vec::new();
    for src in [
        "kafka-protocol/wire/src",
        "kafka-protocol/records/src",
        "kafka-protocol/proxy/src",
        "kafka-protocol/cli/src",
        "kafka-protocol/examples/mini_broker",
    ] {
        let graph = ModuleGraph::read(&workspace_root().join(src));
        assert!(
            graph.modules.len() > 3,
            "only {} modules read in {src}",
            graph.modules.len()
        );
        report_circles(src, &graph);
        circles.extend(graph.cycles().into_iter().map(|c| format!("{src}: {c}")));
    }
    assert!(
        circles.is_empty(),
        "import circles:\n{}",
        circles.join("\n")
    );
}

fn report_circles(src: &str, graph: &ModuleGraph) {
    let cycles = graph.cycles();
    println!("{src}: {} import circle(s)", cycles.len());
    for cycle in &cycles {
        println!("  {cycle}");
    }
}

/// The check itself can fail: a small crate with a circle and an arrow
/// back, and the things the scan must not count.
#[test]
fn a_circle_and_an_arrow_back_are_found() {
    let dir = std::env::temp_dir().join(format!("module-graph-{}", std::process::id()));
    let _ = fs::remove_dir_all(&dir);
    let files = [
        (
            "lib.rs",
            "//! crate::mid::a in a comment\nmod low;\npub mod mid;\nmod high;\n\
             pub use low::Thing;\npub fn uses() -> crate::Thing { low::g(); crate::Thing }\n",
        ),
        ("high.rs", "pub fn f() {}\n"),
        (
            "low.rs",
            "pub struct Thing;\npub fn g() { let _ = \"crate::mid::a\"; }\n",
        ),
        (
            "mid/mod.rs",
            "mod a;\nmod b;\npub use a::A;\npub(crate) use b::B;\n\
             #[cfg(test)]\nmod tests { use crate::high::f; }\n",
        ),
        // a -> b through its parent's re-export; b -> a from a module inline in b.
        (
            "mid/a.rs",
            "use crate::mid::B;\npub struct A;\nfn h() { quote!(crate::high::f); }\n",
        ),
        (
            "mid/b.rs",
            "pub struct B;\nmod inner {\n    pub fn k() -> super::super::a::A { crate::mid::A }\n}\n",
        ),
    ];
    for (name, text) in files {
        let path = dir.join("src").join(name);
        fs::create_dir_all(path.parent().expect("a parent")).expect("temp dir");
        fs::write(&path, text).expect("temp file");
    }
    let graph = ModuleGraph::read(&dir.join("src"));
    fs::remove_dir_all(&dir).expect("temp dir");

    let edges: Vec<String> = graph
        .edges()
        .iter()
        .map(|(a, b)| format!("{} -> {}", name_of(a), name_of(b)))
        .collect();
    // Comments, strings, quote! bodies, tests and re-exports make no arrow.
    assert_eq!(
        edges,
        ["crate -> low", "mid::a -> mid::b", "mid::b -> mid::a"]
    );
    let circle = "import circle: mid::a -> mid::b -> mid::a";
    assert_eq!(
        graph.problems(Some(&[&["low", "high"], &["mid"], &["crate"]])),
        [circle]
    );
    assert_eq!(
        graph.problems(Some(&[&["crate", "high", "mid"], &["low"]])),
        [circle, "arrow back: crate (layer 0) -> low (layer 1)"]
    );
    assert_eq!(
        graph.problems(Some(&[&["low"], &["mid"], &["crate"]])),
        [circle, "module high is in no layer"]
    );
}

/// A module's path from the crate root: empty for the root itself.
type ModPath = Vec<String>;

/// `crate` for the root, `emit::common` for the others.
fn name_of(path: &[String]) -> String {
    if path.is_empty() {
        "crate".to_owned()
    } else {
        path.join("::")
    }
}

/// A path a module mentions, as written.
#[derive(Debug)]
struct Reference {
    segments: Vec<String>,
    /// From a `pub use`: a re-export.
    reexport: bool,
}

/// What the scan learnt about one module.
#[derive(Debug, Default)]
struct Module {
    /// Its child modules (not test modules).
    children: BTreeSet<String>,
    /// The names its `use` declarations bring in, with the path as written.
    bindings: BTreeMap<String, Vec<String>>,
    /// The paths of its glob imports.
    globs: Vec<Vec<String>>,
    /// The items it defines (functions, types, constants, macros).
    items: BTreeSet<String>,
    /// Every path it mentions.
    references: Vec<Reference>,
    /// The module of the file it is written in: itself, unless it is inline.
    file: ModPath,
}

/// The modules of one crate and what each of them mentions.
#[derive(Debug, Default)]
struct ModuleGraph {
    modules: BTreeMap<ModPath, Module>,
}

impl ModuleGraph {
    /// Reads the crate whose sources are under `src` (its `lib.rs`, or
    /// `main.rs` when there is no `lib.rs`).
    fn read(src: &Path) -> ModuleGraph {
        let root = [src.join("lib.rs"), src.join("main.rs")]
            .into_iter()
            .find(|p| p.is_file())
            .unwrap_or_else(|| panic!("{}: no lib.rs or main.rs", src.display()));
        let mut graph = ModuleGraph::default();
        graph.read_file(Vec::new(), &root, src.to_path_buf());
        graph
    }

    fn read_file(&mut self, path: ModPath, file: &Path, dir: PathBuf) {
        let text = fs::read_to_string(file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
        let tokens = tokenize(&text);
        self.scan(path.clone(), path, dir, &tokens);
    }

    /// Scans the body of the module at `path`, written in the file of
    /// module `file`, whose child files are under `dir`.
    fn scan(&mut self, path: ModPath, file: ModPath, dir: PathBuf, tokens: &[Token]) {
        self.module_mut(&path).file = file.clone();
        let mut i = 0;
        let mut depth = 0usize;
        let mut test_item = false;
        while i < tokens.len() {
            if depth == 0 {
                match &tokens[i] {
                    Token::Punct('#') => {
                        let inner = tokens.get(i + 1) == Some(&Token::Punct('!'));
                        let open = if inner { i + 2 } else { i + 1 };
                        if tokens.get(open) == Some(&Token::Punct('[')) {
                            let close = matching(tokens, open);
                            if is_cfg_test(&tokens[open + 1..close]) {
                                if inner {
                                    // The whole module is a test module.
                                    self.modules.remove(&path);
                                    if let Some((name, parent)) = path.split_last() {
                                        if let Some(m) = self.modules.get_mut(parent) {
                                            m.children.remove(name);
                                        }
                                    }
                                    return;
                                }
                                test_item = true;
                            }
                            i = close + 1;
                            continue;
                        }
                    }
                    Token::Ident(word) if word == "pub" => {
                        i += 1;
                        if tokens.get(i) == Some(&Token::Punct('(')) {
                            i = matching(tokens, i) + 1;
                        }
                        if is_ident(tokens.get(i), "use") && !test_item {
                            i = self.scan_use(&path, tokens, i, true, true);
                        }
                        continue;
                    }
                    Token::Ident(word) if word == "mod" => {
                        if let Some(Token::Ident(name)) = tokens.get(i + 1) {
                            let name = name.clone();
                            let mut child = path.clone();
                            child.push(name.clone());
                            match tokens.get(i + 2) {
                                Some(Token::Punct(';')) => {
                                    if !test_item {
                                        self.module_mut(&path).children.insert(name.clone());
                                        let source = [
                                            dir.join(format!("{name}.rs")),
                                            dir.join(&name).join("mod.rs"),
                                        ]
                                        .into_iter()
                                        .find(|p| p.is_file())
                                        .unwrap_or_else(|| {
                                            panic!(
                                                "module {}: no {name}.rs or {name}/mod.rs in {}",
                                                name_of(&child),
                                                dir.display()
                                            )
                                        });
                                        self.read_file(child, &source, dir.join(&name));
                                    }
                                    i += 3;
                                }
                                Some(Token::Punct('{')) => {
                                    let close = matching(tokens, i + 2);
                                    if !test_item {
                                        self.module_mut(&path).children.insert(name.clone());
                                        self.scan(
                                            child,
                                            file.clone(),
                                            dir.join(&name),
                                            &tokens[i + 3..close],
                                        );
                                    }
                                    i = close + 1;
                                }
                                _ => i += 1,
                            }
                            test_item = false;
                            continue;
                        }
                    }
                    Token::Ident(word) if word == "use" => {
                        i = if test_item {
                            skip_item(tokens, i)
                        } else {
                            self.scan_use(&path, tokens, i, false, true)
                        };
                        test_item = false;
                        continue;
                    }
                    _ if test_item => {
                        i = skip_item(tokens, i);
                        test_item = false;
                        continue;
                    }
                    Token::Ident(word) if ITEM_KEYWORDS.contains(&word.as_str()) => {
                        let name = match (word.as_str(), tokens.get(i + 1), tokens.get(i + 2)) {
                            ("macro_rules", Some(Token::Punct('!')), Some(Token::Ident(n))) => {
                                Some(n)
                            }
                            (_, Some(Token::Ident(n)), _) => Some(n),
                            _ => None,
                        };
                        if let Some(name) = name.cloned() {
                            self.module_mut(&path).items.insert(name);
                        }
                    }
                    _ => {}
                }
            }
            match &tokens[i] {
                // A `use` inside a function: a reference, not a binding of the module.
                Token::Ident(word) if word == "use" => {
                    i = self.scan_use(&path, tokens, i, false, false);
                    continue;
                }
                Token::Ident(word)
                    if QUOTING_MACROS.contains(&word.as_str())
                        && tokens.get(i + 1) == Some(&Token::Punct('!'))
                        && matches!(tokens.get(i + 2), Some(Token::Punct('(' | '[' | '{'))) =>
                {
                    i = matching(tokens, i + 2) + 1;
                    continue;
                }
                Token::Punct('{' | '(' | '[') => depth += 1,
                Token::Punct('}' | ')' | ']') => depth = depth.saturating_sub(1),
                _ => {
                    if let Some((segments, next)) = path_at(tokens, i) {
                        self.module_mut(&path).references.push(Reference {
                            segments,
                            reexport: false,
                        });
                        i = next;
                        continue;
                    }
                }
            }
            i += 1;
        }
    }

    fn module_mut(&mut self, path: &ModPath) -> &mut Module {
        self.modules.entry(path.clone()).or_default()
    }

    /// Reads the `use` declaration at `tokens[at]` and returns the index
    /// after its `;`. `binds` is false for a `use` inside a function.
    fn scan_use(
        &mut self,
        path: &ModPath,
        tokens: &[Token],
        at: usize,
        reexport: bool,
        binds: bool,
    ) -> usize {
        let end = (at..tokens.len())
            .find(|&j| tokens[j] == Token::Punct(';'))
            .unwrap_or(tokens.len());
        let mut entries = Vec::new();
        let mut pos = at + 1;
        use_tree(&tokens[..end], &mut pos, Vec::new(), &mut entries);
        let module = self.module_mut(path);
        for entry in entries {
            match entry {
                UseEntry::Name { segments, binding } => {
                    if binds && binding != "_" {
                        module.bindings.insert(binding, segments.clone());
                    }
                    module.references.push(Reference { segments, reexport });
                }
                UseEntry::Glob(segments) => {
                    if binds {
                        module.globs.push(segments.clone());
                    }
                    module.references.push(Reference { segments, reexport });
                }
            }
        }
        end + 1
    }

    /// The absolute path (from the crate root) of `segments` as written in
    /// the module at `at`, or `None` when it leads outside the crate.
    fn absolutize(&self, at: &[String], segments: &[String], depth: usize) -> Option<Vec<String>> {
        let (first, rest) = segments.split_first()?;
        let joined = |base: &[String], rest: &[String]| -> Vec<String> {
            base.iter().chain(rest).cloned().collect()
        };
        match first.as_str() {
            "crate" => Some(rest.to_vec()),
            "self" => Some(joined(at, rest)),
            "super" => {
                let mut base = at.to_vec();
                let mut rest = segments;
                while rest.first().is_some_and(|s| s == "super") {
                    base.pop()?;
                    rest = &rest[1..];
                }
                Some(joined(&base, rest))
            }
            name => {
                let module = self.modules.get(at)?;
                if module.children.contains(name) {
                    Some(joined(at, segments))
                } else if let Some(target) = module.bindings.get(name).filter(|_| depth < 16) {
                    let mut absolute = self.absolutize(at, target, depth + 1)?;
                    absolute.extend_from_slice(rest);
                    Some(absolute)
                } else {
                    None
                }
            }
        }
    }

    /// The module that defines what the absolute path `segments` names,
    /// following re-exports and glob imports.
    fn resolve(&self, segments: &[String], depth: usize) -> ModPath {
        let mut current: ModPath = Vec::new();
        for (k, segment) in segments.iter().enumerate() {
            let Some(module) = self.modules.get(&current) else {
                break;
            };
            if module.children.contains(segment) {
                current.push(segment.clone());
                continue;
            }
            if depth >= 16 {
                break;
            }
            if let Some(target) = module.bindings.get(segment) {
                if let Some(mut absolute) = self.absolutize(&current, target, 0) {
                    absolute.extend_from_slice(&segments[k + 1..]);
                    return self.resolve(&absolute, depth + 1);
                }
                // Re-exported from another crate: it belongs to this module.
                break;
            }
            for glob in &module.globs {
                let Some(absolute) = self.absolutize(&current, glob, 0) else {
                    continue;
                };
                let source = self.resolve(&absolute, depth + 1);
                let Some(from) = self.modules.get(&source) else {
                    continue;
                };
                if from.children.contains(segment)
                    || from.bindings.contains_key(segment)
                    || from.items.contains(segment)
                {
                    let mut through = source.clone();
                    through.extend_from_slice(&segments[k..]);
                    return self.resolve(&through, depth + 1);
                }
            }
            break;
        }
        current
    }

    /// The module of the file that holds the module at `path`.
    fn file_of(&self, path: &ModPath) -> ModPath {
        self.modules
            .get(path)
            .map_or_else(|| path.clone(), |m| m.file.clone())
    }

    /// The modules of files: what the graph's nodes are.
    fn files(&self) -> BTreeSet<ModPath> {
        self.modules.values().map(|m| m.file.clone()).collect()
    }

    /// Every arrow `a -> b`: the module of a file, and that of another file
    /// it imports from.
    fn edges(&self) -> BTreeSet<(ModPath, ModPath)> {
        let mut edges = BTreeSet::new();
        for (path, module) in &self.modules {
            for reference in &module.references {
                let Some(absolute) = self.absolutize(path, &reference.segments, 0) else {
                    continue;
                };
                let target = self.resolve(&absolute, 0);
                if reference.reexport && target.starts_with(path) {
                    continue;
                }
                let (from, to) = (self.file_of(path), self.file_of(&target));
                if from != to {
                    edges.insert((from, to));
                }
            }
        }
        edges
    }

    /// Every import circle, one per group of modules that reach each other,
    /// written as `a -> b -> a`.
    fn cycles(&self) -> Vec<String> {
        let edges = self.edges();
        let mut next: BTreeMap<&ModPath, Vec<&ModPath>> = BTreeMap::new();
        for (a, b) in &edges {
            next.entry(a).or_default().push(b);
        }
        let reach = |from: &ModPath| -> BTreeSet<ModPath> {
            let mut seen = BTreeSet::new();
            let mut queue = VecDeque::from([from.clone()]);
            while let Some(m) = queue.pop_front() {
                for n in next.get(&m).into_iter().flatten() {
                    if seen.insert((*n).clone()) {
                        queue.push_back((*n).clone());
                    }
                }
            }
            seen
        };
        let files = self.files();
        let reaches: BTreeMap<&ModPath, BTreeSet<ModPath>> =
            files.iter().map(|m| (m, reach(m))).collect();
        let mut done = BTreeSet::new();
        let mut cycles = Vec::new();
        for (m, reached) in &reaches {
            if done.contains(*m) || !reached.contains(*m) {
                continue;
            }
            // Its group: the modules it reaches that reach it back.
            let group: BTreeSet<&ModPath> = reached
                .iter()
                .filter(|n| reaches.get(n).is_some_and(|r| r.contains(*m)))
                .collect();
            done.extend(group.iter().map(|n| (*n).clone()));
            let mut cycle = shortest_cycle(m, &next, &group);
            if group.len() > 2 {
                let members: Vec<String> = group.iter().map(|p| name_of(p)).collect();
                let _ = write!(
                    cycle,
                    " (one of the circles through {})",
                    members.join(", ")
                );
            }
            cycles.push(cycle);
        }
        cycles
    }

    /// Every circle, every arrow to a higher layer and every module in no
    /// layer, one line each; empty when the graph is sound. `layers` lists
    /// module names (and their descendants), lowest layer first.
    fn problems(&self, layers: Option<&[&[&str]]>) -> Vec<String> {
        let mut problems: Vec<String> = self
            .cycles()
            .into_iter()
            .map(|c| format!("import circle: {c}"))
            .collect();
        let Some(layers) = layers else {
            return problems;
        };
        let layer_of = |path: &ModPath| -> Option<usize> {
            let mut best: Option<(usize, usize)> = None;
            for (rank, names) in layers.iter().enumerate() {
                for name in names.iter() {
                    let prefix: Vec<&str> = if *name == "crate" {
                        Vec::new()
                    } else {
                        name.split("::").collect()
                    };
                    let matches = if prefix.is_empty() {
                        path.is_empty()
                    } else {
                        path.len() >= prefix.len() && path.iter().zip(&prefix).all(|(a, b)| a == b)
                    };
                    if matches && best.is_none_or(|(len, _)| prefix.len() >= len) {
                        best = Some((prefix.len(), rank));
                    }
                }
            }
            best.map(|(_, rank)| rank)
        };
        for path in &self.files() {
            if layer_of(path).is_none() {
                problems.push(format!("module {} is in no layer", name_of(path)));
            }
        }
        for (a, b) in self.edges() {
            if let (Some(from), Some(to)) = (layer_of(&a), layer_of(&b)) {
                if to > from {
                    problems.push(format!(
                        "arrow back: {} (layer {from}) -> {} (layer {to})",
                        name_of(&a),
                        name_of(&b)
                    ));
                }
            }
        }
        problems
    }

    /// The arrows between top-level modules (`crate` for the root).
    fn top_level_arrows(&self) -> BTreeSet<(String, String)> {
        let top = |path: &ModPath| name_of(&path[..path.len().min(1)]);
        self.edges()
            .iter()
            .map(|(a, b)| (top(a), top(b)))
            .filter(|(a, b)| a != b)
            .collect()
    }

    /// The arrows between top-level modules, one line per module.
    fn overview(&self) -> String {
        let mut arrows: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
        for path in &self.files() {
            arrows
                .entry(name_of(&path[..path.len().min(1)]))
                .or_default();
        }
        for (a, b) in self.top_level_arrows() {
            arrows.entry(a).or_default().insert(b);
        }
        let mut text = String::new();
        for (from, to) in arrows {
            let to: Vec<String> = to.into_iter().collect();
            let _ = writeln!(text, "{from} -> {}", to.join(", "));
        }
        text
    }
}

/// The shortest circle from `start` back to itself within `group`.
fn shortest_cycle(
    start: &ModPath,
    next: &BTreeMap<&ModPath, Vec<&ModPath>>,
    group: &BTreeSet<&ModPath>,
) -> String {
    let mut came_from: BTreeMap<&ModPath, &ModPath> = BTreeMap::new();
    let mut queue = VecDeque::from([start]);
    while let Some(m) = queue.pop_front() {
        for n in next.get(m).into_iter().flatten() {
            if !group.contains(n) {
                continue;
            }
            if *n == start {
                let mut chain = vec![m];
                let mut at = m;
                while at != start {
                    at = came_from[at];
                    chain.push(at);
                }
                chain.reverse();
                chain.push(start);
                let names: Vec<String> = chain.iter().map(|p| name_of(p)).collect();
                return names.join(" -> ");
            }
            if !came_from.contains_key(n) {
                came_from.insert(n, m);
                queue.push_back(n);
            }
        }
    }
    name_of(start)
}

/// Keywords that introduce a named item, whose name follows.
const ITEM_KEYWORDS: &[&str] = &[
    "fn",
    "struct",
    "enum",
    "trait",
    "type",
    "const",
    "static",
    "union",
    "macro_rules",
];

/// Macros whose bodies are code for another crate.
const QUOTING_MACROS: &[&str] = &["quote", "quote_spanned", "parse_quote"];

/// True for `cfg(test)` and `cfg(all(test, ..))`, not for `cfg(not(test))`.
fn is_cfg_test(attribute: &[Token]) -> bool {
    is_ident(attribute.first(), "cfg")
        && attribute.iter().any(|t| is_ident(Some(t), "test"))
        && !attribute.iter().any(|t| is_ident(Some(t), "not"))
}

fn is_ident(token: Option<&Token>, word: &str) -> bool {
    matches!(token, Some(Token::Ident(w)) if w == word)
}

/// The index of the bracket closing the one at `open`.
fn matching(tokens: &[Token], open: usize) -> usize {
    let mut depth = 0usize;
    for (j, token) in tokens.iter().enumerate().skip(open) {
        match token {
            Token::Punct('{' | '(' | '[') => depth += 1,
            Token::Punct('}' | ')' | ']') => {
                depth -= 1;
                if depth == 0 {
                    return j;
                }
            }
            _ => {}
        }
    }
    tokens.len().saturating_sub(1)
}

/// The index after the item starting at `at`: after its `;`, or after the
/// block that ends it.
fn skip_item(tokens: &[Token], at: usize) -> usize {
    let mut j = at;
    while j < tokens.len() {
        match tokens[j] {
            Token::Punct(';') => return j + 1,
            Token::Punct('{') => return matching(tokens, j) + 1,
            Token::Punct('(' | '[') => j = matching(tokens, j) + 1,
            _ => j += 1,
        }
    }
    tokens.len()
}

/// The path starting at `tokens[at]`, such as `crate::model::Scalar`, and
/// the index after it; only paths of two segments or more, and not the tail
/// of a path that started earlier (`::std::x`, `<T as X>::y`).
fn path_at(tokens: &[Token], at: usize) -> Option<(Vec<String>, usize)> {
    if at > 0 && tokens[at - 1] == Token::PathSep {
        return None;
    }
    let (first, mut j) = match (&tokens[at], tokens.get(at + 1), tokens.get(at + 2)) {
        (Token::Ident(first), Some(Token::PathSep), _) => (first.clone(), at + 1),
        (Token::Punct('$'), Some(Token::Ident(c)), Some(Token::PathSep)) if c == "crate" => {
            ("crate".to_owned(), at + 2)
        }
        _ => return None,
    };
    let mut segments = vec![first];
    while tokens.get(j) == Some(&Token::PathSep) {
        let Some(Token::Ident(segment)) = tokens.get(j + 1) else {
            break;
        };
        segments.push(segment.clone());
        j += 2;
    }
    Some((segments, j))
}

/// One leaf of a `use` tree.
enum UseEntry {
    /// A path, and the name it binds (its last segment, or its `as` name).
    Name {
        segments: Vec<String>,
        binding: String,
    },
    /// `path::*`.
    Glob(Vec<String>),
}

/// Reads a `use` tree from `tokens[*pos..]`, below `prefix`.
fn use_tree(tokens: &[Token], pos: &mut usize, prefix: Vec<String>, out: &mut Vec<UseEntry>) {
    let mut segments = prefix;
    if tokens.get(*pos) == Some(&Token::PathSep) {
        *pos += 1;
        if segments.is_empty() {
            // `::name`: another crate.
            segments.push("::".to_owned());
        }
    }
    while let Some(token) = tokens.get(*pos) {
        match token {
            Token::Ident(name) => {
                segments.push(name.clone());
                *pos += 1;
                if tokens.get(*pos) == Some(&Token::PathSep) {
                    *pos += 1;
                    continue;
                }
                let alias = if is_ident(tokens.get(*pos), "as") {
                    *pos += 2;
                    match tokens.get(*pos - 1) {
                        Some(Token::Ident(alias)) => Some(alias.clone()),
                        _ => None,
                    }
                } else {
                    None
                };
                if segments.last().is_some_and(|s| s == "self") {
                    segments.pop();
                }
                let binding = alias
                    .or_else(|| segments.last().cloned())
                    .unwrap_or_default();
                out.push(UseEntry::Name { segments, binding });
                return;
            }
            Token::Punct('$') => *pos += 1,
            Token::Punct('*') => {
                *pos += 1;
                out.push(UseEntry::Glob(segments));
                return;
            }
            Token::Punct('{') => {
                *pos += 1;
                while let Some(token) = tokens.get(*pos) {
                    match token {
                        Token::Punct('}') => {
                            *pos += 1;
                            return;
                        }
                        Token::Punct(',') => *pos += 1,
                        _ => {
                            let before = *pos;
                            use_tree(tokens, pos, segments.clone(), out);
                            if *pos == before {
                                *pos += 1;
                            }
                        }
                    }
                }
                return;
            }
            _ => return,
        }
    }
}

/// A token, as much of one as the scan needs.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Token {
    /// An identifier or keyword (raw identifiers without their `r#`).
    Ident(String),
    /// `::`.
    PathSep,
    /// Any other single character: brackets, `#`, `;`, `$`, `*`, ...
    Punct(char),
    /// A string, character or number.
    Literal,
}

/// Splits Rust source into tokens, dropping comments and the contents of
/// literals.
fn tokenize(text: &str) -> Vec<Token> {
    let chars: Vec<char> = text.chars().collect();
    let at = |i: usize| chars.get(i).copied();
    let is_ident_char = |c: char| c.is_alphanumeric() || c == '_';
    let mut tokens = Vec::new();
    let mut i = 0;
    while let Some(c) = at(i) {
        if c.is_whitespace() {
            i += 1;
        } else if c == '/' && at(i + 1) == Some('/') {
            while at(i).is_some_and(|c| c != '\n') {
                i += 1;
            }
        } else if c == '/' && at(i + 1) == Some('*') {
            let mut depth = 0;
            while let Some(c) = at(i) {
                if c == '/' && at(i + 1) == Some('*') {
                    depth += 1;
                    i += 2;
                } else if c == '*' && at(i + 1) == Some('/') {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    i += 1;
                }
            }
        } else if c == '"' {
            i = skip_string(&chars, i + 1);
            tokens.push(Token::Literal);
        } else if c == '\'' {
            if at(i + 1) == Some('\\') {
                i += 3;
                while at(i).is_some_and(|c| c != '\'') {
                    i += 1;
                }
                i += 1;
                tokens.push(Token::Literal);
            } else if at(i + 2) == Some('\'') {
                i += 3;
                tokens.push(Token::Literal);
            } else {
                // A lifetime or a label.
                i += 1;
                while at(i).is_some_and(is_ident_char) {
                    i += 1;
                }
            }
        } else if c.is_ascii_digit() {
            while at(i).is_some_and(is_ident_char) {
                i += 1;
            }
            tokens.push(Token::Literal);
        } else if is_ident_char(c) {
            let start = i;
            while at(i).is_some_and(is_ident_char) {
                i += 1;
            }
            let word: String = chars[start..i].iter().collect();
            match (word.as_str(), at(i), at(i + 1)) {
                ("r" | "br" | "cr", Some('"'), _)
                | ("r" | "br" | "cr", Some('#'), Some('"' | '#')) => {
                    i = skip_raw_string(&chars, i);
                    tokens.push(Token::Literal);
                }
                ("b" | "c", Some('"'), _) => {
                    i = skip_string(&chars, i + 1);
                    tokens.push(Token::Literal);
                }
                ("b", Some('\''), _) => {
                    i += if at(i + 1) == Some('\\') { 3 } else { 2 };
                    while at(i).is_some_and(|c| c != '\'') {
                        i += 1;
                    }
                    i += 1;
                    tokens.push(Token::Literal);
                }
                ("r", Some('#'), Some(c)) if is_ident_char(c) => {
                    let start = i + 1;
                    i = start;
                    while at(i).is_some_and(is_ident_char) {
                        i += 1;
                    }
                    tokens.push(Token::Ident(chars[start..i].iter().collect()));
                }
                _ => tokens.push(Token::Ident(word)),
            }
        } else if c == ':' && at(i + 1) == Some(':') {
            tokens.push(Token::PathSep);
            i += 2;
        } else {
            tokens.push(Token::Punct(c));
            i += 1;
        }
    }
    tokens
}

/// The index after a string whose contents start at `i`.
fn skip_string(chars: &[char], mut i: usize) -> usize {
    while let Some(&c) = chars.get(i) {
        match c {
            '\\' => i += 2,
            '"' => return i + 1,
            _ => i += 1,
        }
    }
    i
}

/// The index after a raw string whose `#`s or opening quote are at `i`.
fn skip_raw_string(chars: &[char], mut i: usize) -> usize {
    let mut hashes = 0;
    while chars.get(i) == Some(&'#') {
        hashes += 1;
        i += 1;
    }
    i += 1; // the opening quote
    while i < chars.len() {
        if chars[i] == '"' && (1..=hashes).all(|k| chars.get(i + k) == Some(&'#')) {
            return i + 1 + hashes;
        }
        i += 1;
    }
    i
}
