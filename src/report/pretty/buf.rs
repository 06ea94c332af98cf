//! The text not yet handed to the writer: a buffer of fixed length and
//! how much of it is filled. Whoever writes has made room first
//! ([`super::Pretty::reserve`]), so a write is a copy and a move of the
//! end, short ones without `memcpy` ([`crate::short_text::copy`]).

pub struct Buf {
    bytes: Vec<u8>,
    filled: usize,
}

impl Buf {
    pub fn with_len(len: usize) -> Buf {
        Buf {
            bytes: vec![0; len],
            filled: 0,
        }
    }

    /// How many more bytes fit.
    #[inline]
    pub fn room(&self) -> usize {
        self.bytes.len() - self.filled
    }

    /// The text written so far.
    pub fn filled(&self) -> &[u8] {
        &self.bytes[..self.filled]
    }

    pub fn clear(&mut self) {
        self.filled = 0;
    }

    /// Makes the buffer long enough for `room` more bytes.
    pub fn grow(&mut self, room: usize) {
        self.bytes.resize(self.filled + room, 0);
    }

    /// Writes through a [`Cursor`] over the room left: the end moves
    /// once, when `write` is done, not after every piece.
    #[inline]
    pub fn write<R>(&mut self, write: impl FnOnce(&mut Cursor<'_>) -> R) -> R {
        let mut cursor = Cursor {
            room: &mut self.bytes[self.filled..],
            at: 0,
        };
        let result = write(&mut cursor);
        self.filled += cursor.at;
        result
    }

    #[inline]
    pub fn put(&mut self, src: &[u8]) {
        self.write(|c| c.put(src));
    }

    #[inline]
    pub fn put_prefix<const N: usize>(&mut self, src: &[u8; N], n: usize) {
        self.write(|c| c.put_prefix(src, n));
    }
}

/// The buffer's room, written front to back: `at` bytes so far.
pub struct Cursor<'a> {
    room: &'a mut [u8],
    at: usize,
}

impl Cursor<'_> {
    #[inline]
    pub fn byte(&mut self, byte: u8) {
        self.room[self.at] = byte;
        self.at += 1;
    }

    /// Copies `src`.
    #[inline]
    pub fn put(&mut self, src: &[u8]) {
        let n = src.len();
        crate::short_text::copy(&mut self.room[self.at..self.at + n], src);
        self.at += n;
    }

    /// Copies the first `n` bytes of `src` by copying all of it (a copy
    /// of known length): room for `N` bytes must have been made.
    #[inline]
    pub fn put_prefix<const N: usize>(&mut self, src: &[u8; N], n: usize) {
        self.room[self.at..self.at + N].copy_from_slice(src);
        self.at += n.min(N);
    }
}
