//! Checks of the keys of the FTLs other than page mapping (DFTL, SuperBlock, FAST,
//! block) and of the block-granularity buffer policies (FAB, BPLRU, 3-region LRU).
//!
//! Allowed combinations:
//!
//! ```text
//!   device.buffer_policy   page  dftl  superblock  fast  block
//!   lru, cflru              yes   yes     yes       yes   yes
//!   fab, bplru, 3-region     -     -      yes       yes   yes   (whole logical blocks)
//!
//!   ftl.log_blocks, ftl.log_victim, ftl.buffer_aware_merge    fast only
//!   ftl.log_victim = "ba-vbs"     needs device.buffer_policy = "3-region"
//!   ftl.buffer_aware_merge        needs a device buffer (device.buffer > 0)
//!   ftl.cmt_entries               dftl only (at least 1)
//!   ftl.superblock_blocks         superblock only (at least 1)
//! ```
//!
//! A block-mapped FTL (superblock, fast, block) chooses its own victims and blocks:
//! the page-mapped GC keys (`gc.policy` other than greedy, `gc.scope`, the
//! watermarks, `ftl.gc_frontier`, `ftl.allocation`) would be read by nothing, so a
//! change to them is refused.

use super::{BufferPolicy, Config, FtlConfig, FtlKind, GcConfig, Geometry, LogVictim, PolicySpec};
use crate::error::{Error, Result};

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

/// Superblocks of a SuperBlock FTL (the last one may hold fewer logical blocks).
pub fn superblock_count(cfg: &Config, geo: &Geometry) -> u32 {
    let ppb = geo.pages_per_block as u64;
    (geo.logical_pages / ppb).div_ceil(cfg.ftl.superblock_blocks.max(1) as u64) as u32
}

/// Usable physical blocks beyond the logical ones.
pub fn spare_blocks(geo: &Geometry) -> u32 {
    let ppb = geo.pages_per_block as u64;
    let logical_blocks = geo.logical_pages.div_ceil(ppb);
    ((geo.physical_pages / ppb).saturating_sub(logical_blocks)) as u32
}

pub(super) fn validate(cfg: &Config, geo: &Geometry) -> Result<()> {
    let f = &cfg.ftl;
    let kind = f.kind;
    let d = FtlConfig::default();
    let only = |key: &str, which: FtlKind| {
        Err(Error::unread(
            key,
            format!(
                "is read only by the `{}` FTL (ftl.kind is `{}`)",
                which.name(),
                kind.name()
            ),
        ))
    };
    if kind != FtlKind::Fast {
        for (key, changed) in [
            ("ftl.log_blocks", f.log_blocks != d.log_blocks),
            ("ftl.log_victim", f.log_victim != d.log_victim),
            ("ftl.buffer_aware_merge", f.buffer_aware_merge),
        ] {
            if changed {
                return only(key, FtlKind::Fast);
            }
        }
    }
    if f.cmt_entries == 0 {
        return Err(Error::config(
            "ftl.cmt_entries",
            "must be at least 1: DFTL keeps the mappings it uses in its cached mapping table",
        ));
    }
    if kind != FtlKind::Dftl && f.cmt_entries != d.cmt_entries {
        return only("ftl.cmt_entries", FtlKind::Dftl);
    }
    if f.superblock_blocks == 0 {
        return Err(Error::config(
            "ftl.superblock_blocks",
            "must be at least 1 logical block per superblock",
        ));
    }
    if kind != FtlKind::Superblock && f.superblock_blocks != d.superblock_blocks {
        return only("ftl.superblock_blocks", FtlKind::Superblock);
    }
    let dev = &cfg.device;
    let buffered = dev.buffer.bytes() > 0;
    if dev.buffer_policy.block_granular() && !kind.block_mapped() {
        return Err(Error::config(
            "device.buffer_policy",
            format!(
                "`{}` evicts whole logical blocks, which helps only a block-mapped FTL \
                 (ftl.kind = superblock, fast or block); with ftl.kind = `{}` use lru or cflru",
                dev.buffer_policy.name(),
                kind.name()
            ),
        ));
    }
    if cfg.host.buffer_policy.block_granular() {
        return Err(Error::config(
            "host.buffer_policy",
            format!(
                "`{}` is a device write-buffer policy for block-mapped FTLs; the host \
                 buffer takes lru or cflru",
                cfg.host.buffer_policy.name()
            ),
        ));
    }
    if f.log_victim == LogVictim::BaVbs
        && !(buffered && dev.buffer_policy == BufferPolicy::ThreeRegion)
    {
        return Err(Error::config(
            "ftl.log_victim",
            "`ba-vbs` weighs buffered pages by the update probability of the 3-region \
             buffer: set device.buffer and device.buffer_policy = \"3-region\"",
        ));
    }
    if dev.buffer_max_dirty_age > 0.0 && cfg.host.enabled() && !cfg.timing.enabled {
        return Err(Error::config(
            "device.buffer_max_dirty_age",
            "under the host model (host.cache, host.threads) the device's clock is the \
             timing model's: set timing.enabled = true",
        ));
    }
    if f.buffer_aware_merge && !buffered {
        return Err(Error::config(
            "ftl.buffer_aware_merge",
            "takes dirty pages from the device write buffer: set device.buffer",
        ));
    }
    if kind.block_mapped() {
        refuse_page_gc_keys(cfg, kind)?;
        let spare = spare_blocks(geo);
        let need = match kind {
            FtlKind::Fast => fast_log_blocks(cfg, geo).max(1) + FAST_EXTRA_BLOCKS,
            // SuperBlock: every superblock needs a spare block of its own to collect
            // into, and one block is held back for the copy.
            FtlKind::Superblock => superblock_count(cfg, geo) + 1,
            _ => 1,
        };
        if spare < need {
            let key = if kind == FtlKind::Fast && f.log_blocks > 0 {
                "ftl.log_blocks"
            } else if kind == FtlKind::Superblock {
                "ftl.superblock_blocks"
            } else {
                "ftl.over_provisioning"
            };
            return Err(Error::config(
                key,
                format!(
                    "the `{}` FTL needs {need} spare blocks{}, and over-provisioning {} leaves {spare} \
                     (raise ftl.over_provisioning{})",
                    kind.name(),
                    match kind {
                        FtlKind::Fast => format!(
                            " ({} log blocks + the sequential log block + a merge block)",
                            fast_log_blocks(cfg, geo).max(1)
                        ),
                        FtlKind::Superblock => format!(
                            " (one per superblock of {} logical blocks, + 1)",
                            f.superblock_blocks
                        ),
                        _ => String::new(),
                    },
                    f.over_provisioning,
                    match kind {
                        FtlKind::Fast => " or lower ftl.log_blocks",
                        FtlKind::Superblock => " or raise ftl.superblock_blocks",
                        _ => "",
                    }
                ),
            ));
        }
    }
    Ok(())
}

/// The page-mapped GC keys a block-mapped FTL would not read.
fn refuse_page_gc_keys(cfg: &Config, kind: FtlKind) -> Result<()> {
    let g = GcConfig::default();
    let f = FtlConfig::default();
    let why = match kind {
        FtlKind::Fast => "FAST merges log blocks (ftl.log_victim)",
        FtlKind::Superblock => "SuperBlock collects inside a superblock by utilisation",
        _ => "block mapping rewrites whole blocks",
    };
    for (key, changed) in [
        ("gc.policy", cfg.gc.policy != PolicySpec::Greedy),
        ("gc.cb_age", cfg.gc.cb_age != g.cb_age),
        ("gc.scope", cfg.gc.scope != g.scope),
        ("gc.low_watermark", cfg.gc.low_watermark != g.low_watermark),
        (
            "gc.high_watermark",
            cfg.gc.high_watermark != g.high_watermark,
        ),
        ("ftl.gc_frontier", cfg.ftl.gc_frontier != f.gc_frontier),
        ("ftl.allocation", cfg.ftl.allocation != f.allocation),
        ("ftl.placement", cfg.ftl.placement != f.placement),
    ] {
        if changed {
            return Err(Error::unread(
                key,
                format!(
                    "is read only by the page-mapped FTLs (page, dftl): {why}; \
                     ftl.kind is `{}`",
                    kind.name()
                ),
            ));
        }
    }
    Ok(())
}
