//! `ftl.kind = "fast"`: FAST (Lee et al.), block-mapped data blocks with
//! `ftl.log_blocks` page-mapped log blocks shared by all of them, and switch, partial
//! and full merges. Its keys: `ftl.log_blocks`, `ftl.log_victim` (BA-VBS needs the
//! 3-region buffer), `ftl.buffer_aware_merge` (BA-BM needs a device buffer).

use super::{spare_blocks, BlockMapped, FtlKindSpec, KindKey, Mapping, SpareNeed};
use crate::config::{BufferPolicy, Capabilities, Config, Geometry, LogVictim, MemoryPart};
use crate::error::{Error, Result};

/// FAST's registry entry.
pub const SPEC: FtlKindSpec = FtlKindSpec {
    about: "FAST: block-mapped data blocks, ftl.log_blocks page-mapped log blocks shared \
            by all of them, switch / partial / full merges",
    capabilities: Capabilities::NONE,
    mapping: Mapping::Blocks(BlockMapped {
        frees_space: "FAST merges log blocks (ftl.log_victim)",
        spare,
    }),
    keys: &[
        KindKey::any_value("ftl.log_blocks", |cfg| {
            cfg.ftl.log_blocks != Config::default().ftl.log_blocks
        }),
        KindKey::any_value("ftl.log_victim", |cfg| {
            cfg.ftl.log_victim != Config::default().ftl.log_victim
        }),
        KindKey::any_value("ftl.buffer_aware_merge", |cfg| cfg.ftl.buffer_aware_merge),
    ],
    validate,
    memory,
    mapping_cache: false,
};

/// Spare blocks a FAST merge needs beside the random log blocks: the sequential log
/// block and the block a merge writes into.
pub const FAST_EXTRA_BLOCKS: u32 = 2;

/// The random log blocks FAST runs with (`ftl.log_blocks`, 0 = every spare block but
/// [`FAST_EXTRA_BLOCKS`]).
pub fn fast_log_blocks(cfg: &Config, geo: &Geometry) -> u32 {
    match cfg.ftl.log_blocks {
        0 => spare_blocks(geo).saturating_sub(FAST_EXTRA_BLOCKS),
        n => n,
    }
}

/// BA-VBS and BA-BM read the device write buffer.
fn validate(cfg: &Config, _: &Geometry) -> Result<()> {
    let f = &cfg.ftl;
    let dev = &cfg.device;
    let buffered = dev.buffer.bytes() > 0;
    if f.log_victim == LogVictim::BaVbs
        && !(buffered && dev.buffer_policy == BufferPolicy::ThreeRegion)
    {
        return Err(Error::config(
            "ftl.log_victim",
            "`ba-vbs` weighs buffered pages by the update probability of the 3-region \
             buffer: set device.buffer and device.buffer_policy = \"3-region\"",
        ));
    }
    if f.buffer_aware_merge && !buffered {
        return Err(Error::config(
            "ftl.buffer_aware_merge",
            "takes dirty pages from the device write buffer: set device.buffer",
        ));
    }
    Ok(())
}

/// The log-page map: where each logical page's log copy is, 4 B a logical page.
fn memory(_: &Config, geo: &Geometry) -> Option<MemoryPart> {
    Some(MemoryPart {
        what: "log-page map",
        key: "flash.blocks_per_plane",
        bytes: (geo.logical_pages as f64 * 4.0).ceil() as u64,
    })
}

/// The log blocks, the sequential log block and a merge block.
fn spare(cfg: &Config, geo: &Geometry) -> SpareNeed {
    let log_blocks = fast_log_blocks(cfg, geo).max(1);
    SpareNeed {
        blocks: log_blocks + FAST_EXTRA_BLOCKS,
        key: if cfg.ftl.log_blocks > 0 {
            "ftl.log_blocks"
        } else {
            "ftl.over_provisioning"
        },
        detail: format!(" ({log_blocks} log blocks + the sequential log block + a merge block)"),
        hint: " or lower ftl.log_blocks",
    }
}
