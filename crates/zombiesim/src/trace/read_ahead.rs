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
//! [`TraceReader`] a replay would, and sends what it returns in batches of
//! [`BATCH`] records, each with the reader's position as it returned it (line,
//! skipped lines, content values), over a channel of [`BATCHES_AHEAD`] batches. So
//! a [`ReadAhead`] returns the same records, errors and positions in the same order
//! as the reader itself: one producer, first in first out, nothing timed. Memory is
//! bounded by the channel, whatever the trace's length. When the `ReadAhead` is
//! dropped the thread stops at its next send.

use super::{SkippedLine, TraceReader, TraceRecord};
use crate::error::{Error, Result};
use std::sync::mpsc::{sync_channel, Receiver};
use std::thread::JoinHandle;

/// Records per batch.
pub const BATCH: usize = 4096;
/// Batches the reader thread may be ahead.
pub const BATCHES_AHEAD: usize = 4;

/// One thing the reader returned, with its position then.
struct Item {
    /// `None`: the end of the trace.
    record: Option<Result<TraceRecord>>,
    line: u64,
    skipped: u64,
    /// Where this record's content values end in the batch's `values`.
    values_end: usize,
}

#[derive(Default)]
struct Batch {
    items: Vec<Item>,
    values: Vec<u64>,
    /// Skipped-line examples first seen in this batch.
    examples: Vec<SkippedLine>,
}

/// A [`TraceReader`] run on its own thread; the same records, errors and
/// positions as the reader.
pub struct ReadAhead {
    name: String,
    rx: Receiver<Batch>,
    batch: Batch,
    next: usize,
    line: u64,
    skipped: u64,
    values: (usize, usize),
    examples: Vec<SkippedLine>,
    done: bool,
    thread: Option<JoinHandle<()>>,
}

impl ReadAhead {
    /// Start reading `reader` on a new thread.
    pub fn spawn(mut reader: TraceReader) -> Result<ReadAhead> {
        let name = reader.name().to_string();
        let (line, skipped) = (reader.line(), reader.skipped());
        let (tx, rx) = sync_channel::<Batch>(BATCHES_AHEAD);
        let thread = std::thread::Builder::new()
            .name("trace-reader".into())
            .spawn(move || {
                let mut batch = Batch::default();
                let mut examples_sent = reader.skipped_examples().len();
                loop {
                    let record = reader.next();
                    let end = record.is_none();
                    if matches!(record, Some(Ok(_))) {
                        batch.values.extend_from_slice(reader.values());
                    }
                    let examples = reader.skipped_examples();
                    if examples.len() > examples_sent {
                        batch.examples.extend_from_slice(&examples[examples_sent..]);
                        examples_sent = examples.len();
                    }
                    batch.items.push(Item {
                        record,
                        line: reader.line(),
                        skipped: reader.skipped(),
                        values_end: batch.values.len(),
                    });
                    if end || batch.items.len() == BATCH {
                        // The receiver is gone: nobody wants the rest.
                        if tx.send(std::mem::take(&mut batch)).is_err() || end {
                            return;
                        }
                    }
                }
            })
            .map_err(|e| Error::Io {
                path: name.clone(),
                reason: format!("starting the trace reader thread: {e}"),
            })?;
        Ok(ReadAhead {
            name,
            rx,
            batch: Batch::default(),
            next: 0,
            line,
            skipped,
            values: (0, 0),
            examples: Vec::new(),
            done: false,
            thread: Some(thread),
        })
    }

    /// The file name errors use.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Lines (records, for the native format) read up to the record returned last.
    pub fn line(&self) -> u64 {
        self.line
    }

    /// Content fingerprints of the record returned last ([`TraceReader::values`];
    /// empty after an error or the end).
    pub fn values(&self) -> &[u64] {
        &self.batch.values[self.values.0..self.values.1]
    }

    /// Malformed lines skipped up to the record returned last.
    pub fn skipped(&self) -> u64 {
        self.skipped
    }

    /// The first skipped lines and why ([`TraceReader::skipped_examples`]).
    pub fn skipped_examples(&self) -> &[SkippedLine] {
        let n = self.examples.len().min(self.skipped as usize);
        &self.examples[..n]
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
            self.name, self.line
        ))
    }
}

impl Iterator for ReadAhead {
    type Item = Result<TraceRecord>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        if self.next == self.batch.items.len() {
            match self.rx.recv() {
                Ok(batch) => {
                    self.examples.extend_from_slice(&batch.examples);
                    self.batch = batch;
                    self.next = 0;
                    self.values = (0, 0);
                }
                Err(_) => return Some(Err(self.lost())),
            }
        }
        let item = &mut self.batch.items[self.next];
        self.next += 1;
        self.line = item.line;
        self.skipped = item.skipped;
        self.values = (self.values.1, item.values_end);
        let record = item.record.take();
        if record.is_none() {
            self.done = true;
        }
        record
    }
}

impl std::iter::FusedIterator for ReadAhead {}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::{OnError, ReadOptions, TraceFormat};

    /// Every record, error and position, as the reader itself gives them.
    fn same_as_reader(format: TraceFormat, text: &str, opts: &ReadOptions) {
        let open = || {
            let input = Box::new(std::io::Cursor::new(text.as_bytes().to_vec()));
            TraceReader::from_reader("mem", input, format, opts).unwrap()
        };
        let mut direct = open();
        let mut ahead = ReadAhead::spawn(open()).unwrap();
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
        let mut ahead = ReadAhead::spawn(reader).unwrap();
        assert!(ahead.next().is_some());
        let thread = ahead.thread.take().unwrap();
        drop(ahead);
        // The thread's next send fails and it returns: join does not hang.
        thread.join().unwrap();
    }
}
