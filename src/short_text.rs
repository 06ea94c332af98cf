//! Short texts put together on the stack, from whole `str`s (an id, a
//! time, written in pieces), and short byte copies done without a call
//! to `memcpy`: almost every piece of an output is a few bytes long.

use std::fmt::{self, Write};

/// How long a text callers put together on the stack may be: a padded
/// time or id, a generated name written to JSON.
pub const SHORT: usize = 64;

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
        4..=7 => halves::<4>(dst, src),
        8..=16 => halves::<8>(dst, src),
        17..=32 => halves::<16>(dst, src),
        33..=64 => halves::<32>(dst, src),
        _ => dst.copy_from_slice(src),
    }
}

/// Copies `src` (of `K` to `2 * K` bytes) to `dst` as its first and its
/// last `K` bytes, which overlap unless it is `2 * K` long.
#[inline(always)]
fn halves<const K: usize>(dst: &mut [u8], src: &[u8]) {
    let n = src.len();
    dst[..K].copy_from_slice(&src[..K]);
    dst[n - K..].copy_from_slice(&src[n - K..]);
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every length up to past the longest piece copied without `memcpy`.
    #[test]
    fn copies_every_length() {
        let src: Vec<u8> = (0..100).collect();
        for n in 0..=100 {
            let mut dst = [0xFF; 101];
            copy(&mut dst[..n], &src[..n]);
            assert_eq!(&dst[..n], &src[..n], "{n} bytes");
            assert_eq!(dst[n], 0xFF, "{n} bytes: nothing past the end");
        }
    }

    /// Pieces that fit are added whole; one that does not is refused and
    /// leaves the text as it was.
    #[test]
    fn a_short_text_takes_whole_pieces_while_they_fit() {
        let mut short = Short::<8>::new();
        assert!(short.push("ab") && short.push("é") && short.push(""));
        assert!(!short.push("cdefg"));
        assert_eq!(short.as_str(), "abé");
        assert!(short.push("cde"));
        assert!(!short.push("fg"));
        assert_eq!(short.as_str(), "abécde");
        assert!(short.push("f") && !short.push("g"));
    }
}
