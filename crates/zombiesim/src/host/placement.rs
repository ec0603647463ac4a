//! The placement identifier each write of the host model carries (`host.placement`).
//!
//! ```text
//!   writer: application write (hint h) ─► cache page ─ ids[lpn] = h ─► writeback carries h
//!   file:   page lpn ─► file lpn / file_pages ─► id = file mod the device's identifiers
//!   kind:   fs model's page kind (data 0, metadata 1, journal 2) ─► id
//! ```
//!
//! A writeback run is cut where consecutive pages carry different identifiers: each
//! piece is one command (Linux merges no two bios of different write hints).

use crate::config::HostPlacement;
use crate::workload::IoKind;

/// No identifier (the page was written without one).
const NO_ID: u16 = u16::MAX;

/// The host's placement identifiers: the policy and, for `writer`, the identifier
/// each page was last written with.
pub(super) struct HostIds {
    placement: HostPlacement,
    file_pages: u64,
    /// The identifiers the device accepts (`file` wraps onto them).
    device_ids: u64,
    /// Per logical page, `writer` only.
    last: Vec<u16>,
}

impl HostIds {
    pub(super) fn new(
        placement: HostPlacement,
        logical_pages: u64,
        file_pages: u64,
        device_ids: u32,
    ) -> Self {
        let last = if placement == HostPlacement::Writer {
            vec![NO_ID; logical_pages as usize]
        } else {
            Vec::new()
        };
        HostIds {
            placement,
            file_pages,
            device_ids: device_ids.max(1) as u64,
            last,
        }
    }

    /// Whether writes carry identifiers at all.
    #[inline]
    pub(super) fn on(&self) -> bool {
        self.placement != HostPlacement::None
    }

    /// The application wrote `lpn` with identifier `id` (kept for `writer`).
    #[inline]
    pub(super) fn written(&mut self, lpn: u64, id: Option<u16>) {
        if let Some(slot) = self.last.get_mut(lpn as usize) {
            *slot = id.unwrap_or(NO_ID);
        }
    }

    /// The identifier a write of page `lpn`, holding `kind`, carries.
    #[inline]
    pub(super) fn of(&self, lpn: u64, kind: IoKind) -> Option<u16> {
        match self.placement {
            HostPlacement::None => None,
            HostPlacement::Writer => match self.last.get(lpn as usize) {
                Some(&id) if id != NO_ID => Some(id),
                _ => None,
            },
            HostPlacement::File => Some(((lpn / self.file_pages) % self.device_ids) as u16),
            HostPlacement::Kind => Some(kind as u16),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_policy_gives_the_identifier_it_says() {
        let mut w = HostIds::new(HostPlacement::Writer, 16, 4, 8);
        assert_eq!(w.of(3, IoKind::Data), None);
        w.written(3, Some(5));
        assert_eq!(w.of(3, IoKind::Data), Some(5));
        w.written(3, None);
        assert_eq!(w.of(3, IoKind::Data), None);
        let f = HostIds::new(HostPlacement::File, 64, 4, 3);
        // Files of 4 pages, wrapped onto 3 identifiers.
        let ids: Vec<_> = [0, 3, 4, 8, 12, 13]
            .map(|l| f.of(l, IoKind::Data).unwrap())
            .into();
        assert_eq!(ids, [0, 0, 1, 2, 0, 0]);
        let k = HostIds::new(HostPlacement::Kind, 64, 0, 8);
        assert_eq!(k.of(9, IoKind::Journal), Some(2));
        assert_eq!(k.of(9, IoKind::Metadata), Some(1));
        assert!(!HostIds::new(HostPlacement::None, 4, 0, 8).on());
    }
}
