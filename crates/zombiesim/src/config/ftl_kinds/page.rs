//! `ftl.kind = "page"`: page-level mapping, every logical page maps anywhere. It can
//! do everything an FTL can beyond the contract, and reads no key of its own.

use super::{no_checks, no_memory, FtlKindSpec, Mapping};
use crate::config::Capabilities;

/// The page-mapped FTL's registry entry.
pub const SPEC: FtlKindSpec = FtlKindSpec {
    about: "page-level mapping (every logical page maps anywhere)",
    capabilities: Capabilities::ALL,
    mapping: Mapping::Pages,
    keys: &[],
    validate: no_checks,
    memory: no_memory,
    mapping_cache: false,
};
