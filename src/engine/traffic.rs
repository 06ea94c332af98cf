//! The random draws of generated traffic (docs/model.md section 11 and
//! decisions 16.1-16.2): each `[[traffic]]` block k draws from its own
//! ChaCha8 stream k, seeded from the scenario's seed (backoff jitter keeps
//! stream 0), first every Poisson arrival offset, then one mix draw per
//! message in id order. Adding or changing one block never shifts the draws
//! of another, nor the jitter.

use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;

use crate::model::{Arrival, MessageIndex, Millis, Scenario};

/// The mix draws of one run: each generated message's kind.
#[derive(Debug, Clone, Default)]
pub struct Mix {
    /// Per block with a mix: each message's kind, 0 for plain, k + 1 for
    /// the block's k-th `[[traffic.mix]]` entry.
    blocks: Vec<Option<Vec<u8>>>,
}

/// The values a mix draw ranges over.
pub const MIX_DRAWS: u64 = 1_000_000;

impl Mix {
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
pub(super) fn draw(scenario: &Scenario) -> (Vec<Option<Vec<Millis>>>, Mix) {
    let mut offsets = Vec::with_capacity(scenario.traffic.len());
    let mut mix = Mix::default();
    for block in &scenario.traffic {
        let mut rng = ChaCha8Rng::seed_from_u64(scenario.seed);
        rng.set_stream(block.stream);
        offsets.push(match block.arrival {
            Arrival::Poisson if block.count > 0 => {
                let mut drawn: Vec<Millis> = (0..block.count)
                    .map(|_| rng.random_range(0..block.over))
                    .collect();
                // Equal offsets are indistinguishable: an unstable sort
                // gives the same sequence.
                drawn.sort_unstable();
                Some(drawn)
            }
            _ => None,
        });
        mix.blocks.push((!block.mix.is_empty()).then(|| {
            (0..block.count)
                .map(|_| kind_of(&block.mix, rng.random_range(0..MIX_DRAWS)))
                .collect()
        }));
    }
    (offsets, mix)
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
            faults: Vec::new(),
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
}
