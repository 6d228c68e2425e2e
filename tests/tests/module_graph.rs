//! The import graph of a crate, read with `syn`; [`Graph::problems`] reports
//! every import circle and every arrow from a module to one of a higher layer.
//!
//! - The nodes are files: an inline `mod name { .. }` has its own names, but
//!   what it imports, and what imports it, counts for the file that holds it.
//! - Every `use` leaf, and every path of two segments or more in code, leads
//!   to the module defining the item through any re-exports; a glob to its
//!   module. Re-exporting one's own descendants is structure, not an arrow.
//! - `#[cfg(test)]` items and the bodies of `quote!`-like macros are left
//!   out; other macros are read when their arguments are expressions.

use std::collections::{btree_map::Entry, BTreeMap, BTreeSet, VecDeque};

use kafka_wire_tests::workspace_root;
use syn::visit_mut::{self, VisitMut};
use syn::{punctuated::Punctuated, Item, UseTree, Visibility};

/// The generator's layers, lowest first: a module may import only from its
/// own layer and those below. A name holds all inside it; `crate` the root.
const CODEGEN_LAYERS: &str = "diagnostics error primitives rust_source | parse | model | ir \
    | emit diff error_codes | config crate";

/// The generator imports along its layers; no other package has a circle.
#[test]
fn the_imports_run_one_way() {
    let graph = Graph::read(&disk("codegen/src"));
    let (edges, mut problems) = (graph.edges(), graph.problems(CODEGEN_LAYERS));
    // The pipeline's own arrows (an empty graph would have no problem).
    for arrow in "parse>diagnostics model>parse ir>model emit>ir diff>ir config>emit".split(' ') {
        let (a, b) = arrow.split_once('>').expect("an arrow");
        if !edges.iter().any(|(x, y)| inside(x, a) && inside(y, b)) {
            problems.push(format!("no arrow {arrow}"));
        }
    }
    // The emitters see the IR, never the model; error codes are beside them.
    problems.extend(graph.mentions("emit", "model"));
    problems.extend(graph.mentions("error_codes", "emit"));
    for src in "wire/src records/src proxy/src cli/src capture/src fake/src".split(' ') {
        let graph = Graph::read(&disk(&format!("kafka-protocol/{src}")));
        assert!(graph.0.len() > 3, "{src}: too few modules read");
        let circles = graph.cycles().into_iter();
        problems.extend(circles.map(|circle| format!("{src}: {circle}")));
    }
    assert_eq!(problems, [""; 0], "the import graphs");
}

/// A crate for the test of the test: each file after `@` and its name.
const SMALL_CRATE: &str = r#"
@ lib.rs: //! crate::mid::a in a comment
mod low; pub mod mid; mod high; pub use low::Thing;
fn uses() -> crate::Thing { low::g(); crate::Thing }
@ high.rs: pub fn f() {}
@ low.rs: pub struct Thing; pub fn g() { let _ = "crate::mid::a"; }
@ mid/mod.rs: mod a; mod b; pub use a::A; pub(crate) use b::B;
#[cfg(test)] mod tests { use crate::high::f; }
@ mid/a.rs: use crate::mid::B; pub struct A; fn h() { quote!(crate::high::f); }
@ mid/b.rs: pub struct B; mod inner { fn k() -> super::super::a::A { crate::mid::A } }
"#;

/// The check can fail (a circle via a re-export and an inline module, an arrow
/// back, a module in no layer, a mention); comments, strings, `quote!`, tests make none.
#[test]
fn a_circle_and_an_arrow_back_are_found() {
    let files = SMALL_CRATE.split("\n@ ").filter_map(|f| f.split_once(": "));
    let graph = Graph::read(&|path| Some(files.clone().find(|f| f.0 == path)?.1.into()));
    let arrow = |(a, b): (ModPath, ModPath)| format!("{} -> {}", name(&a), name(&b));
    let mut report: Vec<_> = graph.edges().into_iter().map(arrow).collect();
    report.extend(graph.problems("low high | mid | crate"));
    report.extend(graph.problems("crate mid | low"));
    report.extend(graph.mentions("mid::a", "mid::b"));
    report.extend(graph.mentions("mid", "high"));
    let expected = "crate -> low
mid::a -> mid::b
mid::b -> mid::a
import circle: mid::a -> mid::b -> mid::a
import circle: mid::a -> mid::b -> mid::a
module high is in no layer
arrow back: crate (layer 0) -> low (layer 1)
mid::a mentions crate::mid::B (mid::b)";
    assert_eq!(report.join("\n"), expected);
}

/// Reads a file, given its path in the crate's sources.
type Load<'a> = &'a dyn Fn(&str) -> Option<String>;
fn disk(src: &str) -> impl Fn(&str) -> Option<String> {
    let src = workspace_root().join(src);
    move |path| std::fs::read_to_string(src.join(path)).ok()
}

/// A module's path from the crate root: empty for the root itself.
type ModPath = Vec<String>;
/// `crate` for the root, `emit::common` for the others.
fn name(path: &[String]) -> String {
    path.first().map_or("crate".into(), |_| path.join("::"))
}
/// True if the module `path` is the one named `outer` or inside it.
fn inside(path: &[String], outer: &str) -> bool {
    (name(path) + "::").starts_with(&format!("{outer}::"))
}

/// A module: its file's module, children, `use` bindings, paths (`pub use`d?).
#[derive(Debug, Default)]
struct Module {
    file: ModPath,
    children: BTreeSet<String>,
    bindings: BTreeMap<String, Vec<String>>,
    references: Vec<(Vec<String>, bool)>,
}

#[derive(Debug, Default)]
struct Graph(BTreeMap<ModPath, Module>);

impl Graph {
    fn read(load: Load) -> Graph {
        let root = parse(load, ["lib.rs".into(), "main.rs".into()]);
        Graph::default().read_module(vec![], vec![], root.items, load)
    }

    /// Reads the items of the module `path`, written in the file of `file`.
    fn read_module(mut self, path: ModPath, file: ModPath, items: Vec<Item>, load: Load) -> Self {
        self.0.entry(path.clone()).or_default().file = file.clone();
        for mut item in items.into_iter().filter(|item| !is_test(item)) {
            let module = self.0.get_mut(&path).expect("the module being read");
            let Item::Mod(m) = item else {
                Paths(module, matches!(item, Item::Use(_))).visit_item_mut(&mut item);
                continue;
            };
            let child = [&path[..], &[m.ident.to_string()]].concat();
            let names = ["", "/mod"].map(|end| format!("{}{end}.rs", child.join("/")));
            let (file, items) = match m.content {
                Some((_, items)) => (file.clone(), items),
                None => (child.clone(), parse(load, names).items),
            };
            module.children.insert(m.ident.to_string());
            self = self.read_module(child, file, items, load);
        }
        self
    }

    /// The modules that `path`, written in `at`, leads through to what it names.
    fn trail(&self, at: &[String], path: &[String], depth: usize) -> Vec<ModPath> {
        let rest = &path[path.len().min(1)..];
        let next = match path.first().map(String::as_str).filter(|_| depth < 64) {
            None => return vec![at.to_vec()],
            Some("crate") => vec![],
            Some("self") => at.to_vec(),
            Some("super") if !at.is_empty() => at[..at.len() - 1].to_vec(),
            Some(name) if self.0[at].children.contains(name) => [at, &[name.into()]].concat(),
            Some(name) => match self.0[at].bindings.get(name) {
                Some(target) => return self.trail(at, &[&target[..], rest].concat(), depth + 1),
                None => return vec![at.to_vec()],
            },
        };
        [vec![at.to_vec()], self.trail(&next, rest, depth + 1)].concat()
    }

    /// Every arrow `a -> b`: a file's module, and that of a file it uses.
    fn edges(&self) -> BTreeSet<(ModPath, ModPath)> {
        let mut edges = BTreeSet::new();
        for (at, module) in &self.0 {
            for (path, reexport) in &module.references {
                let target = self.trail(at, path, 0).pop().expect("a module");
                let (from, to) = (&module.file, &self.0[&target].file);
                if from != to && !(*reexport && target.starts_with(at)) {
                    edges.insert((from.clone(), to.clone()));
                }
            }
        }
        edges
    }

    /// The shortest circle from each module on no circle found before.
    fn cycles(&self) -> Vec<String> {
        let (edges, mut done, mut cycles) = (self.edges(), BTreeSet::<&ModPath>::new(), vec![]);
        for start in edges.iter().map(|(a, _)| a).collect::<BTreeSet<_>>() {
            // Breadth first, each module with the first way to it found.
            let (mut ways, mut queue) = (BTreeMap::new(), VecDeque::from([vec![start]]));
            while let Some(way) = queue.pop_front() {
                for (_, next) in edges.iter().filter(|(a, _)| a == way[way.len() - 1]) {
                    if let Entry::Vacant(entry) = ways.entry(next) {
                        queue.push_back(entry.insert([&way[..], &[next]].concat()).clone());
                    }
                }
            }
            if let Some(way) = ways.get(start).filter(|_| !done.contains(start)) {
                let names: Vec<_> = way.iter().map(|m| name(m)).collect();
                cycles.push(format!("import circle: {}", names.join(" -> ")));
                done.extend(way);
            }
        }
        cycles
    }

    /// Every circle, module in no layer and arrow to a higher layer.
    fn problems(&self, layers: &str) -> Vec<String> {
        let mut problems = self.cycles();
        // The layer of the longest name that holds the module.
        let layer = |path: &ModPath| {
            let ranks = layers.split('|').enumerate();
            let ranks = ranks.flat_map(|(rank, ns)| ns.split_whitespace().map(move |n| (n, rank)));
            let holding = ranks.filter(|(n, _)| inside(path, n));
            holding.max_by_key(|(n, _)| n.len()).map(|(_, rank)| rank)
        };
        let files: BTreeSet<_> = self.0.values().map(|m| &m.file).collect();
        for file in files.into_iter().filter(|f| layer(f).is_none()) {
            problems.push(format!("module {} is in no layer", name(file)));
        }
        for (a, b) in self.edges() {
            let (from, to) = (layer(&a).unwrap_or(usize::MAX), layer(&b).unwrap_or(0));
            let (a, b) = (name(&a), name(&b));
            let arrow = format!("arrow back: {a} (layer {from}) -> {b} (layer {to})");
            problems.extend((to > from).then_some(arrow));
        }
        problems
    }

    /// Each path mentioned in (or inside) `from` leading through (or inside) `to`.
    fn mentions(&self, from: &str, to: &str) -> Vec<String> {
        let mut found = vec![];
        for (at, module) in self.0.iter().filter(|(at, _)| inside(at, from)) {
            for (path, _) in &module.references {
                let trail = self.trail(at, path, 0);
                if trail.iter().any(|m| inside(m, to)) {
                    let (path, target) = (path.join("::"), name(&trail[trail.len() - 1]));
                    found.push(format!("{} mentions {path} ({target})", name(at)));
                }
            }
        }
        found
    }
}

/// The first of the files `names` that `load` finds, parsed.
fn parse(load: Load, names: [String; 2]) -> syn::File {
    let mut found = names.iter().filter_map(|name| Some((name, load(name)?)));
    let (name, text) = found.next().unwrap_or_else(|| panic!("none of {names:?}"));
    syn::parse_file(&text).unwrap_or_else(|e| panic!("{name}: {e}"))
}

/// True for an item under `cfg(test)` or `cfg(all(test, ..))`, not `cfg(not(test))`.
fn is_test(item: &Item) -> bool {
    macro_rules! attrs {
        ($($kind:ident)*) => { match item { $(Item::$kind(i) => &i.attrs,)* _ => &[] } };
    }
    let attrs: &[_] = attrs!(Const Enum ExternCrate Fn ForeignMod Impl Macro Mod Static Struct
        Trait Type Union Use);
    attrs.iter().any(|attr| {
        let list = attr.meta.require_list().map(|l| l.tokens.to_string());
        // The words outside string literals.
        let text: String = list.unwrap_or_default().split('"').step_by(2).collect();
        let words: Vec<_> = text.split([' ', '(', ')', ',']).collect();
        attr.path().is_ident("cfg") && words.contains(&"test") && !words.contains(&"not")
    })
}

/// The leaves of a `use` tree below `prefix`: each path, and the name it binds
/// (its `as` name, or its last segment but `self`; none for a glob).
fn uses(tree: &UseTree, prefix: &[String]) -> Vec<(Vec<String>, Option<String>)> {
    let (ident, rename) = match tree {
        UseTree::Path(p) => return uses(&p.tree, &[prefix, &[p.ident.to_string()]].concat()),
        UseTree::Group(g) => return g.items.iter().flat_map(|t| uses(t, prefix)).collect(),
        UseTree::Glob(_) => return vec![(prefix.to_vec(), None)],
        UseTree::Name(n) => (&n.ident, None),
        UseTree::Rename(r) => (&r.ident, Some(r.rename.to_string())),
    };
    let path = [prefix, &[ident.to_string()]].concat();
    let binding = rename.or_else(|| path.iter().rfind(|s| *s != "self").cloned());
    vec![(path, binding)]
}

/// Records an item's paths in its module: those in `use`s (binding names if
/// it is a `use` of the module), and those of two segments or more in code.
struct Paths<'a>(&'a mut Module, bool);
impl VisitMut for Paths<'_> {
    fn visit_path_mut(&mut self, path: &mut syn::Path) {
        let segments = path.segments.iter().map(|s| s.ident.to_string());
        if path.leading_colon.is_none() && path.segments.len() >= 2 {
            self.0.references.push((segments.collect(), false));
        }
        visit_mut::visit_path_mut(self, path);
    }

    fn visit_item_use_mut(&mut self, item: &mut syn::ItemUse) {
        let reexport = !matches!(item.vis, Visibility::Inherited);
        for (path, binding) in uses(&item.tree, &[]) {
            let binding = binding.filter(|b| self.1 && b != "_");
            self.0.bindings.extend(binding.map(|b| (b, path.clone())));
            self.0.references.push((path, reexport));
        }
    }

    fn visit_macro_mut(&mut self, mac: &mut syn::Macro) {
        let parser = Punctuated::<syn::Expr, syn::Token![,]>::parse_terminated;
        let quoting = ["quote", "quote_spanned", "parse_quote"].map(|q| mac.path.is_ident(q));
        let arguments = mac.parse_body_with(parser).into_iter().flatten();
        for mut argument in arguments.filter(|_| !quoting.contains(&true)) {
            self.visit_expr_mut(&mut argument);
        }
    }
}
