//! Flash translation layers behind one trait.
//!
//! An FTL turns host page operations (write, read, trim of logical page numbers)
//! into flash operations, runs garbage collection when it needs space, and keeps
//! [`Counters`]. Every FTL can check itself: [`Ftl::verify`] runs the invariant
//! checks and, when built with an oracle, the integrity check that every logical
//! page resolves to the newest version written.

mod base;
mod block_mapped;
mod blocks;
mod fast;
mod ops;
mod page_mapped;
mod refresh;
mod superblock;

pub use blocks::{BlockManager, GcUnit};
pub use ops::FlashOps;
pub use refresh::RefreshQueues;

pub use base::FtlBase;
pub use block_mapped::BlockMappedFtl;
pub use fast::FastFtl;
pub use page_mapped::PageMappedFtl;
pub use superblock::SuperblockFtl;

pub use crate::config::Capabilities;
use crate::config::{Config, FtlKind};
use crate::error::Result;
use crate::stats::{Cause, Counters};
use serde::Serialize;

/// What an FTL may see of the device's write buffer while it relocates pages (003
/// §3.3: GC reads a device-shadow page's up-to-date content from the buffer). The
/// device passes it to every operation that may run GC or refresh.
pub trait BufferView {
    /// Whether any page is dirty (when not, no page is device-shadow).
    fn any_dirty(&self) -> bool;
    /// Whether a dirty copy of `lpn` is buffered: its flash copy is device-shadow.
    fn is_dirty(&self, lpn: u64) -> bool;
    /// Take the dirty copy of `lpn` for a relocation: the buffered copy becomes clean
    /// (its eviction writes nothing) and its content value is returned (`None`:
    /// unknown content). Call only when [`BufferView::is_dirty`] holds.
    fn take(&mut self, lpn: u64) -> Option<u64>;
    /// The chance that the dirty buffered copy of `lpn` is written again before the
    /// buffer evicts it, `P(U)` of 004 §5: the 3-region buffer's estimate for the
    /// region holding it. Only BA-VBS reads it, and the configuration lets BA-VBS run
    /// only above a 3-region buffer; other buffers answer 0.
    fn update_probability(&self, lpn: u64) -> f64;
}

/// The view of a device without a write buffer.
pub struct NoBuffer;

impl BufferView for NoBuffer {
    fn any_dirty(&self) -> bool {
        false
    }
    #[inline]
    fn is_dirty(&self, _lpn: u64) -> bool {
        false
    }
    fn take(&mut self, _lpn: u64) -> Option<u64> {
        None
    }
    fn update_probability(&self, _lpn: u64) -> f64 {
        0.0
    }
}

/// Summary of block wear.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct Wear {
    pub erase_min: u32,
    pub erase_mean: f64,
    pub erase_max: u32,
}

impl Wear {
    /// Erase counts over the usable (not reserved) blocks of `flash`.
    pub fn of(flash: &crate::flash::FlashState) -> Wear {
        let counts: Vec<u32> = (0..flash.blocks() as usize)
            .filter(|&b| flash.status[b] != crate::flash::BlockStatus::Reserved)
            .map(|b| flash.erase_count[b])
            .collect();
        let n = counts.len().max(1) as f64;
        Wear {
            erase_min: counts.iter().copied().min().unwrap_or(0),
            erase_mean: counts.iter().map(|&c| c as f64).sum::<f64>() / n,
            erase_max: counts.iter().copied().max().unwrap_or(0),
        }
    }
}

/// A flash translation layer.
pub trait Ftl: Send {
    /// Pages the host can address.
    fn logical_pages(&self) -> u64;
    /// Write one logical page holding `value` (its fingerprint, when known: the
    /// content layer uses it when on; the integrity oracle checks reads by it), for
    /// `cause`: `Host` (counted as a host page) or `Buffer` (a page the device's
    /// write buffer evicts or flushes; the host page was counted when it entered
    /// the buffer). GC it runs sees the buffer through `buffer`.
    fn write_page(
        &mut self,
        lpn: u64,
        value: Option<u64>,
        cause: Cause,
        buffer: &mut dyn BufferView,
    ) -> Result<()>;
    /// Write one logical page for the host, with no write buffer above.
    fn write(&mut self, lpn: u64) -> Result<()> {
        self.write_page(lpn, None, Cause::Host, &mut NoBuffer)
    }
    /// Write one logical page holding `value` for the host, with no write buffer above.
    fn write_value(&mut self, lpn: u64, value: u64) -> Result<()> {
        self.write_page(lpn, Some(value), Cause::Host, &mut NoBuffer)
    }
    /// Read one logical page (an unwritten or trimmed page is counted, not an error).
    fn read(&mut self, lpn: u64) -> Result<()>;
    /// BPLRU page padding: the write buffer evicts a logical block whole, so the
    /// pages of it that it does not hold are read from flash (`Cause::Buffer`) and
    /// written again with it, in logical order. Nothing happens for an unwritten page.
    fn pad(&mut self, lpn: u64, buffer: &mut dyn BufferView) -> Result<()>;
    /// Trim (discard) one logical page.
    fn trim(&mut self, lpn: u64) -> Result<()>;
    /// A hint that `lpn` will be accessed soon (lets the FTL start cache loads early).
    fn prefetch(&self, lpn: u64);
    /// Turn the timing model on or off (off while preconditioning). Turning it on
    /// clears all reservations: the measured phase starts at time 0.
    fn set_timing(&mut self, on: bool);
    /// A host request starts at `now` (ns); its operations are issued from then.
    fn begin(&mut self, now: u64);
    /// When the operations of the request begun last complete (ns).
    fn finish(&mut self) -> u64;
    /// The device is idle from `from` until `until` (ns): background GC may work.
    fn idle(&mut self, from: u64, until: u64, buffer: &mut dyn BufferView) -> Result<()>;
    /// The device's clock reached `now` (ns): blocks whose retention deadline has
    /// passed are refreshed (`ftl.fast_retention_s`, `ftl.retention_s`).
    fn tick(&mut self, now: u64, buffer: &mut dyn BufferView) -> Result<()>;
    /// The device restarts after a power-off (power loss, or a clean restart at
    /// `now`): every shadow page is live again, every fast-written block holding
    /// valid pages is refreshed, and `lost` (ascending) names the logical pages
    /// whose buffered copy the power-off destroyed.
    fn restart(&mut self, now: u64, lost: &[u64], buffer: &mut dyn BufferView) -> Result<()>;
    /// The latest time any flash resource is reserved until (ns).
    fn busy_until(&self) -> u64;
    /// Timing figures over `elapsed` ns, when the timing model is on.
    fn timing_summary(&self, elapsed: u64) -> Option<crate::timing::TimingSummary>;
    /// The device learns (`true`) that `lpn` has a dirty newer copy in the host buffer,
    /// or (`false`) that the host lost it and the flash copy is live again.
    fn set_zombie(&mut self, lpn: u64, zombie: bool) -> Result<()>;
    /// Logical pages the device currently knows as zombies.
    fn known_zombies(&self) -> u64;
    /// Whether the device knows `lpn` as a zombie (host-shadow).
    fn is_host_shadow(&self, lpn: u64) -> bool;
    /// The physical page `lpn` maps to, if any.
    fn mapped(&self, lpn: u64) -> Option<u32>;
    /// Count one host request (pages are counted by the operations).
    fn count_request(&mut self);
    /// Host page writes the FTL has counted so far (`counters().host_write_pages`,
    /// without assembling the rest).
    fn host_write_pages(&self) -> u64;
    /// Every counter so far.
    fn counters(&self) -> Counters;
    /// Run the invariant checks and the integrity oracle (when enabled).
    fn verify(&self) -> Result<()>;
    /// The integrity oracle, when the FTL keeps one.
    fn oracle(&self) -> Option<&crate::verify::Oracle>;
    /// Erase-count summary over usable blocks.
    fn wear(&self) -> Wear;
    /// Pages currently held out of the data cycle: free blocks plus the unwritten
    /// pages of open blocks (the analytic models' "reserve").
    fn held_back_pages(&self) -> u64;
    /// Erased blocks available now (the time series' `free_blocks`).
    fn free_blocks(&self) -> u64;
    /// Valid flash pages (pages holding the newest copy of some logical page).
    fn valid_pages(&self) -> u64;
    /// Approximate bytes of memory the FTL's state occupies.
    fn memory_bytes(&self) -> usize;
    /// Counters and end-of-run state of the content layer, when it is on.
    fn content_stats(
        &self,
    ) -> Option<(
        crate::content::ContentCounters,
        crate::content::ContentGauges,
    )>;
}

/// Build the FTL a configuration names. `verify` keeps the integrity oracle.
pub fn build(cfg: &Config, seed: u64, verify: bool) -> Result<Box<dyn Ftl>> {
    Capabilities::of(cfg.ftl.kind).check(cfg, cfg.ftl.kind.name())?;
    Ok(match cfg.ftl.kind {
        FtlKind::Page => Box::new(PageMappedFtl::new(cfg, seed, verify)?),
        FtlKind::Dftl => Box::new(PageMappedFtl::new_dftl(cfg, seed, verify)?),
        FtlKind::Superblock => Box::new(SuperblockFtl::new(cfg, verify)?),
        FtlKind::Fast => Box::new(FastFtl::new(cfg, verify)?),
        FtlKind::Block => Box::new(BlockMappedFtl::new(cfg, verify)?),
    })
}
