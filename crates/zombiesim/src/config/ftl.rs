//! The `[ftl]` section: which flash translation layer runs ([`FtlKind`], a kind of the
//! registry in `ftl_kinds`), how it allocates and where GC writes, retention, and the
//! keys of the hybrid FTLs (FAST's log blocks, DFTL's mapping cache, SuperBlock's
//! size), with their defaults.

use super::FtlKind;
use crate::placement::PlacementSpec;
use serde::{Deserialize, Serialize};

/// How FAST picks the log block to merge when log blocks run out.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum LogVictim {
    /// The oldest random log block (FIFO), as FAST does.
    RoundRobin,
    /// BA-VBS (004 §5): the log block with the lowest merge cost net of the benefit of
    /// taking buffered dirty pages (needs `device.buffer_policy = "3-region"`).
    BaVbs,
}

impl LogVictim {
    pub fn name(self) -> &'static str {
        match self {
            LogVictim::RoundRobin => "round-robin",
            LogVictim::BaVbs => "ba-vbs",
        }
    }
}

/// Where GC writes the pages it copies.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum GcFrontier {
    /// GC has its own open block per parallel unit.
    Separate,
    /// GC copies into the same open block as host writes.
    Shared,
}

/// Which plane a host page write goes to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Allocation {
    /// Round-robin over all planes, page by page.
    Stripe,
    /// The plane that can start the program soonest (timing mode); round-robin
    /// among equally ready planes, so in counting mode it equals `stripe`.
    Dynamic,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct FtlConfig {
    pub kind: FtlKind,
    /// physical / logical − 1, over the usable blocks.
    pub over_provisioning: f64,
    /// Blocks withheld from the FTL altogether (factory spares), spread over the planes.
    pub reserved_blocks: u32,
    pub gc_frontier: GcFrontier,
    pub allocation: Allocation,
    /// Which stream each page is written to (`crate::placement::REGISTRY`): `dac`
    /// (the regions below and the zombie block) or another registered policy.
    pub placement: PlacementSpec,
    /// Hot/cold clustering (DAC): logical pages move between this many regions, up one
    /// when the host overwrites them, down one when GC copies them; each region writes
    /// to its own open block. 1 = no clustering.
    pub regions: u32,
    /// Retention of a block programmed in normal mode, s (0 = not modelled: normal
    /// blocks are never refreshed).
    pub retention_s: f64,
    /// Retention of a block programmed in fast-write mode (`gc.fast_write`), s: `T`
    /// of 003 §3.3. Such a block is refreshed `T − D` after it was opened.
    pub fast_retention_s: f64,
    /// The longest power-off the data must survive, s: `D` of 003 §3.3.
    pub power_off_s: f64,
    /// FAST: random log blocks (the sequential log block comes on top). 0 = every
    /// spare block but the sequential log block and the one a merge writes into.
    pub log_blocks: u32,
    /// FAST: how the log block to merge is chosen.
    pub log_victim: LogVictim,
    /// FAST (BA-BM, 004 §4): a merge takes pages that are dirty in the device write
    /// buffer from the buffer instead of flash, and they become clean there.
    pub buffer_aware_merge: bool,
    /// DFTL: entries of the cached mapping table (one per logical page mapped).
    pub cmt_entries: u64,
    /// SuperBlock: adjacent logical blocks per superblock (N).
    pub superblock_blocks: u32,
}

impl Default for FtlConfig {
    fn default() -> Self {
        FtlConfig {
            kind: FtlKind::default(),
            over_provisioning: 0.07,
            reserved_blocks: 0,
            gc_frontier: GcFrontier::Separate,
            allocation: Allocation::Dynamic,
            placement: PlacementSpec::default(),
            regions: 1,
            retention_s: 0.0,
            fast_retention_s: 7.0 * 86400.0,
            power_off_s: 86400.0,
            log_blocks: 0,
            log_victim: LogVictim::RoundRobin,
            buffer_aware_merge: false,
            cmt_entries: 65536,
            superblock_blocks: 16,
        }
    }
}
