//! The FTL contract: [`Ftl`], what differs between FTLs, and [`FtlExt`], what every
//! FTL answers the same way from its [`FtlBase`].

use crate::error::Result;
use crate::ftl::{BufferView, DeviceEvent, FtlBase, NoBuffer, PageWrite, Wear};
use crate::stats::Counters;

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
    /// What an FDP device counted per stream (`fdp.enabled`).
    pub fdp: Option<crate::ftl::FdpCounts>,
    /// What the device learnt of its zombies' lifetimes (`gc.zombie_weight`).
    pub zombie_weight: Option<crate::ftl::ZombieWeightReport>,
    /// What the placement fitted to the workload (MiDAS's groups).
    pub placement_model: Option<crate::placement::PlacementModel>,
    /// Per stream, what was written and reclaimed: a placement other than the
    /// default, without FDP.
    pub streams: Option<Vec<crate::ftl::StreamCounts>>,
}

dyn_clone::clone_trait_object!(Ftl);

/// A flash translation layer: only what differs between FTLs. What every FTL
/// answers the same way (counters, timing, wear, the host-shadow marks) comes from
/// the shared [`FtlBase`] through [`FtlExt`].
pub trait Ftl: Send + dyn_clone::DynClone {
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
    /// What an FDP device counted per stream, when `fdp.enabled`.
    fn fdp_counts(&self) -> Option<crate::ftl::FdpCounts> {
        self.summary().fdp
    }
}

impl<T: Ftl + ?Sized> FtlExt for T {}
