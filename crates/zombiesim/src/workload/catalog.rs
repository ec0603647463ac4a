//! The workloads a spec may name, with their keys and a line each (for listings and
//! for the error that names a key a workload does not have), and the bounds on a
//! synthetic run's length.

/// A known workload: its name, its keys and a one-line description.
#[derive(Clone, Copy, Debug)]
pub struct WorkloadInfo {
    pub name: &'static str,
    pub keys: &'static str,
    pub description: &'static str,
}

/// The longest synthetic run, in drive writes (`drive_writes`, `bytes`).
pub const MAX_DRIVE_WRITES: f64 = 100_000.0;
/// The most requests a synthetic run may ask for (`requests`).
pub const MAX_REQUESTS: u64 = 1_000_000_000_000;

pub(super) const COMMON_KEYS: &str = "read=0, trim=0, size=PAGE, reads=same|uniform, \
    one of drive_writes=1 | requests=N | bytes=SIZE, iops=N (open-loop arrivals)";

/// Every synthetic workload, for listings.
pub const WORKLOADS: &[WorkloadInfo] = &[
    WorkloadInfo {
        name: "uniform",
        keys: "",
        description: "writes uniformly random over the logical space",
    },
    WorkloadInfo {
        name: "sequential",
        keys: "start=0",
        description: "writes in ascending order from `start` (a page), wrapping at the end",
    },
    WorkloadInfo {
        name: "hotcold",
        keys: "r=0.9, f=0.1",
        description: "a fraction r of writes go to the first fraction f of the space",
    },
    WorkloadInfo {
        name: "locality",
        keys: "x=6",
        description:
            "Zombie Chasing locality: (100-x)% of writes to the first x% of space; reads uniform",
    },
    WorkloadInfo {
        name: "zc-micro",
        keys: "x=6, rw=0.5, size=16KiB, drive_writes=0.172",
        description: "000's micro-benchmark: locality x, rw reads per write (uniform), \
            16 KiB requests, 5.12 GB written per 29.8 GB of logical space",
    },
    WorkloadInfo {
        name: "flows",
        keys: "NAME=WORKLOAD[:key=value...],... with per-flow qd=1, class=urgent|high|medium|low, \
            weight=N; WORKLOAD a synthetic workload or randread | randwrite | seqread | seqwrite",
        description: "several request streams, each with its own NVMe submission queue, \
            arbitrated (interface.arbitration); per-flow latency, slowdown and fairness; \
            needs timing",
    },
    WorkloadInfo {
        name: "oltp",
        keys: "transactions=N, db=0.9, log=0.01",
        description: "TPC-C-like transactions through the host cache (the DB buffer); \
            needs timing and host.cache; users = host.threads",
    },
    WorkloadInfo {
        name: "fs",
        keys: "BENCH = seq_write | rnd_write | postmark | untar | kernel_compile, vms=8, \
            journal=ordered|writeback|journal|vma, partition=SPACE/vms, block=4KiB, \
            journal_size=mke2fs default, commit=5 (s), memory=96MiB (page cache per VM), \
            vma_area=the VM's cache in blocks, sync=true, fsync=0, and the benchmark's \
            keys (docs/journaling.md); none of the common keys",
        description: "ext3-like file systems, one per VM partition, with their journal, \
            running a file-level benchmark through the host page cache (002)",
    },
    WorkloadInfo {
        name: "zipf",
        keys: "theta=0.99, scramble=true",
        description:
            "Zipf(theta) over request-sized slots; scramble spreads hot slots over the space",
    },
    WorkloadInfo {
        name: "values",
        keys: "zipf=1.1, unique=0.3, catalog=PAGES/4, rebirth=0, gap=64, recur=0, \
            recur_pages=PAGES/1024, recur_zipf=1",
        description: "one-page writes at uniform addresses carrying content fingerprints: a \
            fraction `unique` fresh, a fraction `rebirth` rewriting a value that died about \
            `gap` page writes ago (exponential; no live page holds it), a fraction `recur` \
            rewriting one of `recur_pages` pages (Zipf(recur_zipf) by rank) back to the \
            other of its two values, the rest Zipf(zipf) over `catalog` values",
    },
    WorkloadInfo {
        name: "footprint",
        keys: "growth=0.05, window=64MiB, theta=0, phase=0, pause=0",
        description: "a written footprint growing by a fraction `growth` of writes (fresh \
            pages); the rest rewrite the `window` newest ones (Zipf(theta) by recency); \
            a fraction `pause` of the phases of `phase` bytes do not grow",
    },
    WorkloadInfo {
        name: "files",
        keys: "file=256KiB, seq=0.5, hot=0.05, r=0.9",
        description: "file-system-like writes: the space cut into files of `file` bytes; an \
            access picks a hot file (the first fraction `hot` of them) with probability r, \
            then rewrites the whole file in order (probability seq) or one request of it",
    },
    WorkloadInfo {
        name: "streams",
        keys: "seq=0.88, random=0.06, space=0.9, seq_size=128KiB, overwrite=zoned|uniform|zipf, \
            theta=1.2, hints=true",
        description: "three writers on their own placement identifiers (WARP's FIO mix): a \
            sequential log over the first `space` of the logical space (id 0, a fraction \
            `seq` of the written pages), uniform writes over the rest (id 1, `random`), \
            and overwrites of the log's region (id 2, the remaining pages; zoned: 80% to \
            the first 20%, 10% to the next 20%, 10% to the last 60%)",
    },
    WorkloadInfo {
        name: "kvcache",
        keys: "soc=0.04, utilisation=1.0, soc_writes=0.5, io=256KiB, zipf=0, hints=true",
        description: "a CacheLib-like flash cache over the first `utilisation` of the space: \
            a small-object cache (the last `soc` of it, id 0) rewriting one-page buckets \
            at random, and a large-object cache (id 1) writing its log in order in `io` \
            requests, oldest first; `soc_writes` of the written pages go to the former",
    },
];

impl WorkloadInfo {
    /// Keys every synthetic workload accepts.
    pub fn common_keys() -> &'static str {
        COMMON_KEYS
    }
}
