//! The NVMe host interface's own time: submitting a command, moving its data over the
//! PCIe link, and posting its completion (`interface.submit_us`, `interface.link_mb_s`,
//! `interface.complete_us`).
//!
//! ```text
//!  host ─doorbell, SQ entry─► [submit] ─write data─► │ controller + flash │ ─read data─► [complete] ─CQ entry─► host
//!         host → device, one command after another   │                    │  device → host
//!  latency = submit + (write: data) + device + (read: data) + complete
//! ```
//!
//! Host-to-device traffic (commands and write data) is carried in order, one command
//! after another, so a burst of writes queues on the link; a command reaches the
//! controller when its data has arrived, and those times never decrease. The
//! device-to-host direction (read data, completions) is charged its transfer time
//! without queueing: it carries at most the flash channels' output, a fraction of the
//! link's rate in every preset.
//!
//! All three are 0 by default (the seeds' reproductions were calibrated without them).
//! MQSim's (Tavakkol et al., FAST'18) host link, `PCIe_Link`, takes: four
//! lanes of 1 GB/s (its `ssdconfig.xml`), data in TLPs of at most 128 bytes each with
//! 28 bytes of header and framing, so a 4 KiB page takes 1.248 µs (3,282 MB/s of
//! payload); a command costs its doorbell write (8 ns), the read request of its SQ
//! entry (8 ns) and the entry, 72 bytes as MQSim lays it out (25 ns): 0.041 µs; a
//! completion its 16-byte CQ entry, 0.011 µs (`interface.submit_us = 0.041`,
//! `complete_us = 0.011`, `link_mb_s = 3282`). MQSim charges no firmware time for either;
//! a real controller takes a few µs more, which `submit_us` can hold.

use crate::config::Config;
use crate::workload::Op;

/// The data a command of `op` over `pages` pages carries across the link (none for a
/// trim or a flush).
#[inline]
pub fn payload_bytes(op: Op, pages: u32, page_size: u64) -> u64 {
    match op {
        Op::Read | Op::Write => pages as u64 * page_size,
        _ => 0,
    }
}

/// The host interface's time per command (ns, and ns per byte of data).
#[derive(Clone, Debug, Default)]
pub struct Link {
    submit_ns: u64,
    complete_ns: u64,
    /// ns per byte of data (0: data crosses in no time).
    ns_per_byte: f64,
    /// When the host-to-device direction is free again.
    inbound_free: u64,
}

impl Link {
    pub fn new(cfg: &Config) -> Self {
        let i = &cfg.interface;
        Link {
            submit_ns: (i.submit_us * 1000.0).round() as u64,
            complete_ns: (i.complete_us * 1000.0).round() as u64,
            // bytes / (MB/s) = µs; 1000 / (MB/s) ns per byte.
            ns_per_byte: if i.link_mb_s > 0.0 {
                1000.0 / i.link_mb_s
            } else {
                0.0
            },
            inbound_free: 0,
        }
    }

    /// Whether the link takes any time at all.
    pub fn is_free(&self) -> bool {
        self.submit_ns == 0 && self.complete_ns == 0 && self.ns_per_byte == 0.0
    }

    fn data_ns(&self, bytes: u64) -> u64 {
        (bytes as f64 * self.ns_per_byte).round() as u64
    }

    /// A command of `op` carrying `bytes` of data, issued by the host at `issue`: when it
    /// reaches the controller with its data (never before an earlier command).
    #[inline]
    pub fn to_device(&mut self, op: Op, bytes: u64, issue: u64) -> u64 {
        if self.is_free() {
            return issue;
        }
        let data = if op == Op::Write {
            self.data_ns(bytes)
        } else {
            0
        };
        let at = issue.max(self.inbound_free) + self.submit_ns + data;
        self.inbound_free = at;
        at
    }

    /// The same command, done on the device at `done`: when the host sees it complete.
    #[inline]
    pub fn to_host(&self, op: Op, bytes: u64, done: u64) -> u64 {
        let data = if op == Op::Read {
            self.data_ns(bytes)
        } else {
            0
        };
        done + data + self.complete_ns
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn link(submit_us: f64, complete_us: f64, mb_s: f64) -> Link {
        let mut cfg = Config::default();
        cfg.interface.submit_us = submit_us;
        cfg.interface.complete_us = complete_us;
        cfg.interface.link_mb_s = mb_s;
        Link::new(&cfg)
    }

    #[test]
    fn a_read_pays_the_command_then_its_data_on_the_way_back() {
        // 4096 bytes at 4096 MB/s: 1 µs.
        let mut l = link(0.5, 0.25, 4096.0);
        assert_eq!(l.to_device(Op::Read, 4096, 10_000), 10_500);
        assert_eq!(l.to_host(Op::Read, 4096, 40_000), 40_000 + 1_000 + 250);
    }

    #[test]
    fn writes_queue_on_the_link_in_order() {
        let mut l = link(0.0, 0.0, 4096.0);
        // Two 4 KiB writes issued together: the second's data follows the first's.
        assert_eq!(l.to_device(Op::Write, 4096, 0), 1_000);
        assert_eq!(l.to_device(Op::Write, 4096, 0), 2_000);
        // A later command finds the link free.
        assert_eq!(l.to_device(Op::Write, 4096, 5_000), 6_000);
        assert_eq!(l.to_host(Op::Write, 4096, 9_000), 9_000);
    }

    #[test]
    fn mqsims_link_takes_its_logged_times_and_the_default_none() {
        assert!(Link::new(&Config::default()).is_free());
        let mut l = link(0.041, 0.011, 3282.0);
        // 4 KiB of payload: 32 TLPs of 128 + 28 bytes over 4 lanes of 1 GB/s.
        let w = l.to_device(Op::Write, 4096, 0);
        assert!((w as i64 - (41 + 1248)).abs() <= 1, "{w}");
        let zero = link(0.0, 0.0, 0.0);
        assert!(zero.is_free());
    }
}
