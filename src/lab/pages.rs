//! What the lab serves besides the reports: the experiment panel put at
//! the top of a report page, the index of the scenarios, a page for a file
//! that did not run, the equivalent command line and the changed file.

use super::controls::{Control, Kind, MAX_CONTROLS, readable, shown, unquoted};
use crate::report::junit_xml::escape;

/// The problems of a rerun, as the panel shows them: by the control whose
/// value they are about, and the rest.
#[derive(Debug, Default)]
pub struct Problems {
    pub by_path: Vec<(String, String)>,
    pub other: Vec<String>,
}

/// The panel: a form of the controls (each showing its value under `sets`
/// and any problem with it), reset, the command and the changed file.
pub fn panel(
    name: &str,
    file: &str,
    controls: &[Control],
    more: bool,
    sets: &[(String, String)],
    problems: &Problems,
    comparable: bool,
) -> String {
    let query = query(sets);
    let mut out = String::new();
    out.push_str(STYLE);
    out.push_str(&format!(
        "<form id=\"lab-panel\" class=\"lab\" method=\"get\" action=\"{}.html\" autocomplete=\"off\">\n<details class=\"lab-fold\" open>\n<summary><h2>Experiment</h2></summary>\n",
        escape(name)
    ));
    let refused = !problems.by_path.is_empty() || !problems.other.is_empty();
    if refused {
        // The run shown is the file's own: nothing on the page is changed.
        out.push_str("<p class=\"lab-refused\" role=\"status\">The changed values were refused (the reason is by each): the page shows the file's own run.</p>\n");
    } else if !sets.is_empty() {
        out.push_str("<p class=\"lab-changed\">This run has changed values (marked); the file is unchanged. The title, summary and lesson of the page describe the file's own values, not this run: the numbers, charts and tables are this run's.</p>\n");
    }
    for message in &problems.other {
        out.push_str(&format!(
            "<pre class=\"lab-error\" role=\"alert\">{}</pre>\n",
            escape(message)
        ));
    }
    out.push_str("<div class=\"lab-controls\">\n");
    for c in controls {
        let value = shown(c, sets);
        let changed = sets.iter().any(|(p, _)| *p == c.path);
        let id = format!("lab-{}", c.path.replace(['.', '"'], "-"));
        // A changed value of a refused rerun is not in the run shown:
        // refused (its reason by it), or not applied.
        let class = match (changed, refused) {
            (false, _) => "",
            (true, false) => " lab-set",
            (true, true) if problems.by_path.iter().any(|(p, _)| *p == c.path) => " lab-refused",
            (true, true) => " lab-unapplied",
        };
        out.push_str(&format!(
            "<div class=\"lab-control{class}\"><label for=\"{id}\" title=\"{}\">{}</label>",
            escape(&c.path),
            escape(&c.label)
        ));
        let common = format!(
            "id=\"{id}\" name=\"{}\" data-file=\"{}\"",
            escape(&c.path),
            escape(&c.file_value)
        );
        match c.kind {
            Kind::Axis => {
                out.push_str(&format!(
                    "<select {common}><option value=\"\">every point</option>"
                ));
                for choice in &c.choices {
                    // A swept value named without its quotes (`1s` for
                    // "1s", as links write it) is that choice.
                    let chosen = *choice == value || unquoted(choice) == value;
                    let selected = if chosen { " selected" } else { "" };
                    // Shown as a value, not as TOML: `1s`, not `"1s"`.
                    out.push_str(&format!(
                        "<option value=\"{}\"{selected}>{}</option>",
                        escape(choice),
                        escape(&readable(choice))
                    ));
                }
                out.push_str("</select>");
            }
            Kind::Bool => {
                out.push_str(&format!("<select {common}>"));
                for choice in ["true", "false"] {
                    let selected = if choice == value { " selected" } else { "" };
                    out.push_str(&format!("<option{selected}>{choice}</option>"));
                }
                out.push_str("</select>");
            }
            Kind::Integer => out.push_str(&format!(
                "<input type=\"number\" step=\"1\" {common} value=\"{}\">",
                escape(&value)
            )),
            Kind::Float => out.push_str(&format!(
                "<input type=\"number\" step=\"any\" {common} value=\"{}\">",
                escape(&value)
            )),
            Kind::Action => {
                out.push_str(&format!("<select {common}>"));
                for w in &c.choices {
                    let selected = if *w == value { " selected" } else { "" };
                    let text = w.replace('_', " ");
                    out.push_str(&format!(
                        "<option value=\"{}\"{selected}>{}</option>",
                        escape(w),
                        escape(&text)
                    ));
                }
                out.push_str("</select>");
            }
            // A select only where there is something to choose.
            Kind::Text if c.choices.iter().any(|w| *w != value) => {
                out.push_str(&format!("<select {common}>"));
                let mut words = c.choices.clone();
                if !words.contains(&value) {
                    words.insert(0, value.clone());
                }
                for w in &words {
                    let selected = if *w == value { " selected" } else { "" };
                    out.push_str(&format!("<option{selected}>{}</option>", escape(w)));
                }
                out.push_str("</select>");
            }
            Kind::Text => out.push_str(&format!(
                "<input type=\"text\" {common} value=\"{}\" spellcheck=\"false\">",
                escape(&value)
            )),
        }
        if changed {
            out.push_str(&format!(
                "<span class=\"lab-was\">file: {}</span>",
                escape(if c.file_value.is_empty() {
                    "every point"
                } else {
                    &c.file_value
                })
            ));
        }
        for (_, message) in problems.by_path.iter().filter(|(p, _)| *p == c.path) {
            out.push_str(&format!(
                "<pre class=\"lab-error\" role=\"alert\">{}</pre>",
                escape(message)
            ));
        }
        out.push_str("</div>\n");
    }
    out.push_str("</div>\n");
    if more {
        out.push_str(&format!(
            "<p class=\"meta\">The first {MAX_CONTROLS} values have controls; change the others with <code>--set PATH=VALUE</code>.</p>\n"
        ));
    }
    let command = command(file, sets);
    out.push_str(&format!(
        "<p class=\"lab-actions\"><button type=\"submit\">Run</button> \
         <a href=\"{0}.html#step=0\">Reset to file</a> \
         <a href=\"{0}.toml{1}\" download>Download the changed file</a> \
         {3}<button type=\"button\" id=\"lab-copy\" hidden>Copy the command</button></p>\n\
         <p><code id=\"lab-command\">{2}</code></p>\n</details>\n</form>\n",
        escape(name),
        escape(&query),
        escape(&command),
        match comparable {
            true => format!(
                "<a href=\"{}.compare.html{}\">Compare with the file's run</a> ",
                escape(name),
                escape(&query)
            ),
            false => String::new(),
        }
    ));
    out.push_str(SCRIPT);
    out
}

/// A rerun rewinds and pauses: the page opens at its first step, and a
/// change submits the changed values only (the others stay the file's).
const SCRIPT: &str = r##"<script>
(function () {
  if (!location.hash && history.replaceState) { history.replaceState(null, "", "#step=0"); }
  var form = document.getElementById("lab-panel");
  if (!form) { return; }
  // On a phone the panel starts folded, so that the player and the
  // timeline come first; a refused value keeps it open.
  var fold = form.querySelector(".lab-fold");
  if (fold && window.matchMedia && window.matchMedia("(max-width: 700px)").matches && !form.querySelector(".lab-refused")) {
    fold.open = false;
  }
  function submit() {
    var fields = form.querySelectorAll("[data-file]");
    for (var i = 0; i < fields.length; i++) {
      var f = fields[i];
      if (f.value === f.getAttribute("data-file") || f.value === "") { f.disabled = true; }
    }
    form.submit();
  }
  form.addEventListener("change", submit);
  form.addEventListener("submit", function (e) { e.preventDefault(); submit(); });
  var copy = document.getElementById("lab-copy");
  if (copy && navigator.clipboard) {
    copy.hidden = false;
    copy.addEventListener("click", function () {
      navigator.clipboard.writeText(document.getElementById("lab-command").textContent);
      copy.textContent = "Copied";
    });
  }
})();
</script>
"##;

const STYLE: &str = "<style>
.lab { border: 1px solid #8a94a6; border-radius: 6px; padding: 0.5rem 1rem; margin: 1rem 0; background: #f6f8fa; }
.lab h2 { margin-top: 0.2rem; }
.lab-controls { display: grid; grid-template-columns: repeat(auto-fill, minmax(16rem, 1fr)); gap: 0.4rem 1rem; }
.lab-control label { display: block; font-size: 0.85rem; }
.lab-control input, .lab-control select { width: 100%; box-sizing: border-box; }
.lab-set { background: #fff4cc; }
.lab-fold > summary { cursor: pointer; }
.lab-fold > summary h2 { display: inline; }
.lab-refused { background: #fde2e2; }
.lab-unapplied { background: #eeeeee; }
.lab-refused::after { content: ' refused'; color: #8b0000; font-size: 0.8rem; }
.lab-was { font-size: 0.8rem; color: #444; }
.lab-error { color: #8b0000; white-space: pre-wrap; font-size: 0.8rem; }
</style>
";

/// The panel put at the top of a report page, after its `<body>` tag.
pub fn inject(page: &str, panel: &str) -> String {
    match page
        .find("<body")
        .and_then(|b| page[b..].find('>').map(|e| b + e + 1))
    {
        Some(at) => format!("{}\n{panel}{}", &page[..at], &page[at..]),
        None => format!("{panel}{page}"),
    }
}

/// A page for a file whose run could not be shown: its problems, and the
/// panel to change a value.
pub fn problems_page(title: &str, panel: &str, problems: &[String]) -> String {
    let mut out = format!(
        "<!doctype html>\n<html lang=\"en\">\n<head><meta charset=\"utf-8\"><meta name=\"viewport\" content=\"width=device-width, initial-scale=1\"><title>{0}</title></head>\n<body>\n<nav><a href=\"index.html\">All scenarios</a></nav>\n<h1>{0}</h1>\n",
        escape(title)
    );
    out.push_str(panel);
    for p in problems {
        out.push_str(&format!("<pre>{}</pre>\n", escape(p)));
    }
    out.push_str("</body>\n</html>\n");
    out
}

/// One scenario of the index.
pub struct IndexEntry {
    pub name: String,
    pub title: String,
    pub summary: Option<String>,
    pub file: String,
    pub points: Option<usize>,
    pub invalid: bool,
    /// A queue scenario that runs as it is (not a sweep, not a dataflow):
    /// the comparison form offers it.
    pub comparable: bool,
}

/// The lab's index: every scenario it was given, each a link to its page.
pub fn index(entries: &[IndexEntry]) -> String {
    let mut out = String::from(
        "<!doctype html>\n<html lang=\"en\">\n<head><meta charset=\"utf-8\"><meta name=\"viewport\" content=\"width=device-width, initial-scale=1\"><title>scenario-run lab</title>\n<style>body { font-family: system-ui, sans-serif; max-width: 60rem; margin: 1rem auto; padding: 0 1rem; } li { margin: 0.4rem 0; } .meta { color: #444; font-size: 0.9rem; }</style></head>\n<body>\n<h1>scenario-run lab</h1>\n<p>Open a scenario, change a value in its experiment panel, and the run plays again with it. The files are only read.</p>\n<ol>\n",
    );
    for e in entries {
        out.push_str(&format!(
            "<li><a href=\"{}.html\">{}</a>{}{} <span class=\"meta\"><code>{}</code>{}</span>",
            escape(&e.name),
            escape(&e.title),
            e.points.map_or(String::new(), |n| format!(" ({n} points)")),
            if e.invalid { " (invalid)" } else { "" },
            escape(&e.file),
            e.summary
                .as_deref()
                .map_or(String::new(), |s| format!("<br>{}", escape(s))),
        ));
        out.push_str("</li>\n");
    }
    out.push_str("</ol>\n");
    let comparable: Vec<&IndexEntry> = entries.iter().filter(|e| e.comparable).collect();
    if comparable.len() >= 2 {
        out.push_str(
            "<form action=\"compare.html\" method=\"get\">\n<h2>Compare two runs</h2>\n<p>Both runs on one time axis, and every measure, message and sink that differs.</p>\n",
        );
        for (side, label, chosen) in [("a", "A", 0), ("b", "B", 1)] {
            out.push_str(&format!(
                "<label for=\"compare-{side}\">{label}</label> <select id=\"compare-{side}\" name=\"{side}\">"
            ));
            for (i, e) in comparable.iter().enumerate() {
                out.push_str(&format!(
                    "<option value=\"{}\"{}>{}</option>",
                    escape(&e.name),
                    if i == chosen { " selected" } else { "" },
                    escape(&e.name)
                ));
            }
            out.push_str("</select>\n");
        }
        out.push_str("<button type=\"submit\">Compare</button>\n</form>\n");
    }
    out.push_str("</body>\n</html>\n");
    out
}

/// The query string that gives these sets (`?path=value&...`).
pub fn query(sets: &[(String, String)]) -> String {
    if sets.is_empty() {
        return String::new();
    }
    let mut q = form_urlencoded::Serializer::new(String::new());
    for (p, v) in sets {
        q.append_pair(p, &unquoted(v));
    }
    format!("?{}", q.finish())
}

/// The command that runs what the page shows: `scenario-run FILE --set
/// PATH=VALUE ...`, each argument quoted for a POSIX shell when it needs
/// it.
pub fn command(file: &str, sets: &[(String, String)]) -> String {
    let mut out = format!("scenario-run {}", crate::shell::word(file));
    for (p, v) in sets {
        if v == crate::scenario::sweep::UNSET {
            out.push_str(&format!(" --unset {}", crate::shell::word(p)));
            continue;
        }
        // `--set` reads a value that is not TOML as a string: `1m`, not
        // `"1m"`, where that is the same.
        let word = unquoted(v);
        let v = if word != *v && format!("x = {word}").parse::<toml::Table>().is_err() {
            word
        } else {
            v.clone()
        };
        out.push(' ');
        out.push_str(&crate::shell::set(p, &v));
    }
    out
}

/// The lab's icon: 16 by 16, three bars (a queue) on blue, as an ICO file
/// made here (a 32-bit bitmap and its mask).
pub fn favicon() -> Vec<u8> {
    const N: u32 = 16;
    let (pixels, mask) = (N * N * 4, N * 4);
    let size = 40 + pixels + mask;
    let mut out = Vec::with_capacity(22 + size as usize);
    // The directory: reserved, type 1 (icon), one image.
    out.extend([0, 0, 1, 0, 1, 0]);
    out.extend([N as u8, N as u8, 0, 0]);
    out.extend(1u16.to_le_bytes());
    out.extend(32u16.to_le_bytes());
    out.extend(size.to_le_bytes());
    out.extend(22u32.to_le_bytes());
    // The bitmap's header: its height counts the mask too.
    out.extend(40u32.to_le_bytes());
    out.extend(N.to_le_bytes());
    out.extend((2 * N).to_le_bytes());
    out.extend(1u16.to_le_bytes());
    out.extend(32u16.to_le_bytes());
    out.extend(0u32.to_le_bytes());
    out.extend(pixels.to_le_bytes());
    out.extend([0u8; 16]);
    // Rows bottom up, blue, green, red, alpha.
    for y in 0..N {
        let row = N - 1 - y;
        for x in 0..N {
            let bar = (3..=12).contains(&x) && matches!(row, 4 | 5 | 7 | 8 | 10 | 11);
            out.extend(if bar {
                [255, 255, 255, 255]
            } else {
                [0xb0, 0x6c, 0x2b, 255]
            });
        }
    }
    out.extend(std::iter::repeat_n(0u8, mask as usize));
    out
}

/// Each point of a sweep's page, as the lab's page of that one point: the
/// page's own values with every swept path fixed to the point's.
pub fn point_links(
    name: &str,
    sweep: &serde_json::Value,
    sets: &[(String, String)],
) -> serde_json::Value {
    let keys: Vec<&str> = (sweep["sweep"]["keys"].as_array())
        .into_iter()
        .flatten()
        .filter_map(|k| k.as_str())
        .collect();
    let rows = sweep["sweep"]["rows"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    let links: Vec<String> = rows
        .iter()
        .map(|row| {
            let mut point: Vec<(String, String)> = sets
                .iter()
                .filter(|(p, _)| !keys.contains(&p.as_str()))
                .cloned()
                .collect();
            for (i, key) in keys.iter().enumerate() {
                let value = row[i].as_str().unwrap_or_default();
                point.push((key.to_string(), value.to_string()));
            }
            format!("{name}.html{}#step=0", query(&point))
        })
        .collect();
    serde_json::json!(links)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sets(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
        pairs
            .iter()
            .map(|(a, b)| (a.to_string(), b.to_string()))
            .collect()
    }

    #[test]
    fn the_command_quotes_what_a_shell_would_split() {
        assert_eq!(
            command(
                "my scenarios/a.toml",
                &sets(&[
                    ("delivery.retry_interval", "\"1m\""),
                    ("dedup.enabled", "false"),
                    ("delivery.queue", "\"true\"")
                ]),
            ),
            "scenario-run 'my scenarios/a.toml' --set delivery.retry_interval=1m --set dedup.enabled=false --set 'delivery.queue=\"true\"'"
        );
        assert_eq!(
            query(&sets(&[("a.b", "\"1 s\""), ("c", "2")])),
            "?a.b=1+s&c=2"
        );
        assert_eq!(query(&[]), "");
    }

    #[test]
    fn the_panel_goes_right_after_the_body_tag() {
        assert_eq!(
            inject("<html><body class=\"x\"><h1>t</h1></body>", "<form></form>"),
            "<html><body class=\"x\">\n<form></form><h1>t</h1></body>"
        );
    }
}
