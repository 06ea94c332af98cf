//! The retry delay (docs/model.md section 4 and decision 10.8).

use rand::RngExt;
use rand_chacha::ChaCha8Rng;

use crate::model::{Jitter, Millis, Retry};

/// The wait after the n-th failed delivery of the cycle, n being the
/// message's `cycle_receives`. Draws from the scenario's one generator for
/// the jittered strategies; decorrelated jitter keeps its previous delay in
/// the message's state and starts again from `base` each cycle.
#[inline]
pub(super) fn retry_delay(
    retry: Retry,
    cycle_receives: u32,
    prev_delay: Option<&mut Millis>,
    rng: &mut ChaCha8Rng,
) -> Millis {
    match retry {
        Retry::Fixed(d) => d,
        Retry::Backoff { base, cap, jitter } => {
            let cap = cap.unwrap_or(Millis::MAX);
            let n = cycle_receives.max(1);
            // base * 2^(n-1), saturating: 0 stays 0 however many failures.
            let doubled = match 1u64.checked_shl(n - 1) {
                Some(factor) => base.saturating_mul(factor),
                None if base == 0 => 0,
                None => Millis::MAX,
            };
            let d = doubled.min(cap);
            match jitter {
                Jitter::None => d,
                Jitter::Full => rng.random_range(0..=d),
                Jitter::Equal => {
                    let half = d / 2;
                    half + rng.random_range(0..=half)
                }
                Jitter::Decorrelated => {
                    let mut none = 0;
                    let kept = prev_delay.unwrap_or(&mut none);
                    let previous = if cycle_receives <= 1 { base } else { *kept };
                    let high = previous.saturating_mul(3).max(base);
                    let delay = rng.random_range(base..=high).min(cap);
                    *kept = delay;
                    delay
                }
            }
        }
    }
}
