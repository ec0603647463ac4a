//! A channel's bus: transfers of the dies on it, each die's in time order.

use std::collections::VecDeque;

/// A channel: the bus transfers of each die on it, each die's in time order (a
/// die runs its operations first come, first served, so its transfers append, but
/// for a read that suspends a program or erase, which may go ahead of transfers the
/// die has queued). A transfer takes the earliest time at or after its request when no
/// transfer on the channel overlaps it.
#[derive(Clone, Debug)]
pub(super) struct ChannelTimeline {
    pub(super) dies: Vec<VecDeque<(u64, u64)>>,
    pub(super) total: u64,
    /// The end of the latest transfer reserved on the channel.
    pub(super) last_end: u64,
    /// The horizon the lists were last pruned at.
    pruned: u64,
}

impl ChannelTimeline {
    pub(super) fn new(dies: usize) -> Self {
        ChannelTimeline {
            dies: vec![VecDeque::new(); dies],
            total: 0,
            last_end: 0,
            pruned: 0,
        }
    }

    /// The earliest start at or after `at` when `len` ns are free on the bus.
    /// Transfers that end by `horizon` are forgotten.
    #[inline]
    pub(super) fn earliest(&mut self, at: u64, len: u64, horizon: u64) -> u64 {
        if horizon > self.pruned {
            for list in self.dies.iter_mut() {
                while list.front().is_some_and(|&(_, e)| e <= horizon) {
                    list.pop_front();
                }
            }
            self.pruned = horizon;
        }
        // Nothing is reserved from `at` on: the bus is free.
        if at >= self.last_end {
            return at;
        }
        let mut t = at;
        loop {
            let mut moved = false;
            // The die's own transfers count too: they end by `at`, but for a read
            // suspending a program, which must not overlap the die's queued transfers.
            for list in self.dies.iter() {
                // Nothing overlaps when everything ends by `t` or starts after the window.
                match (list.front(), list.back()) {
                    (Some(&(first, _)), Some(&(_, last))) if last > t && first < t + len => {}
                    _ => continue,
                }
                let i = list.partition_point(|&(_, e)| e <= t);
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
        let start = self.earliest(at, len, horizon);
        let list = &mut self.dies[die];
        match list.back_mut() {
            Some(last) if last.1 == start => last.1 = start + len,
            Some(last) if last.1 > start => {
                // A read that suspends the die's program or erase transfers ahead of
                // the die's queued operations: it goes in its place in time.
                let i = list.partition_point(|&(s, _)| s < start);
                list.insert(i, (start, start + len));
            }
            _ => list.push_back((start, start + len)),
        }
        self.total += len;
        self.last_end = self.last_end.max(start + len);
        start
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
        assert_eq!(c.clone().earliest(130, 70, 0), 130);
        assert_eq!(c.clone().earliest(130, 71, 0), 210);
        // Die 1 asks for 195 with 10 ns: must pass die 0's [200, 210).
        assert_eq!(c.reserve(1, 195, 10, 0), 210);
        assert_eq!(c.total, 50);
        // Everything ending by the horizon is forgotten.
        assert_eq!(c.reserve(0, 300, 10, 250), 300);
        assert_eq!(c.dies[0].len(), 1);
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
}
