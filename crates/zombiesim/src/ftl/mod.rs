//! Flash translation layers behind one trait.
//!
//! An FTL turns host page operations (write, read, trim of logical page numbers)
//! into flash operations, runs garbage collection when it needs space, and keeps
//! [`Counters`]. Every FTL can check itself: [`Ftl::verify`] runs the invariant
//! checks and, when built with an oracle, the integrity check that every logical
//! page resolves to the newest version written.
//!
//! ```text
//!   Device ──PageWrite / read / trim / pad / DeviceEvent──► dyn Ftl
//!                                                             │
//!        ┌────────────────────────┬───────────────────────────┼──────────────────┐
//!   PageMappedFtl (page, dftl)  SuperblockFtl             FastFtl           BlockMappedFtl
//!     l2p + BlockManager          superblocks              data + log blocks  data blocks
//!     (GC units, victims,         + FreeBlocks             + FreeBlocks       + FreeBlocks
//!      Placement)
//!        └──────────── each keeps one FtlBase: flash, ops, counters, oracle, ─────────┘
//!                      zombie marks, logical clock
//! ```
//!
//! [`Ftl`] holds only what differs between FTLs (twelve methods); what every FTL
//! answers the same way comes from its [`FtlBase`] through [`FtlExt`], implemented
//! for every FTL.

mod base;
mod block_mapped;
mod blocks;
mod fast;
mod free_blocks;
mod marks;
mod ops;
mod page_mapped;
mod refresh;
mod superblock;

pub use blocks::{BlockManager, GcUnit};
pub use ops::FlashOps;
pub use refresh::RefreshQueues;

pub use crate::placement::WriteHint;
pub use base::FtlBase;
pub use block_mapped::BlockMappedFtl;
pub use fast::FastFtl;
pub use free_blocks::FreeBlocks;
pub use marks::ZombieMarks;
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

/// One page write on its way to an FTL: which page, what it holds, why it is
/// written, and what the writer says about where it should go.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PageWrite {
    pub lpn: u64,
    /// The page's content fingerprint, when known: the content layer uses it when
    /// on; the integrity oracle checks reads by it.
    pub value: Option<u64>,
    /// `Host` (counted as a host page) or `Buffer` (a page the device's write buffer
    /// evicts or flushes; the host page was counted when it entered the buffer).
    pub cause: Cause,
    /// The writer's placement and lifetime hints ([`WriteHint`]).
    pub hint: WriteHint,
}

impl PageWrite {
    /// A write of `lpn` holding `value` for `cause`, with no hint.
    pub fn new(lpn: u64, value: Option<u64>, cause: Cause) -> Self {
        PageWrite {
            lpn,
            value,
            cause,
            hint: WriteHint::NONE,
        }
    }

    /// A write of `lpn` for the host with no content and no hint.
    pub fn host(lpn: u64) -> Self {
        Self::new(lpn, None, Cause::Host)
    }
}

/// Something the device tells an FTL besides a page operation.
#[derive(Clone, Copy, Debug)]
pub enum DeviceEvent<'a> {
    /// Turn the timing model on or off (off while preconditioning). Turning it on
    /// clears all reservations: the measured phase starts at time 0.
    Timing(bool),
    /// The device is idle from `from` until `until` (ns): background GC may work.
    Idle { from: u64, until: u64 },
    /// The device's clock reached `now` (ns): blocks whose retention deadline has
    /// passed are refreshed (`ftl.fast_retention_s`, `ftl.retention_s`).
    Tick { now: u64 },
    /// The device restarts after a power-off (power loss, or a clean restart at
    /// `now`): every shadow page is live again, every fast-written block holding
    /// valid pages is refreshed, and `lost` (ascending) names the logical pages
    /// whose buffered copy the power-off destroyed.
    Restart { now: u64, lost: &'a [u64] },
    /// The host says `lpn` has (`marked`) a dirty newer copy above the device, or
    /// that it lost that copy and the flash copy is live again.
    HostShadow { lpn: u64, marked: bool },
}

/// How much of the flash is spare right now (sampled during a run).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Space {
    /// Erased blocks available (the time series' `free_blocks`).
    pub free_blocks: u64,
    /// Pages held out of the data cycle: free blocks plus the unwritten pages of open
    /// blocks (the analytic models' "reserve").
    pub held_back_pages: u64,
    /// Valid flash pages (pages holding the newest copy of some logical page).
    pub valid_pages: u64,
}

/// An FTL's end-of-run state beyond its counters.
#[derive(Clone, Debug, Default)]
pub struct FtlSummary {
    /// Approximate bytes of memory the FTL's state occupies.
    pub memory_bytes: usize,
    /// Counters and end-of-run state of the content layer, when it is on.
    pub content: Option<(
        crate::content::ContentCounters,
        crate::content::ContentGauges,
    )>,
}

/// A flash translation layer: only what differs between FTLs. What every FTL
/// answers the same way (counters, timing, wear, the host-shadow marks) comes from
/// the shared [`FtlBase`] through [`FtlExt`].
pub trait Ftl: Send {
    /// The state every FTL shares.
    fn base(&self) -> &FtlBase;
    /// The state every FTL shares, to change.
    fn base_mut(&mut self) -> &mut FtlBase;
    /// Write one logical page. GC it runs sees the device's write buffer through
    /// `buffer`.
    fn write_page(&mut self, write: PageWrite, buffer: &mut dyn BufferView) -> Result<()>;
    /// Read one logical page (an unwritten or trimmed page is counted, not an error).
    fn read(&mut self, lpn: u64) -> Result<()>;
    /// Trim (discard) one logical page.
    fn trim(&mut self, lpn: u64) -> Result<()>;
    /// BPLRU page padding: the write buffer evicts a logical block whole, so the
    /// pages of it that it does not hold are read from flash (`Cause::Buffer`) and
    /// written again with it, in logical order. Nothing happens for an unwritten page.
    fn pad(&mut self, lpn: u64, buffer: &mut dyn BufferView) -> Result<()>;
    /// The physical page `lpn` maps to, if any.
    fn mapped(&self, lpn: u64) -> Option<u32>;
    /// A hint that `lpn` will be accessed soon: the FTL starts loading its mapping
    /// entry into the CPU cache (no effect on results).
    fn prefetch(&self, lpn: u64);
    /// The device tells the FTL of an event ([`DeviceEvent`]).
    fn on_event(&mut self, event: DeviceEvent, buffer: &mut dyn BufferView) -> Result<()>;
    /// Run the invariant checks and the integrity oracle (when enabled).
    fn verify(&self) -> Result<()>;
    /// Spare space now.
    fn space(&self) -> Space;
    /// Memory and content-layer state at the end of a run.
    fn summary(&self) -> FtlSummary;
}

/// What every FTL answers the same way, from its [`FtlBase`] (implemented for every
/// [`Ftl`]).
pub trait FtlExt: Ftl {
    /// Pages the host can address.
    #[inline]
    fn logical_pages(&self) -> u64 {
        self.base().geo.logical_pages
    }
    /// Write one logical page for the host, with no write buffer above.
    fn write(&mut self, lpn: u64) -> Result<()> {
        self.write_page(PageWrite::host(lpn), &mut NoBuffer)
    }
    /// Write one logical page holding `value` for the host, with no write buffer above.
    fn write_value(&mut self, lpn: u64, value: u64) -> Result<()> {
        let write = PageWrite {
            value: Some(value),
            ..PageWrite::host(lpn)
        };
        self.write_page(write, &mut NoBuffer)
    }
    /// Turn the timing model on or off ([`DeviceEvent::Timing`]).
    fn set_timing(&mut self, on: bool) {
        self.on_event(DeviceEvent::Timing(on), &mut NoBuffer)
            .expect("turning timing on or off cannot fail");
    }
    /// A host request starts at `now` (ns); its operations are issued from then.
    #[inline]
    fn begin(&mut self, now: u64) {
        self.base_mut().ops.begin(now);
    }
    /// When the operations of the request begun last complete (ns).
    #[inline]
    fn finish(&mut self) -> u64 {
        self.base_mut().ops.finish()
    }
    /// The latest time any flash resource is reserved until (ns).
    #[inline]
    fn busy_until(&self) -> u64 {
        self.base().ops.busy_until()
    }
    /// Timing figures over `elapsed` ns, when the timing model is on.
    fn timing_summary(&self, elapsed: u64) -> Option<crate::timing::TimingSummary> {
        self.base().ops.summary(elapsed)
    }
    /// [`DeviceEvent::Idle`].
    fn idle(&mut self, from: u64, until: u64, buffer: &mut dyn BufferView) -> Result<()> {
        self.on_event(DeviceEvent::Idle { from, until }, buffer)
    }
    /// [`DeviceEvent::Tick`].
    fn tick(&mut self, now: u64, buffer: &mut dyn BufferView) -> Result<()> {
        self.on_event(DeviceEvent::Tick { now }, buffer)
    }
    /// [`DeviceEvent::Restart`].
    fn restart(&mut self, now: u64, lost: &[u64], buffer: &mut dyn BufferView) -> Result<()> {
        self.on_event(DeviceEvent::Restart { now, lost }, buffer)
    }
    /// [`DeviceEvent::HostShadow`]: the device learns (`true`) that `lpn` has a dirty
    /// newer copy in the host buffer, or (`false`) that the host lost it.
    #[inline]
    fn set_zombie(&mut self, lpn: u64, zombie: bool) -> Result<()> {
        self.on_event(
            DeviceEvent::HostShadow {
                lpn,
                marked: zombie,
            },
            &mut NoBuffer,
        )
    }
    /// Logical pages the device currently knows as zombies.
    #[inline]
    fn known_zombies(&self) -> u64 {
        self.base().marks.known()
    }
    /// Whether the device knows `lpn` as a zombie (host-shadow).
    #[inline]
    fn is_host_shadow(&self, lpn: u64) -> bool {
        self.base().is_host_shadow(lpn)
    }
    /// Count one host request (pages are counted by the operations).
    #[inline]
    fn count_request(&mut self) {
        self.base_mut().counters.host_requests += 1;
    }
    /// Host page writes counted so far (`counters().host_write_pages`, without
    /// assembling the rest).
    #[inline]
    fn host_write_pages(&self) -> u64 {
        self.base().counters.host_write_pages
    }
    /// Every counter so far.
    fn counters(&self) -> Counters {
        self.base().counters()
    }
    /// The integrity oracle, when the FTL keeps one.
    fn oracle(&self) -> Option<&crate::verify::Oracle> {
        self.base().oracle.as_ref()
    }
    /// Erase-count summary over usable blocks.
    fn wear(&self) -> Wear {
        self.base().wear()
    }
    /// Pages held out of the data cycle ([`Space::held_back_pages`]).
    fn held_back_pages(&self) -> u64 {
        self.space().held_back_pages
    }
    /// Erased blocks available now ([`Space::free_blocks`]).
    fn free_blocks(&self) -> u64 {
        self.space().free_blocks
    }
    /// Valid flash pages ([`Space::valid_pages`]).
    fn valid_pages(&self) -> u64 {
        self.space().valid_pages
    }
    /// Approximate bytes of memory the FTL's state occupies.
    fn memory_bytes(&self) -> usize {
        self.summary().memory_bytes
    }
    /// Counters and end-of-run state of the content layer, when it is on.
    fn content_stats(
        &self,
    ) -> Option<(
        crate::content::ContentCounters,
        crate::content::ContentGauges,
    )> {
        self.summary().content
    }
}

impl<T: Ftl + ?Sized> FtlExt for T {}

/// Ask the CPU to start loading `table[index]` into cache (a hint; no effect on
/// results): what [`Ftl::prefetch`] does with an FTL's mapping table.
#[inline(always)]
pub(crate) fn prefetch_entry(table: &[u32], index: usize) {
    #[cfg(target_arch = "x86_64")]
    if let Some(slot) = table.get(index) {
        // SAFETY: prefetching is a hint that never faults; `slot` is a valid reference.
        unsafe {
            std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(
                (slot as *const u32).cast::<i8>(),
            )
        };
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = (table, index);
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
