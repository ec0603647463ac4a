//! The host-shadow marks: which logical pages the device knows to have a dirty newer
//! copy above it (SPEC §1, the zombie pages the notification channel reports).
//!
//! ```text
//!   notification "L is dirty above"  ──► mark(L)     bit L set, known + 1
//!   the device writes or trims L     ──► unmark(L)   bit L cleared, known − 1
//!   the host loses its copy          ──► unmark(L)
//!   power-off                        ──► clear()     every bit cleared
//! ```
//!
//! One bit per logical page, allocated on the first mark, so a device that never
//! hears of zombies pays one comparison (`known == 0`) per write. The marks are part
//! of [`crate::ftl::FtlBase`], the state every FTL shares; the page-mapped FTL keeps
//! each block's count of marked valid pages beside them (`FlashState::zombies`).

/// One bit per logical page the device knows as host-shadow.
#[derive(Clone, Default)]
pub struct ZombieMarks {
    bits: Vec<u64>,
    known: u64,
}

impl ZombieMarks {
    /// Whether logical page `l` is marked.
    #[inline]
    pub fn is_marked(&self, l: usize) -> bool {
        self.bits
            .get(l >> 6)
            .is_some_and(|w| w & (1u64 << (l & 63)) != 0)
    }

    /// Mark `l` (of `logical_pages`); whether it was not marked before.
    #[inline]
    pub fn mark(&mut self, l: usize, logical_pages: usize) -> bool {
        if self.bits.is_empty() {
            self.bits = vec![0; logical_pages.div_ceil(64)];
        }
        let mask = 1u64 << (l & 63);
        let word = &mut self.bits[l >> 6];
        if *word & mask != 0 {
            return false;
        }
        *word |= mask;
        self.known += 1;
        true
    }

    /// Clear the mark of `l`; whether it was marked.
    #[inline]
    pub fn unmark(&mut self, l: usize) -> bool {
        if self.known == 0 {
            return false;
        }
        let mask = 1u64 << (l & 63);
        let word = &mut self.bits[l >> 6];
        if *word & mask == 0 {
            return false;
        }
        *word &= !mask;
        self.known -= 1;
        true
    }

    /// Clear every mark; the pages that were marked, ascending.
    pub fn clear(&mut self) -> Vec<usize> {
        let bits = std::mem::take(&mut self.bits);
        self.known = 0;
        let mut marked = Vec::new();
        for (w, &word) in bits.iter().enumerate() {
            let mut word = word;
            while word != 0 {
                marked.push(w * 64 + word.trailing_zeros() as usize);
                word &= word - 1;
            }
        }
        marked
    }

    /// Logical pages marked.
    #[inline]
    pub fn known(&self) -> u64 {
        self.known
    }

    /// Marked pages counted from the bits (the invariant check of [`ZombieMarks::known`]).
    pub fn count_bits(&self) -> u64 {
        self.bits.iter().map(|w| w.count_ones() as u64).sum()
    }

    /// Bytes the bits occupy.
    pub fn memory_bytes(&self) -> usize {
        self.bits.len() * 8
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn marks_count_and_clear() {
        let mut m = ZombieMarks::default();
        assert!(!m.unmark(3), "nothing is marked before the first mark");
        assert!(m.mark(3, 130) && !m.mark(3, 130) && m.mark(129, 130));
        assert_eq!((m.known(), m.count_bits()), (2, 2));
        assert!(m.is_marked(129) && !m.is_marked(128));
        assert!(m.unmark(3) && !m.unmark(3));
        assert!(m.mark(64, 130));
        assert_eq!(m.clear(), vec![64, 129]);
        assert_eq!((m.known(), m.memory_bytes()), (0, 0));
        assert!(!m.is_marked(64));
    }
}
