//! Placeholder while the FTL is built (replaced wholesale).

use crate::config::Config;
use crate::error::{Error, Result};
use crate::ftl::{BufferView, Ftl, FtlBase};
use crate::stats::Cause;

/// Placeholder.
pub struct SuperblockFtl {
    base: FtlBase,
}

impl SuperblockFtl {
    pub fn new(_cfg: &Config, _verify: bool) -> Result<Self> {
        Err(Error::config("ftl.kind", "not built yet"))
    }
}

impl Ftl for SuperblockFtl {
    super::base::block_mapped_common!();
    fn write_page(
        &mut self,
        _: u64,
        _: Option<u64>,
        _: Cause,
        _: &mut dyn BufferView,
    ) -> Result<()> {
        unreachable!()
    }
    fn read(&mut self, _: u64) -> Result<()> {
        unreachable!()
    }
    fn pad(&mut self, _: u64, _: &mut dyn BufferView) -> Result<()> {
        unreachable!()
    }
    fn trim(&mut self, _: u64) -> Result<()> {
        unreachable!()
    }
    fn mapped(&self, _: u64) -> Option<u32> {
        unreachable!()
    }
    fn verify(&self) -> Result<()> {
        unreachable!()
    }
    fn held_back_pages(&self) -> u64 {
        unreachable!()
    }
    fn valid_pages(&self) -> u64 {
        unreachable!()
    }
    fn memory_bytes(&self) -> usize {
        unreachable!()
    }
}
