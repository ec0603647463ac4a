//! Typed configuration: TOML sections, defaults, presets, dotted overrides, validation.
//!
//! ```text
//!   preset TOML ──┐
//!   --config FILE ├──► toml::Table ──► --set a.b=v ──► Config (serde, deny_unknown_fields)
//!   defaults ─────┘                                        └──► validate(): names key + reason
//! ```
//!
//! Every field has a default, so a config file names only what it changes. Unknown
//! keys are rejected (`deny_unknown_fields`) and every error names the dotted key.
//!
//! Over-provisioning follows the convention `OP = physical / logical − 1`
//! (`ftl.over_provisioning = 0.07` ⇒ 7% more physical than logical pages). Physical
//! here means the blocks the FTL may use: all blocks minus `ftl.reserved_blocks`.

mod capabilities;
mod content;
mod device;
mod geometry;
mod host;
mod hybrid;
mod layout;
mod memory;
mod policy;
mod presets;
mod shadow;

pub use capabilities::{Capabilities, DFTL_CAPABILITIES};
pub use content::{ContentConfig, PoolPolicy};
pub use device::{BufferPolicy, DeviceConfig, Scheduler};
pub use geometry::Geometry;
pub use host::{HostConfig, NotifyConfig, NotifyMode, TracePlacement};
pub use hybrid::{fast_log_blocks, spare_blocks, superblock_count, FAST_EXTRA_BLOCKS};
pub use layout::{FtlLayout, UnitRange};
pub use memory::{available_memory, gib, MemoryEstimate, MemoryPart};
pub use policy::PolicySpec;
pub use presets::{preset_names, preset_toml, scheme_names, scheme_settings, SchemeInfo};

use crate::error::{Error, Result};
use crate::units::ByteSize;
use serde::{Deserialize, Serialize};

/// The largest flash page (and mapping unit) a configuration may ask for.
pub const MAX_PAGE_SIZE: u64 = 1 << 20;

/// The full, resolved configuration of one simulation.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, Default)]
#[serde(deny_unknown_fields, default)]
pub struct Config {
    /// A one-line description (presets say where their numbers come from).
    pub description: String,
    pub flash: FlashConfig,
    pub ftl: FtlConfig,
    pub gc: GcConfig,
    pub timing: TimingConfig,
    pub interface: InterfaceConfig,
    pub precondition: PreconditionConfig,
    pub stats: StatsConfig,
    pub host: HostConfig,
    pub notify: NotifyConfig,
    /// Content-aware flash: dead-value pool, deduplication.
    pub content: ContentConfig,
    /// The device's write buffer.
    pub device: DeviceConfig,
}

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

/// Which flash translation layer runs the device.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum FtlKind {
    /// Page-level mapping (every logical page maps anywhere).
    Page,
    /// DFTL (Gupta et al.): page-level mapping kept in translation pages on flash, a
    /// cached mapping table (`ftl.cmt_entries`) in SRAM.
    Dftl,
    /// SuperBlock FTL (Kang et al.): `ftl.superblock_blocks` adjacent logical blocks
    /// share their physical blocks, page-mapped inside.
    Superblock,
    /// FAST (Lee et al.): block-mapped data blocks, `ftl.log_blocks` page-mapped log
    /// blocks shared by all of them, switch / partial / full merges.
    Fast,
    /// Plain block mapping: an update in place is a read-modify-write of the block.
    Block,
}

impl FtlKind {
    pub const ALL: [FtlKind; 5] = [
        FtlKind::Page,
        FtlKind::Dftl,
        FtlKind::Superblock,
        FtlKind::Fast,
        FtlKind::Block,
    ];

    pub fn name(self) -> &'static str {
        match self {
            FtlKind::Page => "page",
            FtlKind::Dftl => "dftl",
            FtlKind::Superblock => "superblock",
            FtlKind::Fast => "fast",
            FtlKind::Block => "block",
        }
    }

    /// Whether the FTL maps whole logical blocks (its logical capacity is a whole
    /// number of blocks, and block-granularity buffer policies make sense above it).
    pub fn block_mapped(self) -> bool {
        matches!(self, FtlKind::Superblock | FtlKind::Fast | FtlKind::Block)
    }
}

/// How FAST picks the log block to merge when log blocks run out.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum LogVictim {
    /// The oldest random log block (FIFO), as FAST does.
    RoundRobin,
    /// BA-VBS (004 §5): the log block with the lowest merge cost net of the benefit of
    /// taking buffered dirty pages (needs `device.buffer_policy = "3-region"`).
    BaVbs,
}

impl LogVictim {
    pub fn name(self) -> &'static str {
        match self {
            LogVictim::RoundRobin => "round-robin",
            LogVictim::BaVbs => "ba-vbs",
        }
    }
}

/// Where GC writes the pages it copies.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum GcFrontier {
    /// GC has its own open block per parallel unit.
    Separate,
    /// GC copies into the same open block as host writes.
    Shared,
}

/// Which plane a host page write goes to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Allocation {
    /// Round-robin over all planes, page by page.
    Stripe,
    /// The plane that can start the program soonest (timing mode); round-robin
    /// among equally ready planes, so in counting mode it equals `stripe`.
    Dynamic,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct FtlConfig {
    pub kind: FtlKind,
    /// physical / logical − 1, over the usable blocks.
    pub over_provisioning: f64,
    /// Blocks withheld from the FTL altogether (factory spares), spread over the planes.
    pub reserved_blocks: u32,
    pub gc_frontier: GcFrontier,
    pub allocation: Allocation,
    /// Hot/cold clustering (DAC): logical pages move between this many regions, up one
    /// when the host overwrites them, down one when GC copies them; each region writes
    /// to its own open block. 1 = no clustering.
    pub regions: u32,
    /// Retention of a block programmed in normal mode, s (0 = not modelled: normal
    /// blocks are never refreshed).
    pub retention_s: f64,
    /// Retention of a block programmed in fast-write mode (`gc.fast_write`), s: `T`
    /// of 003 §3.3. Such a block is refreshed `T − D` after it was opened.
    pub fast_retention_s: f64,
    /// The longest power-off the data must survive, s: `D` of 003 §3.3.
    pub power_off_s: f64,
    /// FAST: random log blocks (the sequential log block comes on top). 0 = every
    /// spare block but the sequential log block and the one a merge writes into.
    pub log_blocks: u32,
    /// FAST: how the log block to merge is chosen.
    pub log_victim: LogVictim,
    /// FAST (BA-BM, 004 §4): a merge takes pages that are dirty in the device write
    /// buffer from the buffer instead of flash, and they become clean there.
    pub buffer_aware_merge: bool,
    /// DFTL: entries of the cached mapping table (one per logical page mapped).
    pub cmt_entries: u64,
    /// SuperBlock: adjacent logical blocks per superblock (N).
    pub superblock_blocks: u32,
}

impl Default for FtlConfig {
    fn default() -> Self {
        FtlConfig {
            kind: FtlKind::Page,
            over_provisioning: 0.07,
            reserved_blocks: 0,
            gc_frontier: GcFrontier::Separate,
            allocation: Allocation::Dynamic,
            regions: 1,
            retention_s: 0.0,
            fast_retention_s: 7.0 * 86400.0,
            power_off_s: 86400.0,
            log_blocks: 0,
            log_victim: LogVictim::RoundRobin,
            buffer_aware_merge: false,
            cmt_entries: 65536,
            superblock_blocks: 16,
        }
    }
}

/// How the oracle scores blocks with its zombie marks (`gc.oracle_score`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum OracleScore {
    /// The best of several future-aware schedules (`sim::oracle`'s envelope): z-greedy
    /// and z-cost-benefit (both ages) at six horizons, and the zero-horizon members
    /// greedy and cost-benefit (both ages); the run with the lowest WAF is the report.
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

impl GcConfig {
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
            shadow_reads: false,
            fast_write: false,
            skip_shadows: false,
        }
    }
}

/// NAND and controller timing (used when `enabled`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct TimingConfig {
    /// `false`: counting mode (WAF studies). `true`: the NAND timing model.
    pub enabled: bool,
    /// Array read time of one page (tR), µs.
    pub read_us: f64,
    /// Normal program time of one page (tPROG), µs.
    pub program_us: f64,
    /// Fast-mode (SLC-like) program time, µs.
    pub fast_program_us: f64,
    /// Block erase time (tBERS), µs.
    pub erase_us: f64,
    /// Channel (bus) transfer rate, MB/s (10^6 bytes per second).
    pub channel_mb_s: f64,
    /// ECC decode time per flash page read, µs (skipped for reads served from DRAM).
    pub ecc_us: f64,
    /// DRAM access time per page, ns.
    pub dram_ns: f64,
    /// Firmware time per candidate block scored during a victim search, µs.
    pub gc_search_us: f64,
    /// Planes of a die run operations in parallel (multi-plane); otherwise a die
    /// runs one operation at a time.
    pub multi_plane: bool,
    /// When queued flash work runs: `fifo`, `rps` (reads first) or `suspend`.
    pub scheduler: Scheduler,
    /// Time to suspend a program or erase for a host read, and to resume it, µs.
    pub suspend_us: f64,
    /// Suspensions one program or erase allows before it runs to completion.
    pub max_suspensions: u32,
}

impl Default for TimingConfig {
    fn default() -> Self {
        TimingConfig {
            enabled: false,
            read_us: 50.0,
            program_us: 500.0,
            fast_program_us: 250.0,
            erase_us: 3000.0,
            channel_mb_s: 800.0,
            ecc_us: 0.0,
            dram_ns: 20.0,
            gc_search_us: 0.0,
            multi_plane: true,
            scheduler: Scheduler::Fifo,
            suspend_us: 20.0,
            max_suspensions: 4,
        }
    }
}

/// How requests reach the device.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Replay {
    /// At the trace's timestamps (divided by `speed`); synthetic workloads have
    /// none and fall back to closed loop.
    Open,
    /// `queue_depth` requests outstanding, the next issued as one completes.
    Closed,
}

/// The host interface (timing mode).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct InterfaceConfig {
    /// Requests the device accepts at once.
    pub queue_depth: u32,
    pub replay: Replay,
    /// Open-loop time compression: arrival times are divided by this.
    pub speed: f64,
}

impl Default for InterfaceConfig {
    fn default() -> Self {
        InterfaceConfig {
            queue_depth: 32,
            replay: Replay::Open,
            speed: 1.0,
        }
    }
}

/// Which address pattern the random part of preconditioning uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum PreconditionPattern {
    /// Uniform random single-page writes over the whole logical space.
    Uniform,
    /// The measured workload's own write addresses (its steady state).
    Workload,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct PreconditionConfig {
    /// Write every logical page once, in order, before anything else.
    pub fill: bool,
    /// At most this many drive-writes of random writes after the fill.
    pub random_drive_writes: f64,
    pub pattern: PreconditionPattern,
    /// Stop the random phase early once write amplification over consecutive
    /// quarter-drive-write windows changes by less than this fraction (0 = never).
    pub steady_tolerance: f64,
}

impl Default for PreconditionConfig {
    fn default() -> Self {
        PreconditionConfig {
            fill: true,
            random_drive_writes: 2.0,
            pattern: PreconditionPattern::Uniform,
            steady_tolerance: 0.005,
        }
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct StatsConfig {
    /// Record a time-series point every this many host page writes (0 = derive from
    /// `series_points` when the workload's length is known).
    pub series_every: u64,
    /// Aim for about this many points over the measured phase (0 = no series).
    pub series_points: u32,
}

impl Default for StatsConfig {
    fn default() -> Self {
        StatsConfig {
            series_every: 0,
            series_points: 100,
        }
    }
}

impl Config {
    /// Parse a TOML document (a preset or a user's file). `origin` names it in errors.
    pub fn from_toml_str(text: &str, origin: &str) -> Result<Config> {
        let table: toml::Table = text.parse().map_err(|e: toml::de::Error| {
            let line = e
                .span()
                .map(|s| text[..s.start.min(text.len())].lines().count().max(1) as u64)
                .unwrap_or(0);
            Error::Input {
                file: origin.to_string(),
                line,
                reason: e.message().to_string(),
            }
        })?;
        let in_origin = |e: Error| match e {
            Error::Config {
                key,
                reason,
                unread,
                ..
            } => {
                let line = key_line(text, &key);
                Error::Config {
                    origin: Some(match line {
                        Some(n) => format!("{origin}:{n}"),
                        None => origin.to_string(),
                    }),
                    key,
                    reason,
                    unread,
                }
            }
            other => other,
        };
        let cfg = Self::from_table(table).map_err(in_origin)?;
        cfg.validate().map_err(in_origin)?;
        Ok(cfg)
    }

    /// A named preset (`zombiesim presets` lists them).
    pub fn preset(name: &str) -> Result<Config> {
        let text = preset_toml(name).ok_or_else(|| {
            Error::config(
                "preset",
                format!(
                    "unknown preset `{name}` (known: {})",
                    preset_names().join(", ")
                ),
            )
        })?;
        Self::from_toml_str(text, &format!("preset `{name}`"))
    }

    fn from_table(table: toml::Table) -> Result<Config> {
        let de = toml::Value::Table(table);
        serde_path_to_error::deserialize(de).map_err(|e| {
            let path = e.path().to_string();
            let inner = e.into_inner().to_string();
            // toml appends "in `key`" on a new line; the key is reported separately.
            let inner = inner
                .split("\nin `")
                .next()
                .unwrap_or_default()
                .trim()
                .to_string();
            // serde reports an unknown field at its parent's path; name the field itself.
            if let Some(field) = unknown_field_name(&inner) {
                let key = if path == "." || path.is_empty() {
                    field
                } else if path == field || path.ends_with(&format!(".{field}")) {
                    path
                } else {
                    format!("{path}.{field}")
                };
                return Error::config(key, format!("unknown key; {inner}"));
            }
            Error::config(
                if path == "." {
                    "(top level)".into()
                } else {
                    path
                },
                inner,
            )
        })
    }

    /// This configuration as a TOML table with every key present.
    pub fn to_table(&self) -> toml::Table {
        match toml::Value::try_from(self) {
            Ok(toml::Value::Table(t)) => t,
            _ => unreachable!("Config always serializes to a table"),
        }
    }

    /// This configuration as TOML text (every key, defaults included).
    pub fn to_toml(&self) -> String {
        toml::to_string(self).expect("Config always serializes")
    }

    /// Apply a dotted override such as `gc.policy=greedy` or `flash.page_size=16KiB`.
    /// The value is read as TOML (numbers, booleans, quoted strings); anything that is
    /// not valid TOML is taken as a bare string. Returns the notes of
    /// [`Config::set_many`].
    pub fn set(&mut self, key: &str, value: &str) -> Result<Vec<String>> {
        self.set_many(&[(key.to_string(), value.to_string())])
    }

    /// Apply several dotted overrides at once, validating only the final result.
    ///
    /// A key the overrides do not name, whose value (from a preset or a file) nothing in
    /// the new configuration reads, goes back to its default: `--preset ba-gc --set
    /// ftl.kind=page` drops the preset's `ftl.log_blocks` (a FAST key). Each such drop is
    /// one note in the returned list, for the caller to show. A key the overrides name
    /// and nothing reads is refused ([`Error::unread`]), naming it.
    pub fn set_many(&mut self, pairs: &[(String, String)]) -> Result<Vec<String>> {
        self.set_many_where_read(pairs, &[])
    }

    /// [`Config::set_many`], where the keys of `droppable` that the overrides name are
    /// dropped (with a note) too when nothing reads them: one cell of a comparison,
    /// whose `--set` values apply to the cells that read them (`ftl.cmt_entries` to the
    /// DFTL cell of `ftl.kind = page,dftl`), while the compared key itself must apply.
    pub fn set_many_where_read(
        &mut self,
        pairs: &[(String, String)],
        droppable: &[String],
    ) -> Result<Vec<String>> {
        let mut table = self.to_table();
        for (key, value) in pairs {
            set_dotted(&mut table, key, parse_value(value))?;
        }
        let defaults = Config::default().to_table();
        let mut notes = Vec::new();
        loop {
            let cfg = Self::from_table(table.clone())?;
            let checked = cfg
                .validate()
                .and_then(|()| cfg.check_keys_set(pairs.iter().map(|(k, _)| k.as_str())));
            let (key, reason) = match checked {
                Ok(()) => {
                    *self = cfg;
                    return Ok(notes);
                }
                Err(Error::Config {
                    key,
                    reason,
                    unread: true,
                    ..
                }) if droppable.contains(&key) || !pairs.iter().any(|(k, _)| *k == key) => {
                    (key, reason)
                }
                Err(e) => return Err(e),
            };
            let was = lookup(&table, &key).cloned();
            let default = lookup(&defaults, &key).cloned();
            match (was, default) {
                (Some(was), Some(default)) if was != default => {
                    set_dotted(&mut table, &key, default)?;
                    notes.push(format!("`{key} = {was}` dropped: it {reason}"));
                }
                // Already the default: dropping it changes nothing, so refuse.
                _ => return Err(Error::unread(key, reason)),
            }
        }
    }

    /// Checks of keys set by name (`--set`, `Config.override`), beyond `validate`: a key
    /// set by name must take effect. A whole document (a preset, a stored configuration)
    /// may carry a value for another mode: the `default` preset names the scheduler its
    /// timed runs use (`suspend`) and still counts by default.
    fn check_keys_set<'k>(&self, keys: impl IntoIterator<Item = &'k str>) -> Result<()> {
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
        }
        Ok(())
    }

    /// The value at a dotted key, rendered as TOML.
    pub fn get(&self, key: &str) -> Result<String> {
        let table = self.to_table();
        lookup(&table, key)
            .map(|v| v.to_string())
            .ok_or_else(|| unknown_key(&table, key))
    }

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
        host::validate(&self.host, &self.notify, self.timing.enabled)?;
        self.validate_oracle()?;
        self.content.validate()?;
        // Geometry-derived checks (sizes, the buffer against them, spare blocks per GC unit).
        let geo = Geometry::new(self)?;
        // What the FTL cannot do is named before any check that assumes it can.
        Capabilities::of(self.ftl.kind).check(self, self.ftl.kind.name())?;
        self.validate_scheduling(&geo)?;
        shadow::validate(self, &geo)?;
        hybrid::validate(self, &geo)?;
        FtlLayout::new(self, &geo).map(|_| ())
    }

    /// Whether the device keeps a clock: retention refresh or restart events.
    pub fn needs_clock(&self) -> bool {
        self.gc.fast_write
            || self.ftl.retention_s > 0.0
            || !self.device.restart_at.is_empty()
            || self.device.buffer_max_dirty_age > 0.0
    }
}

impl Config {
    /// `gc.policy = "oracle"` reads the future of the device-level request stream: it
    /// runs only where that stream is what the device executes (no host write buffer, no
    /// restart or power loss that forgets zombie marks; the host model is refused when a
    /// run would use it, since a trace below the cache runs without it);
    /// `gc.oracle_horizon` is read only by it. The FTLs without zombie scores refuse it
    /// with z-greedy ([`Capabilities`]).
    fn validate_oracle(&self) -> Result<()> {
        let oracle = self.gc.policy == PolicySpec::Oracle;
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
}

/// The line (from 1) where a dotted key is set in a TOML document, if it can be found:
/// the first `field = ...` line inside the key's `[section]`.
fn key_line(text: &str, key: &str) -> Option<usize> {
    let (section, field) = match key.rsplit_once('.') {
        Some((s, f)) => (s, f),
        None => ("", key),
    };
    let mut current = String::new();
    for (i, raw) in text.lines().enumerate() {
        let line = raw.trim();
        if let Some(name) = line.strip_prefix('[').and_then(|l| l.strip_suffix(']')) {
            current = name.trim().to_string();
            continue;
        }
        let Some((k, _)) = line.split_once('=') else {
            continue;
        };
        let k = k.trim().trim_matches('"');
        let full = if current.is_empty() {
            k.to_string()
        } else {
            format!("{current}.{k}")
        };
        if (current == section && k == field) || full == key {
            return Some(i + 1);
        }
    }
    None
}

fn unknown_field_name(msg: &str) -> Option<String> {
    let rest = msg.strip_prefix("unknown field `")?;
    Some(rest.split('`').next()?.to_string())
}

fn parse_value(text: &str) -> toml::Value {
    let doc = format!("v = {text}");
    match doc.parse::<toml::Table>() {
        Ok(mut t) => t
            .remove("v")
            .unwrap_or(toml::Value::String(text.to_string())),
        Err(_) => toml::Value::String(text.trim().to_string()),
    }
}

fn unknown_key(root: &toml::Table, key: &str) -> Error {
    let mut known = Vec::new();
    collect_keys(root, "", &mut known);
    let best = known
        .iter()
        .min_by_key(|k| edit_distance(k, key))
        .filter(|k| edit_distance(k, key) <= 3);
    let hint = match best {
        Some(k) => format!("unknown key (did you mean `{k}`?)"),
        None => "unknown key (`zombiesim run --print-config` lists every key)".to_string(),
    };
    Error::config(key, hint)
}

fn collect_keys(t: &toml::Table, prefix: &str, out: &mut Vec<String>) {
    for (k, v) in t {
        let path = if prefix.is_empty() {
            k.clone()
        } else {
            format!("{prefix}.{k}")
        };
        match v {
            toml::Value::Table(inner) => collect_keys(inner, &path, out),
            _ => out.push(path),
        }
    }
}

/// The value at a dotted key.
fn lookup<'a>(root: &'a toml::Table, key: &str) -> Option<&'a toml::Value> {
    let mut parts = key.split('.');
    let mut cur = root.get(parts.next()?)?;
    for part in parts {
        cur = cur.as_table()?.get(part)?;
    }
    Some(cur)
}

fn set_dotted(root: &mut toml::Table, key: &str, value: toml::Value) -> Result<()> {
    match lookup(root, key) {
        None => return Err(unknown_key(root, key)),
        Some(toml::Value::Table(_)) => {
            return Err(Error::config(key, "is a section; name one of its keys"))
        }
        Some(_) => {}
    }
    let (sections, field) = key.rsplit_once('.').unwrap_or(("", key));
    let mut table = root;
    for part in sections.split('.').filter(|p| !p.is_empty()) {
        table = table
            .get_mut(part)
            .and_then(toml::Value::as_table_mut)
            .expect("lookup found the key");
    }
    table.insert(field.to_string(), value);
    Ok(())
}

/// Levenshtein distance, for "did you mean" hints.
fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut cur = vec![i + 1; b.len() + 1];
        for (j, cb) in b.iter().enumerate() {
            let sub = prev[j] + usize::from(ca != *cb);
            cur[j + 1] = sub.min(prev[j + 1] + 1).min(cur[j] + 1);
        }
        prev = cur;
    }
    prev[b.len()]
}

#[cfg(test)]
mod tests;
