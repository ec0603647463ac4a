//! `[device]`: the device's DRAM write buffer, and the scheduling keys of `[timing]`
//! and `[gc]` that decide when flash work runs.
//!
//! The buffer is off by default (`buffer = 0`): host writes then go straight to the
//! FTL, exactly as without a device layer.

use crate::error::{Error, Result};
use crate::units::ByteSize;
use serde::{Deserialize, Serialize};

/// Which page the write buffer evicts when it is full.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum BufferPolicy {
    /// Least recently used page (written or read).
    Lru,
    /// Clean-first LRU: among the `cflru_window` least recently used pages, a clean
    /// page is evicted before a dirty one (no program); otherwise the LRU page.
    Cflru,
    /// FAB (Jo et al.): evict every page of the logical block with the most pages
    /// buffered (ties: the least recently used block).
    Fab,
    /// BPLRU (Kim et al.): block-level LRU; the victim block is padded with its
    /// missing pages (read from flash) so it is written whole and in order; a block
    /// written fully and sequentially goes to the LRU end at once.
    Bplru,
    /// The 3-region LRU of BA-GC (004 §5): blocks in an initial, a to-be-updated and a
    /// to-be-evicted region, each with its update probability; eviction from the
    /// to-be-evicted region.
    #[serde(rename = "3-region")]
    ThreeRegion,
}

impl BufferPolicy {
    pub const ALL: [BufferPolicy; 5] = [
        BufferPolicy::Lru,
        BufferPolicy::Cflru,
        BufferPolicy::Fab,
        BufferPolicy::Bplru,
        BufferPolicy::ThreeRegion,
    ];

    pub fn name(self) -> &'static str {
        match self {
            BufferPolicy::Lru => "lru",
            BufferPolicy::Cflru => "cflru",
            BufferPolicy::Fab => "fab",
            BufferPolicy::Bplru => "bplru",
            BufferPolicy::ThreeRegion => "3-region",
        }
    }

    /// Whether the policy evicts whole logical blocks.
    pub fn block_granular(self) -> bool {
        matches!(
            self,
            BufferPolicy::Fab | BufferPolicy::Bplru | BufferPolicy::ThreeRegion
        )
    }
}

/// The `[device]` section.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct DeviceConfig {
    /// DRAM write buffer capacity in bytes (0 = no buffer: writes go to flash).
    pub buffer: ByteSize,
    /// Replacement policy of the write buffer.
    pub buffer_policy: BufferPolicy,
    /// Fraction of the buffer (from the LRU end) where `cflru` looks for clean pages.
    pub cflru_window: f64,
    /// Buffered data survives power loss (capacitor-backed DRAM).
    pub buffer_nonvolatile: bool,
    /// A twin-shadow page the buffer evicts is discarded, not written: the host holds
    /// a newer copy and will write it (003 §3.2). Needs a volatile buffer (discarding
    /// would break a non-volatile buffer's durability promise).
    pub discard_twins: bool,
    /// Restarts of the system at these times on the device's clock, s (ascending), as
    /// after a power failure (003 §3.3): both write buffers are reset (their dirty
    /// pages are lost, unless the device buffer is non-volatile), shadows return to
    /// live, and every fast-written block holding valid pages is refreshed. A restart
    /// is a power loss followed by power-on: `--power-loss-at T` adds to this list.
    pub restart_at: Vec<f64>,
    /// A power loss (the restart of `restart_at`) after every this many host requests
    /// of the measured phase; 0 = never. Needs no clock.
    pub power_loss_every: u64,
    /// Dirty pages older than this are written to flash (they stay buffered, clean),
    /// s; 0 = never (004 flushes after 30 s). Needs arrival times.
    pub buffer_max_dirty_age: f64,
}

impl Default for DeviceConfig {
    fn default() -> Self {
        DeviceConfig {
            buffer: ByteSize(0),
            buffer_policy: BufferPolicy::Lru,
            cflru_window: 0.25,
            buffer_nonvolatile: false,
            discard_twins: false,
            restart_at: Vec::new(),
            power_loss_every: 0,
            buffer_max_dirty_age: 0.0,
        }
    }
}

impl DeviceConfig {
    /// Buffer pages of `page_size` bytes.
    pub fn buffer_pages(&self, page_size: u64) -> u64 {
        self.buffer.bytes() / page_size
    }

    /// Check the section against the device's size (`device_bytes`, the logical
    /// capacity) and page size.
    pub fn validate(&self, page_size: u64, device_bytes: u64) -> Result<()> {
        let b = self.buffer.bytes();
        if b > 0 && b < page_size {
            return Err(Error::config(
                "device.buffer",
                format!("{b} bytes holds no page of {page_size} bytes (0 turns the buffer off)"),
            ));
        }
        if b > device_bytes {
            return Err(Error::config(
                "device.buffer",
                format!(
                    "{} is larger than the device's logical capacity ({}); a buffer caches part of the device",
                    self.buffer, ByteSize(device_bytes)
                ),
            ));
        }
        if !(self.cflru_window.is_finite() && self.cflru_window > 0.0 && self.cflru_window <= 1.0) {
            return Err(Error::config(
                "device.cflru_window",
                format!("{}: must be in (0, 1]", self.cflru_window),
            ));
        }
        let age = self.buffer_max_dirty_age;
        if !(age.is_finite() && age >= 0.0) {
            return Err(Error::config(
                "device.buffer_max_dirty_age",
                format!("{age}: must be a non-negative number of seconds (0 = never)"),
            ));
        }
        // A key that nothing would read is refused, not ignored.
        let default = DeviceConfig::default();
        if b == 0 {
            for (key, changed) in [
                (
                    "device.buffer_policy",
                    self.buffer_policy != default.buffer_policy,
                ),
                (
                    "device.cflru_window",
                    self.cflru_window != default.cflru_window,
                ),
                (
                    "device.buffer_nonvolatile",
                    self.buffer_nonvolatile != default.buffer_nonvolatile,
                ),
                (
                    "device.buffer_max_dirty_age",
                    self.buffer_max_dirty_age != default.buffer_max_dirty_age,
                ),
            ] {
                if changed {
                    return Err(Error::config(
                        key,
                        "has no effect without a write buffer: set device.buffer too",
                    ));
                }
            }
        }
        if self.buffer_policy != BufferPolicy::Cflru && self.cflru_window != default.cflru_window {
            return Err(Error::unread(
                "device.cflru_window",
                format!(
                    "is read only by the `cflru` policy (device.buffer_policy is `{}`)",
                    self.buffer_policy.name()
                ),
            ));
        }
        Ok(())
    }
}

/// When queued flash work runs (`timing.scheduler`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Scheduler {
    /// First come, first served: GC reserves its die when it is triggered, and host
    /// operations issued later on that die wait behind all of it.
    Fifo,
    /// Read priority: GC work waits in per-die queues and runs when its die has no
    /// host operation to do; a host read waits at most for the operation in progress.
    Rps,
    /// `rps`, and a host read also suspends a program or erase in progress
    /// (`timing.suspend_us` each way, at most `timing.max_suspensions` per operation).
    Suspend,
}

impl Scheduler {
    pub const ALL: [Scheduler; 3] = [Scheduler::Fifo, Scheduler::Rps, Scheduler::Suspend];

    pub fn name(self) -> &'static str {
        match self {
            Scheduler::Fifo => "fifo",
            Scheduler::Rps => "rps",
            Scheduler::Suspend => "suspend",
        }
    }
}
