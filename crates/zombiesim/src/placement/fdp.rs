//! FDP placement: a write goes to the reclaim-unit handle its placement identifier
//! names; a GC copy goes where the handle's isolation says (`fdp.*`,
//! `config::FdpConfig`).
//!
//! ```text
//!   placement id p = rg · handles + h  ──► stream rg · streams_per_rg + h
//!   no hint ──► handle 0 of a group the device picks: the groups in turn, page by page
//!   p unknown (≥ reclaim_groups · handles) ──► likewise, and counted as an
//!                                              "invalid placement identifier" event
//!
//!   GC copy out of a stream of group rg, handle h (its host stream or its own GC stream):
//!     initially isolated    ──► stream rg · streams_per_rg + handles       (one per group)
//!     persistently isolated ──► stream rg · streams_per_rg + handles + h   (one per handle)
//!     initial-last-handle   ──► stream rg · streams_per_rg + handles − 1   (the group's last
//!                               handle's host stream, shared with its host writes)
//!     a known zombie, with gc.zombie_block ──► the zombie stream
//! ```
//!
//! Streams past the groups' own (the zombie and translation streams) copy into
//! themselves or the zombie stream; the FTL handles translation pages before asking.

use super::{GcCopy, HostWrite, Placement};
use serde::{Deserialize, Serialize};

/// Where GC puts the valid pages it copies out of a handle's reclaim units.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Isolation {
    /// Initially isolated: host writes of different handles go to different RUs, but
    /// GC copies of every handle of a reclaim group share one destination.
    Initial,
    /// Persistently isolated: GC copies of a handle's data go to RUs of that handle
    /// only, so one handle's data never shares an RU with another's.
    Persistent,
    /// Initially isolated as FEMU's FDP FTL (WARP's emulator) does it: GC copies of
    /// every handle of a reclaim group go to the open RU of the group's last handle,
    /// beside that handle's host writes.
    InitialLastHandle,
}

impl Isolation {
    /// GC destinations per reclaim group with `handles` handles (the last-handle
    /// variant keeps the GC stream in the layout; it takes no reclaim unit, as nothing
    /// is written to it).
    pub fn gc_streams(self, handles: u32) -> u32 {
        match self {
            Isolation::Initial | Isolation::InitialLastHandle => 1,
            Isolation::Persistent => handles,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Isolation::Initial => "initial",
            Isolation::Persistent => "persistent",
            Isolation::InitialLastHandle => "initial-last-handle",
        }
    }
}

/// The resolved FDP layout: how many of everything, per reclaim group.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FdpLayout {
    pub handles: u32,
    pub reclaim_groups: u32,
    /// Planes per reclaim group.
    pub rg_planes: u32,
    /// Planes per reclaim unit.
    pub ru_planes: u32,
    pub isolation: Isolation,
    /// Streams per reclaim group: its handles, then its GC destinations (one, or one
    /// per handle).
    pub streams_per_rg: u32,
}

impl FdpLayout {
    /// GC destinations per reclaim group.
    pub fn gc_streams(&self) -> u32 {
        self.isolation.gc_streams(self.handles)
    }

    /// Groups of planes (RU slots) per reclaim group.
    pub fn groups_per_rg(&self) -> u32 {
        self.rg_planes / self.ru_planes
    }

    /// Placement identifiers the device accepts (`rg · handles + handle`).
    pub fn placement_ids(&self) -> u32 {
        self.reclaim_groups * self.handles
    }

    /// The reclaim group a stream belongs to (the zombie and translation streams,
    /// after the groups' own, belong to group 0: they exist with one group only).
    #[inline]
    pub fn group_of_stream(&self, stream: u32) -> u32 {
        let g = stream / self.streams_per_rg;
        if g < self.reclaim_groups {
            g
        } else {
            0
        }
    }
}

/// Handles to streams, GC copies to their isolation's destination.
#[derive(Clone)]
pub struct FdpPlacement {
    layout: FdpLayout,
    zombie: Option<u32>,
    /// Writes whose placement identifier named no handle.
    invalid: u64,
    /// The reclaim group the next write without a (valid) identifier goes to.
    next_group: u32,
}

impl FdpPlacement {
    pub fn new(layout: FdpLayout, zombie: Option<u32>) -> Self {
        FdpPlacement {
            layout,
            zombie,
            invalid: 0,
            next_group: 0,
        }
    }

    /// Where a GC copy from a block of `from_stream` goes, known zombies' aside.
    fn copy_stream(&self, from_stream: u32) -> u32 {
        let l = &self.layout;
        let group = from_stream / l.streams_per_rg;
        // The zombie stream's own pages that are no zombie any more go where group 0's
        // handle 0 sends its copies.
        let (group, handle) = if group >= l.reclaim_groups {
            (0, 0)
        } else {
            (group, self.handle_of(from_stream % l.streams_per_rg))
        };
        let first = group * l.streams_per_rg + l.handles;
        match l.isolation {
            Isolation::Initial => first,
            Isolation::InitialLastHandle => first - 1,
            Isolation::Persistent => first + handle,
        }
    }

    /// The handle (within its group) a stream of the groups' own belongs to.
    fn handle_of(&self, local: u32) -> u32 {
        if local < self.layout.handles {
            local
        } else {
            local - self.layout.handles
        }
    }
}

impl Placement for FdpPlacement {
    #[inline]
    fn host_stream(&mut self, write: &HostWrite) -> u32 {
        let l = &self.layout;
        match write.hint.stream.map(u32::from) {
            Some(pid) if pid < l.placement_ids() => {
                return (pid / l.handles) * l.streams_per_rg + pid % l.handles
            }
            Some(_) => self.invalid += 1,
            None => {}
        }
        // The default handle, in a reclaim group the device picks (the NVMe rule for
        // a write without a directive, or with an identifier the namespace lacks).
        let g = self.next_group;
        self.next_group = if g + 1 == l.reclaim_groups { 0 } else { g + 1 };
        g * l.streams_per_rg
    }

    #[inline]
    fn gc_stream(&mut self, copy: &GcCopy) -> u32 {
        if copy.zombie {
            if let Some(z) = self.zombie {
                return z;
            }
        }
        self.copy_stream(copy.from_stream)
    }

    fn victim_gc_stream(&self, from_stream: u32) -> Option<u32> {
        Some(self.copy_stream(from_stream))
    }

    fn rejected_hints(&self) -> u64 {
        self.invalid
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::placement::WriteHint;

    fn layout(isolation: Isolation, groups: u32) -> FdpLayout {
        let handles = 3;
        FdpLayout {
            handles,
            reclaim_groups: groups,
            rg_planes: 4,
            ru_planes: 4,
            isolation,
            streams_per_rg: handles + isolation.gc_streams(handles),
        }
    }

    fn write(pid: Option<u16>) -> HostWrite {
        HostWrite {
            lpn: 0,
            overwrite: false,
            hint: WriteHint {
                stream: pid,
                lifetime: None,
            },
            now: 0,
        }
    }

    fn copy(from: u32, zombie: bool) -> GcCopy {
        GcCopy {
            lpn: 0,
            zombie,
            block_modified: 0,
            now: 0,
            from_stream: from,
        }
    }

    #[test]
    fn identifiers_name_handles_and_unknown_ones_go_to_the_default_handle() {
        let mut p = FdpPlacement::new(layout(Isolation::Persistent, 2), None);
        // Group 1's streams start at 6 (3 handles + 3 GC streams).
        assert_eq!(p.host_stream(&write(Some(1))), 1);
        assert_eq!(p.host_stream(&write(Some(4))), 7);
        // Without an identifier, or with an invalid one: handle 0 of each group in turn.
        assert_eq!(p.host_stream(&write(None)), 0);
        assert_eq!(p.rejected_hints(), 0);
        assert_eq!(p.host_stream(&write(Some(6))), 6);
        assert_eq!(p.rejected_hints(), 1);
        assert_eq!(p.host_stream(&write(None)), 0);
    }

    #[test]
    fn persistent_isolation_keeps_copies_with_their_handle_initial_pools_them() {
        let mut pi = FdpPlacement::new(layout(Isolation::Persistent, 2), None);
        assert_eq!(pi.gc_stream(&copy(1, false)), 4);
        assert_eq!(
            pi.gc_stream(&copy(4, false)),
            4,
            "a GC stream copies into itself"
        );
        assert_eq!(pi.gc_stream(&copy(8, false)), 11);
        let mut ii = FdpPlacement::new(layout(Isolation::Initial, 2), Some(8));
        for from in [0, 1, 2, 3] {
            assert_eq!(ii.gc_stream(&copy(from, false)), 3);
        }
        assert_eq!(ii.gc_stream(&copy(5, false)), 7);
        assert_eq!(
            ii.gc_stream(&copy(1, true)),
            8,
            "known zombies to the zombie stream"
        );
    }

    #[test]
    fn initial_isolation_into_the_last_handle_shares_its_host_stream() {
        // Streams per group: 3 handles and the (unused) GC stream; group 1's start at 4.
        let mut ii = FdpPlacement::new(layout(Isolation::InitialLastHandle, 2), Some(8));
        for from in [0, 1, 2, 3] {
            assert_eq!(
                ii.gc_stream(&copy(from, false)),
                2,
                "handle 2's host stream"
            );
        }
        for from in [4, 5, 6, 7] {
            assert_eq!(ii.gc_stream(&copy(from, false)), 6);
        }
        // Host writes to the last handle land where the copies do.
        assert_eq!(ii.host_stream(&write(Some(2))), 2);
        assert_eq!(ii.host_stream(&write(Some(5))), 6);
        assert_eq!(ii.gc_stream(&copy(1, true)), 8, "known zombies still apart");
        // The zombie stream's pages that are no zombie any more: group 0's last handle.
        assert_eq!(ii.gc_stream(&copy(8, false)), 2);
        assert_eq!(Isolation::InitialLastHandle.name(), "initial-last-handle");
    }
}
