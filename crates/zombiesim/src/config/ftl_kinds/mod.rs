//! The FTL kinds (`ftl.kind`) and what the configuration knows of each.
//!
//! Every kind is one line of the registry ([`ftl_kind_registry!`]) and one entry, an
//! [`FtlKindSpec`], in a file of this folder: what the FTL can do beyond the contract
//! every FTL implements ([`Capabilities`]), whether it maps pages or whole blocks, the
//! `[ftl]` keys only it reads, its own checks, and the memory of its own state. The
//! registry line names the entry and the FTL's build function under `ftl/`:
//!
//! ```text
//!   ftl_kind_registry! line ──► FtlKind (ftl.kind's value, its name)
//!        │       └────► FtlKindSpec ──► Config::validate: its keys, its checks, capabilities
//!        │                         └──► MemoryEstimate: its state; the report's sections
//!        └────────────► ftl::build: the FTL
//! ```
//!
//! Adding a kind is an FTL under `ftl/` with its build function, an entry here and one
//! registry line.

mod block;
mod checks;
mod dftl;
mod fast;
mod page;
mod registry;
mod superblock;

use super::{Capabilities, Config, Geometry, MemoryPart};
use crate::error::Result;

pub use checks::{validate_block_granular_buffer, validate_keys, validate_kind};
pub use fast::{fast_log_blocks, FAST_EXTRA_BLOCKS};
pub use superblock::superblock_count;

/// What the configuration knows of one FTL kind: its registry entry.
pub struct FtlKindSpec {
    /// A line on what it is.
    pub about: &'static str,
    /// What it can do beyond the contract every FTL implements; a configuration that
    /// asks for more is refused, naming the key.
    pub capabilities: Capabilities,
    /// Whether it maps pages or whole logical blocks.
    pub mapping: Mapping,
    /// The `[ftl]` keys only it reads: a change to one is refused under another kind.
    pub keys: &'static [KindKey],
    /// Its own checks of a configuration it runs (after the general ones).
    pub validate: fn(&Config, &Geometry) -> Result<()>,
    /// Its own state beyond the flash state and the mapping, for the memory estimate.
    pub memory: fn(&Config, &Geometry) -> Option<MemoryPart>,
    /// It keeps a cached mapping table: the report gives its hits and misses.
    pub mapping_cache: bool,
}

/// How an FTL kind maps logical to physical pages.
pub enum Mapping {
    /// Every logical page maps anywhere; GC is the page-mapped GC (`gc.*`).
    Pages,
    /// Whole logical blocks map to physical blocks: the logical capacity is a whole
    /// number of blocks, block-granularity buffer policies make sense above it, the
    /// report counts merges, and the page-mapped GC keys are read by nothing.
    Blocks(BlockMapped),
}

/// What a block-mapped kind says of itself.
pub struct BlockMapped {
    /// How it frees space, instead of the page-mapped GC (the reason its keys are unread).
    pub frees_space: &'static str,
    /// The spare blocks it needs.
    pub spare: fn(&Config, &Geometry) -> SpareNeed,
}

/// The spare blocks a block-mapped FTL needs, and what to say when they are missing.
pub struct SpareNeed {
    /// Spare blocks needed.
    pub blocks: u32,
    /// The key to change.
    pub key: &'static str,
    /// What they are for (` (...)`, or empty).
    pub detail: String,
    /// Another way to need fewer (` or ...`, or empty).
    pub hint: &'static str,
}

/// An `[ftl]` key only one kind reads.
pub struct KindKey {
    /// The dotted key.
    pub key: &'static str,
    /// Whether the configuration changes it from its default.
    pub changed: fn(&Config) -> bool,
    /// Why its value is refused whatever the kind runs (`None`: it is taken).
    pub refused: fn(&Config) -> Option<&'static str>,
}

impl KindKey {
    /// A key whose every value is taken.
    pub const fn any_value(key: &'static str, changed: fn(&Config) -> bool) -> KindKey {
        KindKey {
            key,
            changed,
            refused: takes_any_value,
        }
    }
}

fn takes_any_value(_: &Config) -> Option<&'static str> {
    None
}

/// Nothing beyond the general checks.
fn no_checks(_: &Config, _: &Geometry) -> Result<()> {
    Ok(())
}

/// No state of its own.
fn no_memory(_: &Config, _: &Geometry) -> Option<MemoryPart> {
    None
}

/// Usable physical blocks beyond the logical ones.
pub fn spare_blocks(geo: &Geometry) -> u32 {
    let ppb = geo.pages_per_block as u64;
    let logical_blocks = geo.logical_pages.div_ceil(ppb);
    ((geo.physical_pages / ppb).saturating_sub(logical_blocks)) as u32
}
