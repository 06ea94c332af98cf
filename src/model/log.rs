//! A partitioned log as the source (docs/model.md section 23): its
//! partitions, the delivery guarantee, the checkpoint interval, the
//! restarts, and Kafka's default partitioner.

use super::Millis;

/// `[log] guarantee`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Guarantee {
    /// Checkpoints every interval commit every partition's position.
    #[default]
    AtLeastOnce,
    /// The position is committed past a record when its first delivery of
    /// the current attempt starts.
    AtMostOnce,
    /// As at-least-once, with the sink writes since the last checkpoint in
    /// one transaction that a restart aborts.
    ExactlyOnce,
}

impl Guarantee {
    pub const ALL: [Guarantee; 3] = [
        Guarantee::AtLeastOnce,
        Guarantee::AtMostOnce,
        Guarantee::ExactlyOnce,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Guarantee::AtLeastOnce => "at_least_once",
            Guarantee::AtMostOnce => "at_most_once",
            Guarantee::ExactlyOnce => "exactly_once",
        }
    }
}

/// Where a restarted partition resumes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Resume {
    /// The latest checkpoint at or before the restart (at-most-once: the
    /// committed position).
    Committed,
    /// The latest checkpoint at or before `at - age`.
    Stale(Millis),
    /// Offset 0.
    Earliest,
    /// The log end at the restart.
    Latest,
    /// The restart's own `offsets`, one per restarted partition (section
    /// 28.10).
    Offsets,
}

impl Resume {
    pub fn as_str(self) -> &'static str {
        match self {
            Resume::Committed => "committed",
            Resume::Stale(_) => "stale",
            Resume::Earliest => "earliest",
            Resume::Latest => "latest",
            Resume::Offsets => "offsets",
        }
    }
}

/// One `[[restart]]` of the consumer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Restart {
    pub at: Millis,
    pub down_for: Millis,
    pub resume: Resume,
    /// Records skipped past the resume position (capped at the log end).
    pub skip: u64,
    /// The one partition restarted; `None`: every partition.
    pub partition: Option<u32>,
    /// With [`Resume::Offsets`]: each restarted partition's resume offset,
    /// and (possibly empty) where its replay ends.
    pub offsets: Vec<u64>,
    pub replay_until: Vec<u64>,
}

/// `[log]` and its `[[restart]]`s, validated.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Log {
    pub partitions: u32,
    pub guarantee: Guarantee,
    /// Required with at_least_once and exactly_once; `None` with
    /// at_most_once.
    pub checkpoint_interval: Option<Millis>,
    pub service_time: Millis,
    /// In time order.
    pub restarts: Vec<Restart>,
    /// A record not done when a restart comes keeps its cycle's receive
    /// count (section 28.4); false: a fresh attempt.
    pub carry_attempts: bool,
    /// The checkpoints that fail (section 28.7).
    pub checkpoint_failures: super::CheckpointFailures,
    /// The producer that appends the records (section 28.6).
    pub producer: Producer,
    /// Whether each completed checkpoint is a transition (section 28.13):
    /// `[log] checkpoint_events`, or a file with `[[checkpoint_failure]]`.
    pub checkpoint_events: bool,
}

/// `[producer]` (section 28.6): how an append whose acknowledgement was
/// lost is retried.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Producer {
    /// The broker recognises a retry (producer id and sequence) and
    /// appends nothing; false: each retry appends a duplicate record.
    pub idempotence: bool,
    pub retry_backoff: Millis,
    /// Whether some message loses an append's acknowledgement: without
    /// one the producer changes nothing.
    pub retries: bool,
    /// Whether the file writes `[producer]` or a `lose_append_ack` fault:
    /// its measures are listed.
    pub written: bool,
}

/// Kafka's `retry.backoff.ms` default.
pub const DEFAULT_RETRY_BACKOFF: Millis = 100;
/// The most appends of one message that may lose their acknowledgement.
pub const MAX_LOST_APPEND_ACKS: u64 = 1000;

/// The most partitions a log may have.
pub const MAX_PARTITIONS: u32 = 1024;
/// The most `[[restart]]` entries a file may have.
pub const MAX_RESTARTS: usize = 100;
/// The most `[dedup] restarts` a file may list (section 28.5).
pub const MAX_STORE_RESTARTS: usize = 100;

/// Kafka's murmur2 of `data` (seed 0x9747b28c), as the signed 32-bit
/// number Kafka's `Utils.murmur2` returns.
pub fn murmur2(data: &[u8]) -> i32 {
    const SEED: u32 = 0x9747_b28c;
    const M: u32 = 0x5bd1_e995;
    const R: u32 = 24;
    let length = data.len() as u32;
    let mut h: u32 = SEED ^ length;
    let mut chunks = data.chunks_exact(4);
    for chunk in &mut chunks {
        let mut k = u32::from_le_bytes([chunk[0], chunk[1], chunk[2], chunk[3]]);
        k = k.wrapping_mul(M);
        k ^= k >> R;
        k = k.wrapping_mul(M);
        h = h.wrapping_mul(M);
        h ^= k;
    }
    let rest = chunks.remainder();
    if rest.len() >= 3 {
        h ^= (rest[2] as u32) << 16;
    }
    if rest.len() >= 2 {
        h ^= (rest[1] as u32) << 8;
    }
    if !rest.is_empty() {
        h ^= rest[0] as u32;
        h = h.wrapping_mul(M);
    }
    h ^= h >> 13;
    h = h.wrapping_mul(M);
    h ^= h >> 15;
    h as i32
}

/// [`murmur2`] fed in pieces, for a key whose bytes are not in one place
/// (a prefix, then digits): the same hash as of the pieces joined, without
/// joining them. The length comes first, as murmur2 starts from it.
#[derive(Debug, Clone, Copy)]
pub struct Murmur2 {
    h: u32,
    chunk: u32,
    filled: u32,
}

impl Murmur2 {
    const M: u32 = 0x5bd1_e995;

    /// A hash of `length` bytes, to be fed.
    pub fn new(length: usize) -> Self {
        Murmur2 {
            h: 0x9747_b28c ^ length as u32,
            chunk: 0,
            filled: 0,
        }
    }

    pub fn feed(&mut self, mut bytes: &[u8]) {
        // A chunk begun by the bytes before, completed one byte at a time;
        // then whole chunks; then the start of the next.
        while self.filled != 0 {
            let Some((&b, rest)) = bytes.split_first() else {
                return;
            };
            self.take(b);
            bytes = rest;
        }
        let mut chunks = bytes.chunks_exact(4);
        for chunk in &mut chunks {
            self.mix(u32::from_le_bytes([chunk[0], chunk[1], chunk[2], chunk[3]]));
        }
        for &b in chunks.remainder() {
            self.take(b);
        }
    }

    fn take(&mut self, b: u8) {
        self.chunk |= u32::from(b) << (8 * self.filled);
        self.filled += 1;
        if self.filled == 4 {
            self.mix(self.chunk);
            self.chunk = 0;
            self.filled = 0;
        }
    }

    fn mix(&mut self, chunk: u32) {
        let mut k = chunk.wrapping_mul(Self::M);
        k ^= k >> 24;
        k = k.wrapping_mul(Self::M);
        self.h = self.h.wrapping_mul(Self::M) ^ k;
    }

    /// The hash, as [`murmur2`] returns it (the bytes fed must number the
    /// length given).
    pub fn finish(self) -> i32 {
        let mut h = self.h;
        if self.filled > 0 {
            h ^= self.chunk;
            h = h.wrapping_mul(Self::M);
        }
        h ^= h >> 13;
        h = h.wrapping_mul(Self::M);
        h ^= h >> 15;
        h as i32
    }
}

/// Kafka's default partition of a key: toPositive(murmur2(key)) mod
/// `partitions`.
pub fn partition_of(key: &str, partitions: u32) -> u32 {
    (murmur2(key.as_bytes()) as u32 & 0x7fff_ffff) % partitions.max(1)
}

/// [`partition_of`] for one partition count, many keys: the remainder by
/// a multiplication instead of a division (Lemire's fastmod, exact for
/// every 32-bit value), which the log runs per record.
#[derive(Debug, Clone, Copy)]
pub struct Partitioner {
    partitions: u32,
    inverse: u64,
}

impl Partitioner {
    pub fn new(partitions: u32) -> Self {
        let partitions = partitions.max(1);
        Partitioner {
            partitions,
            inverse: (u64::MAX / u64::from(partitions)).wrapping_add(1),
        }
    }

    /// The partition of a key.
    pub fn partition(&self, key: &[u8]) -> u32 {
        self.of_hash(murmur2(key))
    }

    /// The partition of a key's murmur2 hash.
    pub fn of_hash(&self, hash: i32) -> u32 {
        let hash = hash as u32 & 0x7fff_ffff;
        let low = self.inverse.wrapping_mul(u64::from(hash));
        ((u128::from(low) * u128::from(self.partitions)) >> 64) as u32
    }
}

/// Each message's partition under its own key, in message order, into
/// `out` (one entry a message): a message's named `partition` where it
/// has one, else its key's murmur2 placement. A generated message's id is
/// its prefix and number, and those numbers count up in order: ids are
/// kept in a few buffers whose decimal digits are counted up in place and
/// hashed four bytes at a time, with no name put together per message.
pub fn own_partitions(
    scenario: &crate::model::Scenario,
    partitioner: Partitioner,
    out: &mut [u16],
) {
    for (m, spec) in scenario.messages.iter().enumerate() {
        out[m] = match spec.partition {
            Some(p) => p as u16,
            None => partitioner
                .partition(scenario.intent_name(scenario.intent(m as u32)).as_bytes())
                as u16,
        };
    }
    // Four ids in turn, each counted up by four after it is hashed: an id
    // is hashed long after its digits were stored, never while the stores
    // are still on their way (a word read across bytes just written waits
    // for them: that wait was 40% of the time here).
    const LANES: usize = 4;
    for block in &scenario.traffic {
        let first = block.first_index as usize;
        let slots = &mut out[first..first + block.count as usize];
        if let Some(p) = block.partition {
            slots.fill(p as u16);
            continue;
        }
        let from = block.id_prefix.len();
        let mut ids: [Vec<u8>; LANES] =
            std::array::from_fn(|lane| format!("{}{}", block.id_prefix, lane + 1).into_bytes());
        let mut groups = slots.chunks_exact_mut(LANES);
        for group in &mut groups {
            // Four independent hashes: the processor overlaps them.
            for (slot, id) in group.iter_mut().zip(&ids) {
                *slot = partitioner.partition(id) as u16;
            }
            for id in &mut ids {
                count_up(id, from, LANES as u8);
            }
        }
        for (slot, id) in groups.into_remainder().iter_mut().zip(&ids) {
            *slot = partitioner.partition(id) as u16;
        }
    }
}

/// Adds `n` (at most 9) to the decimal number that `id` ends with, from
/// byte `from`.
fn count_up(id: &mut Vec<u8>, from: usize, n: u8) {
    let mut carry = n;
    for at in (from..id.len()).rev() {
        let digit = id[at] + carry;
        if digit <= b'9' {
            id[at] = digit;
            return;
        }
        id[at] = digit - 10;
        carry = 1;
    }
    id.insert(from, b'0' + carry);
}

/// A field of `[expect.partition.N]`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum PartitionField {
    /// Records appended (the next offset).
    EndOffset,
    /// The position of the last checkpoint (at-most-once: the committed
    /// position).
    Committed,
}

impl PartitionField {
    pub const ALL: [PartitionField; 2] = [PartitionField::EndOffset, PartitionField::Committed];

    pub fn name(self) -> &'static str {
        match self {
            PartitionField::EndOffset => "end_offset",
            PartitionField::Committed => "committed",
        }
    }
}

/// A field of `[expect.restart.N]`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum RestartField {
    /// Each restarted partition's resume position, by partition.
    ResumePositions,
    /// The time of the checkpoint it resumed from (none: no checkpoint).
    CheckpointTime,
    /// With `replay_until` (section 28.10): where the restarted
    /// partitions' replays jumped back, in partition order, those that did
    /// (none: no replay ended with a jump).
    ReplayedUntil,
}

impl RestartField {
    pub const ALL: [RestartField; 3] = [
        RestartField::ResumePositions,
        RestartField::CheckpointTime,
        RestartField::ReplayedUntil,
    ];

    pub fn name(self) -> &'static str {
        match self {
            RestartField::ResumePositions => "resume_positions",
            RestartField::CheckpointTime => "checkpoint_time",
            RestartField::ReplayedUntil => "replayed_until",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn murmur2_matches_kafka_s_test_vectors() {
        assert_eq!(murmur2(b"21"), -973932308);
        assert_eq!(murmur2(b"foobar"), -790332482);
        assert_eq!(murmur2(b"abc"), 479470107);
        assert_eq!(murmur2(b"a-little-bit-long-string"), -985981536);
    }

    /// Ids counted up in place (across 9 -> 10, 99 -> 100 and 999 ->
    /// 1000, with and without a prefix) place each message as its id or
    /// key written out does; a named partition wins.
    #[test]
    fn own_partitions_place_each_message_as_its_key_written_out() {
        let file = "[delivery]\nmax_receives = 1\nretry_interval = \"1s\"\n\
            [log]\npartitions = 7\ncheckpoint_interval = \"1s\"\n\
            [[message]]\nid = \"a\"\nkey = \"order-17\"\n\
            [[message]]\nid = \"b\"\npartition = 5\n\
            [[traffic]]\ncount = 1005\nover = \"1s\"\nid_prefix = \"\"\n\
            [[traffic]]\ncount = 120\nover = \"1s\"\nid_prefix = \"a-rather-long-prefix-of-many-chunks/\"\n\
            [[traffic]]\ncount = 3\nover = \"1s\"\nid_prefix = \"p\"\npartition = 2\n";
        let (s, _) = crate::scenario::load_str("t.toml", file).unwrap();
        let mut out = vec![u16::MAX; s.message_count() as usize];
        own_partitions(&s, Partitioner::new(7), &mut out);
        for (m, &p) in out.iter().enumerate() {
            let id = s.message_id(m as u32);
            let want = match id.as_ref() {
                "a" => partition_of("order-17", 7),
                "b" => 5,
                _ if id.starts_with('p') => 2,
                _ => partition_of(&id, 7),
            };
            assert_eq!(u32::from(p), want, "{id}");
        }
        assert_eq!(s.message_id(1006), "1005");
        assert_eq!(
            s.message_id(1126),
            "a-rather-long-prefix-of-many-chunks/120"
        );
    }

    #[test]
    fn the_partition_is_the_positive_hash_modulo_the_count() {
        // -973932308 & 0x7fffffff = 1173551340.
        assert_eq!(partition_of("21", 7), 1173551340 % 7);
        assert_eq!(partition_of("abc", 1), 0);
        assert_eq!(
            partition_of("foobar", 3),
            (-790332482i32 as u32 & 0x7fff_ffff) % 3
        );
    }

    use proptest::prelude::any;

    proptest::proptest! {
        #[test]
        fn every_key_lands_in_a_partition(key in ".{0,40}", partitions in 1u32..=MAX_PARTITIONS) {
            let p = partition_of(&key, partitions);
            proptest::prop_assert!(p < partitions);
            proptest::prop_assert_eq!(p, ((murmur2(key.as_bytes()) & 0x7fff_ffff) as u32) % partitions);
            proptest::prop_assert_eq!(Partitioner::new(partitions).partition(key.as_bytes()), p);
        }

        #[test]
        fn murmur2_fed_in_pieces_is_murmur2_of_the_whole(key in proptest::collection::vec(any::<u8>(), 0..40), cuts in proptest::collection::vec(0usize..40, 0..4)) {
            let mut cuts: Vec<usize> = cuts.into_iter().map(|c| c.min(key.len())).collect();
            cuts.sort();
            let mut h = Murmur2::new(key.len());
            let mut from = 0;
            for c in cuts.into_iter().chain([key.len()]) {
                h.feed(&key[from..c]);
                from = c;
            }
            proptest::prop_assert_eq!(h.finish(), murmur2(&key));
        }

        #[test]
        fn the_partitioner_divides_exactly(hash in 0u32..=0x7fff_ffff, partitions in 1u32..=u32::MAX) {
            let d = Partitioner::new(partitions);
            let low = d.inverse.wrapping_mul(u64::from(hash));
            let rem = ((u128::from(low) * u128::from(d.partitions)) >> 64) as u32;
            proptest::prop_assert_eq!(rem, hash % partitions);
        }
    }
}
