//! `scenario-run compare`: the command (the comparison itself is
//! `crate::app::compare`, its text and pages `crate::report::compare`).

use minijinja::value::{Serde, Value};

use crate::app::Exit;
use crate::app::compare::{self, SideError};
use crate::diagnostic::render;
use crate::report::templates::{COMPARE_HTML, COMPARE_MARKDOWN, Templates};

/// What `compare` was asked: each side's file and `--set` values.
pub(super) struct Request<'a> {
    pub sides: [(&'a str, Vec<(String, String)>); 2],
    pub seed: Option<u64>,
    pub json: bool,
    pub report: Option<&'a std::path::Path>,
    pub templates: Option<&'a std::path::Path>,
    pub color: bool,
}

/// Runs both sides and prints their differences; exit 0 when there are
/// none, 1 when there are, else as docs/cli.md's "Exit codes" says.
pub(super) fn compare(request: &Request) -> Exit {
    let templates = match request.report.map(|_| Templates::load(request.templates)) {
        Some(Err(problems)) => {
            for p in &problems {
                eprintln!("{}", render(p, request.color));
            }
            return Exit::Invalid;
        }
        Some(Ok(t)) => Some(t),
        None => None,
    };
    let mut sides = Vec::new();
    for ((file, sets), name) in request.sides.iter().zip(["A", "B"]) {
        match compare::side(file, sets, request.seed) {
            Ok(side) => sides.push(side),
            Err(e) => {
                let exit = e.exit();
                refused(name, file, e, request.color);
                return exit;
            }
        }
    }
    let (Some(b), Some(a)) = (sides.pop(), sides.pop()) else {
        return Exit::Invalid;
    };
    let comparison = compare::compare(a, b);
    let json = comparison.json();
    if request.json {
        super::print::emit(&format!(
            "{}\n",
            serde_json::to_string_pretty(&json).unwrap_or_default()
        ));
    } else {
        super::print::emit(&crate::report::compare::text(&comparison));
    }
    if let (Some(dir), Some(templates)) = (request.report, &templates) {
        let context = crate::report::compare::context(&comparison);
        let ctx = minijinja::context! { compare => Value::from(Serde(&context)) };
        let pages = [
            (COMPARE_HTML, "compare.html"),
            (COMPARE_MARKDOWN, "compare.md"),
        ]
        .map(|(template, file)| (file, templates.render(template, ctx.clone())));
        let mut json_text = serde_json::to_string_pretty(&json).unwrap_or_default();
        json_text.push('\n');
        let mut files = vec![("compare.json", json_text)];
        for (file, page) in pages {
            match page {
                Ok(page) => files.push((file, page)),
                Err(p) => {
                    eprintln!("{}", render(p.as_ref(), request.color));
                    return Exit::Invalid;
                }
            }
        }
        // Each file makes the folder if it is not there.
        let written = files
            .iter()
            .try_for_each(|(file, text)| crate::output::write_in_folder(&dir.join(file), text));
        if let Err(e) = written {
            eprintln!("error: cannot write into {}: {e}", dir.display());
            return Exit::Io;
        }
    }
    if comparison.compared.differences == 0 {
        Exit::Passed
    } else {
        Exit::Failed
    }
}

/// Says why side `name` (`file`) cannot be compared, on standard error
/// (problems in colour when asked).
fn refused(name: &str, file: &str, e: SideError, color: bool) {
    match e {
        SideError::Invalid(problems) => {
            for p in &problems {
                eprintln!("{}", render(p, color));
            }
        }
        SideError::Stopped(p) => eprintln!("{}", render(p.as_ref(), color)),
        e => eprintln!("{}", e.describe(name, file)),
    }
}
