//! 000 Figs. 2–3, reconstructed (SPEC §3): four 10-page blocks; greedy copies 9 pages,
//! z-greedy 6, and z-greedy leaves three more pages free once everything is flushed.
//!
//! The blocks and the update block are driven exactly as the text says: GC runs when
//! the update block is the last free one; flushes (and GC copies) go to the current
//! update block; a flush kills the older copy and ends that page's zombie state.

use super::{build, BlockStats, SelectCtx, VictimPolicy};
use crate::config::PolicySpec;
use crate::flash::{FlashState, Geometry};
use rand::SeedableRng;
use std::collections::HashMap;

const PPB: u32 = 10;

struct Example {
    flash: FlashState,
    policy: Box<dyn VictimPolicy>,
    /// Logical page -> physical page.
    l2p: HashMap<u32, u32>,
    /// Logical pages dirty in the host (and known to the device).
    dirty: Vec<u32>,
    update: u32,
    free: Vec<u32>,
    copies: u32,
}

// Logical pages: live 0–4 (block 1), a b c g (block 2), live 10–16 and d e f (block 3).
const A: u32 = 20;
const B: u32 = 21;
const C: u32 = 22;
const D: u32 = 23;
const E: u32 = 24;
const F: u32 = 25;
const G: u32 = 26;

impl Example {
    fn new(policy: PolicySpec) -> Example {
        let mut cfg = crate::Config::preset("default").unwrap();
        cfg.flash.channels = 1;
        cfg.flash.chips_per_channel = 1;
        cfg.flash.blocks_per_plane = 16;
        cfg.flash.pages_per_block = PPB;
        cfg.ftl.over_provisioning = 3.0;
        cfg.gc.low_watermark = 1;
        cfg.gc.high_watermark = 1;
        cfg.ftl.gc_frontier = crate::config::GcFrontier::Shared;
        let geo = Geometry::new(&cfg).unwrap();
        let mut ex = Example {
            flash: FlashState::new(&geo),
            policy: build(policy, crate::config::CbAge::SinceModified, 0, 16, PPB),
            l2p: HashMap::new(),
            dirty: vec![A, B, C, D, E, F, G],
            update: 3,
            free: Vec::new(),
            copies: 0,
        };
        let dead = u32::MAX - 1;
        // Block 1: 5 live, 0 zombie, 5 dead. Block 2: a b c g + 6 dead. Block 3: 7 live + d e f.
        let layout: [&[u32]; 3] = [
            &[0, 1, 2, 3, 4, dead, dead, dead, dead, dead],
            &[A, B, C, G, dead, dead, dead, dead, dead, dead],
            &[10, 11, 12, 13, 14, 15, 16, D, E, F],
        ];
        for (b, pages) in layout.iter().enumerate() {
            let block = b as u32;
            ex.flash.open(block, 0);
            for &lpn in pages.iter() {
                let (ppn, _) = ex.flash.program(block, lpn, 0);
                if lpn == dead {
                    ex.flash.invalidate(ppn, 0);
                } else {
                    ex.l2p.insert(lpn, ppn);
                    if ex.dirty.contains(&lpn) {
                        ex.flash.zombies[b] += 1;
                    }
                }
            }
            ex.policy.insert(&BlockStats::of(block, &ex.flash));
        }
        ex.flash.open(ex.update, 0);
        ex
    }

    /// Put `lpn` in the update block (a flush or a GC copy); true when it is now full.
    fn place(&mut self, lpn: u32) -> bool {
        let (ppn, full) = self.flash.program(self.update, lpn, 0);
        self.l2p.insert(lpn, ppn);
        if self.dirty.contains(&lpn) {
            self.flash.zombies[self.update as usize] += 1;
        }
        if full {
            self.policy
                .insert(&BlockStats::of(self.update, &self.flash));
        }
        full
    }

    fn gc(&mut self) {
        let mut rng = rand_pcg::Pcg64Mcg::seed_from_u64(0);
        let mut ctx = SelectCtx {
            flash: &self.flash,
            now: 0,
            rng: &mut rng,
            chain: &[],
        };
        let victim = self.policy.select(&mut ctx).expect("a victim");
        self.flash.take_victim(victim);
        let pages: Vec<u32> = self.flash.valid_pages(victim).collect();
        for ppn in pages {
            let lpn = self.flash.owner[ppn as usize];
            if self.dirty.contains(&lpn) {
                self.flash.zombies[victim as usize] -= 1;
            }
            self.flash.invalidate(ppn, 0);
            self.copies += 1;
            assert!(
                !self.place(lpn),
                "GC fills the update block in this example"
            );
        }
        self.flash.erase(victim);
        self.free.push(victim);
    }

    /// The host writes back `lpn`: the old copy dies, the page is no longer a zombie.
    fn flush(&mut self, lpn: u32) {
        let old = self.l2p[&lpn];
        let block = self.flash.block_of(old);
        self.flash.zombies[block as usize] -= 1;
        self.policy.changed(&BlockStats::of(block, &self.flash));
        self.flash.invalidate(old, 0);
        self.policy.changed(&BlockStats::of(block, &self.flash));
        self.dirty.retain(|&x| x != lpn);
        if self.place(lpn) {
            // The update block is full: open the free block, which is the last one: GC.
            self.update = self.free.pop().expect("GC freed a block");
            self.flash.open(self.update, 0);
            self.gc();
        }
    }

    fn run(policy: PolicySpec) -> (u32, u32) {
        let mut ex = Example::new(policy);
        ex.gc(); // block 4 is the empty update block: GC must run now
        for lpn in [A, B, C, D, E, F, G] {
            ex.flush(lpn);
        }
        let free_pages = PPB - ex.flash.write_ptr[ex.update as usize];
        (ex.copies, free_pages)
    }
}

#[test]
fn greedy_copies_nine_pages_and_z_greedy_six() {
    let (greedy_copies, greedy_free) = Example::run(PolicySpec::Greedy);
    let (z_copies, z_free) = Example::run(PolicySpec::ZGreedy);
    assert_eq!(
        greedy_copies, 9,
        "greedy: GC 1 copies a b c g, GC 2 copies block 1's 5"
    );
    assert_eq!(
        z_copies, 6,
        "z-greedy: GC 1 copies block 1's 5, GC 2 copies g"
    );
    assert_eq!(
        z_free,
        greedy_free + 3,
        "three more pages stay free with z-greedy"
    );
}
