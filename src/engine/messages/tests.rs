use super::*;

/// Every field of a state, set to values that fit the record or not.
fn states() -> Vec<MessageState> {
    let mut all = vec![MessageState::new()];
    let mut s = MessageState::new();
    s.state = State::Acked;
    s.cycle_receives = 3;
    s.total_receives = 3;
    s.effects = 2;
    s.dedup_hits = 1;
    s.set_failure(7, Class::Permanent);
    s.set_acked_at(u32::MAX as Millis);
    all.push(s);
    let mut q = MessageState::new();
    q.state = State::Quarantined;
    q.cycle_receives = 255;
    q.total_receives = 255;
    q.effects = 255;
    q.set_quarantined_at(1_000);
    q.quarantine_entries = 1;
    // The last reason the record holds, beside a deduplication hit.
    q.set_failure(126, Class::Transient);
    q.dedup_hits = 1;
    all.push(q);
    // A log record's skipped message: the ninth state, in the record.
    let mut k = MessageState::new();
    k.state = State::Skipped;
    k.cycle_receives = 2;
    k.total_receives = 2;
    k.set_failure(3, Class::Transient);
    all.push(k);
    // Each of these needs the side table.
    let tweaks: [fn(&mut MessageState); 14] = [
        |s| s.cycle = 2,
        |s| s.cycle_receives = 0,
        |s| s.total_receives = 256,
        |s| s.effects = 256,
        |s| s.dedup_hits = 2,
        |s| s.set_failure(127, Class::Transient),
        |s| s.set_failure(255, Class::Transient),
        |s| s.set_acked_at(u32::MAX as Millis + 1),
        |s| s.set_quarantined_at(5),
        |s| s.quarantine_entries = 2,
        |s| {
            s.set_key(KeyRef {
                intent: 3,
                generation: 0,
            })
        },
        |s| {
            s.set_key(KeyRef {
                intent: 0,
                generation: 1,
            })
        },
        |s| s.set_failure(ReasonIndex::MAX - 1, Class::Permanent),
        // No reason (the sentinel) with a permanent class.
        |s| s.set_failure(ReasonIndex::MAX, Class::Permanent),
    ];
    for tweak in tweaks {
        let mut t = s;
        tweak(&mut t);
        all.push(t);
    }
    all
}

#[test]
fn every_state_reads_back_as_it_was_stored() {
    let mut messages = Messages::new(2);
    for (i, s) in states().into_iter().enumerate() {
        messages.update(1, |state| *state = s);
        assert_eq!(messages.get(1), s, "state {i}");
        assert_eq!(messages.state(1), s.state, "state {i}");
        assert_eq!(messages.cycle_receives(1), s.cycle_receives, "state {i}");
        assert_eq!(messages.acked_at(1), s.acked_at(), "state {i}");
        assert_eq!(messages.get(0), MessageState::new());
        assert_eq!(messages.arrived(), s.has_arrived() as u64, "state {i}");
    }
    // Back to a state that fits: still read right from the side table.
    messages.update(1, |state| *state = MessageState::new());
    assert_eq!(messages.get(1), MessageState::new());
    assert_eq!(messages.in_side_table(), 1);
    assert_eq!(messages.arrived(), 0);
    // Waiting again after a delivery (a retry not yet due): arrived,
    // in the record and in the side table.
    let mut retrying = MessageState::new();
    retrying.cycle_receives = 1;
    retrying.total_receives = 1;
    messages.update(0, |state| *state = retrying);
    messages.update(1, |state| *state = retrying);
    assert_eq!(messages.arrived(), 2);
    assert_eq!(std::mem::size_of::<Compact>(), 8);
}

/// The record holds the first 127 reasons and a deduplication hit
/// together (they share a byte), and every state; reason 127 on goes to
/// the side table.
#[test]
fn the_record_holds_reasons_below_127_and_every_state() {
    let mut messages = Messages::new(1);
    let mut s = MessageState::new();
    s.cycle_receives = 1;
    s.total_receives = 1;
    s.dedup_hits = 1;
    for state in State::ALL {
        for (reason, side) in [(0, false), (126, false), (127, true)] {
            let mut t = s;
            t.state = state;
            t.set_failure(reason, Class::Permanent);
            let mut fresh = Messages::new(1);
            fresh.update(0, |x| *x = t);
            assert_eq!(fresh.get(0), t, "{state:?} reason {reason}");
            assert_eq!(
                fresh.in_side_table(),
                usize::from(side),
                "{state:?} reason {reason}"
            );
        }
    }
    // The fast path keeps the hit when it sets a reason.
    messages.update(0, |x| *x = s);
    messages.set_failure(0, 126, Class::Transient);
    assert_eq!(messages.get(0).dedup_hits, 1);
    assert_eq!(messages.get(0).last_reason(), Some(126));
}

#[test]
fn the_fast_operations_equal_changing_the_full_state() {
    for s in states() {
        let mut fast = Messages::new(1);
        fast.update(0, |state| *state = s);
        assert_eq!(fast.in_side_table() == 1, Compact::encode(&s).is_none());
        let mut expected = s;
        let got = fast.receive(0);
        expected.cycle_receives = expected.cycle_receives.saturating_add(1);
        expected.total_receives = expected.total_receives.saturating_add(1);
        assert_eq!(
            got,
            (
                expected.cycle,
                expected.cycle_receives,
                expected.total_receives
            )
        );
        fast.set_failure(0, 9, Class::Permanent);
        expected.set_failure(9, Class::Permanent);
        assert_eq!(fast.add_effect(0), expected.cycle);
        expected.effects = expected.effects.saturating_add(1);
        fast.set_acked_at(0, 77);
        expected.set_acked_at(77);
        fast.set_state(0, State::Acked);
        expected.state = State::Acked;
        assert_eq!(fast.get(0), expected);
        assert_eq!(fast.acked_at(0), expected.acked_at());
    }
}

#[test]
fn entering_quarantine_equals_changing_the_full_state() {
    // Every state, and times in and past the record's 32 bits.
    for s in states() {
        for t in [0, 5_000, u32::MAX as Millis, u32::MAX as Millis + 1] {
            let mut fast = Messages::new(1);
            fast.update(0, |state| *state = s);
            let mut expected = s;
            fast.enter_quarantine(0, t);
            expected.set_quarantined_at(t);
            expected.quarantine_entries += 1;
            assert_eq!(fast.get(0), expected, "{s:?} at {t}");
            // A second entry (after a redrive) is the side table's.
            fast.enter_quarantine(0, t);
            expected.quarantine_entries += 1;
            assert_eq!(fast.get(0), expected, "{s:?} twice at {t}");
            assert_eq!(fast.in_side_table(), 1);
        }
    }
}

#[test]
fn a_first_delivery_in_one_write_equals_its_steps_one_by_one() {
    for t in [0, 5_000, u32::MAX as Millis, u32::MAX as Millis + 1] {
        let mut fast = Messages::new(2);
        let mut slow = Messages::new(2);
        let fits = t <= u32::MAX as Millis;
        assert_eq!(fast.ack_first_delivery(1, t), fits, "at {t}");
        if fits {
            slow.set_state(1, State::Ready);
            slow.receive(1);
            slow.add_effect(1);
            slow.set_acked_at(1, t);
            slow.set_state(1, State::Acked);
        }
        assert_eq!(fast, slow, "at {t}");
        assert_eq!(fast.in_side_table(), 0);
    }
    // A message that arrived before, or whose record is not all zeros,
    // is left alone.
    for s in states() {
        let mut fast = Messages::new(1);
        fast.update(0, |state| *state = s);
        let before = fast.clone();
        let arrived = fast.get(0) != MessageState::new();
        assert_eq!(fast.ack_first_delivery(0, 5_000), !arrived, "{s:?}");
        if arrived {
            assert_eq!(fast, before, "{s:?}");
        }
    }
    let mut ready = Messages::new(1);
    ready.set_state(0, State::Ready);
    assert!(!ready.ack_first_delivery(0, 5_000));
    assert_eq!(ready.get(0).state, State::Ready);
}
