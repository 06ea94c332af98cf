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

use super::{IntentIndex, MessageIndex, Scenario};
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
    /// Whether some explicit key looks like a derived key (`x~r1`).
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
        if let Some(&i) = self.intents.generated_aliases.get(&m) {
            return i;
        }
        self.intents.explicit.len() as IntentIndex + (m - self.messages.len() as MessageIndex)
    }

    pub fn intent_count(&self) -> usize {
        self.intents.explicit.len() + (self.message_count() as usize - self.messages.len())
    }

    pub fn intent_name(&self, i: IntentIndex) -> Cow<'_, str> {
        let explicit = self.intents.explicit.len() as IntentIndex;
        if i < explicit {
            Cow::Borrowed(&self.intents.explicit[i as usize])
        } else {
            self.message_id(self.messages.len() as MessageIndex + (i - explicit))
        }
    }

    pub fn key_name(&self, k: KeyRef) -> String {
        if k.generation == 0 {
            self.intent_name(k.intent).into_owned()
        } else {
            derived_key(&self.intent_name(k.intent), k.generation)
        }
    }

    /// The key a redrive with a fresh identity gives: `<intent>~r<N>`. If an
    /// explicit message already uses that key, it is the same key.
    pub fn fresh_key(&self, intent: IntentIndex, redrives: u32) -> KeyRef {
        if self.intents.has_derived_lookalikes {
            let name = derived_key(&self.intent_name(intent), redrives);
            if let Some(&i) = self.intents.by_name.get(&name) {
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

pub fn derived_key(intent: &str, redrives: u32) -> String {
    format!("{intent}~r{redrives}")
}
