//! Text that honours a format's width and alignment (`{:>10}`) for a
//! value written in pieces (a name, a time): written straight through
//! when no width is asked for, else into a string that is then padded;
//! and fixed-width tables, each column as wide as its widest cell.

use std::fmt::{self, Write};

/// Writes what `write` writes to `f`, padded and aligned as `f` asks.
pub fn pad(
    f: &mut fmt::Formatter<'_>,
    write: impl Fn(&mut dyn Write) -> fmt::Result,
) -> fmt::Result {
    if f.width().is_none() && f.precision().is_none() {
        return write(f);
    }
    let mut text = String::new();
    write(&mut text)?;
    f.pad(&text)
}
/// A table with a header row, columns padded to their widest cell and
/// separated by two spaces, no trailing spaces.
pub fn table(header: &[String], rows: &[Vec<String>]) -> String {
    let mut widths: Vec<usize> = header.iter().map(|h| h.chars().count()).collect();
    for r in rows {
        for (w, c) in widths.iter_mut().zip(r) {
            *w = (*w).max(c.chars().count());
        }
    }
    let mut out = String::new();
    for r in std::iter::once(header).chain(rows.iter().map(Vec::as_slice)) {
        let line: Vec<String> = r
            .iter()
            .zip(&widths)
            .map(|(c, w)| format!("{c:<w$}"))
            .collect();
        out.push_str(line.join("  ").trim_end());
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use std::fmt;

    struct Text(&'static str);

    impl fmt::Display for Text {
        fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            super::pad(f, |out| {
                // In pieces, as the callers write.
                for piece in self.0.split_inclusive('-') {
                    out.write_str(piece)?;
                }
                Ok(())
            })
        }
    }

    /// Short and long texts, multi-byte ones,
    /// every alignment: the same as padding the whole string.
    #[test]
    fn pads_as_a_string_would() {
        let long: &'static str = "x-".repeat(50).leak();
        for text in ["", "a-b", "é-ü-ß", long] {
            let t = Text(text);
            assert_eq!(format!("{t}"), text);
            assert_eq!(format!("{t:>10}|"), format!("{text:>10}|"));
            assert_eq!(format!("{t:<12}|"), format!("{text:<12}|"));
            assert_eq!(format!("{t:^9}|"), format!("{text:^9}|"));
            assert_eq!(format!("{t:.2}|"), format!("{text:.2}|"));
        }
    }
}
