//! The NVMe placement identifiers a trace's writes carry (native version 3): how many
//! writes carry one and which identifiers occur, for `trace stats` and a replay's report.
//!
//! The identifiers seen are kept as a bitmap of the 65 536 possible ones (8 KiB, made at
//! the first identifier), so counting costs the same whatever the trace's length.

use serde::Serialize;

/// What the placement identifiers of a trace's writes were.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct PlacementStats {
    /// Writes that carry a placement identifier.
    pub writes: u64,
    /// The distinct identifiers, ascending.
    pub ids: Vec<u16>,
}

/// Counts placement identifiers as records go by.
#[derive(Clone, Debug, Default)]
pub struct PlacementCounter {
    writes: u64,
    seen: Vec<u64>,
}

impl PlacementCounter {
    pub fn new() -> PlacementCounter {
        PlacementCounter::default()
    }

    /// A write's identifier (`None`: the write carries none).
    #[inline]
    pub fn record(&mut self, placement: Option<u16>) {
        let Some(id) = placement else { return };
        if self.seen.is_empty() {
            self.seen = vec![0; (1 << 16) / 64];
        }
        self.writes += 1;
        self.seen[usize::from(id) / 64] |= 1 << (id % 64);
    }

    /// The counts so far; `None` when no write carried an identifier.
    pub fn stats(&self) -> Option<PlacementStats> {
        if self.writes == 0 {
            return None;
        }
        let ids = self
            .seen
            .iter()
            .enumerate()
            .flat_map(|(i, &word)| {
                (0..64u16)
                    .filter(move |b| word >> b & 1 == 1)
                    .map(move |b| i as u16 * 64 + b)
            })
            .collect();
        Some(PlacementStats {
            writes: self.writes,
            ids,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_writes_and_distinct_ids() {
        let mut c = PlacementCounter::new();
        assert_eq!(c.stats(), None);
        for p in [None, Some(3), Some(0), Some(3), Some(u16::MAX), Some(64)] {
            c.record(p);
        }
        assert_eq!(
            c.stats(),
            Some(PlacementStats {
                writes: 5,
                ids: vec![0, 3, 64, u16::MAX],
            })
        );
    }
}
