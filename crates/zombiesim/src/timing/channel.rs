//! A channel's bus: transfers of the dies on it, each die's in time order.

use std::ops::{Deref, DerefMut};

/// A channel: the bus transfers of each die on it, each die's in time order (a
/// die runs its operations first come, first served, so its transfers append, but
/// for a read that suspends a program or erase, which may go ahead of transfers the
/// die has queued). A transfer takes the earliest time at or after its request when no
/// transfer on the channel overlaps it.
///
/// A search reads each die's list only where it can matter:
/// - each die's first start and last end sit side by side (`spans`), so a die whose
///   transfers all end by the time asked for, or all start after the window, is
///   passed over without touching its list;
/// - a die runs its operations in order, so the times it asks for mostly grow. Where
///   its last search found each other die's first transfer ending after that time is
///   kept as a cursor, with that transfer's start and end: while the time asked for
///   is still before that end, the cursor alone answers (the list is read only when
///   the transfer is in the way); otherwise the search walks on from the cursor
///   instead of bisecting the whole list;
/// - transfers that end by the horizon are forgotten when a search finds it raised,
///   but the lists are only visited for that once it reaches the earliest end at
///   their fronts (`expiry`).
#[derive(Clone, Debug)]
pub(super) struct ChannelTimeline {
    pub(super) dies: Vec<Transfers>,
    /// Each die's first transfer and the end of its last.
    spans: Vec<Span>,
    /// `cursors[q * dies + d]`: where die `q`'s last search found the first transfer
    /// in die `d`'s list ending after the time it asked for.
    cursors: Vec<Cursor>,
    pub(super) total: u64,
    /// The end of the latest transfer reserved on the channel.
    pub(super) last_end: u64,
    /// The horizon the lists were last pruned at.
    pruned: u64,
    /// No list's first transfer ends before this (nothing to forget below it).
    expiry: u64,
}

/// Where a die's transfers on the channel begin and end.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Span {
    /// The first transfer's start and end.
    first: (u64, u64),
    /// The last transfer's end.
    last: u64,
}

/// Where a search found the first transfer of a die's list that ends after `from`
/// (nothing before it ends later): its position, counted from the channel's start,
/// and its start and end when found. While no transfer has been inserted into the
/// list since, it stays the first to end after any time from `from` up to `end`
/// (appends come after it; only the list's last transfer is ever extended, so its end
/// can only have grown); otherwise `position` is a hint for the next search.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Cursor {
    position: u64,
    from: u64,
    start: u64,
    end: u64,
}

/// A cursor that holds no transfer: only its position (the list's front) is a hint.
const UNSET: Cursor = Cursor {
    position: 0,
    from: u64::MAX,
    start: 0,
    end: 0,
};

/// The span of a die with no transfers: it overlaps no window and has nothing to forget.
const NONE: Span = Span {
    first: (u64::MAX, u64::MAX),
    last: 0,
};

/// A die's transfers in time order, as a slice: forgetting from the front moves a
/// start index, and the vector is compacted once half of it is forgotten.
#[derive(Clone, Debug, Default)]
pub(super) struct Transfers {
    held: Vec<(u64, u64)>,
    head: usize,
    /// Transfers forgotten from the front so far: a transfer's position counted from
    /// the channel's start is this plus its index.
    forgotten: u64,
}

impl Transfers {
    fn push_back(&mut self, transfer: (u64, u64)) {
        self.held.push(transfer);
    }

    /// Forget the first `k` transfers.
    fn forget_front(&mut self, k: usize) {
        self.forgotten += k as u64;
        self.head += k;
        if self.head == self.held.len() {
            self.held.clear();
            self.head = 0;
        } else if self.head >= 64 && 2 * self.head >= self.held.len() {
            self.held.drain(..self.head);
            self.head = 0;
        }
    }

    fn insert(&mut self, i: usize, transfer: (u64, u64)) {
        self.held.insert(self.head + i, transfer);
    }
}

impl Deref for Transfers {
    type Target = [(u64, u64)];

    #[inline]
    fn deref(&self) -> &[(u64, u64)] {
        &self.held[self.head..]
    }
}

impl DerefMut for Transfers {
    #[inline]
    fn deref_mut(&mut self) -> &mut [(u64, u64)] {
        &mut self.held[self.head..]
    }
}

impl ChannelTimeline {
    pub(super) fn new(dies: usize) -> Self {
        ChannelTimeline {
            dies: vec![Transfers::default(); dies],
            spans: vec![NONE; dies],
            cursors: vec![UNSET; dies * dies],
            total: 0,
            last_end: 0,
            pruned: 0,
            expiry: u64::MAX,
        }
    }

    /// Forget the transfers that end by `horizon`.
    #[cold]
    fn forget(&mut self, horizon: u64) {
        let mut expiry = u64::MAX;
        for (list, span) in self.dies.iter_mut().zip(&mut self.spans) {
            if span.first.1 <= horizon {
                let k = list.iter().take_while(|&&(_, e)| e <= horizon).count();
                list.forget_front(k);
                match list.first() {
                    Some(&first) => span.first = first,
                    None => *span = NONE,
                }
            }
            expiry = expiry.min(span.first.1);
        }
        self.expiry = expiry;
    }

    /// The earliest start at or after `at` when `len` ns are free on the bus, for a
    /// transfer of die `die`. Transfers that end by `horizon` are forgotten.
    #[inline]
    pub(super) fn earliest(&mut self, die: usize, at: u64, len: u64, horizon: u64) -> u64 {
        if horizon > self.pruned {
            if horizon >= self.expiry {
                self.forget(horizon);
            }
            self.pruned = horizon;
        }
        // Nothing is reserved from `at` on: the bus is free.
        if at >= self.last_end {
            return at;
        }
        let n = self.dies.len();
        let cursors = &mut self.cursors[die * n..(die + 1) * n];
        let mut t = at;
        loop {
            let mut moved = false;
            // The die's own transfers count too: they end by `at`, but for a read
            // suspending a program, which must not overlap the die's queued transfers.
            for (d, span) in self.spans.iter().enumerate() {
                // Nothing overlaps when everything ends by `t` or starts after the window.
                if span.last <= t || span.first.0 >= t + len {
                    continue;
                }
                let cursor = &mut cursors[d];
                let list = &self.dies[d];
                let forgotten = list.forgotten;
                let (s, e) = if cursor.from <= t && t < cursor.end && cursor.position >= forgotten {
                    // The transfer the cursor found is still the first to end after
                    // `t`; its end is read from the list only if it is in the way (it
                    // may have been extended since).
                    if cursor.start >= t + len {
                        continue;
                    }
                    list[(cursor.position - forgotten) as usize]
                } else {
                    let hint = cursor.position.saturating_sub(forgotten) as usize;
                    let i = first_ending_after(list, hint, t);
                    // Some transfer ends after `t` (the span says so).
                    let (s, e) = list[i];
                    *cursor = Cursor {
                        position: forgotten + i as u64,
                        from: t,
                        start: s,
                        end: e,
                    };
                    (s, e)
                };
                if s < t + len {
                    t = e;
                    moved = true;
                }
            }
            if !moved {
                return t;
            }
        }
    }

    /// Reserve `len` ns for `die` (its index on this channel) at or after `at`.
    #[inline]
    pub(super) fn reserve(&mut self, die: usize, at: u64, len: u64, horizon: u64) -> u64 {
        let start = self.earliest(die, at, len, horizon);
        let end = start + len;
        let n = self.spans.len();
        let list = &mut self.dies[die];
        let span = &mut self.spans[die];
        // The list's last transfer ends at `span.last`: the list is read only for an
        // insertion, never to extend or append.
        if list.is_empty() {
            list.push_back((start, end));
            span.first = (start, end);
        } else if span.last == start {
            list.last_mut().expect("not empty").1 = end;
            if list.len() == 1 {
                span.first.1 = end;
            }
        } else if span.last > start {
            // A read that suspends the die's program or erase transfers ahead of the
            // die's queued operations: it goes in its place in time.
            let i = list.partition_point(|&(s, _)| s < start);
            list.insert(i, (start, end));
            if i == 0 {
                span.first = (start, end);
            }
            // Positions in the list have moved, and the new transfer may come before
            // one a cursor holds: every cursor into it keeps only its hint.
            for cursor in self.cursors.iter_mut().skip(die).step_by(n) {
                cursor.from = u64::MAX;
            }
        } else {
            list.push_back((start, end));
        }
        span.last = span.last.max(end);
        self.expiry = self.expiry.min(span.first.1);
        self.total += len;
        self.last_end = self.last_end.max(end);
        start
    }
}

/// The index of the first transfer in `list` (in time order) that ends after `t`,
/// searched from `hint`: forward a few steps when the hint is at or before it, by
/// bisection otherwise.
#[inline]
fn first_ending_after(list: &[(u64, u64)], hint: usize, t: u64) -> usize {
    /// Steps taken forward before the rest is bisected.
    const WALK: usize = 4;
    let hint = hint.min(list.len());
    let ends_by = |&(_, e): &(u64, u64)| e <= t;
    if hint > 0 && list[hint - 1].1 > t {
        return list[..hint].partition_point(ends_by);
    }
    let mut i = hint;
    while i < list.len() && i < hint + WALK {
        if list[i].1 > t {
            return i;
        }
        i += 1;
    }
    i + list[i..].partition_point(ends_by)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn channel_transfers_fill_gaps_between_other_dies_transfers() {
        let mut c = ChannelTimeline::new(2);
        assert_eq!(c.reserve(0, 100, 10, 0), 100);
        assert_eq!(c.reserve(0, 200, 10, 0), 200);
        // Die 1 asks for 95: overlaps die 0's [100, 110), goes after it.
        assert_eq!(c.reserve(1, 95, 10, 0), 110);
        // Die 1 asks for 120: free until die 0's [200, 210).
        assert_eq!(c.reserve(1, 120, 10, 0), 120);
        // Die 1 may take [130, 200) but not 71 ns from 130: that would overlap die 0's
        // [200, 210), so it goes after it.
        assert_eq!(c.clone().earliest(1, 130, 70, 0), 130);
        assert_eq!(c.clone().earliest(1, 130, 71, 0), 210);
        // Die 1 asks for 195 with 10 ns: must pass die 0's [200, 210).
        assert_eq!(c.reserve(1, 195, 10, 0), 210);
        assert_eq!(c.total, 50);
        // Everything ending by the horizon is forgotten.
        assert_eq!(c.reserve(0, 300, 10, 250), 300);
        assert_eq!(c.dies[0].len(), 1);
        assert_eq!(
            c.spans,
            [
                Span {
                    first: (300, 310),
                    last: 310
                },
                NONE
            ]
        );
        assert_eq!(c.dies[1].len(), 0);
    }

    #[test]
    fn a_transfer_ahead_of_the_dies_queued_ones_goes_in_its_place_and_overlaps_none() {
        let mut c = ChannelTimeline::new(2);
        assert_eq!(c.reserve(0, 100, 10, 0), 100);
        assert_eq!(c.reserve(0, 300, 10, 0), 300);
        // A suspending read of die 0 asks for 295 with 10 ns: its own [300, 310) is
        // in the way, so it goes after it.
        assert_eq!(c.reserve(0, 295, 10, 0), 310);
        // One that fits before the queued transfer is inserted in time order.
        assert_eq!(c.reserve(0, 200, 10, 0), 200);
        let starts: Vec<u64> = c.dies[0].iter().map(|&(s, _)| s).collect();
        assert_eq!(starts, [100, 200, 300]);
        assert_eq!(c.dies[0][2], (300, 320));
        // Die 1 at 195 for 10 ns now passes die 0's [200, 210).
        assert_eq!(c.reserve(1, 195, 10, 0), 210);
    }

    #[test]
    fn a_cursor_forgets_the_transfer_it_found_when_the_horizon_passes_it() {
        let mut c = ChannelTimeline::new(2);
        for at in [50, 100, 300] {
            assert_eq!(c.reserve(0, at, 10, 0), at);
        }
        // Die 1's search from 70 finds die 0's [100, 110) first to end after it, and
        // fits before it.
        assert_eq!(c.reserve(1, 70, 10, 0), 70);
        // The horizon reaches 110: [50, 60) and [100, 110) are forgotten, so 250 ns from
        // 75 are in the way of die 0's [300, 310) only.
        assert_eq!(c.reserve(1, 75, 250, 110), 310);
        assert_eq!(c.dies[0].len(), 1);
    }

    #[test]
    fn a_cursor_sees_a_transfer_inserted_ahead_of_the_one_it_found() {
        let mut c = ChannelTimeline::new(2);
        assert_eq!(c.reserve(0, 100, 10, 0), 100);
        assert_eq!(c.reserve(0, 300, 10, 0), 300);
        // Die 1's search from 150 finds die 0's [300, 310) as the first to end after it.
        assert_eq!(c.reserve(1, 150, 10, 0), 150);
        // Die 0 transfers ahead of its queued [300, 310) (a suspending read).
        assert_eq!(c.reserve(0, 200, 10, 0), 200);
        // Die 1 asks for 195: die 0's new [200, 210) is in the way.
        assert_eq!(c.reserve(1, 195, 10, 0), 210);
    }

    /// The definition, on each die's transfers kept as plain lists under the same
    /// rules (a die's transfer that starts where its last ends extends it; those that
    /// end by a raised horizon are forgotten): the earliest start at or after `at`
    /// whose `len` ns overlap no transfer of any die.
    #[derive(Default)]
    struct Model {
        dies: Vec<Vec<(u64, u64)>>,
        horizon: u64,
    }

    impl Model {
        fn reserve(&mut self, die: usize, at: u64, len: u64, horizon: u64) -> u64 {
            if horizon > self.horizon {
                for list in &mut self.dies {
                    list.retain(|&(_, e)| e > horizon);
                }
                self.horizon = horizon;
            }
            let mut t = at;
            while let Some(e) = self
                .dies
                .iter()
                .flatten()
                .filter(|&&(s, e)| s < t + len && e > t)
                .map(|&(_, e)| e)
                .max()
            {
                t = e;
            }
            let list = &mut self.dies[die];
            match list.last_mut() {
                Some(last) if last.1 == t => last.1 = t + len,
                _ => {
                    list.push((t, t + len));
                    list.sort_unstable();
                }
            }
            t
        }
    }

    proptest! {
        /// Any sequence of reservations, by dies that ask for times going forward and
        /// back, before and after the horizon, lands where the definition says, and
        /// leaves the same transfers.
        #[test]
        fn reservations_land_where_the_definition_says(
            steps in prop::collection::vec((0usize..4, 0u64..3000, 1u64..40, 0u64..80), 1..300),
        ) {
            let mut c = ChannelTimeline::new(4);
            let mut model = Model { dies: vec![Vec::new(); 4], horizon: 0 };
            let mut horizon = 0;
            for (die, ahead, len, advance) in steps {
                horizon += advance;
                let at = (horizon + ahead).saturating_sub(300);
                prop_assert_eq!(c.reserve(die, at, len, horizon), model.reserve(die, at, len, horizon));
                for (d, list) in c.dies.iter().enumerate() {
                    let held: Vec<(u64, u64)> = list.iter().copied().collect();
                    prop_assert_eq!(&held, &model.dies[d]);
                }
            }
        }
    }
}
