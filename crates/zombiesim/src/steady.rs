//! Whether a measured phase reached steady state: the write amplification (and, in a
//! timed run, the mean write latency) of its last quarter against the quarter before.
//!
//! ```text
//!   measured phase ─────────────────────────────────────────────────►  host page writes
//!   |      Q1      |      Q2      |      Q3      |      Q4      |
//!                                  └── before ──┘└──── last ───┘
//!   reached  ⇔  |last − before| ≤ tolerance × before, for every metric measured
//! ```
//!
//! A run that ends in a transient (a device preconditioned with a pattern unlike the
//! workload's, GC not yet settled) shows it here: the quarters still move. Each metric
//! is followed by a [`Checkpoints`] log of a cumulative count against a cumulative
//! amount (host page writes and flash programs; writes completed and their summed
//! latency) whose spacing doubles as the phase grows, so it keeps between
//! [`MAX_POINTS`]/2 and [`MAX_POINTS`] points whatever the length, and the quarters'
//! boundaries are found to within 1/64 of the phase.

use serde::Serialize;

/// Points a [`Checkpoints`] log keeps at most (it halves them when full).
pub const MAX_POINTS: usize = 256;

/// The first spacing of a log, in its count's units (doubled as it fills).
const FIRST_STEP: u64 = 16;

/// A cumulative amount sampled against a cumulative count, at a spacing that doubles
/// whenever [`MAX_POINTS`] points are held.
#[derive(Clone, Debug)]
pub struct Checkpoints {
    step: u64,
    next: u64,
    /// `(count, amount)`, the count increasing; `(0, 0)` first.
    points: Vec<(u64, u64)>,
}

impl Default for Checkpoints {
    fn default() -> Self {
        Checkpoints {
            step: FIRST_STEP,
            next: FIRST_STEP,
            points: vec![(0, 0)],
        }
    }
}

impl Checkpoints {
    /// The cumulative amount (asked for only when a point is due) once `count` units
    /// are done (counts never decrease).
    #[inline]
    pub fn observe(&mut self, count: u64, amount: impl FnOnce() -> u64) {
        if count < self.next {
            return;
        }
        self.points.push((count, amount()));
        if self.points.len() >= MAX_POINTS {
            // Keep the origin and every second point after it.
            let mut i = 0;
            self.points.retain(|_| {
                i += 1;
                i % 2 == 1
            });
            self.step *= 2;
        }
        self.next = count + self.step;
    }

    /// The points held, `(count, amount)`, from `(0, 0)`.
    pub fn points(&self) -> &[(u64, u64)] {
        &self.points
    }

    /// The amount per unit of count over the quarter before the last and over the last
    /// one, the phase ending at `(count, amount)`; `None` when either quarter holds no
    /// count (fewer than four points in the phase).
    pub fn quarters(&self, count: u64, amount: u64) -> Option<(f64, f64)> {
        let at = |target: u64| -> (u64, u64) {
            let i = self.points.partition_point(|&(c, _)| c <= target);
            self.points[i.saturating_sub(1)]
        };
        let half = at(count / 2);
        let three = at(count - count / 4);
        let rate = |a: (u64, u64), b: (u64, u64)| {
            (b.0 > a.0).then(|| (b.1 - a.1) as f64 / (b.0 - a.0) as f64)
        };
        Some((rate(half, three)?, rate(three, (count, amount))?))
    }
}

/// One metric of the last quarter against the quarter before.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct QuarterChange {
    pub previous_quarter: f64,
    pub last_quarter: f64,
    /// `(last − previous) / previous`.
    pub change: f64,
    /// The largest `|change|` that counts as steady.
    pub tolerance: f64,
    pub steady: bool,
}

impl QuarterChange {
    /// `None` when the quarters say nothing (one is empty, or the earlier one is 0).
    pub fn of(quarters: Option<(f64, f64)>, tolerance: f64) -> Option<Self> {
        let (previous, last) = quarters?;
        if previous.is_nan() || previous <= 0.0 {
            return None;
        }
        let change = (last - previous) / previous;
        Some(QuarterChange {
            previous_quarter: previous,
            last_quarter: last,
            change,
            tolerance,
            steady: change.abs() <= tolerance,
        })
    }
}

/// Whether the measured phase reached steady state, and the evidence.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct SteadyState {
    /// `true` when every metric measured held still; `false` when one moved; `null` when
    /// none could be measured (a phase too short, or with no host writes).
    pub reached: Option<bool>,
    /// Write amplification (flash programs per host page write) by quarter of the
    /// phase's host page writes.
    pub waf: Option<QuarterChange>,
    /// Mean write latency, µs, by quarter of the phase's write requests (timed runs).
    pub write_latency_us: Option<QuarterChange>,
    /// What a user can set to age the device further when it was not reached.
    pub precondition_keys: Vec<&'static str>,
}

/// The keys that age a device before the measured phase.
pub const PRECONDITION_KEYS: [&str; 2] =
    ["precondition.random_drive_writes", "precondition.pattern"];

impl SteadyState {
    pub fn of(waf: Option<QuarterChange>, write_latency_us: Option<QuarterChange>) -> Self {
        let measured = [&waf, &write_latency_us];
        let reached = if measured.iter().all(|m| m.is_none()) {
            None
        } else {
            Some(measured.iter().flat_map(|m| m.as_ref()).all(|m| m.steady))
        };
        SteadyState {
            reached,
            waf,
            write_latency_us,
            precondition_keys: if reached == Some(false) {
                PRECONDITION_KEYS.to_vec()
            } else {
                Vec::new()
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_quarters_of_a_constant_rate_are_equal() {
        let mut c = Checkpoints::default();
        for n in 1..=100_000u64 {
            c.observe(n, || 3 * n);
        }
        assert!(c.points.len() <= MAX_POINTS);
        let (a, b) = c.quarters(100_000, 300_000).unwrap();
        assert!(
            (a - 3.0).abs() < 1e-12 && (b - 3.0).abs() < 1e-12,
            "{a} {b}"
        );
    }

    #[test]
    fn a_rate_that_falls_in_the_last_quarter_is_seen() {
        // 2 per unit up to 75,000, then 1 per unit: the quarters are 2 and 1.
        let mut c = Checkpoints::default();
        let amount = |n: u64| {
            if n <= 75_000 {
                2 * n
            } else {
                150_000 + (n - 75_000)
            }
        };
        for n in 1..=100_000u64 {
            c.observe(n, || amount(n));
        }
        let (a, b) = c.quarters(100_000, amount(100_000)).unwrap();
        assert!((a - 2.0).abs() < 0.05 && (b - 1.0).abs() < 0.05, "{a} {b}");
        let q = QuarterChange::of(Some((a, b)), 0.02).unwrap();
        assert!(!q.steady && q.change < -0.45);
        let s = SteadyState::of(Some(q), None);
        assert_eq!(s.reached, Some(false));
        assert!(s.precondition_keys.contains(&"precondition.pattern"));
    }

    #[test]
    fn a_phase_too_short_to_split_says_nothing() {
        let mut c = Checkpoints::default();
        for n in 1..=10u64 {
            c.observe(n, || n);
        }
        assert_eq!(c.quarters(10, 10), None);
        let s = SteadyState::of(None, None);
        assert_eq!(s.reached, None);
        assert!(s.precondition_keys.is_empty());
    }

    #[test]
    fn every_measured_metric_must_hold_still() {
        let still = QuarterChange::of(Some((2.0, 2.01)), 0.02);
        let moving = QuarterChange::of(Some((100.0, 150.0)), 0.1);
        assert_eq!(SteadyState::of(still.clone(), None).reached, Some(true));
        assert_eq!(SteadyState::of(still, moving).reached, Some(false));
    }
}
