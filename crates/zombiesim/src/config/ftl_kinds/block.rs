//! `ftl.kind = "block"`: plain block mapping, an update in place is a
//! read-modify-write of the block. It needs one spare block.

use super::{no_checks, no_memory, BlockMapped, FtlKindSpec, Mapping, SpareNeed};
use crate::config::{Capabilities, Config, Geometry};

/// Block mapping's registry entry.
pub const SPEC: FtlKindSpec = FtlKindSpec {
    about: "plain block mapping: an update in place is a read-modify-write of the block",
    capabilities: Capabilities::NONE,
    mapping: Mapping::Blocks(BlockMapped {
        frees_space: "block mapping rewrites whole blocks",
        spare,
    }),
    keys: &[],
    validate: no_checks,
    memory: no_memory,
    mapping_cache: false,
};

/// The block a rewrite goes to.
fn spare(_: &Config, _: &Geometry) -> SpareNeed {
    SpareNeed {
        blocks: 1,
        key: "ftl.over_provisioning",
        detail: String::new(),
        hint: "",
    }
}
