//! Parsing and checking `NAME:key=value,...` workload specifications.

use super::oltp::OltpWorkload;
use super::synthetic::{AddressModel, Length, Rate, Synthetic};
use crate::error::{Error, Result};
use crate::units::parse_bytes;

/// A known workload: its name, its keys and a one-line description.
#[derive(Clone, Copy, Debug)]
pub struct WorkloadInfo {
    pub name: &'static str,
    pub keys: &'static str,
    pub description: &'static str,
}

/// The longest synthetic run, in drive writes (`drive_writes`, `bytes`).
pub const MAX_DRIVE_WRITES: f64 = 100_000.0;
/// The most requests a synthetic run may ask for (`requests`).
pub const MAX_REQUESTS: u64 = 1_000_000_000_000;

const COMMON_KEYS: &str = "read=0, trim=0, size=PAGE, reads=same|uniform, \
    one of drive_writes=1 | requests=N | bytes=SIZE, iops=N (open-loop arrivals)";

/// Every synthetic workload, for listings.
pub const WORKLOADS: &[WorkloadInfo] = &[
    WorkloadInfo {
        name: "uniform",
        keys: "",
        description: "writes uniformly random over the logical space",
    },
    WorkloadInfo {
        name: "sequential",
        keys: "start=0",
        description: "writes in ascending order from `start` (a page), wrapping at the end",
    },
    WorkloadInfo {
        name: "hotcold",
        keys: "r=0.9, f=0.1",
        description: "a fraction r of writes go to the first fraction f of the space",
    },
    WorkloadInfo {
        name: "locality",
        keys: "x=6",
        description:
            "Zombie Chasing locality: (100-x)% of writes to the first x% of space; reads uniform",
    },
    WorkloadInfo {
        name: "zc-micro",
        keys: "x=6, rw=0.5, size=16KiB, drive_writes=0.172",
        description: "000's micro-benchmark: locality x, rw reads per write (uniform), \
            16 KiB requests, 5.12 GB written per 29.8 GB of logical space",
    },
    WorkloadInfo {
        name: "oltp",
        keys: "transactions=N, db=0.9, log=0.01",
        description: "TPC-C-like transactions through the host cache (the DB buffer); \
            needs timing and host.cache; users = host.threads",
    },
    WorkloadInfo {
        name: "fs",
        keys: "BENCH = seq_write | rnd_write | postmark | untar | kernel_compile, vms=8, \
            journal=ordered|writeback|journal|vma, partition=SPACE/vms, block=4KiB, \
            journal_size=mke2fs default, commit=5 (s), memory=96MiB (page cache per VM), \
            vma_area=the VM's cache in blocks, sync=true, fsync=0, and the benchmark's \
            keys (docs/journaling.md); none of the common keys",
        description: "ext3-like file systems, one per VM partition, with their journal, \
            running a file-level benchmark through the host page cache (002)",
    },
    WorkloadInfo {
        name: "zipf",
        keys: "theta=0.99, scramble=true",
        description:
            "Zipf(theta) over request-sized slots; scramble spreads hot slots over the space",
    },
    WorkloadInfo {
        name: "values",
        keys: "zipf=1.1, unique=0.3, catalog=PAGES/4, rebirth=0, gap=64",
        description: "one-page writes at uniform addresses carrying content fingerprints: a \
            fraction `unique` fresh, a fraction `rebirth` rewriting a value that died about \
            `gap` page writes ago (exponential; no live page holds it), the rest \
            Zipf(zipf) over `catalog` values",
    },
    WorkloadInfo {
        name: "footprint",
        keys: "growth=0.05, window=64MiB, theta=0, phase=0, pause=0",
        description: "a written footprint growing by a fraction `growth` of writes (fresh \
            pages); the rest rewrite the `window` newest ones (Zipf(theta) by recency); \
            a fraction `pause` of the phases of `phase` bytes do not grow",
    },
    WorkloadInfo {
        name: "files",
        keys: "file=256KiB, seq=0.5, hot=0.05, r=0.9",
        description: "file-system-like writes: the space cut into files of `file` bytes; an \
            access picks a hot file (the first fraction `hot` of them) with probability r, \
            then rewrites the whole file in order (probability seq) or one request of it",
    },
];

impl WorkloadInfo {
    /// Keys every synthetic workload accepts.
    pub fn common_keys() -> &'static str {
        COMMON_KEYS
    }
}

/// A parsed, checked workload specification.
#[derive(Clone, Debug, PartialEq)]
pub struct WorkloadSpec {
    text: String,
    name: String,
    pairs: Vec<(String, String)>,
}

impl WorkloadSpec {
    /// Parse `NAME` or `NAME:key=value,...`; unknown names and keys are errors.
    pub fn parse(text: &str) -> Result<WorkloadSpec> {
        let text = text.trim();
        let (name, rest) = match text.split_once(':') {
            Some((n, r)) => (n.trim(), r.trim()),
            None => (text, ""),
        };
        if !WORKLOADS.iter().any(|w| w.name == name) {
            let known: Vec<_> = WORKLOADS.iter().map(|w| w.name).collect();
            return Err(Error::workload(
                text,
                format!("unknown workload `{name}` (known: {})", known.join(", ")),
            ));
        }
        let mut pairs = Vec::new();
        for (i, item) in rest
            .split(',')
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .enumerate()
        {
            // `fs:BENCH,...`: the benchmark comes first, without a key.
            let item = if name == "fs" && i == 0 && !item.contains('=') {
                format!("bench={item}")
            } else {
                item.to_string()
            };
            let (k, v) = item
                .split_once('=')
                .ok_or_else(|| Error::workload(text, format!("`{item}` is not `key=value`")))?;
            let (k, v) = (k.trim().to_string(), v.trim().to_string());
            if pairs.iter().any(|(pk, _)| *pk == k) {
                return Err(Error::workload(text, format!("key `{k}` given twice")));
            }
            pairs.push((k, v));
        }
        let spec = WorkloadSpec {
            text: text.to_string(),
            name: name.to_string(),
            pairs,
        };
        // Check every key and value now, against a nominal device size.
        if spec.name == "oltp" {
            spec.oltp_params(1 << 20)?;
        } else if spec.name == "fs" {
            super::FsParams::parse(&spec)?;
        } else {
            spec.build(1 << 20, 4096, 0)?;
        }
        Ok(spec)
    }

    /// Its keys, for a parser that takes them one by one.
    pub(crate) fn keys(&self) -> Keys<'_> {
        Keys {
            spec: self,
            used: vec![false; self.pairs.len()],
        }
    }

    /// The workload's name (`uniform`, `hotcold`, ...).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The spec as the user wrote it.
    pub fn as_str(&self) -> &str {
        &self.text
    }

    /// `oltp`'s transactions, table fraction and log fraction.
    fn oltp_params(&self, logical_pages: u64) -> Result<(u64, f64, f64)> {
        let mut keys = Keys {
            spec: self,
            used: vec![false; self.pairs.len()],
        };
        let transactions = keys.integer("transactions", (logical_pages / 16).max(1))?;
        let db = keys.fraction("db", 0.9)?;
        let log = keys.fraction("log", 0.01)?;
        keys.finish()?;
        if db <= 0.0 || db + log > 1.0 {
            return Err(keys.bad(
                "db",
                &db.to_string(),
                "a fraction above 0, with db + log <= 1",
            ));
        }
        Ok((transactions, db, log))
    }

    /// For `oltp`, the transaction generator for the host model (`None` for the others).
    pub fn build_oltp(
        &self,
        cfg: &crate::config::Config,
        logical_pages: u64,
        seed: u64,
    ) -> Result<Option<OltpWorkload>> {
        if self.name != "oltp" {
            return Ok(None);
        }
        let (transactions, db, log) = self.oltp_params(logical_pages)?;
        if cfg.host.cache.bytes() == 0 || cfg.host.threads == 0 {
            return Err(Error::workload(
                &self.text,
                "`oltp` needs the database buffer and its users: set host.cache and host.threads",
            ));
        }
        let log_pages = ((logical_pages as f64 * log) as u64).max(1);
        Ok(Some(OltpWorkload::new(
            logical_pages,
            db,
            log_pages,
            transactions,
            cfg.host.threads as usize,
            seed,
        )))
    }

    /// Build the request stream for a device of `logical_pages` pages of `page_size` bytes.
    pub fn build(&self, logical_pages: u64, page_size: u64, seed: u64) -> Result<Synthetic> {
        let mut keys = Keys {
            spec: self,
            used: vec![false; self.pairs.len()],
        };
        if self.name == "oltp" || self.name == "fs" {
            return Err(Error::workload(
                &self.text,
                format!(
                    "`{}` runs on the host model only (zombiesim run/simulate builds it)",
                    self.name
                ),
            ));
        }
        let zc = self.name == "zc-micro";
        let rw = if zc { keys.take("rw") } else { None };
        let read = match rw {
            Some(v) => {
                if self.pairs.iter().any(|(k, _)| k == "read") {
                    return Err(Error::workload(&self.text, "give rw or read, not both"));
                }
                let rw = v
                    .parse::<f64>()
                    .ok()
                    .filter(|r| r.is_finite() && *r >= 0.0)
                    .ok_or_else(|| {
                        keys.bad("rw", &v, "a non-negative number of reads per write")
                    })?;
                rw / (1.0 + rw)
            }
            // zc-micro's default: 0.5 reads per write.
            None => keys.fraction("read", if zc { 1.0 / 3.0 } else { 0.0 })?,
        };
        let trim = keys.fraction("trim", 0.0)?;
        if read + trim > 1.0 {
            return Err(Error::workload(&self.text, "read + trim must not exceed 1"));
        }
        let size = keys.bytes("size", if zc { 16 << 10 } else { page_size })?;
        if size == 0 {
            return Err(Error::workload(&self.text, "size must be positive"));
        }
        let req_pages = size.div_ceil(page_size);
        if req_pages > logical_pages {
            return Err(Error::workload(
                &self.text,
                format!("size = {size} bytes is larger than the device's logical space"),
            ));
        }
        let mut uniform_reads = self.name == "locality" || zc;
        if let Some(v) = keys.take("reads") {
            uniform_reads = match v.as_str() {
                "same" => false,
                "uniform" => true,
                _ => return Err(keys.bad("reads", &v, "`same` or `uniform`")),
            };
        }
        // 000: 5.12 GB written on a 29.8 GB logical space.
        let default_dw = if zc { 5.12 / 29.8 } else { 1.0 };
        let length = keys.length(logical_pages, page_size, read + trim, default_dw)?;
        let rate = match keys.take("iops") {
            None => None,
            Some(v) => Some(Rate::new(
                v.parse::<f64>()
                    .ok()
                    .filter(|x| x.is_finite() && *x > 0.0)
                    .ok_or_else(|| {
                        keys.bad("iops", &v, "a positive number of requests per second")
                    })?,
            )),
        };
        let mut values = None;
        let model = match self.name.as_str() {
            "uniform" => AddressModel::Uniform,
            "sequential" => AddressModel::Sequential {
                start: keys.integer("start", 0)?,
            },
            "hotcold" => {
                let r = keys.fraction("r", 0.9)?;
                let f = keys.fraction("f", 0.1)?;
                if f <= 0.0 || f >= 1.0 {
                    return Err(keys.bad(
                        "f",
                        &f.to_string(),
                        "a fraction strictly between 0 and 1",
                    ));
                }
                AddressModel::HotCold { r, f }
            }
            "locality" | "zc-micro" => {
                let x = keys.number("x", 6.0)?;
                if !(x > 0.0 && x < 100.0) {
                    return Err(keys.bad(
                        "x",
                        &x.to_string(),
                        "a percentage strictly between 0 and 100",
                    ));
                }
                AddressModel::HotCold {
                    r: (100.0 - x) / 100.0,
                    f: x / 100.0,
                }
            }
            "zipf" => {
                let theta = keys.number("theta", 0.99)?;
                if !(theta >= 0.0 && theta.is_finite()) {
                    return Err(keys.bad("theta", &theta.to_string(), "a non-negative number"));
                }
                let scramble = keys.boolean("scramble", true)?;
                AddressModel::Zipf { theta, scramble }
            }
            "values" => {
                if req_pages != 1 {
                    return Err(keys.bad(
                        "size",
                        &size.to_string(),
                        "one page (a fingerprint is per page)",
                    ));
                }
                let zipf = keys.number("zipf", 1.1)?;
                if zipf < 0.0 {
                    return Err(keys.bad("zipf", &zipf.to_string(), "a non-negative number"));
                }
                let unique = keys.fraction("unique", 0.3)?;
                let catalog = keys.integer("catalog", (logical_pages / 4).max(1))?;
                if catalog == 0 {
                    return Err(keys.bad("catalog", "0", "at least 1 value"));
                }
                let rebirth = keys.fraction("rebirth", 0.0)?;
                if unique + rebirth > 1.0 {
                    return Err(keys.bad(
                        "rebirth",
                        &rebirth.to_string(),
                        "a fraction with `unique` + `rebirth` at most 1",
                    ));
                }
                let gap = keys.number("gap", 64.0)?;
                if !(gap >= 0.0 && gap.is_finite()) {
                    return Err(keys.bad("gap", &gap.to_string(), "a non-negative number"));
                }
                values = Some(
                    super::ValueModel::new(unique, zipf, catalog, seed).with_rebirth(
                        rebirth,
                        gap,
                        logical_pages,
                    ),
                );
                AddressModel::Uniform
            }
            "footprint" => footprint_model(&mut keys, page_size, size)?,
            "files" => {
                let file = keys.bytes("file", 256 << 10)?;
                if file < size {
                    return Err(keys.bad(
                        "file",
                        &file.to_string(),
                        "at least one request (`size`) of bytes",
                    ));
                }
                let hot = keys.fraction("hot", 0.05)?;
                if hot <= 0.0 {
                    return Err(keys.bad("hot", &hot.to_string(), "a fraction above 0"));
                }
                AddressModel::Files {
                    file_slots: file / (req_pages * page_size).max(1),
                    seq: keys.fraction("seq", 0.5)?,
                    hot,
                    r: keys.fraction("r", 0.9)?,
                }
            }
            other => unreachable!("workload `{other}` passed parse()"),
        };
        keys.finish()?;
        Ok(Synthetic::new(
            model,
            logical_pages,
            req_pages,
            read,
            trim,
            uniform_reads,
            length,
            seed,
        )
        .with_values(values)
        .with_rate(rate))
    }
}

/// `footprint`'s keys, checked, for requests of `size` bytes.
fn footprint_model(keys: &mut Keys, page_size: u64, size: u64) -> Result<AddressModel> {
    let growth = keys.fraction("growth", 0.05)?;
    let window = keys.bytes("window", 64 << 20)?;
    if window < size {
        return Err(keys.bad(
            "window",
            &window.to_string(),
            &format!("at least one request ({size} bytes)"),
        ));
    }
    let theta = keys.number("theta", 0.0)?;
    if theta < 0.0 {
        return Err(keys.bad("theta", &theta.to_string(), "a non-negative number"));
    }
    let phase = keys.bytes("phase", 0)?;
    let pause = keys.fraction("pause", 0.0)?;
    if pause >= 1.0 {
        return Err(keys.bad("pause", &pause.to_string(), "a fraction in [0, 1)"));
    }
    if pause > 0.0 && phase == 0 {
        return Err(keys.bad(
            "pause",
            &pause.to_string(),
            "0 unless `phase` (bytes per phase) is set",
        ));
    }
    Ok(AddressModel::Footprint {
        growth,
        window_pages: window.div_ceil(page_size),
        theta,
        phase_pages: phase.div_ceil(page_size),
        pause,
    })
}

/// A spec's keys, each taken at most once; [`Keys::finish`] refuses the ones left.
pub(crate) struct Keys<'a> {
    spec: &'a WorkloadSpec,
    used: Vec<bool>,
}

impl Keys<'_> {
    pub(crate) fn take(&mut self, key: &str) -> Option<String> {
        let i = self.spec.pairs.iter().position(|(k, _)| k == key)?;
        self.used[i] = true;
        Some(self.spec.pairs[i].1.clone())
    }

    pub(crate) fn bad(&self, key: &str, value: &str, want: &str) -> Error {
        Error::workload(&self.spec.text, format!("{key} = {value}: expected {want}"))
    }

    pub(crate) fn number(&mut self, key: &str, default: f64) -> Result<f64> {
        match self.take(key) {
            None => Ok(default),
            Some(v) => v
                .parse::<f64>()
                .ok()
                .filter(|x| x.is_finite())
                .ok_or_else(|| self.bad(key, &v, "a number")),
        }
    }

    pub(crate) fn fraction(&mut self, key: &str, default: f64) -> Result<f64> {
        let x = self.number(key, default)?;
        if (0.0..=1.0).contains(&x) {
            Ok(x)
        } else {
            Err(self.bad(key, &x.to_string(), "a fraction in [0, 1]"))
        }
    }

    pub(crate) fn integer(&mut self, key: &str, default: u64) -> Result<u64> {
        match self.take(key) {
            None => Ok(default),
            Some(v) => v
                .parse::<u64>()
                .map_err(|_| self.bad(key, &v, "a whole number")),
        }
    }

    pub(crate) fn bytes(&mut self, key: &str, default: u64) -> Result<u64> {
        match self.take(key) {
            None => Ok(default),
            Some(v) => parse_bytes(&v).map_err(|e| self.bad(key, &v, &format!("a size ({e})"))),
        }
    }

    pub(crate) fn boolean(&mut self, key: &str, default: bool) -> Result<bool> {
        match self.take(key) {
            None => Ok(default),
            Some(v) => match v.as_str() {
                "true" | "1" | "yes" => Ok(true),
                "false" | "0" | "no" => Ok(false),
                _ => Err(self.bad(key, &v, "true or false")),
            },
        }
    }

    fn length(
        &mut self,
        logical_pages: u64,
        page_size: u64,
        non_write: f64,
        default_drive_writes: f64,
    ) -> Result<Length> {
        let dw = self.take("drive_writes");
        let rq = self.take("requests");
        let by = self.take("bytes");
        let given = [dw.is_some(), rq.is_some(), by.is_some()]
            .iter()
            .filter(|&&b| b)
            .count();
        if given > 1 {
            return Err(Error::workload(
                &self.spec.text,
                "give at most one of drive_writes, requests, bytes",
            ));
        }
        let write_pages = |pages: f64| -> Result<Length> {
            if non_write >= 1.0 && pages > 0.0 {
                return Err(Error::workload(
                    &self.spec.text,
                    "a length in written data needs some writes (read + trim < 1); use requests=N",
                ));
            }
            Ok(Length::WritePages(pages.round() as u64))
        };
        if let Some(v) = rq {
            return v
                .parse::<u64>()
                .ok()
                .filter(|n| (1..=MAX_REQUESTS).contains(n))
                .map(Length::Requests)
                .ok_or_else(|| {
                    self.bad(
                        "requests",
                        &v,
                        &format!("a whole number from 1 to {MAX_REQUESTS}"),
                    )
                });
        }
        let most = MAX_DRIVE_WRITES * logical_pages as f64;
        if let Some(v) = by {
            let b = parse_bytes(&v)
                .ok()
                .filter(|&b| b > 0 && b as f64 / page_size as f64 <= most)
                .ok_or_else(|| {
                    self.bad(
                        "bytes",
                        &v,
                        &format!("a size above 0 of at most {MAX_DRIVE_WRITES} drive writes"),
                    )
                })?;
            return write_pages((b as f64 / page_size as f64).ceil());
        }
        let d = match dw {
            Some(v) => v
                .parse::<f64>()
                .ok()
                .filter(|x| x.is_finite() && *x > 0.0 && *x <= MAX_DRIVE_WRITES)
                .ok_or_else(|| {
                    self.bad(
                        "drive_writes",
                        &v,
                        &format!("a number above 0 and at most {MAX_DRIVE_WRITES}"),
                    )
                })?,
            None => default_drive_writes,
        };
        write_pages(d * logical_pages as f64)
    }

    pub(crate) fn finish(&self) -> Result<()> {
        if let Some(i) = self.used.iter().position(|u| !u) {
            let key = &self.spec.pairs[i].0;
            let info = WORKLOADS
                .iter()
                .find(|w| w.name == self.spec.name)
                .expect("known");
            let common = if matches!(self.spec.name.as_str(), "fs" | "oltp") {
                ""
            } else {
                COMMON_KEYS
            };
            let sep = if info.keys.is_empty() || common.is_empty() {
                ""
            } else {
                ", "
            };
            return Err(Error::workload(
                &self.spec.text,
                format!(
                    "unknown key `{key}` for `{}` (its keys: {}{sep}{common})",
                    self.spec.name, info.keys
                ),
            ));
        }
        Ok(())
    }
}
