//! Tests of the templates module.

use super::filters::*;
use super::*;

#[test]
fn markdown_renders_and_never_passes_html_through() {
    let out = markdown(Value::from(
        "Lesson: `uncertain` **committed**.\n\n<script>alert(1)</script>\n\nand <b>bold</b>",
    ));
    let html = out.as_str().unwrap();
    assert!(html.contains("<code>uncertain</code>"));
    assert!(html.contains("<strong>committed</strong>"));
    assert!(!html.contains("<script"), "{html}");
    assert!(!html.contains("<b>"), "{html}");
    assert!(html.contains("&lt;script&gt;"));
}

#[test]
fn one_paragraph_renders_inline() {
    let html = |md: &str| {
        inline_markdown(Value::from(md))
            .as_str()
            .unwrap()
            .to_string()
    };
    assert_eq!(
        html("How many effects does `uncertain` have at 10s?"),
        "How many effects does <code>uncertain</code> have at 10s?"
    );
    assert_eq!(html("a <b>x</b>"), "a &lt;b&gt;x&lt;/b&gt;");
    assert_eq!(html("one\n\ntwo"), "<p>one</p>\n<p>two</p>\n");
}

#[test]
fn links_keep_only_safe_targets() {
    let html = |md: &str| markdown(Value::from(md)).as_str().unwrap().to_string();
    for unsafe_link in [
        "[x](javascript:alert(1))",
        "[x](JavaScript:alert(1))",
        "[x](java\tscript:alert(1))",
        "[x](data:text/html,hi)",
        "[x](vbscript:x)",
        "![x](javascript:alert(1))",
        "<javascript:alert(1)>",
    ] {
        let out = html(unsafe_link);
        let targets: Vec<&str> = [" href=\"", " src=\""]
            .iter()
            .flat_map(|attribute| out.split(attribute).skip(1))
            .filter_map(|rest| rest.split('"').next())
            .collect();
        assert!(
            targets.iter().all(|t| t.is_empty() || !t.contains(':')),
            "{unsafe_link}: {out}"
        );
    }
    for safe in [
        (
            "[x](https://example.com/a?b#c)",
            "https://example.com/a?b#c",
        ),
        ("[x](http://example.com)", "http://example.com"),
        ("[x](mailto:ops@example.com)", "mailto:ops@example.com"),
        (
            "[x](docs/model.md#3-one-delivery)",
            "docs/model.md#3-one-delivery",
        ),
        ("[x](#t=40s)", "#t=40s"),
        ("[x](a/b:c)", "a/b:c"),
    ] {
        assert!(
            html(safe.0).contains(&format!("href=\"{}\"", safe.1)),
            "{}",
            html(safe.0)
        );
    }
}

#[test]
fn code_spans_hold_any_text_on_one_line() {
    assert_eq!(code(Value::from("poison")), "`poison`");
    assert_eq!(code(Value::from("a|b")), "`a\\|b`");
    assert_eq!(code(Value::from("a`b")), "``a`b``");
    assert_eq!(code(Value::from("`x`")), "`` `x` ``");
    assert_eq!(code(Value::from("one\ntwo")), "`one two`");
    assert_eq!(code(Value::from("a\\b")), "`a\\b`");
    assert_eq!(code(Value::from(())), "-");
}

#[test]
fn a_mermaid_label_cannot_end_itself_or_its_fence() {
    assert_eq!(mermaid(Value::from("bank-a_1")), "bank-a_1");
    assert_eq!(mermaid(Value::from("a\"]; b")), "a#34;#93;#59; b");
    assert_eq!(mermaid(Value::from("```")), "#96;#96;#96;");
    assert_eq!(mermaid(Value::from("é")), "#233;");
    assert_eq!(mermaid(Value::from(())), "-");
}

#[test]
fn cells_and_durations() {
    assert_eq!(cell(Value::from("a | b\nc")), "a \\| b c");
    assert_eq!(cell(Value::from(())), "-");
    assert_eq!(duration(Value::from(90_000)).unwrap(), "1m30s");
    assert_eq!(duration(Value::from(())).unwrap(), "-");
    assert!(duration(Value::from("soon")).is_err());
}

#[test]
fn every_built_in_template_compiles() {
    assert!(Templates::load(None).is_ok());
}

mod suggest {
    use super::*;
    use minijinja::context;
    use minijinja::value::Serde;

    #[test]
    fn an_undefined_key_suggests_the_closest() {
        let doc = serde_json::json!({ "totals": { "effects": 2, "acked": 1 } });
        let ctx = context! { report => Value::from(Serde(&doc)) };
        assert_eq!(
            suggest(&ctx, "report.totals.efects").as_deref(),
            Some("did you mean `report.totals.effects`? `report.totals` has: effects, acked")
        );
        assert_eq!(suggest(&ctx, "m.id"), None);
        assert_eq!(suggest(&ctx, "report.totals.efects + 1"), None);
    }
}

/// What the `text` filter makes of `s`.
fn inert(s: &str) -> String {
    text(Value::from(s))
}

#[test]
fn text_from_a_file_is_inert_markdown() {
    // Raw HTML outside code is shown as text; code keeps what it holds.
    assert_eq!(
        inert("a <script>x</script> and `a < b` <b>bold</b>"),
        "a &lt;script>x&lt;/script> and `a < b` &lt;b>bold&lt;/b>"
    );
    assert_eq!(
        inert("```\n<i>code</i>\n```\n<i>not</i>"),
        "```\n<i>code</i>\n```\n&lt;i>not&lt;/i>"
    );
    // A link or image to a script is no link; safe ones stay.
    assert_eq!(
        inert("see [x](javascript:alert(1))"),
        "see \\[x](javascript:alert(1))"
    );
    assert_eq!(inert("![i](JavaScript:x)"), "!\\[i](JavaScript:x)");
    assert_eq!(inert("<javascript:alert(1)>"), "&lt;javascript:alert(1)>");
    assert_eq!(
        inert("[r][1]\n\n[1]: data:text/html,x"),
        "\\[r][1]\n\n[1]: data:text/html,x"
    );
    assert_eq!(
        inert("[docs](https://example.com) *kept*"),
        "[docs](https://example.com) *kept*"
    );
    // What the renderer of HTML reports makes of the result has no tag
    // and no script link.
    for attack in [
        "<script>alert(1)</script>",
        "<img src=x onerror=alert(1)>",
        "[x](javascript:alert(1))",
        "<javascript:alert(1)>",
        "x <!-- comment --> y",
    ] {
        let html = markdown(Value::from(inert(attack)));
        let html = html.as_str().unwrap();
        assert!(
            !html.contains("<script")
                && !html.contains("<img")
                && !html.contains("href=\"javascript"),
            "{attack}: {html}"
        );
    }
}

#[test]
fn a_cell_is_one_cell_and_no_link() {
    assert_eq!(cell(Value::from("a|b|c")), "a\\|b\\|c");
    assert_eq!(
        cell(Value::from("[x](javascript:y)")),
        "\\[x\\](javascript:y)"
    );
    assert_eq!(cell(Value::from("<b>x</b>")), "&lt;b&gt;x&lt;/b&gt;");
    // A backtick in an id cannot end its code span.
    assert_eq!(code(Value::from("a`<script>`|c")), "``a`<script>`\\|c``");
}
