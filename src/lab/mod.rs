//! `scenario-run lab`: a local web server (127.0.0.1 only) where a learner
//! opens a scenario's page, changes a value in its experiment panel, and
//! watches the run again with it.
//!
//! | file | concept |
//! |---|---|
//! | `controls.rs` | a control per value a file sets; a query as `--set` values |
//! | `pages.rs` | the panel, the index, a page of problems, the command, the changed file |
//! | `server.rs` | the HTTP server: binding, requests, Ctrl-C |
//! | `cache.rs` | the pages kept, and those being made |
//! | `changed.rs` | the file with the panel's values written in place |
//!
//! Each page is the file's HTML report from the same templates as
//! `--report`, rerun with the query's values as `--set` would write them.
//! The files are read, never written; only the files given are served.

mod cache;
pub mod changed;
pub mod controls;
pub mod pages;
pub mod server;

use std::sync::Arc;
use std::time::Duration;

pub use cache::{CACHED_BYTES, CACHED_PAGES, MAX_RERUNS, RERUN_BUDGET};
use cache::{Pages, Start, release_freed_memory};

use crate::app::batch::run_one;
use crate::app::reports::{ReportFormat, render_report, report_document};
use crate::app::{FileResult, Options, Transcript, run_file};
use crate::diagnostic::{Problem, render};
use crate::output::report_names_reserving;
use crate::report::templates::Templates;

/// A query longer than this is refused (414).
pub const MAX_QUERY: usize = 16 << 10;

/// Names a file's page may not take: the lab's own pages.
const RESERVED: [&str; 3] = ["index", "compare", "favicon"];

/// A scenario the lab serves.
#[derive(Clone)]
struct LabFile {
    path: String,
    /// Its report name: `NAME.html`, `NAME.json`, `NAME.toml`.
    name: String,
}

/// What the lab serves, and the pages it has rendered: shared by the
/// threads that answer requests (cloning it is cheap).
#[derive(Clone)]
pub struct Lab {
    shared: Arc<Shared>,
}

/// What every request reads.
pub struct Shared {
    files: Vec<LabFile>,
    templates: Templates,
    seed: Option<u64>,
    /// The JSON Schema of the format: the words a text control offers.
    schema: serde_json::Value,
    /// The pages kept, and those being made.
    pages: Pages,
}

impl std::ops::Deref for Lab {
    type Target = Shared;
    fn deref(&self) -> &Shared {
        &self.shared
    }
}

/// An answer: its status, content type, headers and body.
#[derive(Debug)]
pub struct Reply {
    pub status: u16,
    pub content_type: &'static str,
    pub headers: Vec<(String, String)>,
    pub body: Arc<Vec<u8>>,
}

impl Reply {
    fn new(status: u16, content_type: &'static str, body: Vec<u8>) -> Reply {
        Reply {
            status,
            content_type,
            headers: Vec::new(),
            body: Arc::new(body),
        }
    }

    fn text(status: u16, text: &str) -> Reply {
        Reply::new(
            status,
            "text/plain; charset=utf-8",
            format!("{text}\n").into_bytes(),
        )
    }
}

const HTML: &str = "text/html; charset=utf-8";

impl Lab {
    /// A lab of these files; `schema` (the format's JSON Schema, as
    /// `scenario-run schema` prints it) gives the words a text control
    /// offers.
    pub fn new(
        paths: Vec<String>,
        templates: Templates,
        seed: Option<u64>,
        schema: serde_json::Value,
    ) -> Lab {
        let names = report_names_reserving(&paths, &RESERVED);
        let shared = Shared {
            files: paths
                .into_iter()
                .zip(names)
                .map(|(path, name)| LabFile { path, name })
                .collect(),
            templates,
            seed,
            schema,
            pages: Pages::new(),
        };
        Lab {
            shared: Arc::new(shared),
        }
    }

    /// The same lab, a request waiting `budget` for its page instead of
    /// [`RERUN_BUDGET`] (before it serves: a lab already shared keeps its
    /// budget).
    pub fn with_rerun_budget(mut self, budget: Duration) -> Lab {
        if let Some(shared) = Arc::get_mut(&mut self.shared) {
            shared.pages.budget = budget;
        }
        self
    }

    /// The answer to a GET of `target` (a path and its query).
    pub fn respond(&self, target: &str) -> Reply {
        if target.len() > MAX_QUERY {
            return Reply::text(414, "the request is too long");
        }
        let (path, query) = target.split_once('?').unwrap_or((target, ""));
        let query: Vec<(String, String)> = form_urlencoded::parse(query.as_bytes())
            .map(|(k, v)| (k.into_owned(), v.into_owned()))
            .collect();
        if path == "/" {
            let mut r = Reply::text(302, "see /index.html");
            r.headers.push(("Location".into(), "/index.html".into()));
            return r;
        }
        if path == "/index.html" {
            return Reply::new(200, HTML, pages::index(&self.entries()).into_bytes());
        }
        if path == "/compare.html" {
            return self.compare_two(&query);
        }
        if path == "/favicon.ico" {
            return Reply::new(200, "image/x-icon", pages::favicon());
        }
        let Some(rest) = path.strip_prefix('/') else {
            return Reply::text(404, "not found");
        };
        let (rest, compared) = match rest.strip_suffix(".compare.html") {
            Some(name) => (name, true),
            None => (rest, false),
        };
        let Some((name, extension)) = rest.rsplit_once('.').or(compared.then_some((rest, "")))
        else {
            return Reply::text(404, "not found");
        };
        let Some(file) = self.files.iter().find(|f| f.name == name) else {
            return Reply::text(
                404,
                "no such scenario: the lab serves the files it was given",
            );
        };
        let text = match crate::app::batch::read_file(&file.path) {
            Ok(bytes) => String::from_utf8_lossy(&bytes).into_owned(),
            Err(e) => return Reply::text(500, &format!("cannot read {}: {e}", file.path)),
        };
        let (mut controls, more) = controls::controls(&text);
        for c in controls
            .iter_mut()
            .filter(|c| c.kind == controls::Kind::Text)
        {
            c.choices = controls::words(&self.schema, &c.path);
        }
        let sets = controls::sets(&controls, &query);
        // The values that pick a sweep's point: the run to compare with is
        // the file's own at that point.
        let point: Vec<(String, String)> = sets
            .iter()
            .filter(|(path, _)| {
                controls
                    .iter()
                    .any(|c| c.kind == controls::Kind::Axis && c.path == *path)
            })
            .cloned()
            .collect();
        let axes = controls
            .iter()
            .filter(|c| c.kind == controls::Kind::Axis)
            .count();
        if compared {
            return self.compare(file, &text, &point, &sets);
        }
        // A queue run compares with the file's, once it is one run (every
        // swept path fixed); a dataflow does not.
        let comparable = !crate::scenario::is_dataflow(&text) && point.len() == axes;
        match extension {
            "html" => {
                let file = file.clone();
                self.cached(
                    &format!("{name}.html{}", pages::query(&sets)),
                    &text,
                    move |lab| Ok(lab.page(&file, &controls, more, &sets, comparable)),
                )
            }
            "json" => self.json(file, &sets),
            "toml" => match changed::changed_file(&text, &sets) {
                Ok(changed) => {
                    let mut r =
                        Reply::new(200, "application/toml; charset=utf-8", changed.into_bytes());
                    r.headers.push((
                        "Content-Disposition".into(),
                        format!("attachment; filename=\"{name}.toml\""),
                    ));
                    r
                }
                Err(e) => Reply::text(400, &e),
            },
            _ => Reply::text(404, "not found"),
        }
    }

    /// A page from the cache (keyed by its request and the file's text),
    /// or made and kept; a reply that is not a page (`make`'s error) is
    /// given as it is, and not kept. The page is made on a thread of its
    /// own: a request waits for it [`RERUN_BUDGET`] at most, then is told
    /// it is still being made (and so is a request for it meanwhile);
    /// past [`MAX_RERUNS`] pages being made, to ask again.
    fn cached(
        &self,
        key: &str,
        text: &str,
        make: impl FnOnce(&Shared) -> Result<Vec<u8>, Reply> + Send + 'static,
    ) -> Reply {
        use std::hash::{Hash, Hasher};
        let mut h = std::collections::hash_map::DefaultHasher::new();
        text.hash(&mut h);
        let key = format!("{key}#{:x}", h.finish());
        if let Some(body) = self.pages.kept(&key) {
            return Reply {
                status: 200,
                content_type: HTML,
                headers: Vec::new(),
                body,
            };
        }
        let budget = self.pages.budget;
        let wait = |text: String| {
            let mut r = Reply::text(503, &text);
            r.headers.push(("Retry-After".into(), "10".into()));
            r
        };
        let still = || {
            wait(format!(
                "this run takes longer than the lab waits ({}); it goes on, and its page is kept: reload in a while, or run it with scenario-run",
                crate::duration::format(budget.as_millis() as u64)
            ))
        };
        match self.pages.start(&key) {
            Start::Started => {}
            Start::Making => return still(),
            Start::Full => {
                return wait(format!(
                    "the lab is making {MAX_RERUNS} pages already; ask again when one is done"
                ));
            }
        }
        let (sent, made) = std::sync::mpsc::channel();
        let lab = self.clone();
        let kept = key.clone();
        let spawned = std::thread::Builder::new()
            .name("lab-rerun".into())
            .spawn(move || {
                let result = make(&lab).map(Arc::new);
                release_freed_memory();
                if let Ok(body) = &result {
                    lab.pages.keep(kept.clone(), Arc::clone(body));
                }
                lab.pages.done(&kept);
                let _ = sent.send(result);
            });
        if spawned.is_err() {
            self.pages.done(&key);
            return Reply::text(503, "the lab cannot start a run now");
        }
        match made.recv_timeout(budget) {
            Ok(Ok(body)) => Reply {
                status: 200,
                content_type: HTML,
                headers: Vec::new(),
                body,
            },
            Ok(Err(reply)) => reply,
            Err(_) => still(),
        }
    }

    /// The comparison page of the file's own run (A: at the sweep's
    /// `point`, if it is one) with its run under these sets (B), as
    /// `compare --report` draws it; 400 with the reason when a side
    /// cannot run.
    fn compare(
        &self,
        file: &LabFile,
        text: &str,
        point: &[(String, String)],
        sets: &[(String, String)],
    ) -> Reply {
        let key = format!("{}.compare.html{}", file.name, pages::query(sets));
        let back = (
            format!("{}.html{}", file.name, pages::query(sets)),
            file.name.clone(),
        );
        let sides = [(&*file.path, point), (&*file.path, sets)];
        self.compare_page(&key, text, sides, Some(back))
    }

    /// `/compare.html?a=NAME&b=NAME`: two of the files, each run as it is
    /// (the index's form asks for them).
    fn compare_two(&self, query: &[(String, String)]) -> Reply {
        let named = |side: &str| {
            let name = query
                .iter()
                .find(|(k, _)| k == side)
                .map(|(_, v)| v.as_str());
            self.files.iter().find(|f| Some(f.name.as_str()) == name)
        };
        let (Some(a), Some(b)) = (named("a"), named("b")) else {
            return Reply::text(
                404,
                "compare.html?a=NAME&b=NAME names two of the lab's files",
            );
        };
        let mut text = String::new();
        for f in [a, b] {
            match crate::app::batch::read_file(&f.path) {
                Ok(bytes) => text.push_str(&String::from_utf8_lossy(&bytes)),
                Err(e) => return Reply::text(500, &format!("cannot read {}: {e}", f.path)),
            }
        }
        let key = format!("compare.html?a={}&b={}", a.name, b.name);
        self.compare_page(&key, &text, [(&a.path, &[]), (&b.path, &[])], None)
    }

    /// The comparison of two sides (a file and its `--set` values), kept
    /// under `key` and the files' `text`.
    /// The page links to the index, and to `back` (a page's href and
    /// name) when it compares a file's page with its changed run.
    fn compare_page(
        &self,
        key: &str,
        text: &str,
        sides: [(&str, &[(String, String)]); 2],
        back: Option<(String, String)>,
    ) -> Reply {
        use crate::app::compare;
        let [(fa, sa), (fb, sb)] = sides;
        let (fa, sa, fb, sb) = (fa.to_string(), sa.to_vec(), fb.to_string(), sb.to_vec());
        self.cached(key, text, move |lab| {
            let side = |name: &str, file: &str, sets: &[(String, String)]| {
                compare::side(file, sets, lab.seed)
                    .map_err(|e| Reply::text(400, &e.describe(name, file)))
            };
            let (a, b) = (side("A", &fa, &sa)?, side("B", &fb, &sb)?);
            let context = crate::report::compare::context(&compare::compare(a, b));
            let mut nav = vec![("index.html".to_string(), "All scenarios".to_string())];
            nav.extend(back);
            let ctx = minijinja::context! {
                compare => minijinja::Value::from(minijinja::value::Serde(&context)),
                nav => nav,
            };
            lab.templates
                .render(crate::report::templates::COMPARE_HTML, ctx)
                .map(String::into_bytes)
                .map_err(|p| Reply::text(500, &crate::diagnostic::render(p.as_ref(), false)))
        })
    }
}

impl Shared {
    fn options(&self, sets: &[(String, String)], transcript: Transcript) -> Options {
        Options {
            seed: self.seed,
            transcript,
            census: transcript == Transcript::Kept,
            sets: sets.to_vec(),
            ..Options::default()
        }
    }

    /// A file's page under these sets: its HTML report with the panel; a
    /// rerun that a value makes invalid shows the file's own run with the
    /// problems next to the values that caused them.
    fn page(
        &self,
        file: &LabFile,
        controls: &[controls::Control],
        more: bool,
        sets: &[(String, String)],
        comparable: bool,
    ) -> Vec<u8> {
        // A sweep fixed to one point is that point's run, its page whole.
        let result = run_one(&file.path, &self.options(sets, Transcript::Kept));
        let (result, problems) = match result {
            FileResult::Invalid(inv) if !sets.is_empty() => {
                let problems = self.placed(&inv.problems, sets);
                // The file as it is, with the problems on the panel.
                (
                    run_one(&file.path, &self.options(&[], Transcript::Kept)),
                    problems,
                )
            }
            r => (r, pages::Problems::default()),
        };
        let panel = pages::panel(
            &file.name, &file.path, controls, more, sets, &problems, comparable,
        );
        let entry = crate::app::entry::entry(0, &file.path, &result, None, Some(file.name.clone()));
        let page = report_document(&file.path, &result, &entry.problems, &entry.status).and_then(
            |mut doc| {
                if let FileResult::Swept(_) = &result {
                    doc.head["point_links"] = pages::point_links(&file.name, &doc.head, sets);
                }
                let mut out = Vec::new();
                render_report(&self.templates, ReportFormat::Html, &result, &doc, &mut out)
                    .ok()
                    .map(|()| out)
            },
        );
        match page {
            Some(html) => pages::inject(&String::from_utf8_lossy(&html), &panel).into_bytes(),
            None => {
                let shown: Vec<String> = entry.problems.iter().map(|p| p.text.clone()).collect();
                pages::problems_page(&entry.name, &panel, &shown).into_bytes()
            }
        }
    }

    /// The JSON report of a file's run under these sets (the problems,
    /// with status 400, when a value makes it invalid).
    fn json(&self, file: &LabFile, sets: &[(String, String)]) -> Reply {
        let result = run_file(&file.path, 0, &self.options(sets, Transcript::Replayed));
        release_freed_memory();
        let entry = crate::app::entry::entry(0, &file.path, &result, None, Some(file.name.clone()));
        match report_document(&file.path, &result, &entry.problems, &entry.status) {
            Some(doc) => {
                let mut out = Vec::new();
                match render_report(&self.templates, ReportFormat::Json, &result, &doc, &mut out) {
                    Ok(()) => Reply::new(200, "application/json", out),
                    Err(_) => Reply::text(500, "the report could not be written"),
                }
            }
            None => {
                let doc = serde_json::json!({ "file": file.path, "status": entry.status, "problems": entry.problems });
                let text = serde_json::to_string_pretty(&doc).unwrap_or_default();
                Reply::new(400, "application/json", format!("{text}\n").into_bytes())
            }
        }
    }

    /// A rerun's problems, each by the control whose `--set` it is about
    /// (its span is in that argument's line), the rest on their own.
    fn placed(&self, problems: &[Problem], sets: &[(String, String)]) -> pages::Problems {
        let mut out = pages::Problems::default();
        // The arguments as diagnostics show them: one line per set.
        let mut starts = Vec::new();
        let mut at = 0;
        for (path, value) in sets {
            starts.push(at);
            at += crate::scenario::sweep::set_table(&[(path.clone(), value.clone())]).len()
                - crate::scenario::sweep::set_header().len();
        }
        for p in problems {
            let text = render(p, false);
            let owner = p.in_sets().then(|| {
                let offset = p.offset();
                starts.iter().rposition(|&s| s <= offset)
            });
            match owner.flatten() {
                Some(k) => out.by_path.push((sets[k].0.clone(), text)),
                None => out.other.push(text),
            }
        }
        out
    }

    /// The index: each file's name, summary and kind, read (not run).
    fn entries(&self) -> Vec<pages::IndexEntry> {
        self.files
            .iter()
            .map(|f| {
                let loaded = crate::app::load_file(&f.path, &[]);
                let (title, summary, points, invalid) = match &loaded {
                    Ok((crate::app::Loaded::One(s), _)) => {
                        (s.name.clone(), s.summary.clone(), None, false)
                    }
                    Ok((crate::app::Loaded::Sweep(s), _)) => {
                        let first = &s.points[0].scenario;
                        (
                            first.name.clone(),
                            first.summary.clone(),
                            Some(s.points.len()),
                            false,
                        )
                    }
                    Ok((crate::app::Loaded::Dataflow(d), _)) => {
                        (d.name.clone(), d.summary.clone(), None, false)
                    }
                    Ok((crate::app::Loaded::DataflowSweep(s), _)) => {
                        let first = &s.points[0].flow;
                        (
                            first.name.clone(),
                            first.summary.clone(),
                            Some(s.points.len()),
                            false,
                        )
                    }
                    Err(_) => (f.path.clone(), None, None, true),
                };
                pages::IndexEntry {
                    name: f.name.clone(),
                    title,
                    summary,
                    file: f.path.clone(),
                    points,
                    invalid,
                    // One queue run: what `compare` takes as it is.
                    comparable: matches!(loaded, Ok((crate::app::Loaded::One(_), _))),
                }
            })
            .collect()
    }
}
