//! SepBIT (Wang et al., *Separating Data via Block Invalidation Time Inference*,
//! FAST'22), `ftl.placement = "sepbit"`: place each write by when it is likely to be
//! invalidated, inferred from the lifespans of the pages it replaces and from its age.
//!
//! ```text
//!   ℓ: the average lifespan (opened → erased, in host page writes) of a batch of 16
//!      reclaimed class-1 blocks, taken anew after each batch; ∞ until the first
//!
//!   host write of L   overwrites a version written v writes ago,
//!                     v < min(ℓ, live pages) ──────────────────────────────► class 1 (stream 0)
//!                     anything else (or L had no flash copy) ─────────────► class 2 (stream 1)
//!   GC copy of L      from a class-1 block ───────────────────────────────► class 3
//!                     else by age a = now − L's last host write:
//!                       a < 4ℓ ──► class 4,   a < 16ℓ ──► class 5,   else ──► class 6
//!                     (classes 3..6: GC streams gc_first + 0..3; known zombies go to
//!                      the zombie stream, as with dac)
//! ```
//!
//! A short-lived page is likely to be replaced by a short-lived page (the user-write
//! rule); a page that has lived long will likely live longer still (the GC rule). The
//! paper's segments are this FTL's blocks; the paper's unit of time, user-written
//! blocks, is host page writes here. The rules are those of the authors' simulator
//! (fallfish/sepbit, `trace_replay`): ℓ from non-overlapping batches of 16, and the
//! user-write test bounded by the FIFO of recent writes it keeps, whose length is
//! `min(ℓ, valid blocks)` — here the pages written so far (the placement sees no
//! trims). It keeps the logical time of each page's last host write (8 bytes a page)
//! and the FTL keeps each block's opening time.

use super::{
    one_region, GcCopy, HostWrite, Placement, PlacementEntry, Reclaimed, StreamPlan, StreamsWanted,
};

pub(super) const ENTRY: PlacementEntry = PlacementEntry {
    name: "sepbit",
    about: "sepbit[:B] (SepBIT, FAST'22: two host classes by the replaced page's lifespan, four GC classes; ℓ averaged over batches of B reclaimed class-1 blocks, default 16, 1-1024)",
    future: false,
    streams: |param, regions| match param {
        Some(b) if !(1..=1024).contains(&b) => Err((
            "ftl.placement".into(),
            format!("`sepbit:{b}`: B, the reclaimed class-1 blocks one ℓ averages, must be at least 1 and at most 1024"),
        )),
        _ => {
            one_region("sepbit", regions)?;
            Ok(StreamsWanted {
                host: Some(2),
                gc: Some(4),
            })
        }
    },
    build: |param, plan| Box::new(SepBit::with_batch(plan, param.map_or(BATCH, u64::from))),
};

/// Reclaimed class-1 blocks whose lifespans one ℓ averages (the paper's and its
/// simulator's 16; `sepbit:B` sets another).
pub const BATCH: u64 = 16;
/// No host write yet.
const NEVER: u64 = u64::MAX;

/// SepBIT's six classes.
#[derive(Clone)]
pub struct SepBit {
    gc_first: u32,
    zombie: Option<u32>,
    /// The logical time of each page's last host write (`NEVER`: none).
    written: Vec<u64>,
    /// Pages written so far.
    live: u64,
    /// Reclaimed class-1 blocks one ℓ averages.
    batch_size: u64,
    /// Reclaimed class-1 blocks of the batch so far, and the sum of their lifespans.
    batch: u64,
    sum: u64,
    /// ℓ, in host page writes (∞ until `WINDOW` blocks have been reclaimed).
    ell: f64,
}

impl SepBit {
    pub fn new(plan: &StreamPlan) -> Self {
        Self::with_batch(plan, BATCH)
    }

    /// SepBIT with ℓ averaged over batches of `batch_size` reclaimed class-1 blocks.
    pub fn with_batch(plan: &StreamPlan, batch_size: u64) -> Self {
        debug_assert_eq!((plan.host_streams, plan.gc_streams), (2, 4));
        SepBit {
            batch_size: batch_size.max(1),
            gc_first: plan.gc_first,
            zombie: plan.zombie,
            written: vec![NEVER; plan.stored_pages],
            live: 0,
            batch: 0,
            sum: 0,
            ell: f64::INFINITY,
        }
    }

    /// ℓ now (host page writes; infinite before the first batch).
    pub fn threshold(&self) -> f64 {
        self.ell
    }
}

impl Placement for SepBit {
    fn host_stream(&mut self, write: &HostWrite) -> u32 {
        let last = std::mem::replace(&mut self.written[write.lpn], write.now);
        if last == NEVER {
            self.live += 1;
        }
        let bound = self.ell.min(self.live as f64);
        if write.overwrite && last != NEVER && ((write.now - last) as f64) < bound {
            0
        } else {
            1
        }
    }

    fn gc_stream(&mut self, copy: &GcCopy) -> u32 {
        if copy.zombie {
            if let Some(z) = self.zombie {
                return z;
            }
        }
        if copy.from_stream == 0 {
            return self.gc_first;
        }
        let last = self.written[copy.lpn];
        let age = if last == NEVER {
            f64::INFINITY
        } else {
            copy.now.saturating_sub(last) as f64
        };
        let class = if age < 4.0 * self.ell {
            1
        } else if age < 16.0 * self.ell {
            2
        } else {
            3
        };
        self.gc_first + class
    }

    fn observes_reclaims(&self) -> bool {
        true
    }

    fn reclaimed(&mut self, block: &Reclaimed) {
        if block.stream != 0 {
            return;
        }
        self.sum += block.now.saturating_sub(block.opened);
        self.batch += 1;
        if self.batch == self.batch_size {
            self.ell = self.sum as f64 / self.batch_size as f64;
            self.batch = 0;
            self.sum = 0;
        }
    }

    fn memory_bytes(&self) -> usize {
        self.written.len() * 8
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::placement::WriteHint;

    fn plan() -> StreamPlan {
        StreamPlan {
            host_streams: 2,
            gc_first: 2,
            gc_streams: 4,
            zombie: None,
            logical_pages: 1_000,
            stored_pages: 1_000,
            blocks: 64,
            reserve: 2,
            pages_per_block: 64,
        }
    }

    fn write(p: &mut SepBit, lpn: usize, overwrite: bool, now: u64) -> u32 {
        p.host_stream(&HostWrite {
            lpn,
            overwrite,
            hint: WriteHint::NONE,
            now,
        })
    }

    fn copy(p: &mut SepBit, lpn: usize, from_stream: u32, now: u64) -> u32 {
        p.gc_stream(&GcCopy {
            lpn,
            zombie: false,
            block_modified: 0,
            now,
            from_stream,
        })
    }

    #[test]
    fn the_classes_follow_the_papers_rules() {
        let mut p = SepBit::new(&plan());
        // ℓ = ∞ at first: an overwrite is class 1 if younger than the pages written
        // so far (the FIFO's length), a first write class 2.
        for lpn in 10..210 {
            write(&mut p, lpn, false, 0);
        }
        assert_eq!(write(&mut p, 1, false, 0), 1);
        assert_eq!(write(&mut p, 1, true, 5), 0);
        // 201 pages written: a version 300 writes old is past the FIFO.
        assert_eq!(write(&mut p, 1, true, 305), 1);
        // 16 class-1 blocks reclaimed after 100 writes each: ℓ = 100.
        for i in 0..BATCH {
            p.reclaimed(&Reclaimed {
                stream: 0,
                opened: i * 10,
                now: i * 10 + 100,
            });
            // Class-2 and GC blocks do not count.
            p.reclaimed(&Reclaimed {
                stream: 3,
                opened: 0,
                now: 5_000,
            });
        }
        assert_eq!(p.threshold(), 100.0);
        // Replacing a version 99 writes old: class 1; 100 writes old: class 2.
        write(&mut p, 2, false, 1_000);
        assert_eq!(write(&mut p, 2, true, 1_099), 0);
        write(&mut p, 3, false, 1_000);
        assert_eq!(write(&mut p, 3, true, 1_100), 1);
        // GC: from a class-1 block, class 3; else by age against 4ℓ and 16ℓ.
        assert_eq!(copy(&mut p, 3, 0, 5_000), 2);
        let at = |age: u64| {
            let mut q = SepBit::new(&plan());
            q.ell = 100.0;
            write(&mut q, 7, false, 10_000);
            copy(&mut q, 7, 1, 10_000 + age) - 2
        };
        assert_eq!(
            [at(0), at(399), at(400), at(1_599), at(1_600)],
            [1, 1, 2, 2, 3]
        );
        // The next batch: 16 lifespans of 300 make ℓ 300.
        for _ in 0..BATCH {
            p.reclaimed(&Reclaimed {
                stream: 0,
                opened: 0,
                now: 300,
            });
        }
        assert_eq!(p.threshold(), 300.0);
    }
}
