//! Hot/cold separation by write count (`ftl.placement = "write-count:K"`): a page
//! written more often is hotter, and pages of one heat share a stream.
//!
//! ```text
//!   host write of L ──► count[L] += 1 (saturating) ──► class = min(K − 1, ⌊log2 count[L]⌋)
//!                       (written once: 0, 2–3 times: 1, 4–7 times: 2, ...) ──► host stream class
//!   GC copy of L    ──► GC stream gc_first + class of L (known zombies: the zombie stream)
//! ```
//!
//! The counts are of the whole run (no decay): the frequency-based separation the
//! placement literature measures its predictors against. One byte a page.

use super::{classes, GcCopy, HostWrite, Placement, PlacementEntry, StreamPlan, StreamsWanted};

pub(super) const ENTRY: PlacementEntry = PlacementEntry {
    name: "write-count",
    about: "write-count:K (K hot/cold classes by each page's write count, host and GC, K 2-8)",
    future: false,
    streams: |param, regions| {
        let k = classes("write-count", "classes", param, regions, (2, 8))?;
        Ok(StreamsWanted {
            host: Some(k),
            gc: None,
        })
    },
    build: |param, plan| Box::new(WriteCount::new(param.unwrap_or(2), plan)),
};

/// Classes by write count.
#[derive(Clone)]
pub struct WriteCount {
    classes: u32,
    gc_first: u32,
    zombie: Option<u32>,
    count: Vec<u8>,
}

impl WriteCount {
    pub fn new(classes: u32, plan: &StreamPlan) -> Self {
        WriteCount {
            classes,
            gc_first: plan.gc_first,
            zombie: plan.zombie,
            count: vec![0; plan.stored_pages],
        }
    }

    /// The class of page `lpn` now.
    pub fn class(&self, lpn: usize) -> u32 {
        let c = u32::from(self.count[lpn].max(1));
        (31 - c.leading_zeros()).min(self.classes - 1)
    }
}

impl Placement for WriteCount {
    fn host_stream(&mut self, write: &HostWrite) -> u32 {
        let c = &mut self.count[write.lpn];
        *c = c.saturating_add(1);
        self.class(write.lpn)
    }

    fn gc_stream(&mut self, copy: &GcCopy) -> u32 {
        if copy.zombie {
            if let Some(z) = self.zombie {
                return z;
            }
        }
        self.gc_first + self.class(copy.lpn)
    }

    fn memory_bytes(&self) -> usize {
        self.count.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::placement::WriteHint;

    #[test]
    fn classes_double_in_write_count_and_stop_at_k() {
        let plan = StreamPlan {
            host_streams: 3,
            gc_first: 3,
            gc_streams: 3,
            zombie: None,
            logical_pages: 8,
            stored_pages: 8,
            blocks: 64,
            reserve: 2,
            pages_per_block: 64,
        };
        let mut p = WriteCount::new(3, &plan);
        let classes: Vec<u32> = (0..9)
            .map(|i| {
                p.host_stream(&HostWrite {
                    lpn: 5,
                    overwrite: i > 0,
                    hint: WriteHint::NONE,
                    now: i,
                })
            })
            .collect();
        assert_eq!(classes, [0, 1, 1, 2, 2, 2, 2, 2, 2]);
        let copy = GcCopy {
            lpn: 5,
            zombie: false,
            block_modified: 0,
            now: 9,
            from_stream: 2,
        };
        assert_eq!(p.gc_stream(&copy), 3 + 2);
    }
}
