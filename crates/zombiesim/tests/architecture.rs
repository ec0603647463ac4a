//! The module graph has no cycle: every top-level module of the crate names other
//! modules (`crate::x`) only in one direction, so the layers of docs/architecture.md
//! stay layers (workload and trace know nothing of the host or the content layer, the
//! report does not reach into the host model, configuration does not depend on flash).
//!
//! The same holds inside every folder: its files (`mod.rs`, `x.rs`, a subfolder) name
//! each other only in one direction. And no source file (Rust or Python, tests
//! included) is over 800 lines: a file
//! that long models more than one thing and is split along what it models.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

#[path = "architecture/rust_source.rs"]
mod rust_source;

use rust_source::{
    code_only, ident_at, inline_modules, line_of, path_at, skip_ws, use_decls,
    without_test_modules, word_starts, Leaf,
};

/// Top-level module → the top-level modules it names.
fn graph() -> BTreeMap<String, BTreeSet<String>> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    let mut stack = vec![src.clone()];
    while let Some(dir) = stack.pop() {
        for entry in fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
                continue;
            }
            if path.extension().is_none_or(|e| e != "rs") {
                continue;
            }
            let rel = path.strip_prefix(&src).unwrap();
            let first = rel
                .components()
                .next()
                .unwrap()
                .as_os_str()
                .to_string_lossy();
            let module = first.trim_end_matches(".rs").to_string();
            if module == "lib" {
                continue;
            }
            let text = fs::read_to_string(&path).unwrap();
            let deps = graph.entry(module.clone()).or_default();
            for (i, _) in text.match_indices("crate::") {
                let name: String = text[i + 7..]
                    .chars()
                    .take_while(|c| c.is_ascii_lowercase() || *c == '_')
                    .collect();
                if !name.is_empty() && name != module {
                    deps.insert(name);
                }
            }
        }
    }
    graph
}

fn reaches(graph: &BTreeMap<String, BTreeSet<String>>, from: &str, to: &str) -> bool {
    let mut seen = BTreeSet::new();
    let mut stack = vec![from.to_string()];
    while let Some(m) = stack.pop() {
        for d in graph.get(&m).into_iter().flatten() {
            if d == to {
                return true;
            }
            if seen.insert(d.clone()) {
                stack.push(d.clone());
            }
        }
    }
    false
}

#[test]
fn no_module_depends_on_itself_through_others() {
    let graph = graph();
    assert!(graph.contains_key("device") && graph.contains_key("host"));
    let cycles: Vec<String> = graph
        .keys()
        .flat_map(|a| graph.keys().map(move |b| (a, b)))
        .filter(|(a, b)| a < b && reaches(&graph, a, b) && reaches(&graph, b, a))
        .map(|(a, b)| format!("{a} <-> {b}"))
        .collect();
    assert!(cycles.is_empty(), "module cycles: {cycles:?}");
}

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

// ---- cycles between the files of one folder ----
//
// Within a folder (a module with a `mod.rs`), the files are its modules: `mod.rs`
// itself (node `mod`), every other `x.rs` (node `x`) and every subfolder `x/` (node
// `x`, all its files together). A file depends on another when it names it:
//
// - `super::x::…`, `self::x::…`, `crate::folder::x::…` (in `use` trees too), resolved
//   from the module the path is written in (inline `mod m { … }` blocks included);
// - in `mod.rs`, the relative `x::…` to one of its files;
// - `super::Item` / `crate::folder::Item` where `mod.rs` re-exports `Item` from file
//   `x` (`pub use x::Item`): that names `x`, not `mod`; any other `super::Item` names
//   `mod.rs`, where the item is defined;
// - `mod.rs`'s `pub use x::…` is the folder's facade, not a dependency of `mod.rs`:
//   `mod.rs` depends on `x` only when its own code names what it re-exports (or
//   names `x` some other way).
//
// Test code is left out: `tests.rs` and other modules declared `#[cfg(test)]`, and
// `#[cfg(test)] mod … { … }` blocks (a test may build its fixtures with anything of
// its folder). Comments and string literals are not code.

/// The longest a source file under `src/` may be.
const MAX_LINES: usize = 800;

/// Cycles between the files of one folder that are accepted: none is left. An entry
/// is a folder and the files of one cycle (a strongly connected component of its
/// graph); an entry no cycle is left in fails the test. Do not add to it: break the
/// cycle.
const ALLOWED_CYCLES: &[(&str, &[&str])] = &[];

/// One folder's graph: node → the nodes it names → where it names each first.
type FolderGraph = BTreeMap<String, BTreeMap<String, String>>;

/// A file's module path below `crate` (`src/fs/ext3.rs` → `fs::ext3`).
fn module_path(src: &Path, file: &Path) -> Vec<String> {
    let rel = file.strip_prefix(src).unwrap().with_extension("");
    let mut segs: Vec<String> = rel
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    if segs.last().is_some_and(|s| s == "mod" || s == "lib") {
        segs.pop();
    }
    segs
}

fn rust_files(dir: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in fs::read_dir(&d).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                files.push(path);
            }
        }
    }
    files.sort();
    files
}

/// The graph between the files of `folder` (a folder of `src`, with a `mod.rs`).
fn folder_graph(src: &Path, folder: &Path) -> FolderGraph {
    let here = module_path(src, &folder.join("mod.rs"));
    // Every file's code, and the files (or folders) of modules declared for tests.
    let mut code_of: BTreeMap<PathBuf, String> = BTreeMap::new();
    let mut test_only: Vec<PathBuf> = Vec::new();
    for file in rust_files(folder) {
        let (code, test_modules) =
            without_test_modules(&code_only(&fs::read_to_string(&file).unwrap()));
        let dir = if file.file_name().is_some_and(|n| n == "mod.rs") {
            file.parent().unwrap().to_path_buf()
        } else {
            file.with_extension("")
        };
        for name in test_modules {
            test_only.push(dir.join(format!("{name}.rs")));
            test_only.push(dir.join(name));
        }
        code_of.insert(file, code);
    }
    let is_test = |path: &Path| {
        path.file_name().is_some_and(|n| n == "tests.rs")
            || test_only.iter().any(|t| path.starts_with(t))
    };
    let mod_code = &code_of[&folder.join("mod.rs")];
    let mut nodes: BTreeSet<String> = BTreeSet::from(["mod".to_string()]);
    for entry in fs::read_dir(folder).unwrap() {
        let path = entry.unwrap().path();
        let stem = path.file_stem().unwrap().to_string_lossy().into_owned();
        let module = (path.is_dir() && path.join("mod.rs").exists())
            || (path.extension().is_some_and(|e| e == "rs") && stem != "mod");
        if module && !is_test(&path) {
            nodes.insert(stem);
        }
    }
    let mut graph: FolderGraph = nodes.iter().map(|n| (n.clone(), BTreeMap::new())).collect();

    // Names mod.rs brings in from its files (and so re-exports to them, or to all).
    let child_of = |abs: &[String]| -> Option<String> {
        (abs.len() > here.len() && abs[..here.len()] == here[..])
            .then(|| abs[here.len()].clone())
            .filter(|c| nodes.contains(c) && c != "mod")
    };
    let absolute = |segs: &[String], module: &[String], relative_to_children: bool| {
        let mut segs = segs;
        let mut base: Vec<String> = match segs.first().map(String::as_str) {
            Some("crate") => {
                segs = &segs[1..];
                Vec::new()
            }
            Some("super") | Some("self") => module.to_vec(),
            Some(first) if relative_to_children && nodes.contains(first) => module.to_vec(),
            _ => return None,
        };
        while let Some(s) = segs.first() {
            match s.as_str() {
                "super" => {
                    base.pop()?;
                }
                "self" => {}
                _ => break,
            }
            segs = &segs[1..];
        }
        base.extend(segs.iter().cloned());
        Some(base)
    };
    let mut reexported: BTreeMap<String, String> = BTreeMap::new();
    let mut public_names: BTreeMap<String, String> = BTreeMap::new();
    for decl in use_decls(mod_code) {
        for leaf in &decl.leaves {
            let Some(abs) = absolute(&leaf.segs, &here, true) else {
                continue;
            };
            if let Some(child) = child_of(&abs) {
                if abs.len() > here.len() + 1 && leaf.name != "*" {
                    reexported.insert(leaf.name.clone(), child.clone());
                    if decl.public {
                        public_names.insert(leaf.name.clone(), child);
                    }
                }
            }
        }
    }

    for (file, code) in &code_of {
        let module = module_path(src, file);
        let node = if module == here {
            "mod".to_string()
        } else {
            module[here.len()].clone()
        };
        if !nodes.contains(&node) || is_test(file) {
            continue;
        }
        let b = code.as_bytes();
        let is_mod = node == "mod";
        let inline = inline_modules(code);
        let module_at = |at: usize| -> Vec<String> {
            let mut m = module.clone();
            m.extend(
                inline
                    .iter()
                    .filter(|(s, e, _)| *s < at && at < *e)
                    .map(|(_, _, name)| name.clone()),
            );
            m
        };
        let rel = file.strip_prefix(src).unwrap().display().to_string();
        let add = |graph: &mut FolderGraph, target: String, at: usize, what: &str| {
            if target != node && nodes.contains(&target) {
                graph
                    .get_mut(&node)
                    .unwrap()
                    .entry(target)
                    .or_insert_with(|| format!("{rel}:{} `{what}`", line_of(code, at)));
            }
        };
        let resolve = |graph: &mut FolderGraph, leaf: &Leaf, at: usize| {
            let m = module_at(at);
            let relative = is_mod && m == here;
            let Some(abs) = absolute(&leaf.segs, &m, relative) else {
                return;
            };
            if abs.len() <= here.len() || abs[..here.len()] != here[..] {
                return;
            }
            let first = &abs[here.len()];
            let target = if nodes.contains(first) {
                first.clone()
            } else if let Some(child) = reexported.get(first) {
                child.clone()
            } else {
                "mod".to_string()
            };
            add(graph, target, at, &leaf.segs.join("::"));
        };
        let decls = use_decls(code);
        for decl in &decls {
            if is_mod && decl.public {
                continue; // the folder's facade
            }
            for leaf in &decl.leaves {
                resolve(&mut graph, leaf, decl.span.0);
            }
        }
        let mut in_use = vec![false; b.len()];
        for d in &decls {
            in_use[d.span.0..d.span.1.min(b.len())].fill(true);
        }
        let mut i = 0;
        while i < b.len() {
            if !word_starts(b, i) || in_use[i] {
                i += 1;
                continue;
            }
            let Some(word) = ident_at(b, i) else {
                i += 1;
                continue;
            };
            let len = word.len();
            let starts_path = matches!(word, "crate" | "super" | "self")
                || (is_mod && nodes.contains(word) && module_at(i) == here);
            if starts_path && b[skip_ws(b, i + len)..].starts_with(b"::") {
                let (leaves, end) = path_at(b, i);
                for leaf in &leaves {
                    resolve(&mut graph, leaf, i);
                }
                i = end.max(i + len);
            } else {
                if is_mod {
                    if let Some(child) = public_names.get(word) {
                        add(&mut graph, child.clone(), i, word);
                    }
                }
                i += len;
            }
        }
    }
    graph
}

/// The strongly connected components of more than one node (Tarjan).
fn cycles(graph: &FolderGraph) -> Vec<Vec<String>> {
    struct State<'g> {
        graph: &'g FolderGraph,
        index: BTreeMap<&'g str, usize>,
        low: BTreeMap<&'g str, usize>,
        stack: Vec<&'g str>,
        found: Vec<Vec<String>>,
    }
    fn visit<'g>(s: &mut State<'g>, v: &'g str) {
        let i = s.index.len();
        s.index.insert(v, i);
        s.low.insert(v, i);
        s.stack.push(v);
        let graph = s.graph;
        for w in graph.get(v).into_iter().flat_map(|e| e.keys()) {
            let w = w.as_str();
            if !s.index.contains_key(w) {
                visit(s, w);
                let lw = s.low[w];
                let lv = s.low.get_mut(v).unwrap();
                *lv = (*lv).min(lw);
            } else if s.stack.contains(&w) {
                let iw = s.index[w];
                let lv = s.low.get_mut(v).unwrap();
                *lv = (*lv).min(iw);
            }
        }
        if s.low[v] == s.index[v] {
            let mut component = Vec::new();
            while let Some(w) = s.stack.pop() {
                component.push(w.to_string());
                if w == v {
                    break;
                }
            }
            if component.len() > 1 {
                component.sort();
                s.found.push(component);
            }
        }
    }
    let mut s = State {
        graph,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        found: Vec::new(),
    };
    for v in graph.keys() {
        if !s.index.contains_key(v.as_str()) {
            visit(&mut s, v);
        }
    }
    s.found.sort();
    s.found
}

/// One cycle through `component` (its first node back to itself, shortest), each
/// step with where it is named: `a -> b (a.rs:3 `super::b::X`) -> a (…)`.
fn describe(graph: &FolderGraph, component: &[String]) -> String {
    let start = &component[0];
    let mut came_from: BTreeMap<&str, &str> = BTreeMap::new();
    let mut queue = std::collections::VecDeque::from([start.as_str()]);
    let mut last = None;
    'search: while let Some(v) = queue.pop_front() {
        for w in graph[v].keys() {
            if !component.contains(w) {
                continue;
            }
            if w == start {
                last = Some(v);
                break 'search;
            }
            if !came_from.contains_key(w.as_str()) {
                came_from.insert(w, v);
                queue.push_back(w);
            }
        }
    }
    let mut path = vec![start.as_str()];
    let mut v = last.expect("a component is a cycle");
    while v != start {
        path.push(v);
        v = came_from[v];
    }
    path.push(start);
    path.reverse();
    let mut out = path[0].to_string();
    for step in path.windows(2) {
        out += &format!(" -> {} ({})", step[1], graph[step[0]][step[1]]);
    }
    out
}

/// Every folder of `src` with a `mod.rs`, as its path relative to `src`.
fn folders(src: &Path) -> Vec<(String, PathBuf)> {
    let mut out: Vec<(String, PathBuf)> = rust_files(src)
        .into_iter()
        .filter(|f| f.file_name().is_some_and(|n| n == "mod.rs"))
        .map(|f| {
            let dir = f.parent().unwrap().to_path_buf();
            let rel = dir.strip_prefix(src).unwrap();
            let name = rel
                .components()
                .map(|c| c.as_os_str().to_string_lossy().into_owned())
                .collect::<Vec<_>>()
                .join("/");
            (name, dir)
        })
        .collect();
    out.sort();
    out
}

/// Allowed cycles, each a folder and the files of one cycle.
type Allowed<'a> = &'a [(&'a str, &'a [&'a str])];

/// The cycles between the files of the folders of `src` that `allowed` does not
/// cover, each named with one path around it; and the entries of `allowed` no cycle
/// is left in.
fn folder_cycles(src: &Path, allowed: Allowed) -> (Vec<String>, Vec<String>) {
    let mut found = Vec::new();
    let mut allowed_seen = vec![false; allowed.len()];
    for (name, dir) in folders(src) {
        let graph = folder_graph(src, &dir);
        for component in cycles(&graph) {
            let entry = allowed.iter().position(|(folder, files)| {
                *folder == name && component.iter().all(|c| files.contains(&c.as_str()))
            });
            match entry {
                Some(k) => allowed_seen[k] = true,
                None => found.push(format!(
                    "{name}/: {}\n    files in the cycle: {}",
                    describe(&graph, &component),
                    component.join(", ")
                )),
            }
        }
    }
    let stale = allowed
        .iter()
        .zip(&allowed_seen)
        .filter(|(_, seen)| !**seen)
        .map(|((folder, files), _)| format!("{folder}: {files:?}"))
        .collect();
    (found, stale)
}

#[test]
fn no_file_depends_on_itself_through_the_others_of_its_folder() {
    let src = src();
    let folders = folders(&src);
    assert!(folders.iter().any(|(f, _)| f == "workload") && folders.len() > 10);
    let (found, stale) = folder_cycles(&src, ALLOWED_CYCLES);
    assert!(
        found.is_empty(),
        "cycles between the files of a folder:\n  {}",
        found.join("\n  ")
    );
    assert!(
        stale.is_empty(),
        "these allowed cycles are gone: remove them from ALLOWED_CYCLES: {stale:?}"
    );
}

/// Files of `root` over `MAX_LINES` lines, with their lengths.
fn long_files(root: &Path) -> Vec<(String, usize)> {
    long_files_of(root, &rust_files(root))
}

/// Those of `files` (under `root`) over `MAX_LINES` lines, with their lengths.
fn long_files_of(root: &Path, files: &[PathBuf]) -> Vec<(String, usize)> {
    files
        .iter()
        .map(|f| {
            let lines = fs::read_to_string(f).unwrap().lines().count();
            (f.strip_prefix(root).unwrap().display().to_string(), lines)
        })
        .filter(|&(_, lines)| lines > MAX_LINES)
        .collect()
}

/// The Python files of the checkout: the package, its tests, the benches, the
/// examples and the corpus tools.
fn python_files(root: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    let mut stack: Vec<PathBuf> = ["python", "tests", "benches", "examples", "traces", "docs"]
        .iter()
        .map(|d| root.join(d))
        .filter(|d| d.is_dir())
        .collect();
    while let Some(d) = stack.pop() {
        for entry in fs::read_dir(&d).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == "py") {
                files.push(path);
            }
        }
    }
    files.sort();
    files
}

#[test]
fn no_source_file_is_over_800_lines() {
    let crate_dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    let root = crate_dir.join("../..");
    let mut long = long_files(&src());
    long.extend(long_files(&crate_dir.join("tests")));
    long.extend(long_files(&root.join("crates/zombiesim-py/src")));
    long.extend(long_files_of(&root, &python_files(&root)));
    assert!(
        long.is_empty(),
        "files over {MAX_LINES} lines (split them along what they model): {long:?}"
    );
}

/// A scratch folder for the tests of the checks themselves, removed on drop.
struct Scratch(PathBuf);

impl Scratch {
    fn new(name: &str, files: &[(&str, String)]) -> Scratch {
        let root = std::env::temp_dir().join(format!(
            "zombiesim-architecture-{}-{name}",
            std::process::id()
        ));
        let _ = fs::remove_dir_all(&root);
        for (path, text) in files {
            let path = root.join(path);
            fs::create_dir_all(path.parent().unwrap()).unwrap();
            fs::write(path, text).unwrap();
        }
        Scratch(root)
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.0);
    }
}

#[test]
fn the_line_limit_catches_a_long_file_test_files_too() {
    let long = "fn f() {}\n".repeat(MAX_LINES + 1);
    let dir = Scratch::new(
        "lines",
        &[
            ("a/long.rs", long.clone()),
            ("a/tests.rs", long),
            ("a/short.rs", "fn f() {}\n".repeat(MAX_LINES)),
        ],
    );
    let found = long_files(&dir.0);
    let sep = std::path::MAIN_SEPARATOR;
    assert_eq!(
        found,
        vec![
            (format!("a{sep}long.rs"), MAX_LINES + 1),
            (format!("a{sep}tests.rs"), MAX_LINES + 1)
        ]
    );
}

#[test]
fn the_cycle_finder_names_a_cycle() {
    let edge = |to: &[&str]| -> BTreeMap<String, String> {
        to.iter()
            .map(|t| (t.to_string(), format!("to {t}")))
            .collect()
    };
    let mut graph: FolderGraph = BTreeMap::new();
    graph.insert("a".into(), edge(&["b"]));
    graph.insert("b".into(), edge(&["c", "d"]));
    graph.insert("c".into(), edge(&["a"]));
    graph.insert("d".into(), edge(&[]));
    graph.insert("mod".into(), edge(&["a", "d"]));
    let found = cycles(&graph);
    assert_eq!(found, vec![vec!["a", "b", "c"]]);
    assert_eq!(
        describe(&graph, &found[0]),
        "a -> b (to b) -> c (to c) -> a (to a)"
    );
    graph.get_mut("c").unwrap().clear();
    assert!(cycles(&graph).is_empty());
}

#[test]
fn the_folder_graph_follows_paths_and_reexports_but_not_tests_or_comments() {
    let dir = Scratch::new(
        "graph",
        &[
            (
                "src/f/mod.rs",
                "mod a;\nmod b;\nmod c;\n#[cfg(test)]\nmod tests;\npub use a::Alpha;\n\
                 pub use c::Gamma;\npub struct Top;\n"
                    .into(),
            ),
            // a names b through `crate::f::b`; b names a through mod.rs's re-export.
            ("src/f/a.rs", "use crate::f::b::Beta;\npub struct Alpha(Beta);\n".into()),
            (
                "src/f/b.rs",
                "pub struct Beta;\nimpl Beta {\n    fn f(_: &super::Alpha) {}\n}\n".into(),
            ),
            // c names b only in a comment, a string and its tests; and mod.rs's own items.
            (
                "src/f/c.rs",
                "// super::b::Beta\npub struct Gamma(super::Top);\nconst S: &str = \"super::a::X\";\n\
                 #[cfg(test)]\nmod tests {\n    use super::super::b::Beta;\n}\n"
                    .into(),
            ),
            ("src/f/tests.rs", "use super::c::Gamma;\nuse super::a::Alpha;\n".into()),
        ],
    );
    let src = dir.0.join("src");
    let graph = folder_graph(&src, &src.join("f"));
    let edges: Vec<(String, String)> = graph
        .iter()
        .flat_map(|(from, to)| to.keys().map(move |t| (from.clone(), t.clone())))
        .collect();
    let pair = |a: &str, b: &str| (a.to_string(), b.to_string());
    assert_eq!(
        edges,
        vec![pair("a", "b"), pair("b", "a"), pair("c", "mod")]
    );
    assert_eq!(cycles(&graph), vec![vec!["a", "b"]]);
    assert!(
        graph["b"]["a"].contains("f/b.rs:3 `super::Alpha`"),
        "{graph:?}"
    );
    // The check names the cycle, unless it is allowed; an allowed cycle that is gone
    // is reported too.
    let (found, stale) = folder_cycles(&src, &[]);
    assert_eq!(found.len(), 1, "{found:?}");
    assert!(
        found[0].starts_with("f/: a -> b (f/a.rs:1 `crate::f::b::Beta`) -> a (f/b.rs:3"),
        "{found:?}"
    );
    let (found, stale_none) = folder_cycles(&src, &[("f", &["a", "b"])]);
    assert!(found.is_empty() && stale_none.is_empty() && stale.is_empty());
    let (_, stale) = folder_cycles(&src, &[("f", &["a", "b"]), ("f", &["c", "mod"])]);
    assert_eq!(stale, vec![r#"f: ["c", "mod"]"#]);
}
