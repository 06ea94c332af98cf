//! Located problems and their rendering. Every message the tool prints
//! about a scenario file (invalid input, a failed expectation, a limit)
//! is a [`Problem`] pointing into the file's text.

mod excerpt;

pub use excerpt::MAX_QUOTED_LINE;
use excerpt::{Excerpt, Shown};
use miette::{Diagnostic, GraphicalReportHandler, GraphicalTheme, NamedSource, SourceSpan};
use std::ops::Range;
use std::sync::Arc;

/// The text of one scenario file, shared by all its problems.
#[derive(Debug, Clone)]
pub struct Source {
    pub name: String,
    pub text: Arc<str>,
    /// The text as diagnostics show it, made once for all of them (a file
    /// with thousands of problems must not copy itself thousands of times).
    shown: Arc<std::sync::OnceLock<NamedSource<Arc<str>>>>,
    /// Where the `--set` arguments start in `text` (one line each, appended
    /// after the file's own text), if there are any.
    sets: Option<usize>,
    shown_sets: Arc<std::sync::OnceLock<NamedSource<Arc<str>>>>,
}

/// The name a diagnostic gives the `--set` arguments: line N of it is the
/// N-th argument.
const SET_ARGUMENTS: &str = "--set";

impl Source {
    pub fn new(name: impl Into<String>, text: impl Into<Arc<str>>) -> Self {
        Source {
            name: name.into(),
            text: text.into(),
            shown: Arc::default(),
            sets: None,
            shown_sets: Arc::default(),
        }
    }

    /// A file's text with `--set` arguments appended from byte `sets` on:
    /// a problem there points at its argument, not at a line past the end
    /// of the file.
    pub fn with_sets(name: impl Into<String>, text: impl Into<Arc<str>>, sets: usize) -> Self {
        let source = Source::new(name, text);
        let sets = (sets <= source.text.len()).then_some(sets);
        Source { sets, ..source }
    }

    /// The `--set` arguments as diagnostics show them.
    fn named_sets(&self, from: usize) -> NamedSource<Arc<str>> {
        self.shown_sets
            .get_or_init(|| {
                let arguments = Source::new(SET_ARGUMENTS, &self.text[from..]);
                arguments.make_named()
            })
            .clone()
    }

    /// The text as a diagnostic shows it: a control character (other than
    /// a newline, a tab or the carriage return of a CRLF) becomes a
    /// character of the same length in bytes, so that spans still fit and
    /// nothing in the file can drive the reader's terminal.
    fn named(&self) -> NamedSource<Arc<str>> {
        self.shown.get_or_init(|| self.make_named()).clone()
    }

    fn make_named(&self) -> NamedSource<Arc<str>> {
        let mut shown = String::with_capacity(self.text.len());
        let mut chars = self.text.chars().peekable();
        while let Some(c) = chars.next() {
            let keep = !c.is_control()
                || matches!(c, '\n' | '\t')
                || (c == '\r' && chars.peek() == Some(&'\n'));
            if keep {
                shown.push(c);
            } else {
                // One byte for a C0 control or DEL, two for a C1 control.
                shown.push_str(if c.len_utf8() == 1 { "?" } else { "\u{bf}" });
            }
        }
        NamedSource::new(visible(&self.name), Arc::from(shown)).with_language("toml")
    }
}

/// A text with its control characters (other than newlines and tabs)
/// written as escapes (`\u{1b}`), for messages that quote the user's text.
pub fn visible(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if c.is_control() && !matches!(c, '\n' | '\t') {
            out.push_str(&c.escape_unicode().to_string());
        } else {
            out.push(c);
        }
    }
    out
}

/// A text on one line: every control character, line breaks too, written
/// as an escape (`\n`, `\u{1b}`), for a value quoted where a line break
/// would start a line the tool did not write (a broker's URL).
pub fn one_line(text: &str) -> String {
    text.chars()
        .map(|c| match c.is_control() {
            true => c.escape_debug().to_string(),
            false => c.to_string(),
        })
        .collect()
}

/// One located problem: a message, a labelled span, and a help text.
#[derive(Debug, thiserror::Error, Diagnostic)]
#[error("{message}")]
pub struct Problem {
    pub message: String,
    /// The text the problem is in (the file, or the `--set` arguments).
    src: NamedSource<Arc<str>>,
    /// What the diagnostic quotes of it: the text itself, or a window
    /// of a line too long to quote whole.
    #[source_code]
    shown: Shown,
    /// Where the problem is in `src`.
    span: Option<SourceSpan>,
    /// Where the label goes in `shown`.
    #[label("{label}")]
    shown_span: Option<SourceSpan>,
    label: String,
    #[help]
    pub help: Option<String>,
    /// The scenario file, when the span is in a `--set` argument (`src` is
    /// then the arguments, not the file).
    set_in: Option<String>,
}

impl Problem {
    /// Where in the file the problem is (0 for the file as a whole).
    pub fn offset(&self) -> usize {
        self.span.map_or(0, |s| s.offset())
    }

    /// A problem at `span` of `source`. An empty span at offset 0 (what the
    /// TOML parser gives a missing table) is shown without a label.
    pub fn new(
        source: &Source,
        span: Option<Range<usize>>,
        message: impl Into<String>,
        label: impl Into<String>,
    ) -> Self {
        let span = span
            .filter(|r| !(r.start == 0 && r.end == 0))
            .map(|r| clamp(r, source.text.len()));
        let (src, span, set_in) = match (source.sets, span) {
            (Some(from), Some(s)) if s.offset() >= from => (
                source.named_sets(from),
                Some(SourceSpan::from(
                    s.offset() - from..s.offset() - from + s.len(),
                )),
                Some(source.name.clone()),
            ),
            _ => (source.named(), span, None),
        };
        let (shown, shown_span) = match span.and_then(|s| Excerpt::of(&src, s)) {
            Some((excerpt, at)) => (Shown::Excerpt(excerpt), Some(at)),
            None => (Shown::Whole(src.clone()), span),
        };
        Problem {
            message: quoted(&visible(&message.into())),
            src,
            shown,
            span,
            shown_span,
            label: quoted(&visible(&label.into())),
            help: None,
            set_in,
        }
    }

    pub fn with_help(mut self, help: impl Into<String>) -> Self {
        let help = quoted(&visible(&help.into()));
        self.help = if help.is_empty() { None } else { Some(help) };
        self
    }

    /// Whether the problem is in a `--set` argument (its span then counts
    /// from the first argument's line).
    pub fn in_sets(&self) -> bool {
        self.set_in.is_some()
    }

    pub fn span(&self) -> Option<Range<usize>> {
        self.span.map(|s| s.offset()..s.offset() + s.len())
    }

    /// 1-based line and column of the span's start, if it has one.
    pub fn line_column(&self, text: &str) -> Option<(usize, usize)> {
        Some(position(text, self.span?.offset()))
    }
}

/// The 1-based line and column (in characters) of byte `offset` of `text`.
fn position(text: &str, offset: usize) -> (usize, usize) {
    let before = &text.as_bytes()[..offset.min(text.len())];
    let line = before.iter().filter(|&&b| b == b'\n').count() + 1;
    let line_start = before
        .iter()
        .rposition(|&b| b == b'\n')
        .map_or(0, |p| p + 1);
    let column = String::from_utf8_lossy(&before[line_start..])
        .chars()
        .count()
        + 1;
    (line, column)
}

/// A problem as data: the file, where in it (1-based lines and columns,
/// columns in characters; absent for a problem about the file as a whole),
/// what it says, and its rendered text. JSON, JUnit and CI annotations
/// carry it.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Located {
    pub file: String,
    pub line: Option<usize>,
    pub column: Option<usize>,
    pub end_line: Option<usize>,
    pub end_column: Option<usize>,
    pub message: String,
    pub label: Option<String>,
    pub help: Option<String>,
    /// The colour-free diagnostic, as the terminal shows it.
    pub text: String,
}

impl Problem {
    /// The problem as data (see [`Located`]).
    pub fn located(&self) -> Located {
        let text: &str = self.src.inner();
        let start = self.line_column(text);
        // The end is the position of the span's last character.
        let end = self
            .span
            .map(|s| position(text, s.offset() + s.len().saturating_sub(1)));
        let located = Located {
            file: self.src.name().to_string(),
            line: start.map(|p| p.0),
            column: start.map(|p| p.1),
            end_line: end.map(|p| p.0),
            end_column: end.map(|p| p.1),
            message: self.message.clone(),
            label: (!self.label.is_empty() && self.span.is_some()).then(|| self.label.clone()),
            help: self.help.clone(),
            text: render(self, false),
        };
        // A problem in a `--set` argument is about the file as a whole (no
        // line of it is wrong), and says which argument.
        match (&self.set_in, start) {
            (Some(file), Some((argument, _))) => Located {
                file: visible(file),
                line: None,
                column: None,
                end_line: None,
                end_column: None,
                message: format!("{} (--set argument {argument})", self.message),
                ..located
            },
            _ => located,
        }
    }
}

/// The longest line of a message, a label or a help text, in characters
/// (the tool's own sentences are well under it; a value quoted from the
/// file can be longer): past it, the line is cut with an ellipsis and
/// its length.
pub const MAX_MESSAGE_LINE: usize = 2_000;

/// A text whose lines are at most [`MAX_MESSAGE_LINE`] characters: a
/// longer line keeps its start, then `… (N characters in all)`.
fn quoted(text: &str) -> String {
    let line = |line: &str| match line.chars().count() {
        n if n <= MAX_MESSAGE_LINE => line.to_string(),
        n => format!(
            "{}… ({n} characters in all)",
            line.chars().take(excerpt::WINDOW).collect::<String>()
        ),
    };
    text.split('\n').map(line).collect::<Vec<_>>().join("\n")
}

fn clamp(r: Range<usize>, len: usize) -> SourceSpan {
    let start = r.start.min(len);
    let end = r.end.clamp(start, len);
    SourceSpan::from(start..end)
}

/// Renders a diagnostic at a fixed width, with or without colour.
pub fn render(diagnostic: &dyn Diagnostic, color: bool) -> String {
    let theme = if color {
        GraphicalTheme::unicode()
    } else {
        GraphicalTheme::unicode_nocolor()
    };
    let handler = GraphicalReportHandler::new_themed(theme)
        .with_width(100)
        .with_links(false);
    let mut out = String::new();
    if handler.render_report(&mut out, diagnostic).is_err() {
        out = format!("{diagnostic}\n");
    }
    out
}

/// The closest candidate to a misspelt word, if one is close enough.
pub fn did_you_mean<'a>(
    word: &str,
    candidates: impl IntoIterator<Item = &'a str>,
) -> Option<&'a str> {
    let mut best: Option<(&str, f64)> = None;
    for c in candidates {
        let score = strsim::jaro_winkler(&word.to_lowercase(), &c.to_lowercase());
        if score >= 0.75 && best.is_none_or(|(_, s)| score > s) {
            best = Some((c, score));
        }
    }
    best.map(|(c, _)| c)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nothing_from_the_file_reaches_the_terminal_as_a_control_character() {
        let source = Source::new(
            "a\u{1b}b.toml",
            "id = 1\n# \u{1b}]0;title\u{7}\r\nx = \u{9b}2J\n",
        );
        let problem = Problem::new(&source, Some(9..10), "bad \u{1b}[31m", "here \u{7}")
            .with_help("help \u{1b}");
        let text = render(&problem, false);
        assert!(
            !text.chars().any(|c| c.is_control() && c != '\n'),
            "{text:?}"
        );
        assert!(text.contains("bad \\u{1b}[31m"), "{text}");
        assert!(text.contains("# ?]0;title?"), "{text}");
        assert!(text.contains("x = \u{bf}2J"), "{text}");
        assert_eq!(visible("tab\tand\nline"), "tab\tand\nline");
        assert_eq!(one_line("a\nb\u{1b}[2J\tc"), "a\\nb\\u{1b}[2J\\tc");
    }

    #[test]
    fn a_long_line_is_quoted_as_a_window_around_the_problem_at_its_column() {
        // 1,000 characters before the problem (two bytes each), then the
        // problem, then 1,000 more.
        let text = format!(
            "a = 1\nb = \"{}BAD{}\"\nc = 2\n",
            "é".repeat(995),
            "z".repeat(1000)
        );
        let at = text.find("BAD").unwrap();
        let source = Source::new("long.toml", text.clone());
        let problem = Problem::new(&source, Some(at..at + 3), "bad value", "this");
        let shown = render(&problem, false);
        // The file's line and column (in characters), not the window's.
        assert!(shown.contains("[long.toml:2:1001]"), "{shown}");
        let line = shown.lines().find(|l| l.contains("BAD")).unwrap();
        assert!(line.contains("…éé"), "{line}");
        assert!(line.ends_with("zz…"), "{line}");
        assert!(line.chars().count() < MAX_QUOTED_LINE, "{line}");
        // The label is under the problem.
        let mark = shown.lines().find(|l| l.contains("┬")).unwrap();
        let column = |l: &str, s: &str| l[..l.find(s).unwrap()].chars().count();
        assert_eq!(column(mark, "─"), column(line, "BAD"), "{shown}");
        // The lines either side are short, but not shown: the window is
        // of one line.
        assert!(!shown.contains("a = 1"), "{shown}");
        // Where it is stays the file's own.
        let located = problem.located();
        assert_eq!((located.line, located.column), (Some(2), Some(1001)));
        assert_eq!(located.end_column, Some(1003));
        // Short lines are quoted whole, with their neighbours.
        let short = Source::new("short.toml", "a = 1\nb = BAD\nc = 2\n");
        let shown = render(&Problem::new(&short, Some(10..13), "bad", "this"), false);
        assert!(
            shown.contains("a = 1") && shown.contains("c = 2"),
            "{shown}"
        );
    }

    #[test]
    fn a_long_line_of_a_message_label_or_help_is_cut() {
        let source = Source::new("f.toml", "x = 1\n");
        let long = "k".repeat(10_000);
        let problem = Problem::new(
            &source,
            Some(0..1),
            format!("unknown key `{long}`"),
            long.clone(),
        )
        .with_help(format!("first line\n{long}"));
        assert!(
            problem.message.ends_with("… (10014 characters in all)"),
            "{}",
            problem.message
        );
        assert!(problem.message.chars().count() < MAX_MESSAGE_LINE);
        let help = problem.help.clone().unwrap();
        assert!(help.starts_with("first line\n"), "{help}");
        assert!(help.ends_with("… (10000 characters in all)"), "{help}");
        assert!(render(&problem, false).len() < 4_000);
    }
}
