//! The prose the Markdown and HTML reports share is written once, in
//! `templates/prose.j2`: a sentence both templates of a pair write would
//! drift (one was edited, the other not), so a test fails on it.

use std::collections::BTreeSet;

/// The pairs of templates that write the same report in two formats.
const PAIRS: [(&str, &str); 4] = [
    ("scenario.md.j2", "scenario.html.j2"),
    ("dataflow.md.j2", "dataflow.html.j2"),
    ("sweep.md.j2", "sweep.html.j2"),
    ("compare.md.j2", "compare.html.j2"),
];

fn template(name: &str) -> String {
    std::fs::read_to_string(format!("templates/{name}")).expect("a built-in template")
}

/// The sentences of eight words or more a template writes itself, five
/// of them its own (not values), each ended by `.`, `:` or `;` (a table's
/// header row is not prose): its text with each `{{ ... }}` one word X,
/// tags, comments, markup and Markdown's marks left out.
fn sentences(text: &str) -> BTreeSet<String> {
    let mut plain = String::new();
    let mut rest = text;
    // `{{ }}` becomes X, `{% %}` and `{# #}` a space, `<...>` a space.
    while !rest.is_empty() {
        let next = ["{{", "{%", "{#", "<"]
            .iter()
            .filter_map(|open| rest.find(open).map(|at| (at, *open)))
            .min();
        let Some((at, open)) = next else {
            plain.push_str(rest);
            break;
        };
        plain.push_str(&rest[..at]);
        let close = match open {
            "{{" => "}}",
            "{%" => "%}",
            "{#" => "#}",
            _ => ">",
        };
        let after = &rest[at + open.len()..];
        let end = after.find(close).map_or(after.len(), |e| e + close.len());
        plain.push_str(if open == "{{" { "X" } else { " " });
        rest = &after[end..];
    }
    let plain = plain.replace(['`', '*', '|'], " ");
    let mut out = BTreeSet::new();
    for line in plain.lines() {
        let mut sentence = String::new();
        for word in line.split_whitespace() {
            sentence.push_str(word);
            sentence.push(' ');
            if word.ends_with(['.', ':', ';']) {
                let words: Vec<&str> = sentence.split_whitespace().collect();
                let own = words.iter().filter(|w| !w.starts_with('X')).count();
                if words.len() >= 8 && own >= 5 {
                    out.insert(sentence.trim().to_string());
                }
                sentence.clear();
            }
        }
    }
    out
}

#[test]
fn no_sentence_is_written_in_both_formats_of_a_report() {
    let mut both = Vec::new();
    for (md, html) in PAIRS {
        let shared: Vec<String> = sentences(&template(md))
            .intersection(&sentences(&template(html)))
            .cloned()
            .collect();
        both.extend(shared.into_iter().map(|s| format!("{md} and {html}: {s}")));
    }
    assert!(
        both.is_empty(),
        "written twice (make it a macro of templates/prose.j2):\n{}",
        both.join("\n")
    );
}

#[test]
fn every_shared_paragraph_is_used_by_both_formats() {
    let prose = template("prose.j2");
    let macros: Vec<&str> = prose
        .split("{% macro ")
        .skip(1)
        .filter_map(|m| m.split('(').next())
        .collect();
    assert!(macros.len() >= 10, "{macros:?}");
    for name in macros {
        let call = format!("prose.{name}(");
        let used = PAIRS
            .iter()
            .any(|(md, html)| template(md).contains(&call) && template(html).contains(&call));
        assert!(used, "{name} is not used by both templates of a pair");
    }
}

/// The reader of sentences finds what it should: a sentence written in
/// both, whatever the markup around it, and not a short one.
#[test]
fn the_sentence_reader_sees_through_markup() {
    let md = "Each row counts the **messages** in `each` state as of {{ t }}.\nShort one here.\n| a | b | c | d | e | f | g | h | i |\n";
    let html = "<p>Each row counts the <b>messages</b> in <code>each</code> state as of {{ t | duration }}.</p>\n<tr><th>a</th><th>b</th><th>c</th><th>d</th><th>e</th><th>f</th><th>g</th><th>h</th><th>i</th></tr>\n";
    let (a, b) = (sentences(md), sentences(html));
    assert_eq!(a.intersection(&b).count(), 1, "{a:?} {b:?}");
    assert!(!a.iter().any(|s| s.starts_with("Short")));
}
