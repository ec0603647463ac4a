//! [`TraceReader`]: a streaming iterator of [`TraceRecord`]s over a trace file in any
//! [`TraceFormat`], with constant memory whatever the file's length.
//!
//! ```no_run
//! use zombiesim::trace::{ReadOptions, TraceFormat, TraceReader};
//! let mut reader = TraceReader::open("src1_0.csv.gz", TraceFormat::Msr, &ReadOptions::default())?;
//! for record in &mut reader {
//!     let record = record?;
//!     println!("{record}");
//! }
//! # Ok::<(), zombiesim::Error>(())
//! ```
//!
//! - Files ending in `.gz` are gunzipped (all members, as `zcat` does) and files ending in
//!   `.zst` are zstd-decompressed, on the fly.
//! - Text formats skip empty lines and lines starting with `#`. Lines are numbered from 1
//!   (every physical line counts); the native format numbers records from 1 instead.
//! - A malformed line is an [`Error::Input`] naming the file (the path as given), the line
//!   and what was expected. With [`OnError::Stop`] (the default) it ends the iteration;
//!   with [`OnError::Skip`] it is counted ([`TraceReader::skipped`]), the first
//!   [`MAX_SKIPPED_EXAMPLES`] are kept ([`TraceReader::skipped_examples`]) and reading
//!   goes on. A missing fio header or native magic and I/O errors always stop.
//! - Times: each record's time in nanoseconds, minus the first kept record's (so the
//!   first record is at 0), multiplied by [`ReadOptions::time_scale`], plus
//!   [`ReadOptions::time_offset_ns`]; a result below 0 (an out-of-order record with a
//!   negative offset, or before the first record) is clamped to 0; one beyond
//!   [`MAX_TIME_NS`] (about 146 years) is a malformed line (nanoseconds read as
//!   milliseconds, say: `time_scale` puts that right).
//! - [`ReadOptions::device`] keeps one device; the others are dropped before the time
//!   base is taken, so a filtered trace also starts at 0.

use super::codec::{LineError, LineResult, RawRecord};
use super::format::{FileCompression, TraceFormat};
use super::native::NativeHeader;
use super::options::{OnError, ReadOptions, SkippedLine, MAX_SKIPPED_EXAMPLES};
use super::record::TraceRecord;
use super::{blkparse, disksim, fio, fiu, msr, native, nbdkit, pgbench, spc};
use crate::error::{Error, Result};
use flate2::read::MultiGzDecoder;
use std::fmt;
use std::fs::File;
use std::io::{self, BufRead, BufReader};
use std::path::Path;

const BUFFER_BYTES: usize = 256 * 1024;

/// The latest time a record may have, in ns from the first (about 146 years): the
/// simulation adds its latencies to it without overflowing 64 bits.
pub const MAX_TIME_NS: u64 = 1 << 62;

/// Per-format parser state.
#[derive(Debug)]
enum Parser {
    Msr(msr::Parser),
    Spc,
    Disksim,
    Fio(Box<fio::Parser>),
    Blkparse(blkparse::Parser),
    Native(NativeState),
    Fiu(fiu::Parser),
    Pgbench(pgbench::Parser),
    Nbdkit(nbdkit::Parser),
}

impl Parser {
    fn new(format: TraceFormat, opts: &ReadOptions) -> Parser {
        match format {
            TraceFormat::Msr => Parser::Msr(msr::Parser::default()),
            TraceFormat::Spc => Parser::Spc,
            TraceFormat::Disksim => Parser::Disksim,
            TraceFormat::Fio => Parser::Fio(Box::default()),
            TraceFormat::Blkparse => Parser::Blkparse(blkparse::Parser::new(opts.blkparse_action)),
            TraceFormat::Native => Parser::Native(NativeState::default()),
            TraceFormat::Fiu => Parser::Fiu(fiu::Parser::default()),
            TraceFormat::PgbenchHashed => Parser::Pgbench(pgbench::Parser::default()),
            TraceFormat::NbdkitHashlog => Parser::Nbdkit(nbdkit::Parser::default()),
        }
    }

    /// A record the parser still holds at the end of the input.
    fn finish(&mut self) -> Option<RawRecord> {
        match self {
            Parser::Fiu(p) => p.finish(),
            _ => None,
        }
    }

    /// Content fingerprints of the record parsed last (hashed formats).
    fn values(&self) -> &[u64] {
        match self {
            Parser::Fiu(p) => &p.values,
            Parser::Pgbench(p) => &p.values,
            Parser::Nbdkit(p) => &p.values,
            Parser::Native(n) => &n.values,
            _ => &[],
        }
    }

    #[inline]
    fn parse_line(&mut self, line: &str) -> LineResult {
        match self {
            Parser::Msr(p) => p.parse(line),
            Parser::Spc => spc::parse(line),
            Parser::Disksim => disksim::parse(line),
            Parser::Fio(p) => p.parse(line),
            Parser::Blkparse(p) => p.parse(line),
            Parser::Fiu(p) => p.parse(line),
            Parser::Pgbench(p) => p.parse(line),
            Parser::Nbdkit(p) => p.parse(line),
            Parser::Native(_) => unreachable!("native traces are not read by lines"),
        }
    }
}

/// What the native reader keeps between records.
#[derive(Debug, Default)]
struct NativeState {
    /// The header, once read.
    header: Option<NativeHeader>,
    /// Fingerprints of the record returned last.
    values: Vec<u64>,
    /// Time of the record before (notified traces must be in time order).
    last_time: u128,
}

/// What sees every record a [`TraceReader`] returns (a trace cache's recorder).
pub(crate) trait Tee: Send {
    /// The reader returned `rec` with content `values`, having skipped `skipped` lines
    /// so far; `false` stops the teeing.
    fn record(&mut self, rec: &TraceRecord, values: &[u64], skipped: u64) -> bool;
    /// The reader reached the end of the trace without an error, at `line` with
    /// `skipped` lines skipped, `examples` the first of them. (After an error the tee
    /// is dropped instead.)
    fn finish(self: Box<Self>, line: u64, skipped: u64, examples: &[SkippedLine]);
}

/// A streaming reader of one trace; an iterator of `Result<TraceRecord>`.
///
/// After an error that stops it (see the module docs) the iterator returns `None`.
pub struct TraceReader {
    name: String,
    format: TraceFormat,
    input: Box<dyn BufRead + Send>,
    parser: Parser,
    buf: Vec<u8>,
    opts: ReadOptions,
    line: u64,
    records: u64,
    first_time: Option<u128>,
    skipped: u64,
    examples: Vec<SkippedLine>,
    done: bool,
    /// Sees everything returned (a trace cache's recorder).
    tee: Option<Box<dyn Tee>>,
    /// The input is decompressed as it is read ([`TraceReader::open`] of a `.gz` or
    /// `.zst` file).
    decompresses: bool,
}

impl fmt::Debug for TraceReader {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TraceReader")
            .field("name", &self.name)
            .field("format", &self.format)
            .field("line", &self.line)
            .field("records", &self.records)
            .field("skipped", &self.skipped)
            .finish_non_exhaustive()
    }
}

impl TraceReader {
    /// Opens `path`, decompressing `.gz` and `.zst` files on the fly.
    pub fn open(
        path: impl AsRef<Path>,
        format: TraceFormat,
        opts: &ReadOptions,
    ) -> Result<TraceReader> {
        let path = path.as_ref();
        let name = path.display().to_string();
        opts.validate()?;
        let input = open_input(path)?;
        let mut reader = TraceReader::from_reader(name, input, format, opts)?;
        reader.decompresses = FileCompression::of(path) != FileCompression::None;
        Ok(reader)
    }

    /// Reads an already open stream (stdin, an in-memory buffer); `name` stands for the
    /// file in errors. The stream is read as is: no decompression.
    pub fn from_reader(
        name: impl Into<String>,
        input: Box<dyn BufRead + Send>,
        format: TraceFormat,
        opts: &ReadOptions,
    ) -> Result<TraceReader> {
        opts.validate()?;
        Ok(TraceReader {
            name: name.into(),
            format,
            input,
            parser: Parser::new(format, opts),
            buf: Vec::with_capacity(256),
            opts: opts.clone(),
            line: 0,
            records: 0,
            first_time: None,
            skipped: 0,
            examples: Vec::new(),
            done: false,
            tee: None,
            decompresses: false,
        })
    }

    /// Whether the input is decompressed as it is read (a `.gz` or `.zst` file).
    pub fn decompresses(&self) -> bool {
        self.decompresses
    }

    /// Hand every record returned from here on, and the end of the trace, to `tee`.
    pub(crate) fn tee(&mut self, tee: Box<dyn Tee>) {
        self.tee = Some(tee);
    }

    /// The file name errors use.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The format being read.
    pub fn format(&self) -> TraceFormat {
        self.format
    }

    /// The options in use.
    pub fn options(&self) -> &ReadOptions {
        &self.opts
    }

    /// Lines (records, for the native format) read so far.
    pub fn line(&self) -> u64 {
        self.line
    }

    /// Content fingerprints of the record returned last, one per 4 KiB written, in
    /// order (empty for formats without hashes and for reads, trims and flushes).
    pub fn values(&self) -> &[u64] {
        self.parser.values()
    }

    /// The first kept record's time on the file's own clock (ns), once read: what the
    /// reader subtracts to make times relative.
    pub fn first_time_ns(&self) -> Option<u64> {
        self.first_time.and_then(|t| u64::try_from(t).ok())
    }

    /// Records returned so far.
    pub fn records(&self) -> u64 {
        self.records
    }

    /// Malformed lines skipped so far (with [`OnError::Skip`]).
    pub fn skipped(&self) -> u64 {
        self.skipped
    }

    /// The first [`MAX_SKIPPED_EXAMPLES`] skipped lines and why.
    pub fn skipped_examples(&self) -> &[SkippedLine] {
        &self.examples
    }

    /// A one-paragraph summary of the skipped lines, `None` if none were skipped:
    /// `skipped 3 malformed lines of trace.csv; line 7: expected ...; line 9: ...`.
    pub fn skipped_summary(&self) -> Option<String> {
        if self.skipped == 0 {
            return None;
        }
        let mut s = format!(
            "skipped {} malformed line{} of {}",
            self.skipped,
            if self.skipped == 1 { "" } else { "s" },
            self.name
        );
        for e in &self.examples {
            s.push_str("; ");
            s.push_str(&e.to_string());
        }
        if self.skipped > self.examples.len() as u64 {
            s.push_str("; ...");
        }
        Some(s)
    }

    fn io_error(&mut self, e: io::Error) -> Error {
        self.done = true;
        Error::Io {
            path: self.name.clone(),
            reason: format!("reading line {}: {e}", self.line + 1),
        }
    }

    /// Turns a parser's complaint into the error to return, or `None` if it is skipped.
    fn reject(&mut self, e: LineError) -> Option<Error> {
        let (reason, fatal) = match e {
            LineError::Malformed(r) => (r, false),
            LineError::Fatal(r) => (r, true),
        };
        if fatal || self.opts.on_error == OnError::Stop {
            self.done = true;
            return Some(Error::Input {
                file: self.name.clone(),
                line: self.line,
                reason,
            });
        }
        self.skipped += 1;
        if self.examples.len() < MAX_SKIPPED_EXAMPLES {
            self.examples.push(SkippedLine {
                line: self.line,
                reason,
            });
        }
        None
    }

    /// The checks every record passes whatever its format (its byte range fits in 64
    /// bits), then [`Self::keep`]: `None` when the record is filtered out or skipped.
    #[inline]
    fn accept(&mut self, raw: RawRecord) -> Option<Result<TraceRecord>> {
        if raw.offset.checked_add(raw.size).is_none() {
            let reason = format!(
                "a request of {} bytes at byte {} ends beyond the largest byte address (2^64 - 1)",
                raw.size, raw.offset
            );
            return self.reject(LineError::Malformed(reason)).map(Err);
        }
        self.keep(raw)
    }

    /// Applies the device filter and the time base, offset and scale: `None` when the
    /// record is filtered out, an error when its time is beyond [`MAX_TIME_NS`].
    #[inline]
    fn keep(&mut self, raw: RawRecord) -> Option<Result<TraceRecord>> {
        if self.opts.device.is_some_and(|d| d != raw.device) {
            return None;
        }
        let first = *self.first_time.get_or_insert(raw.time_ns);
        let mut t = raw.time_ns as i128 - first as i128;
        if self.opts.time_scale != 1.0 {
            t = scale_time(t, self.opts.time_scale);
        }
        t += i128::from(self.opts.time_offset_ns);
        if t > i128::from(MAX_TIME_NS) {
            let reason = format!(
                "expected a time within 2^62 ns (about 146 years) of the first record, found \
                 {t} ns (after time_scale {} and time_offset_ns {}): is the time unit right? \
                 (--time-scale)",
                self.opts.time_scale, self.opts.time_offset_ns
            );
            return self.reject(LineError::Malformed(reason)).map(Err);
        }
        self.records += 1;
        Some(Ok(TraceRecord {
            time_ns: t.max(0) as u64,
            op: raw.op,
            offset: raw.offset,
            size: raw.size,
            device: raw.device,
            placement: raw.placement,
        }))
    }

    fn next_text(&mut self) -> Option<Result<TraceRecord>> {
        loop {
            // A line wholly inside the input's buffer is parsed where it lies; one that
            // runs past the buffer's end (or the file's last, without a newline) is
            // gathered into `self.buf` first.
            let whole = match self.input.fill_buf() {
                Ok(bytes) => memchr::memchr(b'\n', bytes).map(|end| {
                    self.line += 1;
                    (parse_text_line(&mut self.parser, &bytes[..end]), end + 1)
                }),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Some(Err(self.io_error(e))),
            };
            let parsed = match whole {
                Some((parsed, used)) => {
                    self.input.consume(used);
                    parsed
                }
                None => {
                    self.buf.clear();
                    match self.input.read_until(b'\n', &mut self.buf) {
                        Ok(0) => {
                            if let Some(raw) = self.parser.finish() {
                                if let Some(rec) = self.accept(raw) {
                                    return Some(rec);
                                }
                            }
                            self.done = true;
                            return None;
                        }
                        Ok(_) => {}
                        Err(e) => return Some(Err(self.io_error(e))),
                    }
                    self.line += 1;
                    parse_text_line(&mut self.parser, &self.buf)
                }
            };
            match parsed {
                Ok(Some(raw)) => {
                    if let Some(rec) = self.accept(raw) {
                        return Some(rec);
                    }
                }
                Ok(None) => {}
                Err(e) => {
                    if let Some(err) = self.reject(e) {
                        return Some(Err(err));
                    }
                }
            }
        }
    }

    /// The native header: read now if it has not been. `None` for the other formats.
    /// A missing or bad header is an error at line 0.
    pub fn native_header(&mut self) -> Result<Option<NativeHeader>> {
        if self.format != TraceFormat::Native {
            return Ok(None);
        }
        self.read_native_header().map(Some)
    }

    fn read_native_header(&mut self) -> Result<NativeHeader> {
        if let Parser::Native(NativeState {
            header: Some(h), ..
        }) = &self.parser
        {
            return Ok(*h);
        }
        let fatal = |this: &mut Self, reason: String| {
            this.done = true;
            Error::Input {
                file: this.name.clone(),
                line: 0,
                reason,
            }
        };
        let mut magic = [0u8; 8];
        let n = read_full(&mut self.input, &mut magic).map_err(|e| self.io_error(e))?;
        let version = match &magic[..n] {
            m if m == native::MAGIC_V1 => 1,
            m if m == native::MAGIC => 2,
            m if m == native::MAGIC_V3 => 3,
            _ => {
                let found = String::from_utf8_lossy(&magic[..n]).into_owned();
                return Err(fatal(
                    self,
                    format!(
                        "expected the magic `ZSTRACE3`, `ZSTRACE2` or `ZSTRACE1` (zombiesim native trace) at the start, found {found:?}"
                    ),
                ));
            }
        };
        let header = if version == 1 {
            NativeHeader {
                version: 1,
                ..NativeHeader::default()
            }
        } else {
            let mut flags = [0u8; 8];
            let n = read_full(&mut self.input, &mut flags).map_err(|e| self.io_error(e))?;
            if n < 8 {
                return Err(fatal(
                    self,
                    format!(
                        "expected an 8-byte header after the magic, found {n} bytes (truncated)"
                    ),
                ));
            }
            match NativeHeader::decode_flags(&flags, version) {
                Ok(h) => h,
                Err(LineError::Fatal(r) | LineError::Malformed(r)) => return Err(fatal(self, r)),
            }
        };
        if let Parser::Native(state) = &mut self.parser {
            state.header = Some(header);
        }
        Ok(header)
    }

    fn next_native(&mut self) -> Option<Result<TraceRecord>> {
        let header = match self.read_native_header() {
            Ok(h) => h,
            Err(e) => return Some(Err(e)),
        };
        loop {
            let mut bytes = [0u8; native::RECORD_BYTES];
            let n = match read_full(&mut self.input, &mut bytes) {
                Ok(n) => n,
                Err(e) => return Some(Err(self.io_error(e))),
            };
            if n == 0 {
                self.done = true;
                return None;
            }
            self.line += 1;
            let decoded = if n < native::RECORD_BYTES {
                Err(LineError::Malformed(format!(
                    "expected a {}-byte record, found {n} bytes at the end of the file (truncated)",
                    native::RECORD_BYTES
                )))
            } else {
                native::decode(&bytes, &header)
            };
            let decoded = match decoded {
                Ok((raw, follows)) => self.native_trailer(raw, follows, &header),
                Err(e) => Err(e),
            };
            match decoded {
                Ok(raw) => {
                    if let Some(rec) = self.accept(raw) {
                        return Some(rec);
                    }
                }
                Err(e) => {
                    if let Some(err) = self.reject(e) {
                        return Some(Err(err));
                    }
                }
            }
        }
    }

    /// Reads what follows a record (its placement identifier, then its fingerprints),
    /// and checks time order in notified traces.
    fn native_trailer(
        &mut self,
        mut raw: RawRecord,
        follows: native::Follows,
        header: &NativeHeader,
    ) -> std::result::Result<RawRecord, LineError> {
        let Parser::Native(state) = &mut self.parser else {
            unreachable!("native records come from the native parser")
        };
        state.values.clear();
        if follows.placement {
            let mut bytes = [0u8; native::PLACEMENT_BYTES];
            let n = read_full(&mut self.input, &mut bytes)
                .map_err(|e| LineError::Fatal(format!("reading a placement identifier: {e}")))?;
            if n < bytes.len() {
                // The stream ends inside the record: nothing after it can be read.
                return Err(LineError::Fatal(format!(
                    "expected a {}-byte placement identifier after the record, found {n} bytes \
                     (truncated file)",
                    native::PLACEMENT_BYTES
                )));
            }
            raw.placement = Some(u16::from_le_bytes(bytes));
        }
        if follows.values {
            let count = native::value_count(raw.size);
            let mut bytes = [0u8; 8];
            for _ in 0..count {
                let n = read_full(&mut self.input, &mut bytes)
                    .map_err(|e| LineError::Fatal(format!("reading content values: {e}")))?;
                if n < 8 {
                    // The stream ends inside the record: nothing after it can be read.
                    return Err(LineError::Fatal(format!(
                        "expected {count} content values after the record, but the values were cut short (truncated file)"
                    )));
                }
                state.values.push(u64::from_le_bytes(bytes));
            }
        }
        if header.host_events {
            if raw.time_ns < state.last_time {
                return Err(LineError::Malformed(format!(
                    "events out of time order: a {} at {} ns after a record at {} ns (a notified trace must be sorted by time)",
                    raw.op, raw.time_ns, state.last_time
                )));
            }
            state.last_time = raw.time_ns;
        }
        Ok(raw)
    }
}

/// Opens `path` for reading, gunzipping `.gz` (all members) and zstd-decompressing
/// `.zst` files on the fly; errors name the path.
pub fn open_input(path: &Path) -> Result<Box<dyn BufRead + Send>> {
    let name = path.display().to_string();
    let io_err = |e: io::Error| Error::Io {
        path: name.clone(),
        reason: e.to_string(),
    };
    let file = File::open(path).map_err(io_err)?;
    Ok(match FileCompression::of(path) {
        FileCompression::Gzip => Box::new(BufReader::with_capacity(
            BUFFER_BYTES,
            MultiGzDecoder::new(BufReader::with_capacity(BUFFER_BYTES, file)),
        )),
        FileCompression::Zstd => Box::new(BufReader::with_capacity(
            BUFFER_BYTES,
            zstd::stream::read::Decoder::new(file).map_err(io_err)?,
        )),
        FileCompression::None => Box::new(BufReader::with_capacity(BUFFER_BYTES, file)),
    })
}

/// `t` × `scale`, rounded, as `(t as f64 * scale).round() as i128` gives it, but
/// through 64-bit conversions where `t` and the result fit (the same values: each
/// conversion to `f64` rounds the same integer to nearest).
#[inline]
fn scale_time(t: i128, scale: f64) -> i128 {
    const FITS: f64 = (1u64 << 62) as f64;
    let tf = if let Ok(t) = i64::try_from(t) {
        t as f64
    } else if let Ok(t) = u64::try_from(t) {
        t as f64
    } else {
        t as f64
    };
    let v = (tf * scale).round();
    if v.abs() < FITS {
        i128::from(v as i64)
    } else {
        v as i128
    }
}

/// One line of a text format (its newline, if any, included or not): blank lines and
/// comments give `Ok(None)`.
#[inline]
fn parse_text_line(parser: &mut Parser, line: &[u8]) -> LineResult {
    match std::str::from_utf8(line) {
        Ok(text) => {
            let text = text.trim_ascii();
            if text.is_empty() || text.starts_with('#') {
                return Ok(None);
            }
            parser.parse_line(text)
        }
        Err(e) => Err(LineError::Malformed(format!(
            "expected UTF-8 text, found an invalid byte at column {}",
            e.valid_up_to() + 1
        ))),
    }
}

/// Reads until `buf` is full or the stream ends; returns the bytes read.
fn read_full(input: &mut dyn BufRead, buf: &mut [u8]) -> io::Result<usize> {
    let mut filled = 0;
    while filled < buf.len() {
        match input.read(&mut buf[filled..]) {
            Ok(0) => break,
            Ok(n) => filled += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(filled)
}

impl Iterator for TraceReader {
    type Item = Result<TraceRecord>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        let next = if self.format == TraceFormat::Native {
            self.next_native()
        } else {
            self.next_text()
        };
        if self.tee.is_some() {
            self.tee_record(&next);
        }
        next
    }
}

impl TraceReader {
    /// Hand what `next` returns to the recorder: a record, the end (the entry is
    /// written), or an error (recording is given up).
    #[cold]
    fn tee_record(&mut self, next: &Option<Result<TraceRecord>>) {
        match next {
            Some(Ok(rec)) => {
                let tee = self.tee.as_mut().expect("recording");
                if !tee.record(rec, self.parser.values(), self.skipped) {
                    self.tee = None;
                }
            }
            Some(Err(_)) => self.tee = None,
            None => {
                let tee = self.tee.take().expect("recording");
                tee.finish(self.line, self.skipped, &self.examples);
            }
        }
    }
}

impl std::iter::FusedIterator for TraceReader {}

#[cfg(test)]
mod tests;
