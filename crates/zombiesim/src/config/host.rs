//! The `[host]` and `[notify]` sections: the host buffer cache with its writeback, the
//! closed-loop threads, and the channel that tells the device which pages are zombies.

use crate::error::{Error, Result};
use crate::units::ByteSize;
use serde::{Deserialize, Serialize};

/// Where a block trace enters the host model.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum TracePlacement {
    /// The trace is the application's stream: it goes through the page cache.
    Above,
    /// The trace is what reached the device: it bypasses the page cache.
    Below,
}

/// Which placement identifier the host gives each write it sends to the device
/// (`host.placement`; read by an FDP device, `fdp.enabled`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum HostPlacement {
    /// None: every write goes to the device's default handle.
    #[default]
    None,
    /// The identifier the application gave its last write of the page (a workload's
    /// or a trace's), kept with the dirty page and sent with its writeback (as Linux
    /// keeps a bio's write hint, and merges no requests across two).
    Writer,
    /// The page's file (`host.file_size` pieces of the logical space), modulo the
    /// device's placement identifiers: one handle per file, as a per-inode hint.
    File,
    /// What the page holds, as the file system model says: data 0, metadata 1,
    /// journal 2 (`fs:` workloads).
    Kind,
}

impl HostPlacement {
    /// The name as written in a configuration.
    pub fn name(self) -> &'static str {
        match self {
            HostPlacement::None => "none",
            HostPlacement::Writer => "writer",
            HostPlacement::File => "file",
            HostPlacement::Kind => "kind",
        }
    }
}

/// The host: a Linux-like page cache (or a database buffer) and the threads using it.
///
/// `cache = 0` and `threads = 0` (the defaults) leave the host out: requests go straight
/// to the device interface. Any other value runs the host model (timing must be on: the
/// writeback daemon runs on simulated time).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct HostConfig {
    /// Buffer cache capacity (`0` = no cache: every request goes to the device).
    pub cache: ByteSize,
    /// Closed-loop threads: each issues its next request when the previous completes
    /// (0 = open loop: requests start at their arrival times, or back to back).
    pub threads: u32,
    /// The flusher wakes every this many seconds (Linux `dirty_writeback_centisecs`).
    pub dirty_writeback_s: f64,
    /// Pages dirty longer than this are written back at the next wake (`dirty_expire`).
    pub dirty_expire_s: f64,
    /// Background writeback runs while dirty pages exceed this fraction of the cache.
    pub dirty_background_ratio: f64,
    /// Writers are throttled while dirty pages exceed this fraction of the cache.
    pub dirty_ratio: f64,
    /// Writeback order: files of this size (a region of the logical space) are written
    /// oldest-dirtied first, each in ascending page order. `0` = the whole device is one
    /// file (a raw block device, as in 000's micro-benchmark); one page = pure
    /// oldest-first (a database writer's checkpoint queue).
    pub file_size: ByteSize,
    /// Largest writeback command (Linux `max_sectors_kb`).
    pub max_write: ByteSize,
    /// Host CPU time per application request (system call, copy), µs.
    pub request_us: f64,
    /// Where a trace enters: through the cache (`above`) or below it.
    pub trace: TracePlacement,
    /// A host-side write buffer above the device (003's 128 MB LRU buffer): block
    /// requests' writes land in it, its evictions and flushes write to the device,
    /// and the pages it dirties reach the device through `[notify]`. Works without
    /// the host model and without timing; `0` = none.
    pub buffer: ByteSize,
    /// Replacement policy of the host write buffer.
    pub buffer_policy: super::BufferPolicy,
    /// The placement identifier each write of the host model carries.
    pub placement: HostPlacement,
}

impl Default for HostConfig {
    fn default() -> Self {
        HostConfig {
            cache: ByteSize(0),
            threads: 0,
            dirty_writeback_s: 5.0,
            dirty_expire_s: 30.0,
            dirty_background_ratio: 0.10,
            dirty_ratio: 0.20,
            file_size: ByteSize(0),
            max_write: ByteSize(512 << 10),
            request_us: 2.0,
            trace: TracePlacement::Above,
            buffer: ByteSize(0),
            buffer_policy: super::BufferPolicy::Lru,
            placement: HostPlacement::None,
        }
    }
}

impl HostConfig {
    /// Whether the host model runs at all.
    pub fn enabled(&self) -> bool {
        self.cache.bytes() > 0 || self.threads > 0
    }
}

/// How the device learns that a page became dirty in the host buffer (SPEC §2).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum NotifyMode {
    /// The device never learns (baseline GC).
    None,
    /// The device learns instantly and completely (an upper bound).
    Ideal,
    /// A host-side FIFO of extents; each read/write command carries `extents` of them.
    Piggyback,
    /// An explicit notification command per batch, occupying the interface.
    Command,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct NotifyConfig {
    pub mode: NotifyMode,
    /// Extents carried per read/write command (`piggyback`) or per command (`command`).
    pub extents: u32,
    /// Longest extent in 512-byte sectors (000: a one-byte length field, 255).
    pub extent_sectors: u32,
    /// Device time to process one notification command, µs (`command`). The command is
    /// non-queued (like SATA TRIM): it waits for outstanding commands to complete and
    /// holds the interface while it runs.
    pub command_us: f64,
}

impl Default for NotifyConfig {
    fn default() -> Self {
        NotifyConfig {
            mode: NotifyMode::Piggyback,
            extents: 1,
            extent_sectors: 255,
            command_us: 100.0,
        }
    }
}

/// Check the host and notify sections (keys named in errors).
pub(super) fn validate(
    host: &HostConfig,
    notify: &NotifyConfig,
    timed: bool,
    fdp: bool,
) -> Result<()> {
    if host.placement != HostPlacement::None {
        let why = if !fdp {
            Some("only an FDP device reads placement identifiers: set fdp.enabled = true")
        } else if !host.enabled() {
            Some(
                "the host model is off (host.cache = 0, host.threads = 0): requests reach \
                 the device with their own identifiers; set host.cache",
            )
        } else if host.placement == HostPlacement::File && host.file_size.bytes() == 0 {
            Some("host.file_size = 0 makes the logical space one file: give host.file_size")
        } else {
            None
        };
        if let Some(why) = why {
            return Err(Error::config("host.placement", why));
        }
    }
    for (key, v) in [
        ("host.dirty_writeback_s", host.dirty_writeback_s),
        ("host.dirty_expire_s", host.dirty_expire_s),
    ] {
        if !(v.is_finite() && v > 0.0) {
            return Err(Error::config(
                key,
                format!("{v}: must be a positive number"),
            ));
        }
    }
    for (key, v) in [
        ("host.dirty_background_ratio", host.dirty_background_ratio),
        ("host.dirty_ratio", host.dirty_ratio),
    ] {
        if !(v.is_finite() && v > 0.0 && v <= 1.0) {
            return Err(Error::config(key, format!("{v}: must be in (0, 1]")));
        }
    }
    if host.dirty_background_ratio > host.dirty_ratio {
        return Err(Error::config(
            "host.dirty_background_ratio",
            format!(
                "{} is above host.dirty_ratio = {}",
                host.dirty_background_ratio, host.dirty_ratio
            ),
        ));
    }
    if !(host.request_us.is_finite() && host.request_us >= 0.0) {
        return Err(Error::config(
            "host.request_us",
            "must be a non-negative number",
        ));
    }
    if host.max_write.bytes() == 0 {
        return Err(Error::config("host.max_write", "must be at least one page"));
    }
    if host.enabled() && !timed {
        return Err(Error::config(
            "host.cache",
            "the host model runs on simulated time: set timing.enabled = true \
             (or host.cache = 0 and host.threads = 0)",
        ));
    }
    if notify.extents == 0 {
        return Err(Error::config("notify.extents", "must be at least 1"));
    }
    if notify.extent_sectors == 0 {
        return Err(Error::config("notify.extent_sectors", "must be at least 1"));
    }
    if !(notify.command_us.is_finite() && notify.command_us >= 0.0) {
        return Err(Error::config(
            "notify.command_us",
            "must be a non-negative number",
        ));
    }
    Ok(())
}
