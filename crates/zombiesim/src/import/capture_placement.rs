//! Placement identifiers of a capture's device writes (`--placement`): by file, or by
//! the Linux write-life hint `zombiesim capture` reads off each file at the end of the
//! run (`hints.txt`: `hint path`).

use super::{ImportReport, Lines};
use crate::error::{Error, Result};
use crate::trace::NativeHeader;
use rustc_hash::FxHashMap;
use std::collections::BTreeMap;
use std::str::FromStr;

/// Where an imported capture's device writes get their placement identifiers.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum CapturePlacement {
    /// None: a version-2 trace.
    #[default]
    None,
    /// By file: writes of no file (file-system metadata, writes the extents place
    /// nowhere) get 0, the files 1, 2, … in the order of their first write, wrapped to
    /// `1..ids` (`file:N`, `ids` = N ≥ 2; `file` alone 8, the `fdp` preset's handles).
    File { ids: u32 },
    /// The file's Linux write-life hint (`F_SET_RW_HINT`, read from `hints.txt`):
    /// 0 not set (and writes of no file), 1 none, 2 short, 3 medium, 4 long, 5 extreme.
    Hint,
}

/// The identifiers `file` alone spreads files over.
pub const FILE_PLACEMENT_IDS: u32 = 8;

/// Linux's largest write-life hint (`RWH_WRITE_LIFE_EXTREME`).
pub const MAX_WRITE_LIFE_HINT: u16 = 5;

impl FromStr for CapturePlacement {
    type Err = Error;

    /// `none`, `file`, `file:N` (2 ≤ N ≤ 65 536) or `hint`; an error names `placement`.
    fn from_str(s: &str) -> Result<Self> {
        let bad = |why: &str| {
            Error::config(
                "placement",
                format!(
                    "`{s}`: {why}; expected none, file, file:N (N identifiers, 2-65536) or hint"
                ),
            )
        };
        match s {
            "none" => Ok(CapturePlacement::None),
            "file" => Ok(CapturePlacement::File {
                ids: FILE_PLACEMENT_IDS,
            }),
            "hint" => Ok(CapturePlacement::Hint),
            _ => match s.strip_prefix("file:") {
                Some(n) => match n.parse::<u32>() {
                    Ok(ids @ 2..=65_536) => Ok(CapturePlacement::File { ids }),
                    _ => Err(bad("the number of identifiers is not 2-65536")),
                },
                None => Err(bad("unknown")),
            },
        }
    }
}

/// Gives each device write its placement identifier, and counts them.
pub(super) struct Placer {
    mode: CapturePlacement,
    /// File → its ordinal among the files written so far (`File`).
    files: FxHashMap<String, u32>,
    /// File → its write-life hint (`Hint`).
    hints: FxHashMap<String, u16>,
    /// Writes per identifier.
    writes: BTreeMap<u16, u64>,
}

impl Placer {
    pub(super) fn new(mode: CapturePlacement, hints: FxHashMap<String, u16>) -> Self {
        Placer {
            mode,
            files: FxHashMap::default(),
            hints,
            writes: BTreeMap::new(),
        }
    }

    /// The identifier of a write of `file` (None: a write of no file).
    pub(super) fn place(&mut self, file: Option<&str>) -> Option<u16> {
        let id = match (self.mode, file) {
            (CapturePlacement::None, _) => return None,
            (_, None) => 0,
            (CapturePlacement::File { ids }, Some(f)) => {
                let n = self.files.len() as u32;
                let ordinal = match self.files.get(f) {
                    Some(&o) => o,
                    None => *self.files.entry(f.to_string()).or_insert(n),
                };
                // At most 65 535: `ids` ≤ 65 536.
                (1 + ordinal % (ids - 1)) as u16
            }
            (CapturePlacement::Hint, Some(f)) => self.hints.get(f).copied().unwrap_or(0),
        };
        *self.writes.entry(id).or_default() += 1;
        Some(id)
    }

    /// `placement_writes_<id>` and `placement_files` in the report's details.
    pub(super) fn summarize(&self, report: &mut ImportReport) {
        if self.mode == CapturePlacement::None {
            return;
        }
        for (id, n) in &self.writes {
            report.details.insert(format!("placement_writes_{id}"), *n);
        }
        if matches!(self.mode, CapturePlacement::File { .. }) {
            report
                .details
                .insert("placement_files".into(), self.files.len() as u64);
        } else {
            report
                .details
                .insert("hinted_files".into(), self.hints.len() as u64);
        }
    }
}

pub(super) fn header(placement: CapturePlacement) -> NativeHeader {
    NativeHeader::new(true, true).with_placement(placement != CapturePlacement::None)
}

/// `hints.txt` (`hint path`): path → write-life hint (0-5).
pub(super) fn read_hints(mut lines: Lines) -> Result<FxHashMap<String, u16>> {
    let mut map = FxHashMap::default();
    while lines.advance()? {
        let l = lines.text();
        if l.trim().is_empty() {
            continue;
        }
        let Some((hint, path)) = l.split_once(' ') else {
            return Err(lines.error(format!("expected `hint path`, found `{l}`")));
        };
        match hint.parse::<u16>() {
            Ok(h) if h <= MAX_WRITE_LIFE_HINT => {
                map.insert(path.to_string(), h);
            }
            _ => {
                return Err(lines.error(format!(
                    "expected a write-life hint 0-{MAX_WRITE_LIFE_HINT}, found `{hint}`"
                )))
            }
        }
    }
    Ok(map)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn placement_parses_and_names_its_key() {
        assert_eq!(
            "file".parse::<CapturePlacement>().unwrap(),
            CapturePlacement::File { ids: 8 }
        );
        assert_eq!(
            "file:65536".parse::<CapturePlacement>().unwrap(),
            CapturePlacement::File { ids: 65_536 }
        );
        for bad in ["file:1", "file:65537", "file:x", "inode", ""] {
            let e = bad.parse::<CapturePlacement>().unwrap_err().to_string();
            assert!(
                e.contains("placement") && e.contains("file:N"),
                "{bad}: {e}"
            );
        }
    }
}
