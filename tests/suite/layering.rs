//! The layering of docs/architecture.md ("Layers"), kept by reading the
//! code: every path a module's code names (`crate::x`, `super::x`,
//! `self::x`, tests aside) is an arrow to the module or file it names. An
//! arrow the document's block does not allow fails, so does a circle
//! between modules or between the files of one folder.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// The allowed arrows: module -> the modules it may name.
fn allowed() -> BTreeMap<String, BTreeSet<String>> {
    let doc = std::fs::read_to_string("docs/architecture.md").expect("docs/architecture.md");
    let block = doc
        .split("```layers\n")
        .nth(1)
        .and_then(|rest| rest.split("```").next())
        .expect("a ```layers block in docs/architecture.md");
    block
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|line| {
            let (module, uses) = line.split_once(':').expect("module: uses");
            let uses = uses.split_whitespace().map(String::from).collect();
            (module.trim().to_string(), uses)
        })
        .collect()
}

/// Every production source file under `src/`: `tests/` folders and
/// `tests.rs` files aside.
fn sources() -> Vec<String> {
    fn walk(dir: &Path, out: &mut Vec<String>) {
        let mut entries: Vec<_> = std::fs::read_dir(dir)
            .expect("a folder of src/")
            .map(|e| e.expect("an entry").path())
            .collect();
        entries.sort();
        for path in entries {
            let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
            if path.is_dir() {
                if name != "tests" {
                    walk(&path, out);
                }
            } else if name.ends_with(".rs") && name != "tests.rs" {
                out.push(path.to_string_lossy().replace('\\', "/"));
            }
        }
    }
    let mut out = Vec::new();
    walk(Path::new("src"), &mut out);
    out
}

/// The code of a file without its test module (`#[cfg(test)] mod x {`
/// starts the tail that tests hold), its `#[cfg(test)]` uses, and its
/// comments.
fn code(text: &str) -> String {
    let mut kept = String::new();
    let mut test_item = false;
    for line in text.lines() {
        let trimmed = line.trim_start();
        if test_item {
            test_item = false;
            if trimmed.contains("mod ") && trimmed.ends_with('{') {
                break;
            }
            if trimmed.starts_with("use ") || trimmed.contains("mod ") {
                continue;
            }
        }
        if trimmed.starts_with("#[cfg(test)]") {
            test_item = true;
            continue;
        }
        let line = match line.find("//") {
            // Not inside a string that holds "//" (a URL): a comment.
            Some(at) if line[..at].matches('"').count() % 2 == 0 => &line[..at],
            _ => line,
        };
        kept.push_str(line);
        kept.push('\n');
    }
    kept
}

/// A file's module path: `src/engine/write/mod.rs` is `engine::write`.
fn module_of(file: &str) -> Vec<String> {
    let inner = file.trim_start_matches("src/").trim_end_matches(".rs");
    let mut parts: Vec<String> = inner.split('/').map(String::from).collect();
    if matches!(
        parts.last().map(String::as_str),
        Some("mod" | "lib" | "main")
    ) {
        parts.pop();
    }
    parts
}

/// The paths a file's code names, each as segments: `use` trees
/// expanded (`use super::{a, b::c}`), and paths written inline.
fn paths(code: &str) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    let mut rest = code;
    while let Some(at) = rest.find("use ") {
        let before = rest[..at].chars().last();
        let tail = &rest[at + 4..];
        let Some(end) = tail.find(';') else { break };
        if before.is_none_or(|c| !c.is_alphanumeric() && c != '_') {
            // `a as b` keeps `a`: marked before the spaces go.
            let words: Vec<&str> = tail[..end].split_whitespace().collect();
            let tree: String = words.join(" ").replace(" as ", "@").replace(' ', "");
            expand(&[], &tree, &mut out);
        }
        rest = &tail[end..];
    }
    let bytes = code.as_bytes();
    for root in ["crate::", "super::", "self::"] {
        let mut from = 0;
        while let Some(at) = code[from..].find(root) {
            let start = from + at;
            from = start + root.len();
            if start > 0 && (bytes[start - 1].is_ascii_alphanumeric() || bytes[start - 1] == b'_') {
                continue;
            }
            let end = code[start..]
                .find(|c: char| !(c.is_alphanumeric() || c == '_' || c == ':'))
                .map_or(code.len(), |e| start + e);
            let path: Vec<String> = code[start..end]
                .split("::")
                .filter(|s| !s.is_empty())
                .map(String::from)
                .collect();
            out.push(path);
        }
    }
    out
}

/// `tree` of a `use` (without spaces) under `prefix`, into whole paths.
fn expand(prefix: &[String], tree: &str, out: &mut Vec<Vec<String>>) {
    let mut depth = 0;
    let mut item = String::new();
    let mut items = Vec::new();
    for c in tree.chars() {
        match c {
            '{' => depth += 1,
            '}' => depth -= 1,
            ',' if depth == 0 => {
                items.push(std::mem::take(&mut item));
                continue;
            }
            _ => {}
        }
        item.push(c);
    }
    items.push(item);
    for item in items.into_iter().filter(|i| !i.is_empty()) {
        match item.find('{') {
            Some(open) => {
                let mut p = prefix.to_vec();
                p.extend(
                    item[..open]
                        .split("::")
                        .filter(|s| !s.is_empty())
                        .map(String::from),
                );
                expand(&p, &item[open + 1..item.len() - 1], out);
            }
            None => {
                let item = item.split('@').next().unwrap_or_default();
                let mut p = prefix.to_vec();
                p.extend(item.split("::").filter(|s| !s.is_empty()).map(String::from));
                out.push(p);
            }
        }
    }
}

/// Where `path`, named in the file of module `me`, leads: a module path
/// from the crate's root, or none for a path relative to something else
/// (an extern crate, a child named by its parent).
fn absolute(me: &[String], path: &[String]) -> Option<Vec<String>> {
    match path.first().map(String::as_str) {
        Some("crate") => Some(path[1..].to_vec()),
        // The module of `a/b.rs` and of `a/b/mod.rs` alike is `a::b`:
        // `self` is it, `super` is `a`.
        Some("super") => {
            let ups = path.iter().take_while(|s| *s == "super").count();
            let mut p = me[..me.len().checked_sub(ups)?].to_vec();
            p.extend(path[ups..].iter().cloned());
            Some(p)
        }
        Some("self") => {
            let mut p = me.to_vec();
            p.extend(path[1..].iter().cloned());
            Some(p)
        }
        _ => None,
    }
}

/// The file a module path is in: its longest prefix that is a file.
fn file_of<'f>(modules: &'f BTreeMap<Vec<String>, String>, path: &[String]) -> Option<&'f str> {
    (1..=path.len())
        .rev()
        .find_map(|n| modules.get(&path[..n]).map(String::as_str))
}

/// The arrows between files (and so between top modules).
fn arrows() -> BTreeMap<String, BTreeSet<String>> {
    let files = sources();
    let modules: BTreeMap<Vec<String>, String> =
        files.iter().map(|f| (module_of(f), f.clone())).collect();
    let mut arrows: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for file in &files {
        let text = std::fs::read_to_string(file).expect("a source file");
        let me = module_of(file);
        for path in paths(&code(&text)) {
            let Some(to) = absolute(&me, &path) else {
                continue;
            };
            if let Some(target) = file_of(&modules, &to)
                && target != file
            {
                arrows
                    .entry(file.clone())
                    .or_default()
                    .insert(target.to_string());
            }
        }
    }
    arrows
}

/// A file's top module: `src/engine/step.rs` is `engine`, `src/duration.rs`
/// is `duration`.
fn top(file: &str) -> String {
    module_of(file).first().cloned().unwrap_or_default()
}

/// The circles of a graph (its strongly connected parts of two or more).
fn circles(graph: &BTreeMap<String, BTreeSet<String>>) -> Vec<Vec<String>> {
    // Reachability by depth-first search from each node: small graphs.
    let reach = |from: &String| {
        let mut seen = BTreeSet::new();
        let mut stack = vec![from.clone()];
        while let Some(n) = stack.pop() {
            for m in graph.get(&n).into_iter().flatten() {
                if seen.insert(m.clone()) {
                    stack.push(m.clone());
                }
            }
        }
        seen
    };
    let nodes: BTreeSet<&String> = graph.keys().chain(graph.values().flatten()).collect();
    let reached: BTreeMap<&String, BTreeSet<String>> =
        nodes.iter().map(|n| (*n, reach(n))).collect();
    let mut out: Vec<Vec<String>> = Vec::new();
    for n in &nodes {
        let circle: Vec<String> = nodes
            .iter()
            .filter(|m| reached[*n].contains(**m) && reached[*m].contains(*n))
            .map(|m| m.to_string())
            .collect();
        if circle.len() > 1 && !out.contains(&circle) {
            out.push(circle);
        }
    }
    out
}

#[test]
fn every_arrow_between_modules_is_one_the_architecture_allows() {
    let allowed = allowed();
    let mut wrong = Vec::new();
    for (from, targets) in arrows() {
        let (a, uses) = (top(&from), allowed.get(&top(&from)));
        for to in targets {
            let b = top(&to);
            if a == b || a.is_empty() {
                continue;
            }
            match uses {
                None => wrong.push(format!("{from}: module {a} is not in the layers block")),
                Some(uses) if !uses.contains(&b) => {
                    wrong.push(format!("{from} names {to}: {a} may not use {b}"))
                }
                _ => {}
            }
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn the_allowed_arrows_are_layers_and_every_module_is_placed() {
    let allowed = allowed();
    let graph: BTreeMap<String, BTreeSet<String>> = allowed.clone();
    assert_eq!(circles(&graph), Vec::<Vec<String>>::new());
    let modules: BTreeSet<String> = sources().iter().map(|f| top(f)).collect();
    let placed: BTreeSet<String> = allowed.keys().cloned().collect();
    let unplaced: Vec<_> = modules
        .iter()
        .filter(|m| !placed.contains(*m) && !matches!(m.as_str(), "lib" | "main" | ""))
        .collect();
    assert!(unplaced.is_empty(), "not in the layers block: {unplaced:?}");
}

#[test]
fn no_circle_between_modules_or_between_the_files_of_a_folder() {
    let arrows = arrows();
    let mut modules: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (from, targets) in &arrows {
        for to in targets {
            if top(from) != top(to) {
                modules.entry(top(from)).or_default().insert(top(to));
            }
        }
    }
    assert_eq!(
        circles(&modules),
        Vec::<Vec<String>>::new(),
        "between modules"
    );
    assert_eq!(circles(&arrows), Vec::<Vec<String>>::new(), "between files");
}

/// The reader is right about what it reads: a `use` tree, `super` from a
/// file and from a `mod.rs`, and a test module left out.
#[test]
fn the_reader_of_paths_reads_use_trees_super_and_skips_tests() {
    let text = "use super::{a, b::{c, d as e}};\nuse crate::x::y;\n// crate::z in a comment\nfn f() { crate::w::v(); }\n#[cfg(test)]\nmod tests {\n    use crate::t;\n}\n";
    let found = paths(&code(text));
    let joined: Vec<String> = found.iter().map(|p| p.join("::")).collect();
    for p in [
        "super::a",
        "super::b::c",
        "super::b::d",
        "crate::x::y",
        "crate::w::v",
    ] {
        assert!(joined.contains(&p.to_string()), "{p} in {joined:?}");
    }
    assert!(
        !joined
            .iter()
            .any(|p| p.contains("crate::z") || p.contains("crate::t"))
    );
    let me = vec!["engine".to_string(), "write".to_string()];
    let up = |p: &str| {
        absolute(&me, &p.split("::").map(String::from).collect::<Vec<_>>()).map(|p| p.join("::"))
    };
    // `src/engine/write.rs` or `src/engine/write/mod.rs`: the module
    // `engine::write`, whose super is `engine`.
    assert_eq!(up("super::step").as_deref(), Some("engine::step"));
    assert_eq!(up("self::plain").as_deref(), Some("engine::write::plain"));
    assert_eq!(up("super::super::super::x"), None);
}
