//! Records in columns with the reader's position after each: what the reader thread
//! hands over ([`Batch`], [`BATCH`] records at a time) and what a trace held in memory
//! is (one batch of the whole trace), and the cursor that replays either.
//!
//! ```text
//!   Positioned reader ─► Batch::push ─► Batch { records, lines, values, skipped, end }
//!                                           └─► Cursor::advance ─► record + position
//! ```

use super::{CachedTrace, SkippedLine, TraceReader, TraceRecord};
use crate::error::{Error, Result};

/// Records per batch.
pub const BATCH: usize = 4096;
/// Records the reader returned, column by column, each with the reader's position
/// as it returned it, and what came after the last of them.
#[derive(Default)]
pub(super) struct Batch {
    pub(super) records: Vec<TraceRecord>,
    /// Per record: the line the reader had read up to.
    lines: Vec<u64>,
    /// Per record: where its content values end in `values`.
    values_end: Vec<u32>,
    pub(super) values: Vec<u64>,
    /// `(record, skipped)`: from that record on, the reader had skipped that many lines.
    skipped: Vec<(u32, u64)>,
    /// Skipped-line examples first seen in this batch.
    pub(super) examples: Vec<SkippedLine>,
    /// After the records: the end of the trace, after an error or not.
    pub(super) end: Option<End>,
}

/// The end of the trace, and where the reader stood then.
pub(super) struct End {
    pub(super) error: Option<Error>,
    pub(super) line: u64,
    pub(super) skipped: u64,
}

/// Where a consumer of batches stands: the next record of its batch, and the reader's
/// position as of the record it returned last.
#[derive(Default)]
pub(super) struct Cursor {
    next: usize,
    /// The next of the batch's `skipped` changes.
    next_skip: usize,
    pub(super) line: u64,
    pub(super) skipped: u64,
    /// The content values of the record returned last, in the batch's `values`.
    pub(super) values: (usize, usize),
}

impl Cursor {
    /// A cursor where the reader stood before its first record.
    pub(super) fn at(line: u64, skipped: u64) -> Cursor {
        Cursor {
            line,
            skipped,
            ..Cursor::default()
        }
    }

    /// The next record of `batch`, the reader's position moved to where it was after
    /// it; `None` past the batch's last record.
    #[inline]
    pub(super) fn advance(&mut self, batch: &Batch) -> Option<TraceRecord> {
        let i = self.next;
        let record = *batch.records.get(i)?;
        self.next = i + 1;
        self.line = batch.lines[i];
        self.values = (self.values.1, batch.values_end[i] as usize);
        if let Some(&(at, skipped)) = batch.skipped.get(self.next_skip) {
            if at as usize == i {
                self.skipped = skipped;
                self.next_skip += 1;
            }
        }
        Some(record)
    }

    /// The reader's position at the trace's end.
    pub(super) fn end(&mut self, end: &End) {
        self.line = end.line;
        self.skipped = end.skipped;
        self.values = (0, 0);
    }

    /// From the start of a new batch.
    pub(super) fn rewind(&mut self) {
        self.next = 0;
        self.next_skip = 0;
        self.values = (0, 0);
    }
}

impl Batch {
    pub(super) fn with_capacity() -> Batch {
        Batch {
            records: Vec::with_capacity(BATCH),
            lines: Vec::with_capacity(BATCH),
            values_end: Vec::with_capacity(BATCH),
            ..Batch::default()
        }
    }

    /// Append `record`, which `reader` returned last, with the reader's position after
    /// it (`skipped_sent`: the skipped count as of the batch's previous record).
    pub(super) fn push(
        &mut self,
        record: TraceRecord,
        reader: &impl Positioned,
        skipped_sent: &mut u64,
    ) {
        self.records.push(record);
        self.lines.push(reader.line());
        self.values.extend_from_slice(reader.values());
        self.values_end.push(self.values.len() as u32);
        if reader.skipped() != *skipped_sent {
            *skipped_sent = reader.skipped();
            let at = self.records.len() as u32 - 1;
            self.skipped.push((at, *skipped_sent));
        }
    }

    pub(super) fn clear(&mut self) {
        self.records.clear();
        self.lines.clear();
        self.values_end.clear();
        self.values.clear();
        self.skipped.clear();
        self.examples.clear();
        self.end = None;
    }
}

/// What a reader thread reads: a [`TraceReader`], or a text trace's records from the
/// trace cache ([`CachedTrace`]); each says where it stands after every record.
pub(crate) trait Positioned: Iterator<Item = Result<TraceRecord>> + Send + 'static {
    fn name(&self) -> &str;
    fn line(&self) -> u64;
    fn values(&self) -> &[u64];
    fn skipped(&self) -> u64;
    fn skipped_examples(&self) -> &[SkippedLine];
}

/// Both readers already have these as inherent methods.
macro_rules! positioned {
    ($($reader:ty),*) => {$(
        impl Positioned for $reader {
            fn name(&self) -> &str {
                <$reader>::name(self)
            }
            fn line(&self) -> u64 {
                <$reader>::line(self)
            }
            fn values(&self) -> &[u64] {
                <$reader>::values(self)
            }
            fn skipped(&self) -> u64 {
                <$reader>::skipped(self)
            }
            fn skipped_examples(&self) -> &[SkippedLine] {
                <$reader>::skipped_examples(self)
            }
        }
    )*};
}

pub(super) use positioned;

positioned!(TraceReader, CachedTrace);
