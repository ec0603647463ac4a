//! A workload specification as written, `NAME:key=value,...`: its text, its name and
//! its pairs ([`WorkloadSpec`]), and the reader that takes its keys one by one and
//! refuses the ones no one took ([`Keys`]). What the keys mean is for the parsers
//! that read them: `spec.rs` (the synthetic workloads and `oltp`) and `fs_spec.rs`.

use super::catalog::{COMMON_KEYS, MAX_DRIVE_WRITES, MAX_REQUESTS, WORKLOADS};
use super::synthetic::Length;
use crate::error::{Error, Result};
use crate::units::parse_bytes;

/// A parsed, checked workload specification.
#[derive(Clone, Debug, PartialEq)]
pub struct WorkloadSpec {
    pub(super) text: String,
    pub(super) name: String,
    pub(super) pairs: Vec<(String, String)>,
}

impl WorkloadSpec {
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

    pub(super) fn length(
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
