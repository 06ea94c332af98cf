//! README and CI cannot drift: the commands README and docs/contributing.md
//! give are the ones CI runs, the commands of the tour run as written, with
//! the output the tour describes, and every relative link of the
//! documentation leads to a file and a heading that exist.

use crate::common;

use common::{code, run, scratch, stderr, stdout};

fn readme() -> String {
    std::fs::read_to_string("README.md").unwrap()
}

/// The lines of the first ```sh block after `from` (comments stripped).
fn sh_block(text: &str, from: &str) -> Vec<String> {
    let start = text
        .find(from)
        .unwrap_or_else(|| panic!("{from:?} not found"));
    let rest = &text[start..];
    let open = rest.find("```sh\n").unwrap() + "```sh\n".len();
    let close = rest[open..].find("```").unwrap() + open;
    rest[open..close]
        .lines()
        .map(|l| strip_comment(l).trim().to_string())
        .filter(|l| !l.is_empty())
        .collect()
}

/// Drops a trailing `# comment` outside quotes.
fn strip_comment(line: &str) -> &str {
    let mut quoted = None;
    for (i, c) in line.char_indices() {
        match (c, quoted) {
            ('\'' | '"', None) => quoted = Some(c),
            (q, Some(open)) if q == open => quoted = None,
            ('#', None) => return &line[..i],
            _ => {}
        }
    }
    line
}

/// The commands `.ci/run` runs after installing its tools.
fn ci_commands() -> Vec<String> {
    let ci = std::fs::read_to_string(".ci/run").unwrap();
    let start = ci
        .find("# From here on")
        .expect(".ci/run marks where README's commands start");
    ci[start..]
        .lines()
        .filter(|l| !l.starts_with(' ') && !l.starts_with('#') && !l.starts_with("echo "))
        .map(|l| l.trim_end_matches(" || {").trim().to_string())
        .filter(|l| !l.is_empty() && l != "}" && !l.starts_with("rm -rf"))
        .collect()
}

#[test]
fn ci_runs_exactly_the_commands_readme_gives() {
    let text = readme();
    let contributing = sh_block(
        &std::fs::read_to_string("docs/contributing.md").unwrap(),
        "# Contributing",
    );
    assert_eq!(ci_commands(), contributing);
    // The two commands at the top are among them.
    let top = sh_block(&text, "# scenario-run");
    assert_eq!(
        top,
        [
            "cargo run --release --locked -- 'scenarios/*.toml'",
            "cargo test --locked"
        ]
    );
    for command in &top {
        assert!(contributing.contains(command), "{command} is not run by CI");
    }
}

/// Splits a shell command line on spaces, keeping single-quoted words.
fn words(line: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut word = String::new();
    let mut quoted = false;
    for c in line.chars() {
        match c {
            '\'' => quoted = !quoted,
            ' ' if !quoted => {
                if !word.is_empty() {
                    out.push(std::mem::take(&mut word));
                }
            }
            c => word.push(c),
        }
    }
    if !word.is_empty() {
        out.push(word);
    }
    out
}

#[test]
fn the_tour_runs_as_written() {
    let text = readme();
    let start = text.find("## A short tour").unwrap();
    let end = text[start..].find("\n## ").unwrap() + start;
    let tour = &text[start..end];
    let commands: Vec<Vec<String>> = tour
        .lines()
        .filter_map(|l| l.strip_prefix("cargo run --release -- "))
        .map(|l| words(l.split(" && ").next().unwrap()))
        .collect();
    assert_eq!(commands.len(), 3, "{commands:?}");
    let d = scratch("tour");
    for args in &commands {
        let args: Vec<String> = args
            .iter()
            .map(|a| a.replace("out/", &format!("{}/", d.join("out").display())))
            .collect();
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let o = run(&args);
        assert_eq!(code(&o), 0, "{args:?}: {}", stderr(&o));
        let out = stdout(&o);
        match args.as_slice() {
            ["show", file] => {
                assert!(out.starts_with("scenario: "), "{out}");
                assert!(out.contains("\nfinal snapshot:\n"), "{file}: {out}");
            }
            ["show", _, "--at", "10s"] => {
                assert!(out.contains("\nsnapshot as of 10s:\n"), "{out}");
            }
            _ => {
                let bundled = common::bundled_files();
                assert!(
                    out.ends_with(&format!("{bundled} passed, 0 failed\n")),
                    "{out}"
                );
                assert!(d.join("out/index.html").is_file());
            }
        }
    }
    // "Change effects = 2 to effects = 3 and run it."
    let fixture = "scenarios/01-dlq-is-not-proof-nothing-happened.toml";
    let changed =
        std::fs::read_to_string(fixture)
            .unwrap()
            .replacen("effects = 2", "effects = 3", 1);
    let file = d.join("01.toml");
    std::fs::write(&file, changed).unwrap();
    let o = run(&["--color", "never", file.to_str().unwrap()]);
    assert_eq!(code(&o), 1);
    let out = stdout(&o);
    assert!(out.contains("expected 3, got 2"), "{out}");
    assert!(out.contains("(cycle 1, key uncertain)"), "{out}");
    let _ = std::fs::remove_dir_all(&d);
}

/// The anchor GitHub gives a heading: lowercase, spaces as hyphens,
/// punctuation other than `-` and `_` dropped.
fn slug(heading: &str) -> String {
    heading
        .chars()
        .filter_map(|c| match c {
            ' ' => Some('-'),
            '-' | '_' => Some(c),
            c if c.is_alphanumeric() => Some(c.to_ascii_lowercase()),
            _ => None,
        })
        .collect()
}

/// The lines of a Markdown text outside fenced code blocks.
fn prose(text: &str) -> Vec<&str> {
    let mut fenced = false;
    text.lines()
        .filter(|l| {
            if l.starts_with("```") {
                fenced = !fenced;
                return false;
            }
            !fenced
        })
        .collect()
}

/// The anchors of a Markdown file's headings (a repeated heading gets
/// `-1`, `-2`, ... as on GitHub).
fn anchors(text: &str) -> std::collections::BTreeSet<String> {
    let mut seen = std::collections::BTreeMap::<String, usize>::new();
    let mut out = std::collections::BTreeSet::new();
    for line in prose(text) {
        let Some(heading) = line.trim_start_matches('#').strip_prefix(' ') else {
            continue;
        };
        if !line.starts_with('#') {
            continue;
        }
        let base = slug(heading);
        let n = seen.entry(base.clone()).or_default();
        out.insert(if *n == 0 {
            base.clone()
        } else {
            format!("{base}-{n}")
        });
        *n += 1;
    }
    out
}

/// The targets of the inline links `[text](target)` of a Markdown text,
/// outside code.
fn links(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for line in prose(text) {
        let mut rest = line;
        while let Some(at) = rest.find("](") {
            let after = &rest[at + 2..];
            let Some(end) = after.find(')') else { break };
            out.push(after[..end].to_string());
            rest = &after[end..];
        }
    }
    out
}

/// Every Markdown file of the documentation: README.md and docs/.
fn documentation() -> Vec<std::path::PathBuf> {
    let mut files = vec![std::path::PathBuf::from("README.md")];
    let mut docs: Vec<_> = std::fs::read_dir("docs")
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "md"))
        .collect();
    docs.sort();
    files.extend(docs);
    files
}

#[test]
fn every_relative_link_of_the_documentation_leads_somewhere() {
    let mut broken = Vec::new();
    let mut checked = 0;
    for file in documentation() {
        let text = std::fs::read_to_string(&file).unwrap();
        let dir = file.parent().unwrap();
        for target in links(&text) {
            if target.contains("://") || target.starts_with("mailto:") {
                continue;
            }
            checked += 1;
            let (path, anchor) = target.split_once('#').unwrap_or((&target, ""));
            let linked = if path.is_empty() {
                file.clone()
            } else {
                dir.join(path)
            };
            if !linked.exists() {
                broken.push(format!("{}: {target}: no such file", file.display()));
                continue;
            }
            if anchor.is_empty() {
                continue;
            }
            let headings = anchors(&std::fs::read_to_string(&linked).unwrap_or_default());
            if !headings.contains(anchor) {
                broken.push(format!("{}: {target}: no such heading", file.display()));
            }
        }
    }
    assert!(broken.is_empty(), "broken links:\n{}", broken.join("\n"));
    assert!(checked >= 15, "only {checked} links checked");
}

#[test]
fn the_link_checker_finds_headings_as_github_names_them() {
    let text = "# A title\n## `[[alarm]]` (any number)\n```\n# not a heading\n```\n## A title\n";
    let found = anchors(text);
    let expected: std::collections::BTreeSet<String> = ["a-title", "alarm-any-number", "a-title-1"]
        .map(String::from)
        .into();
    assert_eq!(found, expected);
    assert_eq!(
        links("see [x](docs/a.md#b) and [y](#c)\n```\n[z](nowhere)\n```\n"),
        ["docs/a.md#b", "#c"]
    );
}
