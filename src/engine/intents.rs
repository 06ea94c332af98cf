//! A set of intents, one bit each: which intents have committed an effect
//! (any further effect of one is a duplicate, docs/model.md section 7),
//! which were ever visible in a sink, which own their own key's row.

use crate::model::IntentIndex;

#[derive(Debug, Clone, Default)]
pub(super) struct IntentSet {
    words: Vec<u64>,
}

impl IntentSet {
    /// An empty set of intents `0..count`.
    pub(super) fn new(count: usize) -> Self {
        IntentSet {
            words: vec![0; count.div_ceil(64)],
        }
    }

    /// Adds intent `i`; true if it was there already.
    #[inline]
    pub(super) fn insert(&mut self, i: IntentIndex) -> bool {
        let word = &mut self.words[i as usize / 64];
        let bit = 1u64 << (i % 64);
        let was = *word & bit != 0;
        *word |= bit;
        was
    }

    /// Whether intent `i` is in the set.
    #[inline]
    pub(super) fn contains(&self, i: IntentIndex) -> bool {
        self.words[i as usize / 64] & (1u64 << (i % 64)) != 0
    }

    /// Removes intent `i`.
    #[inline]
    pub(super) fn remove(&mut self, i: IntentIndex) {
        self.words[i as usize / 64] &= !(1u64 << (i % 64));
    }

    /// How many intents of this set `other` does not hold (sets of the
    /// same intents, 64 at a time).
    pub(super) fn count_not_in(&self, other: &IntentSet) -> u64 {
        (self.words.iter().zip(&other.words))
            .map(|(a, b)| (a & !b).count_ones() as u64)
            .sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_intent_is_there_after_its_first_insert_only() {
        let mut set = IntentSet::new(130);
        for i in [0, 63, 64, 129] {
            assert!(!set.insert(i), "{i}");
            assert!(set.insert(i), "{i}");
        }
        assert!(!set.insert(1));
        assert!(!set.insert(128));
        assert!(set.contains(63) && !set.contains(62));
        set.remove(64);
        assert!(!set.contains(64) && set.contains(63));
        assert!(!set.insert(64));
    }

    #[test]
    fn count_not_in_counts_the_intents_the_other_set_lacks() {
        let (mut a, mut b) = (IntentSet::new(200), IntentSet::new(200));
        for i in [0, 5, 64, 127, 128, 199] {
            a.insert(i);
        }
        for i in [5, 128, 150] {
            b.insert(i);
        }
        assert_eq!(a.count_not_in(&b), 4);
        assert_eq!(b.count_not_in(&a), 1);
        assert_eq!(a.count_not_in(&a), 0);
    }
}
