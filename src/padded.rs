//! Text that honours a format's width and alignment (`{:>10}`) without
//! building a string: written into a small buffer on the stack, then
//! padded. Transcripts of a million lines pad a time and an id on each.
//! And text written to JSON whole: a name put together on the stack
//! ([`Short`]), a longer text ([`serialize_whole`]) in a buffer reused per
//! thread: a report writes a name and a sentence per transition.

use std::fmt::{self, Write};

/// Writes what `write` writes to `f`: straight through when `f` asks for
/// no width, else into a buffer (on the stack up to [`SMALL`] bytes) and
/// then padded and aligned as `f` asks.
pub fn pad(
    f: &mut fmt::Formatter<'_>,
    write: impl Fn(&mut dyn Write) -> fmt::Result,
) -> fmt::Result {
    if f.width().is_none() && f.precision().is_none() {
        return write(f);
    }
    let mut small = Short::<SMALL>::new();
    if write(&mut small).is_ok() {
        return f.pad(small.as_str());
    }
    let mut long = String::new();
    write(&mut long)?;
    f.pad(&long)
}

/// The longest text padded without a string.
const SMALL: usize = 64;

/// A text of at most `N` bytes put together on the stack, from whole
/// `str`s: a name or a time written in pieces, without a `String`.
pub struct Short<const N: usize> {
    bytes: [u8; N],
    len: usize,
}

impl<const N: usize> Short<N> {
    pub fn new() -> Self {
        Short {
            bytes: [0; N],
            len: 0,
        }
    }

    /// Adds `piece`, or returns false (and adds nothing) if it does not
    /// fit.
    #[inline]
    pub fn push(&mut self, piece: &str) -> bool {
        let end = self.len + piece.len();
        if end > N {
            return false;
        }
        copy(&mut self.bytes[self.len..end], piece.as_bytes());
        self.len = end;
        true
    }

    #[inline]
    pub fn as_str(&self) -> &str {
        // SAFETY: `bytes[..len]` is whole `str`s end to end (`push` copies
        // a piece whole or not at all), and so valid UTF-8.
        unsafe { std::str::from_utf8_unchecked(&self.bytes[..self.len]) }
    }
}

impl<const N: usize> Default for Short<N> {
    fn default() -> Self {
        Self::new()
    }
}

impl<const N: usize> Write for Short<N> {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        if self.push(s) {
            Ok(())
        } else {
            Err(fmt::Error)
        }
    }
}

/// Copies `src` to `dst` (of the same length). Copies of up to 64 bytes
/// are done as two overlapping pieces rather than a call to `memcpy`,
/// since almost every piece of an output (a key, a number, a name, a
/// sentence) is that short.
#[inline(always)]
pub fn copy(dst: &mut [u8], src: &[u8]) {
    let n = src.len();
    match n {
        0 => {}
        1..=3 => {
            dst[0] = src[0];
            dst[n / 2] = src[n / 2];
            dst[n - 1] = src[n - 1];
        }
        4..=7 => {
            dst[..4].copy_from_slice(&src[..4]);
            dst[n - 4..].copy_from_slice(&src[n - 4..]);
        }
        8..=16 => {
            dst[..8].copy_from_slice(&src[..8]);
            dst[n - 8..].copy_from_slice(&src[n - 8..]);
        }
        17..=32 => {
            dst[..16].copy_from_slice(&src[..16]);
            dst[n - 16..].copy_from_slice(&src[n - 16..]);
        }
        33..=64 => {
            dst[..32].copy_from_slice(&src[..32]);
            dst[n - 32..].copy_from_slice(&src[n - 32..]);
        }
        _ => dst.copy_from_slice(src),
    }
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

    /// Every length up to past the longest piece copied without `memcpy`.
    #[test]
    fn copies_every_length() {
        let src: Vec<u8> = (0..100).collect();
        for n in 0..=100 {
            let mut dst = [0xFF; 101];
            super::copy(&mut dst[..n], &src[..n]);
            assert_eq!(&dst[..n], &src[..n], "{n} bytes");
            assert_eq!(dst[n], 0xFF, "{n} bytes: nothing past the end");
        }
    }

    /// Pieces that fit are added whole; one that does not is refused and
    /// leaves the text as it was.
    #[test]
    fn a_short_text_takes_whole_pieces_while_they_fit() {
        let mut short = super::Short::<8>::new();
        assert!(short.push("ab") && short.push("é") && short.push(""));
        assert!(!short.push("cdefg"));
        assert_eq!(short.as_str(), "abé");
        assert!(short.push("cde"));
        assert!(!short.push("fg"));
        assert_eq!(short.as_str(), "abécde");
        assert!(short.push("f") && !short.push("g"));
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
