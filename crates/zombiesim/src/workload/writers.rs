//! Several writers sharing one device, each in its own region of the logical space
//! with its own address model, request size and placement identifier (the `streams`
//! workload: WARP's three-stream FIO mix by default, FAST'26 §5.2–5.3).
//!
//! ```text
//!   request ──► writer w, drawn with probability ∝ share_w / request pages_w
//!               (so each writer's share of the *written pages* is share_w)
//!           ──► w's own generator picks a slot of w's region ──► lpn = first_w + slot
//!           ──► the write names w's placement identifier (hint.stream = w's id)
//! ```
//!
//! A writer's generator is a [`Synthetic`] over its region alone; reads and trims are
//! drawn by the mix (`read`, `trim`) and fall in the chosen writer's region.

use super::keys::Keys;
use super::synthetic::{AddressModel, Length, Synthetic};
use super::WriteHint;
use crate::error::Result;

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

/// The writers of a mix and the cumulative probabilities of drawing each.
#[derive(Clone, Debug)]
pub struct Writers {
    pub writers: Vec<Writer>,
    /// `cumulative[i]`: probability that a request is writer `0 ..= i`'s.
    cumulative: Vec<f64>,
}

impl Writers {
    /// `writers` with their shares of the written pages.
    pub fn new(writers: Vec<(Writer, f64)>) -> Writers {
        // A request of writer w writes `pages_w` pages: draw w with probability
        // ∝ share_w / pages_w so that the page shares come out as given.
        let weights: Vec<f64> = writers
            .iter()
            .map(|(w, share)| share / w.gen.request_pages() as f64)
            .collect();
        let total: f64 = weights.iter().sum();
        let mut acc = 0.0;
        let cumulative = weights
            .iter()
            .map(|x| {
                acc += x / total;
                acc
            })
            .collect();
        Writers {
            writers: writers.into_iter().map(|(w, _)| w).collect(),
            cumulative,
        }
    }

    /// The writer whose band `u` (uniform in [0, 1)) falls in.
    #[inline]
    pub fn pick(&self, u: f64) -> usize {
        self.cumulative
            .iter()
            .position(|&c| u < c)
            .unwrap_or(self.writers.len() - 1)
    }
}

/// fio's `random_distribution=zoned:80/20:10/20:10/60`, WARP's overwrite stream: 80% of
/// the writes to the first 20% of the region, 10% to the next 20%, 10% to the last 60%.
pub const ZONED_80_20: [(f64, f64); 3] = [(0.8, 0.2), (0.1, 0.2), (0.1, 0.6)];

/// `streams`' writers from its keys, on `logical_pages` pages of `page_size` bytes;
/// `req_pages` is the common `size` (the random and overwrite writers' requests).
///
/// - the sequential writer (placement identifier 0): a fraction `seq` of the written
///   pages, in requests of `seq_size`, in order over the first fraction `space` of the
///   logical space, wrapping;
/// - the random writer (1): a fraction `random`, uniform over the rest of the space;
/// - the overwrite writer (2): the remaining pages, over the sequential writer's region,
///   `overwrite = zoned` (fio's 80/20:10/20:10/60), `uniform`, or `zipf` (`theta`).
///
/// With `hints = false` the writes name no placement identifier.
pub(super) fn streams(
    keys: &mut Keys,
    logical_pages: u64,
    page_size: u64,
    req_pages: u64,
    seed: u64,
) -> Result<Writers> {
    let seq = keys.fraction("seq", 0.88)?;
    let random = keys.fraction("random", 0.06)?;
    if seq + random > 1.0 + 1e-12 {
        return Err(keys.bad(
            "random",
            &random.to_string(),
            "a fraction with `seq` + `random` at most 1 (the overwrite writer takes the rest)",
        ));
    }
    let space = keys.fraction("space", 0.9)?;
    let seq_pages = ((space * logical_pages as f64) as u64).min(logical_pages);
    let rest = logical_pages - seq_pages;
    let overwrite = 1.0 - seq - random;
    if seq_pages == 0 && (seq > 0.0 || overwrite > 1e-12) {
        return Err(keys.bad(
            "space",
            &space.to_string(),
            "a fraction leaving the sequential writer's region at least a page",
        ));
    }
    if rest == 0 && random > 0.0 {
        return Err(keys.bad(
            "space",
            &space.to_string(),
            "a fraction below 1 when `random` > 0 (the random writer's region is the rest)",
        ));
    }
    let seq_size = keys.bytes("seq_size", 128 << 10)?;
    let seq_req = seq_size.div_ceil(page_size).max(1);
    if seq_size == 0 || seq_req > seq_pages.max(1) {
        return Err(keys.bad(
            "seq_size",
            &seq_size.to_string(),
            "a positive size within the sequential writer's region",
        ));
    }
    let pattern = keys.take("overwrite").unwrap_or_else(|| "zoned".into());
    let theta = keys.number("theta", 1.2)?;
    let model = match pattern.as_str() {
        "zoned" => AddressModel::Zoned { zones: ZONED_80_20 },
        "uniform" => AddressModel::Uniform,
        "zipf" => {
            if !(theta >= 0.0 && theta.is_finite()) {
                return Err(keys.bad("theta", &theta.to_string(), "a non-negative number"));
            }
            AddressModel::Zipf {
                theta,
                scramble: false,
            }
        }
        other => return Err(keys.bad("overwrite", other, "`zoned`, `uniform` or `zipf`")),
    };
    let hints = keys.boolean("hints", true)?;
    let hint = |pid: u16| WriteHint {
        stream: hints.then_some(pid),
        lifetime: None,
    };
    let gen = |model: AddressModel, pages: u64, req: u64, k: u64| {
        Synthetic::new(
            model,
            pages,
            req.min(pages).max(1),
            0.0,
            0.0,
            false,
            Length::WritePages(u64::MAX),
            seed.wrapping_add(k),
        )
    };
    let mut writers = Vec::new();
    if seq > 0.0 {
        let w = Writer {
            first: 0,
            pages: seq_pages,
            gen: gen(AddressModel::Sequential { start: 0 }, seq_pages, seq_req, 1),
            hint: hint(0),
        };
        writers.push((w, seq));
    }
    if random > 0.0 {
        let w = Writer {
            first: seq_pages,
            pages: rest,
            gen: gen(AddressModel::Uniform, rest, req_pages, 2),
            hint: hint(1),
        };
        writers.push((w, random));
    }
    if overwrite > 1e-12 {
        let w = Writer {
            first: 0,
            pages: seq_pages,
            gen: gen(model, seq_pages, req_pages, 3),
            hint: hint(2),
        };
        writers.push((w, overwrite));
    }
    Ok(Writers::new(writers))
}

#[cfg(test)]
mod tests {
    use crate::workload::{Op, Workload, WorkloadSpec};

    /// Pages written per placement identifier, and the requests, of `spec` on
    /// `pages` logical pages.
    fn run(spec: &str, pages: u64) -> (Vec<u64>, Vec<crate::workload::Request>) {
        let mut w = WorkloadSpec::parse(spec)
            .unwrap()
            .build(pages, 4096, 5)
            .unwrap();
        let reqs: Vec<_> = std::iter::from_fn(|| w.next_request().unwrap()).collect();
        let mut by_id = vec![0u64; 3];
        for r in &reqs {
            if r.op == Op::Write {
                by_id[r.hint.stream.expect("a placement id") as usize] += r.pages as u64;
            }
        }
        (by_id, reqs)
    }

    #[test]
    fn each_writer_keeps_its_region_share_and_identifier() {
        let n = 100_000;
        let (by_id, reqs) = run("streams:drive_writes=4", n);
        let total: u64 = by_id.iter().sum();
        for (id, want) in [0.88, 0.06, 0.06].into_iter().enumerate() {
            let got = by_id[id] as f64 / total as f64;
            assert!((got - want).abs() < 0.01, "id {id}: {got} of the pages");
        }
        let log = 90_000;
        let mut next_seq = 0;
        let mut hot = [0u64; 2];
        for r in &reqs {
            match r.hint.stream {
                Some(0) => {
                    assert_eq!(r.lpn, next_seq, "the log is written in order");
                    assert!(r.pages <= 32);
                    // Whole requests of 32 pages: it wraps before a partial one.
                    next_seq = r.lpn + r.pages as u64;
                    if next_seq + 32 > log {
                        next_seq = 0;
                    }
                }
                Some(1) => assert!((log..n).contains(&r.lpn)),
                Some(2) => {
                    assert!(r.lpn < log);
                    hot[usize::from(r.lpn >= log / 5)] += 1;
                }
                _ => unreachable!(),
            }
        }
        let share = hot[0] as f64 / (hot[0] + hot[1]) as f64;
        assert!(
            (share - 0.8).abs() < 0.02,
            "{share} of overwrites in the first 20%"
        );
        // Without hints: the same addresses, no identifiers.
        let mut w = WorkloadSpec::parse("streams:hints=false,requests=100")
            .unwrap()
            .build(n, 4096, 5)
            .unwrap();
        assert!(!w.places());
        assert!(std::iter::from_fn(|| w.next_request().unwrap()).all(|r| r.hint.stream.is_none()));
    }

    #[test]
    fn bad_keys_are_named() {
        for (spec, key) in [
            ("streams:seq=0.9,random=0.2", "random"),
            ("streams:space=1", "space"),
            ("streams:overwrite=hot", "overwrite"),
            ("streams:seq_size=0", "seq_size"),
            ("streams:theta=-1,overwrite=zipf", "theta"),
        ] {
            let err = WorkloadSpec::parse(spec).unwrap_err().to_string();
            assert!(err.contains(key), "{spec}: {err}");
        }
    }
}
