//! Value analyses of a hashed trace (001 §II, Figs. 1–6), independent of any FTL.
//!
//! One pass over the trace's page writes (and trims) in logical-page terms:
//!
//! - a value is *created* when first written, *dies* when no logical page holds it any
//!   more (every copy overwritten or trimmed), and is *reborn* when written again after
//!   its death; each overwrite or trim of a page holding it is an *invalidation*;
//! - per unique value: writes, invalidations, rebirths; the time (in page writes) from
//!   creation (or rebirth) to death and from death to rebirth, reported by popularity
//!   degree `floor(log2(writes + 1))` of the value over the whole trace;
//! - the write reduction a dead-value pool would give with no GC erasing anything: a
//!   write is avoided when a dead copy of its value is pooled. Pools: infinite, and LRU
//!   pools of the given entry counts (one entry per value with dead copies; evicting
//!   an entry forgets all its copies). Misses are broken down by popularity degree
//!   (Fig. 6).
//!
//! Memory: a few words per unique value and per logical page touched, plus 24 bytes per
//! page event (the events are replayed once the values' final popularity is known). A
//! trim of more than [`PAGED_TRIM`] pages is kept as one event and, when replayed, visits
//! only the pages that hold a value, so no record can claim memory or time by its size.

use super::pool::degree;
use super::table::FpMap;
use crate::error::Result;
use crate::flash::NONE;
use crate::trace::{ReadOptions, TraceFormat, TraceOp, TraceReader};
use crate::workload::{Op, Workload};
use serde::Serialize;
use std::path::Path;

/// Degrees reported (0 ..= 20: up to a million writes of one value).
const DEGREES: usize = 21;

/// Trims up to this many pages become one event per page; longer ones one event.
const PAGED_TRIM: u64 = 1 << 16;

/// One event of the first pass.
#[derive(Clone, Copy, Debug)]
enum Event {
    /// A page written with a value, or trimmed (`None`).
    Page(u64, Option<u64>),
    /// A trim of `count` pages from `first` (longer than [`PAGED_TRIM`]).
    Trim { first: u64, count: u64 },
}

/// Points on each CDF.
const CDF_POINTS: usize = 100;

#[derive(Clone, Debug, Default)]
struct Value {
    writes: u32,
    invalidations: u32,
    rebirths: u32,
    live: u32,
    /// Time of creation or last rebirth (while live), of death (while dead).
    since: u64,
    created_to_death: (u64, u32),
    death_to_rebirth: (u64, u32),
}

/// An LRU pool of values with dead copies (counts only).
#[derive(Clone, Debug)]
struct LruCounts {
    capacity: usize,
    map: FpMap<u32>,
    key: Vec<u64>,
    dead: Vec<u32>,
    prev: Vec<u32>,
    next: Vec<u32>,
    free: Vec<u32>,
    head: u32,
    tail: u32,
    hits: [u64; DEGREES],
    misses: [u64; DEGREES],
}

impl LruCounts {
    fn new(capacity: usize) -> Self {
        LruCounts {
            capacity,
            map: FpMap::default(),
            key: Vec::new(),
            dead: Vec::new(),
            prev: Vec::new(),
            next: Vec::new(),
            free: Vec::new(),
            head: NONE,
            tail: NONE,
            hits: [0; DEGREES],
            misses: [0; DEGREES],
        }
    }

    fn unlink(&mut self, s: u32) {
        let (p, n) = (self.prev[s as usize], self.next[s as usize]);
        if p != NONE {
            self.next[p as usize] = n;
        } else {
            self.head = n;
        }
        if n != NONE {
            self.prev[n as usize] = p;
        } else {
            self.tail = p;
        }
    }

    fn push(&mut self, s: u32) {
        self.prev[s as usize] = self.tail;
        self.next[s as usize] = NONE;
        if self.tail != NONE {
            self.next[self.tail as usize] = s;
        } else {
            self.head = s;
        }
        self.tail = s;
    }

    fn remove(&mut self, s: u32) {
        self.unlink(s);
        self.map.remove(&self.key[s as usize]);
        self.free.push(s);
    }

    /// A copy of `v` died.
    fn insert(&mut self, v: u64) {
        if let Some(&s) = self.map.get(&v) {
            self.dead[s as usize] += 1;
            self.unlink(s);
            self.push(s);
            return;
        }
        if self.map.len() >= self.capacity && self.head != NONE {
            self.remove(self.head);
        }
        let s = match self.free.pop() {
            Some(s) => {
                self.key[s as usize] = v;
                self.dead[s as usize] = 1;
                s
            }
            None => {
                self.key.push(v);
                self.dead.push(1);
                self.prev.push(NONE);
                self.next.push(NONE);
                (self.key.len() - 1) as u32
            }
        };
        self.map.insert(v, s);
        self.push(s);
    }

    /// A write of `v` (of popularity degree `d`): revive a dead copy if pooled.
    fn write(&mut self, v: u64, d: usize) -> bool {
        let Some(&s) = self.map.get(&v) else {
            self.misses[d] += 1;
            return false;
        };
        self.hits[d] += 1;
        self.dead[s as usize] -= 1;
        if self.dead[s as usize] == 0 {
            self.remove(s);
        } else {
            self.unlink(s);
            self.push(s);
        }
        true
    }
}

/// One pool's result.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct PoolResult {
    /// Entries (`null` = infinite).
    pub entries: Option<u64>,
    pub writes: u64,
    pub avoided: u64,
    /// `avoided / writes`.
    pub reduction: f64,
    /// Lookups by popularity degree of the value: `[degree, hits, misses]`.
    pub by_degree: Vec<[u64; 3]>,
}

/// Statistics of one popularity degree.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct DegreeRow {
    pub degree: u32,
    pub values: u64,
    pub writes: u64,
    pub invalidations: u64,
    pub rebirths: u64,
    /// Mean page writes from creation (or rebirth) to death.
    pub mean_create_to_death: Option<f64>,
    /// Mean page writes from death to rebirth.
    pub mean_death_to_rebirth: Option<f64>,
}

/// The analysis of one trace.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct ValueAnalysis {
    pub path: String,
    pub format: String,
    pub records: u64,
    pub write_pages: u64,
    pub trim_pages: u64,
    pub unique_values: u64,
    /// Values with a live copy at the end, as a fraction of unique values (Fig. 2).
    pub live_fraction: f64,
    pub invalidations: u64,
    pub rebirths: u64,
    /// Read records (a workload's reads; a trace's read requests).
    pub reads: u64,
    /// Page writes whose value was written before (`1 − unique_values / write_pages`).
    pub rewrite_fraction: f64,
    /// Page writes whose value another logical page held live at the time: what
    /// deduplication can catch, as a fraction of page writes.
    pub live_duplicate_fraction: f64,
    /// Page writes that were rebirths (the value was dead: no page held it), as a
    /// fraction of page writes: what only a dead-value pool can catch.
    pub rebirth_fraction: f64,
    /// Mean page writes from death to rebirth, over all rebirths.
    pub mean_death_to_rebirth: Option<f64>,
    /// Share of page writes made by the most written 20% of values (001 §II: ~80%).
    pub top20_write_share: f64,
    /// `[fraction of values, fraction of writes | invalidations | rebirths]`, values
    /// sorted by writes, most written first (Fig. 3 a–c).
    pub cdf_writes: Vec<[f64; 2]>,
    pub cdf_invalidations: Vec<[f64; 2]>,
    pub cdf_rebirths: Vec<[f64; 2]>,
    /// `[k, fraction of values invalidated at most k times]` (Fig. 2).
    pub invalidation_count_cdf: Vec<[f64; 2]>,
    pub by_degree: Vec<DegreeRow>,
    /// Infinite pool first, then the LRU pools (Figs. 1, 5, 6).
    pub pools: Vec<PoolResult>,
}

/// Analyse the writes of a hashed trace; `pool_sizes` are LRU pool capacities in
/// entries; `limit` stops after that many records.
pub fn analyze_values(
    path: &Path,
    format: TraceFormat,
    options: &ReadOptions,
    pool_sizes: &[u64],
    limit: Option<u64>,
) -> Result<ValueAnalysis> {
    let mut reader = TraceReader::open(path, format, options)?;
    let mut c = Collector::default();
    // First pass in memory: the page-level events (needed twice: popularity is the
    // value's final write count).
    while let Some(rec) = reader.next().transpose()? {
        if limit.is_some_and(|n| c.records >= n) {
            break;
        }
        c.records += 1;
        let first = rec.offset / 4096;
        match rec.op {
            TraceOp::Write => {
                let vals = reader.values();
                let (_, n) = rec.pages(4096);
                for (k, &v) in (0..n).zip(vals) {
                    c.write(first + k, v);
                }
            }
            TraceOp::Trim => c.trim(first, rec.pages(4096).1),
            TraceOp::Read => c.reads += 1,
            _ => {}
        }
    }
    Ok(c.replay(&path.display().to_string(), &format.to_string(), pool_sizes))
}

/// Analyse the writes of a synthetic workload (`values:...`) on `logical_pages` pages of
/// `page_size` bytes, as the simulator would issue them with `seed`: the same analyses
/// as for a hashed trace, so a stand-in can be set beside the trace it stands in for.
pub fn analyze_workload(
    spec: &str,
    logical_pages: u64,
    page_size: u64,
    seed: u64,
    pool_sizes: &[u64],
    limit: Option<u64>,
) -> Result<ValueAnalysis> {
    let mut workload =
        crate::workload::WorkloadSpec::parse(spec)?.build(logical_pages, page_size, seed)?;
    let mut c = Collector::default();
    while let Some(r) = workload.next_request()? {
        if limit.is_some_and(|n| c.records >= n) {
            break;
        }
        c.records += 1;
        match r.op {
            Op::Write => {
                for k in 0..r.pages as u64 {
                    // Writes without a fingerprint are new content.
                    let v = r.value.unwrap_or(u64::MAX - c.writes);
                    c.write(r.lpn + k, v);
                }
            }
            Op::Trim => c.trim(r.lpn, r.pages as u64),
            Op::Read => c.reads += 1,
            _ => {}
        }
    }
    Ok(c.replay(spec, "workload", pool_sizes))
}

/// The first pass: page events and per-value write counts.
#[derive(Default)]
struct Collector {
    values: FpMap<Value>,
    events: Vec<Event>,
    records: u64,
    writes: u64,
    trims: u64,
    reads: u64,
}

impl Collector {
    fn write(&mut self, page: u64, v: u64) {
        self.events.push(Event::Page(page, Some(v)));
        self.values.entry(v).or_default().writes += 1;
        self.writes += 1;
    }

    fn trim(&mut self, first: u64, n: u64) {
        self.trims += n;
        if n > PAGED_TRIM {
            self.events.push(Event::Trim { first, count: n });
        } else {
            self.events
                .extend((0..n).map(|k| Event::Page(first + k, None)));
        }
    }

    /// The second pass: replay the events knowing every value's final popularity.
    fn replay(self, path: &str, format: &str, pool_sizes: &[u64]) -> ValueAnalysis {
        let Collector {
            mut values,
            events,
            records,
            writes,
            trims,
            reads,
        } = self;
        let mut pages: FpMap<u64> = FpMap::default();
        let deg = |w: u32| (degree(w) as usize).min(DEGREES - 1);
        let mut infinite: FpMap<u32> = FpMap::default();
        let mut inf_hits = [0u64; DEGREES];
        let mut inf_misses = [0u64; DEGREES];
        let mut lrus: Vec<LruCounts> = pool_sizes
            .iter()
            .map(|&n| LruCounts::new(n as usize))
            .collect();
        let mut live_dups = 0u64;
        let mut now = 0u64;
        let mut batch: Vec<(u64, Option<u64>)> = Vec::new();
        for event in &events {
            batch.clear();
            match *event {
                Event::Page(page, value) => batch.push((page, value)),
                Event::Trim { first, count } => {
                    let end = first.saturating_add(count);
                    let held = pages.keys().filter(|&&p| p >= first && p < end);
                    batch.extend(held.map(|&p| (p, None)));
                    batch.sort_unstable_by_key(|&(p, _)| p);
                }
            }
            for &(page, value) in &batch {
                let now = {
                    now += 1;
                    now - 1
                };
                // The page's old value dies first (as in the FTL, a rewrite of the same
                // value can then revive the copy it just killed).
                let old = match value {
                    Some(v) => pages.insert(page, v),
                    None => pages.remove(&page),
                };
                if let Some(o) = old {
                    let e = values.get_mut(&o).expect("written before");
                    e.invalidations += 1;
                    e.live -= 1;
                    if e.live == 0 {
                        e.created_to_death.0 += now - e.since;
                        e.created_to_death.1 += 1;
                        e.since = now;
                    }
                    *infinite.entry(o).or_insert(0) += 1;
                    for l in &mut lrus {
                        l.insert(o);
                    }
                }
                let Some(v) = value else { continue };
                let d = deg(values[&v].writes);
                match infinite.get_mut(&v) {
                    Some(n) if *n > 0 => {
                        *n -= 1;
                        inf_hits[d] += 1;
                    }
                    _ => inf_misses[d] += 1,
                }
                for l in &mut lrus {
                    l.write(v, d);
                }
                let e = values.get_mut(&v).expect("counted");
                if e.live == 0 {
                    if e.invalidations > 0 {
                        e.rebirths += 1;
                        e.death_to_rebirth.0 += now - e.since;
                        e.death_to_rebirth.1 += 1;
                    }
                    e.since = now;
                } else {
                    live_dups += 1;
                }
                e.live += 1;
            }
        }
        let mut a = summarise(
            path, format, records, writes, trims, &values, inf_hits, inf_misses, &lrus, pool_sizes,
        );
        a.reads = reads;
        a.live_duplicate_fraction = if writes == 0 {
            0.0
        } else {
            live_dups as f64 / writes as f64
        };
        a
    }
}

fn cdf(sorted: &[&Value], f: impl Fn(&Value) -> u32) -> Vec<[f64; 2]> {
    let total: u64 = sorted.iter().map(|v| f(v) as u64).sum();
    let n = sorted.len();
    if n == 0 {
        return Vec::new();
    }
    let mut out = Vec::with_capacity(CDF_POINTS + 1);
    let mut acc = 0u64;
    let mut next = 0usize;
    for (i, v) in sorted.iter().enumerate() {
        acc += f(v) as u64;
        let x = (i + 1) as f64 / n as f64;
        if i + 1 == n || x * CDF_POINTS as f64 >= next as f64 + 1.0 {
            let y = if total == 0 {
                0.0
            } else {
                acc as f64 / total as f64
            };
            out.push([x, y]);
            next = (x * CDF_POINTS as f64) as usize;
        }
    }
    out
}

#[allow(clippy::too_many_arguments)]
fn summarise(
    path: &str,
    format: &str,
    records: u64,
    writes: u64,
    trims: u64,
    values: &FpMap<Value>,
    inf_hits: [u64; DEGREES],
    inf_misses: [u64; DEGREES],
    lrus: &[LruCounts],
    pool_sizes: &[u64],
) -> ValueAnalysis {
    // Sort by writes, most written first; ties by fingerprint (deterministic).
    let mut keyed: Vec<(&u64, &Value)> = values.iter().collect();
    keyed.sort_by(|a, b| b.1.writes.cmp(&a.1.writes).then(a.0.cmp(b.0)));
    let sorted: Vec<&Value> = keyed.into_iter().map(|(_, v)| v).collect();
    let n = sorted.len().max(1) as f64;
    let max_inv = sorted.iter().map(|v| v.invalidations).max().unwrap_or(0);
    let mut inv_hist = vec![0u64; max_inv as usize + 1];
    for v in &sorted {
        inv_hist[v.invalidations as usize] += 1;
    }
    let mut acc = 0u64;
    let invalidation_count_cdf = inv_hist
        .iter()
        .enumerate()
        .filter(|&(k, _)| k <= 64 || k == max_inv as usize)
        .map(|(k, &c)| {
            acc += c;
            [k as f64, acc as f64 / n]
        })
        .collect();
    let mut rows: Vec<DegreeRow> = (0..DEGREES as u32)
        .map(|d| DegreeRow {
            degree: d,
            values: 0,
            writes: 0,
            invalidations: 0,
            rebirths: 0,
            mean_create_to_death: None,
            mean_death_to_rebirth: None,
        })
        .collect();
    let mut sums = vec![(0u64, 0u64, 0u64, 0u64); DEGREES];
    for v in &sorted {
        let d = (degree(v.writes) as usize).min(DEGREES - 1);
        let r = &mut rows[d];
        r.values += 1;
        r.writes += v.writes as u64;
        r.invalidations += v.invalidations as u64;
        r.rebirths += v.rebirths as u64;
        let s = &mut sums[d];
        s.0 += v.created_to_death.0;
        s.1 += v.created_to_death.1 as u64;
        s.2 += v.death_to_rebirth.0;
        s.3 += v.death_to_rebirth.1 as u64;
    }
    for (r, s) in rows.iter_mut().zip(&sums) {
        r.mean_create_to_death = (s.1 > 0).then(|| s.0 as f64 / s.1 as f64);
        r.mean_death_to_rebirth = (s.3 > 0).then(|| s.2 as f64 / s.3 as f64);
    }
    rows.retain(|r| r.values > 0);
    let pool = |entries: Option<u64>, hits: &[u64; DEGREES], misses: &[u64; DEGREES]| {
        let avoided: u64 = hits.iter().sum();
        PoolResult {
            entries,
            writes,
            avoided,
            reduction: if writes == 0 {
                0.0
            } else {
                avoided as f64 / writes as f64
            },
            by_degree: (0..DEGREES)
                .filter(|&d| hits[d] + misses[d] > 0)
                .map(|d| [d as u64, hits[d], misses[d]])
                .collect(),
        }
    };
    let mut pools = vec![pool(None, &inf_hits, &inf_misses)];
    for (l, &n) in lrus.iter().zip(pool_sizes) {
        pools.push(pool(Some(n), &l.hits, &l.misses));
    }
    let frac = |x: u64| {
        if writes == 0 {
            0.0
        } else {
            x as f64 / writes as f64
        }
    };
    let rebirths: u64 = sorted.iter().map(|v| v.rebirths as u64).sum();
    let (gap_sum, gap_n) = sorted.iter().fold((0u64, 0u64), |acc, v| {
        (
            acc.0 + v.death_to_rebirth.0,
            acc.1 + v.death_to_rebirth.1 as u64,
        )
    });
    let top = sorted.len().div_ceil(5);
    let top20: u64 = sorted[..top].iter().map(|v| v.writes as u64).sum();
    ValueAnalysis {
        path: path.to_string(),
        format: format.to_string(),
        reads: 0,
        rewrite_fraction: 1.0 - frac(values.len() as u64),
        live_duplicate_fraction: 0.0,
        rebirth_fraction: frac(rebirths),
        mean_death_to_rebirth: (gap_n > 0).then(|| gap_sum as f64 / gap_n as f64),
        top20_write_share: frac(top20),
        records,
        write_pages: writes,
        trim_pages: trims,
        unique_values: values.len() as u64,
        live_fraction: sorted.iter().filter(|v| v.live > 0).count() as f64 / n,
        invalidations: sorted.iter().map(|v| v.invalidations as u64).sum(),
        rebirths,
        cdf_writes: cdf(&sorted, |v| v.writes),
        cdf_invalidations: cdf(&sorted, |v| v.invalidations),
        cdf_rebirths: cdf(&sorted, |v| v.rebirths),
        invalidation_count_cdf,
        by_degree: rows,
        pools,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn analyse(text: &str, pools: &[u64]) -> ValueAnalysis {
        let dir = std::env::temp_dir().join(format!("zs-analyze-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let p = dir.join(format!("t{}.log", text.len()));
        std::fs::write(&p, text).unwrap();
        analyze_values(
            &p,
            TraceFormat::NbdkitHashlog,
            &ReadOptions::default(),
            pools,
            None,
        )
        .unwrap()
    }

    #[test]
    fn life_cycle_of_values() {
        // Page 0: A, B, A, B; page 1: C. A dies at write 1, is reborn at write 2, ...
        let text =
            "W 1 0 4096 0 a\nW 2 0 4096 0 b\nW 3 0 4096 0 a\nW 4 0 4096 0 b\nW 5 4096 4096 0 c\n";
        let a = analyse(text, &[1]);
        assert_eq!((a.write_pages, a.unique_values), (5, 3));
        assert_eq!(a.invalidations, 3);
        assert_eq!(a.rebirths, 2);
        // Infinite pool: writes 3 and 4 revive A and B.
        assert_eq!(a.pools[0].avoided, 2);
        // LRU of one entry: at write 3, B's death evicted A: miss; at write 4, A's death
        // evicted B: miss.
        assert_eq!(a.pools[1].avoided, 0);
        assert!((a.live_fraction - 2.0 / 3.0).abs() < 1e-9);
        let last = a.cdf_writes.last().unwrap();
        assert_eq!(*last, [1.0, 1.0]);
        let d1 = a.by_degree.iter().find(|r| r.degree == 1).unwrap();
        assert_eq!(d1.values, 3); // A, B written twice (degree 1), C once (degree 1)
        let row = a.by_degree.iter().find(|r| r.rebirths > 0).unwrap();
        assert_eq!(row.mean_death_to_rebirth, Some(1.0));
    }

    #[test]
    fn a_stand_in_analyses_like_a_trace() {
        // The rebirth component shows up as rebirths no live page held (dedup cannot
        // catch them); the catalog as live duplicates.
        let spec = "values:unique=0.3,rebirth=0.2,gap=40,zipf=1.1,read=0.25,requests=200000";
        let a = analyze_workload(spec, 20_000, 4096, 1, &[100], None).unwrap();
        assert_eq!(a.records, 200_000);
        let share = a.write_pages as f64 / a.records as f64;
        assert!((0.74..0.76).contains(&share), "write share {share}");
        assert!(
            (0.15..0.22).contains(&a.rebirth_fraction),
            "{}",
            a.rebirth_fraction
        );
        assert!(
            (0.40..0.52).contains(&a.live_duplicate_fraction),
            "{}",
            a.live_duplicate_fraction
        );
        let unique = 1.0 - a.rewrite_fraction;
        assert!((0.28..0.40).contains(&unique), "{unique}");
        assert!(a.mean_death_to_rebirth.is_some());
        // A 100-entry LRU pool catches most rebirths at a gap of 40 writes.
        assert!(a.pools[1].reduction > 0.15, "{}", a.pools[1].reduction);
        let none = analyze_workload(
            "values:unique=0.3,rebirth=0,zipf=1.1,requests=100000",
            20_000,
            4096,
            1,
            &[],
            None,
        )
        .unwrap();
        assert!(none.rebirth_fraction < 0.05, "{}", none.rebirth_fraction);
        assert!(none.top20_write_share > 0.6, "{}", none.top20_write_share);
    }
}
