//! [`PageRuns`]: the pages a trace touched and how often each was written, kept as
//! disjoint runs of pages with one write count per run.
//!
//! ```text
//!  page:   0   1   2   3   4   5   6   7   8   9
//!  runs:  [0 ........ 3)=2 [3 .. 5)=1      [8 . 10)=0
//!          written twice    written once    read or trimmed only
//! ```
//!
//! A request touching `n` pages splits at most the two runs at its ends and adds at most
//! one run per gap it covers, then merges neighbours with equal counts. Memory therefore
//! grows with the number of distinct runs — at most about two per record, and far fewer
//! for sequential traces — never with the number of pages one record spans, so a record
//! claiming 10^18 bytes costs what a 4 KiB one costs.

use std::collections::BTreeMap;

/// Disjoint runs `[start, end)` of touched pages, each with the writes every page in it
/// received (0: read or trimmed only).
#[derive(Clone, Debug, Default)]
pub struct PageRuns {
    /// start → (end, writes)
    runs: BTreeMap<u64, (u64, u32)>,
    /// Reused list of the run starts one request covers.
    scratch: Vec<u64>,
}

impl PageRuns {
    pub fn new() -> Self {
        Self::default()
    }

    /// Split the run containing `at` (if `at` is strictly inside one) into two.
    fn split(&mut self, at: u64) {
        let Some((&start, &(end, writes))) = self.runs.range(..at).next_back() else {
            return;
        };
        if start < at && at < end {
            self.runs.insert(start, (at, writes));
            self.runs.insert(at, (end, writes));
        }
    }

    /// Record a request over pages `[first, first + count)`: each page is touched, and
    /// written once more when `write`.
    pub fn touch(&mut self, first: u64, count: u64, write: bool) {
        if count == 0 {
            return;
        }
        let end = first.saturating_add(count);
        let inc = u32::from(write);
        if self.touch_alone(first, end, inc) {
            return;
        }
        self.split(first);
        self.split(end);
        self.scratch.clear();
        self.scratch
            .extend(self.runs.range(first..end).map(|(&s, _)| s));
        let mut pos = first;
        for i in 0..self.scratch.len() {
            let start = self.scratch[i];
            if pos < start {
                self.runs.insert(pos, (start, inc));
            }
            let run = self.runs.get_mut(&start).expect("listed above");
            run.1 = run.1.saturating_add(inc);
            pos = run.0;
        }
        if pos < end {
            self.runs.insert(pos, (end, inc));
        }
        self.merge(first, end);
    }

    /// The two common cases, in a few lookups: pages `[first, end)` lie in a gap
    /// between runs (a page touched for the first time, the next of a sequential
    /// stream), or are exactly one run (a page written again). False, with nothing
    /// changed, for anything else.
    fn touch_alone(&mut self, first: u64, end: u64, inc: u32) -> bool {
        let before = self.runs.range(..=first).next_back().map(|(&s, &r)| (s, r));
        if let Some((start, (run_end, writes))) = before {
            if start == first && run_end == end {
                let now = writes.saturating_add(inc);
                if now != writes {
                    self.join_neighbours(start, run_end, now);
                }
                return true;
            }
            if run_end > first {
                return false;
            }
        }
        let after = self.runs.range(first..).next().map(|(&s, &r)| (s, r));
        if after.is_some_and(|(start, _)| start < end) {
            return false;
        }
        // A gap: joined to the run ending at `first` and the one starting at `end` when
        // their counts equal `inc`.
        let left = before.filter(|&(_, (e, w))| e == first && w == inc);
        let right = after.filter(|&(s, (_, w))| s == end && w == inc);
        let new_end = match right {
            Some((s, (e, _))) => {
                self.runs.remove(&s);
                e
            }
            None => end,
        };
        match left {
            Some((s, _)) => self.runs.insert(s, (new_end, inc)),
            None => self.runs.insert(first, (new_end, inc)),
        };
        true
    }

    /// Join the run `[start, end)` (count `writes`) to the runs beside it with the same
    /// count.
    fn join_neighbours(&mut self, start: u64, end: u64, writes: u32) {
        let mut new_end = end;
        if let Some(&(e, w)) = self.runs.get(&end) {
            if w == writes {
                self.runs.remove(&end);
                new_end = e;
            }
        }
        let left = self.runs.range(..start).next_back().map(|(&s, &r)| (s, r));
        match left {
            Some((s, (e, w))) if e == start && w == writes => {
                self.runs.remove(&start);
                self.runs.insert(s, (new_end, writes));
            }
            _ => {
                self.runs.insert(start, (new_end, writes));
            }
        }
    }

    /// Merge neighbouring runs with equal counts from the run before `first` up to the
    /// run starting at `end`.
    fn merge(&mut self, first: u64, end: u64) {
        let from = self
            .runs
            .range(..first)
            .next_back()
            .map_or(first, |(&s, _)| s);
        self.scratch.clear();
        self.scratch
            .extend(self.runs.range(from..=end).map(|(&s, _)| s));
        let mut keep: Option<u64> = None;
        for i in 0..self.scratch.len() {
            let start = self.scratch[i];
            let (run_end, writes) = self.runs[&start];
            match keep {
                Some(k) if self.runs[&k].0 == start && self.runs[&k].1 == writes => {
                    self.runs.remove(&start);
                    self.runs.get_mut(&k).expect("kept").0 = run_end;
                }
                _ => keep = Some(start),
            }
        }
    }

    /// Distinct pages touched.
    pub fn pages(&self) -> u64 {
        self.runs.iter().map(|(s, (e, _))| e - s).sum()
    }

    /// `(writes, pages)` of every run written at least once.
    pub fn written(&self) -> Vec<(u32, u64)> {
        self.runs
            .iter()
            .filter(|(_, (_, w))| *w > 0)
            .map(|(s, (e, w))| (*w, e - s))
            .collect()
    }

    /// Runs held (memory is proportional to this).
    #[cfg(test)]
    pub fn runs(&self) -> usize {
        self.runs.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::collections::HashMap;

    #[test]
    fn sequential_writes_stay_one_run() {
        let mut r = PageRuns::new();
        for p in 0..1000 {
            r.touch(p, 1, true);
        }
        assert_eq!(r.runs(), 1);
        assert_eq!(r.written(), vec![(1, 1000)]);
    }

    #[test]
    fn a_huge_request_is_one_run() {
        let mut r = PageRuns::new();
        r.touch(10, u64::MAX / 4096, true);
        r.touch(12, 3, true);
        assert_eq!(r.runs(), 3);
        assert_eq!(r.pages(), u64::MAX / 4096);
        assert_eq!(r.written()[1], (2, 3));
    }

    proptest! {
        /// Against one counter per page.
        #[test]
        fn runs_match_a_page_map(reqs in prop::collection::vec((0u64..64, 0u64..12, any::<bool>()), 0..60)) {
            same_as_a_page_map(&reqs)?;
        }

        /// The same, with short requests over few pages: most land in a gap or on
        /// exactly one run (the cases `touch_alone` takes).
        #[test]
        fn short_requests_match_a_page_map(reqs in prop::collection::vec((0u64..24, 1u64..3, any::<bool>()), 0..200)) {
            same_as_a_page_map(&reqs)?;
        }
    }

    /// `reqs` through [`PageRuns`] against one write counter per page.
    fn same_as_a_page_map(reqs: &[(u64, u64, bool)]) -> Result<(), TestCaseError> {
        let mut r = PageRuns::new();
        let mut pages: HashMap<u64, u32> = HashMap::new();
        for &(first, count, write) in reqs {
            r.touch(first, count, write);
            for p in first..first + count {
                *pages.entry(p).or_insert(0) += u32::from(write);
            }
        }
        prop_assert_eq!(r.pages(), pages.len() as u64);
        let mut expect: Vec<u32> = pages.values().copied().filter(|&w| w > 0).collect();
        expect.sort_unstable();
        let mut got: Vec<u32> = r
            .written()
            .iter()
            .flat_map(|&(w, n)| std::iter::repeat_n(w, n as usize))
            .collect();
        got.sort_unstable();
        prop_assert_eq!(got, expect);
        // Neighbouring runs never share a count (they would have merged).
        let v: Vec<_> = r.runs.iter().map(|(&s, &(e, w))| (s, e, w)).collect();
        for pair in v.windows(2) {
            prop_assert!(
                pair[0].1 < pair[1].0 || pair[0].2 != pair[1].2,
                "{:?}",
                pair
            );
        }
        Ok(())
    }
}
