//! [`Config::validate`]: the checks of the general keys (flash geometry,
//! over-provisioning, the GC policy and watermarks, timing, the interface,
//! preconditioning), the oracle's and the scheduler's conditions, and the checks of
//! keys set by name; the sections with modules of their own are checked there.

use super::{
    buffers, ftl_kinds, host, shadow, Capabilities, Config, FtlLayout, GcConfig, GcFrontier,
    Geometry, OracleScore, PolicySpec, Scheduler, TimingConfig, ZombieWeight, MAX_PAGE_SIZE,
};
use crate::error::{Error, Result};

impl Config {
    /// Check that the configuration describes a device that can run; every error
    /// names the offending key.
    pub fn validate(&self) -> Result<()> {
        let f = &self.flash;
        for (key, v) in [
            ("flash.channels", f.channels),
            ("flash.chips_per_channel", f.chips_per_channel),
            ("flash.dies_per_chip", f.dies_per_chip),
            ("flash.planes_per_die", f.planes_per_die),
            ("flash.blocks_per_plane", f.blocks_per_plane),
        ] {
            if v == 0 {
                return Err(Error::config(key, "must be at least 1"));
            }
        }
        if f.pages_per_block < 2 {
            return Err(Error::config("flash.pages_per_block", "must be at least 2"));
        }
        let ps = f.page_size.bytes();
        if !(512..=MAX_PAGE_SIZE).contains(&ps) || !ps.is_power_of_two() {
            return Err(Error::config(
                "flash.page_size",
                format!("{ps}: must be a power of two from 512 bytes to 1 MiB"),
            ));
        }
        let op = self.ftl.over_provisioning;
        if !op.is_finite() || op <= 0.0 || op >= 4.0 {
            return Err(Error::config(
                "ftl.over_provisioning",
                format!("{op}: must be in (0, 4): garbage collection needs spare blocks"),
            ));
        }
        let g = &self.gc;
        if let PolicySpec::DChoices(0) | PolicySpec::WindowedGreedy(0) = g.policy {
            return Err(Error::config(
                "gc.policy",
                "the parameter must be at least 1",
            ));
        }
        if let PolicySpec::GreedyDelay(p) = g.policy {
            if p > 100 {
                return Err(Error::config(
                    "gc.policy",
                    format!("greedy-delay:{p}: the zombie share threshold is a percentage (0-100)"),
                ));
            }
        }
        if self.ftl.regions == 0 || self.ftl.regions > 8 {
            return Err(Error::config("ftl.regions", "must be between 1 and 8"));
        }
        if g.low_watermark == 0 {
            return Err(Error::config("gc.low_watermark", "must be at least 1"));
        }
        if g.low_watermark < 2 && self.ftl.gc_frontier == GcFrontier::Separate {
            return Err(Error::config(
                "gc.low_watermark",
                "must be at least 2 with a separate GC frontier (GC needs a free block to copy into)",
            ));
        }
        if g.high_watermark < g.low_watermark {
            return Err(Error::config(
                "gc.high_watermark",
                format!(
                    "{} is below gc.low_watermark = {}",
                    g.high_watermark, g.low_watermark
                ),
            ));
        }
        if g.zombie_weight == ZombieWeight::Lifetime
            && (!g.policy.zombie_aware() || g.policy == PolicySpec::Oracle)
        {
            return Err(Error::unread(
                "gc.zombie_weight",
                format!(
                    "`lifetime` weighs the zombies a notification channel reports, as read by \
                     a zombie-aware policy (z-greedy, z-cost-benefit, greedy-delay); gc.policy \
                     is `{}`",
                    g.policy
                ),
            ));
        }
        let defaults = super::GcConfig::default();
        for (key, value, default, ok, what) in [
            (
                "gc.lifetime_horizon",
                g.lifetime_horizon,
                defaults.lifetime_horizon,
                g.lifetime_horizon > 0.0 && g.lifetime_horizon <= 64.0,
                "a number of GC horizons above 0 and at most 64",
            ),
            (
                "gc.lifetime_prior",
                g.lifetime_prior,
                defaults.lifetime_prior,
                g.lifetime_prior >= 0.0 && g.lifetime_prior <= 1e9,
                "a number of samples, at least 0",
            ),
            (
                "gc.lifetime_gate",
                g.lifetime_gate,
                defaults.lifetime_gate,
                g.lifetime_gate > 0.0 && g.lifetime_gate <= 1.0,
                "a chance above 0 and at most 1",
            ),
            (
                "gc.lifetime_page_prior",
                g.lifetime_page_prior,
                defaults.lifetime_page_prior,
                g.lifetime_page_prior > 0.0 && g.lifetime_page_prior <= 1e12,
                "a number of pages above 0",
            ),
            (
                "gc.lifetime_class_prior",
                g.lifetime_class_prior,
                defaults.lifetime_class_prior,
                g.lifetime_class_prior > 0.0 && g.lifetime_class_prior <= 1e12,
                "a number of pages above 0",
            ),
        ] {
            if !ok {
                return Err(Error::config(key, format!("{value}: must be {what}")));
            }
            if value != default && g.zombie_weight != ZombieWeight::Lifetime {
                return Err(Error::unread(
                    key,
                    "is read only with gc.zombie_weight = \"lifetime\" (lifetime-aware GC)",
                ));
            }
        }
        if g.lifetime_gate != defaults.lifetime_gate && !g.zombie_block {
            return Err(Error::unread(
                "gc.lifetime_gate",
                "decides which zombies go to the zombie block: read only with gc.zombie_block = true",
            ));
        }
        for (key, value, of) in [
            (
                "gc.invalid_share_trigger",
                g.invalid_share_trigger,
                "the programmed pages",
            ),
            (
                "gc.postpone_below_invalid",
                g.postpone_below_invalid,
                "a victim's pages",
            ),
        ] {
            if !(0.0..1.0).contains(&value) {
                return Err(Error::config(
                    key,
                    format!("{value} must be a share of {of}, at least 0 and below 1"),
                ));
            }
        }
        if g.postpone_below_invalid > 0.0 && g.high_watermark == g.low_watermark {
            return Err(Error::config(
                "gc.postpone_below_invalid",
                format!(
                    "lazy reclaim starts GC below gc.high_watermark and forces it below \
                     gc.low_watermark; both are {}: raise gc.high_watermark",
                    g.low_watermark
                ),
            ));
        }
        if g.background && g.background_watermark <= g.high_watermark {
            return Err(Error::config(
                "gc.background_watermark",
                format!(
                    "{} must be above gc.high_watermark = {} for background GC to do anything",
                    g.background_watermark, g.high_watermark
                ),
            ));
        }
        let t = &self.timing;
        for (key, v) in [
            ("timing.read_us", t.read_us),
            ("timing.program_us", t.program_us),
            ("timing.fast_program_us", t.fast_program_us),
            ("timing.erase_us", t.erase_us),
            ("timing.ecc_us", t.ecc_us),
            ("timing.dram_ns", t.dram_ns),
            ("timing.gc_search_us", t.gc_search_us),
        ] {
            if !(v.is_finite() && v >= 0.0) {
                return Err(Error::config(
                    key,
                    format!("{v}: must be a non-negative number"),
                ));
            }
        }
        if !(t.channel_mb_s.is_finite() && t.channel_mb_s > 0.0) {
            return Err(Error::config(
                "timing.channel_mb_s",
                "must be a positive number",
            ));
        }
        if self.interface.queue_depth == 0 {
            return Err(Error::config("interface.queue_depth", "must be at least 1"));
        }
        if !(self.interface.speed.is_finite() && self.interface.speed > 0.0) {
            return Err(Error::config(
                "interface.speed",
                "must be a positive number",
            ));
        }
        for (key, v) in [
            ("interface.submit_us", self.interface.submit_us),
            ("interface.complete_us", self.interface.complete_us),
            ("interface.link_mb_s", self.interface.link_mb_s),
        ] {
            if !(v.is_finite() && v >= 0.0) {
                return Err(Error::config(
                    key,
                    "must be a non-negative number (0: no time)",
                ));
            }
        }
        if self
            .interface
            .wrr_weights
            .iter()
            .any(|&w| w == 0 || w > 256)
        {
            return Err(Error::config(
                "interface.wrr_weights",
                "three weights (high, medium, low), each from 1 to 256",
            ));
        }
        let p = &self.precondition;
        if !(p.random_drive_writes.is_finite() && p.random_drive_writes >= 0.0) {
            return Err(Error::config(
                "precondition.random_drive_writes",
                "must be a non-negative number",
            ));
        }
        if !(p.steady_tolerance.is_finite() && (0.0..1.0).contains(&p.steady_tolerance)) {
            return Err(Error::config(
                "precondition.steady_tolerance",
                "must be in [0, 1)",
            ));
        }
        for (key, v) in [
            (
                "stats.steady_waf_tolerance",
                self.stats.steady_waf_tolerance,
            ),
            (
                "stats.steady_latency_tolerance",
                self.stats.steady_latency_tolerance,
            ),
        ] {
            if !(v.is_finite() && v > 0.0) {
                return Err(Error::config(key, "must be a positive number"));
            }
        }
        host::validate(
            &self.host,
            &self.notify,
            self.timing.enabled,
            self.fdp.enabled,
        )?;
        self.validate_oracle()?;
        self.content.validate()?;
        // Geometry-derived checks (sizes, the buffer against them, spare blocks per GC unit).
        let geo = Geometry::new(self)?;
        // What the FTL cannot do is named before any check that assumes it can.
        Capabilities::of(self.ftl.kind).check(self, self.ftl.kind.name())?;
        self.validate_scheduling(&geo)?;
        shadow::validate(self, &geo)?;
        ftl_kinds::validate_keys(self)?;
        ftl_kinds::validate_block_granular_buffer(self)?;
        buffers::validate(self)?;
        ftl_kinds::validate_kind(self, &geo)?;
        super::FdpConfig::validate(self, &geo)?;
        FtlLayout::new(self, &geo).map(|_| ())
    }

    /// `gc.policy = "oracle"` reads the future of the device-level request stream: it
    /// runs only where that stream is what the device executes (no host write buffer, no
    /// restart or power loss that forgets zombie marks; the host model is refused when a
    /// run would use it, since a trace below the cache runs without it);
    /// `gc.oracle_horizon` is read only by it. The FTLs without zombie scores refuse it
    /// with z-greedy ([`Capabilities`]).
    fn validate_oracle(&self) -> Result<()> {
        let oracle = self.gc.policy == PolicySpec::Oracle;
        if self.ftl.placement.reads_future() && self.host.buffer.bytes() > 0 {
            return Err(Error::config(
                "ftl.placement",
                format!(
                    "`{}` knows the future of the requests the device executes, which runs only \
                     at the device level; host.buffer = {}: the host write buffer decides what \
                     reaches the device. Set host.buffer = 0",
                    self.ftl.placement, self.host.buffer
                ),
            ));
        }
        // Death distances are kept in 32 bits (`sim::oracle`).
        if self.gc.oracle_horizon >= u32::MAX as u64 {
            return Err(Error::config(
                "gc.oracle_horizon",
                format!(
                    "{}: must be below 2^32 - 1 host page writes (0 = from the spare pages)",
                    self.gc.oracle_horizon
                ),
            ));
        }
        if oracle && self.ftl.placement.is_envelope() {
            return Err(Error::config(
                "ftl.placement",
                "`oracle` (no K) is the best of an envelope of placements and gc.policy = \
                 \"oracle\" the best of an envelope of victim schedules; one run cannot be \
                 both: set ftl.placement = \"oracle:K\" (K 2-8) for one death-ordered \
                 placement, or another gc.policy",
            ));
        }
        if !oracle {
            if self.gc.oracle_horizon != 0 {
                return Err(Error::unread(
                    "gc.oracle_horizon",
                    format!(
                        "is read only by gc.policy = \"oracle\" (it is `{}`)",
                        self.gc.policy
                    ),
                ));
            }
            if self.gc.oracle_score != OracleScore::Best {
                return Err(Error::unread(
                    "gc.oracle_score",
                    format!(
                        "is read only by gc.policy = \"oracle\" (it is `{}`)",
                        self.gc.policy
                    ),
                ));
            }
            return Ok(());
        }
        let h = &self.host;
        let refuse = |keys: &str, why: &str| {
            Err(Error::config(
                "gc.policy",
                format!(
                    "`oracle` knows the future of the requests the device executes, which runs \
                     only at the device level; {keys}: {why}"
                ),
            ))
        };
        if h.buffer.bytes() > 0 {
            return refuse(
                &format!("host.buffer = {}", h.buffer),
                "the host write buffer decides what reaches the device. Set host.buffer = 0",
            );
        }
        if !self.device.restart_at.is_empty() {
            return refuse(
                "device.restart_at",
                "a restart forgets every zombie mark the oracle gave. Leave it empty",
            );
        }
        if self.device.power_loss_every > 0 {
            return refuse(
                "device.power_loss_every",
                "a power loss forgets every zombie mark the oracle gave. Leave it at 0",
            );
        }
        Ok(())
    }

    /// The write buffer, the scheduler and bounded GC.
    fn validate_scheduling(&self, geo: &Geometry) -> Result<()> {
        let t = &self.timing;
        if !(t.suspend_us.is_finite() && t.suspend_us >= 0.0) {
            return Err(Error::config(
                "timing.suspend_us",
                format!("{}: must be a non-negative number of µs", t.suspend_us),
            ));
        }
        let defaults = TimingConfig::default();
        if t.scheduler != Scheduler::Suspend {
            for (key, changed) in [
                ("timing.suspend_us", t.suspend_us != defaults.suspend_us),
                (
                    "timing.max_suspensions",
                    t.max_suspensions != defaults.max_suspensions,
                ),
            ] {
                if changed {
                    return Err(Error::unread(
                        key,
                        format!(
                            "is read only by timing.scheduler = \"suspend\" (it is `{}`)",
                            t.scheduler.name()
                        ),
                    ));
                }
            }
        }
        let g = &self.gc;
        if g.max_victims_per_trigger == 0 && g.hard_watermark != GcConfig::default().hard_watermark
        {
            return Err(Error::unread(
                "gc.hard_watermark",
                "is read only by bounded GC: set gc.max_victims_per_trigger too",
            ));
        }
        if g.max_victims_per_trigger > 0 && g.hard_watermark >= g.low_watermark {
            return Err(Error::config(
                "gc.hard_watermark",
                format!(
                    "{} must be below gc.low_watermark ({}): bounded GC (gc.max_victims_per_trigger) \
                     goes on past its bound only while free blocks are at or below it",
                    g.hard_watermark, g.low_watermark
                ),
            ));
        }
        if g.max_victims_per_trigger > 0 && g.hard_watermark == 0 {
            return Err(Error::config(
                "gc.hard_watermark",
                "must be at least 1 with bounded GC (a unit must never run out of free blocks)",
            ));
        }
        self.device
            .validate(geo.page_size, geo.logical_pages * geo.page_size)
    }

    /// Checks of keys set by name (`--set`, `Config.override`), beyond `validate`: a key
    /// set by name must take effect. A whole document (a preset, a stored configuration)
    /// may carry a value for another mode: the `default` preset names the scheduler its
    /// timed runs use (`suspend`) and still counts by default.
    pub(super) fn check_keys_set<'k>(&self, keys: impl IntoIterator<Item = &'k str>) -> Result<()> {
        let t = &self.timing;
        if t.enabled {
            return Ok(());
        }
        for key in keys {
            if key == "timing.scheduler" && t.scheduler != Scheduler::Fifo {
                return Err(Error::config(
                    "timing.scheduler",
                    format!(
                        "`{}` orders flash operations in time: set timing.enabled = true (or keep `fifo`)",
                        t.scheduler.name()
                    ),
                ));
            }
            if matches!(key, "timing.suspend_us" | "timing.max_suspensions") {
                return Err(Error::unread(
                    key,
                    "is read only by timed runs (the suspend scheduler): set timing.enabled = true",
                ));
            }
            if key == "timing.upkeep_time" {
                return Err(Error::unread(
                    key,
                    "is read only by timed runs: set timing.enabled = true",
                ));
            }
        }
        Ok(())
    }
}
