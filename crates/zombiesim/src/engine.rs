//! A deterministic event queue: a min-heap of `(time, sequence)`.
//!
//! Events at the same time come out in the order they were scheduled (FIFO ties),
//! so a run never depends on heap internals. The host interface uses it to hold
//! outstanding requests by completion time.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// Events of type `T`, popped in (time, scheduling order).
#[derive(Debug)]
pub struct EventQueue<T> {
    heap: BinaryHeap<Reverse<(u64, u64, Slot<T>)>>,
    seq: u64,
}

/// Wrapper that keeps the payload out of the ordering.
#[derive(Debug)]
struct Slot<T>(T);

impl<T> PartialEq for Slot<T> {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}
impl<T> Eq for Slot<T> {}
impl<T> PartialOrd for Slot<T> {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}
impl<T> Ord for Slot<T> {
    fn cmp(&self, _: &Self) -> std::cmp::Ordering {
        std::cmp::Ordering::Equal
    }
}

impl<T> Default for EventQueue<T> {
    fn default() -> Self {
        EventQueue {
            heap: BinaryHeap::new(),
            seq: 0,
        }
    }
}

impl<T> EventQueue<T> {
    pub fn new() -> Self {
        Self::default()
    }

    /// Schedule `item` at `time`.
    pub fn push(&mut self, time: u64, item: T) {
        self.heap.push(Reverse((time, self.seq, Slot(item))));
        self.seq += 1;
    }

    /// The earliest event's time.
    pub fn peek_time(&self) -> Option<u64> {
        self.heap.peek().map(|Reverse((t, _, _))| *t)
    }

    /// Remove and return the earliest event.
    pub fn pop(&mut self) -> Option<(u64, T)> {
        self.heap.pop().map(|Reverse((t, _, Slot(item)))| (t, item))
    }

    pub fn len(&self) -> usize {
        self.heap.len()
    }

    pub fn is_empty(&self) -> bool {
        self.heap.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn earliest_first_and_fifo_ties() {
        let mut q = EventQueue::new();
        q.push(5, "c");
        q.push(1, "a");
        q.push(5, "d");
        q.push(3, "b");
        q.push(5, "e");
        let order: Vec<_> = std::iter::from_fn(|| q.pop()).collect();
        assert_eq!(
            order,
            vec![(1, "a"), (3, "b"), (5, "c"), (5, "d"), (5, "e")]
        );
    }
}
