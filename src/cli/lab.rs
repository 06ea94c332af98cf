//! `scenario-run lab`: the command that starts the lab's server (the lab
//! itself is `crate::lab`).

use crate::app::Exit;
use crate::diagnostic::render;

/// `lab`: serves the files on 127.0.0.1 until Ctrl-C.
pub(super) fn lab(
    patterns: &[String],
    port: u16,
    open: bool,
    seed: Option<u64>,
    templates: Option<&std::path::Path>,
    color: bool,
) -> Exit {
    let files = match super::files(patterns) {
        Ok(f) => f,
        Err(code) => return code,
    };
    let templates = match crate::report::templates::Templates::load(templates) {
        Ok(t) => t,
        Err(problems) => {
            for p in &problems {
                eprintln!("{}", render(p, color));
            }
            return Exit::Invalid;
        }
    };
    let count = files.len();
    let schema = serde_json::from_str(&crate::app::schema()).unwrap_or_default();
    let lab = crate::lab::Lab::new(files, templates, seed, schema);
    // A closed standard output (the lab started by a script that went
    // away) is no reason to stop serving, or to panic.
    let say = |line: &str| {
        use std::io::Write;
        let mut out = std::io::stdout();
        let _ = writeln!(out, "{line}").and_then(|()| out.flush());
    };
    let started = crate::lab::server::serve(lab, port, |url| {
        say(&format!("lab: {url} ({count} scenarios; Ctrl-C stops)"));
        if open {
            open_browser(&format!("{url}index.html"));
        }
    });
    match started {
        Ok(()) => {
            say("lab: stopped");
            Exit::Passed
        }
        Err(e) => {
            eprintln!("error: {e}");
            Exit::Io
        }
    }
}

/// Opens `url` in the desktop's browser; a failure is said, not fatal.
fn open_browser(url: &str) {
    let program = if cfg!(target_os = "macos") {
        "open"
    } else if cfg!(windows) {
        "explorer"
    } else {
        "xdg-open"
    };
    if std::process::Command::new(program)
        .arg(url)
        .spawn()
        .is_err()
    {
        eprintln!("lab: could not start {program}; open {url} yourself");
    }
}
