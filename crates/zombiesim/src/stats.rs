//! Counters by cause, and the time series sampled during the measured phase.

use serde::Serialize;

/// Why a flash operation happened.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(usize)]
pub enum Cause {
    /// On behalf of a host request.
    Host = 0,
    /// Garbage collection (copies of valid pages, victim erases).
    Gc = 1,
    /// The device write buffer writing back dirty pages (evictions and flushes).
    Buffer = 2,
    /// Retention refresh: valid pages of a block that reached its refresh deadline
    /// (or every fast-written block at restart) moved to a fresh block.
    Refresh = 3,
    /// A hybrid FTL's switch merge (a sequential log block becomes the data block:
    /// only the old data block is erased).
    MergeSwitch = 4,
    /// A partial merge: a sequential log block is completed with the pages it lacks,
    /// then switched.
    MergePartial = 5,
    /// A full merge: the newest copy of every page of a logical block is gathered into
    /// a fresh block (block mapping's read-modify-write is one).
    MergeFull = 6,
    /// Mapping traffic of a cached-mapping FTL (DFTL): translation-page reads on a
    /// cache miss and translation-page writes.
    Translation = 7,
}

impl Cause {
    pub const COUNT: usize = 8;
    pub const ALL: [Cause; Cause::COUNT] = [
        Cause::Host,
        Cause::Gc,
        Cause::Buffer,
        Cause::Refresh,
        Cause::MergeSwitch,
        Cause::MergePartial,
        Cause::MergeFull,
        Cause::Translation,
    ];

    /// Whether the operation relocates data the FTL already holds (GC, refresh, a
    /// merge): timed as a copy, from when the FTL decided it.
    #[inline]
    pub fn relocates(self) -> bool {
        matches!(
            self,
            Cause::Gc
                | Cause::Refresh
                | Cause::MergeSwitch
                | Cause::MergePartial
                | Cause::MergeFull
        )
    }

    /// Whether the operation reclaims space: GC, or a merge of the block-mapped FTLs
    /// (their collections). Counted in GC latency and GC busy time.
    #[inline]
    pub fn collects(self) -> bool {
        matches!(
            self,
            Cause::Gc | Cause::MergeSwitch | Cause::MergePartial | Cause::MergeFull
        )
    }

    pub fn name(self) -> &'static str {
        match self {
            Cause::Host => "host",
            Cause::Gc => "gc",
            Cause::Buffer => "buffer",
            Cause::Refresh => "refresh",
            Cause::MergeSwitch => "merge_switch",
            Cause::MergePartial => "merge_partial",
            Cause::MergeFull => "merge_full",
            Cause::Translation => "translation",
        }
    }
}

/// Flash operation counts, one per cause.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ByCause(pub [u64; Cause::COUNT]);

impl ByCause {
    #[inline]
    pub fn add(&mut self, cause: Cause, n: u64) {
        self.0[cause as usize] += n;
    }

    pub fn total(&self) -> u64 {
        self.0.iter().sum()
    }

    pub fn get(&self, cause: Cause) -> u64 {
        self.0[cause as usize]
    }

    fn minus(&self, other: &ByCause) -> ByCause {
        let mut out = *self;
        for (o, b) in out.0.iter_mut().zip(other.0) {
            *o -= b;
        }
        out
    }
}

impl Serialize for ByCause {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut m = s.serialize_map(Some(Cause::COUNT))?;
        for c in Cause::ALL {
            m.serialize_entry(c.name(), &self.get(c))?;
        }
        m.end()
    }
}

/// Every counter an FTL keeps. Phases are measured as differences of snapshots.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Counters {
    pub host_requests: u64,
    pub host_write_pages: u64,
    pub host_read_pages: u64,
    pub host_trim_pages: u64,
    /// Host reads of pages never written or trimmed (answered without a flash read).
    pub host_read_unmapped: u64,
    pub programs: ByCause,
    pub reads: ByCause,
    pub erases: ByCause,
    pub gc_invocations: u64,
    pub gc_victims: u64,
    pub gc_pages_copied: u64,
    /// Victims reclaimed by background GC (included in `gc_victims`).
    pub gc_background_victims: u64,
    /// Copies of pages the device knew as zombies (included in `gc_pages_copied`).
    pub gc_zombie_pages_copied: u64,
    /// GC relocations by the state of the page relocated (SPEC §1): live,
    /// host-shadow, device-shadow, twin-shadow (they sum to `gc_pages_copied`).
    pub gc_copied_by_state: [u64; 4],
    /// GC relocations whose content came from the device write buffer (no flash read).
    pub gc_buffer_reads: u64,
    /// GC relocations programmed in fast-write mode.
    pub gc_fast_programs: u64,
    /// Shadow pages GC dropped instead of copying (the skip policy).
    pub gc_skipped: u64,
    /// Accumulated time of GC reads, programs and erases (003's GC latency), ns.
    pub gc_latency_ns: u64,
    /// Blocks refreshed, the valid pages they moved, and how many of the blocks were
    /// fast-written.
    pub refresh_blocks: u64,
    pub refresh_pages: u64,
    pub refresh_fast_blocks: u64,
    /// Merges of a hybrid FTL by kind: switch, partial, full (their flash operations
    /// are under `Cause::MergeSwitch`, `MergePartial`, `MergeFull`).
    pub merges: [u64; 3],
    /// Cached-mapping (DFTL) lookups that hit the cached mapping table, and misses
    /// (each reads a translation page).
    pub cmt_hits: u64,
    pub cmt_misses: u64,
    /// I/O execution time of 004 (ns): the nominal flash time of every program, erase
    /// and non-host read, plus the DRAM reads of pages merges or GC took from the
    /// write buffer; host reads are left out.
    pub io_time_ns: u64,
}

impl Counters {
    /// `self − earlier`, field by field.
    pub fn since(&self, earlier: &Counters) -> Counters {
        Counters {
            host_requests: self.host_requests - earlier.host_requests,
            host_write_pages: self.host_write_pages - earlier.host_write_pages,
            host_read_pages: self.host_read_pages - earlier.host_read_pages,
            host_trim_pages: self.host_trim_pages - earlier.host_trim_pages,
            host_read_unmapped: self.host_read_unmapped - earlier.host_read_unmapped,
            programs: self.programs.minus(&earlier.programs),
            reads: self.reads.minus(&earlier.reads),
            erases: self.erases.minus(&earlier.erases),
            gc_invocations: self.gc_invocations - earlier.gc_invocations,
            gc_victims: self.gc_victims - earlier.gc_victims,
            gc_pages_copied: self.gc_pages_copied - earlier.gc_pages_copied,
            gc_background_victims: self.gc_background_victims - earlier.gc_background_victims,
            gc_zombie_pages_copied: self.gc_zombie_pages_copied - earlier.gc_zombie_pages_copied,
            gc_copied_by_state: std::array::from_fn(|i| {
                self.gc_copied_by_state[i] - earlier.gc_copied_by_state[i]
            }),
            gc_buffer_reads: self.gc_buffer_reads - earlier.gc_buffer_reads,
            gc_fast_programs: self.gc_fast_programs - earlier.gc_fast_programs,
            gc_skipped: self.gc_skipped - earlier.gc_skipped,
            gc_latency_ns: self.gc_latency_ns - earlier.gc_latency_ns,
            refresh_blocks: self.refresh_blocks - earlier.refresh_blocks,
            refresh_pages: self.refresh_pages - earlier.refresh_pages,
            refresh_fast_blocks: self.refresh_fast_blocks - earlier.refresh_fast_blocks,
            merges: std::array::from_fn(|i| self.merges[i] - earlier.merges[i]),
            cmt_hits: self.cmt_hits - earlier.cmt_hits,
            cmt_misses: self.cmt_misses - earlier.cmt_misses,
            io_time_ns: self.io_time_ns - earlier.io_time_ns,
        }
    }

    /// Write amplification, `None` when no host page was written (it is undefined).
    pub fn defined_waf(&self) -> Option<f64> {
        (self.host_write_pages > 0).then(|| self.waf())
    }

    /// Write amplification: flash programs ÷ host page writes (0 when nothing was written).
    pub fn waf(&self) -> f64 {
        if self.host_write_pages == 0 {
            0.0
        } else {
            self.programs.total() as f64 / self.host_write_pages as f64
        }
    }
}

/// One point of the time series.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct SeriesPoint {
    /// Host page writes since the measured phase began.
    pub host_write_pages: u64,
    pub flash_programs: u64,
    pub flash_erases: u64,
    pub gc_pages_copied: u64,
    /// Write amplification over the interval since the previous point.
    pub waf_interval: f64,
    /// Write amplification since the measured phase began.
    pub waf_cumulative: f64,
    /// Erased blocks available at this point.
    pub free_blocks: u64,
}
