//! Importers: real programs' captures turned into notified traces (the native format,
//! version 2: device requests with content fingerprints, and host events).
//!
//! ```text
//!   capture folder (pgbench-ext4 layout)        ──► import_capture ──┐
//!     pagecache_dirty.csv.gz   page cache clean → dirty (uptime s)   │
//!     device_writes_hashed.csv.gz  4 KiB device writes + XXH3 (epoch)├─► notified trace
//!     extents.txt, inodes.txt, uptime_start.txt                      │   (ZSTRACE2)
//!   pg_waldump text + a notified trace          ──► import_wal ──────┤
//!     each record's block references = the database buffer dirtying │
//!   SQLite WAL capture folder                   ──► import_sqlite ───┘
//!     WAL frames = database buffer dirtying; file level (db 0, WAL 1 TiB)
//! ```
//!
//! Every importer streams its inputs (memory grows with the files' extents and the
//! device's size, not with the number of events), writes records in time order, and
//! returns an [`ImportReport`]: what it read, what it joined, and what it dropped and
//! why, with the first examples as `file:line: reason`. A malformed line is an
//! [`Error::Input`] naming the file and line; a missing input file an [`Error::Io`]
//! naming it. Times are kept as epoch nanoseconds where the capture gives them, so
//! traces from the same capture can be merged.

mod capture;
mod capture_placement;
mod extents;
mod sqlite;
mod wal;

pub use capture::{import_capture, import_capture_placed, CapturePlacement};
pub use extents::Extents;
pub use sqlite::import_sqlite;
pub use wal::import_wal;

pub(crate) use capture::import_capture_in_memory;
pub(crate) use sqlite::import_sqlite_in_memory;
pub(crate) use wal::import_wal_in_memory;

use crate::error::{Error, Result};
use crate::trace::{open_input, NativeHeader, OutputFile, TraceFormat, TraceRecord, TraceWriter};
use serde::Serialize;
use std::collections::BTreeMap;
use std::io::{BufRead, Write};
use std::path::{Path, PathBuf};

/// How many dropped events an [`ImportReport`] keeps as examples.
pub const MAX_EXAMPLES: usize = 8;

/// What an import read, joined and dropped.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct ImportReport {
    /// What was imported (`capture`, `wal`, `sqlite`).
    pub importer: String,
    pub output: String,
    /// Records written to the output.
    pub records: u64,
    /// Device requests written (reads, writes, trims, flushes).
    pub device_requests: u64,
    /// 4 KiB device writes read, and those joined to a host page (a file page, a
    /// relation page).
    pub device_writes: u64,
    pub device_writes_joined: u64,
    /// Host events read from the inputs, and those joined to a device block (written).
    pub host_events: u64,
    pub host_events_joined: u64,
    /// `device_writes_joined / device_writes` and `host_events_joined / host_events`.
    pub device_writes_joined_share: f64,
    pub host_events_joined_share: f64,
    /// Dropped events by reason.
    pub dropped: BTreeMap<String, u64>,
    /// The first dropped events, as `file:line: reason`.
    pub examples: Vec<String>,
    /// Importer-specific counts (WAL records, commits, ...).
    pub details: BTreeMap<String, u64>,
    /// Latest record time minus earliest, seconds.
    pub duration_s: f64,
}

impl ImportReport {
    fn new(importer: &str, output: &Path) -> Self {
        ImportReport {
            importer: importer.into(),
            output: output.display().to_string(),
            ..ImportReport::default()
        }
    }

    /// Counts one dropped event (`reason` is the category, `example` the specifics).
    pub(crate) fn drop(&mut self, reason: &str, file: &str, line: u64, example: String) {
        *self.dropped.entry(reason.to_string()).or_default() += 1;
        if self.examples.len() < MAX_EXAMPLES {
            self.examples
                .push(format!("{file}:{line}: {reason}: {example}"));
        }
    }

    fn finish(&mut self) {
        let share = |a: u64, b: u64| if b == 0 { 0.0 } else { a as f64 / b as f64 };
        self.device_writes_joined_share = share(self.device_writes_joined, self.device_writes);
        self.host_events_joined_share = share(self.host_events_joined, self.host_events);
    }
}

/// Lines of a text input, numbered from 1, with errors that name the file and line.
pub(crate) struct Lines {
    pub name: String,
    input: Box<dyn BufRead + Send>,
    buf: String,
    pub line: u64,
}

impl Lines {
    /// Opens `path` (decompressing `.gz` / `.zst`); a missing file is an error naming
    /// it and what it is.
    pub fn open(path: &Path, what: &str) -> Result<Lines> {
        if !path.exists() {
            return Err(Error::Io {
                path: path.display().to_string(),
                reason: format!("missing: the {what} is needed"),
            });
        }
        Ok(Lines::from_reader(
            path.display().to_string(),
            open_input(path)?,
        ))
    }

    /// Lines of an already open stream (the fuzz harness reads from memory); `name`
    /// stands for the file in errors.
    pub fn from_reader(name: impl Into<String>, input: Box<dyn BufRead + Send>) -> Lines {
        Lines {
            name: name.into(),
            input,
            buf: String::new(),
            line: 0,
        }
    }

    /// Moves to the next line; false at the end of the file.
    pub fn advance(&mut self) -> Result<bool> {
        self.buf.clear();
        let n = self.input.read_line(&mut self.buf).map_err(|e| Error::Io {
            path: self.name.clone(),
            reason: format!("reading line {}: {e}", self.line + 1),
        })?;
        if n == 0 {
            return Ok(false);
        }
        self.line += 1;
        Ok(true)
    }

    /// The current line, without its end of line.
    pub fn text(&self) -> &str {
        self.buf.trim_end_matches(['\n', '\r'])
    }

    /// An input error at the current line.
    pub fn error(&self, reason: impl Into<String>) -> Error {
        Error::Input {
            file: self.name.clone(),
            line: self.line,
            reason: reason.into(),
        }
    }
}

/// The output of an import: a native trace declared to hold host events (and values,
/// and the placement identifiers of a trace it merges into), in a file (or, for the fuzz
/// harness, in memory).
pub(crate) struct Output<W: Write = OutputFile> {
    writer: TraceWriter<W>,
    last_ns: u64,
    first_ns: Option<u64>,
}

impl Output {
    pub fn create(path: &Path, values: bool) -> Result<Output> {
        Output::create_declared(path, NativeHeader::new(true, values))
    }

    /// An output whose header declares what `header` does, and host events.
    pub fn create_declared(path: &Path, header: NativeHeader) -> Result<Output> {
        Output::with_writer(TraceWriter::create(path, TraceFormat::Native)?, header)
    }

    pub fn close(self, report: &mut ImportReport) -> Result<()> {
        self.summarize(report).close()
    }
}

impl Output<Vec<u8>> {
    /// An output kept in memory.
    pub fn memory(values: bool) -> Result<Output<Vec<u8>>> {
        Output::memory_declared(NativeHeader::new(true, values))
    }

    /// Like [`Output::create_declared`], in memory.
    pub fn memory_declared(header: NativeHeader) -> Result<Output<Vec<u8>>> {
        let writer = TraceWriter::new(TraceFormat::Native, Vec::new()).named("<memory>");
        Output::with_writer(writer, header)
    }

    /// Like [`Output::close`]; returns the trace's bytes.
    pub fn finish(self, report: &mut ImportReport) -> Result<Vec<u8>> {
        self.summarize(report).finish()
    }
}

impl<W: Write> Output<W> {
    fn with_writer(writer: TraceWriter<W>, header: NativeHeader) -> Result<Output<W>> {
        Ok(Output {
            writer: writer.declare(NativeHeader {
                host_events: true,
                ..header
            })?,
            last_ns: 0,
            first_ns: None,
        })
    }

    /// Writes one record (in time order: the importers merge their inputs by time).
    pub fn write(
        &mut self,
        rec: &TraceRecord,
        values: &[u64],
        report: &mut ImportReport,
    ) -> Result<()> {
        debug_assert!(rec.time_ns >= self.last_ns, "importers write in time order");
        self.last_ns = rec.time_ns;
        self.first_ns.get_or_insert(rec.time_ns);
        report.records += 1;
        if !rec.op.is_host_event() {
            report.device_requests += 1;
        }
        self.writer.write_values(rec, values)
    }

    /// The time of the record written last (ns).
    pub fn last_ns(&self) -> u64 {
        self.last_ns
    }

    /// Fills in the report's duration and shares; returns the writer to end.
    fn summarize(self, report: &mut ImportReport) -> TraceWriter<W> {
        report.duration_s = self
            .first_ns
            .map_or(0.0, |f| (self.last_ns - f) as f64 / 1e9);
        report.finish();
        self.writer
    }
}

/// Lines of `bytes` held in memory, named `name` in errors (the fuzz harness).
pub(crate) fn memory_lines(name: &str, bytes: &[u8]) -> Lines {
    Lines::from_reader(name, Box::new(std::io::Cursor::new(bytes.to_vec())))
}

/// A file of a capture folder: `folder/name`.
pub(crate) fn member(folder: &Path, name: &str) -> PathBuf {
    folder.join(name)
}
