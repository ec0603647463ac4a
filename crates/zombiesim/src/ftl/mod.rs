//! Flash translation layers behind one trait.
//!
//! An FTL turns host page operations (write, read, trim of logical page numbers)
//! into flash operations, runs garbage collection when it needs space, and keeps
//! [`Counters`]. Every FTL can check itself: [`Ftl::verify`] runs the invariant
//! checks and, when built with an oracle, the integrity check that every logical
//! page resolves to the newest version written.
//!
//! ```text
//!   Device ──PageWrite / read / trim / pad / DeviceEvent──► dyn Ftl
//!                                                             │
//!        ┌────────────────────────┬───────────────────────────┼──────────────────┐
//!   PageMappedFtl (page, dftl)  SuperblockFtl             FastFtl           BlockMappedFtl
//!     l2p + BlockManager          superblocks              data + log blocks  data blocks
//!     (GC units, victims,         + FreeBlocks             + FreeBlocks       + FreeBlocks
//!      Placement)
//!        └──────────── each keeps one FtlBase: flash, ops, counters, oracle, ─────────┘
//!                      zombie marks, logical clock
//! ```
//!
//! [`Ftl`] holds only what differs between FTLs (twelve methods); what every FTL
//! answers the same way comes from its [`FtlBase`] through [`FtlExt`], implemented
//! for every FTL.

mod base;
mod block_mapped;
mod block_mapping;
mod blocks;
mod buffer_view;
mod contract;
mod dftl;
mod external;
mod fast;
mod free_blocks;
mod kinds;
mod life_table;
mod marks;
mod ops;
mod page_mapped;
mod page_state;
mod reclaim_units;
mod refresh;
mod request;
mod superblock;
mod zombie_lifetimes;

pub use blocks::{BlockManager, GcUnit};
pub use ops::FlashOps;
pub use reclaim_units::{FdpCounts, ReclaimUnits, StreamCounts};
pub use refresh::RefreshQueues;

pub use crate::placement::WriteHint;
pub use base::{FtlBase, Wear};
pub use block_mapped::BlockMappedFtl;
pub use block_mapping::BlockMapping;
pub use buffer_view::{BufferView, NoBuffer};
pub use contract::{Ftl, FtlExt, FtlSummary, Space};
pub use dftl::DftlFtl;
pub use external::ExternalPolicies;
pub use fast::FastFtl;
pub use free_blocks::FreeBlocks;
pub use kinds::{build, build_with};
pub use marks::ZombieMarks;
pub use page_mapped::PageMappedFtl;
pub use page_state::PageState;
pub use request::{DeviceEvent, PageWrite, NO_VALUE};
pub use superblock::SuperblockFtl;
pub use zombie_lifetimes::{ZombieLifetimes, ZombieWeightReport};

pub use crate::config::Capabilities;
