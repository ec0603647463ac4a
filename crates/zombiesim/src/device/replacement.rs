//! Replacement policies of the device write buffer, behind one trait ([`Replacement`],
//! in `eviction`): the slot-granularity ones (LRU, CFLRU) here, and [`build`], which
//! makes the policy a configuration names.
//!
//! ```text
//!   slots of the buffer:  0 1 2 3 ... capacity-1      (each holds one logical page)
//!   recency list:  MRU ◄──► ... ◄──► LRU             (intrusive: prev/next per slot)
//!
//!   lru    evict the LRU slot
//!   cflru  look at the `window` slots nearest the LRU end; evict the clean one
//!          nearest the end if there is one (it costs no program), else the LRU slot
//!   fab, bplru, 3-region   whole logical blocks (`block_policies`)
//! ```

use super::block_policies::{Bplru, Fab, ThreeRegion};
use super::eviction::{Replacement, SlotView};
use crate::config::BufferPolicy;

/// Build the policy a configuration names, for `capacity` slots over logical blocks
/// of `pages_per_block` pages.
pub fn build(
    policy: BufferPolicy,
    capacity: u32,
    cflru_window: f64,
    pages_per_block: u32,
) -> Box<dyn Replacement> {
    let lru = |clean_window| {
        Box::new(Lru {
            order: Recency::new(capacity),
            clean_window,
        }) as Box<dyn Replacement>
    };
    match policy {
        BufferPolicy::Lru => lru(None),
        BufferPolicy::Cflru => lru(Some(
            ((capacity as f64 * cflru_window).ceil() as u32).max(1),
        )),
        BufferPolicy::Fab => Box::new(Fab::new(capacity, pages_per_block)),
        BufferPolicy::Bplru => Box::new(Bplru::new(capacity, pages_per_block)),
        BufferPolicy::ThreeRegion => Box::new(ThreeRegion::new(capacity, pages_per_block)),
    }
}

const END: u32 = u32::MAX;

/// A doubly linked list of slots, most recently used at the head.
#[derive(Clone)]
struct Recency {
    prev: Vec<u32>,
    next: Vec<u32>,
    head: u32,
    tail: u32,
}

impl Recency {
    fn new(capacity: u32) -> Self {
        Recency {
            prev: vec![END; capacity as usize],
            next: vec![END; capacity as usize],
            head: END,
            tail: END,
        }
    }

    fn push_front(&mut self, slot: u32) {
        let s = slot as usize;
        self.prev[s] = END;
        self.next[s] = self.head;
        if self.head != END {
            self.prev[self.head as usize] = slot;
        } else {
            self.tail = slot;
        }
        self.head = slot;
    }

    fn unlink(&mut self, slot: u32) {
        let s = slot as usize;
        let (p, n) = (self.prev[s], self.next[s]);
        if p != END {
            self.next[p as usize] = n;
        } else {
            self.head = n;
        }
        if n != END {
            self.prev[n as usize] = p;
        } else {
            self.tail = p;
        }
        self.prev[s] = END;
        self.next[s] = END;
    }

    fn move_to_front(&mut self, slot: u32) {
        if self.head != slot {
            self.unlink(slot);
            self.push_front(slot);
        }
    }

    /// Slots from the LRU end towards the MRU end.
    fn lru_first(&self) -> impl Iterator<Item = u32> + '_ {
        std::iter::successors((self.tail != END).then_some(self.tail), |&s| {
            let p = self.prev[s as usize];
            (p != END).then_some(p)
        })
    }
}

/// Least recently used; with a clean window, clean-first LRU (Park et al.): a clean
/// page among the `clean_window` least recently used goes before the LRU page.
#[derive(Clone)]
struct Lru {
    order: Recency,
    clean_window: Option<u32>,
}

impl Replacement for Lru {
    fn insert(&mut self, slot: u32, _lpn: u64) {
        self.order.push_front(slot);
    }
    fn next_victim(&self) -> Option<u32> {
        (self.order.tail != END).then_some(self.order.tail)
    }
    fn touch(&mut self, slot: u32, _lpn: u64, _write: bool) {
        self.order.move_to_front(slot);
    }
    fn remove(&mut self, slot: u32, _lpn: u64) {
        self.order.unlink(slot);
    }
    fn pads(&self) -> bool {
        false
    }
    fn update_probability(&self, _slot: u32) -> f64 {
        0.0
    }
    fn victims(&mut self, view: &SlotView, out: &mut Vec<u32>) {
        let clean = self.clean_window.and_then(|w| {
            self.order
                .lru_first()
                .take(w as usize)
                .find(|&s| !view.dirty[s as usize])
        });
        match clean {
            Some(s) => out.push(s),
            None if self.order.tail != END => out.push(self.order.tail),
            None => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn victim(p: &mut dyn Replacement, lpn: &[u64], dirty: &[bool]) -> u32 {
        let mut out = Vec::new();
        p.victims(&SlotView { lpn, dirty }, &mut out);
        assert_eq!(out.len(), 1);
        out[0]
    }

    #[test]
    fn lru_evicts_the_least_recently_used() {
        let mut p = build(BufferPolicy::Lru, 3, 0.5, 4);
        let (lpn, dirty) = ([10, 11, 12], [true; 3]);
        for s in 0..3 {
            p.insert(s, lpn[s as usize]);
        }
        assert_eq!(victim(p.as_mut(), &lpn, &dirty), 0);
        p.touch(0, 10, false);
        assert_eq!(victim(p.as_mut(), &lpn, &dirty), 1);
        p.remove(1, 11);
        assert_eq!(victim(p.as_mut(), &lpn, &dirty), 2);
    }

    #[test]
    fn cflru_prefers_a_clean_page_inside_its_window() {
        // Window of 2 slots at the LRU end.
        let mut p = build(BufferPolicy::Cflru, 4, 0.5, 4);
        for s in 0..4 {
            p.insert(s, s as u64);
        }
        let lpn = [0, 1, 2, 3];
        // LRU order: 0, 1, 2, 3. Slot 1 clean: inside the window.
        assert_eq!(victim(p.as_mut(), &lpn, &[true, false, true, true]), 1);
        // Only slot 3 clean: outside the window, so the LRU (dirty) slot goes.
        assert_eq!(victim(p.as_mut(), &lpn, &[true, true, true, false]), 0);
    }
}
