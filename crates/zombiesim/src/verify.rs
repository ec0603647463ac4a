//! The integrity oracle: every logical page must resolve to the newest version written.
//!
//! Each host write gets a fresh version number. The oracle remembers the newest
//! version of every logical page and which version each physical page holds; GC
//! copies carry the version along. A read (and [`Oracle::check_all`]) then checks
//! that the mapping leads to exactly the version last written — a lost update, a
//! stale copy or a resurrected trim is caught at once. It costs 8 bytes per logical
//! and per physical page, so it is on in tests and `--verify`, off otherwise.

use crate::error::{Error, Result};
use crate::flash::NONE;

/// Versions per logical page (truth) and per physical page (what flash holds).
#[derive(Clone, Debug)]
pub struct Oracle {
    latest: Vec<u64>,
    stored: Vec<u64>,
    next: u64,
}

impl Oracle {
    pub fn new(logical_pages: u64, physical_pages: u64) -> Self {
        Oracle {
            latest: vec![0; logical_pages as usize],
            stored: vec![0; physical_pages as usize],
            next: 0,
        }
    }

    /// The host wrote logical page `lpn`; the FTL put it at `ppn`.
    #[inline]
    pub fn write(&mut self, lpn: usize, ppn: u32) {
        self.next += 1;
        self.latest[lpn] = self.next;
        self.stored[ppn as usize] = self.next;
    }

    /// The FTL moved a page's content from `from` to `to`.
    #[inline]
    pub fn copy(&mut self, from: u32, to: u32) {
        self.stored[to as usize] = self.stored[from as usize];
    }

    /// The host trimmed `lpn`: reading it must find nothing.
    pub fn trim(&mut self, lpn: usize) {
        self.latest[lpn] = 0;
    }

    /// The FTL resolved a read of `lpn` to `ppn` (or to nothing).
    pub fn check_read(&self, lpn: usize, ppn: Option<u32>) -> Result<()> {
        let want = self.latest[lpn];
        let got = ppn.map_or(0, |p| self.stored[p as usize]);
        if want == got {
            Ok(())
        } else {
            Err(Error::integrity(format!(
                "logical page {lpn}: newest version is {want}, the FTL returns version {got}{}",
                ppn.map_or(String::new(), |p| format!(" from physical page {p}"))
            )))
        }
    }

    /// Check every logical page against a page-level mapping table.
    pub fn check_all(&self, l2p: &[u32]) -> Result<()> {
        for (lpn, &ppn) in l2p.iter().enumerate() {
            self.check_read(lpn, (ppn != NONE).then_some(ppn))?;
        }
        Ok(())
    }
}
