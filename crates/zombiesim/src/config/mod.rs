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

mod buffers;
mod capabilities;
mod checks;
mod content;
mod device;
mod fdp;
mod fdp_checks;
mod flash;
mod ftl;
mod ftl_kind;
mod ftl_kinds;
mod gc;
mod geometry;
mod host;
mod interface;
mod keys;
mod layout;
mod memory;
mod policy;
mod precondition;
mod presets;
mod shadow;
mod stats;
mod timing;

pub use crate::placement::{FdpLayout, Isolation};
pub use capabilities::Capabilities;
pub use content::{ContentConfig, PoolPolicy};
pub use device::{BufferPolicy, DeviceConfig, Scheduler};
pub use fdp::FdpConfig;
pub use flash::{FlashConfig, MAX_PAGE_SIZE};
pub use ftl::{Allocation, FtlConfig, GcFrontier, LogVictim};
pub(crate) use ftl_kind::ftl_kind_registry;
pub use ftl_kind::FtlKind;
pub use ftl_kinds::{
    fast_log_blocks, spare_blocks, superblock_count, BlockMapped, FtlKindSpec, KindKey, Mapping,
    SpareNeed, FAST_EXTRA_BLOCKS,
};
pub use gc::{
    CbAge, GcConfig, GcScope, OracleScore, ZombieWeight, LIFETIME_CLASS_PRIOR, LIFETIME_GATE,
    LIFETIME_HORIZON, LIFETIME_PAGE_PRIOR, LIFETIME_PRIOR,
};
pub use geometry::Geometry;
pub use host::{HostConfig, HostPlacement, NotifyConfig, NotifyMode, TracePlacement};
pub use interface::{Arbitration, InterfaceConfig, Replay};
pub use layout::{FtlLayout, UnitRange, MAX_HORIZON};
pub use memory::{available_memory, gib, MemoryEstimate, MemoryPart};
pub(crate) use policy::victim_policies;
pub use policy::{PolicySpec, REGISTERED};
pub use precondition::{PreconditionConfig, PreconditionPattern};
pub use presets::{preset_names, preset_toml, scheme_names, scheme_settings, SchemeInfo};
pub use stats::StatsConfig;
pub use timing::TimingConfig;

use crate::error::{Error, Result};
use keys::{
    closest_key, key_line, lookup, parse_value, set_dotted, unknown_field_name, unknown_key,
};
use serde::{Deserialize, Serialize};

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
    /// Host-directed data placement: NVMe FDP and multi-stream.
    pub fdp: FdpConfig,
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
                // The nearest key of the full configuration, as `--set` suggests; else
                // the names the section takes.
                return match closest_key(&Config::default().to_table(), &key) {
                    Some(k) => Error::config(key, format!("unknown key (did you mean `{k}`?)")),
                    None => Error::config(key, format!("unknown key; {inner}")),
                };
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
        let mut defaults: Option<toml::Table> = None; // built at the first drop
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
            let defaults = defaults.get_or_insert_with(|| Config::default().to_table());
            let default = lookup(defaults, &key).cloned();
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

    /// The value at a dotted key, rendered as TOML.
    pub fn get(&self, key: &str) -> Result<String> {
        let table = self.to_table();
        lookup(&table, key)
            .map(|v| v.to_string())
            .ok_or_else(|| unknown_key(&table, key))
    }

    /// Whether the device keeps a clock: retention refresh or restart events.
    pub fn needs_clock(&self) -> bool {
        self.gc.fast_write
            || self.ftl.retention_s > 0.0
            || !self.device.restart_at.is_empty()
            || self.device.buffer_max_dirty_age > 0.0
    }
}

#[cfg(test)]
mod tests;
