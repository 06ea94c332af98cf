//! The random draws of generated traffic (docs/model.md section 11 and
//! decisions 16.1-16.2): each `[[traffic]]` block k draws from its own
//! ChaCha8 stream k, seeded from the scenario's seed (backoff jitter keeps
//! stream 0), first every Poisson arrival offset, then one mix draw per
//! message in id order. Adding or changing one block never shifts the draws
//! of another, nor the jitter.

use std::sync::Arc;

use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;

use crate::model::{Arrival, EvenArrivals, MessageIndex, Millis, Scenario, Traffic};

/// A Poisson block's sorted arrival offsets, four bytes each when the
/// block's window fits.
#[derive(Debug)]
pub enum Offsets {
    Narrow(Vec<u32>),
    Wide(Vec<u64>),
}

impl Offsets {
    /// The offset of message j (from 1).
    #[inline]
    pub fn get(&self, j: u64) -> Millis {
        match self {
            Offsets::Narrow(v) => v[(j - 1) as usize] as Millis,
            Offsets::Wide(v) => v[(j - 1) as usize],
        }
    }
}

/// One block's arrival offsets from its start, in message order: what
/// the run's arrivals and the latency pass both walk.
#[derive(Clone)]
pub(super) enum BlockOffsets {
    /// Even arrivals, walked without a division per message.
    Even(EvenArrivals),
    /// Poisson arrivals: the drawn, sorted offsets, from index `next`.
    Drawn { offsets: Arc<Offsets>, next: usize },
}

impl BlockOffsets {
    /// Block `block`'s offsets, `drawn` when its arrivals are Poisson.
    pub(super) fn of(block: &Traffic, drawn: Option<Arc<Offsets>>) -> Self {
        match drawn {
            Some(offsets) => BlockOffsets::Drawn { offsets, next: 0 },
            None => BlockOffsets::Even(EvenArrivals::new(block.over, block.count)),
        }
    }
}

impl Iterator for BlockOffsets {
    type Item = Millis;

    #[inline]
    fn next(&mut self) -> Option<Millis> {
        match self {
            BlockOffsets::Even(even) => even.next(),
            BlockOffsets::Drawn { offsets, next } => {
                let offset = match &**offsets {
                    Offsets::Narrow(v) => *v.get(*next)? as Millis,
                    Offsets::Wide(v) => *v.get(*next)?,
                };
                *next += 1;
                Some(offset)
            }
        }
    }

    /// One match for the block, not one per message.
    fn fold<B, F: FnMut(B, Millis) -> B>(self, init: B, mut f: F) -> B {
        match self {
            BlockOffsets::Even(even) => even.fold(init, f),
            BlockOffsets::Drawn { offsets, next } => match &*offsets {
                Offsets::Narrow(v) => v[next..].iter().fold(init, |b, &o| f(b, o as Millis)),
                Offsets::Wide(v) => v[next..].iter().fold(init, |b, &o| f(b, o)),
            },
        }
    }
}

/// The random draws of one run: Poisson arrivals and each generated
/// message's mix kind.
#[derive(Debug, Clone, Default)]
pub struct Draws {
    /// Per block: its sorted offsets when its arrivals are Poisson.
    pub(super) offsets: Vec<Option<Arc<Offsets>>>,
    /// Per block with a mix: each message's kind, 0 for plain, k + 1 for
    /// the block's k-th `[[traffic.mix]]` entry.
    blocks: Vec<Option<Vec<u8>>>,
    /// No message of the scenario has a fault: every lookup is skipped.
    faultless: bool,
    /// Per block, in index order: its first message index, and whether
    /// none of its messages has a fault (neither the block nor any of its
    /// mix kinds names one).
    starts: Vec<(MessageIndex, bool)>,
}

/// The faults of a message that has none.
static NO_FAULTS: crate::model::Faults = crate::model::Faults::none();

/// The values a mix draw ranges over.
pub const MIX_DRAWS: u64 = 1_000_000;

impl Draws {
    /// The faults of message `m`: its own, or its block's then its mix
    /// kind's. A block none of whose messages has a fault answers from
    /// its first index alone, without its description.
    #[inline(always)]
    pub fn faults<'s>(&self, scenario: &'s Scenario, m: MessageIndex) -> &'s crate::model::Faults {
        if self.faultless {
            return &NO_FAULTS;
        }
        if (m as usize) < scenario.messages.len() {
            return &scenario.messages[m as usize].faults;
        }
        // Blocks are in index order: the last one starting at or before m.
        crate::meter::search(self.starts.len());
        let b = self.starts.partition_point(|&(first, _)| first <= m) - 1;
        if self.starts[b].1 {
            return &NO_FAULTS;
        }
        self.faults_in_block(scenario, b, m)
    }

    /// The faults of message `m` of block `b`: the block's, or its mix
    /// kind's.
    #[inline(never)]
    fn faults_in_block<'s>(
        &self,
        scenario: &'s Scenario,
        b: usize,
        m: MessageIndex,
    ) -> &'s crate::model::Faults {
        let g = &scenario.traffic[b];
        let kind = self.blocks[b]
            .as_ref()
            .map_or(0, |kinds| kinds[(m - g.first_index) as usize]);
        match kind {
            0 => &g.faults,
            k => &g.mix[k as usize - 1].faults,
        }
    }

    /// When message `m` arrives (first arrival).
    pub fn arrival(&self, scenario: &Scenario, m: MessageIndex) -> Millis {
        match scenario.generated(m) {
            None => scenario.messages[m as usize].at,
            Some((g, j)) => match self.offsets.get(g.stream as usize - 1) {
                Some(Some(offsets)) => g.start.saturating_add(offsets.get(j)),
                _ => g.arrival(j),
            },
        }
    }

    /// Every message's first arrival, in message order: the explicit
    /// messages', then each block's. Equal to [`Draws::arrival`] of each
    /// message in turn, without a block lookup or a division per message.
    pub fn arrivals<'a>(&'a self, scenario: &'a Scenario) -> impl Iterator<Item = Millis> + 'a {
        let explicit = scenario.messages.iter().map(|m| m.at);
        let generated = scenario.traffic.iter().enumerate().flat_map(|(k, g)| {
            let drawn = self.offsets.get(k).cloned().flatten();
            BlockOffsets::of(g, drawn).map(|offset| g.start.saturating_add(offset))
        });
        explicit.chain(generated)
    }

    /// The mix entry (index into the block's `mix`) of message `m`, if it
    /// is a generated message that drew one.
    #[inline]
    pub fn entry(&self, scenario: &Scenario, m: MessageIndex) -> Option<usize> {
        let (g, j) = scenario.generated(m)?;
        let kinds = self.blocks.get(g.stream as usize - 1)?.as_ref()?;
        match kinds[(j - 1) as usize] {
            0 => None,
            k => Some(k as usize - 1),
        }
    }

    /// The kind (index into [`Scenario::kinds`]) of message `m`.
    pub fn kind(&self, scenario: &Scenario, m: MessageIndex) -> Option<u32> {
        let entry = self.entry(scenario, m)?;
        let (g, _) = scenario.generated(m)?;
        Some(g.mix[entry].kind)
    }
}

/// Draws every block's Poisson offsets (sorted) and mix kinds.
pub(super) fn draw(scenario: &Scenario) -> Draws {
    let mut draws = Draws::default();
    for block in &scenario.traffic {
        let quiet = block.faults.is_empty() && block.mix.iter().all(|kind| kind.faults.is_empty());
        draws.starts.push((block.first_index, quiet));
        let mut rng = ChaCha8Rng::seed_from_u64(scenario.seed);
        rng.set_stream(block.stream);
        draws.offsets.push(match block.arrival {
            Arrival::Poisson if block.count > 0 => {
                Some(Arc::new(poisson(&mut rng, block.count, block.over)))
            }
            _ => None,
        });
        draws.blocks.push((!block.mix.is_empty()).then(|| {
            (0..block.count)
                .map(|_| kind_of(&block.mix, rng.random_range(0..MIX_DRAWS)))
                .collect()
        }));
    }
    draws.faultless = scenario.messages.iter().all(|m| m.faults.is_empty())
        && draws.starts.iter().all(|&(_, quiet)| quiet);
    draws
}

/// `count` offsets drawn uniformly from `0..over`, sorted. Equal offsets
/// are indistinguishable, so an unstable sort gives the same sequence.
fn poisson(rng: &mut ChaCha8Rng, count: u64, over: Millis) -> Offsets {
    let draws = (0..count).map(|_| rng.random_range(0..over));
    if over <= u32::MAX as Millis {
        let mut drawn: Vec<u32> = draws.map(|d| d as u32).collect();
        drawn.sort_unstable();
        Offsets::Narrow(drawn)
    } else {
        let mut drawn: Vec<u64> = draws.collect();
        drawn.sort_unstable();
        Offsets::Wide(drawn)
    }
}

/// The kinds own consecutive ranges of draw values, in file order.
fn kind_of(mix: &[crate::model::MixKind], u: u64) -> u8 {
    let mut low = 0u64;
    for (k, kind) in mix.iter().enumerate() {
        let high = low + kind.width as u64;
        if u < high {
            return k as u8 + 1;
        }
        low = high;
    }
    0
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::MixKind;

    fn kind(width: u32) -> MixKind {
        MixKind {
            kind: 0,
            width,
            faults: Default::default(),
        }
    }

    #[test]
    fn kinds_own_consecutive_ranges_in_file_order() {
        let mix = [kind(20_000), kind(0), kind(500_000)];
        assert_eq!(kind_of(&mix, 0), 1);
        assert_eq!(kind_of(&mix, 19_999), 1);
        // A zero-width kind owns nothing.
        assert_eq!(kind_of(&mix, 20_000), 3);
        assert_eq!(kind_of(&mix, 519_999), 3);
        assert_eq!(kind_of(&mix, 520_000), 0);
        assert_eq!(kind_of(&mix, 999_999), 0);
    }

    #[test]
    fn widths_past_a_million_cut_the_last_kinds_range_at_the_last_draw() {
        // 255 kinds of 1/255: 3,922 each, 1,000,110 in all. Kind 255 owns
        // 996,188 to 999,999 (3,812 draws); no draw is plain.
        let mix = vec![kind(3_922); 255];
        assert_eq!(kind_of(&mix, 996_187), 254);
        assert_eq!(kind_of(&mix, 996_188), 255);
        assert_eq!(kind_of(&mix, 999_999), 255);
        let owned = (0..1_000_000).filter(|&u| kind_of(&mix, u) == 255).count();
        assert_eq!(owned, 3_812);
        assert!((0..1_000_000).all(|u| kind_of(&mix, u) != 0));
    }
}
