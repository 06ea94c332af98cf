//! What a diagnostic quotes of a file: the text itself, or, where a line
//! near the problem is too long to quote whole, a window of the problem's
//! line around its column, numbered with the file's own line and column.
//! Deciding costs a bounded look around the problem (a file may give a
//! million problems on one 16 MB line); the line's number and the window's
//! column are counted only when a diagnostic is rendered.

use std::sync::{Arc, OnceLock};

use miette::{NamedSource, SourceCode, SourceSpan, SpanContents};

/// The longest line of a file a diagnostic quotes whole, in bytes: a
/// longer line (the problem's or one either side of it, as a diagnostic
/// shows them) is shown as a window around the problem, with an ellipsis
/// (`…`) where it goes on, so that what a problem prints stays within a
/// few kilobytes whatever the file holds (a 6 MB line printed 27 MB).
pub const MAX_QUOTED_LINE: usize = 240;

/// Characters of a long line shown before the problem's column.
const WINDOW_BEFORE: usize = 60;

/// Characters of a long line shown in all (also what a cut message line
/// keeps).
pub(super) const WINDOW: usize = 180;

/// What a diagnostic quotes of the text a problem is in.
#[derive(Debug)]
pub(super) enum Shown {
    Whole(NamedSource<Arc<str>>),
    Excerpt(Excerpt),
}

impl SourceCode for Shown {
    fn read_span<'a>(
        &'a self,
        span: &SourceSpan,
        before: usize,
        after: usize,
    ) -> Result<Box<dyn SpanContents<'a> + 'a>, miette::MietteError> {
        match self {
            Shown::Whole(text) => text.read_span(span, before, after),
            Shown::Excerpt(excerpt) => excerpt.read_span(span, before + after > 0),
        }
    }
}

/// A window of one line, with its ellipses.
#[derive(Debug)]
pub(super) struct Excerpt {
    src: NamedSource<Arc<str>>,
    /// The window as shown.
    text: String,
    /// Where the window's first character of the file is, in the file.
    from: usize,
    /// The characters shown before it (1 for a leading ellipsis).
    lead: usize,
    /// The line's 0-based number and the window's first column, counted
    /// when first rendered.
    place: OnceLock<(usize, usize)>,
}

/// The largest character boundary of `text` at or before `at`.
fn boundary(text: &str, at: usize) -> usize {
    let mut at = at.min(text.len());
    while !text.is_char_boundary(at) {
        at -= 1;
    }
    at
}

/// The line of `text` holding byte `at`, as a byte range without its line
/// break, if it is at most `max` bytes long (found looking at most `max`
/// bytes either way).
fn short_line(text: &[u8], at: usize, max: usize) -> Option<(usize, usize)> {
    let back = &text[at.saturating_sub(max + 1)..at];
    let start = match back.iter().rposition(|&b| b == b'\n') {
        Some(p) => at - back.len() + p + 1,
        None if at <= max => 0,
        None => return None,
    };
    let ahead = &text[at..(at + max + 1).min(text.len())];
    let end = match ahead.iter().position(|&b| b == b'\n') {
        Some(p) => at + p,
        None if at + ahead.len() == text.len() => text.len(),
        None => return None,
    };
    (end - start <= max).then_some((start, end))
}

impl Excerpt {
    /// The excerpt of `src` for a problem at `span`, and where its label
    /// goes in it; none when the problem's line and the lines either side
    /// of it are at most [`MAX_QUOTED_LINE`] bytes (quoted whole).
    pub(super) fn of(
        src: &NamedSource<Arc<str>>,
        span: SourceSpan,
    ) -> Option<(Excerpt, SourceSpan)> {
        let text: &str = src.inner();
        let bytes = text.as_bytes();
        let start = boundary(text, span.offset());
        let short = |at: usize| short_line(bytes, at, MAX_QUOTED_LINE);
        if let Some((line_start, line_end)) = short(start) {
            let before = line_start == 0 || short(line_start - 1).is_some();
            let after = line_end == text.len() || short(line_end + 1).is_some();
            if before && after {
                return None;
            }
        }
        // The window: up to WINDOW_BEFORE characters of the line before
        // the problem, WINDOW in all.
        let from = text[..start]
            .char_indices()
            .rev()
            .take_while(|&(_, c)| c != '\n')
            .take(WINDOW_BEFORE)
            .last()
            .map_or(start, |(at, _)| at);
        let cut_before = from > 0 && bytes[from - 1] != b'\n';
        let chars: Vec<(usize, char)> = text[from..]
            .char_indices()
            .take_while(|&(_, c)| c != '\n')
            .take(WINDOW + 1)
            .collect();
        let cut_after = chars.len() > WINDOW;
        let mut shown = String::new();
        if cut_before {
            shown.push('…');
        }
        let lead = shown.chars().count();
        let span_end = boundary(text, span.offset() + span.len());
        let (mut label_start, mut label_end) = (None, None);
        for &(at, c) in chars.iter().take(WINDOW) {
            if label_start.is_none() && from + at >= start {
                label_start = Some(shown.len());
            }
            if label_end.is_none() && from + at >= span_end {
                label_end = Some(shown.len());
            }
            shown.push(c);
        }
        // A span at the end of the line is labelled on a space after it,
        // as a diagnostic labels the end of a short line.
        let label_start = label_start.unwrap_or_else(|| {
            if !cut_after {
                shown.push(' ');
            }
            shown.len() - 1
        });
        let label_end = label_end.unwrap_or(shown.len()).max(label_start);
        if cut_after {
            shown.push('…');
        }
        Some((
            Excerpt {
                src: src.clone(),
                text: shown,
                from,
                lead,
                place: OnceLock::new(),
            },
            SourceSpan::from(label_start..label_end),
        ))
    }

    /// The line's number and the window's first column (0-based, in
    /// characters): a count over the file, made once, when rendered.
    fn place(&self) -> (usize, usize) {
        *self.place.get_or_init(|| {
            let before = &self.src.inner()[..self.from];
            let line_start = before.rfind('\n').map_or(0, |p| p + 1);
            let line = before.bytes().filter(|&b| b == b'\n').count();
            (line, before[line_start..].chars().count())
        })
    }

    /// The whole window, whatever part is asked for (it is one line). A
    /// label's own position (asked for with no lines of context, for the
    /// `[file:line:column]` heading) is given in the file's columns; the
    /// window's lines start at column 0.
    fn read_span<'a>(
        &'a self,
        span: &SourceSpan,
        context: bool,
    ) -> Result<Box<dyn SpanContents<'a> + 'a>, miette::MietteError> {
        let (line, first) = self.place();
        let column = match context {
            true => 0,
            false => {
                let at = span.offset().min(self.text.len());
                let shown = self.text.get(..at).unwrap_or(&self.text).chars().count();
                first + shown.saturating_sub(self.lead)
            }
        };
        Ok(Box::new(miette::MietteSpanContents::new_named(
            self.src.name().to_string(),
            self.text.as_bytes(),
            SourceSpan::from(0..self.text.len()),
            line,
            column,
            1,
        )))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_short_line_is_found_looking_no_further_than_its_bound() {
        let text = b"ab\ncdef\ng";
        assert_eq!(short_line(text, 4, 4), Some((3, 7)));
        assert_eq!(short_line(text, 4, 3), None);
        assert_eq!(short_line(text, 0, 4), Some((0, 2)));
        assert_eq!(short_line(text, 9, 4), Some((8, 9)));
        // A line of 10 MB is long, whichever byte of it is asked about.
        let long = vec![b'x'; 10_000_000];
        assert_eq!(short_line(&long, 5_000_000, MAX_QUOTED_LINE), None);
    }

    /// Deciding on an excerpt looks around the problem only: the line's
    /// number (a count over the file) waits until it is rendered, so a
    /// million problems on one long line cost a million small looks, not
    /// a million counts over the file.
    #[test]
    fn the_lines_number_is_counted_only_when_rendered() {
        let text = format!("a = 1\nb = 2\nc = \"{}\"\n", "x".repeat(100_000));
        let src = NamedSource::new("f.toml", Arc::<str>::from(text.as_str()));
        let at = text.find("xxx").unwrap() + 50_000;
        let (excerpt, label) = Excerpt::of(&src, SourceSpan::from(at..at + 1)).unwrap();
        assert!(excerpt.place.get().is_none());
        assert_eq!(excerpt.text.chars().count(), 1 + WINDOW + 1);
        assert_eq!(&excerpt.text[label.offset()..label.offset() + 1], "x");
        let contents = excerpt.read_span(&label, false).unwrap();
        // Line 3 (0-based 2), at the file's own column.
        assert_eq!((contents.line(), contents.column()), (2, at - 12));
        assert!(excerpt.place.get().is_some());
        // Short lines are quoted whole.
        let short = NamedSource::new("g.toml", Arc::<str>::from("a = 1\nb = 2\n"));
        assert!(Excerpt::of(&short, SourceSpan::from(6..7)).is_none());
    }
}
