//! The integrity oracle: every logical page must resolve to the newest version written.
//!
//! Each host write gets a fresh version number. The oracle remembers the newest
//! version of every logical page and which version each physical page holds; GC
//! copies carry the version along. A read (and [`Oracle::check_all`]) then checks
//! that the mapping leads to exactly the version last written — a lost update, a
//! stale copy or a resurrected trim is caught at once. It costs 8 bytes per logical
//! and per physical page, so it is on in tests and `--verify`, off otherwise.
//!
//! Content-aware flash (dedup, dead-value revival) maps a logical page to a page
//! programmed for *another* write of the same content. For writes that carry a
//! fingerprint the oracle therefore tracks content, not versions: the write records
//! the value as the truth of the logical page ([`Oracle::write_value`] when a page is
//! programmed, [`Oracle::write_mapped`] when the FTL maps to an existing page), and
//! physical pages hold what was programmed into them; a read must find the value last
//! written. Value identities carry the top bit, versions never do.
//!
//! The skip policy (`gc.skip_shadows`) drops a page's flash copy while the device
//! write buffer holds a newer one: the oracle remembers such pages as *held above*
//! (unmapped is then right). If power is lost before the buffer writes them, they
//! are *lost* — no copy of any version is left — and every later check fails,
//! naming them.

use crate::error::{Error, Result};
use crate::flash::NONE;
use std::collections::BTreeSet;

/// The oracle's identity of a fingerprinted content (versions stay below 2^63).
#[inline]
fn value_id(value: u64) -> u64 {
    value | 1 << 63
}

/// Versions per logical page (truth) and per physical page (what flash holds).
#[derive(Clone, Debug)]
pub struct Oracle {
    latest: Vec<u64>,
    stored: Vec<u64>,
    next: u64,
    /// Logical pages whose only newer copy is in the device buffer (flash copy dropped).
    held_above: BTreeSet<usize>,
    /// Logical pages lost: held above when power was lost.
    lost: BTreeSet<usize>,
}

impl Oracle {
    pub fn new(logical_pages: u64, physical_pages: u64) -> Self {
        Oracle {
            latest: vec![0; logical_pages as usize],
            stored: vec![0; physical_pages as usize],
            next: 0,
            held_above: BTreeSet::new(),
            lost: BTreeSet::new(),
        }
    }

    /// GC dropped the flash copy of `lpn`: the device buffer holds its newest copy.
    pub fn skip(&mut self, lpn: usize) {
        self.held_above.insert(lpn);
    }

    /// Power was lost; the device buffer lost the pages `lpns`. Those held above have
    /// no copy left anywhere.
    pub fn power_lost(&mut self, lpns: &[u64]) {
        for &l in lpns {
            if self.held_above.remove(&(l as usize)) {
                self.lost.insert(l as usize);
            }
        }
    }

    /// Logical pages lost so far (held above when power was lost).
    pub fn lost_pages(&self) -> usize {
        self.lost.len()
    }

    /// The host wrote logical page `lpn`; the FTL put it at `ppn`.
    #[inline]
    pub fn write(&mut self, lpn: usize, ppn: u32) {
        self.written(lpn);
        self.next += 1;
        self.latest[lpn] = self.next;
        self.stored[ppn as usize] = self.next;
    }

    /// The host wrote `value` to `lpn`; the FTL programmed it into `ppn`.
    #[inline]
    pub fn write_value(&mut self, lpn: usize, ppn: u32, value: u64) {
        self.written(lpn);
        let id = value_id(value);
        self.latest[lpn] = id;
        self.stored[ppn as usize] = id;
    }

    /// The host wrote `value` to `lpn`; the FTL mapped it to a page already on flash
    /// (dedup or revival), programming nothing. A read then checks the page's content.
    #[inline]
    pub fn write_mapped(&mut self, lpn: usize, value: u64) {
        self.written(lpn);
        self.latest[lpn] = value_id(value);
    }

    /// A new copy of `lpn` reached flash: it is neither held above nor lost any more.
    #[inline]
    fn written(&mut self, lpn: usize) {
        if !self.held_above.is_empty() || !self.lost.is_empty() {
            self.held_above.remove(&lpn);
            self.lost.remove(&lpn);
        }
    }

    /// The FTL moved a page's content from `from` to `to`.
    #[inline]
    pub fn copy(&mut self, from: u32, to: u32) {
        self.stored[to as usize] = self.stored[from as usize];
    }

    /// The host trimmed `lpn`: reading it must find nothing.
    pub fn trim(&mut self, lpn: usize) {
        self.written(lpn);
        self.latest[lpn] = 0;
    }

    /// The content value last written to `lpn`, when it was written with one.
    pub fn content_of(&self, lpn: usize) -> Option<u64> {
        let id = self.latest[lpn];
        (id >> 63 == 1).then_some(id & !(1 << 63))
    }

    /// The FTL resolved a read of `lpn` to `ppn` (or to nothing).
    pub fn check_read(&self, lpn: usize, ppn: Option<u32>) -> Result<()> {
        if ppn.is_none() && self.held_above.contains(&lpn) {
            return Ok(());
        }
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
        if let Some(&first) = self.lost.iter().next() {
            return Err(Error::integrity(format!(
                "{} logical pages lost (first: {first}): GC dropped their flash copy \
                 (gc.skip_shadows) and the volatile write buffer holding the newer copy \
                 lost it at power loss",
                self.lost.len()
            )));
        }
        for (lpn, &ppn) in l2p.iter().enumerate() {
            self.check_read(lpn, (ppn != NONE).then_some(ppn))?;
        }
        Ok(())
    }
}
