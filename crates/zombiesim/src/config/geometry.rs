//! The NAND's sizes and address arithmetic, derived from the configuration (re-exported
//! as `flash::Geometry`). How an FTL lays itself out on it is [`super::FtlLayout`].

use super::Config;
use crate::error::{Error, Result};

/// Everything about the device's size and shape, resolved from a [`Config`].
#[derive(Clone, Debug, PartialEq)]
pub struct Geometry {
    pub channels: u32,
    pub chips_per_channel: u32,
    pub dies_per_chip: u32,
    pub planes_per_die: u32,
    pub blocks_per_plane: u32,
    pub pages_per_block: u32,
    pub page_size: u64,
    /// Parallel units (planes) in the device.
    pub planes: u32,
    /// All blocks, reserved ones included.
    pub blocks: u32,
    /// Blocks withheld from the FTL (factory spares).
    pub reserved_blocks: u32,
    /// Pages in the blocks the FTL may use.
    pub physical_pages: u64,
    /// Pages the host can address: `floor(physical / (1 + OP))`.
    pub logical_pages: u64,
}

impl Geometry {
    /// Resolve and check the geometry; errors name the config key to change.
    pub fn new(cfg: &Config) -> Result<Geometry> {
        let f = &cfg.flash;
        // The product of the six factors, checked: `None` when it overflows 128 bits.
        let pages = [
            f.channels,
            f.chips_per_channel,
            f.dies_per_chip,
            f.planes_per_die,
            f.blocks_per_plane,
            f.pages_per_block,
        ]
        .iter()
        .try_fold(1u128, |acc, &x| acc.checked_mul(u128::from(x)));
        if pages.is_none_or(|p| p >= u128::from(u32::MAX)) {
            let count = pages.map_or_else(|| "more than 2^128".to_string(), |p| p.to_string());
            return Err(Error::config(
                "flash.blocks_per_plane",
                format!(
                    "the device has {count} pages; at most {} fit the simulator's 32-bit page numbers (use larger pages)",
                    u32::MAX - 1
                ),
            ));
        }
        // Every factor and product now fits in 32 bits.
        let planes64 = f.channels as u64
            * f.chips_per_channel as u64
            * f.dies_per_chip as u64
            * f.planes_per_die as u64;
        let blocks64 = planes64 * f.blocks_per_plane as u64;
        let planes = planes64 as u32;
        let blocks = blocks64 as u32;
        let reserved = cfg.ftl.reserved_blocks;
        if reserved >= blocks {
            return Err(Error::config(
                "ftl.reserved_blocks",
                format!("{reserved} reserves every one of the device's {blocks} blocks"),
            ));
        }
        let ppb = f.pages_per_block as u64;
        let physical_pages = (blocks - reserved) as u64 * ppb;
        let mut logical_pages =
            (physical_pages as f64 / (1.0 + cfg.ftl.over_provisioning)).floor() as u64;
        // A block-mapped FTL addresses whole logical blocks: the logical capacity is
        // rounded down to them.
        if cfg.ftl.kind.block_mapped() {
            logical_pages -= logical_pages % ppb;
        }
        if logical_pages == 0 {
            return Err(Error::config(
                "ftl.over_provisioning",
                "leaves no logical space",
            ));
        }
        Ok(Geometry {
            channels: f.channels,
            chips_per_channel: f.chips_per_channel,
            dies_per_chip: f.dies_per_chip,
            planes_per_die: f.planes_per_die,
            blocks_per_plane: f.blocks_per_plane,
            pages_per_block: f.pages_per_block,
            page_size: f.page_size.bytes(),
            planes,
            blocks,
            reserved_blocks: reserved,
            physical_pages,
            logical_pages,
        })
    }

    /// The plane a block lives on.
    #[inline]
    pub fn plane_of(&self, block: u32) -> u32 {
        block / self.blocks_per_plane
    }

    /// Whether a block is one of the reserved spares (the last blocks of each plane).
    pub fn is_reserved(&self, block: u32) -> bool {
        let plane = self.plane_of(block);
        let idx = block % self.blocks_per_plane;
        let share = self.reserved_blocks / self.planes
            + u32::from(plane < self.reserved_blocks % self.planes);
        idx >= self.blocks_per_plane - share
    }

    /// Over-provisioning actually available to the data: `physical / logical − 1`.
    pub fn over_provisioning(&self) -> f64 {
        self.physical_pages as f64 / self.logical_pages as f64 - 1.0
    }
}
