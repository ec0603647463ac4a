//! The default placement: hot/cold regions (DAC, `ftl.regions`) and the zombie
//! block (`gc.zombie_block`, 000).
//!
//! ```text
//!   host write of L   ──► region r(L) += 1 if L is overwritten (up to regions − 1) ──► host stream r(L)
//!   GC copy of L      ──► zombie stream, if L is a known zombie and the zombie block is on
//!                     ──► else region r(L) −= 1 (down to 0) ──────────────────────► GC stream gc_first + r(L)
//! ```
//!
//! With one region every host write goes to stream 0 and every GC copy to the first
//! GC stream (the host's own with `ftl.gc_frontier = "shared"`).

use super::{
    FixedStreams, GcCopy, HostWrite, Placement, PlacementEntry, StreamPlan, StreamsWanted,
};

pub(super) const ENTRY: PlacementEntry = PlacementEntry {
    name: "dac",
    about: "dac (hot/cold regions of ftl.regions and the zombie block; the default)",
    future: false,
    streams: |param, _| match param {
        None => Ok(StreamsWanted::default()),
        Some(_) => Err(("ftl.placement".into(), "`dac` takes no parameter".into())),
    },
    build: |_, plan| Box::new(Dac::new(plan)),
};

/// Hot/cold regions and the zombie block.
#[derive(Clone)]
pub struct Dac {
    regions: u32,
    gc_first: u32,
    zombie: Option<u32>,
    /// The region of each logical page (empty with one region).
    region: Vec<u8>,
}

impl Dac {
    pub fn new(plan: &StreamPlan) -> Self {
        Dac {
            regions: plan.host_streams,
            gc_first: plan.gc_first,
            zombie: plan.zombie,
            region: if plan.host_streams > 1 {
                vec![0; plan.stored_pages]
            } else {
                Vec::new()
            },
        }
    }
}

impl Placement for Dac {
    /// The region's stream, promoting the page one region when it is overwritten.
    #[inline]
    fn host_stream(&mut self, write: &HostWrite) -> u32 {
        if self.regions <= 1 {
            return 0;
        }
        let r = &mut self.region[write.lpn];
        if write.overwrite && (*r as u32) + 1 < self.regions {
            *r += 1;
        }
        *r as u32
    }

    /// The zombie block for a known zombie, else the region's GC stream after
    /// demoting the page one region.
    #[inline]
    fn gc_stream(&mut self, copy: &GcCopy) -> u32 {
        if copy.zombie {
            if let Some(z) = self.zombie {
                return z;
            }
        }
        if self.regions <= 1 {
            return self.gc_first;
        }
        let r = &mut self.region[copy.lpn];
        *r = r.saturating_sub(1);
        self.gc_first + *r as u32
    }

    fn memory_bytes(&self) -> usize {
        self.region.len()
    }

    /// With one region: host writes to stream 0, GC copies to the first GC stream,
    /// known zombies to the zombie stream when there is one.
    fn fixed(&self) -> Option<FixedStreams> {
        (self.regions <= 1).then_some(FixedStreams {
            host: 0,
            gc: self.gc_first,
            zombie: self.zombie.unwrap_or(self.gc_first),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::placement::WriteHint;

    fn plan(regions: u32, zombie: Option<u32>) -> StreamPlan {
        StreamPlan {
            host_streams: regions,
            gc_first: regions,
            gc_streams: regions,
            zombie,
            logical_pages: 64,
            stored_pages: 64,
            blocks: 64,
            reserve: 2,
            pages_per_block: 64,
        }
    }

    #[test]
    fn the_fixed_streams_are_what_the_policy_would_say() {
        for zombie in [None, Some(2)] {
            let mut dac = Dac::new(&plan(1, zombie));
            let fixed = dac.fixed().expect("one region places by the kind of write");
            for (lpn, overwrite, is_zombie) in
                [(3, false, false), (3, true, true), (9, true, false)]
            {
                let write = HostWrite {
                    lpn,
                    overwrite,
                    hint: WriteHint::NONE,
                    now: 7,
                };
                assert_eq!(dac.host_stream(&write), fixed.host);
                let copy = GcCopy {
                    lpn,
                    zombie: is_zombie,
                    block_modified: 0,
                    now: 7,
                    from_stream: 0,
                };
                assert_eq!(dac.gc_stream(&copy), fixed.gc_stream(is_zombie));
            }
        }
        // Regions move pages between streams: no fixed answer.
        assert!(Dac::new(&plan(3, None)).fixed().is_none());
    }
}
