//! Struct fields' keys, laid out once for each level they are written
//! at: a report writes the same few dozen fields on every row, at the
//! same depth.

use super::text;

/// How many struct fields' keys [`Keys`] remembers.
const SLOTS: usize = 256;

/// The longest key [`Keys`] keeps whole, with what goes before and
/// after it (`,\n`, the indentation, the quoted name, `": "`).
pub const KEPT: usize = 64;

/// Struct fields' keys as written at one level, laid out once: a report
/// writes the same few dozen fields on every row, at the same depth, so
/// each key is one copy of at most [`KEPT`] bytes. A slot holds the key
/// of one name (a `&'static str`, which never changes: known by address
/// and length, since the linker may start `cycle` and `cycle_receives`
/// at the same address) at one level, and only names that need no
/// escape. Two neighbouring slots hold the keys of names that share one.
pub struct Keys(Box<[Slot; SLOTS]>);

#[derive(Clone, Copy)]
struct Slot {
    /// The name's address, length and level; address 0 for none.
    at: (usize, usize, usize),
    /// How many bytes of `text` the key takes.
    len: usize,
    /// `,\n`, the indentation, `"`, the name and `": "`, then spaces
    /// (one more than [`KEPT`], so that the key without its comma is a
    /// copy of [`KEPT`] bytes too).
    text: [u8; KEPT + 1],
}

impl Keys {
    pub fn new() -> Keys {
        Keys(Box::new(
            [Slot {
                at: (0, 0, 0),
                len: 0,
                text: [b' '; KEPT + 1],
            }; SLOTS],
        ))
    }

    /// The key of `name` at `level` (`first`: without the comma) as a
    /// copy of [`KEPT`] bytes and how many of them count, if laid out
    /// already.
    #[inline(always)]
    pub fn known(
        &self,
        name: &'static str,
        level: usize,
        first: bool,
    ) -> Option<(&[u8; KEPT], usize)> {
        let found = self.find((name.as_ptr() as usize, name.len(), level))?;
        Some(self.0[found].key(first))
    }

    /// [`Keys::known`], laid out first if need be (in the name's slot,
    /// whose key moves to the slot next to it, so two names that share
    /// a slot both stay); `None` if the name needs an escape or the key
    /// is longer than [`KEPT`].
    pub fn get(
        &mut self,
        name: &'static str,
        level: usize,
        first: bool,
    ) -> Option<(&[u8; KEPT], usize)> {
        let at = (name.as_ptr() as usize, name.len(), level);
        let found = match self.find(at) {
            Some(found) => found,
            None => {
                let slot = Self::slot(at);
                let mut laid_out = self.0[slot];
                if !laid_out.fill(name, level) {
                    return None;
                }
                self.0[slot ^ 1] = self.0[slot];
                self.0[slot] = laid_out;
                slot
            }
        };
        Some(self.0[found].key(first))
    }

    /// The slot that holds the key of a name at a level, if one does:
    /// its own or the one next to it.
    #[inline(always)]
    fn find(&self, at: (usize, usize, usize)) -> Option<usize> {
        let slot = Self::slot(at);
        if self.0[slot].at == at {
            Some(slot)
        } else if self.0[slot ^ 1].at == at {
            Some(slot ^ 1)
        } else {
            None
        }
    }

    #[inline(always)]
    fn slot(at: (usize, usize, usize)) -> usize {
        (at.0 + at.1 + at.2) % SLOTS
    }
}

impl Slot {
    /// The key laid out here, without its comma if `first`: `text`
    /// from its first or second byte, [`KEPT`] bytes either way (the
    /// fallback is never taken).
    #[inline(always)]
    fn key(&self, first: bool) -> (&[u8; KEPT], usize) {
        let skip = usize::from(first);
        let text = self.text[skip..skip + KEPT]
            .first_chunk()
            .unwrap_or(&[b' '; KEPT]);
        (text, self.len - skip)
    }

    /// Lays out the key of `name` at `level` here, if it needs no
    /// escape and fits.
    #[cold]
    fn fill(&mut self, name: &'static str, level: usize) -> bool {
        let len = 2 + 2 * level + 1 + name.len() + 3;
        if len > KEPT || !text::is_clean(name.as_bytes()) {
            return false;
        }
        self.text = [b' '; KEPT + 1];
        self.text[..2].copy_from_slice(b",\n");
        let quoted = 2 + 2 * level;
        self.text[quoted] = b'"';
        self.text[quoted + 1..quoted + 1 + name.len()].copy_from_slice(name.as_bytes());
        self.text[len - 3..len].copy_from_slice(b"\": ");
        self.len = len;
        self.at = (name.as_ptr() as usize, name.len(), level);
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The key as written: `first` without its comma.
    fn written(keys: &Keys, name: &'static str, level: usize, first: bool) -> Option<String> {
        let (text, len) = keys.known(name, level, first)?;
        Some(String::from_utf8(text[..len].to_vec()).unwrap())
    }

    /// Two names that take the same slot both stay laid out; a third
    /// one there moves the older out. Each key has its level's
    /// indentation, and the first key of an object has no comma.
    #[test]
    fn names_that_share_a_slot_both_stay() {
        let text: &'static str = "abc".repeat(3 * SLOTS).leak();
        // 3 * SLOTS bytes apart: the same address modulo SLOTS.
        let at = |n: usize| &text[3 * SLOTS * n..3 * SLOTS * n + 3];
        let (a, b, c) = (at(0), at(1), at(2));
        let mut keys = Keys::new();
        assert!(keys.get(a, 2, false).is_some() && keys.get(b, 2, true).is_some());
        assert_eq!(written(&keys, a, 2, false).unwrap(), ",\n    \"abc\": ");
        assert_eq!(written(&keys, b, 2, true).unwrap(), "\n    \"abc\": ");
        assert!(keys.get(c, 2, false).is_some());
        assert!(written(&keys, c, 2, false).is_some() && written(&keys, b, 2, false).is_some());
        assert_eq!(written(&keys, a, 2, false), None);
        // Not laid out at another level, nor for a name that needs an
        // escape or does not fit.
        assert_eq!(written(&keys, b, 3, false), None);
        assert!(keys.get("a\"b", 0, false).is_none());
        assert!(keys.get(&text[..KEPT], 0, false).is_none());
    }
}
