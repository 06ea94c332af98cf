//! The filters templates use: durations, and text from a scenario file
//! made safe for Markdown (`text`, `cell`, `code`) and for HTML
//! (`markdown`). A scenario file is outside input: nothing it holds may
//! become markup, script or a link to one.

use minijinja::{Error, ErrorKind, Value};

/// `{{ ms | duration }}`: milliseconds as the file format writes them
/// ("1m30s"); none stays "-".
pub(super) fn duration(v: Value) -> Result<String, Error> {
    if v.is_none() || v.is_undefined() {
        return Ok("-".to_string());
    }
    let ms = u64::try_from(v.clone()).map_err(|_| {
        Error::new(
            ErrorKind::InvalidOperation,
            format!("duration expects milliseconds, got {v}"),
        )
    })?;
    Ok(crate::duration::format(ms))
}

/// `{{ text | text }}`: a text from the file (a summary, a description, a
/// question) in Markdown, kept Markdown but made inert: raw HTML is shown
/// as text (`<script>` stays visible and runs nowhere, as in the HTML
/// report), and a link or image to anything but http, https or mailto is
/// shown as the text it was written as. Code spans and emphasis stay.
pub(super) fn text(v: Value) -> String {
    let s = match v.as_str() {
        Some(s) => s.to_string(),
        None => v.to_string(),
    };
    inert_markdown(&s)
}

/// See [`text`]: the source of `s` with each raw HTML's `<` written as
/// `&lt;`, and each unsafe link's opening escaped so that it is no link.
fn inert_markdown(s: &str) -> String {
    use pulldown_cmark::{Event, Options, Parser, Tag};
    // (position, what to put there, bytes it replaces)
    let mut edits: Vec<(usize, &str, usize)> = Vec::new();
    // Code keeps its `<` (a code span shows `&lt;` as written); every
    // other `<` is written `&lt;`, whether or not this parser reads it as
    // HTML, so that no renderer can.
    let mut code: Vec<std::ops::Range<usize>> = Vec::new();
    let mut in_code_block = false;
    let options = Options::ENABLE_TABLES | Options::ENABLE_STRIKETHROUGH;
    for (event, range) in Parser::new_ext(s, options).into_offset_iter() {
        match event {
            Event::Code(_) => code.push(range),
            Event::Start(Tag::CodeBlock(_)) => in_code_block = true,
            Event::End(pulldown_cmark::TagEnd::CodeBlock) => in_code_block = false,
            Event::Text(_) if in_code_block => code.push(range),
            Event::Start(Tag::Link { dest_url, .. } | Tag::Image { dest_url, .. })
                if safe_url(dest_url.clone()) != dest_url =>
            {
                match s[range.start..].chars().next() {
                    Some('<') => edits.push((range.start, "&lt;", 1)),
                    Some('!') => edits.push((range.start + 1, "\\", 0)),
                    _ => edits.push((range.start, "\\", 0)),
                }
            }
            _ => {}
        }
    }
    // The code ranges come in order and do not overlap: a binary search.
    for (at, _) in s.match_indices('<') {
        let next = code.partition_point(|r| r.end <= at);
        if code.get(next).is_none_or(|r| r.start > at) {
            edits.push((at, "&lt;", 1));
        }
    }
    edits.sort_by_key(|&(at, _, _)| at);
    edits.dedup_by_key(|e| e.0);
    let mut out = String::with_capacity(s.len() + edits.len() * 4);
    let mut from = 0;
    for (at, put, replaced) in edits {
        if at < from {
            continue;
        }
        out.push_str(&s[from..at]);
        out.push_str(put);
        from = at + replaced;
    }
    out.push_str(&s[from..]);
    out
}

/// `<`, `>` and `&` as HTML writes them as text.
fn html_as_text(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// `{{ text | cell }}`: a value made safe for a Markdown table cell: on
/// one line, pipes escaped, raw HTML shown as text and brackets escaped
/// (a cell is a name, never a link of its own, and a name inside a link's
/// text must not open another); none becomes "-".
pub(super) fn cell(v: Value) -> String {
    if v.is_none() || v.is_undefined() {
        return "-".to_string();
    }
    let s = match v.as_str() {
        Some(s) => s.to_string(),
        None => v.to_string(),
    };
    html_as_text(&s)
        .replace('\\', "\\\\")
        .replace('|', "\\|")
        .replace('[', "\\[")
        .replace(']', "\\]")
        .split(['\n', '\r'])
        .filter(|l| !l.trim().is_empty())
        .collect::<Vec<_>>()
        .join(" ")
}

/// `{{ value | code }}`: a value as a Markdown code span that is safe in a
/// table cell: on one line, `|` escaped, and fenced by more backticks
/// than it holds (so a backtick in an id cannot end the span and let what
/// follows be read as Markdown or HTML).
pub(super) fn code(v: Value) -> String {
    if v.is_none() || v.is_undefined() {
        return "-".to_string();
    }
    // In a GFM table, `\|` is a pipe even inside a code span; nothing else
    // is escaped there.
    let text = v
        .as_str()
        .map_or_else(|| v.to_string(), str::to_string)
        .replace('|', "\\|")
        .split(['\n', '\r'])
        .collect::<Vec<_>>()
        .join(" ");
    let longest = text.split(|c| c != '`').map(str::len).max().unwrap_or(0);
    let fence = "`".repeat(longest + 1);
    let pad = if text.starts_with('`') || text.ends_with('`') {
        " "
    } else {
        ""
    };
    format!("{fence}{pad}{text}{pad}{fence}")
}

/// `{{ name | mermaid }}`: a value made safe inside a quoted Mermaid
/// label (`n0["{{ name | mermaid }}"]`): every character but ASCII letters,
/// digits, space, `-` and `_` is written as Mermaid's entity code (`#35;`
/// for `#`), so no name can end the label, start Mermaid syntax or Markdown,
/// or close the code fence the diagram sits in; none becomes "-".
pub(super) fn mermaid(v: Value) -> String {
    if v.is_none() || v.is_undefined() {
        return "-".to_string();
    }
    let s = v.as_str().map_or_else(|| v.to_string(), str::to_string);
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        if c.is_ascii_alphanumeric() || matches!(c, ' ' | '-' | '_') {
            out.push(c);
        } else {
            out.push_str(&format!("#{};", c as u32));
        }
    }
    out
}

/// `{{ text | markdown }}`: CommonMark rendered to HTML, for descriptions in
/// HTML reports. Raw HTML in the text is shown as text, never passed
/// through, so a scenario file cannot inject markup or script.
pub(super) fn markdown(v: Value) -> Value {
    use pulldown_cmark::{Event, Options, Parser, Tag, html};
    let text = v
        .as_str()
        .map(str::to_string)
        .unwrap_or_else(|| v.to_string());
    let parser = Parser::new_ext(
        &text,
        Options::ENABLE_TABLES | Options::ENABLE_STRIKETHROUGH,
    )
    .map(|e| match e {
        Event::Html(raw) | Event::InlineHtml(raw) => Event::Text(raw),
        Event::Start(Tag::Link {
            link_type,
            dest_url,
            title,
            id,
        }) => Event::Start(Tag::Link {
            link_type,
            dest_url: safe_url(dest_url),
            title,
            id,
        }),
        Event::Start(Tag::Image {
            link_type,
            dest_url,
            title,
            id,
        }) => Event::Start(Tag::Image {
            link_type,
            dest_url: safe_url(dest_url),
            title,
            id,
        }),
        e => e,
    });
    let mut out = String::new();
    html::push_html(&mut out, parser);
    Value::from_safe_string(out)
}

/// `{{ text | inline_markdown }}`: one paragraph of CommonMark (code
/// spans, emphasis, links) rendered inside the element around it, as a
/// question's text; more than one paragraph stays as blocks.
pub(super) fn inline_markdown(v: Value) -> Value {
    let block = markdown(v);
    let html = block.as_str().unwrap_or_default();
    match html
        .strip_prefix("<p>")
        .and_then(|rest| rest.strip_suffix("</p>\n"))
    {
        Some(inner) if !inner.contains("<p>") => Value::from_safe_string(inner.to_string()),
        _ => block,
    }
}

/// Link targets a description may use: http, https, mailto, relative
/// paths and fragments. Any other scheme (`javascript:`, `data:`, ...)
/// becomes an empty link. Browsers ignore whitespace and control characters
/// inside a scheme, so they are ignored here too.
fn safe_url(url: pulldown_cmark::CowStr<'_>) -> pulldown_cmark::CowStr<'_> {
    let squeezed: String = url
        .chars()
        .filter(|c| !c.is_ascii_whitespace() && !c.is_control())
        .collect::<String>()
        .to_ascii_lowercase();
    let scheme = squeezed
        .find(':')
        .map(|i| &squeezed[..i])
        .filter(|s| !s.contains(['/', '?', '#']));
    match scheme {
        None | Some("http" | "https" | "mailto") => url,
        Some(_) => pulldown_cmark::CowStr::Borrowed(""),
    }
}
