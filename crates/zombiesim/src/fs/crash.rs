//! The crash-consistency oracle: run one VM's file system against an adversarial page
//! cache and a disk image, crash it, recover, and check what each journaling mode
//! promises (SPEC §8).
//!
//! ```text
//!   FsVm (application and journal daemon, interleaved at random)
//!        ──FsIo──► cache (dirty blocks, any of them written home at any step, in any
//!                  order: the flusher may do anything the file system allows)
//!             └──► disk image: home blocks (versions) and journal blocks (records)
//!   crash at step k (a journal write may be torn: only a prefix lands)
//!   recover:  journal modes: replay the log from the superblock's tail: complete
//!             transactions in order, copies revoked by a later transaction skipped;
//!             vma: the VMM writes back the buffers of the transactions it still holds
//!   check:    every journaled block (metadata; data under journal/vma) holds exactly
//!             the version of the last recovered transaction that changed it
//!             (consistency); ordered: every data block written in a recovered
//!             transaction holds that write or a newer one (no stale data behind
//!             committed metadata); writeback promises no such thing
//! ```

use super::io::{CommitRecord, FsIo, JournalBlock};
use super::journal::{initial_super, JournalMode};
use super::{FsParams, FsVm, Layout, Role};
use crate::error::Result;
use rand::{RngExt, SeedableRng};
use rand_pcg::Pcg64Mcg;
use std::collections::BTreeMap;

#[derive(Clone, Debug, PartialEq)]
enum Content {
    Home(u64),
    Log(JournalBlock),
}

/// What a crash and recovery left.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Verdict {
    /// Steps run before the crash.
    pub steps: u64,
    /// The last transaction recovered (0 = none).
    pub recovered_tid: u64,
    /// Transactions committed before the crash.
    pub committed: u64,
    /// Journaled blocks not at their recovered version (a consistency failure).
    pub inconsistent: Vec<String>,
    /// Data blocks of recovered transactions holding older data than they committed
    /// with (allowed under `writeback` only).
    pub stale_data: Vec<String>,
}

/// Run the single VM of `p` (its first VM) on `layout`, writing dirty blocks home at
/// random with probability `flush` per step, crash after `crash_at` steps, recover
/// and check.
pub fn crash_and_recover(
    p: &FsParams,
    layout: Layout,
    seed: u64,
    crash_at: u64,
    flush: f64,
) -> Result<Verdict> {
    let mut vm = FsVm::new(
        p,
        layout,
        0,
        seed,
        p.memory.unwrap_or(super::DEFAULT_MEMORY),
    )?;
    let mut rng = Pcg64Mcg::seed_from_u64(seed.wrapping_add(0x5eed));
    let journal_super = vm.fs.journal.block_at(0);
    let mut disk: BTreeMap<u64, Content> = BTreeMap::new();
    disk.insert(journal_super, Content::Log(initial_super()));
    let mut cache: BTreeMap<u64, u64> = BTreeMap::new();
    let mut history: Vec<CommitRecord> = Vec::new();
    let mut vmm: BTreeMap<u64, CommitRecord> = BTreeMap::new();
    // The application and the journal daemon, interleaved at random: each is ready
    // again after its think time or sleep.
    let mut now = 0u64;
    let mut ready = [0u64; 2];
    let mut done = [false; 2];
    let mut steps = 0;
    // Whether each role's latest step was a journal write (its commit record, if the
    // write held one, is that role's next step).
    let mut journal_last = [false; 2];
    while steps < crash_at && !(done[0] && done[1]) {
        let eligible: Vec<usize> = (0..2).filter(|&r| !done[r] && ready[r] <= now).collect();
        let Some(&r) = eligible.get(rng.random_range(0..eligible.len().max(1))) else {
            now = (0..2)
                .filter(|&r| !done[r])
                .map(|r| ready[r])
                .min()
                .expect("one left");
            continue;
        };
        let role = if r == 0 { Role::App } else { Role::Journal };
        let Some(io) = vm.next_io(role, now)? else {
            done[r] = true;
            continue;
        };
        steps += 1;
        let last = steps == crash_at;
        journal_last[r] = matches!(io, FsIo::Journal { .. });
        match io {
            // Pinned data reaches no disk before its commit unpins it.
            FsIo::Read { .. } | FsIo::CommitEnd | FsIo::Pin { .. } => {}
            FsIo::Write {
                block,
                count,
                version,
                ..
            }
            | FsIo::Unpin {
                block,
                count,
                version,
            } => {
                for b in block..block + count as u64 {
                    cache.insert(b, version);
                }
            }
            FsIo::Journal { block, contents } => {
                // The write the crash interrupts may land only in part.
                let n = if last {
                    rng.random_range(0..=contents.len())
                } else {
                    contents.len()
                };
                for (i, c) in contents.into_iter().take(n).enumerate() {
                    disk.insert(block + i as u64, Content::Log(c));
                }
            }
            FsIo::WriteBack { block, count } => {
                let hit: Vec<u64> = cache
                    .range(block..block + count as u64)
                    .map(|(&b, _)| b)
                    .collect();
                for b in hit {
                    let v = cache.remove(&b).expect("listed");
                    disk.insert(b, Content::Home(v));
                }
            }
            FsIo::Drop { block, count } => {
                for b in block..block + count as u64 {
                    cache.remove(&b);
                }
            }
            FsIo::Think { ns } => ready[r] = now + ns,
            FsIo::Sleep { until } => ready[r] = until,
            FsIo::Committed(rec) => {
                if rec.in_vmm {
                    vmm.insert(rec.tid, rec.clone());
                }
                history.push(rec);
            }
            FsIo::VmmRelease { upto } => vmm.retain(|&t, _| t > upto),
        }
        // The flusher writes any dirty blocks home, in any order.
        while !cache.is_empty() && rng.random_bool(flush) {
            let k = rng.random_range(0..cache.len());
            let (&b, &v) = cache.iter().nth(k).expect("in range");
            cache.remove(&b);
            disk.insert(b, Content::Home(v));
        }
        now += 100_000;
    }
    // A commit block that landed with a role's last journal write made its
    // transaction durable: the oracle's record of it is that role's very next step,
    // whichever role the crash interrupted.
    for (r, role) in [(0, Role::App), (1, Role::Journal)] {
        if !journal_last[r] {
            continue;
        }
        if let Some(FsIo::Committed(rec)) = vm.next_io(role, now)? {
            if rec.in_vmm {
                vmm.insert(rec.tid, rec.clone());
            }
            history.push(rec);
        }
    }
    history.sort_by_key(|r| r.tid);
    // Recover.
    let recovered = if p.mode == JournalMode::Vma {
        let mut last = 0;
        let mut newest: BTreeMap<u64, u64> = BTreeMap::new();
        for rec in vmm.values() {
            for b in rec.freed.iter() {
                newest.remove(b);
            }
            for &b in rec.journaled.iter() {
                newest.insert(b, rec.tid);
            }
            last = rec.tid;
        }
        for (b, tid) in newest {
            disk.insert(b, Content::Home(tid));
        }
        // Everything committed is in the VMM's memory or already home.
        history.last().map_or(last, |r| r.tid)
    } else {
        replay(&mut disk, &vm.fs.journal)
    };
    // The state the recovered transactions describe.
    let mut expect: BTreeMap<u64, u64> = BTreeMap::new();
    let mut data: BTreeMap<u64, u64> = BTreeMap::new();
    for rec in history.iter().filter(|r| r.tid <= recovered) {
        for b in rec.freed.iter() {
            expect.remove(b);
            data.remove(b);
        }
        for &b in rec.journaled.iter() {
            expect.insert(b, rec.tid);
            data.remove(&b);
        }
        for &(b, stamp) in rec.ordered.iter() {
            data.insert(b, stamp);
        }
    }
    let mut v = Verdict {
        inconsistent: vm
            .fs
            .check()
            .err()
            .map(|e| format!("allocator: {e}"))
            .into_iter()
            .collect(),
        steps,
        recovered_tid: recovered,
        committed: history.last().map_or(0, |r| r.tid),
        ..Verdict::default()
    };
    for (&b, &tid) in &expect {
        match disk.get(&b) {
            Some(Content::Home(x)) if *x == tid => {}
            other => v.inconsistent.push(format!(
                "block {b}: transaction {tid} committed it, the disk holds {other:?}"
            )),
        }
    }
    for (&b, &stamp) in &data {
        match disk.get(&b) {
            Some(Content::Home(x)) if *x >= stamp => {}
            other => v.stale_data.push(format!(
                "data block {b}: written (stamp {stamp}) before its transaction committed, \
                 the disk holds {other:?}"
            )),
        }
    }
    Ok(v)
}

/// Replay the log on `disk` from its superblock; returns the last transaction
/// recovered (or the one before the tail when the log is empty).
fn replay(disk: &mut BTreeMap<u64, Content>, j: &super::Journal) -> u64 {
    let Some(Content::Log(JournalBlock::Super { tail, tail_tid })) =
        disk.get(&j.block_at(0)).cloned()
    else {
        panic!("the journal superblock is always on disk");
    };
    let len = j.len();
    let next = |p: u64| if p + 1 == len { 1 } else { p + 1 };
    let at = |disk: &BTreeMap<u64, Content>, p: u64| match disk.get(&j.block_at(p)) {
        Some(Content::Log(b)) => Some(b.clone()),
        _ => None,
    };
    // Pass 1: the complete transactions from the tail.
    let mut txns: Vec<(u64, Vec<u64>, Vec<u64>)> = Vec::new();
    let (mut pos, mut tid) = (tail, tail_tid);
    let mut homes = Vec::new();
    let mut revoked = Vec::new();
    let mut seen = 0;
    while seen < len {
        let Some(b) = at(disk, pos) else { break };
        match b {
            JournalBlock::Descriptor { tid: t, homes: h } if t == tid => {
                let mut ok = true;
                for &home in h.iter() {
                    pos = next(pos);
                    seen += 1;
                    if at(disk, pos) != Some(JournalBlock::Copy { home, tid }) {
                        ok = false;
                        break;
                    }
                    homes.push(home);
                }
                if !ok {
                    break;
                }
            }
            JournalBlock::Revoke { tid: t, blocks } if t == tid => revoked.extend(blocks.iter()),
            JournalBlock::Commit { tid: t } if t == tid => {
                txns.push((
                    tid,
                    std::mem::take(&mut homes),
                    std::mem::take(&mut revoked),
                ));
                tid += 1;
            }
            _ => break,
        }
        pos = next(pos);
        seen += 1;
    }
    // Pass 2: revokes; pass 3: copies not revoked by a later transaction.
    let mut revoke: BTreeMap<u64, u64> = BTreeMap::new();
    for (t, _, r) in &txns {
        for &b in r {
            revoke.insert(b, *t);
        }
    }
    for (t, h, _) in &txns {
        for &b in h {
            if revoke.get(&b).is_some_and(|&r| r > *t) {
                continue;
            }
            disk.insert(b, Content::Home(*t));
        }
    }
    txns.last().map_or(tail_tid - 1, |t| t.0)
}
