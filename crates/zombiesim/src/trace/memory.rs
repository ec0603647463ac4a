//! A trace decoded once and held in memory, for runs that replay the same trace many
//! times in a row (the oracle's envelope: one run per member).
//!
//! ```text
//!   file ─► decompress ─► parse ─► MemoryTrace (records in columns, Arc-shared)
//!                                     ├─► MemoryCursor ─► member 1's replay
//!                                     ├─► MemoryCursor ─► member 2's replay
//!                                     └─► ...
//! ```
//!
//! A cursor returns the records, and after each the reader's position (line, content
//! values, skipped lines), exactly as the reader returned them when the trace was read:
//! a replay from memory is the replay from the file. Only a trace read to its end (or
//! to the replay's record limit) without an error is kept, within a byte budget; any
//! other is replayed from its file as before, where its error is met in its place.
//! (Tested with `ReadAhead`, whose `memory` source a cursor is.)

use super::batch::{Batch, Cursor, End, Positioned};
use super::{SkippedLine, TraceRecord};
use crate::error::Result;
use std::sync::Arc;

/// Bytes a record takes in memory (the record, its line and its values' end).
const BYTES_PER_RECORD: u64 =
    (std::mem::size_of::<TraceRecord>() + std::mem::size_of::<u64>() + 4) as u64;

/// A trace's records and the reader's position after each, read once: one batch of
/// the whole trace, as the reader thread would have sent it in pieces.
pub struct MemoryTrace {
    name: String,
    batch: Batch,
    /// Where the reader stood before the first record: line and skipped lines.
    start: (u64, u64),
}

impl MemoryTrace {
    /// Read `reader` (from its start) to its end, or to `limit` records, into memory;
    /// `None` when the trace holds more than `max_bytes` or ends in an error (it is
    /// then replayed from its file, where the error is met in its place).
    pub(crate) fn read(
        mut reader: impl Positioned,
        limit: Option<u64>,
        max_bytes: u64,
    ) -> Option<Self> {
        let start = (reader.line(), reader.skipped());
        let mut batch = Batch::default();
        let mut skipped = reader.skipped();
        loop {
            if limit.is_some_and(|n| batch.records.len() as u64 >= n) {
                break;
            }
            match reader.next() {
                Some(Ok(record)) => {
                    if batch.values.len() + reader.values().len() > u32::MAX as usize {
                        return None;
                    }
                    batch.push(record, &reader, &mut skipped);
                    if bytes(&batch) > max_bytes {
                        return None;
                    }
                }
                Some(Err(_)) => return None,
                None => break,
            }
        }
        batch.end = Some(End {
            error: None,
            line: reader.line(),
            skipped: reader.skipped(),
        });
        batch.examples = reader.skipped_examples().to_vec();
        Some(MemoryTrace {
            name: reader.name().to_string(),
            batch,
            start,
        })
    }

    /// Bytes held.
    pub fn bytes(&self) -> u64 {
        bytes(&self.batch)
    }

    /// Records held.
    pub fn len(&self) -> usize {
        self.batch.records.len()
    }

    /// Whether it holds no record.
    pub fn is_empty(&self) -> bool {
        self.batch.records.is_empty()
    }
}

fn bytes(batch: &Batch) -> u64 {
    batch.records.len() as u64 * BYTES_PER_RECORD + batch.values.len() as u64 * 8
}

/// A replay of a [`MemoryTrace`] from its start.
pub struct MemoryCursor {
    trace: Arc<MemoryTrace>,
    at: Cursor,
    done: bool,
}

impl MemoryCursor {
    pub fn new(trace: Arc<MemoryTrace>) -> Self {
        let (line, skipped) = trace.start;
        MemoryCursor {
            trace,
            at: Cursor::at(line, skipped),
            done: false,
        }
    }

    pub fn name(&self) -> &str {
        &self.trace.name
    }

    pub fn line(&self) -> u64 {
        self.at.line
    }

    pub fn values(&self) -> &[u64] {
        &self.trace.batch.values[self.at.values.0..self.at.values.1]
    }

    pub fn skipped(&self) -> u64 {
        self.at.skipped
    }

    pub fn skipped_examples(&self) -> &[SkippedLine] {
        let e = &self.trace.batch.examples;
        &e[..e.len().min(self.at.skipped as usize)]
    }
}

impl Iterator for MemoryCursor {
    type Item = Result<TraceRecord>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        let record = self.at.advance(&self.trace.batch);
        if record.is_none() {
            if let Some(end) = &self.trace.batch.end {
                self.at.end(end);
            }
            self.done = true;
        }
        record.map(Ok)
    }
}
