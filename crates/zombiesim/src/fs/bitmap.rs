//! The allocation bitmaps of blocks and inodes: one bit each, set while in use, and
//! the search for the first clear one.

#[inline]
pub(super) fn bit(bits: &[u64], i: u64) -> bool {
    bits[(i >> 6) as usize] & (1 << (i & 63)) != 0
}

#[inline]
pub(super) fn set(bits: &mut [u64], i: u64, on: bool) {
    let w = &mut bits[(i >> 6) as usize];
    if on {
        *w |= 1 << (i & 63);
    } else {
        *w &= !(1 << (i & 63));
    }
}

/// The first clear bit in `from..to`.
pub(super) fn find_clear(bits: &[u64], from: u64, to: u64) -> Option<u64> {
    let mut i = from;
    while i < to {
        let w = bits[(i >> 6) as usize] | ((1u64 << (i & 63)) - 1);
        if w != u64::MAX {
            let b = (i & !63) + (!w).trailing_zeros() as u64;
            return (b < to).then_some(b);
        }
        i = (i & !63) + 64;
    }
    None
}
