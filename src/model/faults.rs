//! A message's fault list, in file order, and the question the engine asks
//! of it at every delivery: which fault of each kind applies first. A
//! short list answers by looking at each fault; a long one (a generated
//! file may give a message thousands) keeps an index per kind, so a
//! delivery costs O(log n) in the list's length, never a scan.

use std::ops::Deref;

use super::{Fault, FaultKind, Selector};

/// Lists up to this long are scanned; longer ones are indexed.
const SCANNED: usize = 8;

/// The three kinds a delivery asks about.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Asked {
    Fail,
    Crash,
    LoseAck,
}

impl Asked {
    fn of(kind: FaultKind) -> Asked {
        match kind {
            FaultKind::Fail => Asked::Fail,
            FaultKind::Crash(_) => Asked::Crash,
            FaultKind::LoseAck => Asked::LoseAck,
        }
    }
}

/// Faults in file order (they read as a slice), indexed when long.
#[derive(Debug, Clone, Default)]
pub struct Faults {
    list: Vec<Fault>,
    index: Option<Box<[KindIndex; 3]>>,
}

/// One kind's faults, reduced to those that can be the first applying one.
#[derive(Debug, Clone, Default)]
struct KindIndex {
    /// The position of the first `until = "repair"` fault.
    until_repair: Option<usize>,
    /// `(n, position)` of each `first = n` fault whose n exceeds every
    /// earlier one's of its kind: n and position both increase, and the
    /// first fault with n >= r is the first of these with n >= r.
    records: Vec<(u64, usize)>,
}

impl From<Vec<Fault>> for Faults {
    fn from(list: Vec<Fault>) -> Faults {
        let index = (list.len() > SCANNED).then(|| {
            let mut kinds: [KindIndex; 3] = Default::default();
            for (position, f) in list.iter().enumerate() {
                let k = &mut kinds[Asked::of(f.kind) as usize];
                match f.selector {
                    Selector::UntilRepair => {
                        k.until_repair.get_or_insert(position);
                    }
                    Selector::First(n) => {
                        if k.records.last().is_none_or(|&(most, _)| n > most) {
                            k.records.push((n, position));
                        }
                    }
                }
            }
            Box::new(kinds)
        });
        Faults { list, index }
    }
}

impl Deref for Faults {
    type Target = [Fault];
    fn deref(&self) -> &[Fault] {
        &self.list
    }
}

impl Faults {
    /// No faults.
    pub const fn none() -> Faults {
        Faults {
            list: Vec::new(),
            index: None,
        }
    }

    /// The position of the first fault of kind `asked` that applies at a
    /// delivery that is the message's `receive`-th, given whether the
    /// operator has repaired.
    #[inline]
    pub fn first(&self, asked: Asked, receive: u64, repaired: bool) -> Option<usize> {
        if self.list.is_empty() {
            // Most messages have no faults: no call, no search.
            return None;
        }
        self.first_of(asked, receive, repaired)
    }

    fn first_of(&self, asked: Asked, receive: u64, repaired: bool) -> Option<usize> {
        let Some(index) = &self.index else {
            let found = self
                .list
                .iter()
                .position(|f| Asked::of(f.kind) == asked && f.applies(receive, repaired));
            crate::meter::add(found.map_or(self.list.len(), |p| p + 1));
            return found;
        };
        let k = &index[asked as usize];
        crate::meter::search(k.records.len());
        let until = k.until_repair.filter(|_| !repaired);
        let i = k.records.partition_point(|&(n, _)| n < receive);
        let first = k.records.get(i).map(|&(_, position)| position);
        match (until, first) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// The first applying fault of kind `asked`.
    #[inline]
    pub fn first_fault(&self, asked: Asked, receive: u64, repaired: bool) -> Option<&Fault> {
        self.first(asked, receive, repaired).map(|p| &self.list[p])
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Class, CrashAt};

    fn fault(kind: u64, selector: u64) -> Fault {
        Fault {
            kind: match kind % 3 {
                0 => FaultKind::Fail,
                1 => FaultKind::LoseAck,
                _ => FaultKind::Crash(CrashAt::BeforeEffect),
            },
            selector: match selector {
                0 => Selector::UntilRepair,
                n => Selector::First(n),
            },
            reason: 0,
            class: Class::Transient,
            takes: None,
        }
    }

    #[test]
    fn the_index_agrees_with_a_scan_of_the_list() {
        // Lists of every length around the threshold, from a fixed
        // pseudo-random sequence: kinds, repair faults and `first = n`
        // up and down.
        let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
        let mut next = |m: u64| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x % m
        };
        for len in 0..40 {
            for _ in 0..20 {
                let list: Vec<Fault> = (0..len).map(|_| fault(next(3), next(12))).collect();
                let faults = Faults::from(list.clone());
                assert_eq!(faults.index.is_some(), len > SCANNED);
                for asked in [Asked::Fail, Asked::Crash, Asked::LoseAck] {
                    for receive in 1..14 {
                        for repaired in [false, true] {
                            let scan = list.iter().position(|f| {
                                Asked::of(f.kind) == asked && f.applies(receive, repaired)
                            });
                            assert_eq!(faults.first(asked, receive, repaired), scan, "{list:?}");
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn a_long_list_keeps_only_the_faults_that_can_come_first() {
        // first = 5, 3, 9, 9, 12 and two repair faults: 3 and the second
        // 9 can never be the first applying fail.
        let list: Vec<Fault> = [5, 3, 9, 0, 9, 12, 0, 1, 2]
            .iter()
            .map(|&n| fault(0, n))
            .collect();
        let faults = Faults::from(list);
        let fail = &faults.index.as_ref().unwrap()[Asked::Fail as usize];
        assert_eq!(fail.records, vec![(5, 0), (9, 2), (12, 5)]);
        assert_eq!(fail.until_repair, Some(3));
        assert_eq!(faults.first(Asked::Fail, 6, true), Some(2));
        assert_eq!(faults.first(Asked::Fail, 10, false), Some(3));
        assert_eq!(faults.first(Asked::Fail, 13, true), None);
    }
}
