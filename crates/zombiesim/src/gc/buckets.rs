//! Blocks bucketed by an integer key, with "lowest block of the lowest key" in
//! O(blocks / 4096) word reads and O(1) moves.
//!
//! ```text
//!   key 0 : summary [..1..] ─► words [0001 0000 ...]    one bit per block
//!   key 1 : summary [1....] ─► words [1000 0100 ...]
//!   ...                                                 min_key hint ──► first non-empty key
//! ```
//!
//! Each key has a bitset over the unit's blocks and a summary bitset with one bit per
//! non-zero word, so the lowest set block is found by scanning at most
//! `blocks / 4096` summary words. Greedy keys by valid count; later policies
//! (z-greedy) key by their own integer score.
//!
//! The words are stored group by group, each group's keys side by side
//! (`words[group * keys + key]`, a group being 64 blocks): a block's key mostly moves
//! by one (a page of it died), so the word it leaves and the word it joins share a
//! cache line.

/// Blocks of one GC unit, bucketed by key.
#[derive(Clone, Debug)]
pub struct BucketIndex {
    first_block: u32,
    /// Keys `0 .. keys`: the stride of `words` and `summary`.
    keys: usize,
    summary_per_key: usize,
    words: Vec<u64>,
    summary: Vec<u64>,
    count: Vec<u32>,
    key_of: Vec<u32>,
    min_key: usize,
    len: usize,
}

const ABSENT: u32 = u32::MAX;

impl BucketIndex {
    /// Index for blocks `first_block .. first_block + blocks` with keys `0 ..= max_key`.
    pub fn new(first_block: u32, blocks: u32, max_key: u32) -> Self {
        let words_per_key = (blocks as usize).div_ceil(64);
        let summary_per_key = words_per_key.div_ceil(64);
        let keys = max_key as usize + 1;
        BucketIndex {
            first_block,
            keys,
            summary_per_key,
            words: vec![0; keys * words_per_key],
            summary: vec![0; keys * summary_per_key],
            count: vec![0; keys],
            key_of: vec![ABSENT; blocks as usize],
            min_key: keys,
            len: 0,
        }
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The key of a block, if it is in the index.
    pub fn key(&self, block: u32) -> Option<u32> {
        let k = self.key_of[(block - self.first_block) as usize];
        (k != ABSENT).then_some(k)
    }

    #[inline]
    fn set(&mut self, local: usize, key: usize) {
        let w = (local / 64) * self.keys + key;
        let was_zero = self.words[w] == 0;
        self.words[w] |= 1u64 << (local % 64);
        if was_zero {
            let sw = local / 64;
            self.summary[(sw / 64) * self.keys + key] |= 1u64 << (sw % 64);
        }
        self.count[key] += 1;
        if key < self.min_key {
            self.min_key = key;
        }
    }

    #[inline]
    fn clear(&mut self, local: usize, key: usize) {
        let w = (local / 64) * self.keys + key;
        self.words[w] &= !(1u64 << (local % 64));
        if self.words[w] == 0 {
            let sw = local / 64;
            self.summary[(sw / 64) * self.keys + key] &= !(1u64 << (sw % 64));
        }
        self.count[key] -= 1;
    }

    /// Add a block with a key.
    pub fn insert(&mut self, block: u32, key: u32) {
        let local = (block - self.first_block) as usize;
        debug_assert_eq!(self.key_of[local], ABSENT);
        self.key_of[local] = key;
        self.set(local, key as usize);
        self.len += 1;
    }

    /// Change a block's key (no-op when the block is absent).
    #[inline]
    pub fn update(&mut self, block: u32, key: u32) {
        let local = (block - self.first_block) as usize;
        let old = self.key_of[local];
        if old == ABSENT || old == key {
            return;
        }
        self.clear(local, old as usize);
        self.set(local, key as usize);
        self.key_of[local] = key;
    }

    /// Remove a block (no-op when absent).
    pub fn remove(&mut self, block: u32) {
        let local = (block - self.first_block) as usize;
        let old = self.key_of[local];
        if old != ABSENT {
            self.clear(local, old as usize);
            self.key_of[local] = ABSENT;
            self.len -= 1;
        }
    }

    /// The lowest key with any block, and the lowest block with that key.
    pub fn peek_min(&mut self) -> Option<(u32, u32)> {
        while self.min_key < self.count.len() && self.count[self.min_key] == 0 {
            self.min_key += 1;
        }
        let key = self.min_key;
        if key >= self.count.len() {
            return None;
        }
        for s in 0..self.summary_per_key {
            let sword = self.summary[s * self.keys + key];
            if sword != 0 {
                let wi = s * 64 + sword.trailing_zeros() as usize;
                let word = self.words[wi * self.keys + key];
                let local = wi * 64 + word.trailing_zeros() as usize;
                return Some((key as u32, self.first_block + local as u32));
            }
        }
        unreachable!("bucket count and bitset disagree")
    }

    /// Remove and return the lowest block of the lowest key.
    pub fn pop_min(&mut self) -> Option<u32> {
        let (_, block) = self.peek_min()?;
        self.remove(block);
        Some(block)
    }

    /// Bytes of memory held by the index.
    pub fn memory_bytes(&self) -> usize {
        self.words.len() * 8 + self.summary.len() * 8 + self.count.len() * 4 + self.key_of.len() * 4
    }
}
