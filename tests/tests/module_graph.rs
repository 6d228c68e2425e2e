//! The import graph of a crate, read with `syn`: which module uses which.
//! [`Graph::problems`] reports every import circle and every arrow from a
//! module to one of a higher layer.
//!
//! - The nodes are files: an inline `mod name { .. }` has its own names, but
//!   what it imports, and what imports it, counts for the file that holds it.
//! - Every `use` tree, and every path of two segments or more in code, leads
//!   to the module that defines the item, through the `use`s that re-export
//!   it: `crate::CodegenError` leads to the module that defines it, not to
//!   the root that re-exports it. A glob import leads to its module.
//! - Re-exporting one's own descendants is structure, not an arrow.
//! - `#[cfg(test)]` items are left out, and so are the bodies of `quote!`-like
//!   macros; other macros are read when their arguments are expressions.

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::path::Path;

use kafka_wire_tests::workspace_root;
use syn::visit_mut::{self, VisitMut};
use syn::{punctuated::Punctuated, Item, UseTree, Visibility};

/// The generator's layers, lowest first: each module may import only from
/// its own layer and those below it. A name stands for the module and
/// everything inside it; `crate` is the crate root (`lib.rs`).
const CODEGEN_LAYERS: &[&[&str]] = &[
    &["diagnostics", "error", "primitives", "rust_source"],
    &["parse"],
    &["model"],
    &["ir"],
    &["emit", "diff", "error_codes"],
    &["config", "crate"],
];

#[test]
fn the_generator_imports_run_one_way_through_its_pipeline() {
    let graph = Graph::read(&workspace_root().join("codegen/src"), &disk);
    let arrows = graph.top_level_arrows();
    println!("{arrows:#?}");
    let mut problems = graph.problems(CODEGEN_LAYERS);
    // The pipeline's own arrows (an empty graph would have no problem).
    for arrow in "parse>diagnostics model>parse ir>model emit>ir diff>ir config>emit".split(' ') {
        if !arrows.contains(arrow) {
            problems.push(format!("no arrow {arrow}"));
        }
    }
    // The emitters see the IR, never the model; the error codes' generator
    // is a stage of its own, beside the emitters.
    problems.extend(graph.mentions("emit", "model"));
    problems.extend(graph.mentions("error_codes", "emit"));
    assert_eq!(problems, [""; 0], "the generator's import graph");
}

/// Every package of the library, the command-line tool and the example
/// broker: no import circle.
#[test]
fn no_package_has_an_import_circle() {
    for src in "wire/src records/src proxy/src cli/src examples/mini_broker".split(' ') {
        let graph = Graph::read(&workspace_root().join("kafka-protocol").join(src), &disk);
        println!("{src}: {} modules", graph.modules.len());
        assert!(graph.modules.len() > 3, "{src}: too few modules read");
        assert_eq!(graph.cycles(), [""; 0], "{src}: import circles");
    }
}

/// A crate for the test of the test: each file after a `@` line with its name.
const SMALL_CRATE: &str = r#"
@ lib.rs
//! crate::mid::a in a comment
mod low; pub mod mid; mod high; pub use low::Thing;
fn uses() -> crate::Thing { low::g(); crate::Thing }
@ high.rs
pub fn f() {}
@ low.rs
pub struct Thing; pub fn g() { let _ = "crate::mid::a"; }
@ mid/mod.rs
mod a; mod b; pub use a::A; pub(crate) use b::B;
#[cfg(test)] mod tests { use crate::high::f; }
@ mid/a.rs
use crate::mid::B; pub struct A; fn h() { quote!(crate::high::f); }
@ mid/b.rs
pub struct B; mod inner { fn k() -> super::super::a::A { crate::mid::A } }
"#;

/// The check itself can fail: a circle (a -> b through its parent's
/// re-export, b -> a from a module inline in b), an arrow back, a module in
/// no layer, and an import through a re-export; comments, strings, `quote!`
/// bodies, tests and re-exports of descendants make no arrow.
#[test]
fn a_circle_and_an_arrow_back_are_found() {
    let files = SMALL_CRATE.split("\n@ ").filter_map(|f| f.split_once('\n'));
    let files: BTreeMap<&str, &str> = files.collect();
    let load = |path: &Path| Some(files.get(path.to_str()?)?.to_string());
    let graph = Graph::read(Path::new(""), &load);
    let mut report = vec![];
    for (a, b) in graph.edges() {
        report.push(format!("{} -> {}", name(&a), name(&b)));
    }
    report.extend(graph.problems(&[&["low", "high"], &["mid"], &["crate"]]));
    report.extend(graph.problems(&[&["crate", "high", "mid"], &["low"]]));
    report.extend(graph.problems(&[&["low"], &["mid"], &["crate"]]));
    report.extend(graph.mentions("mid::a", "mid::b"));
    report.extend(graph.mentions("mid", "high"));
    let expected = "crate -> low
mid::a -> mid::b
mid::b -> mid::a
import circle: mid::a -> mid::b -> mid::a
import circle: mid::a -> mid::b -> mid::a
arrow back: crate (layer 0) -> low (layer 1)
import circle: mid::a -> mid::b -> mid::a
module high is in no layer
mid::a mentions crate::mid::B (mid::b)";
    assert_eq!(report.join("\n"), expected);
}

/// Reads a file: from disk, or from memory for the test of the test.
type Load<'a> = &'a dyn Fn(&Path) -> Option<String>;

fn disk(path: &Path) -> Option<String> {
    std::fs::read_to_string(path).ok()
}

/// A module's path from the crate root: empty for the root itself.
type ModPath = Vec<String>;

/// `crate` for the root, `emit::common` for the others.
fn name(path: &[String]) -> String {
    match path {
        [] => "crate".into(),
        _ => path.join("::"),
    }
}

/// The path of a module given by name, `crate` for the root.
fn path_of(name: &str) -> ModPath {
    let names = name.split("::").filter(|s| *s != "crate");
    names.map(String::from).collect()
}

/// One module: the module of its file (itself, unless it is inline), its
/// child modules, the names its `use`s bind to the paths they name, and
/// every path it mentions, with whether a `pub use` re-exports it.
#[derive(Debug, Default)]
struct Module {
    file: ModPath,
    children: BTreeSet<String>,
    bindings: BTreeMap<String, Vec<String>>,
    references: Vec<(Vec<String>, bool)>,
}

/// The modules of one crate, by path.
#[derive(Debug, Default)]
struct Graph {
    modules: BTreeMap<ModPath, Module>,
}

impl Graph {
    /// Reads the crate whose sources are in `src`: its `lib.rs` or `main.rs`.
    fn read(src: &Path, load: Load) -> Graph {
        let root = parse(src, ["lib.rs".into(), "main.rs".into()], load).expect("a crate root");
        let mut graph = Graph::default();
        graph.read_module(vec![], vec![], src, root.items, load);
        graph
    }

    /// Reads the items of the module `path`, written in the file of the
    /// module `file`, whose child files are in `dir`.
    fn read_module(
        &mut self,
        path: ModPath,
        file: ModPath,
        dir: &Path,
        items: Vec<Item>,
        load: Load,
    ) {
        self.modules.entry(path.clone()).or_default().file = file.clone();
        for mut item in items.into_iter().filter(|item| !is_test(item)) {
            let module = self.modules.get_mut(&path).expect("the module being read");
            if let Item::Mod(m) = &mut item {
                let name = m.ident.to_string();
                let child = [path.clone(), vec![name.clone()]].concat();
                let (child_file, items) = match m.content.take() {
                    Some((_, items)) => (file.clone(), items),
                    None => {
                        let names = [format!("{name}.rs"), format!("{name}/mod.rs")];
                        let found = parse(dir, names, load).expect("a module's file");
                        if found.attrs.iter().any(is_cfg_test) {
                            continue;
                        }
                        (child.clone(), found.items)
                    }
                };
                module.children.insert(name.clone());
                self.read_module(child, child_file, &dir.join(name), items, load);
            } else if let Item::Use(u) = &item {
                let reexport = !matches!(u.vis, Visibility::Inherited);
                for (segments, binding) in use_entries(&u.tree, vec![]) {
                    if let Some(binding) = binding.filter(|b| b != "_") {
                        module.bindings.insert(binding, segments.clone());
                    }
                    module.references.push((segments, reexport));
                }
            } else {
                let mut paths = Paths(vec![]);
                paths.visit_item_mut(&mut item);
                let paths = paths.0.into_iter().map(|p| (p, false));
                module.references.extend(paths);
            }
        }
    }

    /// The modules that `path`, written in the module `at`, leads through,
    /// the last one defining what it names; empty when it leads outside.
    fn trail(&self, at: &[String], path: &[String], depth: usize) -> Vec<ModPath> {
        let supers = path.iter().take_while(|s| *s == "super").count();
        let module = &self.modules[at];
        let (mut current, mut rest) = match path.split_first() {
            _ if depth > 16 => return vec![],
            Some((first, rest)) if first == "crate" => (vec![], rest),
            Some((first, rest)) if first == "self" => (at.to_vec(), rest),
            _ if supers > 0 && supers <= at.len() => {
                (at[..at.len() - supers].to_vec(), &path[supers..])
            }
            Some((first, _)) if module.children.contains(first) => (at.to_vec(), path),
            Some((first, rest)) => match module.bindings.get(first) {
                Some(target) => return self.trail(at, &[&target[..], rest].concat(), depth + 1),
                None => return vec![],
            },
            None => return vec![],
        };
        let mut trail = vec![current.clone()];
        while let Some((segment, tail)) = rest.split_first() {
            let module = &self.modules[&current];
            if !module.children.contains(segment) {
                // Defined here, unless a `use` brings it from elsewhere.
                if let Some(target) = module.bindings.get(segment) {
                    let path = [&target[..], tail].concat();
                    trail.extend(self.trail(&current, &path, depth + 1));
                }
                break;
            }
            current.push(segment.clone());
            trail.push(current.clone());
            rest = tail;
        }
        trail
    }

    /// Every path each module mentions, with the trail it leads along and
    /// whether it is re-exported.
    fn resolved(&self) -> Vec<(&ModPath, &Vec<String>, Vec<ModPath>, bool)> {
        let mut resolved = vec![];
        for (path, module) in &self.modules {
            for (segments, reexport) in &module.references {
                let trail = self.trail(path, segments, 0);
                resolved.push((path, segments, trail, *reexport));
            }
        }
        resolved
    }

    /// Every arrow `a -> b`: a file's module, and that of a file it uses.
    fn edges(&self) -> BTreeSet<(ModPath, ModPath)> {
        let mut edges = BTreeSet::new();
        for (path, _, trail, reexport) in self.resolved() {
            let Some(target) = trail.last() else { continue };
            let (from, to) = (&self.modules[path].file, &self.modules[target].file);
            if from != to && !(reexport && target.starts_with(path)) {
                edges.insert((from.clone(), to.clone()));
            }
        }
        edges
    }

    /// Every file's module.
    fn files(&self) -> BTreeSet<&ModPath> {
        self.modules.values().map(|m| &m.file).collect()
    }

    /// A circle through each module on no circle found before, written
    /// `a -> b -> a`: the shortest from that module.
    fn cycles(&self) -> Vec<String> {
        let (edges, mut done, mut cycles) = (self.edges(), BTreeSet::<&ModPath>::new(), vec![]);
        for start in self.files() {
            // Breadth first: where each module is first reached from.
            let (mut came_from, mut queue) = (BTreeMap::new(), VecDeque::from([start]));
            while let Some(m) = queue.pop_front() {
                for (_, n) in edges.iter().filter(|(a, _)| a == m) {
                    if !came_from.contains_key(n) {
                        came_from.insert(n, m);
                        queue.push_back(n);
                    }
                }
            }
            // Back from `start` to itself, if it is reached at all.
            let (mut chain, mut at) = (vec![name(start)], start);
            while let Some(&from) = came_from.get(at).filter(|_| !done.contains(start)) {
                chain.push(name(from));
                at = from;
                if at == start {
                    done.extend(came_from.keys().filter(|m| chain.contains(&name(m))));
                    chain.reverse();
                    cycles.push(chain.join(" -> "));
                    break;
                }
            }
        }
        cycles
    }

    /// Every circle, every arrow to a higher layer and every module in no
    /// layer, one line each. `layers` lists modules (with their
    /// descendants), lowest layer first.
    fn problems(&self, layers: &[&[&str]]) -> Vec<String> {
        let mut problems: Vec<String> = self
            .cycles()
            .iter()
            .map(|c| format!("import circle: {c}"))
            .collect();
        // The layer of the longest name that is a prefix of the path.
        let layer = |path: &ModPath| {
            let mut best = None;
            for (rank, names) in layers.iter().enumerate() {
                for prefix in names.iter().map(|n| path_of(n)) {
                    // `crate` (an empty prefix) is the root alone.
                    let holds =
                        path.starts_with(&prefix) && (!prefix.is_empty() || path.is_empty());
                    if holds && best.is_none_or(|(len, _)| prefix.len() >= len) {
                        best = Some((prefix.len(), rank));
                    }
                }
            }
            best.map(|(_, rank)| rank)
        };
        for file in self.files().into_iter().filter(|f| layer(f).is_none()) {
            problems.push(format!("module {} is in no layer", name(file)));
        }
        for (a, b) in self.edges() {
            let (from, to) = (layer(&a), layer(&b));
            if from.is_some() && to > from {
                let (a, b, from, to) = (name(&a), name(&b), from.unwrap_or(0), to.unwrap_or(0));
                problems.push(format!(
                    "arrow back: {a} (layer {from}) -> {b} (layer {to})"
                ));
            }
        }
        problems
    }

    /// The arrows between top-level modules, as `from>to`.
    fn top_level_arrows(&self) -> BTreeSet<String> {
        let top = |path: &ModPath| name(&path[..path.len().min(1)]);
        let arrows = self.edges().into_iter().map(|(a, b)| (top(&a), top(&b)));
        arrows
            .filter(|(a, b)| a != b)
            .map(|(a, b)| format!("{a}>{b}"))
            .collect()
    }

    /// Every path mentioned in `from` (or below it) that leads into or
    /// through `to` (or below it), whatever re-exports it.
    fn mentions(&self, from: &str, to: &str) -> Vec<String> {
        let (from, to, mut found) = (path_of(from), path_of(to), vec![]);
        for (path, segments, trail, _) in self.resolved() {
            if path.starts_with(&from) && trail.iter().any(|m| m.starts_with(&to)) {
                let (path, segments) = (name(path), segments.join("::"));
                let target = name(trail.last().expect("a trail through `to`"));
                found.push(format!("{path} mentions {segments} ({target})"));
            }
        }
        found
    }
}

/// The first of the files `names` in `dir` that `load` finds, parsed.
fn parse<const N: usize>(dir: &Path, names: [String; N], load: Load) -> Option<syn::File> {
    let path = names
        .iter()
        .map(|n| dir.join(n))
        .find(|p| load(p).is_some())?;
    let parsed = syn::parse_file(&load(&path)?);
    Some(parsed.unwrap_or_else(|e| panic!("{}: {e}", path.display())))
}

/// True for an item under `#[cfg(test)]` or `#[cfg(all(test, ..))]`.
fn is_test(item: &Item) -> bool {
    macro_rules! attrs_of {
        ($($kind:ident)*) => { match item { $(Item::$kind(i) => &i.attrs[..],)* _ => &[][..] } };
    }
    let attrs = attrs_of!(Const Enum ExternCrate Fn ForeignMod Impl Macro Mod Static Struct Trait Type Union Use);
    attrs.iter().any(is_cfg_test)
}

/// True for `cfg(test)` and `cfg(all(test, ..))`, not for `cfg(not(test))`.
fn is_cfg_test(attr: &syn::Attribute) -> bool {
    let list = attr.meta.require_list().map(|l| l.tokens.to_string());
    // The words outside string literals.
    let text: String = list.unwrap_or_default().split('"').step_by(2).collect();
    let words: Vec<&str> = text
        .split(|c: char| !c.is_alphanumeric() && c != '_')
        .collect();
    attr.path().is_ident("cfg") && words.contains(&"test") && !words.contains(&"not")
}

/// The leaves of a `use` tree below `prefix`: each path, and the name it
/// binds (its last segment, or its `as` name), or `None` for a glob.
fn use_entries(tree: &UseTree, mut prefix: Vec<String>) -> Vec<(Vec<String>, Option<String>)> {
    let (ident, binding) = match tree {
        UseTree::Path(p) => {
            return use_entries(&p.tree, [prefix, vec![p.ident.to_string()]].concat())
        }
        UseTree::Group(g) => {
            return g
                .items
                .iter()
                .flat_map(|t| use_entries(t, prefix.clone()))
                .collect()
        }
        UseTree::Glob(_) => return vec![(prefix, None)],
        UseTree::Name(n) => (&n.ident, &n.ident),
        UseTree::Rename(r) => (&r.ident, &r.rename),
    };
    if ident != "self" {
        prefix.push(ident.to_string());
    }
    let binding = (binding != "self").then(|| binding.to_string());
    let binding = binding.or_else(|| prefix.last().cloned());
    vec![(prefix, binding)]
}

/// The paths of two segments or more in code: in expressions, types,
/// patterns, `use` declarations inside functions, and macro arguments.
struct Paths(Vec<Vec<String>>);

impl VisitMut for Paths {
    fn visit_path_mut(&mut self, path: &mut syn::Path) {
        let segments = path.segments.iter().map(|s| s.ident.to_string());
        if path.leading_colon.is_none() && path.segments.len() >= 2 {
            self.0.push(segments.collect());
        }
        visit_mut::visit_path_mut(self, path);
    }

    fn visit_item_use_mut(&mut self, item: &mut syn::ItemUse) {
        let entries = use_entries(&item.tree, vec![]);
        self.0.extend(entries.into_iter().map(|(p, _)| p));
    }

    fn visit_macro_mut(&mut self, mac: &mut syn::Macro) {
        let parser = Punctuated::<syn::Expr, syn::Token![,]>::parse_terminated;
        let quoting = ["quote", "quote_spanned", "parse_quote"].map(|q| mac.path.is_ident(q));
        for mut argument in mac.parse_body_with(parser).into_iter().flatten() {
            if !quoting.contains(&true) {
                self.visit_expr_mut(&mut argument);
            }
        }
    }
}
