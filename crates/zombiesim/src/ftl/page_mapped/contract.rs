//! The page-mapped FTL's side of the FTL contract ([`Ftl`]): host writes, reads,
//! trims and padding through the full mapping table, the device's events, the checks
//! and the end-of-run summary.

use super::*;

impl PageMappedFtl {
    /// [`Ftl::write_page`] through the full mapping table.
    #[inline]
    fn write_mapped(&mut self, write: PageWrite, buffer: &mut dyn BufferView) -> Result<()> {
        let keep_zombie = write.cause == Cause::Buffer
            && self.base.marks.known() > 0
            && self.base.is_host_shadow(write.lpn);
        self.write_one(write, buffer)?;
        if keep_zombie {
            self.mark_zombie(write.lpn)?;
        }
        Ok(())
    }

    /// [`Ftl::read`] through the full mapping table.
    #[inline]
    fn read_mapped(&mut self, lpn: u64) -> Result<()> {
        let l = self.check_lpn(lpn)?;
        if let Some(c) = self.content.as_deref_mut() {
            c.on_read(l);
        }
        let ppn = self.l2p[l];
        self.base.host_read(l as u64, ppn)
    }

    /// [`Ftl::pad`] through the full mapping table: the page's current content is read
    /// and written again for the buffer; the configuration keeps padding buffers and
    /// the content layer apart.
    fn pad_mapped(&mut self, lpn: u64, buffer: &mut dyn BufferView) -> Result<()> {
        let l = self.check_lpn(lpn)?;
        let ppn = self.l2p[l];
        if ppn == NONE {
            return Ok(());
        }
        if self.content.is_some() {
            return Err(Error::config(
                "device.buffer_policy",
                "a padding buffer cannot run with the content layer (content.*)",
            ));
        }
        // The page keeps its content (known to the oracle when one runs).
        let value = self.base.pad_read(lpn, ppn);
        self.write_mapped(PageWrite::new(lpn, value, Cause::Buffer), buffer)
    }

    /// [`Ftl::trim`] through the full mapping table.
    #[inline]
    fn trim_mapped(&mut self, lpn: u64) -> Result<()> {
        if self.content.is_some() {
            return self.trim_content(lpn);
        }
        let l = self.check_lpn(lpn)?;
        self.base.counters.host_trim_pages += 1;
        let ppn = self.l2p[l];
        self.learn_trimmed(l, ppn);
        self.drop_zombie(l, ppn);
        if ppn != NONE {
            self.invalidate(ppn);
            self.l2p[l] = NONE;
        }
        if let Some(o) = &mut self.base.oracle {
            o.trim(l);
        }
        self.base.ops.dram();
        Ok(())
    }
}

impl Ftl for PageMappedFtl {
    #[inline]
    fn base(&self) -> &FtlBase {
        &self.base
    }

    #[inline]
    fn base_mut(&mut self) -> &mut FtlBase {
        &mut self.base
    }

    /// A write-back from the device buffer is not the newest copy when the host holds
    /// a newer dirty one (the page was twin-shadow): the new flash copy stays
    /// host-shadow.
    #[inline]
    fn write_page(&mut self, write: PageWrite, buffer: &mut dyn BufferView) -> Result<()> {
        self.write_mapped(write, buffer)?;
        if self.share_trigger > 0.0 && !self.in_gc {
            self.collect_by_share(buffer)?;
        }
        Ok(())
    }

    fn read(&mut self, lpn: u64) -> Result<()> {
        self.read_mapped(lpn)
    }

    fn trim(&mut self, lpn: u64) -> Result<()> {
        self.trim_mapped(lpn)
    }

    /// Padding rewrites the page's current content (read, then written for the
    /// buffer); a page of unknown content only (the configuration keeps padding
    /// buffers and the content layer apart).
    fn pad(&mut self, lpn: u64, buffer: &mut dyn BufferView) -> Result<()> {
        self.pad_mapped(lpn, buffer)
    }

    fn mapped(&self, lpn: u64) -> Option<u32> {
        self.lookup(lpn)
    }

    #[inline]
    fn prefetch(&self, lpn: u64) {
        crate::table::prefetch(&self.l2p, lpn as usize);
        let earlier = self.prefetched.push(lpn.min(u64::from(NONE)) as u32);
        if let Some(&ppn) = self.l2p.get(earlier as usize) {
            self.base.flash.prefetch_page(ppn);
        }
    }

    fn on_event(&mut self, event: DeviceEvent, buffer: &mut dyn BufferView) -> Result<()> {
        match event {
            DeviceEvent::Timing(on) => {
                self.base.ops.set_timing(on);
                if let Some(c) = self.content.as_deref_mut() {
                    c.reset_time();
                }
                Ok(())
            }
            DeviceEvent::Idle { from, until } => self.background_collect(from, until, buffer),
            DeviceEvent::Tick { now } => {
                self.now_ns = self.now_ns.max(now);
                if self.refresh.is_some() {
                    self.refresh_due(buffer)?;
                }
                Ok(())
            }
            DeviceEvent::Restart { now, lost } => {
                self.now_ns = self.now_ns.max(now);
                self.clear_all_zombies();
                if let Some(o) = self.base.oracle.as_mut() {
                    o.power_lost(lost);
                }
                self.refresh_fast_blocks(buffer)
            }
            DeviceEvent::HostShadow { lpn, marked: true } => self.mark_zombie(lpn),
            DeviceEvent::HostShadow { lpn, marked: false } => self.unmark_zombie(lpn),
            DeviceEvent::Lifetime { lpn, left } => {
                self.blocks
                    .told_lifetime(lpn as usize, left, self.base.clock);
                Ok(())
            }
        }
    }

    fn verify(&self) -> Result<()> {
        self.check_invariants()?;
        self.check_fdp()?;
        self.check_zombies()?;
        if let Some(o) = &self.base.oracle {
            o.check_all(&self.l2p)?;
        }
        Ok(())
    }

    fn space(&self) -> Space {
        Space {
            free_blocks: self.blocks.free_blocks(),
            held_back_pages: self
                .blocks
                .held_back_pages(&self.base.flash, self.base.geo.pages_per_block),
            valid_pages: self.blocks.valid_pages(),
        }
    }

    fn summary(&self) -> FtlSummary {
        FtlSummary {
            memory_bytes: self.base.flash.memory_bytes()
                + self.l2p.len() * 4
                + self.blocks.memory_bytes()
                + self.blocks.placement_bytes()
                + self.base.marks.memory_bytes()
                + self.content.as_ref().map_or(0, |c| c.memory_bytes())
                + self.refresh.as_ref().map_or(0, |r| r.memory_bytes())
                + self.blocks.rus.as_ref().map_or(0, |r| r.memory_bytes())
                + self.lifetimes.as_ref().map_or(0, |p| p.memory_bytes()),
            content: self.content_stats(),
            fdp: self.blocks.rus.as_deref().map(|rus| crate::ftl::FdpCounts {
                streams: rus.counts.clone(),
                invalid_placement_ids: self.blocks.rejected_hints(),
            }),
            zombie_weight: self.lifetimes.as_deref().map(|p| {
                let (samples, within_horizon) = p.counts();
                let (lifetimes, withdrawn) = p.histogram();
                crate::ftl::ZombieWeightReport {
                    horizon: p.horizon(),
                    samples,
                    within_horizon,
                    weight_end: p.weight(),
                    lifetimes,
                    withdrawn,
                    page_deaths: p.pages().by_class_and_age(),
                    page_trust: p.pages().trust(),
                }
            }),
            placement_model: self.blocks.placement_model(),
            streams: (!self.blocks.stream_counts.is_empty())
                .then(|| self.blocks.stream_counts.clone()),
        }
    }
}
