//! What the request stream says of a block's valid pages (`gc.zombie_weight =
//! "lifetime"`, with [`ZombieLifetimes`]): the share of them that die within the GC
//! horizon H, given the block's age — learnt from the blocks themselves, so nothing of
//! the future is read.
//!
//! ```text
//!   block sealed (its last page programmed)  ──► sealed_at[b] = now
//!   every H/4 host writes: a note of every sealed block: valid pages v, erase count,
//!            age bucket k = ⌊log2(now − sealed_at + 1)⌋
//!   the note a horizon old against today's: for each block sealed in both and not
//!            erased in between, had[k_then] += v_then, kept[k_then] += v_now
//!            (older sums weigh ¾ less per note)
//!   q[k] = (1 − kept[k] / had[k]) · m / (m + 1024)     m = had[k], pages seen
//!   a sealed block's predicted deaths = (v − z) · q[k]  (z: its known zombies, which
//!            their own chance counts)
//! ```
//!
//! The hot blocks greedy takes too early, whose pages die soon after, are young: where
//! their age shows a high `q`, z-greedy and z-cost-benefit count their valid pages as
//! about to die and postpone them, as the victim oracle, told every death, does. Blocks
//! GC took in between are left out of the comparison (their pages moved), which makes
//! `q` err low: towards the base policy. Cost: O(1) per sealed block; O(blocks) per
//! note; 4 notes of 9 bytes, 8 and 4 more bytes a block.
//!
//! [`ZombieLifetimes`]: super::ZombieLifetimes

use std::collections::VecDeque;

/// Lifetime and age buckets, here and in [`ZombieLifetimes`]: `⌊log2(x + 1)⌋` host page
/// writes.
///
/// [`ZombieLifetimes`]: super::ZombieLifetimes
pub(super) const BUCKETS: usize = 48;

/// The bucket of a lifetime or age (host page writes).
#[inline]
pub(super) fn bucket(x: u64) -> usize {
    (63 - (x.saturating_add(1)).leading_zeros() as usize).min(BUCKETS - 1)
}

/// Notes of the blocks kept: a quarter horizon apart, so the oldest is a horizon old.
const NOTES: usize = 4;
/// Each older pair of notes weighs this much less per note taken.
const NOTE_DECAY: f64 = 0.75;
/// Pages at which a decline is trusted half.
const PAGE_PRIOR: f64 = 1024.0;

/// Every block's valid pages, erase count and age bucket at one time (`u8::MAX`: not
/// sealed then).
#[derive(Clone, Debug)]
struct Note {
    valid: Vec<u32>,
    erases: Vec<u32>,
    bucket: Vec<u8>,
}

/// The share of a block's valid pages that die within the horizon, by the block's age.
#[derive(Clone, Debug)]
pub struct ValidDecline {
    horizon: u64,
    sealed_at: Vec<u64>,
    notes: VecDeque<Note>,
    last_note: u64,
    /// Decayed sums of valid pages at a note and a horizon later, by age bucket then.
    had: [f64; BUCKETS],
    kept: [f64; BUCKETS],
    decline: [f64; BUCKETS],
    /// Each block's predicted deaths among its valid non-zombie pages, as last noted.
    predicted: Vec<u32>,
}

impl ValidDecline {
    /// For `blocks` blocks and a horizon of `horizon` host page writes.
    pub fn new(blocks: usize, horizon: u64) -> Self {
        ValidDecline {
            horizon: horizon.max(1),
            sealed_at: vec![0; blocks],
            notes: VecDeque::new(),
            last_note: 0,
            had: [0.0; BUCKETS],
            kept: [0.0; BUCKETS],
            decline: [0.0; BUCKETS],
            predicted: vec![0; blocks],
        }
    }

    /// Block `block` was sealed (its last page programmed) at `now`.
    #[inline]
    pub fn sealed(&mut self, block: u32, now: u64) {
        self.sealed_at[block as usize] = now;
    }

    /// Block `block`'s predicted deaths among its valid non-zombie pages.
    #[inline]
    pub fn predicted(&self, block: u32) -> u32 {
        self.predicted[block as usize]
    }

    /// Whether a note is due at `now` (a quarter horizon since the last).
    pub fn note_due(&self, now: u64) -> bool {
        now.saturating_sub(self.last_note) >= (self.horizon / 4).max(1)
    }

    /// A note of every block at `now`, if one is due: its valid pages, erase count and
    /// known zombies, and whether it is sealed (`sealed`). The note a horizon old is
    /// compared with it, and every block's predicted deaths are renewed.
    pub fn note(
        &mut self,
        now: u64,
        valid: &[u32],
        erases: &[u32],
        zombies: &[u32],
        sealed: &dyn Fn(usize) -> bool,
    ) {
        if !self.note_due(now) {
            return;
        }
        self.last_note = now;
        let bucket: Vec<u8> = (0..valid.len())
            .map(|b| {
                if sealed(b) {
                    bucket(now.saturating_sub(self.sealed_at[b])) as u8
                } else {
                    u8::MAX
                }
            })
            .collect();
        if self.notes.len() == NOTES {
            let old = self.notes.pop_front().expect("a full set of notes");
            for k in 0..BUCKETS {
                self.had[k] *= NOTE_DECAY;
                self.kept[k] *= NOTE_DECAY;
            }
            for b in 0..valid.len() {
                let k = old.bucket[b];
                if k == u8::MAX || bucket[b] == u8::MAX || old.erases[b] != erases[b] {
                    continue;
                }
                self.had[k as usize] += f64::from(old.valid[b]);
                self.kept[k as usize] += f64::from(valid[b]);
            }
            for k in 0..BUCKETS {
                let n = self.had[k];
                self.decline[k] = if n > 0.0 {
                    (1.0 - self.kept[k] / n).clamp(0.0, 1.0) * n / (n + PAGE_PRIOR)
                } else {
                    0.0
                };
            }
        }
        for b in 0..valid.len() {
            self.predicted[b] = match bucket[b] {
                u8::MAX => 0,
                k => {
                    let others = valid[b].saturating_sub(zombies[b]);
                    (f64::from(others) * self.decline[k as usize]).round() as u32
                }
            };
        }
        self.notes.push_back(Note {
            valid: valid.to_vec(),
            erases: erases.to_vec(),
            bucket,
        });
    }

    /// The decline by age bucket, up to the last non-zero one.
    pub fn by_age(&self) -> Vec<f64> {
        let used = self
            .decline
            .iter()
            .rposition(|&q| q > 0.0)
            .map_or(0, |i| i + 1);
        self.decline[..used].to_vec()
    }

    /// Bytes held.
    pub fn memory_bytes(&self) -> usize {
        self.sealed_at.len() * 8
            + self.predicted.len() * 4
            + self.notes.iter().map(|n| n.valid.len() * 9).sum::<usize>()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn valid_pages_count_by_the_decline_blocks_of_their_age_showed() {
        // Horizon 400: a note every 100 writes; block 0 sealed at 0, block 1 at 350,
        // block 2 open throughout.
        let mut p = ValidDecline::new(3, 400);
        p.sealed(0, 0);
        p.sealed(1, 350);
        let first = |b: usize| b == 0;
        let both = |b: usize| b < 2;
        let (fresh, zombies) = ([0, 0, 0], [0, 0, 0]);
        // Block 0 loses 40 of its 100 valid pages over a horizon.
        for (t, valid) in [(100, [100, 0, 3]), (200, [90, 0, 3]), (300, [80, 0, 3])] {
            assert!(p.note_due(t));
            p.note(t, &valid, &fresh, &zombies, &first);
        }
        assert!(!p.note_due(399));
        p.note(400, &[70, 64, 3], &fresh, &zombies, &both);
        assert!(
            p.by_age().is_empty(),
            "nothing learnt before a horizon passed"
        );
        p.note(500, &[60, 64, 3], &fresh, &zombies, &both);
        // Block 0 was 100 writes old at the first note (bucket 6): 100 valid then, 60 a
        // horizon later, so 40% died, shrunk by 100 / (100 + 1024).
        let q = 0.4 * 100.0 / (100.0 + PAGE_PRIOR);
        assert!((p.by_age()[6] - q).abs() < 1e-12, "{:?}", p.by_age());
        // Block 0 is 500 writes old now (bucket 8), block 1 150 (bucket 7): no decline
        // was seen at those ages.
        assert_eq!((p.predicted(0), p.predicted(1)), (0, 0));
        // A block erased in between is not compared.
        let mut erased = p.clone();
        erased.note(600, &[50, 60, 3], &[1, 0, 0], &zombies, &both);
        assert_eq!(erased.had[7], 0.0);
        // Where blocks of its age declined by half, block 1's 64 valid pages count as 30
        // about to die: its 4 known zombies count by their own chance, not twice.
        let mut p = ValidDecline::new(3, 400);
        p.sealed(1, 350);
        p.decline[7] = 0.5;
        p.note(500, &[0, 64, 3], &fresh, &[0, 4, 0], &both);
        assert_eq!(p.predicted(1), 30, "(64 - 4) / 2");
        assert_eq!(p.predicted(2), 0, "an open block predicts nothing");
    }
}
