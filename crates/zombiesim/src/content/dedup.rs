//! Deduplication state (CAFTL-style): live values, reference counts, and the reverse
//! map from a shared physical page to every logical page mapping to it.
//!
//! ```text
//!  live:  value ──► PPN holding it (at most one live page per value)
//!  refs:  PPN ──► number of logical pages mapping to it (0 = dead)
//!  ring:  logical pages sharing a PPN form a circular doubly linked list
//!         (next/prev per logical page); flash `owner[PPN]` is one member
//! ```
//!
//! The ring lets GC move a shared page once and fix every mapping to it, and lets a
//! departing logical page hand `owner` to another member in O(1). Memory: 8 bytes per
//! logical page, 4 per physical page, plus the live table.

use super::table::FpMap;

/// Reference counts, sharer rings and the live-value table.
#[derive(Clone, Debug)]
pub struct Sharing {
    pub live: FpMap<u32>,
    refs: Vec<u32>,
    next: Vec<u32>,
    prev: Vec<u32>,
}

impl Sharing {
    pub fn new(logical_pages: u64, physical_pages: u64) -> Self {
        Sharing {
            live: FpMap::default(),
            refs: vec![0; physical_pages as usize],
            next: (0..logical_pages as u32).collect(),
            prev: (0..logical_pages as u32).collect(),
        }
    }

    /// Logical pages mapping to `ppn`.
    #[inline]
    pub fn refs(&self, ppn: u32) -> u32 {
        self.refs[ppn as usize]
    }

    /// `lpn` alone now maps to the freshly programmed or revived `ppn`.
    #[inline]
    pub fn map_alone(&mut self, lpn: u32, ppn: u32) {
        debug_assert_eq!(self.next[lpn as usize], lpn);
        self.refs[ppn as usize] = 1;
    }

    /// `lpn` joins the logical pages sharing `ppn`, whose owner is `member`.
    #[inline]
    pub fn join(&mut self, lpn: u32, ppn: u32, member: u32) {
        let (l, m) = (lpn as usize, member as usize);
        debug_assert_eq!(self.next[l], lpn);
        let after = self.next[m];
        self.next[m] = lpn;
        self.prev[l] = member;
        self.next[l] = after;
        self.prev[after as usize] = lpn;
        self.refs[ppn as usize] += 1;
    }

    /// `lpn` stops mapping to `ppn`. Returns the page's remaining reference count and,
    /// if others remain, one of them (to become the page's owner).
    #[inline]
    pub fn leave(&mut self, lpn: u32, ppn: u32) -> (u32, Option<u32>) {
        let l = lpn as usize;
        let (p, n) = (self.prev[l], self.next[l]);
        self.next[p as usize] = n;
        self.prev[n as usize] = p;
        self.next[l] = lpn;
        self.prev[l] = lpn;
        let r = &mut self.refs[ppn as usize];
        *r -= 1;
        (*r, (n != lpn).then_some(n))
    }

    /// The page moved (GC): carry its reference count.
    #[inline]
    pub fn moved(&mut self, from: u32, to: u32) {
        self.refs[to as usize] = self.refs[from as usize];
        self.refs[from as usize] = 0;
    }

    /// The logical page after `lpn` in its ring (`lpn` itself when unshared).
    #[inline]
    pub fn next_sharer(&self, lpn: u32) -> u32 {
        self.next[lpn as usize]
    }

    /// Approximate bytes held.
    pub fn memory_bytes(&self) -> usize {
        self.refs.len() * 4 + self.next.len() * 8 + self.live.capacity() * 16
    }

    /// Sanity of the rings: every ring's members are linked both ways.
    pub fn rings_consistent(&self) -> Option<u32> {
        (0..self.next.len() as u32).find(|&l| self.prev[self.next[l as usize] as usize] != l)
    }

    #[cfg(test)]
    fn ring(&self, lpn: u32) -> Vec<u32> {
        let mut out = vec![lpn];
        let mut x = self.next[lpn as usize];
        while x != lpn {
            out.push(x);
            x = self.next[x as usize];
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rings_join_and_leave() {
        let mut s = Sharing::new(8, 8);
        s.map_alone(1, 5);
        s.join(2, 5, 1);
        s.join(3, 5, 1);
        assert_eq!(s.refs(5), 3);
        assert_eq!(s.ring(1), vec![1, 3, 2]);
        assert_eq!(s.leave(1, 5), (2, Some(3)));
        assert_eq!(s.ring(3), vec![3, 2]);
        assert_eq!(s.leave(2, 5), (1, Some(3)));
        assert_eq!(s.leave(3, 5), (0, None));
        assert_eq!(s.rings_consistent(), None);
        s.map_alone(4, 6);
        s.moved(6, 7);
        assert_eq!((s.refs(6), s.refs(7)), (0, 1));
    }
}
