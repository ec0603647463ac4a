//! Policies over the order in which blocks were closed: FIFO and windowed greedy.

use super::{BlockStats, SelectCtx, VictimPolicy};

use std::collections::VecDeque;

/// FIFO (least-recently-written) cleaning: the oldest closed block.
#[derive(Clone, Default)]
pub struct Fifo {
    queue: VecDeque<u32>,
}

impl VictimPolicy for Fifo {
    fn insert(&mut self, stats: &BlockStats) {
        let block = stats.block;
        self.queue.push_back(block);
    }

    fn select(&mut self, _ctx: &mut SelectCtx) -> Option<u32> {
        self.queue.pop_front()
    }

    fn len(&self) -> usize {
        self.queue.len()
    }
}

/// Windowed greedy: the fewest valid pages among the `w` oldest closed blocks.
#[derive(Clone)]
pub struct WindowedGreedy {
    window: usize,
    queue: VecDeque<u32>,
    scored: u64,
}

impl WindowedGreedy {
    pub fn new(window: u32) -> Self {
        WindowedGreedy {
            window: window.max(1) as usize,
            queue: VecDeque::new(),
            scored: 0,
        }
    }
}

impl VictimPolicy for WindowedGreedy {
    fn insert(&mut self, stats: &BlockStats) {
        let block = stats.block;
        self.queue.push_back(block);
    }

    fn select(&mut self, ctx: &mut SelectCtx) -> Option<u32> {
        let n = self.window.min(self.queue.len());
        self.scored = n as u64;
        let pos = (0..n).min_by_key(|&i| {
            let b = self.queue[i];
            (ctx.flash.valid_count[b as usize], b)
        })?;
        self.queue.remove(pos)
    }

    fn len(&self) -> usize {
        self.queue.len()
    }

    fn last_scored(&self) -> u64 {
        self.scored
    }
}
