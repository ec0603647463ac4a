//! Flash translation layers behind one trait.
//!
//! An FTL turns host page operations (write, read, trim of logical page numbers)
//! into flash operations, runs garbage collection when it needs space, and keeps
//! [`Counters`]. Every FTL can check itself: [`Ftl::verify`] runs the invariant
//! checks and, when built with an oracle, the integrity check that every logical
//! page resolves to the newest version written.

mod page_mapped;

pub use page_mapped::PageMappedFtl;

use crate::config::{Config, FtlKind};
use crate::error::Result;
use crate::stats::Counters;
use serde::Serialize;

/// Summary of block wear.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct Wear {
    pub erase_min: u32,
    pub erase_mean: f64,
    pub erase_max: u32,
}

/// A flash translation layer.
pub trait Ftl: Send {
    /// Pages the host can address.
    fn logical_pages(&self) -> u64;
    /// Write one logical page.
    fn write(&mut self, lpn: u64) -> Result<()>;
    /// Write one logical page whose content has the fingerprint `value`. FTLs without
    /// content awareness ignore the value.
    fn write_value(&mut self, lpn: u64, _value: u64) -> Result<()> {
        self.write(lpn)
    }
    /// Write one logical page the device's write buffer evicts or flushes (`value`:
    /// its fingerprint, when known). Programs count under `Cause::Buffer`; the host
    /// page was counted when it entered the buffer.
    fn write_buffered(&mut self, lpn: u64, value: Option<u64>) -> Result<()>;
    /// Read one logical page (an unwritten or trimmed page is counted, not an error).
    fn read(&mut self, lpn: u64) -> Result<()>;
    /// Trim (discard) one logical page.
    fn trim(&mut self, lpn: u64) -> Result<()>;
    /// A hint that `lpn` will be accessed soon (lets the FTL start cache loads early).
    fn prefetch(&self, _lpn: u64) {}
    /// Turn the timing model on or off (off while preconditioning). Turning it on
    /// clears all reservations: the measured phase starts at time 0.
    fn set_timing(&mut self, _on: bool) {}
    /// A host request starts at `now` (ns); its operations are issued from then.
    fn begin(&mut self, _now: u64) {}
    /// When the operations of the request begun last complete (ns).
    fn finish(&mut self) -> u64 {
        0
    }
    /// The device is idle from `from` until `until` (ns): background GC may work.
    fn idle(&mut self, _from: u64, _until: u64) -> Result<()> {
        Ok(())
    }
    /// The latest time any flash resource is reserved until (ns).
    fn busy_until(&self) -> u64 {
        0
    }
    /// Timing figures over `elapsed` ns, when the timing model is on.
    fn timing_summary(&self, _elapsed: u64) -> Option<crate::timing::TimingSummary> {
        None
    }
    /// The device learns (`true`) that `lpn` has a dirty newer copy in the host buffer,
    /// or (`false`) that the host lost it and the flash copy is live again.
    fn set_zombie(&mut self, _lpn: u64, _zombie: bool) -> Result<()> {
        Ok(())
    }
    /// Restart after power loss: every zombie page is live again.
    fn clear_zombies(&mut self) {}
    /// Logical pages the device currently knows as zombies.
    fn known_zombies(&self) -> u64 {
        0
    }
    /// Count one host request (pages are counted by the operations).
    fn count_request(&mut self);
    /// Every counter so far.
    fn counters(&self) -> &Counters;
    /// Run the invariant checks and the integrity oracle (when enabled).
    fn verify(&self) -> Result<()>;
    /// The integrity oracle, when the FTL keeps one.
    fn oracle(&self) -> Option<&crate::verify::Oracle>;
    /// Erase-count summary over usable blocks.
    fn wear(&self) -> Wear;
    /// Pages currently held out of the data cycle: free blocks plus the unwritten
    /// pages of open blocks (the analytic models' "reserve").
    fn held_back_pages(&self) -> u64;
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
    )> {
        None
    }
}

/// Build the FTL a configuration names. `verify` keeps the integrity oracle.
pub fn build(cfg: &Config, seed: u64, verify: bool) -> Result<Box<dyn Ftl>> {
    match cfg.ftl.kind {
        FtlKind::Page => Ok(Box::new(PageMappedFtl::new(cfg, seed, verify)?)),
    }
}
