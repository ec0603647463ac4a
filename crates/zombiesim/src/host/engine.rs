//! The host model's steps: application operations, device commands, writeback,
//! notifications and samples.

use super::notifier::{CommandAt, HostChange};
use super::{Event, HostOutcome, HostSim, Observer, Reason};
use crate::device::{Command, Payload, WriteHint, NO_VALUE};
use crate::error::Result;
use crate::report::AwarenessPoint;
use crate::workload::{AppOp, IoKind, Op};

impl HostSim<'_> {
    /// Submit one device command at `now`; returns its completion time. Piggybacked
    /// notifications ride on every read and write.
    fn submit(&mut self, now: u64, cmd: Command, observer: &mut dyn Observer) -> Result<u64> {
        let bytes = crate::interface::payload_bytes(cmd.op, cmd.pages, self.page_bytes());
        let issue = self.queue.issue(now);
        let at = self.link.to_device(cmd.op, bytes, issue);
        let host = &self.cache;
        let done = self
            .notifier
            .submit(self.device, at, cmd, |l| host.is_dirty(l))?;
        let done = self.link.to_host(cmd.op, bytes, done);
        self.queue.complete(done);
        self.last_done = self.last_done.max(done);
        if cmd.op != Op::Flush {
            self.device_latency
                .record(cmd.op == Op::Read, done - now, bytes);
        }
        if !observer.after_command(self.device)? {
            self.commands_ok = false;
        }
        Ok(done)
    }

    fn page_bytes(&self) -> u64 {
        self.cache_page_bytes
    }

    /// The cached page `lpn` now holds `value` (content-aware devices see it when the
    /// page is written back). The table is allocated at the first known value.
    fn remember_value(&mut self, lpn: u64, value: Option<u64>) {
        match value {
            Some(v) => {
                if self.values.is_empty() {
                    self.values = vec![NO_VALUE; self.device.logical_pages() as usize];
                }
                self.values[lpn as usize] = v;
            }
            None if !self.values.is_empty() => self.values[lpn as usize] = NO_VALUE,
            None => {}
        }
    }

    /// Count one request of `pages` pages holding `kind` (sources that count kinds).
    fn count_kind(&mut self, read: bool, kind: IoKind, pages: u32) {
        if !self.kinds.is_empty() {
            self.traffic
                .count(read, kind, pages as u64 * self.cache_page_bytes);
        }
    }

    /// Write back, and wait for, the dirty pages among `lpn..lpn + pages`, in runs of
    /// at most `max_write`; returns when the last completes.
    fn write_back_range(
        &mut self,
        now: u64,
        lpn: u64,
        pages: u32,
        observer: &mut dyn Observer,
    ) -> Result<u64> {
        let mut done = now;
        let end = lpn + pages as u64;
        let mut l = lpn;
        while l < end {
            if !self.cache.take_dirty(l) {
                l += 1;
                continue;
            }
            let mut n = 1u32;
            while n < self.max_write && l + (n as u64) < end && self.cache.take_dirty(l + n as u64)
            {
                n += 1;
            }
            let t = self.write_back(now, l, n, Reason::Sync, observer)?;
            self.sync_writeback.push(std::cmp::Reverse((t, n as u64)));
            self.sync_writeback_pages += n as u64;
            done = done.max(t);
            l += n as u64;
        }
        if done > now {
            self.events.push(done, Event::SyncWritebackDone);
        }
        Ok(done)
    }

    /// Page `lpn` went clean → dirty in the host, or its dirty copy was dropped
    /// unwritten (`change`): the channel learns it. A notification command is
    /// non-queued like SATA TRIM: it waits for the queue to drain and holds the
    /// interface for `command_us`.
    fn changed(&mut self, lpn: u64, now: u64, change: HostChange) -> Result<()> {
        let host = &self.cache;
        let at = CommandAt::Queue(&mut self.queue, now);
        if let Some(done) =
            self.notifier
                .changed(self.device, lpn, change, |l| host.is_dirty(l), at)?
        {
            self.last_done = self.last_done.max(done);
        }
        Ok(())
    }

    /// The pages from `lpn` (before `end`) that carry the same placement identifier,
    /// and the identifier: the kind of each page is `kind`, or the one it was written
    /// as.
    fn id_run(&self, lpn: u64, end: u64, kind: Option<IoKind>) -> (u32, WriteHint) {
        if !self.ids.on() {
            return ((end - lpn) as u32, WriteHint::NONE);
        }
        let kind_of = |l: u64| {
            kind.unwrap_or_else(|| {
                IoKind::from_u8(self.kinds.get(l as usize).copied().unwrap_or(0))
            })
        };
        let id = self.ids.of(lpn, kind_of(lpn));
        let mut n = 1u64;
        while lpn + n < end && self.ids.of(lpn + n, kind_of(lpn + n)) == id {
            n += 1;
        }
        let hint = WriteHint {
            stream: id,
            ..WriteHint::NONE
        };
        (n as u32, hint)
    }

    /// Write back dirty pages `lpn..lpn + pages` (one command per run of one placement
    /// identifier); returns when the last completes.
    fn write_back(
        &mut self,
        now: u64,
        lpn: u64,
        pages: u32,
        reason: Reason,
        observer: &mut dyn Observer,
    ) -> Result<u64> {
        let end = lpn + pages as u64;
        let mut at = lpn;
        let mut done = now;
        while at < end {
            let (n, hint) = self.id_run(at, end, None);
            done = done.max(self.write_back_run(now, at, n, hint, reason, observer)?);
            at += n as u64;
        }
        Ok(done)
    }

    /// Write back one run of dirty pages with one identifier.
    fn write_back_run(
        &mut self,
        now: u64,
        lpn: u64,
        pages: u32,
        hint: WriteHint,
        reason: Reason,
        observer: &mut dyn Observer,
    ) -> Result<u64> {
        let wb = &mut self.cache_counts.writeback_pages;
        match reason {
            Reason::Expire => wb.expire += pages as u64,
            Reason::Background => wb.background += pages as u64,
            Reason::Evict => wb.evict += pages as u64,
            Reason::Sync => wb.sync += pages as u64,
        }
        self.cache_counts.writeback_commands += 1;
        if !self.kinds.is_empty() {
            let kinds = &self.kinds[lpn as usize..(lpn + pages as u64) as usize];
            self.traffic
                .count_pages(false, kinds, self.cache_page_bytes);
        }
        // The content each page was dirtied with travels with the writeback.
        let values = std::mem::take(&mut self.values);
        let payload = if values.is_empty() {
            Payload::Unknown
        } else {
            Payload::PerPage(&values[lpn as usize..(lpn + pages as u64) as usize])
        };
        let cmd = Command {
            payload,
            hint,
            ..Command::new(Op::Write, lpn, pages)
        };
        let done = self.submit(now, cmd, observer);
        self.values = values;
        done
    }

    /// Run one application operation issued at `now`. Returns when it completes and
    /// whether the thread must sleep (throttled) until dirty pages fall under the limit.
    pub(super) fn execute(
        &mut self,
        op: AppOp,
        now: u64,
        observer: &mut dyn Observer,
    ) -> Result<(u64, bool)> {
        let start = now;
        let now = now + self.request_ns;
        let mut done = now;
        let mut throttle = false;
        match op {
            AppOp::Read { lpn, pages, kind } => {
                self.app_counts.requests += 1;
                self.app_counts.read_pages += pages as u64;
                let end = lpn + pages as u64;
                let mut run: Option<(u64, u32)> = None;
                for l in lpn..end {
                    let a = self.cache.read(l);
                    if let Some(victim) = a.evicted_dirty {
                        let t = self.write_back(now, victim as u64, 1, Reason::Evict, observer)?;
                        done = done.max(t);
                    }
                    if a.hit {
                        self.cache_counts.read_hits += 1;
                        if let Some((s, n)) = run.take() {
                            self.count_kind(true, kind, n);
                            let cmd = Command::new(Op::Read, s, n);
                            done = done.max(self.submit(now, cmd, observer)?);
                        }
                    } else {
                        self.cache_counts.read_misses += 1;
                        run = match run {
                            Some((s, n)) => Some((s, n + 1)),
                            None => Some((l, 1)),
                        };
                    }
                }
                if let Some((s, n)) = run {
                    self.count_kind(true, kind, n);
                    done = done.max(self.submit(now, Command::new(Op::Read, s, n), observer)?);
                }
                self.app
                    .record(true, done - start, pages as u64 * self.page_bytes());
            }
            AppOp::Write {
                lpn,
                pages,
                value,
                kind,
                id,
            } => {
                self.app_counts.requests += 1;
                self.app_counts.write_pages += pages as u64;
                if !self.kinds.is_empty() {
                    self.kinds[lpn as usize..(lpn + pages as u64) as usize].fill(kind as u8);
                }
                if self.cache.capacity() == 0 {
                    self.count_kind(false, kind, pages);
                    let end = lpn + pages as u64;
                    for l in lpn..end {
                        self.ids.written(l, id);
                    }
                    let mut at = lpn;
                    while at < end {
                        let (n, hint) = self.id_run(at, end, Some(kind));
                        let cmd = Command {
                            payload: value.map_or(Payload::Unknown, Payload::Same),
                            hint,
                            ..Command::new(Op::Write, at, n)
                        };
                        done = done.max(self.submit(now, cmd, observer)?);
                        at += n as u64;
                    }
                } else {
                    for l in lpn..lpn + pages as u64 {
                        let a = self.cache.write(l, now);
                        self.remember_value(l, value);
                        self.ids.written(l, id);
                        if let Some(victim) = a.evicted_dirty {
                            let t =
                                self.write_back(now, victim as u64, 1, Reason::Evict, observer)?;
                            done = done.max(t);
                        }
                        if a.hit {
                            self.cache_counts.write_hits += 1;
                        } else {
                            self.cache_counts.write_misses += 1;
                        }
                        if a.dirtied {
                            self.changed(l, now, HostChange::Dirtied)?;
                        } else {
                            self.cache_counts.absorbed_writes += 1;
                        }
                    }
                    if self.cache.dirty() > self.background_limit {
                        self.pump(now, observer)?;
                    }
                    // Linux throttles writers of file data (balance_dirty_pages);
                    // dirtying metadata buffers does not wait.
                    throttle = kind == IoKind::Data && self.over_dirty_limit(now);
                }
                self.app
                    .record(false, done - start, pages as u64 * self.page_bytes());
            }
            AppOp::SyncWrite { lpn, pages, kind } => {
                self.app_counts.requests += 1;
                self.app_counts.sync_write_pages += pages as u64;
                // A synchronous write (O_DIRECT | O_SYNC) is durable when it completes;
                // the block layer splits it into commands of at most `max_write`.
                let mut at = lpn;
                let end = lpn + pages as u64;
                while at < end {
                    let run_end = end.min(at + self.max_write as u64);
                    let (n, hint) = self.id_run(at, run_end, Some(kind));
                    self.count_kind(false, kind, n);
                    let cmd = Command {
                        fua: true,
                        hint,
                        ..Command::new(Op::Write, at, n)
                    };
                    done = done.max(self.submit(now, cmd, observer)?);
                    at += n as u64;
                }
                self.app
                    .record(false, done - start, pages as u64 * self.page_bytes());
            }
            AppOp::Trim { lpn, pages } => {
                self.app_counts.requests += 1;
                self.app_counts.trim_pages += pages as u64;
                for l in lpn..lpn + pages as u64 {
                    self.cache.discard(l);
                }
                self.wake_throttled(now);
                done = done.max(self.submit(now, Command::new(Op::Trim, lpn, pages), observer)?);
            }
            AppOp::WriteBack { lpn, pages } => {
                done = done.max(self.write_back_range(now, lpn, pages, observer)?);
            }
            AppOp::Pin { lpn, pages } => {
                self.app_counts.requests += 1;
                self.app_counts.write_pages += pages as u64;
                for l in lpn..lpn + pages as u64 {
                    if !self.kinds.is_empty() {
                        self.kinds[l as usize] = IoKind::Data as u8;
                    }
                    if let Some(victim) = self.cache.pin(l).evicted_dirty {
                        let t = self.write_back(now, victim as u64, 1, Reason::Evict, observer)?;
                        done = done.max(t);
                    }
                }
                throttle = self.over_dirty_limit(now);
            }
            AppOp::Unpin { lpn, pages } => {
                for l in lpn..lpn + pages as u64 {
                    if !self.kinds.is_empty() {
                        self.kinds[l as usize] = IoKind::Data as u8;
                    }
                    let a = self.cache.unpin(l, now);
                    if let Some(victim) = a.evicted_dirty {
                        let t = self.write_back(now, victim as u64, 1, Reason::Evict, observer)?;
                        done = done.max(t);
                    }
                    if a.dirtied {
                        self.changed(l, now, HostChange::Dirtied)?;
                    }
                }
                if self.cache.dirty() > self.background_limit {
                    self.pump(now, observer)?;
                }
                // Unpinned pages no longer count twice: writers may be under the limit.
                self.wake_throttled(now);
            }
            AppOp::Drop { lpn, pages } => {
                for l in lpn..lpn + pages as u64 {
                    if self.cache.discard(l) {
                        self.changed(l, now, HostChange::Dropped)?;
                    }
                }
                // Dropped dirty pages may bring the cache under the limit with no
                // writeback completing to say so.
                self.wake_throttled(now);
            }
            AppOp::Idle { until } | AppOp::Sleep { until } => {
                done = until.max(start);
            }
            AppOp::Flush => {
                self.app_counts.requests += 1;
                done = done.max(self.submit(now, Command::new(Op::Flush, 0, 0), observer)?);
            }
            AppOp::Commit => {
                self.app_counts.transactions += 1;
                done = start;
            }
        }
        Ok((done, throttle))
    }

    /// Keep writeback going: while dirty pages exceed the background limit, or files
    /// have expired since the last flusher wake, keep up to the queue depth of
    /// writeback commands in flight.
    pub(super) fn pump(&mut self, now: u64, observer: &mut dyn Observer) -> Result<()> {
        while self.inflight < self.queue.depth() {
            let background = self.cache.dirty() > self.background_limit;
            if self.sweep.is_none() {
                let expired = self
                    .expire_armed
                    .then(|| {
                        self.cache
                            .oldest_dirty_file(now.saturating_sub(self.expire_ns))
                    })
                    .flatten();
                if expired.is_none() {
                    self.expire_armed = false;
                }
                let file = match (expired, background) {
                    (Some(f), _) => f,
                    (None, true) => match self.cache.oldest_dirty_file(u64::MAX) {
                        Some(f) => f,
                        None => return Ok(()),
                    },
                    (None, false) => return Ok(()),
                };
                self.sweep = Some(self.cache.start_sweep(file));
                self.sweep_reason = if expired.is_some() {
                    Reason::Expire
                } else {
                    Reason::Background
                };
            } else if !background && !self.expire_armed {
                self.sweep = None;
                return Ok(());
            }
            let mut sweep = self.sweep.take().expect("a sweep");
            match self.cache.next_run(&mut sweep, self.max_write, now) {
                Some((lpn, n)) => {
                    self.sweep = Some(sweep);
                    let reason = self.sweep_reason;
                    let done = self.write_back(now, lpn, n, reason, observer)?;
                    self.inflight += 1;
                    self.events.push(done, Event::WritebackDone);
                }
                None => self.sweep = None,
            }
        }
        Ok(())
    }

    /// Whether dirty pages (with application writebacks still in flight) exceed the
    /// limit at `now`.
    fn over_dirty_limit(&mut self, now: u64) -> bool {
        while let Some(&std::cmp::Reverse((t, n))) = self.sync_writeback.peek() {
            if t > now {
                break;
            }
            self.sync_writeback.pop();
            self.sync_writeback_pages -= n;
        }
        self.cache.dirty() + self.cache.pinned() + self.sync_writeback_pages > self.dirty_limit
    }

    /// Wake throttled writers once dirty pages are under the limit.
    pub(super) fn wake_throttled(&mut self, now: u64) {
        if self.throttled.is_empty() || self.over_dirty_limit(now) {
            return;
        }
        for (t, since) in std::mem::take(&mut self.throttled) {
            let at = now.max(since);
            self.app_counts.throttled_s += (at - since) as f64 / 1e9;
            self.events.push(at, Event::Thread(t));
        }
    }

    /// Record dirty pages and the device's known zombies.
    pub(super) fn sample(&mut self, now: u64) {
        let dirty = self.cache.dirty();
        let cache = &self.cache;
        let (awareness, known) = self
            .notifier
            .sample(self.device, dirty, |l| cache.is_dirty(l));
        self.dirty_sum += dirty as f64;
        self.awareness.push(AwarenessPoint {
            t_s: now as f64 / 1e9,
            dirty_pages: dirty,
            known_zombies: known,
            awareness,
        });
    }

    pub(super) fn finish(mut self, interrupted: bool) -> HostOutcome {
        let end = self.app_end;
        self.sample(end);
        let elapsed_s = end as f64 / 1e9;
        let mut app = self.app_counts;
        app.elapsed_s = elapsed_s;
        app.tps = if elapsed_s > 0.0 {
            app.transactions as f64 / elapsed_s
        } else {
            0.0
        };
        app.latency = self.app.report();
        let mut cache = self.cache_counts;
        cache.dirty_pages_mean = self.dirty_sum / self.notifier.samples().max(1) as f64;
        cache.dirty_pages_end = self.cache.dirty();
        // Keep the awareness series to about 200 points.
        let step = self.awareness.len().div_ceil(200).max(1);
        let series = self
            .awareness
            .iter()
            .enumerate()
            .filter(|(i, _)| i % step == 0 || i + 1 == self.awareness.len())
            .map(|(_, p)| p.clone())
            .collect();
        HostOutcome {
            notify: self.notifier.report(series),
            app,
            cache,
            device_latency: self.device_latency.report(),
            device_throughput: self.device_latency.throughput(self.last_done.max(end)),
            device_write_quarters_us: self.device_latency.write_quarters_us(),
            elapsed_ns: end,
            interrupted,
            traffic: (!self.kinds.is_empty()).then_some(self.traffic),
        }
    }
}
