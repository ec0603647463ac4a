//! [`TraceWriter`]: writes [`TraceRecord`]s in any [`TraceFormat`], so that a trace read
//! in one format can be converted to another and read back unchanged.
//!
//! What each format can hold (writing anything else is an [`Error::Input`] naming the
//! record, never a silent drop):
//!
//! | format | ops | offset / size | device | time kept to |
//! |---|---|---|---|---|
//! | msr | read, write | bytes | u32 | 100 ns |
//! | spc | read, write | offset in 512-byte sectors, size bytes | u32 | 1 µs |
//! | disksim | read, write | 512-byte sectors | u32 | 1 ns |
//! | fio (v3) | all four | bytes, size < 4 GiB | u32 (as file `dev<N>`) | 1 µs |
//! | blkparse | all four | 512-byte sectors, < 2^32 sectors | u32 (`major<<20 \| minor`) | 1 ns |
//! | native | all four | bytes, size < 4 GiB | u16 | 1 ns |
//!
//! Times are truncated (not rounded) to the format's resolution. Flushes are written
//! without a range and read back with offset 0 and size 0. Host events (dirty, clean),
//! content values and placement identifiers go only into the native format, whose header
//! must declare them first ([`TraceWriter::declare`]); any other format refuses them by
//! name.
//!
//! Output is buffered internally; [`TraceWriter::finish`] writes what the format needs
//! at the end (fio's `close` lines), flushes and hands back the inner writer.
//! [`TraceWriter::create`] opens a file and compresses it by extension (`.gz`, `.zst`);
//! finish it with [`TraceWriter::close`].

use super::codec::WriteError;
use super::format::{FileCompression, TraceFormat};
use super::native::NativeHeader;
use super::record::TraceRecord;
use super::{blkparse, disksim, fio, msr, native, spc};
use crate::error::{Error, Result};
use flate2::write::GzEncoder;
use flate2::Compression;
use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::Path;

#[derive(Debug)]
enum State {
    Plain,
    Native(NativeHeader),
    Fio(fio::Writer),
    Blkparse(blkparse::Writer),
}

/// Writes records in one format to `W`.
#[derive(Debug)]
pub struct TraceWriter<W: Write> {
    format: TraceFormat,
    out: BufWriter<W>,
    name: String,
    records: u64,
    started: bool,
    state: State,
}

impl<W: Write> TraceWriter<W> {
    /// A writer of `format` records to `out` (e.g. a `Box<dyn Write + Send>`). Nothing is
    /// written until the first record or [`finish`](Self::finish).
    pub fn new(format: TraceFormat, out: W) -> TraceWriter<W> {
        let state = match format {
            TraceFormat::Fio => State::Fio(fio::Writer::default()),
            TraceFormat::Blkparse => State::Blkparse(blkparse::Writer::default()),
            TraceFormat::Native => State::Native(NativeHeader::new(false, false)),
            _ => State::Plain,
        };
        TraceWriter {
            format,
            out: BufWriter::with_capacity(256 * 1024, out),
            name: "<output>".into(),
            records: 0,
            started: false,
            state,
        }
    }

    /// Sets the name errors use for the output (default `<output>`).
    pub fn named(mut self, name: impl Into<String>) -> TraceWriter<W> {
        self.name = name.into();
        self
    }

    /// Declares what a native file will hold (host events, content values, placement
    /// identifiers): its header says so, and only then are such records accepted. Native
    /// only, before the first record. A header with placement identifiers makes the file
    /// version 3; without, version 2.
    pub fn declare(mut self, header: NativeHeader) -> Result<TraceWriter<W>> {
        match &mut self.state {
            State::Native(h) if !self.started => {
                *h = header;
                Ok(self)
            }
            State::Native(_) => Err(Error::integrity(
                "a native trace's header is declared before its first record",
            )),
            _ => Err(Error::integrity(format!(
                "only native traces have a header to declare; this writer writes {}",
                self.format
            ))),
        }
    }

    /// The format written.
    pub fn format(&self) -> TraceFormat {
        self.format
    }

    /// Records written so far.
    pub fn records(&self) -> u64 {
        self.records
    }

    fn fail(&self, e: WriteError, rec: &TraceRecord) -> Error {
        match e {
            WriteError::Unsupported(why) => Error::Input {
                file: self.name.clone(),
                line: self.records + 1,
                reason: format!(
                    "cannot write record {} ({rec}) as {}: {why}",
                    self.records + 1,
                    self.format
                ),
            },
            WriteError::Io(e) => self.io_error(e),
        }
    }

    fn io_error(&self, e: io::Error) -> Error {
        Error::Io {
            path: self.name.clone(),
            reason: e.to_string(),
        }
    }

    fn start(&mut self) -> Result<()> {
        if self.started {
            return Ok(());
        }
        self.started = true;
        let result = match (&mut self.state, self.format) {
            (State::Fio(f), _) => f.header(&mut self.out),
            (State::Native(h), _) => self.out.write_all(&h.encode()).map_err(WriteError::Io),
            _ => Ok(()),
        };
        result.map_err(|e| match e {
            WriteError::Io(e) => self.io_error(e),
            WriteError::Unsupported(why) => Error::integrity(why),
        })
    }

    /// Writes one record; an error if the format cannot represent it (nothing is
    /// written for that record then) or on I/O failure.
    pub fn write(&mut self, rec: &TraceRecord) -> Result<()> {
        self.write_values(rec, &[])
    }

    /// Writes one record with the content fingerprints of what it writes (one per
    /// 4 KiB; empty for none). Only the native format holds values, host events and
    /// placement identifiers ([`TraceRecord::placement`]).
    pub fn write_values(&mut self, rec: &TraceRecord, values: &[u64]) -> Result<()> {
        self.start()?;
        let out = &mut self.out;
        let refused = match &self.state {
            State::Native(_) => None,
            _ if rec.op.is_host_event() => Some(format!(
                "{} holds no host events (only native does)",
                self.format
            )),
            _ if !values.is_empty() => Some(format!(
                "{} holds no content values (only native does; converting would drop them)",
                self.format
            )),
            _ if rec.placement.is_some() => Some(format!(
                "{} holds no placement identifiers (only native does; converting would drop \
                 them)",
                self.format
            )),
            _ => None,
        };
        if let Some(why) = refused {
            return Err(self.fail(WriteError::Unsupported(why), rec));
        }
        let result = match (&mut self.state, self.format) {
            (State::Fio(f), _) => f.write(out, rec),
            (State::Blkparse(b), _) => b.write(out, rec),
            (_, TraceFormat::Msr) => msr::write(out, rec),
            (_, TraceFormat::Spc) => spc::write(out, rec),
            (_, TraceFormat::Disksim) => disksim::write(out, rec),
            (State::Native(h), _) => native::encode(rec, values, h).and_then(|b| {
                out.write_all(&b)?;
                if let Some(p) = rec.placement {
                    out.write_all(&p.to_le_bytes())?;
                }
                for v in values {
                    out.write_all(&v.to_le_bytes())?;
                }
                Ok(())
            }),
            (_, f) if !f.is_writable() => Err(WriteError::Unsupported(format!(
                "{f} is read only (zombiesim reads its content hashes but does not write them)"
            ))),
            (_, f) => unreachable!("{f} has a stateful writer"),
        };
        result.map_err(|e| self.fail(e, rec))?;
        self.records += 1;
        Ok(())
    }

    /// Writes the format's ending (fio `close` lines), flushes, and returns the inner writer.
    pub fn finish(mut self) -> Result<W> {
        self.start()?;
        if let State::Fio(f) = &mut self.state {
            f.finish(&mut self.out).map_err(|e| match e {
                WriteError::Io(e) => self.io_error(e),
                WriteError::Unsupported(why) => Error::integrity(why),
            })?;
        }
        let name = self.name.clone();
        self.out.into_inner().map_err(|e| Error::Io {
            path: name,
            reason: e.error().to_string(),
        })
    }
}

/// A file being written, compressed or not; see [`TraceWriter::create`].
pub struct OutputFile(Sink);

enum Sink {
    Plain(File),
    Gz(GzEncoder<File>),
    Zst(zstd::stream::write::Encoder<'static, File>),
}

impl std::fmt::Debug for OutputFile {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self.0 {
            Sink::Plain(_) => "OutputFile(plain)",
            Sink::Gz(_) => "OutputFile(gz)",
            Sink::Zst(_) => "OutputFile(zst)",
        })
    }
}

impl Write for OutputFile {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match &mut self.0 {
            Sink::Plain(f) => f.write(buf),
            Sink::Gz(g) => g.write(buf),
            Sink::Zst(z) => z.write(buf),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        match &mut self.0 {
            Sink::Plain(f) => f.flush(),
            Sink::Gz(g) => g.flush(),
            Sink::Zst(z) => z.flush(),
        }
    }
}

impl OutputFile {
    /// Ends the compressed stream (if any) and flushes; the file closes when dropped.
    pub fn finish(self) -> io::Result<()> {
        match self.0 {
            Sink::Plain(mut f) => f.flush(),
            Sink::Gz(g) => g.finish().map(drop),
            Sink::Zst(z) => z.finish().map(drop),
        }
    }
}

impl TraceWriter<OutputFile> {
    /// Creates `path` (errors name it), gzip- or zstd-compressing if it ends in `.gz` or
    /// `.zst`. Finish with [`close`](Self::close).
    pub fn create(path: impl AsRef<Path>, format: TraceFormat) -> Result<TraceWriter<OutputFile>> {
        let path = path.as_ref();
        let name = path.display().to_string();
        let io_err = |e: io::Error| Error::Io {
            path: name.clone(),
            reason: e.to_string(),
        };
        let file = File::create(path).map_err(io_err)?;
        let sink = match FileCompression::of(path) {
            FileCompression::Gzip => Sink::Gz(GzEncoder::new(file, Compression::default())),
            FileCompression::Zstd => {
                Sink::Zst(zstd::stream::write::Encoder::new(file, 3).map_err(io_err)?)
            }
            FileCompression::None => Sink::Plain(file),
        };
        Ok(TraceWriter::new(format, OutputFile(sink)).named(name))
    }

    /// [`finish`](Self::finish), then end the compressed stream.
    pub fn close(self) -> Result<()> {
        let name = self.name.clone();
        self.finish()?.finish().map_err(|e| Error::Io {
            path: name,
            reason: e.to_string(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::TraceOp;

    fn rec(op: TraceOp) -> TraceRecord {
        TraceRecord {
            time_ns: 1_234_567,
            op,
            offset: 4096,
            size: 4096,
            device: 1,
            placement: None,
        }
    }

    #[test]
    fn unsupported_records_name_themselves() {
        let mut w = TraceWriter::new(TraceFormat::Msr, Vec::new()).named("out.csv");
        w.write(&rec(TraceOp::Write)).unwrap();
        let err = w.write(&rec(TraceOp::Trim)).unwrap_err();
        assert_eq!(
            err.to_string(),
            "out.csv:2: cannot write record 2 (trim of 4096 bytes at byte 4096 on device 1, \
             t=1234567 ns) as msr: msr has no trim (Type is Read or Write)"
        );
        w.write(&rec(TraceOp::Read)).unwrap();
        assert_eq!(w.records(), 2);
        let out = String::from_utf8(w.finish().unwrap()).unwrap();
        assert_eq!(out.lines().count(), 2);
    }

    #[test]
    fn empty_traces_still_have_headers() {
        let out = TraceWriter::new(TraceFormat::Fio, Vec::new())
            .finish()
            .unwrap();
        assert_eq!(out, b"fio version 3 iolog\n");
        let out = TraceWriter::new(TraceFormat::Native, Vec::new())
            .finish()
            .unwrap();
        assert_eq!(&out[..8], b"ZSTRACE2");
    }

    #[test]
    fn fio_adds_opens_and_closes_each_device() {
        let mut w = TraceWriter::new(TraceFormat::Fio, Vec::new());
        w.write(&rec(TraceOp::Write)).unwrap();
        w.write(&TraceRecord {
            device: 0,
            time_ns: 2_000_000,
            ..rec(TraceOp::Flush)
        })
        .unwrap();
        let out = String::from_utf8(w.finish().unwrap()).unwrap();
        assert_eq!(
            out,
            "fio version 3 iolog\n1234 dev1 add\n1234 dev1 open\n1234 dev1 write 4096 4096\n\
             2000 dev0 add\n2000 dev0 open\n2000 dev0 sync 0 0\n2000 dev1 close\n2000 dev0 close\n"
        );
    }
}
