//! Model checking of every FTL × device write buffer against a reference map.
//!
//! Every combination of FTL kind (`ftl.kind`), device buffer (none, or each
//! `device.buffer_policy`) and buffer durability (`device.buffer_nonvolatile`) that the
//! configuration accepts runs random mixes of writes (FUA or not, single pages and runs
//! of up to a block), reads, trims, flushes, power losses, clean restarts and zombie
//! hints on a small device where GC and merges run all the time. After every step:
//!
//! - every logical page reads what the model says (the device's answer for buffered
//!   pages, the integrity oracle's truth otherwise), and `Device::verify` holds (the
//!   oracle: every mapping leads to the newest version; the FTL's invariants; the
//!   buffer's bookkeeping);
//! - the pages the device knows as zombies are exactly those the model hinted and
//!   nothing has written or trimmed since;
//! - after a power loss exactly the pages reported lost were not acknowledged durable,
//!   each reads its last durable value or a later one the buffer had evicted, every
//!   other page reads its newest value, a non-volatile buffer (or none) loses nothing,
//!   and no page is a shadow of any kind but device-shadow under a non-volatile buffer;
//! - a clean restart (a flush, then the power-off `device.restart_at` runs) loses
//!   nothing and leaves no zombie.
//!
//! Every FTL supports trim and zombie hints (`Ftl::trim`, `Ftl::set_zombie` are part of
//! the contract; only page and DFTL *use* the zombie marks in GC), so every FTL gets
//! every step. ShadowGC and BA-GC settings are further variants of the same
//! combinations (`VARIANTS`), and so are three things around the FTL:
//!
//! - the host write buffer (`host.buffer`, 003 §3.1), as many pages as the device
//!   buffer, above the device: every step enters through it
//!   (`HostWriteBuffer::request`, `restart` at a power loss), and the zombie hints are
//!   its own, through the notification channel (`notify.mode` ideal, piggyback or
//!   command), not the steps' (a zombie step is a read of a run of pages instead, and a
//!   FUA write a plain write: the host buffer has no FUA). Writes carry unique values,
//!   so the pages the host holds dirty are exactly those whose newest value the device
//!   does not hold, and after every step: the host buffer holds that many dirty pages
//!   (its bookkeeping checked), a read of any of them is served by the host, every
//!   zombie the device knows is one of them (under `ideal`, every one of them is
//!   known, but for a known fault of the host buffer: `Model::unaware`), a flush leaves
//!   none of them, and a power loss loses exactly them from the host (each then reads
//!   what the device held, which was durable or written since);
//! - twin-shadow discards (`device.discard_twins`, 003 §3.2) under that host buffer,
//!   alone and under full ShadowGC: a page dirty in both buffers that the device buffer
//!   evicts is dropped, and the checks above say the host's newer copy still reaches
//!   flash at its write-back, or is lost only with the host's power;
//! - the content layer (`content.dedup`, `content.pool` lru, mq, lx and infinite;
//!   page mapping only; no host buffer above it, whose check needs unique values):
//!   writes carry values, half of them from an alphabet of 16 (`content_value`), so
//!   writes deduplicate against live pages and revive dead ones, and every page reads
//!   its model value (the oracle checks flash by value then), across power losses
//!   that may take a buffered value and leave an equal older one.
//!
//! FDP (`fdp.*`, page mapping) runs the same steps with every handle count from 1 to 8,
//! initially and persistently isolated, one or two reclaim groups, with and without a
//! device buffer (`page_fdp`): every write names a placement identifier, some of them
//! invalid, and the invariants also check each reclaim unit's sums against its blocks.
//!
//! Which combinations exist is asserted by `the_combinations_that_exist`. The check
//! can fail: it catches what the configuration refuses as unsafe, forced past the
//! refusal (the skip policy above a volatile buffer, twin discards without a host
//! buffer, GC reads from the buffer under deduplication).
//!
//! `PROPTEST_CASES` overrides the case counts for longer runs.

/// Fail the current case with a message unless `$cond` holds.
macro_rules! check {
    ($cond:expr, $($fmt:tt)*) => {
        if !$cond {
            return Err(TestCaseError::fail(format!($($fmt)*)));
        }
    };
}

mod combos;
mod model;
mod run;
mod steps;

mod fdp;
mod fixed_sequence;
mod ftls;
mod regressions;
mod table;
