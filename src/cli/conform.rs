//! `scenario-run conform`: the command (the comparison itself is
//! `crate::conform`).

use crate::app::Exit;
use crate::conform::{self, LiveError, NotReady};
use crate::diagnostic::render;

/// What `conform` was asked.
pub(super) struct Request<'a> {
    pub url: &'a str,
    pub patterns: &'a [String],
    pub time_scale: Option<u64>,
    pub json: bool,
    pub junit: Option<&'a std::path::Path>,
    pub report: Option<&'a std::path::Path>,
    pub templates: Option<&'a std::path::Path>,
    pub color: bool,
}

/// Prepares every file, then runs them against the broker; exit 0 when
/// every file conforms, 1 when one differs, else as docs/cli.md's
/// "Exit codes" says (an invalid file 3, one conform cannot drive or a
/// URL it cannot use 2, a broker that does not answer or an output that
/// cannot be written 5).
pub(super) fn conform(request: &Request) -> Exit {
    let Request {
        url,
        patterns,
        time_scale,
        json,
        junit,
        report,
        templates,
        color,
    } = *request;
    // The templates first: a broken override is found before any broker
    // is asked.
    let templates = match report.map(|_| crate::report::templates::Templates::load(templates)) {
        Some(Err(problems)) => {
            for p in &problems {
                eprintln!("{}", render(p, color));
            }
            return Exit::Invalid;
        }
        Some(Ok(t)) => Some(t),
        None => None,
    };
    let files = match super::files(patterns) {
        Ok(f) => f,
        Err(code) => return code,
    };
    // The URL reaches the terminal, JSON, JUnit and the report: one that
    // holds a control character (a line feed, an escape) is refused,
    // shown escaped.
    if url.chars().any(char::is_control) {
        eprintln!(
            "error: --broker {}: a broker's URL holds no control characters",
            crate::diagnostic::one_line(url)
        );
        return Exit::Usage;
    }
    let target = match conform::Target::of(url) {
        Ok(t) => t,
        Err(e) => {
            eprintln!("error: {e}");
            return Exit::Usage;
        }
    };
    let mut prepared = Vec::new();
    let mut refused = Exit::Passed;
    for file in &files {
        match conform::prepare(file, target, time_scale) {
            Ok(p) => prepared.push(p),
            Err(NotReady::Invalid(invalid)) => {
                for p in &invalid.problems {
                    eprintln!("{}", render(p, color));
                }
                refused = refused.max(Exit::Invalid);
            }
            Err(NotReady::Unsupported(why)) => {
                eprintln!("error: {file}: conform cannot check this file: {why}");
                refused = refused.max(Exit::Usage);
            }
        }
    }
    if refused != Exit::Passed {
        return refused;
    }
    let (broker, checked) = match conform::live(url, &prepared) {
        Ok(done) => done,
        Err(e) => {
            eprintln!("error: {e}");
            // A build without the clients or a scheme conform does not
            // drive is the command line's; the rest is the broker's.
            return match e {
                LiveError::NotBuilt | LiveError::Scheme(_) => Exit::Usage,
                _ => Exit::Io,
            };
        }
    };
    let text = if json {
        conform::output::json(&broker, url, &checked)
    } else {
        conform::output::render(&broker, url, &checked)
    };
    print!("{text}");
    if let Some(path) = junit
        && let Err(e) = crate::output::write_atomic(path, &conform::output::junit(&checked))
    {
        eprintln!("error: cannot write {}: {e}", path.display());
        return Exit::Io;
    }
    if let (Some(dir), Some(templates)) = (report, &templates) {
        let document = conform::output::document(&broker, url, &checked);
        let page = match conform::output::html(templates, &document) {
            Ok(page) => page,
            Err(p) => {
                eprintln!("{}", render(p.as_ref(), color));
                return Exit::Invalid;
            }
        };
        let mut json_text = serde_json::to_string_pretty(&document).unwrap_or_default();
        json_text.push('\n');
        // Each file makes the folder if it is not there.
        let written = crate::output::write_in_folder(&dir.join("conformance.html"), &page)
            .and_then(|()| {
                crate::output::write_in_folder(&dir.join("conformance.json"), &json_text)
            });
        if let Err(e) = written {
            eprintln!("error: cannot write into {}: {e}", dir.display());
            return Exit::Io;
        }
    }
    if checked.iter().all(|c| c.conforms()) {
        Exit::Passed
    } else {
        Exit::Failed
    }
}
