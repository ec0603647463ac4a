//! `ftl.kind = "superblock"`: SuperBlock FTL (Kang et al.), `ftl.superblock_blocks`
//! adjacent logical blocks share their physical blocks, page-mapped inside. Every
//! superblock needs a spare block of its own to collect into, and one block is held
//! back for the copy.

use super::{no_checks, no_memory, BlockMapped, FtlKindSpec, KindKey, Mapping, SpareNeed};
use crate::config::{Capabilities, Config, Geometry};

/// SuperBlock's registry entry.
pub const SPEC: FtlKindSpec = FtlKindSpec {
    about: "SuperBlock: ftl.superblock_blocks adjacent logical blocks share their \
            physical blocks, page-mapped inside",
    capabilities: Capabilities::NONE,
    mapping: Mapping::Blocks(BlockMapped {
        frees_space: "SuperBlock collects inside a superblock by utilisation",
        spare,
    }),
    keys: &[KindKey {
        key: "ftl.superblock_blocks",
        changed: |cfg| cfg.ftl.superblock_blocks != Config::default().ftl.superblock_blocks,
        refused: |cfg| {
            (cfg.ftl.superblock_blocks == 0)
                .then_some("must be at least 1 logical block per superblock")
        },
    }],
    validate: no_checks,
    memory: no_memory,
    mapping_cache: false,
};

/// Superblocks of a SuperBlock FTL (the last one may hold fewer logical blocks).
pub fn superblock_count(cfg: &Config, geo: &Geometry) -> u32 {
    let ppb = geo.pages_per_block as u64;
    (geo.logical_pages / ppb).div_ceil(cfg.ftl.superblock_blocks.max(1) as u64) as u32
}

/// One spare block per superblock, + 1.
fn spare(cfg: &Config, geo: &Geometry) -> SpareNeed {
    SpareNeed {
        blocks: superblock_count(cfg, geo) + 1,
        key: "ftl.superblock_blocks",
        detail: format!(
            " (one per superblock of {} logical blocks, + 1)",
            cfg.ftl.superblock_blocks
        ),
        hint: " or raise ftl.superblock_blocks",
    }
}
