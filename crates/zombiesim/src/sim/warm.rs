//! Preconditioned devices kept for reuse: runs that differ only in what happens after
//! preconditioning start from one copy of the aged device.
//!
//! ```text
//!  run(cfg, source) ─► key = the config as the device sees it (every section but
//!                      host, notify, stats and the description; not the oracle's
//!                      horizon) + seed + verify
//!      │
//!      ├─ cached? ─► clone the preconditioned device (and whether WA settled)
//!      └─ no      ─► Device::new + precondition ─► keep a copy, if it fits the budget
//!      ▼
//!  measured phase (the clone is the same state a fresh preconditioning gives)
//! ```
//!
//! Preconditioning is deterministic in the device's configuration and the run's seed:
//! it writes past every buffer the host side has, with a seeded stream of its own, and
//! nothing of the workload (a run whose preconditioning replays the workload's own
//! writes, `precondition.pattern = "workload"`, is never cached). So a run that starts
//! from a cached copy gives the same report, byte for byte, as one that preconditions
//! itself; only the wall time differs. Twelve journaling modes and workloads on one
//! FTL, every notification setting of one device, or the oracle envelope's members at
//! each horizon then age the device once.
//!
//! The cache is an explicit object the caller owns and passes in [`RunOptions`]
//! (`zs.simulate_many` makes one per call): there is no process-wide state. It holds
//! devices up to a byte budget (by [`MemoryEstimate`]), dropping the least recently
//! used; a device larger than the whole budget, or than a quarter of the memory
//! available when it would be kept, is not kept. Two runs that miss the
//! same key at the same time both precondition (the second copy is not kept twice).
//!
//! [`RunOptions`]: super::RunOptions

use crate::config::{available_memory, Config, MemoryEstimate};
use crate::device::Device;
use std::collections::VecDeque;
use std::sync::Mutex;

/// What one cached device is looked up by.
pub(super) fn key(cfg: &Config, seed: u64, verify: bool) -> String {
    let mut c = cfg.clone();
    // What the device never reads: the host side and what the report keeps.
    c.description = String::new();
    c.host = Default::default();
    c.notify = Default::default();
    c.stats = Default::default();
    // The oracle's horizon is read by its notifier in the measured phase, never by the
    // device: the envelope's members at each horizon share one aged device.
    c.gc.oracle_horizon = 0;
    let text = serde_json::to_string(&c).expect("configs serialize");
    format!("{seed}/{verify}/{text}")
}

/// Preconditioned devices by the configuration that aged them (see the module docs).
pub struct PreconditionCache {
    /// Estimated bytes of the devices it may hold in all (fixed).
    budget: u64,
    inner: Mutex<Inner>,
}

struct Inner {
    used: u64,
    /// Least recently used first.
    entries: VecDeque<Entry>,
    hits: u64,
    misses: u64,
}

struct Entry {
    key: String,
    device: Device,
    steady: bool,
    bytes: u64,
}

/// What a cache has done so far.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PreconditionCacheStats {
    /// Runs that started from a cached device, and runs that preconditioned.
    pub hits: u64,
    pub misses: u64,
    /// Devices held now, and their estimated bytes.
    pub devices: u64,
    pub bytes: u64,
}

impl PreconditionCache {
    /// An empty cache that holds devices of at most `budget` estimated bytes in all.
    pub fn new(budget: u64) -> PreconditionCache {
        PreconditionCache {
            budget,
            inner: Mutex::new(Inner {
                used: 0,
                entries: VecDeque::new(),
                hits: 0,
                misses: 0,
            }),
        }
    }

    /// What a run of `cfg` with `seed` and `verify` is filed under: runs with the same
    /// key age the same device. `None` when its preconditioning replays the workload's
    /// own writes (`precondition.pattern = "workload"`): that device is never kept. A
    /// caller scheduling many runs can put those that share a device where the first
    /// one's copy will be waiting for the others.
    pub fn key_of(cfg: &Config, seed: u64, verify: bool) -> Option<String> {
        (!cfg.precondition.replays_own_writes()).then(|| key(cfg, seed, verify))
    }

    /// Its counters and contents.
    pub fn stats(&self) -> PreconditionCacheStats {
        let g = self.lock();
        PreconditionCacheStats {
            hits: g.hits,
            misses: g.misses,
            devices: g.entries.len() as u64,
            bytes: g.used,
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        // A run that panicked while holding the lock left the entries whole: each
        // change below is made before or after the lock's only fallible step.
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// A copy of the device preconditioned under `key`, and whether its WA settled;
    /// counts a hit or a miss.
    pub(super) fn get(&self, key: &str) -> Option<(Device, bool)> {
        let mut g = self.lock();
        match g.entries.iter().position(|e| e.key == key) {
            Some(i) => {
                g.hits += 1;
                let e = g.entries.remove(i).expect("found");
                let copy = (e.device.clone(), e.steady);
                g.entries.push_back(e);
                Some(copy)
            }
            None => {
                g.misses += 1;
                None
            }
        }
    }

    /// Keep a copy of `device`, aged under `key` by `cfg`, unless it is kept already, its
    /// estimated state exceeds the budget, or it would take more than a quarter of the
    /// memory available now (runs check the memory available before they start: a copy
    /// kept must not leave the next one too little). The least recently used devices
    /// are dropped until it fits.
    pub(super) fn keep(
        &self,
        key: String,
        cfg: &Config,
        verify: bool,
        device: &Device,
        steady: bool,
    ) {
        let Ok(estimate) = MemoryEstimate::new(cfg, verify) else {
            return;
        };
        let bytes = estimate.total();
        // Refused before the copy is made: a device too large is never copied.
        if bytes > self.budget || available_memory().is_some_and(|free| bytes > free / 4) {
            return;
        }
        let copy = device.clone();
        let mut g = self.lock();
        if g.entries.iter().any(|e| e.key == key) {
            return;
        }
        while g.used + bytes > self.budget {
            let old = g.entries.pop_front().expect("used > 0 means entries");
            g.used -= old.bytes;
        }
        g.used += bytes;
        g.entries.push_back(Entry {
            key,
            device: copy,
            steady,
            bytes,
        });
    }
}

impl std::fmt::Debug for PreconditionCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PreconditionCache")
            .field("budget", &self.budget)
            .field("stats", &self.stats())
            .finish()
    }
}
