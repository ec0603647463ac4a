//! Checks of the write buffers' keys that other sections decide: a block-granularity
//! policy (FAB, BPLRU, 3-region LRU) is the device buffer's alone, and the device
//! buffer's dirty age under the host model needs the timing model's clock. The FTL
//! kinds' own checks of the buffer are their registry entries' (`ftl_kinds`).

use super::Config;
use crate::error::{Error, Result};

pub(super) fn validate(cfg: &Config) -> Result<()> {
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
    if cfg.device.buffer_max_dirty_age > 0.0 && cfg.host.enabled() && !cfg.timing.enabled {
        return Err(Error::config(
            "device.buffer_max_dirty_age",
            "under the host model (host.cache, host.threads) the device's clock is the \
             timing model's: set timing.enabled = true",
        ));
    }
    Ok(())
}
