//! What a replacement policy of the device write buffer is: the [`Replacement`] trait
//! the buffer drives and the [`SlotView`] it gives a policy to choose victims from.
//!
//! A policy sees slots, not logical pages: the buffer tells it when a slot is filled,
//! touched and emptied, and asks it for victims, giving it a [`SlotView`] of each
//! slot's page and state. A victim set may hold several slots, so block-granularity
//! policies (evict a whole logical block, pad it) are further implementations of the
//! same trait.

/// What a policy may look at when it chooses victims.
pub struct SlotView<'a> {
    /// The logical page each slot holds.
    pub lpn: &'a [u64],
    /// Whether each slot's page is dirty (newer than flash).
    pub dirty: &'a [bool],
}

dyn_clone::clone_trait_object!(Replacement);

/// A replacement policy over the slots of a buffer.
pub trait Replacement: Send + dyn_clone::DynClone {
    /// `slot` now holds logical page `lpn` (most recently used).
    fn insert(&mut self, slot: u32, lpn: u64);
    /// `slot` (holding `lpn`) was read (`write` false) or written again.
    fn touch(&mut self, slot: u32, lpn: u64, write: bool);
    /// `slot` (holding `lpn`) is emptied.
    fn remove(&mut self, slot: u32, lpn: u64);
    /// Choose the slots to evict (at least one, while any slot is filled) into `out`.
    fn victims(&mut self, view: &SlotView, out: &mut Vec<u32>);
    /// The slot most likely evicted next, if the policy can tell without work (a
    /// hint for prefetching: nothing depends on it).
    fn next_victim(&self) -> Option<u32> {
        None
    }
    /// Whether an evicted block is padded: the pages of its logical block that the
    /// buffer does not hold are read from flash and written with it (BPLRU).
    fn pads(&self) -> bool;
    /// The chance the page in `slot` is written again before it is evicted (`P(U)`
    /// of 004 §5); only the 3-region policy estimates it, the others answer 0.
    fn update_probability(&self, slot: u32) -> f64;
}
