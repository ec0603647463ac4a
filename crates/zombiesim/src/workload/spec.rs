//! Parsing and checking `NAME:key=value,...` workload specifications.

use super::catalog::WORKLOADS;
use super::keys::{Keys, WorkloadSpec};
use super::oltp::OltpWorkload;
use super::synthetic::{AddressModel, Rate, Synthetic};
use crate::error::{Error, Result};

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
        if name == "flows" {
            super::flows::parse(text, rest)?;
            return Ok(WorkloadSpec {
                text: text.to_string(),
                name: name.to_string(),
                pairs: Vec::new(),
            });
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

    /// The flows of a `flows:` spec (`None` for every other workload).
    pub fn flows(&self) -> Result<Option<Vec<super::flows::FlowSpec>>> {
        if self.name != "flows" {
            return Ok(None);
        }
        let rest = self.text.split_once(':').map_or("", |(_, r)| r.trim());
        super::flows::parse(&self.text, rest).map(Some)
    }

    /// `oltp`'s transactions, table fraction and log fraction.
    fn oltp_params(&self, logical_pages: u64) -> Result<(u64, f64, f64)> {
        let mut keys = self.keys();
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
        let mut keys = self.keys();
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
        let mut writers = None;
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
                let recur = keys.fraction("recur", 0.0)?;
                if unique + rebirth + recur > 1.0 + 1e-12 {
                    return Err(keys.bad(
                        "recur",
                        &recur.to_string(),
                        "a fraction with `unique` + `rebirth` + `recur` at most 1",
                    ));
                }
                let recur_pages = keys.integer("recur_pages", (logical_pages / 1024).max(1))?;
                if recur_pages == 0 || recur_pages > logical_pages {
                    return Err(keys.bad(
                        "recur_pages",
                        &recur_pages.to_string(),
                        &format!("1 to {logical_pages} pages (the logical space)"),
                    ));
                }
                let recur_zipf = keys.number("recur_zipf", 1.0)?;
                if !(recur_zipf >= 0.0 && recur_zipf.is_finite()) {
                    return Err(keys.bad(
                        "recur_zipf",
                        &recur_zipf.to_string(),
                        "a non-negative number",
                    ));
                }
                values = Some(
                    super::ValueModel::new(unique, zipf, catalog, seed)
                        .with_rebirth(rebirth, gap, logical_pages)
                        .with_recurring(recur, recur_pages, recur_zipf, logical_pages),
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
            "streams" => {
                writers = Some(super::writers::streams(
                    &mut keys,
                    logical_pages,
                    page_size,
                    req_pages,
                    seed,
                )?);
                AddressModel::Uniform
            }
            "kvcache" => {
                if req_pages != 1 {
                    return Err(keys.bad(
                        "size",
                        &size.to_string(),
                        "one page (a bucket is a page; regions are `region`)",
                    ));
                }
                writers = Some(super::writers::kvcache(
                    &mut keys,
                    logical_pages,
                    page_size,
                    seed,
                )?);
                AddressModel::Uniform
            }
            other => unreachable!("workload `{other}` passed parse()"),
        };
        keys.finish()?;
        let synthetic = Synthetic::new(
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
        .with_rate(rate);
        Ok(match writers {
            Some(w) => synthetic.with_writers(w),
            None => synthetic,
        })
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
