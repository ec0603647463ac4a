//! The module graph has no cycle: every top-level module of the crate names other
//! modules (`crate::x`) only in one direction, so the layers of docs/architecture.md
//! stay layers (workload and trace know nothing of the host or the content layer, the
//! report does not reach into the host model, configuration does not depend on flash).

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::Path;

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
