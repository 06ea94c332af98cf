//! JUnit XML for CI: a testsuite per scenario file, a testcase per
//! expectation; a failure's text is the colour-free diagnostic.

use crate::diagnostic::Located;

/// One scenario file's cases.
pub struct Suite<'a> {
    pub name: &'a str,
    pub file: &'a str,
    pub cases: Vec<&'a Case>,
}

/// One testcase: its name, the line of the scenario file it is about, and
/// the problem if it failed.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Case {
    pub name: String,
    pub line: Option<usize>,
    pub failure: Option<Located>,
}

pub fn escape(s: &str) -> String {
    let plain = |c: char| !matches!(c, '&' | '<' | '>' | '"' | '\'') && (c as u32) >= 0x20;
    if s.chars().all(plain) {
        return s.to_string();
    }
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            // XML 1.0 allows tab, newline, carriage return; drop other controls.
            c if (c as u32) < 0x20 && !matches!(c, '\t' | '\n' | '\r') => {}
            c => out.push(c),
        }
    }
    out
}

pub fn document(suites: &[Suite]) -> String {
    let failed = |s: &Suite| s.cases.iter().filter(|c| c.failure.is_some()).count();
    let tests: usize = suites.iter().map(|s| s.cases.len()).sum();
    let failures: usize = suites.iter().map(failed).sum();
    let mut out = format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"scenario-run\" tests=\"{tests}\" failures=\"{failures}\">\n"
    );
    for s in suites {
        out.push_str(&format!(
            "  <testsuite name=\"{}\" file=\"{}\" tests=\"{}\" failures=\"{}\">\n",
            escape(s.name),
            escape(s.file),
            s.cases.len(),
            failed(s)
        ));
        for case in &s.cases {
            out.push_str(&testcase(s.file, case));
        }
        out.push_str("  </testsuite>\n");
    }
    out.push_str("</testsuites>\n");
    out
}

/// A `<testcase>` with `file` and `line` (the attributes CI test
/// reporters read to put a failure on its line), and its `<failure>`:
/// the problem's message, its help, and the rendered diagnostic.
fn testcase(file: &str, case: &Case) -> String {
    let name = escape(&case.name);
    let class = escape(file);
    let line = case
        .line
        .map_or(String::new(), |l| format!(" line=\"{l}\""));
    let head =
        format!("    <testcase name=\"{name}\" classname=\"{class}\" file=\"{class}\"{line}");
    match &case.failure {
        None => format!("{head}/>\n"),
        Some(p) => {
            let message = match &p.help {
                Some(help) => format!("{}; help: {help}", p.message),
                None => p.message.clone(),
            };
            format!(
                "{head}>\n      <failure message=\"{}\">{}</failure>\n    </testcase>\n",
                escape(&message),
                escape(&p.text)
            )
        }
    }
}
