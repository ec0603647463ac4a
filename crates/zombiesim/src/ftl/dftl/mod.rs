//! DFTL (Gupta et al., ASPLOS 2009): the page-mapped FTL with its mapping table in
//! translation pages on flash and only a cached mapping table (CMT) in SRAM.
//!
//! ```text
//!   DftlFtl ── host op on L ─► CMT (translation.rs): hit, or miss ─► read page t
//!     │                          full? evict; dirty? ─► write its translation page
//!     │                                                  (PageMappedFtl::write_internal)
//!     ├─► PageMappedFtl: the host op itself, GC, refresh ─► pages moved
//!     │                                                          │
//!     └─◄ drain_moved: each moved host page's mapping changed ◄──┘
//!         (cached: the entry is dirty; else its page joins the pending batch)
//!   end of the op ─► write each pending translation page once
//! ```
//!
//! The page-mapped FTL underneath stores the translation pages as internal logical
//! pages beyond the host's and knows nothing else of DFTL: this layer sees what the
//! page-mapped FTL moved through one seam, the log of moved pages it drains after
//! every call that can run GC, before it touches the CMT again (so the CMT sees the
//! same sequence of changes as if it were told during GC).

use crate::config::{Config, FtlLayout, Geometry};
use crate::error::{Error, Result};
use crate::flash::NONE;
use crate::ftl::{
    BufferView, DeviceEvent, Ftl, FtlBase, FtlSummary, NoBuffer, PageMappedFtl, PageWrite, Space,
};
use crate::stats::Cause;
use translation::Translation;

mod translation;

/// DFTL: a page-mapped FTL whose mapping table costs translation-page traffic.
#[derive(Clone)]
pub struct DftlFtl {
    pages: PageMappedFtl,
    cmt: Translation,
}

impl DftlFtl {
    /// DFTL with a cached mapping table of `ftl.cmt_entries` entries. `seed` drives the
    /// randomised policies; `verify` keeps the integrity oracle and the lost-update
    /// check.
    pub fn new(cfg: &Config, seed: u64, verify: bool) -> Result<Self> {
        Self::with_policies(cfg, seed, verify, &crate::ftl::ExternalPolicies::default())
    }

    /// [`DftlFtl::new`], asking `external` what it decides.
    pub fn with_policies(
        cfg: &Config,
        seed: u64,
        verify: bool,
        external: &crate::ftl::ExternalPolicies,
    ) -> Result<Self> {
        let geo = Geometry::new(cfg)?;
        // Whatever is wrong without the translation pages is reported as it is.
        FtlLayout::new(cfg, &geo)?;
        let host = geo.logical_pages;
        let pages = Translation::pages_for(host, geo.page_size);
        let mut inner = geo.clone();
        inner.logical_pages += pages;
        let layout = FtlLayout::new(cfg, &inner).map_err(|e| {
            Error::config(
                "ftl.over_provisioning",
                format!(
                    "DFTL stores its mapping table in {pages} translation pages beside the \
                     host's {host} logical pages, and with them the spare blocks do not \
                     suffice: {e}"
                ),
            )
        })?;
        let cmt = Translation::new(host, geo.page_size, cfg.ftl.cmt_entries, verify);
        let pages = PageMappedFtl::build(cfg, seed, verify, geo, inner, layout, true, external)?;
        Ok(DftlFtl { pages, cmt })
    }

    /// Bytes of the cached mapping table, part of [`crate::ftl::FtlExt::memory_bytes`]:
    /// about 30 B per entry (20 B of slot and LRU links, a 9 B hash-map bucket, at the
    /// map's load factor).
    pub fn cmt_bytes(&self) -> usize {
        self.cmt.cmt_bytes()
    }

    /// Entries the cached mapping table holds now.
    pub fn cmt_len(&self) -> usize {
        self.cmt.len()
    }

    /// Translation pages.
    pub fn translation_pages(&self) -> u64 {
        self.cmt.pages as u64
    }

    /// The physical page a logical page maps to, if any.
    pub fn lookup(&self, lpn: u64) -> Option<u32> {
        self.pages.lookup(lpn)
    }

    /// The page-mapped FTL underneath.
    pub fn page_mapped(&self) -> &PageMappedFtl {
        &self.pages
    }

    /// Tell the CMT of the host pages the page-mapped FTL moved since the last call:
    /// a translation page's move changes only the GTD (its entry in the table).
    #[inline]
    fn note_moved(&mut self) {
        let host = self.cmt.host;
        let cmt = &mut self.cmt;
        self.pages.drain_moved(|l| {
            if (l as u64) < host {
                cmt.relocated(l);
            }
        });
    }

    /// A host operation on `lpn` begins: the controller holds no translation page.
    fn begin(&mut self, lpn: u64) -> Result<usize> {
        let l = self.pages.base().check_lpn(lpn)? as usize;
        self.cmt.held = NONE;
        Ok(l)
    }

    /// Find the mapping of host page `l` in the CMT: a hit, or a miss that reads its
    /// translation page and caches it, evicting the least recently used entry (written
    /// back when dirty). Whether a translation page was read from flash.
    fn cmt_access(&mut self, l: usize, buffer: &mut dyn BufferView) -> Result<bool> {
        if self.cmt.touch(l) {
            self.pages.base_mut().counters.cmt_hits += 1;
            return Ok(false);
        }
        self.pages.base_mut().counters.cmt_misses += 1;
        let t = self.cmt.page_of(l);
        let read = self.read_translation(t);
        if self.cmt.full() {
            let (victim, dirty) = self.cmt.evict().expect("a full CMT has an entry");
            if dirty {
                let tv = self.cmt.page_of(victim);
                self.write_translation(tv, buffer)?;
            }
        }
        self.cmt.insert(l);
        Ok(read)
    }

    /// Read translation page `t` unless the controller holds it or it was never
    /// written (nothing to read); whether it was read.
    fn read_translation(&mut self, t: u32) -> bool {
        if self.cmt.held == t {
            return false;
        }
        self.cmt.held = t;
        let ppn = self.pages.entry((self.cmt.host + t as u64) as usize);
        if ppn == NONE {
            return false;
        }
        let base = self.pages.base_mut();
        let plane = base.geo.plane_of(base.flash.block_of(ppn));
        base.ops.read(plane, Cause::Translation);
        true
    }

    /// Write translation page `t` with every mapping as it stands (read-modify-write:
    /// read first unless the controller holds it): the old copy dies, a new one is
    /// programmed like a host page, and the GTD points at it.
    fn write_translation(&mut self, t: u32, buffer: &mut dyn BufferView) -> Result<()> {
        self.read_translation(t);
        // Mappings that change from here on (GC this program runs) are not in it.
        self.cmt.flushed(t);
        let l = (self.cmt.host + t as u64) as usize;
        let result = self.pages.write_internal(l, Cause::Translation, buffer);
        self.note_moved();
        result
    }

    /// Write each translation page of the pending batch once (GC changed uncached
    /// mappings of it); the writes may run GC, which may add more: until none is left.
    #[inline(never)]
    fn flush_pending(&mut self, buffer: &mut dyn BufferView) -> Result<()> {
        while let Some(t) = self.cmt.next_pending() {
            self.write_translation(t, buffer)?;
        }
        Ok(())
    }

    /// The mapping of cached host page `l` changed if it was mapped before (`mapped`)
    /// or is now; then the pending batch is written.
    fn end(&mut self, l: usize, mapped: bool, buffer: &mut dyn BufferView) -> Result<()> {
        if mapped {
            self.cmt.dirty(l);
        }
        self.flush_pending(buffer)
    }
}

impl Ftl for DftlFtl {
    #[inline]
    fn base(&self) -> &FtlBase {
        self.pages.base()
    }

    #[inline]
    fn base_mut(&mut self) -> &mut FtlBase {
        self.pages.base_mut()
    }

    fn write_page(&mut self, write: PageWrite, buffer: &mut dyn BufferView) -> Result<()> {
        let l = self.begin(write.lpn)?;
        self.cmt_access(l, buffer)?;
        let result = self.pages.write_page(write, buffer);
        self.note_moved();
        result?;
        self.end(l, true, buffer)
    }

    /// The data read waits for the translation page a miss reads (it names the page).
    fn read(&mut self, lpn: u64) -> Result<()> {
        let l = self.begin(lpn)?;
        if self.cmt_access(l, &mut NoBuffer)? {
            let ops = &mut self.pages.base_mut().ops;
            let done = ops.finish();
            ops.begin(done);
        }
        self.pages.read(lpn)?;
        self.flush_pending(&mut NoBuffer)
    }

    fn trim(&mut self, lpn: u64) -> Result<()> {
        let l = self.begin(lpn)?;
        self.cmt_access(l, &mut NoBuffer)?;
        let mapped = self.pages.entry(l) != NONE;
        self.pages.trim(lpn)?;
        self.end(l, mapped, &mut NoBuffer)
    }

    fn pad(&mut self, lpn: u64, buffer: &mut dyn BufferView) -> Result<()> {
        let l = self.begin(lpn)?;
        self.cmt_access(l, buffer)?;
        let mapped = self.pages.entry(l) != NONE;
        let result = self.pages.pad(lpn, buffer);
        self.note_moved();
        result?;
        self.end(l, mapped, buffer)
    }

    fn mapped(&self, lpn: u64) -> Option<u32> {
        self.pages.mapped(lpn)
    }

    #[inline]
    fn prefetch(&self, lpn: u64) {
        self.pages.prefetch(lpn);
    }

    /// Idle time, the clock and a restart may run GC or refresh: the pending batch is
    /// written after them.
    fn on_event(&mut self, event: DeviceEvent, buffer: &mut dyn BufferView) -> Result<()> {
        let result = self.pages.on_event(event, buffer);
        self.note_moved();
        result?;
        match event {
            DeviceEvent::Idle { .. } | DeviceEvent::Tick { .. } | DeviceEvent::Restart { .. } => {
                self.flush_pending(buffer)
            }
            DeviceEvent::Timing(_)
            | DeviceEvent::HostShadow { .. }
            | DeviceEvent::Lifetime { .. } => Ok(()),
        }
    }

    fn verify(&self) -> Result<()> {
        self.pages.verify()?;
        self.cmt.check()
    }

    fn space(&self) -> Space {
        self.pages.space()
    }

    fn summary(&self) -> FtlSummary {
        let mut summary = self.pages.summary();
        summary.memory_bytes += self.cmt.memory_bytes();
        summary
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ftl::FtlExt;

    /// One plane of 20 blocks × 16 pages of 512 B (128 mappings per translation
    /// page), greedy GC, a CMT of one entry.
    fn dftl() -> DftlFtl {
        let mut cfg = Config::preset("default").unwrap();
        cfg.set_many(&[
            ("flash.channels".into(), "1".into()),
            ("flash.chips_per_channel".into(), "1".into()),
            ("flash.dies_per_chip".into(), "1".into()),
            ("flash.planes_per_die".into(), "1".into()),
            ("flash.blocks_per_plane".into(), "20".into()),
            ("flash.pages_per_block".into(), "16".into()),
            ("flash.page_size".into(), "512".into()),
            ("ftl.over_provisioning".into(), "0.5".into()),
            ("ftl.kind".into(), "dftl".into()),
            ("ftl.cmt_entries".into(), "1".into()),
            ("gc.policy".into(), "greedy".into()),
        ])
        .unwrap();
        cfg.validate().unwrap();
        DftlFtl::new(&cfg, 1, true).unwrap()
    }

    #[test]
    fn a_victim_whose_pages_share_an_uncached_translation_page_writes_it_once() {
        let mut f = dftl();
        assert_eq!(f.translation_pages(), 2);
        for lpn in 0..40 {
            f.write(lpn).unwrap();
        }
        // Leave two host pages valid among the first ones written: their block is
        // the emptiest.
        for lpn in (0..8).filter(|&l| l != 3 && l != 7) {
            f.trim(lpn).unwrap();
        }
        f.verify().unwrap();
        let host = f.base().geo.logical_pages;
        // Translation blocks (their own stream, nearly all dead) are the emptiest:
        // reclaim them until the victim is the data block.
        let (victim, moved) = loop {
            let victim = f.pages.select_victim(0).unwrap().unwrap();
            let flash = &f.base().flash;
            let moved: Vec<u64> = flash
                .valid_pages(victim)
                .map(|p| flash.owner[p as usize] as u64)
                .filter(|&l| l < host)
                .collect();
            if !moved.is_empty() {
                break (victim, moved);
            }
            f.pages.reclaim_now(0, victim, &mut NoBuffer).unwrap();
            f.note_moved();
        };
        assert!(moved.len() >= 2, "the victim holds {moved:?}");
        let t0 = f.cmt.page_of(moved[0] as usize);
        assert!(moved.iter().all(|&l| f.cmt.page_of(l as usize) == t0));
        assert!(moved.iter().all(|&l| !f.cmt.touch(l as usize)), "uncached");
        f.cmt.held = NONE;
        let before = f.counters();
        f.pages.reclaim_now(0, victim, &mut NoBuffer).unwrap();
        f.note_moved();
        f.flush_pending(&mut NoBuffer).unwrap();
        let c = f.counters().since(&before);
        assert!(c.gc_pages_copied >= moved.len() as u64);
        assert_eq!(c.programs.get(Cause::Translation), 1, "{c:?}");
        assert_eq!(c.reads.get(Cause::Translation), 1, "read-modify-write");
        f.verify().unwrap();
    }

    #[test]
    fn translation_pages_and_their_gc_copies_fill_blocks_of_their_own() {
        use rand::{RngExt, SeedableRng};
        let mut f = dftl();
        let host = f.base().geo.logical_pages;
        let mut rng = rand_pcg::Pcg64Mcg::seed_from_u64(3);
        for _ in 0..20 * host {
            f.write(rng.random_range(0..host)).unwrap();
        }
        f.verify().unwrap();
        let c = f.counters();
        assert!(
            c.programs.get(Cause::Translation) > 0 && c.gc_victims > 0,
            "{c:?}"
        );
        let flash = f.pages.flash();
        let mut translation_blocks = 0;
        for block in 0..f.base().geo.blocks {
            let kinds: Vec<bool> = flash
                .valid_pages(block)
                .map(|p| flash.owner[p as usize] as u64 >= host)
                .collect();
            assert!(
                kinds.iter().all(|&t| t) || kinds.iter().all(|&t| !t),
                "block {block} holds data and translation pages"
            );
            translation_blocks += usize::from(kinds.first() == Some(&true));
        }
        assert!(translation_blocks > 0);
    }

    #[test]
    fn a_lost_translation_update_is_caught() {
        let mut f = dftl();
        for lpn in 0..40 {
            f.write(lpn).unwrap();
        }
        f.verify().unwrap();
        // A mapping change of an uncached page that never reaches its translation page.
        f.cmt.relocated(5);
        let t = f.cmt.next_pending().unwrap();
        assert_eq!(t, 0);
        let err = f.verify().unwrap_err().to_string();
        assert!(err.contains("logical page 5"), "{err}");
    }
}
