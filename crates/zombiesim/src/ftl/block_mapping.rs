//! What the block-mapped FTLs (SuperBlock, FAST, block) have in common: each keeps
//! the newest copy of a logical page where its block map says, so reads, padding,
//! the mapping query and the device's events follow from two things it answers —
//! where `lpn`'s newest copy is, and its write path. [`BlockMapping`] is those two
//! and what differs (trim, checks, spare space, memory); every `BlockMapping` is an
//! [`Ftl`].
//!
//! They have no background GC, retention refresh or content layer:
//! [`crate::ftl::Capabilities`] refuses the keys that would ask for them, so idle time
//! and clock ticks leave them nothing to do.

use crate::error::Result;
use crate::flash::NONE;
use crate::ftl::{BufferView, DeviceEvent, Ftl, FtlBase, FtlSummary, PageWrite, Space};
use crate::stats::Cause;

/// A block-mapped FTL: what it answers itself.
pub trait BlockMapping: Send + Clone {
    /// Its shared state.
    fn shared(&self) -> &FtlBase;
    /// Its shared state, to change.
    fn shared_mut(&mut self) -> &mut FtlBase;
    /// The physical page of `lpn`'s newest copy (`NONE`: none).
    fn newest(&self, lpn: u64) -> u32;
    /// Write `lpn` holding `value` for `cause`.
    fn write_inner(
        &mut self,
        lpn: u64,
        value: Option<u64>,
        cause: Cause,
        buffer: &mut dyn BufferView,
    ) -> Result<()>;
    /// The block-map table and index holding `lpn`'s entry (the prefetch hint's).
    fn map_entry(&self, lpn: u64) -> (&[u32], usize);
    /// Trim `lpn`.
    fn trim_page(&mut self, lpn: u64) -> Result<()>;
    /// The invariant checks and the integrity oracle.
    fn check(&self) -> Result<()>;
    /// Spare space now.
    fn spare(&self) -> Space;
    /// Bytes of its state.
    fn state_bytes(&self) -> usize;
}

impl<T: BlockMapping> Ftl for T {
    fn base(&self) -> &FtlBase {
        self.shared()
    }
    fn base_mut(&mut self) -> &mut FtlBase {
        self.shared_mut()
    }
    fn write_page(&mut self, write: PageWrite, buffer: &mut dyn BufferView) -> Result<()> {
        self.write_inner(write.lpn, write.value, write.cause, buffer)
    }
    fn read(&mut self, lpn: u64) -> Result<()> {
        let lpn = self.shared().check_lpn(lpn)?;
        let ppn = self.newest(lpn);
        self.shared_mut().host_read(lpn, ppn)
    }
    fn trim(&mut self, lpn: u64) -> Result<()> {
        self.trim_page(lpn)
    }
    /// Read the page, write it again with the content it holds.
    fn pad(&mut self, lpn: u64, buffer: &mut dyn BufferView) -> Result<()> {
        let lpn = self.shared().check_lpn(lpn)?;
        let ppn = self.newest(lpn);
        if ppn == NONE {
            return Ok(());
        }
        let value = self.shared_mut().pad_read(lpn, ppn);
        self.write_inner(lpn, value, Cause::Buffer, buffer)
    }
    fn mapped(&self, lpn: u64) -> Option<u32> {
        (lpn < self.shared().geo.logical_pages)
            .then(|| self.newest(lpn))
            .filter(|&p| p != NONE)
    }
    fn prefetch(&self, lpn: u64) {
        let (table, index) = self.map_entry(lpn);
        crate::table::prefetch(table, index);
    }
    fn on_event(&mut self, event: DeviceEvent, _buffer: &mut dyn BufferView) -> Result<()> {
        self.shared_mut().on_event_without_background(event)
    }
    fn verify(&self) -> Result<()> {
        self.check()
    }
    fn space(&self) -> Space {
        self.spare()
    }
    fn summary(&self) -> FtlSummary {
        FtlSummary {
            memory_bytes: self.state_bytes(),
            content: None,
            fdp: None,
            zombie_weight: None,
            placement_model: None,
            streams: None,
        }
    }
}
