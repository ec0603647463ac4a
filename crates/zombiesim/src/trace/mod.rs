//! Block traces: streaming readers and writers for the common trace formats, address
//! remapping onto a simulated device, and trace statistics.
//!
//! ```text
//!  file (.gz/.zst) ──► TraceReader (msr | spc | disksim | fio | blkparse | native)
//!        ──► TraceRecord { time_ns, op, offset, size, device, placement }
//!              ├──► TraceWriter (any format: convert)
//!              ├──► Remapper (none | modulo | compact) ──► runs of logical pages
//!              └──► TraceStats (counts, footprint, sizes, inter-arrival, write skew,
//!                               placement identifiers)
//! ```
//!
//! Every format has its own module documenting its fields, units and an example line;
//! `docs/traces.md` collects them. Reading streams with constant memory (one reused line
//! buffer; parsing does not allocate for well-formed lines) and decompresses `.gz` and
//! `.zst` files by extension.
//!
//! ```
//! use zombiesim::trace::{ReadOptions, TraceFormat, TraceReader, TraceWriter};
//! let csv = "128166373321652068,src1,0,Write,3173167104,36864,3126\n";
//! let reader = TraceReader::from_reader(
//!     "example.csv",
//!     Box::new(std::io::Cursor::new(csv)),
//!     TraceFormat::Msr,
//!     &ReadOptions::default(),
//! )?;
//! let mut writer = TraceWriter::new(TraceFormat::Disksim, Vec::new());
//! for record in reader {
//!     writer.write(&record?)?;
//! }
//! let text = String::from_utf8(writer.finish()?).unwrap();
//! assert_eq!(text, "0.000000 0 6197592 72 0\n");
//! # Ok::<(), zombiesim::Error>(())
//! ```

mod batch;
pub mod blkparse;
pub(crate) mod cache;
mod codec;
pub mod disksim;
pub mod fio;
pub mod fiu;
mod footprint;
mod format;
mod generate;
mod host_events;
mod memory;
pub mod msr;
pub mod native;
pub mod nbdkit;
mod options;
pub mod pgbench;
mod placement;
mod read_ahead;
mod reader;
mod record;
mod remap;
pub mod spc;
mod stats;
mod text;
mod writer;

pub use cache::{CachedTrace, TraceCache, CACHE_ENV, CACHE_MAX_ENV, DEFAULT_MAX_BYTES};
pub use format::{FileCompression, TraceFormat};
pub use generate::{generate_notified, NotifiedSpec};
pub use host_events::{HostEventStats, Lifetimes};
pub use memory::MemoryTrace;
pub use native::NativeHeader;
pub use options::{OnError, ReadOptions, SkippedLine, MAX_SKIPPED_EXAMPLES};
pub use placement::{PlacementCounter, PlacementStats};
pub use read_ahead::ReadAhead;
pub use reader::{open_input, TraceReader, MAX_TIME_NS};
pub use record::{HostBuffer, TraceOp, TraceRecord};
pub use remap::{PageRun, RemapMode, RemapStats, Remapper};
pub use stats::{InterArrival, OpStats, SizeBucket, TraceStats, WriteSkew};
pub use text::parse_decimal_ns;
pub use writer::{OutputFile, TraceWriter};
