//! A channel's bus: transfers of the dies on it, each die's in time order.

use std::collections::VecDeque;

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
///   kept as a cursor, and the next search walks on from there instead of bisecting
///   the whole list;
/// - transfers that end by the horizon are forgotten when a search finds it raised,
///   but the lists are only visited for that once it reaches the earliest end at
///   their fronts (`expiry`).
#[derive(Clone, Debug)]
pub(super) struct ChannelTimeline {
    pub(super) dies: Vec<VecDeque<(u64, u64)>>,
    /// Each die's first transfer and the end of its last.
    spans: Vec<Span>,
    /// Transfers forgotten from the front of each die's list: a transfer's position
    /// counted from the channel's start is this plus its index.
    forgotten: Vec<u64>,
    /// `cursors[q * dies + d]`: the position in die `d`'s list where die `q`'s last
    /// search found the first transfer ending after the time it asked for. A hint:
    /// checked before use.
    cursors: Vec<u64>,
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

/// The span of a die with no transfers: it overlaps no window and has nothing to forget.
const NONE: Span = Span {
    first: (u64::MAX, u64::MAX),
    last: 0,
};

impl ChannelTimeline {
    pub(super) fn new(dies: usize) -> Self {
        ChannelTimeline {
            dies: vec![VecDeque::new(); dies],
            spans: vec![NONE; dies],
            forgotten: vec![0; dies],
            cursors: vec![0; dies * dies],
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
        for ((list, forgotten), span) in self
            .dies
            .iter_mut()
            .zip(&mut self.forgotten)
            .zip(&mut self.spans)
        {
            if span.first.1 <= horizon {
                while list.front().is_some_and(|&(_, e)| e <= horizon) {
                    list.pop_front();
                    *forgotten += 1;
                }
                match list.front() {
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
                let list = &self.dies[d];
                let forgotten = self.forgotten[d];
                let i = first_ending_after(list, cursors[d].saturating_sub(forgotten) as usize, t);
                cursors[d] = forgotten + i as u64;
                if let Some(&(s, e)) = list.get(i) {
                    if s < t + len {
                        t = e;
                        moved = true;
                    }
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
        let list = &mut self.dies[die];
        let span = &mut self.spans[die];
        match list.back_mut() {
            Some(last) if last.1 == start => last.1 = end,
            Some(last) if last.1 > start => {
                // A read that suspends the die's program or erase transfers ahead of
                // the die's queued operations: it goes in its place in time.
                let i = list.partition_point(|&(s, _)| s < start);
                list.insert(i, (start, end));
            }
            _ => list.push_back((start, end)),
        }
        // The first transfer changes when the list had none, when this one went
        // ahead of all, or when it extended the only one.
        if start <= span.first.0 || list.len() == 1 {
            span.first = list[0];
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
fn first_ending_after(list: &VecDeque<(u64, u64)>, hint: usize, t: u64) -> usize {
    /// Steps taken forward before the rest is bisected.
    const WALK: usize = 4;
    let hint = hint.min(list.len());
    if hint > 0 && list[hint - 1].1 > t {
        return bisect(list, 0, hint, t);
    }
    let mut i = hint;
    while i < list.len() && i < hint + WALK {
        if list[i].1 > t {
            return i;
        }
        i += 1;
    }
    bisect(list, i, list.len(), t)
}

/// The index of the first transfer in `list[lo..hi]` that ends after `t` (or `hi`).
#[inline]
fn bisect(list: &VecDeque<(u64, u64)>, mut lo: usize, mut hi: usize, t: u64) -> usize {
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        if list[mid].1 <= t {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    lo
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
