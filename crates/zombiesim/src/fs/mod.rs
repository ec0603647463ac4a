//! File systems in virtual machines: ext3's journaling modes and VM-aware journaling
//! (002), driving the host page cache with file-level benchmarks.
//!
//! ```text
//!   VM 0 … VM n-1  (two threads each: the application and the journal daemon,
//!                   interleaved on one event queue)
//!     benchmark (seq_write, rnd_write, postmark, untar, kernel_compile)
//!       │ create / write / read / delete / fsync
//!       ▼
//!     Ext3: allocation, inodes, directories ─── metadata, data under journal/vma ──►
//!       │ data (writeback, ordered)                Journal: running transaction
//!       ▼                                            │ every 5 s: commit
//!     host page cache ◄── committed blocks dirty ────┤ ordered: data written first
//!       (dirty limits, flusher, eviction)            │ log writes (sync) │ vma: VMM memory
//!       │                                            │ checkpoint: write back, move tail
//!       ▼                                            ▼
//!     device: partition i = logical pages [i·P, (i+1)·P)  ◄── journal area writes
//! ```
//!
//! [`FsVm`] turns a VM's file-system steps ([`FsIo`]) into the host model's
//! [`AppOp`]s; [`FsWorkload`] runs the VMs as the host's threads. Every VM draws from
//! its own seeded stream, so a run is deterministic. The crash-consistency oracle
//! ([`crash`]) replays the same steps against an adversarial cache and a disk image.

mod bench;
mod bitmap;
pub mod crash;
mod ext3;
mod inode;
mod io;
mod journal;
pub mod layout;

pub use crate::workload::{FsBench as BenchSpec, FsParams, DEFAULT_MEMORY};
pub use bench::{build as build_bench, vm_rng, Workload as Bench};
pub use ext3::{Ext3, OpCounts};
pub use inode::Ino;
pub use io::{CommitRecord, FsIo, JournalBlock};
pub use journal::{initial_super, Journal, JournalCounters, JournalMode};
pub use layout::Layout;

use crate::error::{Error, Result};
use crate::workload::{AppOp, AppSource, IoKind, WorkloadSpec};
use rand_pcg::Pcg64Mcg;
use serde::Serialize;
use std::collections::VecDeque;

/// Device requests and bytes of one kind.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct KindTraffic {
    pub read_requests: u64,
    pub read_bytes: u64,
    pub write_requests: u64,
    pub write_bytes: u64,
}

/// Device traffic by what the pages hold (002 Figs. 2–3).
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct TrafficByKind {
    pub data: KindTraffic,
    pub metadata: KindTraffic,
    pub journal: KindTraffic,
}

impl TrafficByKind {
    fn of(&mut self, kind: IoKind) -> &mut KindTraffic {
        match kind {
            IoKind::Data => &mut self.data,
            IoKind::Metadata => &mut self.metadata,
            IoKind::Journal => &mut self.journal,
        }
    }

    /// One request of `bytes` holding `kind`.
    pub fn count(&mut self, read: bool, kind: IoKind, bytes: u64) {
        let t = self.of(kind);
        if read {
            t.read_requests += 1;
            t.read_bytes += bytes;
        } else {
            t.write_requests += 1;
            t.write_bytes += bytes;
        }
    }

    /// One write request over pages of the given kinds (a writeback run may mix them:
    /// the request counts under its first page's kind, bytes under each page's).
    pub fn count_pages(&mut self, read: bool, kinds: &[u8], page_bytes: u64) {
        let Some(&first) = kinds.first() else {
            return;
        };
        let t = self.of(IoKind::from_u8(first));
        if read {
            t.read_requests += 1;
        } else {
            t.write_requests += 1;
        }
        for &k in kinds {
            let t = self.of(IoKind::from_u8(k));
            if read {
                t.read_bytes += page_bytes;
            } else {
                t.write_bytes += page_bytes;
            }
        }
    }

    /// All requests (reads and writes).
    pub fn requests(&self) -> u64 {
        [self.data, self.metadata, self.journal]
            .iter()
            .map(|t| t.read_requests + t.write_requests)
            .sum()
    }

    /// All bytes (reads and writes).
    pub fn bytes(&self) -> u64 {
        [self.data, self.metadata, self.journal]
            .iter()
            .map(|t| t.read_bytes + t.write_bytes)
            .sum()
    }
}

/// The `fs` section of a report.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct FsReport {
    pub bench: String,
    pub journal: JournalMode,
    pub vms: u32,
    pub block_bytes: u64,
    pub partition_bytes: u64,
    pub journal_bytes: u64,
    /// File-system operations (create, mkdir, delete, write, read, fsync).
    pub operations: u64,
    pub ops: OpCounts,
    pub transactions: u64,
    pub checkpoints: u64,
    /// Journal-area blocks written (descriptors, copies, revokes, commits, superblock).
    pub journal_blocks: u64,
    /// Blocks committed into the VMM's memory (`vma`) instead of the journal area.
    pub vmm_journal_blocks: u64,
    /// Device traffic by kind, reads and writes.
    pub io: TrafficByKind,
    /// All device requests and bytes (002 Figs. 2 and 3).
    pub requests: u64,
    pub bytes: u64,
}

/// Where a VM's application is in its run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Stage {
    Running,
    Finishing,
    Done,
}

/// The two threads of a VM: the application and the journal daemon (kjournald).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    /// Runs the benchmark; commits itself when it must wait for one anyway (fsync,
    /// a transaction grown to JBD's limit, the final sync).
    App,
    /// Commits the running transaction when its interval has passed.
    Journal,
}

/// How long a thread waiting for the other's commit sleeps between looks (ns).
const POLL_NS: u64 = 1_000_000;

/// One VM: its file system, its benchmark, and its two threads' places in the run.
pub struct FsVm {
    pub fs: Ext3,
    bench: Box<dyn Bench>,
    rng: Pcg64Mcg,
    stage: Stage,
    sync: bool,
    fsync_every: u64,
    since_fsync: u64,
    /// The application waits for a commit (fsync, a full transaction).
    commit_wanted: bool,
    /// The thread whose queue holds a commit in progress (one at a time, as in JBD).
    committing: Option<Role>,
    /// The journal daemon's queue.
    daemon: VecDeque<FsIo>,
    commit_ns: u64,
}

impl FsVm {
    /// VM `vm` of `p` on a partition of `layout`, seeded from `seed`; the VM's page
    /// cache holds `memory` bytes (the VMM's journal area defaults to that many blocks:
    /// it can protect at most every buffer of the guest).
    pub fn new(p: &FsParams, layout: Layout, vm: u32, seed: u64, memory: u64) -> Result<FsVm> {
        let vmm = if p.vma_area == 0 {
            (memory / layout.block_bytes).max(64)
        } else {
            p.vma_area
        };
        let commit_ns = (p.commit_s * 1e9) as u64;
        let mut fs = Ext3::new(layout, p.mode, commit_ns, vmm)?;
        let mut rng = vm_rng(seed, vm);
        let mut bench = build_bench(&p.bench);
        fs.set_quiet(true);
        bench.setup(&mut fs, &mut rng)?;
        fs.set_quiet(false);
        fs.ops = OpCounts::default();
        Ok(FsVm {
            fs,
            bench,
            rng,
            stage: Stage::Running,
            sync: p.sync,
            fsync_every: p.fsync,
            since_fsync: 0,
            commit_wanted: false,
            committing: None,
            daemon: VecDeque::new(),
            commit_ns,
        })
    }

    /// Commit now on `role`'s queue: the commit's steps go after `role`'s pending ones.
    /// A daemon commit first finishes the application's operation in progress (its
    /// steps move to the daemon's queue): JBD waits for open handles before it commits,
    /// and the data an `ordered` commit writes must be in the cache by then.
    fn commit_on(&mut self, role: Role, sync: bool) {
        if role == Role::Journal {
            // Pinning stays with the application (it may throttle it; the daemon must
            // never wait on dirty memory it is about to unpin).
            let (pins, rest): (VecDeque<FsIo>, VecDeque<FsIo>) = self
                .fs
                .out
                .drain(..)
                .partition(|io| matches!(io, FsIo::Pin { .. }));
            self.daemon.extend(rest);
            self.fs.out = pins;
        }
        let pending = std::mem::take(&mut self.fs.out);
        if sync {
            self.fs.sync();
        } else {
            self.fs.commit();
        }
        let steps = std::mem::replace(&mut self.fs.out, pending);
        let queue = match role {
            Role::App => &mut self.fs.out,
            Role::Journal => &mut self.daemon,
        };
        queue.extend(steps);
        queue.push_back(FsIo::CommitEnd);
        self.committing = Some(role);
    }

    /// The next step of `role` at simulated time `now`; `None` once that thread is done.
    pub fn next_io(&mut self, role: Role, now: u64) -> Result<Option<FsIo>> {
        match role {
            Role::App => self.next_app(now),
            Role::Journal => self.next_daemon(now),
        }
    }

    /// The next queued step of `role`; the end of a commit lets another start.
    fn pop(&mut self, role: Role) -> Option<FsIo> {
        let io = match role {
            Role::App => self.fs.out.pop_front(),
            Role::Journal => self.daemon.pop_front(),
        }?;
        if io == FsIo::CommitEnd {
            self.committing = None;
            self.fs.commit_finished();
        }
        Some(io)
    }

    fn next_app(&mut self, now: u64) -> Result<Option<FsIo>> {
        loop {
            if let Some(io) = self.pop(Role::App) {
                return Ok(Some(io));
            }
            self.fs.now = now;
            let must_commit = self.commit_wanted || self.fs.journal.over_size();
            if (must_commit || self.stage == Stage::Finishing) && self.committing.is_some() {
                // The daemon is committing: wait for it (JBD: one commit at a time).
                return Ok(Some(FsIo::Think { ns: POLL_NS }));
            }
            match self.stage {
                Stage::Running if must_commit => {
                    self.commit_wanted = false;
                    self.commit_on(Role::App, false);
                }
                // The interval is over and no operation is open: the daemon's commit
                // starts now (JBD locks the transaction; new operations go to the next).
                Stage::Running if self.committing.is_none() && self.fs.journal.commit_due(now) => {
                    self.commit_on(Role::Journal, false);
                }
                Stage::Running => {
                    if !self.bench.step(&mut self.fs, &mut self.rng)? {
                        self.stage = Stage::Finishing;
                        continue;
                    }
                    self.since_fsync += 1;
                    if self.fsync_every > 0 && self.since_fsync >= self.fsync_every {
                        self.since_fsync = 0;
                        self.fs.ops.fsync += 1;
                        self.commit_wanted = true;
                    }
                }
                Stage::Finishing => {
                    self.commit_on(Role::App, self.sync);
                    self.stage = Stage::Done;
                }
                Stage::Done => return Ok(None),
            }
        }
    }

    fn next_daemon(&mut self, now: u64) -> Result<Option<FsIo>> {
        loop {
            if let Some(io) = self.pop(Role::Journal) {
                return Ok(Some(io));
            }
            if self.stage == Stage::Done {
                return Ok(None);
            }
            self.fs.now = now;
            if self.committing.is_none() && self.fs.journal.commit_due(now) {
                self.commit_on(Role::Journal, false);
                continue;
            }
            // Sleep until the running transaction's interval is over (or look again
            // soon while the application commits).
            let until = if self.committing.is_some() {
                now + POLL_NS
            } else {
                self.fs.journal.due_at().unwrap_or(now + self.commit_ns)
            };
            return Ok(Some(FsIo::Sleep {
                until: until.max(now + 1),
            }));
        }
    }

    pub fn progress(&self) -> f64 {
        self.bench.progress()
    }
}

/// The VMs of an `fs:` workload as the host model's application source.
pub struct FsWorkload {
    params: FsParams,
    vms: Vec<FsVm>,
    /// Logical pages per file-system block, and per partition.
    pages_per_block: u64,
    partition_pages: u64,
}

impl FsWorkload {
    /// The workload `p` on a device of `logical_pages` pages of `page_size` bytes, each
    /// VM with `memory` bytes of page cache.
    pub fn new(
        p: &FsParams,
        logical_pages: u64,
        page_size: u64,
        seed: u64,
        memory: u64,
    ) -> Result<FsWorkload> {
        let ws = |reason: String| Error::workload("fs", reason);
        if !p.block.is_multiple_of(page_size) {
            return Err(ws(format!(
                "block = {} B is not a multiple of the flash page ({page_size} B, \
                 flash.page_size): set block to a multiple of it",
                p.block
            )));
        }
        let ppb = p.block / page_size;
        let logical_bytes = logical_pages * page_size;
        let partition = if p.partition == 0 {
            logical_bytes / p.vms as u64
        } else {
            p.partition
        };
        let partition = partition / p.block * p.block;
        if partition * p.vms as u64 > logical_bytes || partition == 0 {
            return Err(ws(format!(
                "partition layout does not fit: vms = {} × partition = {} B needs {} B, the \
                 device's logical space is {logical_bytes} B (change `partition` or `vms`)",
                p.vms,
                partition,
                partition * p.vms as u64
            )));
        }
        let blocks = partition / p.block;
        let layout = Layout::new(blocks, p.block, p.journal_size / p.block).map_err(|e| {
            ws(if p.journal_size > 0 {
                format!("journal_size = {} B: {e}", p.journal_size)
            } else {
                format!("partition = {partition} B: {e}")
            })
        })?;
        let vms = (0..p.vms)
            .map(|v| FsVm::new(p, layout.clone(), v, seed, memory))
            .collect::<Result<Vec<_>>>()?;
        Ok(FsWorkload {
            params: p.clone(),
            vms,
            pages_per_block: ppb,
            partition_pages: partition / page_size,
        })
    }

    /// For `fs:` workloads, the VMs' file systems, and the config they run under (the host page
    /// cache sized from `memory` per VM unless `host.cache` is set); `None` for the others.
    pub fn build(
        spec: &WorkloadSpec,
        cfg: &crate::config::Config,
        logical_pages: u64,
        page_size: u64,
        seed: u64,
    ) -> Result<Option<(FsWorkload, crate::config::Config)>> {
        if spec.name() != "fs" {
            return Ok(None);
        }
        let p = FsParams::parse(spec)?;
        let mut cfg = cfg.clone();
        if cfg.host.cache.bytes() == 0 {
            let memory = p.memory.unwrap_or(DEFAULT_MEMORY);
            cfg.host.cache = crate::units::ByteSize(memory * p.vms as u64);
        } else if p.memory.is_some() {
            return Err(Error::workload(
                spec.as_str(),
                "give the VMs' page cache once: `memory=` (per VM) or host.cache (all VMs), not both",
            ));
        }
        if cfg.host.threads != 0 {
            return Err(Error::config(
                "host.threads",
                "an `fs:` workload runs one thread per VM (`vms=`): leave host.threads at 0",
            ));
        }
        if !cfg.timing.enabled {
            return Err(Error::config(
                "timing.enabled",
                "an `fs:` workload runs on simulated time (commits every `commit` s, the \
                 flusher's expiry): set timing.enabled = true",
            ));
        }
        cfg.validate()?;
        let memory = cfg.host.cache.bytes() / p.vms as u64;
        let fs = FsWorkload::new(&p, logical_pages, page_size, seed, memory)?;
        Ok(Some((fs, cfg)))
    }

    /// The partitions' layout.
    pub fn layout(&self) -> &Layout {
        &self.vms[0].fs.layout
    }

    /// File-system operations done so far.
    pub fn operations(&self) -> u64 {
        self.vms.iter().map(|v| v.fs.ops.total()).sum()
    }

    /// The section of the report (device traffic comes from the host model).
    pub fn report(&self, io: TrafficByKind) -> FsReport {
        let mut ops = OpCounts::default();
        let mut j = JournalCounters::default();
        for v in &self.vms {
            ops.add(&v.fs.ops);
            let c = v.fs.journal.counters;
            j.transactions += c.transactions;
            j.checkpoints += c.checkpoints;
            j.log_blocks += c.log_blocks;
            j.vmm_blocks += c.vmm_blocks;
        }
        let l = self.layout();
        FsReport {
            bench: self.params.bench.name().to_string(),
            journal: self.params.mode,
            vms: self.params.vms,
            block_bytes: l.block_bytes,
            partition_bytes: l.blocks * l.block_bytes,
            journal_bytes: l.journal_blocks * l.block_bytes,
            operations: ops.total(),
            ops,
            transactions: j.transactions,
            checkpoints: j.checkpoints,
            journal_blocks: j.log_blocks,
            vmm_journal_blocks: j.vmm_blocks,
            requests: io.requests(),
            bytes: io.bytes(),
            io,
        }
    }

    fn op(&self, vm: usize, io: FsIo, now: u64) -> Option<AppOp> {
        let base = vm as u64 * self.partition_pages;
        let ppb = self.pages_per_block;
        let lpn = |b: u64| base + b * ppb;
        let pages = |n: u64| (n * ppb) as u32;
        Some(match io {
            FsIo::Read { block, count, kind } => AppOp::Read {
                lpn: lpn(block),
                pages: pages(count as u64),
                kind,
            },
            FsIo::Write {
                block, count, kind, ..
            } => AppOp::Write {
                lpn: lpn(block),
                pages: pages(count as u64),
                value: None,
                kind,
                id: None,
            },
            // A pin that comes after its transaction committed (it waited behind a
            // throttled write) pins nothing: the commit has made the pages dirty.
            FsIo::Pin { block, count } if self.vms[vm].fs.journal.holds(block) => AppOp::Pin {
                lpn: lpn(block),
                pages: pages(count as u64),
            },
            FsIo::Pin { .. } => return None,
            FsIo::Unpin { block, count, .. } => AppOp::Unpin {
                lpn: lpn(block),
                pages: pages(count as u64),
            },
            FsIo::Journal { block, contents } => AppOp::SyncWrite {
                lpn: lpn(block),
                pages: pages(contents.len() as u64),
                kind: IoKind::Journal,
            },
            FsIo::WriteBack { block, count } => AppOp::WriteBack {
                lpn: lpn(block),
                pages: pages(count as u64),
            },
            FsIo::Drop { block, count } => AppOp::Drop {
                lpn: lpn(block),
                pages: pages(count as u64),
            },
            FsIo::Think { ns } => AppOp::Idle { until: now + ns },
            FsIo::Sleep { until } => AppOp::Sleep { until },
            FsIo::Committed(_) | FsIo::VmmRelease { .. } | FsIo::CommitEnd => return None,
        })
    }
}

impl AppSource for FsWorkload {
    fn next_op(&mut self, thread: usize, now: u64) -> Result<Option<(AppOp, Option<u64>)>> {
        // Threads 2v and 2v + 1: VM v's application and its journal daemon.
        let vm = thread / 2 % self.vms.len();
        let role = if thread.is_multiple_of(2) {
            Role::App
        } else {
            Role::Journal
        };
        while let Some(io) = self.vms[vm].next_io(role, now)? {
            if let Some(op) = self.op(vm, io, now) {
                return Ok(Some((op, None)));
            }
        }
        Ok(None)
    }

    fn progress(&self) -> Option<f64> {
        let n = self.vms.len() as f64;
        Some(self.vms.iter().map(|v| v.progress()).sum::<f64>() / n)
    }

    fn threads(&self) -> Option<u32> {
        Some(2 * self.vms.len() as u32)
    }

    fn counts_kinds(&self) -> bool {
        true
    }
}
