//! The file as the lab's panel changed it (`/NAME.toml?...`): each set
//! value written in place of the file's, everything else as it was.

/// The file's text with these sets written in place of the values they
/// change, everything else (comments, layout) as it was; a swept path is
/// fixed to its one value. Only values the file writes can be changed
/// (every control is one); another path is an error.
pub fn changed_file(text: &str, sets: &[(String, String)]) -> Result<String, String> {
    use toml::de::{DeTable, DeValue};
    let doc = DeTable::parse(text).map_err(|e| e.to_string())?;
    let mut edits: Vec<(std::ops::Range<usize>, String)> = Vec::new();
    for (path, value) in sets {
        let sweep = doc.get_ref().iter().find(|(k, _)| k.get_ref() == "sweep");
        let axis = sweep.and_then(|(_, s)| match s.get_ref() {
            DeValue::Table(t) => t.iter().find(|(k, _)| k.get_ref() == path.as_str()),
            _ => None,
        });
        let value = toml_value(value);
        let (span, written) = match axis {
            Some((_, list)) => (list.span(), format!("[{value}]")),
            None => (find(doc.get_ref(), path)?, value),
        };
        edits.push((span, written));
    }
    edits.sort_by_key(|(span, _)| std::cmp::Reverse(span.start));
    let mut out = text.to_string();
    for (span, written) in edits {
        out.replace_range(span, &written);
    }
    Ok(out)
}

/// A `--set` value as the changed file writes it: a TOML value as TOML
/// writes it (on one line, without a comment), anything else as a TOML
/// string, as `--set` reads it. Whatever a query holds, it is one value in
/// place of one: it never adds a key or ends a line.
fn toml_value(value: &str) -> String {
    let one = format!("x = {value}")
        .parse::<toml::Table>()
        .ok()
        .filter(|t| t.len() == 1 && !value.contains(['\n', '\r']))
        .and_then(|t| t.get("x").map(toml::Value::to_string));
    one.unwrap_or_else(|| toml::Value::String(value.to_string()).to_string())
}

/// The span of the value at a path of a parsed document.
fn find(table: &toml::de::DeTable<'_>, path: &str) -> Result<std::ops::Range<usize>, String> {
    use toml::de::DeValue;
    let mut segments = path.split('.');
    let first = segments.next().unwrap_or("");
    let mut value = table
        .iter()
        .find(|(k, _)| k.get_ref() == first)
        .map(|(_, v)| v)
        .ok_or_else(|| format!("the file has no `{first}`"))?;
    for segment in segments {
        value = match value.get_ref() {
            DeValue::Table(t) => t
                .iter()
                .find(|(k, _)| k.get_ref() == segment)
                .map(|(_, v)| v)
                .ok_or_else(|| format!("the file has no `{path}`"))?,
            DeValue::Array(items) => segment
                .parse::<usize>()
                .ok()
                .and_then(|n| n.checked_sub(1))
                .and_then(|k| items.get(k))
                .ok_or_else(|| format!("the file has no `{path}`"))?,
            _ => return Err(format!("`{path}` goes through a value")),
        };
    }
    match value.get_ref() {
        DeValue::Table(_) | DeValue::Array(_) => Err(format!("`{path}` is not a single value")),
        _ => Ok(value.span()),
    }
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
    fn the_changed_file_keeps_everything_but_the_changed_values() {
        let text = "# a comment\n[delivery]\nmax_receives = 2   # the budget\nretry_interval = \"10s\"\n\n[[message]]\nid = \"a\"\nfaults = [{ fail = { first = 2 } }]\n\n[sweep]\n\"dedup.enabled\" = [true, false]\n";
        let changed = changed_file(
            text,
            &sets(&[
                ("delivery.retry_interval", "\"1m\""),
                ("message.1.faults.1.fail.first", "3"),
                ("dedup.enabled", "false"),
            ]),
        )
        .unwrap();
        assert_eq!(
            changed,
            "# a comment\n[delivery]\nmax_receives = 2   # the budget\nretry_interval = \"1m\"\n\n[[message]]\nid = \"a\"\nfaults = [{ fail = { first = 3 } }]\n\n[sweep]\n\"dedup.enabled\" = [false]\n"
        );
        assert!(changed_file(text, &sets(&[("delivery.nope", "1")])).is_err());
        // A value with a line break or a comment stays one value: a query
        // cannot add keys to the file.
        let forged = changed_file(
            text,
            &sets(&[(
                "delivery.retry_interval",
                "\"1m\"\n[limits]\nmax_events = 1",
            )]),
        )
        .unwrap();
        let parsed = forged.parse::<toml::Table>().unwrap();
        assert_eq!(
            parsed["delivery"]["retry_interval"].as_str(),
            Some("\"1m\"\n[limits]\nmax_events = 1")
        );
        assert!(parsed.get("limits").is_none(), "{forged}");
        let commented =
            changed_file(text, &sets(&[("message.1.faults.1.fail.first", "3 # x")])).unwrap();
        assert!(
            commented.contains("faults = [{ fail = { first = 3 } }]"),
            "{commented}"
        );
        assert!(changed_file(text, &sets(&[("message.2.id", "1")])).is_err());
    }
}
