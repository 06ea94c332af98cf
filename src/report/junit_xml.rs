//! JUnit XML for CI: a testsuite per scenario file, a testcase per
//! expectation; a failure's text is the colour-free diagnostic.

use crate::diagnostic::render;

/// One scenario file's cases: (name, failure text if it failed).
pub struct Suite {
    pub name: String,
    pub file: String,
    pub cases: Vec<(String, Option<String>)>,
}

pub fn escape(s: &str) -> String {
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
    let tests: usize = suites.iter().map(|s| s.cases.len()).sum();
    let failures: usize = suites
        .iter()
        .map(|s| s.cases.iter().filter(|c| c.1.is_some()).count())
        .sum();
    let mut out = format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"scenario-run\" tests=\"{tests}\" failures=\"{failures}\">\n"
    );
    for s in suites {
        let f = s.cases.iter().filter(|c| c.1.is_some()).count();
        out.push_str(&format!(
            "  <testsuite name=\"{}\" file=\"{}\" tests=\"{}\" failures=\"{f}\">\n",
            escape(&s.name),
            escape(&s.file),
            s.cases.len()
        ));
        for (name, failure) in &s.cases {
            let name = escape(name);
            let class = escape(&s.file);
            match failure {
                None => out.push_str(&format!(
                    "    <testcase name=\"{name}\" classname=\"{class}\"/>\n"
                )),
                Some(text) => {
                    let first = escape(text.lines().next().unwrap_or("").trim());
                    out.push_str(&format!(
                        "    <testcase name=\"{name}\" classname=\"{class}\">\n      <failure message=\"{first}\">{}</failure>\n    </testcase>\n",
                        escape(text)
                    ));
                }
            }
        }
        out.push_str("  </testsuite>\n");
    }
    out.push_str("</testsuites>\n");
    out
}

/// The rendered, colour-free text of a diagnostic, for a failure element.
pub fn failure_text(p: &crate::diagnostic::Problem) -> String {
    render(p, false)
}
