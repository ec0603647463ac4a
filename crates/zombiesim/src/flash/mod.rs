//! NAND flash: geometry and addresses, and the per-page / per-block state.
//!
//! ```text
//!   device ─┬─ channel 0 ─┬─ chip 0 ─┬─ die 0 ─┬─ plane 0 ── blocks 0 .. B-1
//!           │             │          │         └─ plane 1 ── blocks B .. 2B-1
//!           ...           ...        ...
//! ```
//!
//! Planes are the parallel units. Blocks are numbered plane by plane
//! (`block = plane × blocks_per_plane + index`), physical pages block by block
//! (`ppn = block × pages_per_block + page`), all as `u32` indices into flat arrays.

mod state;

pub use crate::config::{Geometry, UnitRange};
pub use state::{BlockStatus, FlashState, NONE};
