//! Age-class placement of GC copies (`ftl.placement = "gc-age:K"`): a page GC copies
//! goes to one of `K` GC streams by its age — how long ago the host wrote it — so that
//! pages that survived long (cold) are not mixed again with pages that only just
//! survived (warm): the separation of GC-rewritten data by age that SepBIT and MiDAS
//! build on.
//!
//! ```text
//!   host write of L ──► written[L] = now; stream 0
//!   GC copy of L    ──► age = now − written[L]   (host page writes; a drive write = N pages)
//!                       class = min(K − 1, ⌊log2(1 + 4·age / N)⌋)
//!                               age < N/4: 0,  < 3N/4: 1,  < 7N/4: 2, ...  (doubling bands)
//!                   ──► GC stream gc_first + class   (known zombies: the zombie stream, as dac)
//! ```
//!
//! It keeps the logical time of every page's last host write (8 bytes a page).
//!
//! It needs one region (`ftl.regions = 1`) and GC streams of its own
//! (`ftl.gc_frontier = "separate"`).

use super::{classes, GcCopy, HostWrite, Placement, PlacementEntry, StreamPlan, StreamsWanted};

pub(super) const ENTRY: PlacementEntry = PlacementEntry {
    name: "gc-age",
    about: "gc-age:K (GC copies go to K streams by the age of their block, K ≥ 2)",
    future: false,
    streams: |param, regions| {
        let k = classes("gc-age", "age classes", param, regions, (2, 16))?;
        Ok(StreamsWanted {
            host: None,
            gc: Some(k),
        })
    },
    build: |param, plan| Box::new(GcAge::new(param.unwrap_or(2), plan)),
};

/// GC copies by age class.
#[derive(Clone)]
pub struct GcAge {
    classes: u32,
    gc_first: u32,
    zombie: Option<u32>,
    /// A quarter of a drive write, in host page writes (the first band).
    band: u64,
    /// The logical time of each page's last host write.
    written: Vec<u64>,
}

impl GcAge {
    pub fn new(classes: u32, plan: &StreamPlan) -> Self {
        debug_assert_eq!(plan.gc_streams, classes);
        GcAge {
            classes,
            gc_first: plan.gc_first,
            zombie: plan.zombie,
            band: (plan.logical_pages / 4).max(1),
            written: vec![0; plan.stored_pages],
        }
    }

    /// The age class of a page the host wrote `age` host page writes ago.
    pub fn class(&self, age: u64) -> u32 {
        let bands = 1 + age / self.band;
        (63 - bands.leading_zeros()).min(self.classes - 1)
    }
}

impl Placement for GcAge {
    fn host_stream(&mut self, write: &HostWrite) -> u32 {
        self.written[write.lpn] = write.now;
        0
    }

    fn gc_stream(&mut self, copy: &GcCopy) -> u32 {
        if copy.zombie {
            if let Some(z) = self.zombie {
                return z;
            }
        }
        let age = copy.now.saturating_sub(self.written[copy.lpn]);
        self.gc_first + self.class(age)
    }

    fn memory_bytes(&self) -> usize {
        self.written.len() * 8
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classes_double_in_age_and_stop_at_k() {
        let plan = StreamPlan {
            host_streams: 1,
            gc_first: 1,
            gc_streams: 3,
            zombie: None,
            logical_pages: 400,
            stored_pages: 400,
            blocks: 64,
            reserve: 2,
            pages_per_block: 64,
        };
        let p = GcAge::new(3, &plan);
        // Bands of 100 writes: 1 + age/100 = 1 → 0, 2..3 → 1, 4.. → 2 (capped).
        let classes: Vec<u32> = [0, 99, 100, 299, 300, 10_000]
            .iter()
            .map(|&a| p.class(a))
            .collect();
        assert_eq!(classes, [0, 0, 1, 1, 2, 2]);
    }
}
