//! Deduplication keys, kept compact. A scenario of millions of generated
//! messages must not store a string per message, so a key is two numbers:
//! an *intent* (the message's original key, its application intent) and a
//! *generation* (how many redrives under `identity = "new"` made it).
//!
//! One example. The file has explicit messages `a` (key "order-7") and `b`
//! (key "order-7" too), then `[[traffic]] count = 3, id_prefix = "m-"`:
//!
//! - explicit intents are interned in file order: "order-7" is intent 0,
//!   the only explicit one, so `a` and `b` share intent 0;
//! - generated message `m-j` has its own intent, numbered after the
//!   explicit ones: `m-1` is intent 1, `m-2` intent 2, `m-3` intent 3 (no
//!   name is stored; the name is the generated id). If an explicit message
//!   had the key "m-2", `m-2` would share that intent instead
//!   ([`Intents::generated_aliases`]);
//! - `b` redriven with a new identity for the first time gets the key
//!   `order-7~r1`: `KeyRef { intent: 0, generation: 1 }`; its second redrive
//!   `order-7~r2` (generation 2). Keys are derived from the intent, never
//!   chained;
//! - if an explicit message already uses the key `order-7~r1`, that fresh key
//!   *is* that message's intent (`KeyRef { intent: i, generation: 0 }`), so
//!   the deduplication store sees one key, as a real store would
//!   ([`Scenario::fresh_key`]).

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::fmt;

use super::{IntentIndex, MessageIndex, Scenario};

/// A message's id or a key's name, written without building a string: a
/// text (an explicit id, or a generated id's prefix), the generated
/// message's number, and the redrive generation of a derived key
/// (`<intent>~r<N>`). Outputs of millions of items write these directly.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Name<'a> {
    text: &'a str,
    number: Option<u64>,
    generation: u32,
}

impl<'a> Name<'a> {
    /// The name's length in bytes, without writing it.
    pub fn len(self) -> usize {
        let digits = |n: u64| n.checked_ilog10().map_or(1, |d| d as usize + 1);
        self.text.len()
            + self.number.map_or(0, digits)
            + match self.generation {
                0 => 0,
                g => 2 + digits(g as u64),
            }
    }

    pub fn is_empty(self) -> bool {
        self.len() == 0
    }

    /// The name, borrowed when the scenario stores it whole.
    pub fn as_cow(self) -> Cow<'a, str> {
        match self {
            Name {
                text,
                number: None,
                generation: 0,
            } => Cow::Borrowed(text),
            _ => Cow::Owned(self.to_string()),
        }
    }
}

impl Name<'_> {
    /// Kafka's murmur2 of the name's bytes, hashed in place (the
    /// partitioner runs it per record; see [`crate::model::Murmur2`]).
    pub fn murmur2(&self) -> i32 {
        let mut h = crate::model::Murmur2::new(self.len());
        let mut digits = itoa::Buffer::new();
        h.feed(self.text.as_bytes());
        if let Some(n) = self.number {
            h.feed(digits.format(n).as_bytes());
        }
        if self.generation > 0 {
            h.feed(b"~r");
            h.feed(digits.format(self.generation).as_bytes());
        }
        h.finish()
    }

    /// The name, unpadded, whatever width a formatter asks for.
    pub fn write_plain<O: fmt::Write + ?Sized>(&self, out: &mut O) -> fmt::Result {
        let mut digits = itoa::Buffer::new();
        out.write_str(self.text)?;
        if let Some(n) = self.number {
            out.write_str(digits.format(n))?;
        }
        if self.generation > 0 {
            out.write_str("~r")?;
            out.write_str(digits.format(self.generation))?;
        }
        Ok(())
    }
}

impl fmt::Display for Name<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        crate::padded::pad(f, |out| self.write_plain(out))
    }
}

impl serde::Serialize for Name<'_> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        if self.number.is_none() && self.generation == 0 {
            return serializer.serialize_str(self.text);
        }
        serializer.collect_str(self)
    }
}

/// The application intents (original keys) and how generated messages map
/// onto them without storing a key per generated message.
#[derive(Debug, Clone, Default)]
pub struct Intents {
    /// Names of the explicit messages' intents, interned in file order.
    pub explicit: Vec<String>,
    /// Intent of each explicit message.
    pub of_explicit: Vec<IntentIndex>,
    /// Generated messages whose id equals an explicit key share its intent.
    pub generated_aliases: BTreeMap<MessageIndex, IntentIndex>,
    /// Explicit intents by name, for derived keys that collide with one.
    pub by_name: BTreeMap<String, IntentIndex>,
    /// Whether some key looks like a derived key (`x~r1`): an explicit key,
    /// or the ids of a block whose `id_prefix` holds `~r`.
    pub has_derived_lookalikes: bool,
}

/// The message's current deduplication key: its intent, and the redrive
/// number whose fresh identity it carries (0 = the intent's own key).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct KeyRef {
    pub intent: IntentIndex,
    pub generation: u32,
}

impl Scenario {
    pub fn intent(&self, m: MessageIndex) -> IntentIndex {
        if (m as usize) < self.messages.len() {
            return self.intents.of_explicit[m as usize];
        }
        // Most files have no aliases: no search then.
        if !self.intents.generated_aliases.is_empty()
            && let Some(&i) = self.intents.generated_aliases.get(&m)
        {
            return i;
        }
        self.intents.explicit.len() as IntentIndex + (m - self.messages.len() as MessageIndex)
    }

    pub fn intent_count(&self) -> usize {
        self.intents.explicit.len() + (self.message_count() as usize - self.messages.len())
    }

    pub fn intent_name(&self, i: IntentIndex) -> Cow<'_, str> {
        self.name_of_intent(i).as_cow()
    }

    /// Intent `i`'s name, as [`Scenario::intent_name`] without a string.
    pub fn name_of_intent(&self, i: IntentIndex) -> Name<'_> {
        let explicit = self.intents.explicit.len() as IntentIndex;
        if i < explicit {
            Name {
                text: &self.intents.explicit[i as usize],
                number: None,
                generation: 0,
            }
        } else {
            self.name_of_message(self.messages.len() as MessageIndex + (i - explicit))
        }
    }

    /// Message `m`'s id, as [`Scenario::message_id`] without a string.
    pub fn name_of_message(&self, m: MessageIndex) -> Name<'_> {
        match self.generated(m) {
            None => Name {
                text: &self.messages[m as usize].id,
                number: None,
                generation: 0,
            },
            Some((g, j)) => Name {
                text: &g.id_prefix,
                number: Some(j),
                generation: 0,
            },
        }
    }

    pub fn key_name(&self, k: KeyRef) -> String {
        self.name_of_key(k).to_string()
    }

    /// Key `k`'s name, as [`Scenario::key_name`] without a string: the
    /// intent's, then `~r<N>` for a derived key.
    pub fn name_of_key(&self, k: KeyRef) -> Name<'_> {
        Name {
            generation: k.generation,
            ..self.name_of_intent(k.intent)
        }
    }

    /// The key a redrive with a fresh identity gives: `<intent>~r<N>`. If a
    /// message already uses that key (an explicit key, or a generated id,
    /// which is a generated message's key), it is the same key.
    pub fn fresh_key(&self, intent: IntentIndex, redrives: u32) -> KeyRef {
        if self.intents.has_derived_lookalikes {
            let name = self
                .name_of_key(KeyRef {
                    intent,
                    generation: redrives,
                })
                .to_string();
            let existing = match self.intents.by_name.get(&name) {
                Some(&i) => Some(i),
                None => self.find_generated(&name).map(|m| self.intent(m)),
            };
            if let Some(i) = existing {
                return KeyRef {
                    intent: i,
                    generation: 0,
                };
            }
        }
        KeyRef {
            intent,
            generation: redrives,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::KeyRef;
    use crate::scenario::load_str;

    /// Explicit and generated ids, a generated id that an explicit key
    /// names, and derived keys of each, written as text and as JSON (with
    /// a character JSON escapes, and long enough not to fit on the stack).
    #[test]
    fn names_write_what_the_strings_say() {
        let file = "[delivery]\nmax_receives = 2\nretry_interval = \"1s\"\n\
            [[message]]\nid = \"a\\\"1\"\nkey = \"m-2\"\n\
            [[message]]\nid = \"b\"\n\
            [[traffic]]\ncount = 3\nover = \"3s\"\nid_prefix = \"m-\"\n\
            [[traffic]]\ncount = 10\nover = \"3s\"\nid_prefix = \"\"\n\
            [[traffic]]\ncount = 2\nover = \"3s\"\nid_prefix = \"q\\\"\\\\\"\n\
            [[traffic]]\ncount = 2\nover = \"3s\"\nid_prefix = \"long-prefix-of-a-generated-id-past-the-64-bytes-put-together-on-the-stack-\"\n";
        let (s, _) = load_str("t.toml", file).unwrap();
        let ids: Vec<String> = (0..6).map(|m| s.name_of_message(m).to_string()).collect();
        assert_eq!(ids, ["a\"1", "b", "m-1", "m-2", "m-3", "1"]);
        assert_eq!(s.name_of_message(14).to_string(), "10");
        assert_eq!(s.name_of_message(16).to_string(), "q\"\\2");
        // Past 64 bytes a name is put together in a string, not on the stack.
        assert_eq!(s.name_of_message(18).len(), 75);
        for m in 0..19 {
            let name = s.name_of_message(m);
            assert_eq!(name.to_string(), s.message_id(m));
            assert_eq!(name.len(), s.message_id(m).len());
            let json = serde_json::to_string(&name).unwrap();
            assert_eq!(json, serde_json::to_string(&*s.message_id(m)).unwrap());
            for generation in [0, 1, 9, 10, 12, u32::MAX] {
                let k = KeyRef {
                    intent: s.intent(m),
                    generation,
                };
                let key = s.name_of_key(k);
                let text = match generation {
                    0 => s.intent_name(k.intent).into_owned(),
                    g => format!("{}~r{g}", s.intent_name(k.intent)),
                };
                assert_eq!(key.to_string(), text);
                assert_eq!(key.len(), text.len());
                // Hashed in pieces, without the name written out.
                assert_eq!(key.murmur2(), crate::model::murmur2(text.as_bytes()));
                assert_eq!(s.key_name(k), text);
                assert_eq!(
                    serde_json::to_string(&key).unwrap(),
                    serde_json::to_string(&text).unwrap()
                );
            }
        }
        // m-2 shares the explicit key "m-2": one intent, named once.
        assert_eq!(s.intent(0), s.intent(3));
        assert_eq!(
            s.name_of_key(KeyRef {
                intent: s.intent(3),
                generation: 1
            })
            .to_string(),
            "m-2~r1"
        );
    }
}
