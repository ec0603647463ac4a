//! The `streams` section: what each write stream of a placement policy took in and
//! gave back over the measured phase (`ftl.placement` other than the default, on a
//! device without FDP).
//!
//! A policy that separates data by lifetime is judged by whether the blocks of each
//! of its streams die together: a stream whose blocks are reclaimed nearly empty
//! separates well; one whose blocks are reclaimed nearly full mixes lifetimes.

use crate::ftl::StreamCounts;
use serde::Serialize;

/// One stream over the measured phase.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct StreamReport {
    /// The stream (host streams first, then GC streams, then the zombie stream).
    pub stream: u32,
    /// Pages the host (or a buffer) wrote to it, and pages GC or refresh copied in.
    pub host_pages: u64,
    pub gc_pages: u64,
    /// Valid pages GC moved out of its blocks.
    pub relocated_pages: u64,
    /// Its blocks GC reclaimed.
    pub reclaimed_blocks: u64,
    /// Their mean share of valid pages when reclaimed (`null`: none reclaimed).
    pub valid_share_at_reclaim: Option<f64>,
}

impl StreamReport {
    /// Every stream that saw anything, from the counts at the end and at the start of
    /// the measured phase, on blocks of `pages_per_block` pages.
    pub fn of(
        end: &[StreamCounts],
        start: Option<&[StreamCounts]>,
        pages_per_block: u32,
    ) -> Vec<StreamReport> {
        end.iter()
            .enumerate()
            .map(|(s, e)| {
                let c = start.and_then(|p| p.get(s)).map_or(*e, |p| e.since(p));
                StreamReport {
                    stream: s as u32,
                    host_pages: c.host_pages,
                    gc_pages: c.gc_pages,
                    relocated_pages: c.relocated_pages,
                    reclaimed_blocks: c.erased_rus,
                    valid_share_at_reclaim: (c.erased_rus > 0).then(|| {
                        c.relocated_pages as f64
                            / (c.erased_rus * u64::from(pages_per_block)) as f64
                    }),
                }
            })
            .filter(|r| r.host_pages + r.gc_pages + r.reclaimed_blocks > 0)
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn streams_are_counted_over_the_measured_phase_and_idle_ones_left_out() {
        let c = |host, gc, relocated, erased| StreamCounts {
            host_pages: host,
            gc_pages: gc,
            relocated_pages: relocated,
            erased_rus: erased,
            relocation_events: 0,
        };
        let start = [c(10, 0, 0, 0), c(0, 5, 2, 1), c(0, 0, 0, 0)];
        let end = [c(110, 0, 8, 4), c(0, 25, 34, 3), c(0, 0, 0, 0)];
        let r = StreamReport::of(&end, Some(&start), 16);
        assert_eq!(r.len(), 2);
        assert_eq!((r[0].host_pages, r[0].reclaimed_blocks), (100, 4));
        assert_eq!(r[0].valid_share_at_reclaim, Some(8.0 / 64.0));
        assert_eq!((r[1].gc_pages, r[1].relocated_pages), (20, 32));
        assert_eq!(r[1].valid_share_at_reclaim, Some(1.0));
    }
}
