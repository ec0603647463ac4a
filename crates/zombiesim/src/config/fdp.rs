//! `[fdp]`: host-directed data placement — NVMe Flexible Data Placement (TP4146), and
//! multi-stream as the same mechanism with one erase block as the reclaim unit.
//!
//! ```text
//!   write(lpn, placement id = rg · handles + handle)
//!        │                               reclaim group rg: its planes, its GC
//!        ▼                               ┌──────────────────────────────────────┐
//!   reclaim-unit handle h of rg ───────► │ open RU of h: one block on each of    │
//!                                        │ `ru_planes` planes, filled round-robin│
//!   GC copy of a page of h:              │                                       │
//!     initially isolated   ─► the RG's one GC RU (all handles' copies mix)         │
//!     persistently isolated ─► h's own GC RU (h's data never meets another's)      │
//!     initial-last-handle  ─► the open RU of the RG's last handle (FEMU's II)      │
//!                                        └──────────────────────────────────────┘
//! ```
//!
//! Off by default. With `enabled = true` the page-mapped FTLs (`page`, `dftl`) place
//! each write by its placement identifier; the block-mapped ones cannot and refuse the
//! keys. The checks of the combinations are in `fdp_checks`; the model is
//! `ftl::reclaim_units` and `placement::fdp`.

use crate::placement::Isolation;
use serde::{Deserialize, Serialize};

/// The `[fdp]` section.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct FdpConfig {
    /// Place writes by their placement identifier.
    pub enabled: bool,
    /// Reclaim-unit handles per reclaim group (placement handles).
    pub handles: u32,
    /// Reclaim groups: the planes split into this many groups of whole dies, each with
    /// its own reclaim units and its own garbage collector.
    pub reclaim_groups: u32,
    /// Planes one reclaim unit spans (one block on each); 0 = every plane of its
    /// reclaim group (a superblock, as drives do); 1 = one erase block (the streams
    /// directive's unit).
    pub ru_planes: u32,
    /// Where GC copies go: `initial` (one GC destination per reclaim group),
    /// `persistent` (one per handle), or `initial-last-handle` (initially isolated as
    /// FEMU's FDP FTL does it: into the open RU of the group's last handle, beside its
    /// host writes).
    pub isolation: Isolation,
}

impl FdpConfig {
    /// The placement identifiers an FDP device accepts (`reclaim_groups × handles`),
    /// `None` when FDP is off.
    pub fn placement_ids(&self) -> Option<u32> {
        self.enabled
            .then(|| self.reclaim_groups.saturating_mul(self.handles))
    }
}

impl Default for FdpConfig {
    fn default() -> Self {
        FdpConfig {
            enabled: false,
            handles: 8,
            reclaim_groups: 1,
            ru_planes: 0,
            isolation: Isolation::Initial,
        }
    }
}
