//! A JSON string's text: escaped as serde_json escapes it (`\"`, `\\`,
//! `\b`, `\f`, `\n`, `\r`, `\t`, other control characters as `\u00xx`,
//! everything else as it is). Almost every string in a report needs no
//! escape at all, so the text is first checked eight bytes at a time and,
//! when clean, copied in one piece.

use super::buf::Cursor;

/// The most a byte takes escaped (`\u00xx`).
pub const WIDEST: usize = 6;

const ONES: u64 = u64::from_ne_bytes([0x01; 8]);
const HIGHS: u64 = u64::from_ne_bytes([0x80; 8]);

/// The high bit of each byte of `word` below `n` (`n` at most 0x80),
/// with perhaps more above one that is: zero exactly when no byte is.
#[inline]
fn below(word: u64, n: u8) -> u64 {
    word.wrapping_sub(ONES * u64::from(n)) & !word & HIGHS
}

/// Zero exactly when no byte of `word` needs an escape: none is a
/// control character, a quote or a backslash.
#[inline]
fn needs_escape(word: u64) -> u64 {
    below(word, 0x20)
        | below(word ^ (ONES * u64::from(b'"')), 1)
        | below(word ^ (ONES * u64::from(b'\\')), 1)
}

#[inline]
fn word(bytes: &[u8]) -> u64 {
    let mut word = [0; 8];
    word.copy_from_slice(&bytes[..8]);
    u64::from_ne_bytes(word)
}

#[inline]
fn half(bytes: &[u8]) -> u64 {
    let mut half = [0; 4];
    half.copy_from_slice(&bytes[..4]);
    u64::from(u32::from_ne_bytes(half))
}

/// Whether no byte of `bytes` needs an escape. Short texts are read as
/// one word (two overlapping halves, or the first, middle and last byte
/// padded with a clean byte) or two overlapping words, longer ones a word
/// at a time with the last word overlapping.
#[inline(always)]
pub fn is_clean(bytes: &[u8]) -> bool {
    let n = bytes.len();
    let escapes = match n {
        0 => 0,
        1..=3 => needs_escape(u64::from_ne_bytes([
            bytes[0],
            bytes[n / 2],
            bytes[n - 1],
            b'a',
            b'a',
            b'a',
            b'a',
            b'a',
        ])),
        4..=7 => needs_escape(half(bytes) | half(&bytes[n - 4..]) << 32),
        8..=16 => needs_escape(word(bytes)) | needs_escape(word(&bytes[n - 8..])),
        _ => bytes
            .chunks_exact(8)
            .fold(needs_escape(word(&bytes[n - 8..])), |escapes, w| {
                escapes | needs_escape(word(w))
            }),
    };
    escapes == 0
}

/// The text with its escapes, clean runs copied whole. Room for
/// [`WIDEST`] bytes per byte of `bytes` must have been made.
#[cold]
pub fn escaped(out: &mut Cursor<'_>, bytes: &[u8]) {
    let mut start = 0;
    for (i, &byte) in bytes.iter().enumerate() {
        let escape: &[u8] = match byte {
            b'"' => b"\\\"",
            b'\\' => b"\\\\",
            0x08 => b"\\b",
            0x0C => b"\\f",
            b'\n' => b"\\n",
            b'\r' => b"\\r",
            b'\t' => b"\\t",
            0..=0x1F => {
                const HEX: &[u8; 16] = b"0123456789abcdef";
                &[
                    b'\\',
                    b'u',
                    b'0',
                    b'0',
                    HEX[usize::from(byte >> 4)],
                    HEX[usize::from(byte & 0xF)],
                ]
            }
            _ => continue,
        };
        out.put(&bytes[start..i]);
        out.put(escape);
        start = i + 1;
    }
    out.put(&bytes[start..]);
}
