//! Checks of the ShadowGC keys (003): the host write buffer, GC that reads from the
//! device buffer, fast-write relocation with its retention and refresh, the skip
//! policy, twin-shadow discards and restarts (power losses). Each combination that
//! could silently do less than it says is refused here, naming the key.

use super::{Config, Geometry, NotifyMode};
use crate::error::{Error, Result};
use crate::units::ByteSize;

pub(super) fn validate(cfg: &Config, geo: &Geometry) -> Result<()> {
    let page = geo.page_size;
    let device_buffer = cfg.device.buffer.bytes() >= page;
    let h = &cfg.host;
    let hb = h.buffer.bytes();
    if hb > 0 {
        if h.enabled() {
            return Err(Error::config(
                "host.buffer",
                "is the host-side write buffer of block requests; with host.cache or \
                 host.threads the host model's page cache is the host buffer: set one of them",
            ));
        }
        if hb < page {
            return Err(Error::config(
                "host.buffer",
                format!("{hb} bytes holds no page of {page} bytes (0 turns it off)"),
            ));
        }
        let logical = geo.logical_pages * page;
        if hb > logical {
            return Err(Error::config(
                "host.buffer",
                format!(
                    "{} is larger than the device's logical capacity ({})",
                    h.buffer,
                    ByteSize(logical)
                ),
            ));
        }
    } else if h.buffer_policy != super::BufferPolicy::Lru {
        return Err(Error::unread(
            "host.buffer_policy",
            "is read only with a host write buffer: set host.buffer",
        ));
    }
    let g = &cfg.gc;
    if g.fast_write && cfg.notify.mode == NotifyMode::None {
        return Err(Error::config(
            "notify.mode",
            "`none` tells the device of no host-shadow page, so gc.fast_write (hgc, sgc) \
             would separate nothing: use ideal, piggyback or command (or gc.fast_write = false)",
        ));
    }
    if g.fast_write && !g.zombie_block {
        return Err(Error::config(
            "gc.fast_write",
            "fast-written blocks are the dedicated (zombie) blocks: set gc.zombie_block = true",
        ));
    }
    for (key, on) in [
        ("gc.shadow_reads", g.shadow_reads),
        ("gc.skip_shadows", g.skip_shadows),
        ("device.discard_twins", cfg.device.discard_twins),
    ] {
        if on && !device_buffer {
            return Err(Error::config(
                key,
                "works on the device write buffer: set device.buffer",
            ));
        }
        if on && (cfg.content.enabled() || cfg.content.dedup) {
            return Err(Error::config(
                key,
                "is not modelled with content-aware flash (content.pool, content.dedup)",
            ));
        }
    }
    if cfg.device.discard_twins {
        if g.skip_shadows {
            return Err(Error::config(
                "device.discard_twins",
                "with gc.skip_shadows a page whose flash copy GC dropped could then be \
                 discarded from the buffer too, leaving only the host's copy: use one of them",
            ));
        }
        if cfg.device.buffer_nonvolatile {
            return Err(Error::config(
                "device.discard_twins",
                "a non-volatile buffer promises its pages survive power loss; discarding \
                 one would break that: set device.buffer_nonvolatile = false",
            ));
        }
        if !(hb > 0 || h.enabled()) || cfg.notify.mode == NotifyMode::None {
            return Err(Error::config(
                "device.discard_twins",
                "a twin-shadow page needs a host buffer that tells the device what it \
                 holds: set host.buffer (or host.cache) and a notify.mode other than none",
            ));
        }
    }
    let f = &cfg.ftl;
    for (key, v) in [
        ("ftl.retention_s", f.retention_s),
        ("ftl.fast_retention_s", f.fast_retention_s),
        ("ftl.power_off_s", f.power_off_s),
    ] {
        if !(v.is_finite() && v >= 0.0) {
            return Err(Error::config(
                key,
                format!("{v}: must be a non-negative number of seconds"),
            ));
        }
    }
    let defaults = super::FtlConfig::default();
    if !g.fast_write && f.fast_retention_s != defaults.fast_retention_s {
        return Err(Error::unread(
            "ftl.fast_retention_s",
            "is read only with fast-write relocation: set gc.fast_write = true",
        ));
    }
    if !g.fast_write && f.retention_s == 0.0 && f.power_off_s != defaults.power_off_s {
        return Err(Error::unread(
            "ftl.power_off_s",
            "is read only with retention refresh: set gc.fast_write or ftl.retention_s",
        ));
    }
    if g.fast_write && f.fast_retention_s <= f.power_off_s {
        return Err(Error::config(
            "ftl.fast_retention_s",
            format!(
                "{} s must exceed ftl.power_off_s = {} s: a fast block is refreshed every T − D",
                f.fast_retention_s, f.power_off_s
            ),
        ));
    }
    if f.retention_s > 0.0 && f.retention_s <= f.power_off_s {
        return Err(Error::config(
            "ftl.retention_s",
            format!(
                "{} s must exceed ftl.power_off_s = {} s (or be 0: not modelled)",
                f.retention_s, f.power_off_s
            ),
        ));
    }
    let r = &cfg.device.restart_at;
    for (key, on) in [
        ("device.restart_at", !r.is_empty()),
        ("device.power_loss_every", cfg.device.power_loss_every > 0),
    ] {
        if on && h.enabled() {
            return Err(Error::config(
                key,
                "restarts (power losses) run on block requests (host.buffer or none), not \
                 under the host model (host.cache, host.threads)",
            ));
        }
    }
    if let Some(bad) = r.iter().find(|t| !(t.is_finite() && **t >= 0.0)) {
        return Err(Error::config(
            "device.restart_at",
            format!("{bad}: restart times are non-negative seconds"),
        ));
    }
    if r.windows(2).any(|w| w[1] < w[0]) {
        return Err(Error::config(
            "device.restart_at",
            "restart times must be in ascending order",
        ));
    }
    Ok(())
}
