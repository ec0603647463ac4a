//! A trace read on a thread of its own, ahead of the simulation.
//!
//! ```text
//!   reader thread:  file ─► decompress ─► parse ─► batches of records ─┐
//!                                                    (bounded channel) │
//!   simulation:     ReadAhead::next ◄──────────────────────────────────┘
//! ```
//!
//! Decompressing and parsing a text trace cost about a third of a replay's time on
//! the simulation's thread; here they run beside it. The reader thread runs the very
//! [`TraceReader`] a replay would, and sends what it returns in batches of [`BATCH`]
//! records, each with the reader's position as it returned it (line, skipped lines,
//! content values), over a channel of [`BATCHES_AHEAD`] batches; spent batches go
//! back to be filled again. So a [`ReadAhead`] returns the same records, errors and
//! positions in the same order as the reader itself: one producer, first in first
//! out, nothing timed. Memory is bounded by the channel, whatever the trace's length.
//! When the `ReadAhead` is dropped the thread stops at its next send.
//!
//! An uncompressed native trace, and any trace when not asked for a thread, is read on
//! the caller's thread ([`ReadAhead::new`]): native records are cheaper to decode than
//! to hand over (a thread saved 12% of a native replay's wall time but cost 8% more
//! processor time). A compressed native trace (`.zst`, `.gz`) is decompressed on the
//! thread: zstd alone took a fifth of a notified trace's replay, and the thread cut
//! the replay's wall time to 0.78× for 15% more processor time. A sweep, with a
//! worker per core, reads every trace on the worker's own thread.
//!
//! A trace decoded once into memory ([`MemoryTrace`], for runs that replay it many
//! times) is one batch of the whole trace, replayed with the same [`Cursor`].

use super::batch::{positioned, Batch, Cursor, End, Positioned, BATCH};
use super::memory::{MemoryCursor, MemoryTrace};
use super::{CachedTrace, SkippedLine, TraceFormat, TraceReader, TraceRecord};
use crate::error::{Error, Result};
use std::sync::mpsc::{sync_channel, Receiver, SyncSender};
use std::sync::Arc;
use std::thread::JoinHandle;

/// Batches the reader thread may be ahead.
pub const BATCHES_AHEAD: usize = 4;

/// The reader thread: `reader` read to its end (or until nobody listens), in
/// batches sent on `tx`, refilling the batches that come back on `reuse`.
fn fill(mut reader: impl Positioned, tx: SyncSender<Batch>, reuse: Receiver<Batch>) {
    let mut batch = Batch::with_capacity();
    let mut examples_sent = reader.skipped_examples().len();
    let mut skipped_sent = reader.skipped();
    loop {
        let record = reader.next();
        let examples = reader.skipped_examples();
        if examples.len() > examples_sent {
            batch.examples.extend_from_slice(&examples[examples_sent..]);
            examples_sent = examples.len();
        }
        match record {
            Some(Ok(record)) => batch.push(record, &reader, &mut skipped_sent),
            // An error ends the trace: the reader returns nothing after it.
            end => {
                batch.end = Some(End {
                    error: end.and_then(Result::err),
                    line: reader.line(),
                    skipped: reader.skipped(),
                });
            }
        }
        let end = batch.end.is_some();
        if end || batch.records.len() == BATCH {
            let next = reuse.try_recv().unwrap_or_else(|_| Batch::with_capacity());
            // The receiver is gone: nobody wants the rest.
            if tx.send(std::mem::replace(&mut batch, next)).is_err() || end {
                return;
            }
        }
    }
}

positioned!(ReadAhead);

/// A [`TraceReader`] read on a thread of its own or on the caller's; the same
/// records, errors and positions as the reader either way.
pub struct ReadAhead(Source);

enum Source {
    Inline(Box<TraceReader>),
    Thread(Box<Threaded>),
    /// A text trace's records from the trace cache, read on the caller's thread (they
    /// are native records).
    Cached(Box<CachedTrace>),
    /// A trace decoded once and held in memory, replayed from its start.
    Memory(Box<MemoryCursor>),
}

/// The consuming end of a reader thread, and the reader's position as of the record
/// returned last.
struct Threaded {
    name: String,
    rx: Receiver<Batch>,
    /// Batches read, sent back empty for the reader thread to fill again.
    spent: SyncSender<Batch>,
    batch: Batch,
    /// Where it stands in `batch`.
    at: Cursor,
    examples: Vec<SkippedLine>,
    done: bool,
    thread: Option<JoinHandle<()>>,
}

impl ReadAhead {
    /// Read `reader`: a text trace, or a compressed native one, on a new thread when
    /// `threaded`; an uncompressed native one (a record is a few fixed fields, cheaper
    /// to decode than to hand over), or any trace when not `threaded`, on the caller's.
    pub fn new(reader: TraceReader, threaded: bool) -> Result<ReadAhead> {
        let decoding = reader.format() != TraceFormat::Native || reader.decompresses();
        let source = if threaded && decoding {
            Source::Thread(Box::new(Threaded::spawn(reader)?))
        } else {
            Source::Inline(Box::new(reader))
        };
        Ok(ReadAhead(source))
    }

    /// Read a text trace's records from the trace cache: on a new thread when
    /// `threaded` (as the text would have been: the simulation then runs beside the
    /// decoding), else on the caller's.
    pub fn cached(trace: CachedTrace, threaded: bool) -> Result<ReadAhead> {
        Ok(ReadAhead(if threaded {
            Source::Thread(Box::new(Threaded::spawn(trace)?))
        } else {
            Source::Cached(Box::new(trace))
        }))
    }

    /// Replay a trace held in memory from its start (on the caller's thread): the same
    /// records and positions as the reader that read it.
    pub fn memory(trace: Arc<MemoryTrace>) -> ReadAhead {
        ReadAhead(Source::Memory(Box::new(MemoryCursor::new(trace))))
    }

    /// The file name errors use.
    pub fn name(&self) -> &str {
        match &self.0 {
            Source::Inline(r) => r.name(),
            Source::Thread(t) => &t.name,
            Source::Cached(c) => c.name(),
            Source::Memory(m) => m.name(),
        }
    }

    /// Lines (records, for the native format) read up to the record returned last.
    pub fn line(&self) -> u64 {
        match &self.0 {
            Source::Inline(r) => r.line(),
            Source::Thread(t) => t.at.line,
            Source::Cached(c) => c.line(),
            Source::Memory(m) => m.line(),
        }
    }

    /// Content fingerprints of the record returned last ([`TraceReader::values`];
    /// on a thread, empty after an error or the end).
    pub fn values(&self) -> &[u64] {
        match &self.0 {
            Source::Inline(r) => r.values(),
            Source::Thread(t) => &t.batch.values[t.at.values.0..t.at.values.1],
            Source::Cached(c) => c.values(),
            Source::Memory(m) => m.values(),
        }
    }

    /// Malformed lines skipped up to the record returned last.
    pub fn skipped(&self) -> u64 {
        match &self.0 {
            Source::Inline(r) => r.skipped(),
            Source::Thread(t) => t.at.skipped,
            Source::Cached(c) => c.skipped(),
            Source::Memory(m) => m.skipped(),
        }
    }

    /// The first skipped lines and why ([`TraceReader::skipped_examples`]).
    pub fn skipped_examples(&self) -> &[SkippedLine] {
        match &self.0 {
            Source::Inline(r) => r.skipped_examples(),
            Source::Thread(t) => &t.examples[..t.examples.len().min(t.at.skipped as usize)],
            Source::Cached(c) => c.skipped_examples(),
            Source::Memory(m) => m.skipped_examples(),
        }
    }
}

impl Threaded {
    /// Start reading `reader` on a new thread.
    fn spawn(reader: impl Positioned) -> Result<Threaded> {
        let name = reader.name().to_string();
        let (line, skipped) = (reader.line(), reader.skipped());
        let examples = reader.skipped_examples().to_vec();
        let (tx, rx) = sync_channel::<Batch>(BATCHES_AHEAD);
        let (spent, reuse) = sync_channel::<Batch>(BATCHES_AHEAD + 2);
        let thread = std::thread::Builder::new()
            .name("trace-reader".into())
            .spawn(move || fill(reader, tx, reuse))
            .map_err(|e| Error::Io {
                path: name.clone(),
                reason: format!("starting the trace reader thread: {e}"),
            })?;
        Ok(Threaded {
            name,
            rx,
            spent,
            batch: Batch::default(),
            at: Cursor::at(line, skipped),
            examples,
            done: false,
            thread: Some(thread),
        })
    }

    /// The reader thread ended without saying the trace ended: it panicked.
    fn lost(&mut self) -> Error {
        self.done = true;
        let why = match self.thread.take().map(JoinHandle::join) {
            Some(Err(panic)) => panic
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_else(|| "a panic".into()),
            _ => "an unknown cause".into(),
        };
        Error::integrity(format!(
            "reading {} after line {}: the reader thread stopped ({why})",
            self.name, self.at.line
        ))
    }

    fn next(&mut self) -> Option<Result<TraceRecord>> {
        if self.done {
            return None;
        }
        if let Some(record) = self.at.advance(&self.batch) {
            return Some(Ok(record));
        }
        if let Some(end) = self.batch.end.as_mut() {
            // What came after the last record: an error, then the end.
            self.at.end(end);
            let error = end.error.take();
            self.done = error.is_none();
            return error.map(Err);
        }
        match self.rx.recv() {
            Ok(batch) => {
                self.examples.extend_from_slice(&batch.examples);
                let mut old = std::mem::replace(&mut self.batch, batch);
                old.clear();
                // Full (the thread is ahead) or gone (the trace ended): then dropped.
                let _ = self.spent.try_send(old);
                self.at.rewind();
                self.next()
            }
            Err(_) => Some(Err(self.lost())),
        }
    }
}

impl Iterator for ReadAhead {
    type Item = Result<TraceRecord>;

    fn next(&mut self) -> Option<Self::Item> {
        match &mut self.0 {
            Source::Inline(r) => r.next(),
            Source::Thread(t) => t.next(),
            Source::Cached(c) => c.next(),
            Source::Memory(m) => m.next(),
        }
    }
}

impl std::iter::FusedIterator for ReadAhead {}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::{OnError, ReadOptions, TraceFormat};

    /// Every record, error and position, as the reader itself gives them.
    fn same_as_reader(format: TraceFormat, text: &str, opts: &ReadOptions) {
        same_as_reader_through(format, text, opts, |r| ReadAhead::new(r, true).unwrap());
    }

    /// [`same_as_reader`] for the `ReadAhead` that `through` makes of the reader.
    fn same_as_reader_through(
        format: TraceFormat,
        text: &str,
        opts: &ReadOptions,
        through: impl Fn(TraceReader) -> ReadAhead,
    ) {
        let open = || {
            let input = Box::new(std::io::Cursor::new(text.as_bytes().to_vec()));
            TraceReader::from_reader("mem", input, format, opts).unwrap()
        };
        let mut direct = open();
        let mut ahead = through(open());
        assert_eq!(direct.name(), ahead.name());
        loop {
            let (a, b) = (direct.next(), ahead.next());
            let (a_end, b_end) = (a.is_none(), b.is_none());
            if matches!(a, Some(Ok(_))) {
                assert_eq!(direct.values(), ahead.values());
            }
            assert_eq!(
                a.map(|r| r.map_err(|e| e.to_string())),
                b.map(|r| r.map_err(|e| e.to_string()))
            );
            assert_eq!(direct.line(), ahead.line());
            assert_eq!(direct.skipped(), ahead.skipped());
            assert_eq!(direct.skipped_examples(), ahead.skipped_examples());
            assert_eq!(a_end, b_end);
            if a_end {
                break;
            }
        }
        assert!(ahead.next().is_none());
    }

    #[test]
    fn the_same_records_and_positions_across_batches() {
        let mut text = String::from("# a comment\n");
        for i in 0..(2 * BATCH + 17) {
            text.push_str(&format!("{i},src,0,Write,{},4096,0\n", i * 4096));
            if i % 1000 == 7 {
                text.push_str("not a record\n\n");
            }
        }
        text.push_str("# trailing\n");
        let skip = ReadOptions {
            on_error: OnError::Skip,
            ..ReadOptions::default()
        };
        same_as_reader(TraceFormat::Msr, &text, &skip);
        // Stopping at the first bad line: the error, then the end.
        same_as_reader(TraceFormat::Msr, &text, &ReadOptions::default());
    }

    #[test]
    fn content_values_go_with_their_records() {
        let mut text = String::new();
        for i in 0..(BATCH + 5) as u64 {
            let op = if i % 3 == 0 { "R" } else { "W" };
            text.push_str(&format!(
                "{i} 1 p {} 8 {op} 6 0 {:032x}\n",
                i * 8,
                i * 7919 + 1
            ));
        }
        same_as_reader(TraceFormat::Fiu, &text, &ReadOptions::default());
    }

    /// `n` writes of one 4 KiB page each, page `i` at time `i`.
    fn page_writes(n: u64) -> impl Iterator<Item = TraceRecord> {
        (0..n).map(|i| TraceRecord {
            time_ns: i,
            op: crate::trace::TraceOp::Write,
            offset: i * 4096,
            size: 4096,
            device: 0,
            placement: None,
        })
    }

    #[test]
    fn a_native_trace_is_read_inline_with_the_same_results() {
        let mut writer = crate::trace::TraceWriter::new(TraceFormat::Native, Vec::new());
        for rec in page_writes(100) {
            writer.write(&rec).unwrap();
        }
        let bytes = writer.finish().unwrap();
        let open = || {
            let input = Box::new(std::io::Cursor::new(bytes.clone()));
            TraceReader::from_reader("mem", input, TraceFormat::Native, &ReadOptions::default())
                .unwrap()
        };
        let ahead = ReadAhead::new(open(), true).unwrap();
        assert!(matches!(ahead.0, Source::Inline(_)));
        let direct: Vec<_> = open().map(|r| r.unwrap()).collect();
        let inline: Vec<_> = ahead.map(|r| r.unwrap()).collect();
        assert_eq!(direct.len(), 100);
        assert_eq!(direct, inline);
    }

    #[test]
    fn a_compressed_native_trace_is_read_on_a_thread_with_the_same_results() {
        let dir = std::env::temp_dir().join(format!("zs-read-ahead-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        for name in ["t.zst", "t.gz", "t.native"] {
            let path = dir.join(name);
            let mut writer = crate::trace::TraceWriter::create(&path, TraceFormat::Native).unwrap();
            for rec in page_writes(BATCH as u64 + 3) {
                writer.write(&rec).unwrap();
            }
            writer.close().unwrap();
            let open = || TraceReader::open(&path, TraceFormat::Native, &ReadOptions::default());
            let ahead = ReadAhead::new(open().unwrap(), true).unwrap();
            assert_eq!(
                matches!(ahead.0, Source::Thread(_)),
                name != "t.native",
                "{name}"
            );
            let direct: Vec<_> = open().unwrap().map(|r| r.unwrap()).collect();
            let read: Vec<_> = ahead.map(|r| r.unwrap()).collect();
            assert_eq!(direct.len(), BATCH + 3);
            assert_eq!(direct, read, "{name}");
            let inline = ReadAhead::new(open().unwrap(), false).unwrap();
            assert!(matches!(inline.0, Source::Inline(_)), "{name}");
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_text_trace_is_read_inline_when_asked() {
        let text = "0,src,0,Write,0,4096,0\n1,src,0,Read,4096,4096,0\n";
        let open = || {
            let input = Box::new(std::io::Cursor::new(text.as_bytes().to_vec()));
            TraceReader::from_reader("mem", input, TraceFormat::Msr, &ReadOptions::default())
                .unwrap()
        };
        let ahead = ReadAhead::new(open(), false).unwrap();
        assert!(matches!(ahead.0, Source::Inline(_)));
        let threaded = ReadAhead::new(open(), true).unwrap();
        assert!(matches!(threaded.0, Source::Thread(_)));
        let a: Vec<_> = ahead.map(|r| r.unwrap()).collect();
        let b: Vec<_> = threaded.map(|r| r.unwrap()).collect();
        assert_eq!(a, b);
        assert_eq!(a.len(), 2);
    }

    #[test]
    fn an_empty_trace_ends_at_once() {
        same_as_reader(TraceFormat::Msr, "", &ReadOptions::default());
    }

    #[test]
    fn dropping_it_early_stops_the_thread() {
        let mut text = String::new();
        for i in 0..(BATCH * (BATCHES_AHEAD + 4)) {
            text.push_str(&format!("{i},src,0,Read,0,4096,0\n"));
        }
        let input = Box::new(std::io::Cursor::new(text.into_bytes()));
        let reader =
            TraceReader::from_reader("mem", input, TraceFormat::Msr, &ReadOptions::default())
                .unwrap();
        let mut ahead = Threaded::spawn(reader).unwrap();
        assert!(ahead.next().is_some());
        let thread = ahead.thread.take().unwrap();
        drop(ahead);
        // The thread's next send fails and it returns: join does not hang.
        thread.join().unwrap();
    }

    /// A trace held in memory, replayed by one cursor after another.
    fn held(format: TraceFormat, text: &str, opts: &ReadOptions) -> Arc<MemoryTrace> {
        let input = Box::new(std::io::Cursor::new(text.as_bytes().to_vec()));
        let reader = TraceReader::from_reader("mem", input, format, opts).unwrap();
        let held = MemoryTrace::read(ReadAhead::new(reader, false).unwrap(), None, u64::MAX);
        Arc::new(held.expect("kept"))
    }

    fn msr(records: usize, bad_every: usize) -> String {
        let mut text = String::from("# a comment\n");
        for i in 0..records {
            text.push_str(&format!("{i},src,0,Write,{},4096,0\n", i * 4096));
            if i % bad_every == 7 {
                text.push_str("not a record\n\n");
            }
        }
        text
    }

    #[test]
    fn a_held_trace_replays_its_records_and_positions() {
        let skip = ReadOptions {
            on_error: OnError::Skip,
            ..ReadOptions::default()
        };
        let from_memory = |format, text: &str, opts: &ReadOptions| {
            let trace = held(format, text, opts);
            // Twice from the same memory: each cursor starts from the start.
            for _ in 0..2 {
                same_as_reader_through(format, text, opts, |_| ReadAhead::memory(trace.clone()));
            }
        };
        from_memory(TraceFormat::Msr, &msr(5000, 1000), &skip);
        from_memory(TraceFormat::Msr, "", &ReadOptions::default());
        // Content values go with their records.
        let mut text = String::new();
        for i in 0..300u64 {
            let op = if i % 3 == 0 { "R" } else { "W" };
            text.push_str(&format!(
                "{i} 1 p {} 8 {op} 6 0 {:032x}\n",
                i * 8,
                i * 7919 + 1
            ));
        }
        from_memory(TraceFormat::Fiu, &text, &ReadOptions::default());
    }

    #[test]
    fn a_trace_with_an_error_too_large_or_cut_is_not_held_whole() {
        let read = |opts: &ReadOptions, limit, max| {
            let input = Box::new(std::io::Cursor::new(msr(500, 100).into_bytes()));
            let reader = TraceReader::from_reader("mem", input, TraceFormat::Msr, opts).unwrap();
            MemoryTrace::read(ReadAhead::new(reader, false).unwrap(), limit, max)
        };
        // Its error is met where the replay meets it, from the file.
        assert!(read(&ReadOptions::default(), None, u64::MAX).is_none());
        let skip = ReadOptions {
            on_error: OnError::Skip,
            ..ReadOptions::default()
        };
        let whole = read(&skip, None, u64::MAX).expect("kept");
        assert_eq!(whole.len(), 500);
        assert!(read(&skip, None, whole.bytes() - 1).is_none());
        // Up to the replay's limit: the records after it are never read.
        assert_eq!(
            read(&ReadOptions::default(), Some(7), u64::MAX)
                .unwrap()
                .len(),
            7
        );
    }
}
