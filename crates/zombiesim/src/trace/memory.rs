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

use super::{ReadAhead, SkippedLine, TraceRecord};
use crate::error::Result;
use std::sync::Arc;

/// Bytes a record takes in memory (the record, its line and its values' end).
const BYTES_PER_RECORD: u64 =
    (std::mem::size_of::<TraceRecord>() + std::mem::size_of::<u64>() + 4) as u64;

/// A trace's records and the reader's position after each, read once.
pub struct MemoryTrace {
    name: String,
    records: Vec<TraceRecord>,
    /// Per record: the line the reader had read up to.
    lines: Vec<u64>,
    /// Per record: where its content values end in `values`.
    values_end: Vec<u32>,
    values: Vec<u64>,
    /// `(record, skipped)`: from that record on, the reader had skipped that many lines.
    skipped: Vec<(u32, u64)>,
    examples: Vec<SkippedLine>,
    /// Where the reader stood after the last record (the trace's end, or the limit).
    end_line: u64,
    end_skipped: u64,
    /// Where the reader stood before the first record.
    start: (u64, u64),
}

impl MemoryTrace {
    /// Read `reader` (from its start) to its end, or to `limit` records, into memory;
    /// `None` when the trace holds more than `max_bytes` or ends in an error (it is
    /// then replayed from its file).
    pub fn read(mut reader: ReadAhead, limit: Option<u64>, max_bytes: u64) -> Result<Option<Self>> {
        let mut t = MemoryTrace {
            name: reader.name().to_string(),
            records: Vec::new(),
            lines: Vec::new(),
            values_end: Vec::new(),
            values: Vec::new(),
            skipped: Vec::new(),
            examples: Vec::new(),
            end_line: 0,
            end_skipped: 0,
            start: (reader.line(), reader.skipped()),
        };
        let mut skipped = reader.skipped();
        loop {
            if limit.is_some_and(|n| t.records.len() as u64 >= n) {
                break;
            }
            match reader.next() {
                Some(Ok(record)) => {
                    t.records.push(record);
                    t.lines.push(reader.line());
                    t.values.extend_from_slice(reader.values());
                    let Ok(end) = u32::try_from(t.values.len()) else {
                        return Ok(None);
                    };
                    t.values_end.push(end);
                    if reader.skipped() != skipped {
                        skipped = reader.skipped();
                        t.skipped.push((t.records.len() as u32 - 1, skipped));
                    }
                    if t.bytes() > max_bytes {
                        return Ok(None);
                    }
                }
                Some(Err(_)) => return Ok(None),
                None => break,
            }
        }
        t.end_line = reader.line();
        t.end_skipped = reader.skipped();
        t.examples = reader.skipped_examples().to_vec();
        Ok(Some(t))
    }

    /// Bytes held.
    pub fn bytes(&self) -> u64 {
        self.records.len() as u64 * BYTES_PER_RECORD + self.values.len() as u64 * 8
    }

    /// Records held.
    pub fn len(&self) -> usize {
        self.records.len()
    }

    /// Whether it holds no record.
    pub fn is_empty(&self) -> bool {
        self.records.is_empty()
    }
}

/// A replay of a [`MemoryTrace`] from its start.
pub struct MemoryCursor {
    trace: Arc<MemoryTrace>,
    next: usize,
    next_skip: usize,
    line: u64,
    skipped: u64,
    values: (usize, usize),
    done: bool,
}

impl MemoryCursor {
    pub fn new(trace: Arc<MemoryTrace>) -> Self {
        let (line, skipped) = trace.start;
        MemoryCursor {
            trace,
            next: 0,
            next_skip: 0,
            line,
            skipped,
            values: (0, 0),
            done: false,
        }
    }

    pub fn name(&self) -> &str {
        &self.trace.name
    }

    pub fn line(&self) -> u64 {
        self.line
    }

    pub fn values(&self) -> &[u64] {
        &self.trace.values[self.values.0..self.values.1]
    }

    pub fn skipped(&self) -> u64 {
        self.skipped
    }

    pub fn skipped_examples(&self) -> &[SkippedLine] {
        let e = &self.trace.examples;
        &e[..e.len().min(self.skipped as usize)]
    }
}

impl Iterator for MemoryCursor {
    type Item = Result<TraceRecord>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        let t = &self.trace;
        let i = self.next;
        if i == t.records.len() {
            self.line = t.end_line;
            self.skipped = t.end_skipped;
            self.values = (0, 0);
            self.done = true;
            return None;
        }
        self.next = i + 1;
        self.line = t.lines[i];
        self.values = (self.values.1, t.values_end[i] as usize);
        if let Some(&(at, skipped)) = t.skipped.get(self.next_skip) {
            if at as usize == i {
                self.skipped = skipped;
                self.next_skip += 1;
            }
        }
        Some(Ok(t.records[i]))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::{OnError, ReadOptions, TraceFormat, TraceReader};

    fn reader(format: TraceFormat, text: &str, opts: &ReadOptions) -> TraceReader {
        let input = Box::new(std::io::Cursor::new(text.as_bytes().to_vec()));
        TraceReader::from_reader("mem", input, format, opts).unwrap()
    }

    /// Every record and position, as the reader itself gives them.
    fn same_as_reader(format: TraceFormat, text: &str, opts: &ReadOptions) {
        let held = MemoryTrace::read(
            ReadAhead::new(reader(format, text, opts), false).unwrap(),
            None,
            u64::MAX,
        )
        .unwrap()
        .expect("kept");
        let held = Arc::new(held);
        // Twice from the same memory: each cursor starts from the start.
        for _ in 0..2 {
            let mut direct = reader(format, text, opts);
            let mut cursor = ReadAhead::memory(held.clone());
            loop {
                let (a, b) = (direct.next(), cursor.next());
                let end = a.is_none();
                if matches!(a, Some(Ok(_))) {
                    assert_eq!(direct.values(), cursor.values());
                }
                assert_eq!(a.map(Result::unwrap), b.map(Result::unwrap));
                assert_eq!(direct.name(), cursor.name());
                assert_eq!(direct.line(), cursor.line());
                assert_eq!(direct.skipped(), cursor.skipped());
                assert_eq!(direct.skipped_examples(), cursor.skipped_examples());
                if end {
                    break;
                }
            }
            assert!(cursor.next().is_none());
        }
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
        same_as_reader(TraceFormat::Msr, &msr(5000, 1000), &skip);
        same_as_reader(TraceFormat::Msr, "", &ReadOptions::default());
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
        same_as_reader(TraceFormat::Fiu, &text, &ReadOptions::default());
    }

    #[test]
    fn a_trace_with_an_error_too_large_or_cut_is_not_held_whole() {
        let read = |opts: &ReadOptions, limit, max| {
            let r = ReadAhead::new(reader(TraceFormat::Msr, &msr(500, 100), opts), false);
            MemoryTrace::read(r.unwrap(), limit, max).unwrap()
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
