//! README and CI cannot drift: the commands README gives are the ones CI
//! runs, and the commands of its tour run as written, with the output the
//! tour describes.

mod common;

use common::{code, run, scratch, stderr, stdout};

fn readme() -> String {
    std::fs::read_to_string("README.md").unwrap()
}

/// The lines of the first ```sh block after `from` (comments stripped).
fn sh_block(text: &str, from: &str) -> Vec<String> {
    let start = text
        .find(from)
        .unwrap_or_else(|| panic!("{from:?} not in README"));
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
    let contributing = sh_block(&text, "## Contributing");
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
                let bundled = std::fs::read_dir("scenarios").unwrap().count();
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
