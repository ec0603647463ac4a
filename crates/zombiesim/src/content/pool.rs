//! The dead-value pool: which dead physical pages still hold a value worth reviving.
//!
//! ```text
//!  map: key ──► slot ──► Entry { key, pages (intrusive list over physical pages),
//!                                popularity, expiry, queue, LRU links }
//!  queues 0..m, each an intrusive LRU list:  head (least recent) ◄──► tail (most recent)
//! ```
//!
//! An entry's key is the value's fingerprint (`lru`, `mq`, `infinite`) or the logical
//! page the dead pages belonged to (`lx`). An entry holds every pooled dead page with
//! that key, in a doubly linked list threaded through per-physical-page arrays, so
//! adding, reviving or erasing a page is O(1) and nothing is allocated per request once
//! the slab and the map have grown to the pool's capacity.
//!
//! Policies:
//! - `lru`: one queue; a touched entry moves to the tail; when full, the head is evicted.
//! - `mq` (Zhou et al., as 001 §IV-C adapts it): `m` LRU queues. Time is the number of
//!   host page writes. A new entry enters queue 0; an entry whose
//!   `floor(log2(popularity + 1))` exceeds its queue index is promoted one queue each
//!   time it is accessed again (another dead copy, a revival that leaves pages). On every pool update the head of each queue is checked and demoted one
//!   queue if its expiration time has passed; expiration = now + the interval between
//!   the last two accesses of the hottest (most popular) entry. When full, the head of
//!   the lowest non-empty queue is evicted.
//! - `infinite`: `lru` without a capacity (001's Ideal): entries leave only when
//!   revived or erased.
//! - `lx`: `lru` keyed by logical page; reads of the page also refresh it.
//!
//! Evicting an entry drops all its pages at once (they stay dead on flash, now plain
//! garbage); the caller is told which pages left through an out-list.

use super::table::FpMap;
use crate::config::PoolPolicy;
use crate::flash::NONE;

/// Highest popularity an entry records (the mapping table keeps 8 bits).
pub const MAX_POPULARITY: u32 = 255;

/// `floor(log2(popularity + 1))`: the popularity degree (0 for an unknown value).
#[inline]
pub fn degree(popularity: u32) -> u32 {
    31 - (popularity + 1).leading_zeros()
}

#[derive(Clone, Debug)]
struct Entry {
    key: u64,
    first_page: u32,
    pages: u32,
    popularity: u32,
    queue: u8,
    expire: u64,
    last_access: u64,
    prev_access: u64,
    prev: u32,
    next: u32,
}

/// Counters of pool activity.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PoolCounters {
    /// Dead pages added.
    pub inserted_pages: u64,
    /// Entries evicted for capacity.
    pub evicted_entries: u64,
    /// Dead pages dropped by evictions.
    pub evicted_pages: u64,
    /// Dead pages dropped because GC erased their block.
    pub erased_pages: u64,
    /// MQ promotions and demotions.
    pub promotions: u64,
    pub demotions: u64,
}

/// A dead-value pool over a device of `physical_pages` pages.
#[derive(Clone, Debug)]
pub struct DeadValuePool {
    policy: PoolPolicy,
    capacity: usize,
    map: FpMap<u32>,
    entries: crate::table::Table<Entry>,
    free_slots: Vec<u32>,
    q_head: Vec<u32>,
    q_tail: Vec<u32>,
    /// Per physical page: slot of the entry holding it (`NONE` if not pooled), links.
    page_slot: Vec<u32>,
    page_next: Vec<u32>,
    page_prev: Vec<u32>,
    pages: u64,
    now: u64,
    hottest_popularity: u32,
    hottest_interval: u64,
    peak_entries: usize,
    pub counters: PoolCounters,
}

impl DeadValuePool {
    /// A pool of `policy` with room for `capacity` entries (ignored by `infinite`) and
    /// `queues` MQ queues.
    pub fn new(policy: PoolPolicy, capacity: u64, queues: u32, physical_pages: u64) -> Self {
        let queues = if policy == PoolPolicy::Mq {
            queues.max(1)
        } else {
            1
        } as usize;
        let capacity = if policy == PoolPolicy::Infinite {
            usize::MAX
        } else {
            capacity as usize
        };
        let reserve = capacity.min(physical_pages as usize).min(1 << 22);
        let mut map = FpMap::default();
        map.reserve(reserve);
        DeadValuePool {
            policy,
            capacity,
            map,
            entries: Vec::with_capacity(reserve).into(),
            free_slots: Vec::new(),
            q_head: vec![NONE; queues],
            q_tail: vec![NONE; queues],
            page_slot: vec![NONE; physical_pages as usize],
            page_next: vec![NONE; physical_pages as usize],
            page_prev: vec![NONE; physical_pages as usize],
            pages: 0,
            now: 0,
            hottest_popularity: 0,
            hottest_interval: 0,
            peak_entries: 0,
            counters: PoolCounters::default(),
        }
    }

    pub fn policy(&self) -> PoolPolicy {
        self.policy
    }

    /// Entries now in the pool.
    pub fn entries(&self) -> usize {
        self.map.len()
    }

    /// Most entries the pool ever held.
    pub fn peak_entries(&self) -> usize {
        self.peak_entries
    }

    /// Dead pages now in the pool.
    pub fn pages(&self) -> u64 {
        self.pages
    }

    /// Whether a physical page is pooled.
    #[inline]
    pub fn contains(&self, ppn: u32) -> bool {
        self.page_slot[ppn as usize] != NONE
    }

    /// Advance the pool's clock by one host page write.
    #[inline]
    pub fn tick(&mut self) {
        self.now += 1;
    }

    /// The popularity recorded for `key`, if pooled.
    pub fn popularity(&self, key: u64) -> Option<u32> {
        self.map
            .get(&key)
            .map(|&s| self.entries[s as usize].popularity)
    }

    /// Add dead page `ppn` under `key` with the value's `popularity`. Pages evicted to
    /// make room are pushed onto `released`.
    pub fn insert(&mut self, key: u64, ppn: u32, popularity: u32, released: &mut Vec<u32>) {
        debug_assert_eq!(self.page_slot[ppn as usize], NONE);
        self.counters.inserted_pages += 1;
        self.demote_expired();
        let popularity = popularity.min(MAX_POPULARITY);
        let slot = match self.map.get(&key) {
            Some(&s) => {
                let e = &mut self.entries[s as usize];
                e.popularity = e.popularity.max(popularity);
                self.touch_slot(s);
                s
            }
            None => {
                if self.map.len() >= self.capacity {
                    self.evict(released);
                }
                let s = self.alloc(Entry {
                    key,
                    first_page: NONE,
                    pages: 0,
                    popularity,
                    queue: 0,
                    expire: self.now + self.hottest_interval,
                    last_access: self.now,
                    prev_access: self.now,
                    prev: NONE,
                    next: NONE,
                });
                self.map.insert(key, s);
                self.push_tail(s, 0);
                self.peak_entries = self.peak_entries.max(self.map.len());
                s
            }
        };
        self.link_page(slot, ppn);
    }

    /// Revive a page of `key`: unpool and return one (the most recently died) and the
    /// value's popularity counting this write.
    /// `accept` filters candidate pages (`lx` looks for a page holding the written value).
    pub fn take(&mut self, key: u64, accept: impl Fn(u32) -> bool) -> Option<(u32, u32)> {
        let &slot = self.map.get(&key)?;
        let mut ppn = self.entries[slot as usize].first_page;
        while ppn != NONE && !accept(ppn) {
            ppn = self.page_next[ppn as usize];
        }
        if ppn == NONE {
            return None;
        }
        let e = &mut self.entries[slot as usize];
        e.popularity = (e.popularity + 1).min(MAX_POPULARITY);
        let popularity = e.popularity;
        self.unlink_page(ppn);
        if self.entries[slot as usize].pages > 0 {
            self.touch_slot(slot);
        }
        Some((ppn, popularity))
    }

    /// Refresh `key`'s recency (an `lx` read or write of the logical page).
    pub fn touch(&mut self, key: u64) {
        if let Some(&s) = self.map.get(&key) {
            self.touch_slot(s);
        }
    }

    /// Drop a page whose block is being erased (no-op if not pooled).
    #[inline]
    pub fn erase_page(&mut self, ppn: u32) -> bool {
        if self.page_slot[ppn as usize] == NONE {
            return false;
        }
        self.counters.erased_pages += 1;
        self.unlink_page(ppn);
        true
    }

    /// Every pooled page with its entry's key (for invariant checks).
    pub fn pooled_pages(&self) -> impl Iterator<Item = (u64, u32)> + '_ {
        self.map.iter().flat_map(move |(&key, &slot)| {
            let mut p = self.entries[slot as usize].first_page;
            std::iter::from_fn(move || {
                (p != NONE).then(|| {
                    let cur = p;
                    p = self.page_next[p as usize];
                    (key, cur)
                })
            })
        })
    }

    /// Queue lengths (MQ), lowest first.
    pub fn queue_lengths(&self) -> Vec<u64> {
        (0..self.q_head.len())
            .map(|q| {
                let mut n = 0;
                let mut s = self.q_head[q];
                while s != NONE {
                    n += 1;
                    s = self.entries[s as usize].next;
                }
                n
            })
            .collect()
    }

    /// Approximate simulator bytes held by the pool.
    pub fn memory_bytes(&self) -> usize {
        self.page_slot.len() * 12
            + self.entries.capacity() * std::mem::size_of::<Entry>()
            + self.map.capacity() * 16
    }

    fn alloc(&mut self, e: Entry) -> u32 {
        match self.free_slots.pop() {
            Some(s) => {
                self.entries[s as usize] = e;
                s
            }
            None => {
                self.entries.push(e);
                (self.entries.len() - 1) as u32
            }
        }
    }

    fn link_page(&mut self, slot: u32, ppn: u32) {
        let e = &mut self.entries[slot as usize];
        let old = e.first_page;
        e.first_page = ppn;
        e.pages += 1;
        self.page_slot[ppn as usize] = slot;
        self.page_prev[ppn as usize] = NONE;
        self.page_next[ppn as usize] = old;
        if old != NONE {
            self.page_prev[old as usize] = ppn;
        }
        self.pages += 1;
    }

    /// Unpool a page; an entry left without pages leaves the pool.
    fn unlink_page(&mut self, ppn: u32) {
        let p = ppn as usize;
        let slot = self.page_slot[p];
        let (prev, next) = (self.page_prev[p], self.page_next[p]);
        if prev != NONE {
            self.page_next[prev as usize] = next;
        } else {
            self.entries[slot as usize].first_page = next;
        }
        if next != NONE {
            self.page_prev[next as usize] = prev;
        }
        self.page_slot[p] = NONE;
        self.page_next[p] = NONE;
        self.page_prev[p] = NONE;
        self.pages -= 1;
        let e = &mut self.entries[slot as usize];
        e.pages -= 1;
        if e.pages == 0 {
            let key = e.key;
            self.unqueue(slot);
            self.map.remove(&key);
            self.free_slots.push(slot);
        }
    }

    /// Evict the head of the lowest non-empty queue, releasing its pages.
    fn evict(&mut self, released: &mut Vec<u32>) {
        let Some(q) = self.q_head.iter().position(|&h| h != NONE) else {
            return;
        };
        let slot = self.q_head[q];
        self.counters.evicted_entries += 1;
        let mut ppn = self.entries[slot as usize].first_page;
        while ppn != NONE {
            let next = self.page_next[ppn as usize];
            released.push(ppn);
            self.counters.evicted_pages += 1;
            self.unlink_page(ppn);
            ppn = next;
        }
    }

    /// An access to an entry: to the tail of its queue, MQ bookkeeping, promotion.
    fn touch_slot(&mut self, slot: u32) {
        let now = self.now;
        let e = &mut self.entries[slot as usize];
        e.prev_access = e.last_access;
        e.last_access = now;
        let q = e.queue as usize;
        if self.policy == PoolPolicy::Mq {
            let e = &self.entries[slot as usize];
            if e.popularity >= self.hottest_popularity {
                self.hottest_popularity = e.popularity;
                self.hottest_interval = e.last_access - e.prev_access;
            }
            self.entries[slot as usize].expire = now + self.hottest_interval;
        }
        self.unqueue(slot);
        self.push_tail(slot, q);
        self.promote(slot);
    }

    /// MQ: one queue up if `floor(log2(popularity + 1))` exceeds the queue index.
    fn promote(&mut self, slot: u32) {
        let queues = self.q_head.len();
        let e = &self.entries[slot as usize];
        let q = e.queue as usize;
        if q + 1 < queues && degree(e.popularity) as usize > q {
            self.unqueue(slot);
            self.push_tail(slot, q + 1);
            self.counters.promotions += 1;
        }
    }

    /// MQ: demote each queue's head one queue if it has expired.
    fn demote_expired(&mut self) {
        for q in 1..self.q_head.len() {
            let head = self.q_head[q];
            if head != NONE && self.entries[head as usize].expire < self.now {
                self.unqueue(head);
                self.entries[head as usize].expire = self.now + self.hottest_interval;
                self.push_tail(head, q - 1);
                self.counters.demotions += 1;
            }
        }
    }

    fn push_tail(&mut self, slot: u32, q: usize) {
        let tail = self.q_tail[q];
        let e = &mut self.entries[slot as usize];
        e.queue = q as u8;
        e.prev = tail;
        e.next = NONE;
        if tail != NONE {
            self.entries[tail as usize].next = slot;
        } else {
            self.q_head[q] = slot;
        }
        self.q_tail[q] = slot;
    }

    fn unqueue(&mut self, slot: u32) {
        let e = &self.entries[slot as usize];
        let (q, prev, next) = (e.queue as usize, e.prev, e.next);
        if prev != NONE {
            self.entries[prev as usize].next = next;
        } else {
            self.q_head[q] = next;
        }
        if next != NONE {
            self.entries[next as usize].prev = prev;
        } else {
            self.q_tail[q] = prev;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pool(policy: PoolPolicy, cap: u64) -> DeadValuePool {
        DeadValuePool::new(policy, cap, 4, 64)
    }

    #[test]
    fn degrees() {
        assert_eq!([0, 1, 2, 3, 6, 7, 255].map(degree), [0, 1, 1, 2, 2, 3, 8]);
    }

    #[test]
    fn lru_evicts_the_least_recent_entry_with_all_its_pages() {
        let mut p = pool(PoolPolicy::Lru, 2);
        let mut out = Vec::new();
        p.insert(10, 0, 1, &mut out);
        p.insert(10, 1, 1, &mut out);
        p.insert(20, 2, 1, &mut out);
        p.insert(10, 3, 1, &mut out); // 10 is now the most recent
        p.insert(30, 4, 1, &mut out); // evicts 20
        assert_eq!(out, vec![2]);
        assert_eq!(p.entries(), 2);
        assert_eq!(p.pages(), 4);
        // Revival takes the most recently died page of the value.
        assert_eq!(p.take(10, |_| true).map(|x| x.0), Some(3));
        assert!(p.take(20, |_| true).is_none());
        assert!(p.erase_page(0));
        assert!(!p.erase_page(0));
        assert_eq!(p.take(10, |_| true).map(|x| x.0), Some(1));
        assert_eq!(p.entries(), 1);
        assert_eq!(p.pooled_pages().collect::<Vec<_>>(), vec![(30, 4)]);
    }

    #[test]
    fn infinite_never_evicts() {
        let mut p = pool(PoolPolicy::Infinite, 1);
        let mut out = Vec::new();
        for i in 0..50 {
            p.insert(i, i as u32, 1, &mut out);
        }
        assert!(out.is_empty());
        assert_eq!(p.entries(), 50);
    }

    #[test]
    fn mq_promotes_popular_values_and_evicts_from_the_lowest_queue() {
        let mut p = pool(PoolPolicy::Mq, 3);
        let mut out = Vec::new();
        // Popularity 7 → degree 3: new entries enter queue 0, then go up one per access.
        p.insert(1, 0, 7, &mut out);
        assert_eq!(p.queue_lengths(), vec![1, 0, 0, 0]);
        p.insert(1, 1, 7, &mut out);
        assert_eq!(p.queue_lengths(), vec![0, 1, 0, 0]);
        p.insert(1, 2, 7, &mut out);
        assert_eq!(p.queue_lengths(), vec![0, 0, 1, 0]);
        p.insert(2, 3, 1, &mut out);
        p.insert(3, 4, 1, &mut out);
        // Full: value 4 evicts the head of queue 0 (value 2), not the older popular one.
        p.insert(4, 5, 1, &mut out);
        assert_eq!(out, vec![3]);
        assert!(p.popularity(1).is_some());
    }

    #[test]
    fn mq_demotes_expired_heads() {
        let mut p = pool(PoolPolicy::Mq, 100);
        let mut out = Vec::new();
        p.insert(1, 0, 3, &mut out);
        p.insert(1, 2, 3, &mut out); // accessed again, degree 2 → queue 1
        assert_eq!(p.queue_lengths(), vec![0, 1, 0, 0]);
        for _ in 0..5 {
            p.tick();
        }
        // hottest interval is 0, so the entry expired at its insertion time.
        p.insert(2, 1, 1, &mut out);
        assert_eq!(p.queue_lengths(), vec![2, 0, 0, 0]);
        assert_eq!(p.counters.demotions, 1);
    }

    #[test]
    fn lx_take_filters_pages() {
        let mut p = pool(PoolPolicy::Lx, 10);
        let mut out = Vec::new();
        p.insert(7, 5, 1, &mut out);
        p.insert(7, 6, 1, &mut out);
        assert_eq!(p.take(7, |ppn| ppn == 5).map(|x| x.0), Some(5));
        assert!(p.take(7, |ppn| ppn == 5).is_none());
        p.touch(7);
        assert_eq!(p.pages(), 1);
    }
}
