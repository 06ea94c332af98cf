//! Located problems and their rendering. Every message the tool prints
//! about a scenario file (invalid input, a failed expectation, a limit)
//! is a [`Problem`] pointing into the file's text.

use miette::{Diagnostic, GraphicalReportHandler, GraphicalTheme, NamedSource, SourceSpan};
use std::ops::Range;
use std::sync::Arc;

/// The text of one scenario file, shared by all its problems.
#[derive(Debug, Clone)]
pub struct Source {
    pub name: String,
    pub text: Arc<str>,
}

impl Source {
    pub fn new(name: impl Into<String>, text: impl Into<Arc<str>>) -> Self {
        Source {
            name: name.into(),
            text: text.into(),
        }
    }

    fn named(&self) -> NamedSource<Arc<str>> {
        NamedSource::new(self.name.clone(), self.text.clone()).with_language("toml")
    }
}

/// One located problem: a message, a labelled span, and a help text.
#[derive(Debug, thiserror::Error, Diagnostic)]
#[error("{message}")]
pub struct Problem {
    pub message: String,
    #[source_code]
    src: NamedSource<Arc<str>>,
    #[label("{label}")]
    span: Option<SourceSpan>,
    label: String,
    #[help]
    pub help: Option<String>,
}

impl Problem {
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
        Problem {
            message: message.into(),
            src: source.named(),
            span,
            label: label.into(),
            help: None,
        }
    }

    pub fn with_help(mut self, help: impl Into<String>) -> Self {
        let help = help.into();
        self.help = if help.is_empty() { None } else { Some(help) };
        self
    }

    pub fn span(&self) -> Option<Range<usize>> {
        self.span.map(|s| s.offset()..s.offset() + s.len())
    }

    /// 1-based line and column of the span's start, if it has one.
    pub fn line_column(&self, text: &str) -> Option<(usize, usize)> {
        let start = self.span?.offset().min(text.len());
        let before = &text.as_bytes()[..start];
        let line = before.iter().filter(|&&b| b == b'\n').count() + 1;
        let line_start = before
            .iter()
            .rposition(|&b| b == b'\n')
            .map_or(0, |p| p + 1);
        let column = String::from_utf8_lossy(&before[line_start..])
            .chars()
            .count()
            + 1;
        Some((line, column))
    }
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
