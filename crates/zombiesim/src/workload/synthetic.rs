//! Synthetic request generators.
//!
//! The logical space is cut into *slots* of one request size (`size` rounded up to
//! whole pages); an address model picks a slot, and the request covers it. Reads,
//! trims and writes are mixed by the `read` and `trim` fractions; reads follow the
//! write model (`footprint`: uniform over the slots written so far) or are uniform
//! (`reads=uniform`). With `iops`, request `k` (from 0) arrives at
//! `round(k · 10⁹ / iops)` ns (open loop); without it, requests carry no arrival time.

use super::footprint::Footprint;
use super::permutation::Permutation;
use super::{Op, Request, ValueModel, Workload, WriteHint};
use crate::error::Result;
use rand::{RngExt, SeedableRng};
use rand_distr::{Distribution, Zipf};
use rand_pcg::Pcg64Mcg;

/// One writer of a mix.
#[derive(Clone, Debug)]
pub struct Writer {
    /// Its region: logical pages `first .. first + pages`.
    pub first: u64,
    pub pages: u64,
    /// Its generator over `0 .. pages` (writes only; its own request size).
    pub gen: Synthetic,
    /// What its writes say.
    pub hint: WriteHint,
}

/// The writers of a mix, their shares of the written pages, and what each has written.
#[derive(Clone, Debug)]
pub struct Writers {
    pub writers: Vec<Writer>,
    shares: Vec<f64>,
    /// Pages each writer has written (reads and trims count nothing).
    written: Vec<u64>,
    total: u64,
}

impl Writers {
    /// `writers` with their shares of the written pages.
    pub fn new(writers: Vec<(Writer, f64)>) -> Writers {
        let sum: f64 = writers.iter().map(|(_, s)| s).sum();
        let shares = writers.iter().map(|(_, s)| s / sum).collect();
        let n = writers.len();
        Writers {
            writers: writers.into_iter().map(|(w, _)| w).collect(),
            shares,
            written: vec![0; n],
            total: 0,
        }
    }

    /// The writer the next request is for: the one furthest behind its share of the
    /// pages written so far (the lowest index on ties), as concurrent writers at those
    /// rates interleave; the shares are then exact within one request per writer.
    #[inline]
    pub fn next(&self) -> usize {
        let total = self.total as f64;
        (0..self.writers.len())
            .max_by(|&a, &b| {
                let lag = |i: usize| self.shares[i] * total - self.written[i] as f64;
                lag(a).total_cmp(&lag(b)).then(b.cmp(&a))
            })
            .expect("a mix has writers")
    }

    /// Writer `i` wrote `pages` pages.
    #[inline]
    pub fn wrote(&mut self, i: usize, pages: u64) {
        self.written[i] += pages;
        self.total += pages;
    }

    /// The writer a read or trim falls to, by the shares (`u` uniform in [0, 1)).
    #[inline]
    pub fn pick(&self, u: f64) -> usize {
        let mut acc = 0.0;
        for (i, s) in self.shares.iter().enumerate() {
            acc += s;
            if u < acc {
                return i;
            }
        }
        self.writers.len() - 1
    }
}

/// How long a workload runs.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Length {
    /// This many requests of any kind.
    Requests(u64),
    /// Until this many pages have been written.
    WritePages(u64),
}

/// Where writes go.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum AddressModel {
    Uniform,
    Sequential {
        start: u64,
    },
    /// A fraction `r` of accesses to the first fraction `f` of the slots.
    HotCold {
        r: f64,
        f: f64,
    },
    /// Zipf(theta) over slots; `scramble` permutes ranks over the space.
    Zipf {
        theta: f64,
        scramble: bool,
    },
    /// A written footprint growing by a fraction `growth` of writes (fresh slots in a
    /// scrambled order), the rest rewriting the `window_pages` newest fresh pages
    /// (Zipf(`theta`) over recency, 0 = uniform); a fraction `pause` of the phases of
    /// `phase_pages` written pages do not grow (see [`Footprint`]).
    Footprint {
        growth: f64,
        window_pages: u64,
        theta: f64,
        phase_pages: u64,
        pause: f64,
    },
    /// Zones of the slots in order, each `(share of accesses, fraction of the slots)`,
    /// uniform within a zone (fio's `random_distribution=zoned`; the fractions sum to 1).
    Zoned {
        zones: [(f64, f64); 3],
    },
    /// The space cut into files of `file_slots` slots; an access picks a hot file
    /// (the first fraction `hot` of them) with probability `r`, else any file, and
    /// writes it whole in order with probability `seq`, else one slot of it.
    Files {
        file_slots: u64,
        seq: f64,
        hot: f64,
        r: f64,
    },
}

#[derive(Clone, Debug)]
enum Sampler {
    Uniform,
    Sequential {
        next: u64,
    },
    HotCold {
        r: f64,
        hot: u64,
    },
    Zipf {
        dist: Zipf<f64>,
        perm: Option<Permutation>,
    },
    Footprint(Footprint),
    /// Per zone: the cumulative share of accesses, its first slot and its slots.
    Zoned {
        zones: [(f64, u64, u64); 3],
    },
    Files {
        file_slots: u64,
        files: u64,
        hot_files: u64,
        seq: f64,
        r: f64,
        /// The slot written last of a whole-file write, and how many of it are left.
        cur: u64,
        left: u64,
    },
}

/// Open-loop arrival times at a fixed rate (`iops`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) struct Rate {
    iops: f64,
}

impl Rate {
    /// `iops`: a positive finite number (checked when parsed).
    pub(super) fn new(iops: f64) -> Self {
        Rate { iops }
    }

    /// Request `k`'s arrival, `round(k · 10⁹ / iops)` ns, from `k` itself (no running
    /// sum): exact for a whole `iops`, one rounding of `k · 10⁹ / iops` otherwise.
    pub(super) fn arrival_ns(&self, k: u64) -> u64 {
        const NS: u128 = 1_000_000_000;
        if self.iops.fract() == 0.0 && self.iops <= (1u64 << 53) as f64 {
            let n = self.iops as u128;
            u64::try_from((2 * k as u128 * NS + n) / (2 * n)).unwrap_or(u64::MAX)
        } else {
            (k as f64 * 1e9 / self.iops).round() as u64
        }
    }
}

/// A seeded synthetic workload.
#[derive(Clone, Debug)]
pub struct Synthetic {
    sampler: Sampler,
    slots: u64,
    logical_pages: u64,
    req_pages: u64,
    read: f64,
    trim: f64,
    uniform_reads: bool,
    length: Length,
    requests: u64,
    written: u64,
    rng: Pcg64Mcg,
    /// Content fingerprints of writes (the `values` workload).
    values: Option<ValueModel>,
    /// Arrival times (`iops`); `None`: requests carry none.
    rate: Option<Rate>,
    /// Several writers, each in its own region (the `streams` workload); the address
    /// model above is then unused.
    writers: Option<Box<Writers>>,
}

impl Synthetic {
    #[allow(clippy::too_many_arguments)]
    pub(super) fn new(
        model: AddressModel,
        logical_pages: u64,
        req_pages: u64,
        read: f64,
        trim: f64,
        uniform_reads: bool,
        length: Length,
        seed: u64,
    ) -> Self {
        let slots = (logical_pages / req_pages).max(1);
        let sampler = match model {
            AddressModel::Uniform => Sampler::Uniform,
            AddressModel::Sequential { start } => Sampler::Sequential {
                next: (start / req_pages) % slots,
            },
            AddressModel::HotCold { r, f } => Sampler::HotCold {
                r,
                hot: ((f * slots as f64) as u64).clamp(1, slots),
            },
            AddressModel::Zipf { theta, scramble } => Sampler::Zipf {
                dist: Zipf::new(slots as f64, theta).expect("theta checked when parsed"),
                perm: scramble.then(|| Permutation::new(slots)),
            },
            AddressModel::Footprint {
                growth,
                window_pages,
                theta,
                phase_pages,
                pause,
            } => Sampler::Footprint(Footprint::new(
                slots,
                growth,
                window_pages.div_ceil(req_pages),
                theta,
                phase_pages,
                pause,
            )),
            AddressModel::Zoned { zones } => {
                let (mut acc, mut first) = (0.0, 0u64);
                let zones = zones.map(|(share, fraction)| {
                    acc += share;
                    let n = ((fraction * slots as f64).round() as u64).min(slots - first);
                    let zone = (acc, first, n);
                    first += n;
                    zone
                });
                Sampler::Zoned { zones }
            }
            AddressModel::Files {
                file_slots,
                seq,
                hot,
                r,
            } => {
                let file_slots = file_slots.clamp(1, slots);
                let files = (slots / file_slots).max(1);
                Sampler::Files {
                    file_slots,
                    files,
                    hot_files: ((hot * files as f64) as u64).clamp(1, files),
                    seq,
                    r,
                    cur: 0,
                    left: 0,
                }
            }
        };
        Synthetic {
            sampler,
            slots,
            logical_pages,
            req_pages,
            read,
            trim,
            uniform_reads,
            length,
            requests: 0,
            written: 0,
            rng: Pcg64Mcg::seed_from_u64(seed),
            values: None,
            rate: None,
            writers: None,
        }
    }

    /// Pages per request.
    pub(super) fn request_pages(&self) -> u64 {
        self.req_pages
    }

    /// Draw requests from `writers` instead of the address model.
    pub(super) fn with_writers(mut self, writers: Writers) -> Self {
        self.writers = Some(Box::new(writers));
        self
    }

    /// Give every write a content fingerprint drawn from `values`.
    pub(super) fn with_values(mut self, values: Option<ValueModel>) -> Self {
        self.values = values;
        self
    }

    /// Give request `k` (from 0) the arrival time `round(k · 10⁹ / iops)` ns.
    pub(super) fn with_rate(mut self, rate: Option<Rate>) -> Self {
        self.rate = rate;
        self
    }

    /// The same address model issuing only writes, forever, from another seed
    /// (preconditioning to this workload's steady state).
    pub fn writes_only(&self, seed: u64) -> Synthetic {
        let mut w = self.clone();
        w.read = 0.0;
        w.trim = 0.0;
        w.length = Length::WritePages(u64::MAX);
        w.requests = 0;
        w.written = 0;
        w.rate = None;
        w.rng = Pcg64Mcg::seed_from_u64(seed);
        if let Some(ws) = w.writers.as_mut() {
            for (i, writer) in ws.writers.iter_mut().enumerate() {
                writer.gen = writer.gen.writes_only(seed.wrapping_add(1 + i as u64));
            }
        }
        w
    }

    #[inline]
    fn write_slot(&mut self) -> u64 {
        match &mut self.sampler {
            Sampler::Uniform => self.rng.random_range(0..self.slots),
            Sampler::Sequential { next } => {
                let s = *next;
                *next = if s + 1 == self.slots { 0 } else { s + 1 };
                s
            }
            Sampler::HotCold { r, hot } => {
                let cold = self.slots - *hot;
                if cold == 0 || self.rng.random::<f64>() < *r {
                    self.rng.random_range(0..*hot)
                } else {
                    *hot + self.rng.random_range(0..cold)
                }
            }
            Sampler::Zipf { dist, perm } => {
                let rank = (dist.sample(&mut self.rng) as u64).clamp(1, self.slots) - 1;
                match perm {
                    Some(p) => p.apply(rank),
                    None => rank,
                }
            }
            Sampler::Footprint(f) => f.write(&mut self.rng, self.written),
            Sampler::Zoned { zones } => {
                let u: f64 = self.rng.random();
                let &(_, first, n) = zones
                    .iter()
                    .find(|&&(c, _, n)| u < c && n > 0)
                    .or_else(|| zones.iter().rev().find(|z| z.2 > 0))
                    .expect("a zone has slots");
                first + self.rng.random_range(0..n)
            }
            Sampler::Files {
                file_slots,
                files,
                hot_files,
                seq,
                r,
                cur,
                left,
            } => {
                if *left > 0 {
                    *left -= 1;
                    *cur += 1;
                    return *cur;
                }
                let cold = *files - *hot_files;
                let file = if cold == 0 || self.rng.random::<f64>() < *r {
                    self.rng.random_range(0..*hot_files)
                } else {
                    *hot_files + self.rng.random_range(0..cold)
                };
                let first = file * *file_slots;
                if self.rng.random::<f64>() < *seq {
                    *cur = first;
                    *left = *file_slots - 1;
                    first
                } else {
                    first + self.rng.random_range(0..*file_slots)
                }
            }
        }
    }

    /// The slot of a read or trim.
    #[inline]
    fn other_slot(&mut self) -> u64 {
        match &self.sampler {
            _ if self.uniform_reads => self.rng.random_range(0..self.slots),
            Sampler::Footprint(f) => f.read(&mut self.rng),
            _ => self.write_slot(),
        }
    }

    fn done(&self) -> bool {
        match self.length {
            Length::Requests(n) => self.requests >= n,
            Length::WritePages(n) => self.written >= n,
        }
    }
}

impl Synthetic {
    /// The next request of a mix of writers: a writer drawn by its share, a slot of its
    /// region from its own generator.
    fn next_mixed(&mut self, op: Op, arrival_ns: Option<u64>) -> Request {
        let ws = self.writers.as_mut().expect("a mix");
        let i = if op == Op::Write {
            ws.next()
        } else {
            ws.pick(self.rng.random())
        };
        let w = &mut ws.writers[i];
        let slot = if op == Op::Write {
            w.gen.write_slot()
        } else {
            w.gen.other_slot()
        };
        let req = w.gen.request_pages();
        let start = slot * req;
        let pages = req.min(w.pages - start) as u32;
        let (lpn, hint) = (w.first + start, w.hint);
        let hint = if op == Op::Write {
            self.written += pages as u64;
            ws.wrote(i, pages as u64);
            hint
        } else {
            WriteHint::NONE
        };
        Request {
            op,
            lpn,
            pages,
            arrival_ns,
            continued: false,
            value: None,
            hint,
        }
    }
}

impl Workload for Synthetic {
    #[inline]
    fn next_request(&mut self) -> Result<Option<Request>> {
        if self.done() {
            return Ok(None);
        }
        let arrival_ns = self.rate.map(|r| r.arrival_ns(self.requests));
        self.requests += 1;
        let op = if self.read == 0.0 && self.trim == 0.0 {
            Op::Write
        } else {
            let u: f64 = self.rng.random();
            if u < self.read {
                Op::Read
            } else if u < self.read + self.trim {
                Op::Trim
            } else {
                Op::Write
            }
        };
        if self.writers.is_some() {
            return Ok(Some(self.next_mixed(op, arrival_ns)));
        }
        let slot = if op == Op::Write {
            self.write_slot()
        } else {
            self.other_slot()
        };
        let mut lpn = slot * self.req_pages;
        let pages = self.req_pages.min(self.logical_pages - lpn) as u32;
        if op == Op::Write {
            self.written += pages as u64;
        }
        // The value model may send a write elsewhere (a recurring page; one-page
        // requests only, so `pages` stays 1).
        let value = match (&mut self.values, op) {
            (Some(m), Op::Write) => {
                let (to, v) = m.draw(&mut self.rng, lpn);
                lpn = to;
                Some(v)
            }
            (Some(m), Op::Trim) => {
                m.trimmed(lpn, pages as u64);
                None
            }
            _ => None,
        };
        Ok(Some(Request {
            op,
            lpn,
            pages,
            arrival_ns,
            continued: false,
            value,
            hint: WriteHint::NONE,
        }))
    }

    fn progress(&self) -> Option<f64> {
        Some(match self.length {
            Length::Requests(0) | Length::WritePages(0) => 1.0,
            Length::Requests(n) => self.requests as f64 / n as f64,
            Length::WritePages(n) => self.written as f64 / n as f64,
        })
    }

    fn expected_write_pages(&self) -> Option<u64> {
        match self.length {
            Length::WritePages(n) => Some(n),
            Length::Requests(n) => {
                Some((n as f64 * (1.0 - self.read - self.trim)) as u64 * self.req_pages)
            }
        }
    }

    fn places(&self) -> bool {
        self.writers
            .as_ref()
            .is_some_and(|ws| ws.writers.iter().any(|w| w.hint.stream.is_some()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::WorkloadSpec;

    fn write_lpns(spec: &str, pages: u64) -> Vec<u64> {
        let mut w = WorkloadSpec::parse(spec)
            .unwrap()
            .build(pages, 4096, 7)
            .unwrap();
        std::iter::from_fn(|| w.next_request().unwrap())
            .map(|r| r.lpn)
            .collect()
    }

    #[test]
    fn files_write_whole_files_in_order_and_favour_the_hot_ones() {
        // 1024 pages, files of 16 pages (64 KiB): 64 files, the first 4 hot.
        let all = write_lpns("files:file=64KiB,seq=1,hot=0.0625,r=1,requests=320", 1024);
        assert_eq!(all.len(), 320);
        for file in all.chunks(16) {
            assert_eq!(file[0] % 16, 0, "a whole-file write starts at the file");
            assert!(file.windows(2).all(|w| w[1] == w[0] + 1), "{file:?}");
            assert!(file[0] < 64, "only the hot files: {file:?}");
        }
        // seq = 0: single requests anywhere in a file, cold files too when r < 1.
        let single = write_lpns(
            "files:file=64KiB,seq=0,hot=0.0625,r=0.5,requests=2000",
            1024,
        );
        let hot = single.iter().filter(|&&l| l < 64).count();
        assert!((800..1200).contains(&hot), "{hot} of 2000 in the hot files");
        assert!(single.iter().any(|&l| l % 16 != 0));
        let bad = WorkloadSpec::parse("files:file=1KiB").and_then(|s| s.build(1024, 4096, 1));
        assert!(bad.unwrap_err().to_string().contains("file = 1024"));
    }

    fn arrivals(spec: &str, n: usize) -> Vec<Option<u64>> {
        let mut w = WorkloadSpec::parse(spec)
            .unwrap()
            .build(1 << 16, 4096, 1)
            .unwrap();
        (0..n)
            .map(|_| w.next_request().unwrap().unwrap().arrival_ns)
            .collect()
    }

    #[test]
    fn iops_spaces_arrivals_exactly() {
        let want: Vec<_> = (0..1000).map(|k| Some(k * 1_000_000)).collect();
        assert_eq!(arrivals("uniform:iops=1000", 1000), want);
        assert_eq!(arrivals("footprint:iops=1000,read=0.5", 1000), want);
        assert_eq!(arrivals("zipf:read=0.2", 3), [None; 3]);
        // 3 IOPS: 333,333,333.3 ns apart, each time rounded on its own.
        let got = arrivals("sequential:iops=3", 4);
        assert_eq!(got, [0, 333_333_333, 666_666_667, 1_000_000_000].map(Some));
        let r = Rate::new(3.0);
        assert_eq!(r.arrival_ns(3_000_000_000), 1_000_000_000_000_000_000);
        assert_eq!(r.arrival_ns(3_000_000_001), 1_000_000_000_333_333_333);
        // A fractional rate: 2.5 IOPS, 0.4 s apart.
        let r = Rate::new(2.5);
        assert_eq!(r.arrival_ns(7), 2_800_000_000);
        assert_eq!(r.arrival_ns(1_000_000), 400_000_000_000_000);
    }

    #[test]
    fn bad_iops_names_the_key() {
        for v in ["0", "-3", "abc", "inf", "NaN"] {
            let spec = format!("hotcold:iops={v}");
            match WorkloadSpec::parse(&spec) {
                Err(crate::Error::Workload { reason, .. }) => {
                    assert!(reason.contains(&format!("iops = {v}")), "{spec}: {reason}")
                }
                other => panic!("{spec}: {other:?}"),
            }
        }
        assert!(WorkloadSpec::parse("oltp:iops=100").is_err());
    }
}
