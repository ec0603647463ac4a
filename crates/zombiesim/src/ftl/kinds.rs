//! The FTL of each `ftl.kind`.

use crate::config::{Capabilities, Config, FtlKind};
use crate::error::Result;
use crate::ftl::{BlockMappedFtl, DftlFtl, FastFtl, Ftl, PageMappedFtl, SuperblockFtl};

/// Build the FTL a configuration names. `verify` keeps the integrity oracle.
pub fn build(cfg: &Config, seed: u64, verify: bool) -> Result<Box<dyn Ftl>> {
    Capabilities::of(cfg.ftl.kind).check(cfg, cfg.ftl.kind.name())?;
    Ok(match cfg.ftl.kind {
        FtlKind::Page => Box::new(PageMappedFtl::new(cfg, seed, verify)?),
        FtlKind::Dftl => Box::new(DftlFtl::new(cfg, seed, verify)?),
        FtlKind::Superblock => Box::new(SuperblockFtl::new(cfg, verify)?),
        FtlKind::Fast => Box::new(FastFtl::new(cfg, verify)?),
        FtlKind::Block => Box::new(BlockMappedFtl::new(cfg, verify)?),
    })
}
