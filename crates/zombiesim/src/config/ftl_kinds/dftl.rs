//! `ftl.kind = "dftl"`: DFTL (Gupta et al.), page-level mapping kept in translation
//! pages on flash, with a cached mapping table (`ftl.cmt_entries` entries) in SRAM.

use super::{no_checks, FtlKindSpec, KindKey, Mapping};
use crate::config::{Capabilities, Config, Geometry, MemoryPart};

/// DFTL's registry entry.
pub const SPEC: FtlKindSpec = FtlKindSpec {
    about: "DFTL: page-level mapping in translation pages on flash, a cached mapping \
            table (ftl.cmt_entries) in SRAM",
    capabilities: CAPABILITIES,
    mapping: Mapping::Pages,
    keys: &[KindKey {
        key: "ftl.cmt_entries",
        changed: |cfg| cfg.ftl.cmt_entries != Config::default().ftl.cmt_entries,
        refused: |cfg| {
            (cfg.ftl.cmt_entries == 0).then_some(
                "must be at least 1: DFTL keeps the mappings it uses in its cached mapping table",
            )
        },
    }],
    validate: no_checks,
    memory,
    mapping_cache: true,
};

/// What DFTL can do of what the page-mapped FTL can: everything but the content layer
/// (dedup and the dead-value pool map logical pages to shared physical pages, which
/// the translation pages do not model).
const CAPABILITIES: Capabilities = Capabilities {
    content: false,
    ..Capabilities::ALL
};

/// The cached mapping table: `min(ftl.cmt_entries, logical pages)` entries of 56 B
/// (slots, links, hash map).
fn memory(cfg: &Config, geo: &Geometry) -> Option<MemoryPart> {
    let logical = geo.logical_pages as f64;
    Some(MemoryPart {
        what: "cached mapping table",
        key: "ftl.cmt_entries",
        bytes: (cfg.ftl.cmt_entries as f64).min(logical) as u64 * 56,
    })
}
