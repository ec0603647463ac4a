//! Trace readers, writers, remapping and statistics, on the real sample traces in
//! `traces/samples` (a missing one fails its test) and on small
//! synthetic fixtures in `tests/data`.
//!
//! The blkparse fixture (`tests/data/blkparse_synthetic.txt`) is synthetic: written by
//! hand in blkparse's default output layout (events, then the per-CPU and total
//! summaries), not captured from a real device. It carries no comment because blkparse
//! output has none. The spc and disksim fixtures are synthetic too and say so in a
//! `#` comment.

mod support;

mod compression;
mod conversion;
mod malformed;
mod native;
mod remap;
mod samples;
mod stats;
mod throughput;
