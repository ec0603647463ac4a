//! `extents.txt`: where each file's pages lie on the device, as `filefrag -e -b4096`
//! prints it after a capture, one `== path` header per file:
//!
//! ```text
//! == base/16384/16397
//!    0:        0..    2047:      34816..     36863:   2048:
//!    1:     2048..    4095:      38912..     40959:   2048:      36864: last,eof
//! ```
//!
//! Each extent line is `ext: logical_start..logical_end: physical_start..physical_end:
//! length: [expected:] [flags]`, in 4 KiB blocks. A file with no extent lines holds no
//! blocks (empty); an extent flagged `unknown_loc` / `delalloc` is still only in the page
//! cache (delayed allocation) and is skipped. Lookups go both ways: a file page to its
//! device block, and a device block to the file page it holds.
//!
//! A capture may add `extents_deleted.txt` in the same format
//! ([`Extents::read_with_deleted`]):
//! the files deleted during the run (`<ino N.G>`), as the run mapped them. Their blocks
//! may since hold other files' pages, so a block can be listed more than once: a file
//! page's block is then exact, a block's page one of those it held.

use super::Lines;
use crate::error::Result;
use rustc_hash::FxHashMap;
use std::path::Path;

/// Block numbers (logical and physical) stay below this: 2^64 bytes of 4 KiB blocks.
const MAX_BLOCKS: u64 = 1 << 52;

#[derive(Clone, Copy, Debug)]
struct Extent {
    logical: u64,
    physical: u64,
    len: u64,
    file: u32,
}

/// The file → device block map of a capture.
#[derive(Debug, Default)]
pub struct Extents {
    files: Vec<String>,
    by_name: FxHashMap<String, u32>,
    /// Per file, its extents by logical start.
    by_file: Vec<Vec<Extent>>,
    /// All extents by physical start.
    by_block: Vec<Extent>,
    /// Extents not placed on the device (delayed allocation), skipped.
    unplaced: u64,
}

impl Extents {
    /// Reads `extents.txt`.
    pub fn read(path: &Path) -> Result<Extents> {
        Extents::from_lines(Lines::open(
            path,
            "file → device block map (filefrag -e -b4096)",
        )?)
    }

    /// Reads `extents.txt` from its lines.
    pub(crate) fn from_lines(lines: Lines) -> Result<Extents> {
        let mut x = Extents::default();
        x.add(lines)?;
        x.sort();
        Ok(x)
    }

    /// Reads `extents.txt` at `path` and, when the capture has it beside, the files
    /// deleted during the run (`extents_deleted.txt`).
    pub fn read_with_deleted(path: &Path) -> Result<Extents> {
        let mut x = Extents::read(path)?;
        let deleted = path.with_file_name("extents_deleted.txt");
        if deleted.exists() {
            x.add(Lines::open(
                &deleted,
                "extents of the files deleted during the run",
            )?)?;
            x.sort();
        }
        Ok(x)
    }

    fn sort(&mut self) {
        for v in &mut self.by_file {
            v.sort_by_key(|e| e.logical);
        }
        self.by_block.sort_by_key(|e| e.physical);
    }

    fn add(&mut self, mut lines: Lines) -> Result<()> {
        let x = self;
        let mut current: Option<u32> = None;
        while lines.advance()? {
            let text = lines.text().trim();
            if text.is_empty() {
                continue;
            }
            if let Some(name) = text.strip_prefix("==") {
                let name = name.trim().to_string();
                let id = x.files.len() as u32;
                x.by_name.insert(name.clone(), id);
                x.files.push(name);
                x.by_file.push(Vec::new());
                current = Some(id);
                continue;
            }
            // filefrag's own header lines.
            if text.starts_with("ext:")
                || text.starts_with("Filesystem")
                || text.contains("extent found")
                || text.contains("extents found")
            {
                continue;
            }
            let Some(file) = current else {
                return Err(lines.error("expected a `== path` header before the first extent"));
            };
            // Delayed allocation: the pages are in the page cache, not on the device yet.
            if text.contains("unknown_loc") || text.contains("delalloc") {
                x.unplaced += 1;
                continue;
            }
            let e = parse_extent(text, file).map_err(|r| lines.error(r))?;
            x.by_file[file as usize].push(e);
            x.by_block.push(e);
        }
        Ok(())
    }

    /// Extents skipped because they were not on the device yet (delayed allocation).
    pub fn unplaced(&self) -> u64 {
        self.unplaced
    }

    /// Files listed.
    pub fn files(&self) -> usize {
        self.files.len()
    }

    /// The files listed, in order.
    pub(crate) fn file_names(&self) -> impl Iterator<Item = &str> {
        self.files.iter().map(String::as_str)
    }

    /// Whether `file` is listed (even without extents).
    pub fn has_file(&self, file: &str) -> bool {
        self.by_name.contains_key(file)
    }

    /// The shallowest directory (`""` or ending in `/`) holding both a file named
    /// `name` and files under `sub`: a PostgreSQL data directory holds `PG_VERSION`
    /// and `base/` (its databases' folders hold a `PG_VERSION` too, and a capture may
    /// list no root `PG_VERSION` at all: then `""` if files lie under `sub`).
    pub fn directory_with(&self, name: &str, sub: &str) -> Option<&str> {
        let holds = |dir: &str| {
            self.files
                .iter()
                .any(|f| f.strip_prefix(dir).is_some_and(|r| r.starts_with(sub)))
        };
        self.files
            .iter()
            .filter_map(|f| {
                f.strip_suffix(name)
                    .filter(|dir| dir.is_empty() || dir.ends_with('/'))
            })
            .chain(std::iter::once(""))
            .filter(|dir| holds(dir))
            .min_by_key(|dir| (dir.matches('/').count(), dir.len()))
    }

    /// The device block holding page `page` of `file`.
    pub fn block_of(&self, file: &str, page: u64) -> Option<u64> {
        let id = *self.by_name.get(file)?;
        let v = &self.by_file[id as usize];
        let i = v.partition_point(|e| e.logical <= page).checked_sub(1)?;
        let e = v[i];
        (page < e.logical + e.len).then(|| e.physical + (page - e.logical))
    }

    /// The file page held by device block `block`: `(file, page)`.
    pub fn page_of(&self, block: u64) -> Option<(&str, u64)> {
        let i = self
            .by_block
            .partition_point(|e| e.physical <= block)
            .checked_sub(1)?;
        let e = self.by_block[i];
        (block < e.physical + e.len).then(|| {
            (
                self.files[e.file as usize].as_str(),
                e.logical + (block - e.physical),
            )
        })
    }
}

fn parse_extent(text: &str, file: u32) -> std::result::Result<Extent, String> {
    let mut parts = text.split(':').map(str::trim);
    let bad = || {
        format!(
            "expected an extent line `ext: a..b: c..d: length:` (filefrag -e -b4096), found `{text}`"
        )
    };
    let _ext = parts.next().ok_or_else(bad)?;
    let range = |s: Option<&str>| -> std::result::Result<(u64, u64), String> {
        let s = s.ok_or_else(bad)?;
        let (a, b) = s.split_once("..").ok_or_else(bad)?;
        let a: u64 = a.trim().parse().map_err(|_| bad())?;
        let b: u64 = b.trim().parse().map_err(|_| bad())?;
        if b < a {
            return Err(format!("an extent ending before it starts: `{s}`"));
        }
        Ok((a, b))
    };
    let (l0, l1) = range(parts.next())?;
    let (p0, p1) = range(parts.next())?;
    if l1 >= MAX_BLOCKS || p1 >= MAX_BLOCKS {
        return Err(format!(
            "an extent beyond 2^52 blocks of 4 KiB (2^64 bytes) in `{text}`"
        ));
    }
    if l1 - l0 != p1 - p0 {
        return Err(format!(
            "logical and physical ranges of different lengths in `{text}`"
        ));
    }
    Ok(Extent {
        logical: l0,
        physical: p0,
        len: l1 - l0 + 1,
        file,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    #[test]
    fn both_ways() {
        let dir = std::env::temp_dir().join(format!("zs-extents-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let p = dir.join("extents.txt");
        let mut f = std::fs::File::create(&p).unwrap();
        writeln!(
            f,
            "== a\n   0:        0..       1:      33308..     33309:      2:             last,eof\n== empty\n   0:        0..      39:          0..         0:      0:             last,unknown_loc,delalloc,eof\n== b\n   0:        0..       3:        100..       103:      4:\n   1:        4..       5:        200..       201:      2:        104: last,eof"
        )
        .unwrap();
        drop(f);
        let x = Extents::read(&p).unwrap();
        assert_eq!(x.files(), 3);
        assert_eq!(x.block_of("a", 1), Some(33309));
        assert_eq!(x.block_of("a", 2), None);
        assert_eq!(x.block_of("b", 5), Some(201));
        assert_eq!(x.block_of("empty", 0), None);
        assert!(x.has_file("empty") && !x.has_file("c"));
        assert_eq!(x.page_of(102), Some(("b", 2)));
        assert_eq!(x.page_of(104), None);
        assert_eq!(x.directory_with("b", "a"), Some(""));
        assert_eq!(x.directory_with("PG_VERSION", "base/"), None);
        std::fs::write(&p, "   0: 0..1: 5..6: 2:\n").unwrap();
        let err = Extents::read(&p).unwrap_err().to_string();
        assert!(err.contains(":1: expected a `== path` header"), "{err}");
        std::fs::write(&p, "== a\n   0: 0..1: x..6: 2:\n").unwrap();
        let err = Extents::read(&p).unwrap_err().to_string();
        assert!(err.contains(":2: expected an extent line"), "{err}");
        // Block numbers whose byte address or extent length overflowed 64 bits.
        for line in [
            "   0: 0..18446744073709551615: 0..18446744073709551615: 0:",
            "   0: 0..1: 4503599627370495..4503599627370496: 2:",
        ] {
            std::fs::write(&p, format!("== a\n{line}\n")).unwrap();
            let err = Extents::read(&p).unwrap_err().to_string();
            assert!(err.contains(":2: an extent beyond 2^52 blocks"), "{err}");
        }
        std::fs::write(
            &p,
            "== a\n   0: 0..1: 4503599627370493..4503599627370494: 2:\n",
        )
        .unwrap();
        let x = Extents::read(&p).unwrap();
        assert_eq!(x.block_of("a", 1), Some(4503599627370494));
        assert_eq!(x.page_of(4503599627370494), Some(("a", 1)));
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_postgres_data_directory_is_where_base_is() {
        let x = |text: &str| {
            Extents::from_lines(crate::import::memory_lines("extents.txt", text.as_bytes()))
                .unwrap()
        };
        let nested =
            x("== pgdata/PG_VERSION\n== pgdata/base/5/PG_VERSION\n== pgdata/base/5/1259\n");
        assert_eq!(
            nested.directory_with("PG_VERSION", "base/"),
            Some("pgdata/")
        );
        // The shared pgbench capture: no root PG_VERSION listed, base/ at the root.
        let root = x("== base/4/PG_VERSION\n== base/4/1259\n== global/1262\n");
        assert_eq!(root.directory_with("PG_VERSION", "base/"), Some(""));
    }
}
