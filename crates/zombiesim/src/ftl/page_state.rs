//! A flash copy's state as the device sees it (SPEC §1, 003 Fig. 5): the one
//! definition every part of the device reads.
//!
//! ```text
//!                    device buffer holds a newer dirty copy?
//!                          no              yes
//!   host holds a    no   Live            DeviceShadow
//!   newer dirty     yes  HostShadow      TwinShadow
//!   copy (marked)?
//!   not the mapped copy: Dead
//! ```
//!
//! Where the two facts live: the host-shadow marks in the FTL's
//! [`ZombieMarks`](crate::ftl::ZombieMarks) (per logical page, with per-block counts in
//! the flash state), the device-shadow fact in the device write buffer (its dirty
//! pages). GC reads both for each page it copies and counts its copies by state.

/// A logical page's state as the device sees it, for one flash copy of it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PageState {
    /// Valid, and no newer copy is known above the flash.
    Live,
    /// Valid; the host holds a dirty newer copy (and has told the device).
    HostShadow,
    /// Valid; the device write buffer holds a dirty newer copy.
    DeviceShadow,
    /// Valid; both buffers hold dirty newer copies.
    TwinShadow,
    /// Invalid: overwritten on flash, trimmed, or never this page's copy.
    Dead,
}

impl PageState {
    /// The state of a valid (mapped) copy from its two facts.
    #[inline]
    pub fn of(host_shadow: bool, device_shadow: bool) -> PageState {
        match (host_shadow, device_shadow) {
            (false, false) => PageState::Live,
            (true, false) => PageState::HostShadow,
            (false, true) => PageState::DeviceShadow,
            (true, true) => PageState::TwinShadow,
        }
    }

    /// The index of a valid copy's state in per-state counts
    /// ([`crate::stats::Counters::gc_copied_by_state`]: live, host-, device-,
    /// twin-shadow); `None` for a dead copy.
    #[inline]
    pub fn index(self) -> Option<usize> {
        match self {
            PageState::Live => Some(0),
            PageState::HostShadow => Some(1),
            PageState::DeviceShadow => Some(2),
            PageState::TwinShadow => Some(3),
            PageState::Dead => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::PageState;

    #[test]
    fn the_two_facts_give_the_four_valid_states_in_count_order() {
        let states = [(false, false), (true, false), (false, true), (true, true)]
            .map(|(h, d)| PageState::of(h, d));
        assert_eq!(
            states,
            [
                PageState::Live,
                PageState::HostShadow,
                PageState::DeviceShadow,
                PageState::TwinShadow
            ]
        );
        for (i, s) in states.iter().enumerate() {
            assert_eq!(s.index(), Some(i));
        }
        assert_eq!(PageState::Dead.index(), None);
    }
}
