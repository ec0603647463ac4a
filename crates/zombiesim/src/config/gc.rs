//! The `[gc]` section: the victim policy and its scope, the watermarks, background
//! and bounded GC, the oracle's and cost-benefit's parameters and ShadowGC's switches,
//! with their defaults.

use super::PolicySpec;
use serde::{Deserialize, Serialize};

/// How the oracle scores blocks with its zombie marks (`gc.oracle_score`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum OracleScore {
    /// The best of an envelope of schedules (`sim::oracle::envelope`): z-greedy and
    /// z-cost-benefit (both ages) told the future at seven horizons, greedy and
    /// cost-benefit (both ages), LZGC, and on a notified trace the channel-fed ones; the
    /// run with the lowest WAF is the report.
    #[default]
    Best,
    /// z-greedy's `i − min(z, i/2)` with the oracle's marks, one run.
    ZGreedy,
    /// z-cost-benefit (with `gc.cb_age`) with the oracle's marks, one run.
    ZCostBenefit,
}

/// What cost-benefit's age `a` is (000 eq. 1; read only by `cost-benefit` and
/// `z-cost-benefit`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum CbAge {
    /// LFS's age: now − the block's most recent program or invalidation, so blocks left
    /// alone longest score highest (cold data is cleaned at a higher utilisation).
    #[default]
    SinceModified,
    /// 000's text read literally, "the age of the flash block which is represented by
    /// the most recent modified time": the time stamp itself, so among blocks of equal
    /// `i / v` the most recently modified scores highest and the policy behaves close
    /// to greedy (the only reading under which 000's GC-CB figures are reproduced:
    /// docs/zombie.md).
    ModifiedTime,
}

/// How much a known zombie counts in a zombie-aware victim score (`gc.zombie_weight`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ZombieWeight {
    /// Every known zombie counts whole, and GC copies each to the zombie block (000).
    #[default]
    All,
    /// Each counts by the chance, learnt online, that a zombie dies within the GC
    /// horizon; the zombie block is used while that chance is at least one half
    /// (`ftl::ZombieLifetimes`).
    Lifetime,
}

/// The set of parallel units that one garbage collector serves.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum GcScope {
    Device,
    /// A flash chip (all its dies and planes): 000's per-bank GC.
    Bank,
    Die,
    Plane,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct GcConfig {
    pub policy: PolicySpec,
    pub scope: GcScope,
    /// GC starts when a GC unit has fewer free blocks than this.
    pub low_watermark: u32,
    /// GC stops once the unit has at least this many free blocks.
    pub high_watermark: u32,
    /// Timing mode: reclaim blocks while the device is idle (open-loop gaps).
    pub background: bool,
    /// Background GC works until every unit has this many free blocks.
    pub background_watermark: u32,
    /// GC copies pages the device knows as zombies to a dedicated open block (000).
    pub zombie_block: bool,
    /// Cost-benefit's age (read only by `cost-benefit` and `z-cost-benefit`).
    pub cb_age: CbAge,
    /// The oracle's horizon in host page writes (read only by `gc.policy = "oracle"`): a
    /// valid page is marked zombie once its version dies within this many writes.
    /// 0 = ¾ of the spare pages GC works with (physical − logical pages, less the blocks
    /// each GC unit keeps free or open).
    pub oracle_horizon: u64,
    /// How the oracle uses its marks (read only by `gc.policy = "oracle"`): `best` (the
    /// envelope of several schedules), `z-greedy` or `z-cost-benefit` (one run).
    pub oracle_score: OracleScore,
    /// Victims reclaimed per GC trigger (0 = until `high_watermark`, in one go).
    /// With a bound, GC works in steps between host operations, and goes on past the
    /// bound only while the unit has `hard_watermark` free blocks or fewer.
    pub max_victims_per_trigger: u32,
    /// Free blocks at or below which a bounded GC keeps reclaiming.
    pub hard_watermark: u32,
    /// Lazy reclaim (FEMU's FDP FTL, on which WARP builds): with a share `f` above 0,
    /// GC starts as soon as a unit has fewer than `high_watermark` free blocks, but a
    /// victim with fewer than `f` of its pages invalid is put back and GC stops, unless
    /// the unit is below `low_watermark` (forced GC takes any victim). 0 = off: GC
    /// starts below `low_watermark` and takes the policy's victim.
    pub postpone_below_invalid: f64,
    /// GC by garbage proportion, as log-structured stores and SepBIT's simulator run it:
    /// with a share `g` above 0, after each host page write GC reclaims one victim if
    /// the unit's invalid pages exceed `g` of its programmed pages, and only a victim
    /// with at least `g` of its pages invalid (others are put back). The watermarks
    /// still force GC when free blocks run short. 0 = off.
    pub invalid_share_trigger: f64,
    /// How much a known zombie counts in a zombie-aware score: `all` (whole, 000) or
    /// `lifetime` (by its learnt chance to die within the GC horizon).
    pub zombie_weight: ZombieWeight,
    /// With `zombie_weight = "lifetime"`: the predictions look this many GC horizons
    /// ahead (a page counts by its chance to die within `lifetime_horizon · H`).
    pub lifetime_horizon: f64,
    /// With `zombie_weight = "lifetime"`: samples at which the zombies' learnt chances
    /// are trusted half (fewer: shrunk towards 0, the base policy).
    pub lifetime_prior: f64,
    /// With `zombie_weight = "lifetime"` and `zombie_block`: the chance to die within
    /// the horizon at or above which GC copies a zombie to the zombie block.
    pub lifetime_gate: f64,
    /// With `zombie_weight = "lifetime"`: pages at risk at which an age's pooled share
    /// of deaths is trusted half in the life table (fewer: shrunk towards no deaths).
    pub lifetime_page_prior: f64,
    /// With `zombie_weight = "lifetime"`: pages at risk at which a cell's (class and
    /// age) own share is trusted half (fewer: shrunk towards its age's pooled share).
    pub lifetime_class_prior: f64,
    /// ShadowGC (003 §3.3): a victim's device- and twin-shadow pages are taken from the
    /// device write buffer (no flash read, no ECC); the buffered copy becomes clean.
    pub shadow_reads: bool,
    /// ShadowGC: host- and twin-shadow pages go to the zombie block programmed in
    /// fast-write mode (`timing.fast_program_us`), with relaxed retention
    /// (`ftl.fast_retention_s`) and refresh.
    pub fast_write: bool,
    /// The skip policy (003 §2.2): device-shadow pages are not copied at all; only
    /// safe with a non-volatile device buffer (`device.buffer_nonvolatile`).
    pub skip_shadows: bool,
}

/// `gc.lifetime_horizon`'s default: the GC horizon itself.
pub const LIFETIME_HORIZON: f64 = 1.0;
/// `gc.lifetime_prior`'s default (samples).
pub const LIFETIME_PRIOR: f64 = 32.0;
/// `gc.lifetime_gate`'s default (a chance).
pub const LIFETIME_GATE: f64 = 0.5;
/// `gc.lifetime_page_prior`'s default (pages at risk).
pub const LIFETIME_PAGE_PRIOR: f64 = 1024.0;
/// `gc.lifetime_class_prior`'s default (pages at risk).
pub const LIFETIME_CLASS_PRIOR: f64 = 64.0;

impl GcConfig {
    /// Free blocks (RUs with FDP) each GC unit holds back: the high watermark GC works
    /// up to (the background watermark when higher), or with lazy reclaim, which may
    /// never reach its high watermark, the low watermark it is forced at.
    pub fn reserve_watermark(&self) -> u32 {
        let foreground = if self.postpone_below_invalid > 0.0 {
            self.low_watermark
        } else {
            self.high_watermark
        };
        if self.background {
            foreground.max(self.background_watermark)
        } else {
            foreground
        }
    }

    /// The policy that scores victims: the oracle scores like z-cost-benefit when
    /// `gc.oracle_score = "z-cost-benefit"`, like z-greedy otherwise.
    pub fn scoring(&self) -> PolicySpec {
        match (self.policy, self.oracle_score) {
            (PolicySpec::Oracle, OracleScore::ZCostBenefit) => PolicySpec::ZCostBenefit,
            (p, _) => p,
        }
    }
}

impl Default for GcConfig {
    fn default() -> Self {
        GcConfig {
            policy: PolicySpec::Greedy,
            scope: GcScope::Device,
            low_watermark: 2,
            high_watermark: 2,
            background: false,
            background_watermark: 4,
            zombie_block: false,
            cb_age: CbAge::SinceModified,
            oracle_horizon: 0,
            oracle_score: OracleScore::Best,
            max_victims_per_trigger: 0,
            hard_watermark: 1,
            postpone_below_invalid: 0.0,
            zombie_weight: ZombieWeight::All,
            lifetime_horizon: LIFETIME_HORIZON,
            lifetime_prior: LIFETIME_PRIOR,
            lifetime_gate: LIFETIME_GATE,
            lifetime_page_prior: LIFETIME_PAGE_PRIOR,
            lifetime_class_prior: LIFETIME_CLASS_PRIOR,
            invalid_share_trigger: 0.0,
            shadow_reads: false,
            fast_write: false,
            skip_shadows: false,
        }
    }
}
