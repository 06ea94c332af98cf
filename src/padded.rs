//! Text that honours a format's width and alignment (`{:>10}`) without
//! building a string: written into a small buffer on the stack, then
//! padded. Transcripts of a million lines pad a time and an id on each.
//! And text written to JSON whole ([`serialize_whole`]), in a buffer
//! reused per thread: a report writes a name and a sentence per
//! transition.

use std::fmt::{self, Write};

use crate::short_text::{SHORT, Short};

/// Writes what `write` writes to `f`: straight through when `f` asks for
/// no width, else into a buffer (on the stack up to [`SHORT`] bytes) and
/// then padded and aligned as `f` asks.
pub fn pad(
    f: &mut fmt::Formatter<'_>,
    write: impl Fn(&mut dyn Write) -> fmt::Result,
) -> fmt::Result {
    if f.width().is_none() && f.precision().is_none() {
        return write(f);
    }
    let mut small = Short::<SHORT>::new();
    if write(&mut small).is_ok() {
        return f.pad(small.as_str());
    }
    let mut long = String::new();
    write(&mut long)?;
    f.pad(&long)
}

thread_local! {
    /// The text [`serialize_whole`] puts together: one buffer per thread,
    /// reused, so a report of a million transitions allocates it once.
    static WHOLE: std::cell::RefCell<String> = const { std::cell::RefCell::new(String::new()) };
}

/// Writes `value` as one JSON string, put together by `fill` (which
/// writes what `value` displays): through `Display` alone, serde_json
/// escapes and writes each piece apart.
pub fn serialize_whole<S: serde::Serializer, T: fmt::Display + ?Sized>(
    serializer: S,
    value: &T,
    fill: impl FnOnce(&mut String) -> fmt::Result,
) -> Result<S::Ok, S::Error> {
    WHOLE.with(|cell| match cell.try_borrow_mut() {
        Ok(mut text) => {
            text.clear();
            fill(&mut text).map_err(serde::ser::Error::custom)?;
            serializer.serialize_str(&text)
        }
        // Only if a `fill` writes a value through this again.
        Err(_) => serializer.collect_str(value),
    })
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

    /// Short and long texts (past the stack buffer), multi-byte ones,
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
