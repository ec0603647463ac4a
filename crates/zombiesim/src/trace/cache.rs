//! A cache of parsed text traces: the second replay of a text trace reads the records
//! the first one parsed, in the native format, instead of parsing the text again.
//!
//! ```text
//!   first replay:   trace.csv ─► TraceReader (parse) ─► records ─► the simulation
//!                                      └─ Recorder ─► <dir>/<key>.trace.tmp
//!                   at the end of the trace:  rename ─► <key>.trace, then <key>.json
//!   next replays:   <key>.json matches ─► CachedTrace: <key>.trace read as native,
//!                   presented as trace.csv (its name, format, skipped lines), on a
//!                   reader thread as the text would have been (`ReadAhead::cached`)
//! ```
//!
//! **What is cached.** The records exactly as the text reader returned them: after the
//! device filter, the time base, offset and scale and the skipping of malformed lines,
//! with their content values (hashed formats). A record's device number is kept when it
//! fits the native format's 16 bits and is 0 otherwise: a replay uses it only for the
//! device filter, which was applied before the record was cached. Beside the records, the
//! entry's `.json` keeps what else the reader reported: how many lines it had skipped as
//! of each record (the changes only), the first [`MAX_SKIPPED_EXAMPLES`] skipped lines,
//! and where the trace ended. A replay from the cache therefore returns the same records,
//! values and skipped-line counts at every record, and so gives a byte-identical report.
//!
//! **The key.** The trace file's canonical path, length and modification time, the
//! format, every read option, and this version of zombiesim; the `.json` holds the whole
//! key and a lookup compares all of it (the file name is only its hash). A trace edited
//! in place with the same length and modification time is not noticed. Only regular
//! files are cached: a pipe or a device says nothing of what it will hold.
//!
//! **When an entry is written.** Only when the reader reaches the end of the trace
//! without an error: a replay stopped early (a record limit, an interrupted run, an
//! error) leaves nothing behind. A trace the native format cannot hold (a request of
//! 4 GiB or more, content values other than one per 4 KiB written) is not cached, nor
//! is one whose records alone would exceed the cache's size. Writing never fails a run:
//! a cache that cannot be written (a full disk, no permission) is skipped.
//!
//! **Size.** After writing an entry, the least recently used entries (a hit refreshes
//! an entry's `.json` modification time) are removed until the cache holds at most its
//! `max_bytes`, and temporary files older than a day (a process killed while
//! recording) are removed.
//!
//! **Where.** [`TraceCache::from_env`]: `$ZOMBIESIM_TRACE_CACHE` (a directory, or `off`),
//! else `$XDG_CACHE_HOME/zombiesim/traces`, else `~/.cache/zombiesim/traces`; the size
//! bound `$ZOMBIESIM_TRACE_CACHE_MAX` (default [`DEFAULT_MAX_BYTES`]). The library
//! caches only when asked ([`crate::RunOptions::trace_cache`]); the command line and
//! the Python package ask by default.

use super::native::RECORD_BYTES;
use super::reader::Tee;
use super::{
    NativeHeader, ReadOptions, SkippedLine, TraceFormat, TraceReader, TraceRecord, TraceWriter,
    MAX_SKIPPED_EXAMPLES,
};
use crate::error::{Error, Result};
use serde::{Deserialize, Serialize};
use std::fs::{self, File};
use std::hash::Hasher;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, SystemTime};

/// Bytes the cache may hold unless `$ZOMBIESIM_TRACE_CACHE_MAX` says otherwise: 8 GiB.
pub const DEFAULT_MAX_BYTES: u64 = 8 << 30;
/// The environment variable naming the cache's directory (or `off`).
pub const CACHE_ENV: &str = "ZOMBIESIM_TRACE_CACHE";
/// The environment variable bounding the cache's size (`8GiB`, `500MB`, bytes).
pub const CACHE_MAX_ENV: &str = "ZOMBIESIM_TRACE_CACHE_MAX";
/// Changes of the skipped-line count a cached entry may record; a trace whose malformed
/// lines are spread wider than this is not cached.
const MAX_SKIP_CHANGES: usize = 1 << 20;
/// Bumped whenever what an entry holds changes meaning.
const LAYOUT: u32 = 1;
/// Temporary files older than this are a killed recorder's, and removed.
const STALE_TMP: Duration = Duration::from_secs(24 * 3600);

/// Where parsed text traces are kept, and how much of them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TraceCache {
    /// The directory of the entries (created when the first is written).
    pub dir: PathBuf,
    /// Bytes the entries may take together.
    pub max_bytes: u64,
}

/// What an entry's `.json` holds.
#[derive(Serialize, Deserialize)]
struct Entry {
    key: String,
    /// Records in the `.trace` file, and its length.
    records: u64,
    bytes: u64,
    /// The first record's time: what reading the native file subtracts, added back.
    first_time_ns: u64,
    /// `(record, skipped)`: from the record with that index (from 0) on, the reader had
    /// skipped that many lines.
    skips: Vec<(u64, u64)>,
    examples: Vec<(u64, String)>,
    /// The reader's line and skipped count at the end of the trace.
    end_line: u64,
    end_skipped: u64,
}

impl TraceCache {
    /// A cache in `dir` of at most `max_bytes`.
    pub fn new(dir: impl Into<PathBuf>, max_bytes: u64) -> TraceCache {
        TraceCache {
            dir: dir.into(),
            max_bytes,
        }
    }

    /// The cache the environment asks for (see the module docs); `None` when it is off
    /// or no directory can be named. A size bound that does not parse is an error
    /// naming the variable.
    pub fn from_env() -> Result<Option<TraceCache>> {
        TraceCache::from_setting(None)
    }

    /// The cache a front end's setting names: `None` as the environment says
    /// ([`TraceCache::from_env`]), `off` (or empty) none, anything else a directory.
    /// The size bound is `$ZOMBIESIM_TRACE_CACHE_MAX` either way.
    pub fn from_setting(setting: Option<&str>) -> Result<Option<TraceCache>> {
        let max_bytes = match std::env::var(CACHE_MAX_ENV) {
            Ok(v) => crate::units::parse_bytes(&v)
                .map_err(|e| Error::config(CACHE_MAX_ENV, format!("`{v}` is not a size: {e}")))?,
            Err(_) => DEFAULT_MAX_BYTES,
        };
        let named = match setting {
            Some(s) => Some(std::ffi::OsString::from(s)),
            None => std::env::var_os(CACHE_ENV),
        };
        let dir = match named {
            Some(v) if v.is_empty() || v == "off" => return Ok(None),
            Some(v) => PathBuf::from(v),
            None => match (std::env::var_os("XDG_CACHE_HOME"), std::env::var_os("HOME")) {
                (Some(x), _) if !x.is_empty() => PathBuf::from(x).join("zombiesim/traces"),
                (_, Some(h)) if !h.is_empty() => PathBuf::from(h).join(".cache/zombiesim/traces"),
                _ => return Ok(None),
            },
        };
        Ok(Some(TraceCache::new(dir, max_bytes)))
    }

    /// The key of `path` read as `format` with `opts`, and its hash (the entry's file
    /// name); `None` for a format that is not cached (native), for what is not a regular
    /// file (a pipe, a device), or a file whose identity cannot be read.
    fn key(path: &Path, format: TraceFormat, opts: &ReadOptions) -> Option<(String, String)> {
        if format == TraceFormat::Native {
            return None;
        }
        let canonical = fs::canonicalize(path).ok()?;
        let meta = fs::metadata(&canonical).ok()?;
        // A pipe or a device has no length and time that say what it holds.
        if !meta.is_file() {
            return None;
        }
        let mtime = meta
            .modified()
            .ok()?
            .duration_since(SystemTime::UNIX_EPOCH)
            .ok()?;
        let key = format!(
            "zombiesim {} trace cache {LAYOUT}\npath {}\nlength {}\nmodified {}.{:09}\n\
             format {format}\ndevice {:?}\non_error {}\ntime_offset_ns {}\n\
             time_scale {:#018x}\nblkparse_action {}\n",
            env!("CARGO_PKG_VERSION"),
            canonical.display(),
            meta.len(),
            mtime.as_secs(),
            mtime.subsec_nanos(),
            opts.device,
            opts.on_error,
            opts.time_offset_ns,
            opts.time_scale.to_bits(),
            opts.blkparse_action,
        );
        let mut h = rustc_hash::FxHasher::default();
        h.write(key.as_bytes());
        let hash = format!("{:016x}{:08x}", h.finish(), key.len());
        Some((key, hash))
    }

    fn paths(&self, hash: &str) -> (PathBuf, PathBuf) {
        (
            self.dir.join(format!("{hash}.trace")),
            self.dir.join(format!("{hash}.json")),
        )
    }

    /// What the cache has for `path` read as `format` with `opts`: its records, or else
    /// a recorder to keep them (`None` when the trace is not cached). The file's
    /// identity is read once for both.
    pub(crate) fn find(&self, path: &Path, format: TraceFormat, opts: &ReadOptions) -> Found {
        let Some((key, hash)) = TraceCache::key(path, format, opts) else {
            return Found::Miss(None);
        };
        match self.entry(&key, &hash, path, format) {
            Some(trace) => Found::Hit(trace),
            None => Found::Miss(self.record(key, hash, format)),
        }
    }

    /// The cached records of `path` read as `format` with `opts`, if an entry matches.
    /// Anything wrong with an entry (missing, another key, a length that does not match)
    /// is a miss.
    pub fn lookup(
        &self,
        path: &Path,
        format: TraceFormat,
        opts: &ReadOptions,
    ) -> Option<CachedTrace> {
        let (key, hash) = TraceCache::key(path, format, opts)?;
        self.entry(&key, &hash, path, format)
    }

    /// A recorder for `path` read as `format` with `opts`, writing its entry when the
    /// reader reaches the end; `None` when the trace is not cached (native, not a
    /// regular file, or no temporary file can be created).
    #[cfg(test)]
    fn recorder(&self, path: &Path, format: TraceFormat, opts: &ReadOptions) -> Option<Recorder> {
        let (key, hash) = TraceCache::key(path, format, opts)?;
        self.record(key, hash, format)
    }

    /// The entry named `hash`, if it holds `key`, read as the text trace `path`.
    fn entry(
        &self,
        key: &str,
        hash: &str,
        path: &Path,
        format: TraceFormat,
    ) -> Option<CachedTrace> {
        let (records, entry_path) = self.paths(hash);
        let mut entry: Entry = serde_json::from_slice(&fs::read(&entry_path).ok()?).ok()?;
        if entry.key != key || fs::metadata(&records).ok()?.len() != entry.bytes {
            return None;
        }
        let first = i64::try_from(entry.first_time_ns).ok()?;
        let native = ReadOptions {
            time_offset_ns: first,
            ..ReadOptions::default()
        };
        let reader = TraceReader::open(&records, TraceFormat::Native, &native).ok()?;
        // Recently used: the last to be removed.
        if let Ok(f) = File::options().append(true).open(&entry_path) {
            let _ = f.set_modified(SystemTime::now());
        }
        let examples = std::mem::take(&mut entry.examples)
            .into_iter()
            .map(|(line, reason)| SkippedLine { line, reason })
            .collect();
        Some(CachedTrace {
            reader,
            name: path.display().to_string(),
            format,
            returned: 0,
            next_skip: 0,
            skipped: 0,
            examples,
            entry,
            ended: false,
        })
    }

    /// A recorder of the entry `hash` holding `key`.
    fn record(&self, key: String, hash: String, format: TraceFormat) -> Option<Recorder> {
        fs::create_dir_all(&self.dir).ok()?;
        // Unique among the recorders of every process: several runs of one trace may
        // record it at once (the last to finish writes the entry; they are alike).
        static RECORDERS: AtomicU64 = AtomicU64::new(0);
        let n = RECORDERS.fetch_add(1, Ordering::Relaxed);
        let tmp = self
            .dir
            .join(format!("{hash}.{}.{n}.tmp", std::process::id()));
        let file = File::create(&tmp).ok()?;
        let header = NativeHeader::new(false, format.has_values());
        let writer = TraceWriter::new(TraceFormat::Native, file)
            .declare(header)
            .ok()?;
        Some(Recorder {
            cache: self.clone(),
            key,
            hash,
            tmp,
            writer: Some(writer),
            records: 0,
            first_time_ns: None,
            skips: Vec::new(),
            skipped: 0,
        })
    }

    /// Remove the least recently used entries until the cache holds at most
    /// `max_bytes`, and temporary files of killed recorders.
    fn evict(&self) {
        let Ok(listing) = fs::read_dir(&self.dir) else {
            return;
        };
        let now = SystemTime::now();
        let mut entries = Vec::new();
        let mut total = 0u64;
        for item in listing.flatten() {
            let path = item.path();
            let Ok(meta) = item.metadata() else { continue };
            match path.extension().and_then(|e| e.to_str()) {
                Some("tmp") => {
                    let old = meta
                        .modified()
                        .ok()
                        .and_then(|m| now.duration_since(m).ok())
                        .is_some_and(|age| age > STALE_TMP);
                    if old {
                        let _ = fs::remove_file(&path);
                    }
                }
                Some("json") => {
                    let records = path.with_extension("trace");
                    let bytes = fs::metadata(&records).map_or(0, |m| m.len()) + meta.len();
                    let used = meta.modified().unwrap_or(SystemTime::UNIX_EPOCH);
                    total += bytes;
                    entries.push((used, bytes, path, records));
                }
                _ => {}
            }
        }
        entries.sort_by(|a, b| (a.0, &a.2).cmp(&(b.0, &b.2)));
        for (_, bytes, entry, records) in entries {
            if total <= self.max_bytes {
                break;
            }
            let _ = fs::remove_file(&entry);
            let _ = fs::remove_file(&records);
            total -= bytes;
        }
    }
}

/// What the cache has for a trace ([`TraceCache::find`]).
pub(crate) enum Found {
    /// Its records.
    Hit(CachedTrace),
    /// None: a recorder to keep them, if the trace can be cached.
    Miss(Option<Recorder>),
}

/// Writes the records a text reader returns into a cache entry; see the module docs.
/// Dropped before the end of the trace, it removes what it wrote.
pub(crate) struct Recorder {
    cache: TraceCache,
    key: String,
    hash: String,
    tmp: PathBuf,
    /// `None` once recording was given up.
    writer: Option<TraceWriter<File>>,
    records: u64,
    first_time_ns: Option<u64>,
    skips: Vec<(u64, u64)>,
    skipped: u64,
}

impl Tee for Recorder {
    fn record(&mut self, rec: &TraceRecord, values: &[u64], skipped: u64) -> bool {
        let Some(writer) = self.writer.as_mut() else {
            return false;
        };
        let rec = TraceRecord {
            device: if rec.device > u32::from(u16::MAX) {
                0
            } else {
                rec.device
            },
            ..*rec
        };
        let first = *self.first_time_ns.get_or_insert(rec.time_ns);
        let fits = i64::try_from(first).is_ok()
            && (self.records + 1) * RECORD_BYTES as u64 <= self.cache.max_bytes
            && self.skips.len() < MAX_SKIP_CHANGES;
        if !fits || writer.write_values(&rec, values).is_err() {
            self.give_up();
            return false;
        }
        if skipped != self.skipped {
            self.skipped = skipped;
            self.skips.push((self.records, skipped));
        }
        self.records += 1;
        true
    }

    /// Write the entry.
    fn finish(mut self: Box<Self>, line: u64, skipped: u64, examples: &[SkippedLine]) {
        let Some(writer) = self.writer.take() else {
            return;
        };
        let (records, entry_path) = self.cache.paths(&self.hash);
        let written = writer.finish().ok().and_then(|f| f.metadata().ok());
        let Some(bytes) = written.map(|m| m.len()) else {
            self.give_up();
            return;
        };
        let entry = Entry {
            key: std::mem::take(&mut self.key),
            records: self.records,
            bytes,
            first_time_ns: self.first_time_ns.unwrap_or(0),
            skips: std::mem::take(&mut self.skips),
            examples: examples
                .iter()
                .take(MAX_SKIPPED_EXAMPLES)
                .map(|e| (e.line, e.reason.clone()))
                .collect(),
            end_line: line,
            end_skipped: skipped,
        };
        let entry_tmp = self.tmp.with_extension("json.tmp");
        let committed = serde_json::to_vec(&entry)
            .ok()
            .and_then(|json| fs::write(&entry_tmp, json).ok())
            .and_then(|()| fs::rename(&self.tmp, &records).ok())
            .and_then(|()| fs::rename(&entry_tmp, &entry_path).ok());
        if committed.is_none() {
            // Whichever step failed: no half of an entry stays (its records without
            // their `.json` would never be evicted).
            let _ = fs::remove_file(&entry_tmp);
            let _ = fs::remove_file(&self.tmp);
            let _ = fs::remove_file(&records);
            return;
        }
        self.cache.evict();
    }
}

impl Recorder {
    fn give_up(&mut self) {
        self.writer = None;
        let _ = fs::remove_file(&self.tmp);
    }
}

impl Drop for Recorder {
    fn drop(&mut self) {
        if self.writer.is_some() {
            self.give_up();
        }
    }
}

/// A text trace replayed from its cache entry: the native records, presented as the
/// text trace they were parsed from (its name, format and skipped lines).
pub struct CachedTrace {
    reader: TraceReader,
    name: String,
    format: TraceFormat,
    entry: Entry,
    examples: Vec<SkippedLine>,
    /// Records returned, and the next of the entry's skipped-count changes.
    returned: u64,
    next_skip: usize,
    skipped: u64,
    ended: bool,
}

impl CachedTrace {
    /// The text trace's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The text trace's format.
    pub fn format(&self) -> TraceFormat {
        self.format
    }

    /// Where the reader stands: the text trace's last line once the trace has ended,
    /// the cached record's number before.
    pub fn line(&self) -> u64 {
        if self.ended {
            self.entry.end_line
        } else {
            self.reader.line()
        }
    }

    /// Content values of the record returned last.
    pub fn values(&self) -> &[u64] {
        self.reader.values()
    }

    /// Lines of the text trace skipped as of the record returned last.
    pub fn skipped(&self) -> u64 {
        self.skipped
    }

    /// The first skipped lines, as of the record returned last.
    pub fn skipped_examples(&self) -> &[SkippedLine] {
        &self.examples[..self.examples.len().min(self.skipped as usize)]
    }
}

impl Iterator for CachedTrace {
    type Item = Result<TraceRecord>;

    fn next(&mut self) -> Option<Result<TraceRecord>> {
        match self.reader.next() {
            Some(Ok(rec)) => {
                let i = self.returned;
                self.returned += 1;
                while let Some(&(at, skipped)) = self.entry.skips.get(self.next_skip) {
                    if at > i {
                        break;
                    }
                    self.skipped = skipped;
                    self.next_skip += 1;
                }
                Some(Ok(rec))
            }
            None => {
                if !self.ended {
                    self.ended = true;
                    self.skipped = self.entry.end_skipped;
                }
                None
            }
            Some(Err(e)) => Some(Err(e)),
        }
    }
}

#[cfg(test)]
mod tests;
