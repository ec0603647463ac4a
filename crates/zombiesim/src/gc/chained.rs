//! Victim selection over a chain of FIFO groups (MiDAS, FAST'24), for a placement
//! policy that sorts blocks into groups by how many GCs their data survived.
//!
//! ```text
//!   placement: host writes ─► G0 ─GC copies─► G1 ─► … ─► G(m−1) ─► tail ─┐
//!                                                                ▲       │ GC copies
//!                                                                └───────┘
//!   selection: a block with no valid page, wherever it is; else the first FIFO
//!              group holding more closed blocks than its quota gives up its
//!              oldest block; when none does, the tail's policy (`gc.policy`)
//!              picks among every other block.
//! ```
//!
//! When the tail's choice is a fully valid block (the groups hold the garbage: they
//! were sized for a workload that has changed), the oldest block of the first group
//! that has one goes instead, so GC never stalls on a chain.
//!
//! The placement sets the groups: each FIFO group's stream and its share of the
//! device's blocks ([`ChainGroup`], read at every selection through
//! [`SelectCtx::chain`]); a unit's quota for a group is that share of the unit's
//! blocks, at least one. A block joins its group's queue when it closes; blocks of any
//! other stream (the tail, known zombies) go to the wrapped policy. When the chain
//! shrinks, the queues of the groups that left it are handed to the wrapped policy;
//! when it grows, blocks the wrapped policy already holds stay there.

use super::{BlockStats, SelectCtx, VictimPolicy};
use crate::flash::FlashState;
use crate::placement::ChainGroup;
use std::collections::VecDeque;

/// A chain of FIFO groups in front of a tail policy.
#[derive(Clone)]
pub struct Chained {
    tail: Box<dyn VictimPolicy>,
    first_block: u32,
    blocks: u32,
    /// The queue of closed blocks of each stream (FIFO groups only), with each
    /// entry's insertion number (an entry whose number is not its block's current
    /// one was taken out of turn), and the live entries per stream.
    queues: Vec<VecDeque<(u32, u32)>>,
    count: Vec<usize>,
    /// Per block (local index): its insertion number.
    seq: Vec<u32>,
    /// Queued blocks that lost their last valid page, to take first.
    empty: Vec<(u32, u32)>,
    /// Which streams are FIFO groups now.
    fifo: Vec<bool>,
    /// Whether each block (local index) sits in a queue.
    queued: Vec<bool>,
    /// The last selection popped a queue.
    popped: bool,
}

impl Chained {
    /// Wrap `tail` for a unit owning blocks `first_block .. first_block + blocks`, with
    /// `streams` streams and the chain as it starts.
    pub fn new(
        tail: Box<dyn VictimPolicy>,
        first_block: u32,
        blocks: u32,
        streams: u32,
        chain: &[ChainGroup],
    ) -> Self {
        let mut fifo = vec![false; streams as usize];
        for g in chain {
            fifo[g.stream as usize] = true;
        }
        Chained {
            tail,
            first_block,
            blocks,
            queues: vec![VecDeque::new(); streams as usize],
            count: vec![0; streams as usize],
            seq: vec![0; blocks as usize],
            empty: Vec::new(),
            fifo,
            queued: vec![false; blocks as usize],
            popped: false,
        }
    }

    /// The unit's quota of closed blocks for a group.
    fn quota(&self, share: f64) -> usize {
        ((share * f64::from(self.blocks)).round() as usize).max(1)
    }

    /// Follow a changed chain: groups that left it hand their blocks to the tail.
    fn follow(&mut self, chain: &[ChainGroup], flash: &FlashState) {
        let same = self.fifo.iter().filter(|&&f| f).count() == chain.len()
            && chain.iter().all(|g| self.fifo[g.stream as usize]);
        if same {
            return;
        }
        let mut now = vec![false; self.fifo.len()];
        for g in chain {
            now[g.stream as usize] = true;
        }
        for (s, &stays) in now.iter().enumerate() {
            if self.fifo[s] && !stays {
                while let Some(block) = self.pop_live(s) {
                    self.tail.insert(&BlockStats::of(block, flash));
                }
            }
        }
        self.fifo = now;
    }

    /// Whether a queue entry is its block's current one.
    fn live(&self, (block, seq): (u32, u32)) -> bool {
        let local = (block - self.first_block) as usize;
        self.queued[local] && self.seq[local] == seq
    }

    /// Take `block` out of stream `s`'s queue.
    fn take(&mut self, block: u32, s: usize) {
        self.queued[(block - self.first_block) as usize] = false;
        self.count[s] -= 1;
    }

    /// The oldest live entry of stream `s`'s queue, taken out.
    fn pop_live(&mut self, s: usize) -> Option<u32> {
        while let Some(entry) = self.queues[s].pop_front() {
            if self.live(entry) {
                self.take(entry.0, s);
                return Some(entry.0);
            }
        }
        None
    }

    fn pop(&mut self, stream: u32) -> Option<u32> {
        let block = self.pop_live(stream as usize)?;
        self.popped = true;
        Some(block)
    }

    /// A queued block that has no valid page left, taken out of its queue.
    fn pop_empty(&mut self, flash: &FlashState) -> Option<u32> {
        while let Some(entry) = self.empty.pop() {
            if self.live(entry) && flash.valid_count[entry.0 as usize] == 0 {
                self.take(entry.0, usize::from(flash.stream[entry.0 as usize]));
                return Some(entry.0);
            }
        }
        None
    }
}

impl VictimPolicy for Chained {
    fn insert(&mut self, stats: &BlockStats) {
        let stream = stats.stream() as usize;
        if self.fifo.get(stream).copied().unwrap_or(false) {
            let local = (stats.block - self.first_block) as usize;
            self.seq[local] = self.seq[local].wrapping_add(1);
            self.queues[stream].push_back((stats.block, self.seq[local]));
            self.count[stream] += 1;
            self.queued[local] = true;
        } else {
            self.tail.insert(stats);
        }
    }

    fn changed(&mut self, stats: &BlockStats) {
        let local = (stats.block - self.first_block) as usize;
        if !self.queued[local] {
            self.tail.changed(stats);
        } else if stats.valid == 0 {
            self.empty.push((stats.block, self.seq[local]));
        }
    }

    fn failure(&self) -> Option<String> {
        self.tail.failure()
    }

    fn select(&mut self, ctx: &mut SelectCtx) -> Option<u32> {
        self.popped = false;
        let chain = ctx.chain;
        self.follow(chain, ctx.flash);
        if let Some(block) = self.pop_empty(ctx.flash) {
            return Some(block);
        }
        let pick = self.tail.select(ctx);
        if pick.is_none() && self.tail.failure().is_some() {
            return None;
        }
        let valid = |b: u32| ctx.flash.valid_count[b as usize];
        // A block with nothing valid is free to take, wherever it is.
        if let Some(block) = pick.filter(|&b| valid(b) == 0) {
            return Some(block);
        }
        let over = chain
            .iter()
            .find(|g| self.count[g.stream as usize] > self.quota(g.share));
        let tail_full = pick.is_some_and(|b| valid(b) == ctx.flash.pages_per_block());
        // The tail's choice unless a group is over its quota, or the tail has nothing
        // to give (the groups were sized for a workload that has changed): then the
        // oldest block of that group, or of the first group that has one.
        let group = over.or_else(|| {
            (tail_full || pick.is_none())
                .then(|| chain.iter().find(|g| self.count[g.stream as usize] > 0))
                .flatten()
        });
        match group {
            Some(g) => {
                let stream = g.stream;
                if let Some(block) = pick {
                    self.tail.insert(&BlockStats::of(block, ctx.flash));
                }
                self.pop(stream)
            }
            None => pick,
        }
    }

    fn len(&self) -> usize {
        self.tail.len() + self.count.iter().sum::<usize>()
    }

    fn advances(&self) -> bool {
        self.popped
    }

    fn last_scored(&self) -> u64 {
        if self.popped {
            1
        } else {
            self.tail.last_scored()
        }
    }
}
