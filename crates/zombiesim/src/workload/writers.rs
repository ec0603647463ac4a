//! Several writers sharing one device, each in its own region of the logical space
//! with its own address model, request size and placement identifier (the `streams`
//! workload: WARP's three-stream FIO mix by default, FAST'26 §5.2–5.3).
//!
//! ```text
//!   write ──► the writer furthest behind its share of the pages written so far
//!             (as concurrent writers at those rates interleave: the shares are exact)
//!           ──► w's own generator picks a slot of w's region ──► lpn = first_w + slot
//!           ──► the write names w's placement identifier (hint.stream = w's id)
//! ```
//!
//! A writer's generator is a [`Synthetic`] over its region alone; reads and trims are
//! drawn by the mix (`read`, `trim`) and fall in the region of a writer drawn by share.
//! The mix itself ([`Writers`]) lives with [`Synthetic`], which draws from it; this file
//! holds the workloads made of writers (`streams`, `kvcache`) and their keys.

use super::keys::Keys;
use super::synthetic::{AddressModel, Length, Synthetic, Writer, Writers};
use super::WriteHint;
use crate::error::Result;

/// A writer's generator: writes only, forever, over `pages` pages in requests of `req`
/// pages (at most its region), from the `k`-th seed after the run's.
fn generator(model: AddressModel, pages: u64, req: u64, seed: u64, k: u64) -> Synthetic {
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
    let gen = |model, pages, req, k| generator(model, pages, req, seed, k);
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

/// `kvcache`'s writers: a flash cache as CacheLib's flash engine (Navy) lays one out
/// (Allison et al., EuroSys'25 §2.3), over the first fraction `utilisation` of the
/// logical space (the rest is never written), the large-object cache first and the
/// small-object cache at the end, as Navy places its engines:
///
/// - the small-object cache (identifier 0), the last fraction `soc` of the cache: a
///   set-associative hash of one-page buckets; each insert rewrites its whole bucket in
///   place, the bucket hashed from the key (uniform by default, as CacheLib's hash and
///   the paper's model have it; `zipf` > 0 draws buckets Zipf(`zipf`), scrambled);
/// - the large-object cache (identifier 1), the rest: a log written in order and
///   overwritten oldest first (its regions evicted FIFO), in requests of `io` bytes
///   (256 KiB, CacheLib's FDP configuration) that interleave with the small-object
///   writes, as concurrent flush threads do;
/// - a fraction `soc_writes` of the written pages go to the small-object cache;
/// - `tenants` (1) such caches share the device, each on an equal share of the used
///   space and of the writes, tenant `t` on identifiers `2t` (its small-object cache)
///   and `2t + 1` (its log).
///
/// With `hints = false` the writes name no identifier (the cache without FDP).
pub(super) fn kvcache(
    keys: &mut Keys,
    logical_pages: u64,
    page_size: u64,
    seed: u64,
) -> Result<Writers> {
    let soc = keys.fraction("soc", 0.04)?;
    if soc <= 0.0 || soc >= 1.0 {
        return Err(keys.bad(
            "soc",
            &soc.to_string(),
            "a fraction strictly between 0 and 1",
        ));
    }
    let utilisation = keys.fraction("utilisation", 1.0)?;
    if utilisation <= 0.0 {
        return Err(keys.bad(
            "utilisation",
            &utilisation.to_string(),
            "a fraction above 0 (at most 1)",
        ));
    }
    let soc_writes = keys.fraction("soc_writes", 0.5)?;
    let io = keys.bytes("io", 256 << 10)?;
    let zipf = keys.number("zipf", 0.0)?;
    if !(zipf >= 0.0 && zipf.is_finite()) {
        return Err(keys.bad("zipf", &zipf.to_string(), "a non-negative number"));
    }
    let hints = keys.boolean("hints", true)?;
    let tenants = keys.integer("tenants", 1)?;
    if !(1..=32).contains(&tenants) {
        return Err(keys.bad(
            "tenants",
            &tenants.to_string(),
            "a whole number from 1 to 32",
        ));
    }
    let used = ((utilisation * logical_pages as f64) as u64).min(logical_pages);
    // Each tenant is a cache of its own on an equal share of the used space.
    let per_tenant = used / tenants;
    let soc_pages = ((soc * per_tenant as f64) as u64).max(1);
    let loc_pages = per_tenant.saturating_sub(soc_pages);
    let io_pages = io.div_ceil(page_size);
    if io == 0 || io_pages > loc_pages {
        return Err(keys.bad(
            "io",
            &io.to_string(),
            &format!(
                "a positive size within the large-object cache ({} bytes)",
                loc_pages * page_size
            ),
        ));
    }
    let hint = |pid: u64| WriteHint {
        stream: hints.then_some(pid as u16),
        lifetime: None,
    };
    let buckets = if zipf > 0.0 {
        AddressModel::Zipf {
            theta: zipf,
            scramble: true,
        }
    } else {
        AddressModel::Uniform
    };
    let gen = |model, pages, req, k| generator(model, pages, req, seed, k);
    let share = 1.0 / tenants as f64;
    let mut writers = Vec::new();
    for t in 0..tenants {
        // Tenant t: its log first, its small-object cache last; identifiers 2t, 2t + 1.
        let base = t * per_tenant;
        if soc_writes > 0.0 {
            let w = Writer {
                first: base + loc_pages,
                pages: soc_pages,
                gen: gen(buckets, soc_pages, 1, 1 + 2 * t),
                hint: hint(2 * t),
            };
            writers.push((w, soc_writes * share));
        }
        if soc_writes < 1.0 {
            let w = Writer {
                first: base,
                pages: loc_pages,
                gen: gen(
                    AddressModel::Sequential { start: 0 },
                    loc_pages,
                    io_pages,
                    2 + 2 * t,
                ),
                hint: hint(2 * t + 1),
            };
            writers.push((w, (1.0 - soc_writes) * share));
        }
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

#[cfg(test)]
mod kvcache_tests {
    use crate::workload::{Workload, WorkloadSpec};

    #[test]
    fn small_objects_rewrite_buckets_and_large_ones_fill_regions_in_order() {
        // 100,000 pages at 50% utilisation: the cache is the first 50,000; the LOC's log
        // from page 0 in requests of 256 KiB (64 pages), the SOC its last 4% (2,000).
        let n = 100_000;
        let mut w = WorkloadSpec::parse("kvcache:utilisation=0.5,drive_writes=3")
            .unwrap()
            .build(n, 4096, 3)
            .unwrap();
        assert!(w.places());
        let (mut soc, mut loc, mut next) = (0u64, 0u64, 0u64);
        while let Some(r) = w.next_request().unwrap() {
            assert!(r.lpn + r.pages as u64 <= 50_000, "only the used space");
            match r.hint.stream {
                Some(0) => {
                    assert!((48_000..50_000).contains(&r.lpn) && r.pages == 1);
                    soc += 1;
                }
                Some(1) => {
                    assert_eq!((r.lpn, r.pages), (next, 64), "the log, in order");
                    next += 64;
                    if next + 64 > 48_000 {
                        next = 0;
                    }
                    loc += 64;
                }
                _ => unreachable!(),
            }
        }
        let share = soc as f64 / (soc + loc) as f64;
        assert!(
            (share - 0.5).abs() < 0.02,
            "{share} of the pages to the SOC"
        );
    }

    #[test]
    fn tenants_each_run_a_cache_on_their_share_with_identifiers_of_their_own() {
        // Two tenants on 100,000 pages: tenant t owns pages 50,000·t .. 50,000·(t + 1),
        // its log on identifier 2t + 1 and its small-object cache (the last 2,000 of
        // its pages) on 2t; each takes half of the writes.
        let mut w = WorkloadSpec::parse("kvcache:tenants=2,drive_writes=2")
            .unwrap()
            .build(100_000, 4096, 3)
            .unwrap();
        let mut pages = [0u64; 4];
        while let Some(r) = w.next_request().unwrap() {
            let id = r.hint.stream.expect("an identifier") as u64;
            let (t, soc) = (id / 2, id.is_multiple_of(2));
            let region = if soc {
                t * 50_000 + 48_000..(t + 1) * 50_000
            } else {
                t * 50_000..t * 50_000 + 48_000
            };
            assert!(region.contains(&r.lpn), "id {id} wrote page {}", r.lpn);
            assert!(r.lpn + r.pages as u64 <= region.end);
            pages[id as usize] += r.pages as u64;
        }
        let total: u64 = pages.iter().sum();
        for (id, &p) in pages.iter().enumerate() {
            let share = p as f64 / total as f64;
            assert!((share - 0.25).abs() < 0.02, "id {id}: {share}");
        }
    }

    #[test]
    fn bad_keys_are_named() {
        for (spec, key) in [
            ("kvcache:soc=0", "soc"),
            ("kvcache:soc=1", "soc"),
            ("kvcache:utilisation=0", "utilisation"),
            ("kvcache:io=0", "io"),
            ("kvcache:zipf=-1", "zipf"),
            ("kvcache:hints=maybe", "hints"),
            ("kvcache:tenants=0", "tenants"),
            ("kvcache:tenants=1.5", "tenants"),
        ] {
            let err = WorkloadSpec::parse(spec).unwrap_err().to_string();
            assert!(err.contains(key), "{spec}: {err}");
        }
    }
}
