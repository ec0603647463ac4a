//! The `[flash]` section: the NAND geometry (parallel units, blocks, pages, page
//! size) and its defaults, and the largest page size a configuration may ask for.

use crate::units::ByteSize;
use serde::{Deserialize, Serialize};

/// The largest flash page (and mapping unit) a configuration may ask for.
pub const MAX_PAGE_SIZE: u64 = 1 << 20;

/// NAND geometry. The parallel units are planes: `channels × chips × dies × planes`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct FlashConfig {
    pub channels: u32,
    pub chips_per_channel: u32,
    pub dies_per_chip: u32,
    pub planes_per_die: u32,
    pub blocks_per_plane: u32,
    pub pages_per_block: u32,
    /// Flash page size, which is also the FTL's mapping unit.
    pub page_size: ByteSize,
}

impl Default for FlashConfig {
    fn default() -> Self {
        FlashConfig {
            channels: 2,
            chips_per_channel: 2,
            dies_per_chip: 1,
            planes_per_die: 1,
            blocks_per_plane: 256,
            pages_per_block: 256,
            page_size: ByteSize(4096),
        }
    }
}
