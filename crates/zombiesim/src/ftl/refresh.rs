//! Retention refresh (003 §3.3): two queues of blocks, one for blocks programmed in
//! normal mode and one for blocks programmed in fast-write mode.
//!
//! ```text
//!   block opened at t (stream s) ──► fast stream?   fast queue   deadline t + (T_fast − D)
//!                                └► normal stream?  normal queue deadline t + (T − D)   (T = 0: not kept)
//!   clock reaches a deadline ──► the block, if still the same fill (not erased and
//!                                reopened since) and closed with valid pages, is refreshed:
//!                                its valid pages move to a normal-mode block (Cause::Refresh),
//!                                and the emptied block is left for GC to erase
//!   restart ──► every fast block holding valid pages (open frontiers too) is refreshed at once
//! ```
//!
//! `T` is the retention of a block (`ftl.retention_s`, `ftl.fast_retention_s`) and `D`
//! the longest power-off the data must survive (`ftl.power_off_s`): a block is
//! refreshed `T − D` after it was opened (its oldest page), so it still holds its
//! data after a power-off of `D` at the worst moment. Both queues are FIFO in open
//! order, so a deadline check costs O(1) per due block. Refresh moves data by
//! remapping (it does not erase the block itself: its pages become invalid and GC
//! reclaims it like any other block, at no copy cost).

use crate::flash::FlashState;
use std::collections::VecDeque;

/// A block whose retention deadline is due at `due` (ns), for the fill that began
/// when it was opened with sequence number `seq`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Entry {
    due: u64,
    block: u32,
    seq: u64,
}

/// The refresh queues of one FTL.
#[derive(Clone, Debug)]
pub struct RefreshQueues {
    /// Refresh interval of normal blocks (`T − D`, ns; 0 = not kept).
    normal_ns: u64,
    /// Refresh interval of fast-written blocks (ns).
    fast_ns: u64,
    normal: VecDeque<Entry>,
    fast: VecDeque<Entry>,
}

impl RefreshQueues {
    /// Queues with refresh intervals `normal_ns` (0: normal blocks are not refreshed)
    /// and `fast_ns`.
    pub fn new(normal_ns: u64, fast_ns: u64) -> Self {
        RefreshQueues {
            normal_ns,
            fast_ns,
            normal: VecDeque::new(),
            fast: VecDeque::new(),
        }
    }

    /// `block` was opened at `now` (sequence `seq`), for fast-write or normal programs.
    #[inline]
    pub fn opened(&mut self, block: u32, seq: u64, now: u64, fast: bool) {
        if fast {
            self.fast.push_back(Entry {
                due: now + self.fast_ns,
                block,
                seq,
            });
        } else if self.normal_ns > 0 {
            self.normal.push_back(Entry {
                due: now + self.normal_ns,
                block,
                seq,
            });
        }
    }

    /// The next block due by `now` that still holds the fill it was queued for (its
    /// entry is removed), with whether it is fast-written; stale entries (the block
    /// was erased since) are dropped on the way.
    pub fn next_due(&mut self, now: u64, flash: &FlashState) -> Option<(u32, bool)> {
        for (queue, fast) in [(&mut self.fast, true), (&mut self.normal, false)] {
            while let Some(e) = queue.front().copied() {
                if e.due > now {
                    break;
                }
                queue.pop_front();
                if flash.open_seq[e.block as usize] == e.seq {
                    return Some((e.block, fast));
                }
            }
        }
        None
    }

    /// Put `block` back with a deadline of `due` (an open block cannot be refreshed
    /// yet: it is looked at again then).
    pub fn defer(&mut self, block: u32, seq: u64, due: u64, fast: bool) {
        let q = if fast {
            &mut self.fast
        } else {
            &mut self.normal
        };
        q.push_back(Entry { due, block, seq });
    }

    /// The interval after which a block of this kind is looked at again when it was
    /// still open at its deadline.
    pub fn retry_ns(&self, fast: bool) -> u64 {
        (if fast { self.fast_ns } else { self.normal_ns } / 16).max(1)
    }

    /// Approximate bytes of memory the queues occupy.
    pub fn memory_bytes(&self) -> usize {
        (self.normal.len() + self.fast.len()) * std::mem::size_of::<Entry>()
    }
}
