//! The placement oracle (`ftl.placement = "oracle:K"`): every page goes to the stream
//! of the time it will actually die, read from the run's future — the ceiling of what
//! placement by predicted lifetime can buy (SepBIT, MiDAS and the write-count classes
//! guess what this knows).
//!
//! ```text
//!   pre-pass (sim::oracle): the measured phase's writes and trims ─► for each host
//!            page write, how many writes later its version dies (∞: never)
//!   measured phase start: every page's current version is told its death
//!            (DeviceEvent::Lifetime), the preconditioned ones included
//!   host write of L, dying in r writes (WriteHint::lifetime) ─► death[L] = now + r
//!   any page of L, host write or GC copy ─► class of r = death[L] − now:
//!            min(K − 1, ⌊log2(1 + 32·r / N)⌋)   (N logical pages: a drive write)
//!            r < N/32: 0,  < 3N/32: 1,  < 7N/32: 2, ...; never (or unknown): K − 1
//!   host streams 0 .. K, GC streams gc_first + class (known zombies: the zombie stream)
//! ```
//!
//! Pages that die together are written together, and GC, copying what survived, sorts
//! the copies again by the time left. What it knows is the device-level request stream,
//! so it runs where `gc.policy = "oracle"` does (no host model; the simulation refuses
//! the rest); writes it was told nothing of (preconditioning before the measured phase
//! starts) count as never dying until the measured phase tells them. 8 bytes a page.
//!
//! `ftl.placement = "oracle"` (no K) is the placement ceiling a study compares against:
//! the best of `oracle:K` for K = 2, 3, 4, 6 and of every real placement the project's
//! schemes run (`sim::oracle::envelope`), so no real placement beats it by construction
//! and the death-ordered members are what knowing the future adds.

use super::{classes, GcCopy, HostWrite, Placement, PlacementEntry, StreamPlan, StreamsWanted};

pub(super) const ENTRY: PlacementEntry = PlacementEntry {
    name: "oracle",
    about: "oracle:K (a ceiling: K streams by each page's actual death time, from the run's future, K 2-8); oracle (the best of oracle:K for K = 2, 3, 4, 6 and every real placement)",
    future: true,
    streams: |param, regions| {
        // The envelope asks for what its largest death-ordered member needs (it is never
        // built: its members are).
        let param = param.or(ENVELOPE_CLASSES.iter().copied().max());
        let k = classes("oracle", "lifetime classes", param, regions, (2, 8))?;
        Ok(StreamsWanted {
            host: Some(k),
            gc: None,
        })
    },
    build: |param, plan| Box::new(DeathOracle::new(param.unwrap_or(2), plan)),
};

/// The classes of the envelope's death-ordered members (`sim::oracle::envelope`).
pub const ENVELOPE_CLASSES: [u32; 4] = [2, 3, 4, 6];

/// Never dies, or nothing is known.
const NEVER: u64 = u64::MAX;

/// Streams by the time each page dies.
#[derive(Clone)]
pub struct DeathOracle {
    classes: u32,
    gc_first: u32,
    zombie: Option<u32>,
    /// A 32nd of a drive write, in host page writes (the first band).
    band: u64,
    /// When each page's current version dies (logical time; `NEVER`).
    death: Vec<u64>,
}

impl DeathOracle {
    pub fn new(classes: u32, plan: &StreamPlan) -> Self {
        DeathOracle {
            classes,
            gc_first: plan.gc_first,
            zombie: plan.zombie,
            band: (plan.logical_pages / 32).max(1),
            death: vec![NEVER; plan.stored_pages],
        }
    }

    /// The class of a page that dies `left` host page writes from now.
    pub fn class(&self, left: u64) -> u32 {
        if left == NEVER {
            return self.classes - 1;
        }
        let bands = 1 + left / self.band;
        (63 - bands.leading_zeros()).min(self.classes - 1)
    }

    fn left(&self, lpn: usize, now: u64) -> u64 {
        match self.death[lpn] {
            NEVER => NEVER,
            d => d.saturating_sub(now),
        }
    }
}

impl Placement for DeathOracle {
    fn host_stream(&mut self, write: &HostWrite) -> u32 {
        self.death[write.lpn] = match write.hint.lifetime {
            Some(r) => write.now.saturating_add(r).min(NEVER - 1),
            None => NEVER,
        };
        self.class(self.left(write.lpn, write.now))
    }

    fn gc_stream(&mut self, copy: &GcCopy) -> u32 {
        if copy.zombie {
            if let Some(z) = self.zombie {
                return z;
            }
        }
        self.gc_first + self.class(self.left(copy.lpn, copy.now))
    }

    fn told_lifetime(&mut self, lpn: usize, left: Option<u64>, now: u64) {
        if let Some(d) = self.death.get_mut(lpn) {
            *d = left.map_or(NEVER, |r| now.saturating_add(r).min(NEVER - 1));
        }
    }

    fn memory_bytes(&self) -> usize {
        self.death.len() * 8
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::placement::WriteHint;

    #[test]
    fn pages_go_to_the_class_of_the_time_they_have_left() {
        let plan = StreamPlan {
            host_streams: 4,
            gc_first: 4,
            gc_streams: 4,
            zombie: None,
            logical_pages: 3_200,
            stored_pages: 3_200,
            blocks: 64,
            reserve: 2,
            pages_per_block: 64,
        };
        let mut p = DeathOracle::new(4, &plan);
        // Bands of 100 writes: 1 + left/100 = 1 → 0, 2..3 → 1, 4..7 → 2, 8.. → 3.
        let classes: Vec<u32> = [0, 99, 100, 299, 300, 699, 700, NEVER]
            .iter()
            .map(|&l| p.class(l))
            .collect();
        assert_eq!(classes, [0, 0, 1, 1, 2, 2, 3, 3]);
        let write = |p: &mut DeathOracle, lifetime: Option<u64>| {
            p.host_stream(&HostWrite {
                lpn: 9,
                overwrite: true,
                hint: WriteHint {
                    stream: None,
                    lifetime,
                },
                now: 1_000,
            })
        };
        assert_eq!(write(&mut p, Some(50)), 0);
        assert_eq!(write(&mut p, None), 3);
        // Written to die in 650 writes: class 2 now; copied by GC 400 writes later,
        // with 250 left, class 1.
        assert_eq!(write(&mut p, Some(650)), 2);
        let copy = GcCopy {
            lpn: 9,
            zombie: false,
            block_modified: 0,
            now: 1_400,
            from_stream: 2,
        };
        assert_eq!(p.gc_stream(&copy), 4 + 1);
        // Told at the start of the measured phase.
        p.told_lifetime(9, Some(10), 2_000);
        assert_eq!(p.gc_stream(&GcCopy { now: 2_000, ..copy }), 4);
        p.told_lifetime(9, None, 2_000);
        assert_eq!(p.gc_stream(&GcCopy { now: 2_000, ..copy }), 4 + 3);
    }
}
