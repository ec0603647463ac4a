//! The device passes each command's write hint to the FTL, written directly or
//! destaged by the write buffer.

use super::{Command, Device, Payload, WriteHint};
use crate::config::Config;
use crate::error::Result;
use crate::ftl::{self, BufferView, DeviceEvent, Ftl, FtlBase, FtlSummary, PageWrite, Space};
use crate::stats::Cause;
use crate::workload::Op;
use std::sync::{Arc, Mutex};

/// An FTL that records every page write it is given, then hands it on.
#[derive(Clone)]
struct Recording {
    inner: Box<dyn Ftl>,
    seen: Arc<Mutex<Vec<PageWrite>>>,
}

impl Ftl for Recording {
    fn base(&self) -> &FtlBase {
        self.inner.base()
    }
    fn base_mut(&mut self) -> &mut FtlBase {
        self.inner.base_mut()
    }
    fn write_page(&mut self, write: PageWrite, buffer: &mut dyn BufferView) -> Result<()> {
        self.seen.lock().unwrap().push(write);
        self.inner.write_page(write, buffer)
    }
    fn read(&mut self, lpn: u64) -> Result<()> {
        self.inner.read(lpn)
    }
    fn trim(&mut self, lpn: u64) -> Result<()> {
        self.inner.trim(lpn)
    }
    fn pad(&mut self, lpn: u64, buffer: &mut dyn BufferView) -> Result<()> {
        self.inner.pad(lpn, buffer)
    }
    fn mapped(&self, lpn: u64) -> Option<u32> {
        self.inner.mapped(lpn)
    }
    fn prefetch(&self, lpn: u64) {
        self.inner.prefetch(lpn)
    }
    fn on_event(&mut self, event: DeviceEvent, buffer: &mut dyn BufferView) -> Result<()> {
        self.inner.on_event(event, buffer)
    }
    fn verify(&self) -> Result<()> {
        self.inner.verify()
    }
    fn space(&self) -> Space {
        self.inner.space()
    }
    fn summary(&self) -> FtlSummary {
        self.inner.summary()
    }
}

/// A small device (`buffer`: its write buffer) whose FTL records the writes it gets.
fn recording_device(buffer: &str) -> (Device, Arc<Mutex<Vec<PageWrite>>>) {
    let mut cfg = Config::preset("default").unwrap();
    cfg.set_many(&[
        ("flash.blocks_per_plane".to_string(), "32".to_string()),
        ("flash.pages_per_block".to_string(), "16".to_string()),
        ("ftl.over_provisioning".to_string(), "0.25".to_string()),
        ("device.buffer".to_string(), buffer.to_string()),
    ])
    .unwrap();
    let mut dev = Device::new(&cfg, 1, true).unwrap();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let inner = std::mem::replace(&mut dev.ftl, ftl::build(&cfg, 1, false).unwrap());
    dev.ftl = Box::new(Recording {
        inner,
        seen: seen.clone(),
    });
    (dev, seen)
}

const HINT: WriteHint = WriteHint {
    stream: Some(3),
    lifetime: Some(1000),
};

fn write(dev: &mut Device, lpn: u64, pages: u32, hint: WriteHint) {
    let cmd = Command {
        hint,
        payload: Payload::Same(lpn + 1),
        ..Command::new(Op::Write, lpn, pages)
    };
    dev.submit(0, &cmd).unwrap();
}

/// The hint each write of `lpn` reached the FTL with, for `cause`, in order.
fn hints(seen: &Mutex<Vec<PageWrite>>, lpn: u64, cause: Cause) -> Vec<WriteHint> {
    let seen = seen.lock().unwrap();
    seen.iter()
        .filter(|w| w.lpn == lpn && w.cause == cause)
        .map(|w| w.hint)
        .collect()
}

#[test]
fn a_direct_write_gives_the_ftl_its_commands_hint() {
    let (mut dev, seen) = recording_device("0");
    write(&mut dev, 10, 4, HINT);
    write(&mut dev, 20, 1, WriteHint::NONE);
    for lpn in 10..14 {
        assert_eq!(hints(&seen, lpn, Cause::Host), vec![HINT], "page {lpn}");
    }
    assert_eq!(hints(&seen, 20, Cause::Host), vec![WriteHint::NONE]);
    // Preconditioning carries it too.
    dev.set_timing(false);
    let cmd = Command {
        hint: HINT,
        precondition: true,
        ..Command::new(Op::Write, 30, 1)
    };
    dev.submit(0, &cmd).unwrap();
    assert_eq!(hints(&seen, 30, Cause::Host), vec![HINT]);
    dev.verify().unwrap();
}

#[test]
fn a_buffered_page_keeps_its_hint_until_it_is_destaged() {
    // Four pages of buffer.
    let (mut dev, seen) = recording_device("16KiB");
    write(&mut dev, 10, 2, HINT);
    write(&mut dev, 12, 1, WriteHint::NONE);
    assert!(seen.lock().unwrap().is_empty(), "the buffer absorbed them");
    // A rewrite replaces the hint with the new command's.
    let other = WriteHint {
        stream: Some(1),
        lifetime: None,
    };
    write(&mut dev, 11, 1, other);
    // Three more pages evict the oldest (LRU): 10, then 12.
    write(&mut dev, 40, 3, WriteHint::NONE);
    assert_eq!(hints(&seen, 10, Cause::Buffer), vec![HINT]);
    assert_eq!(hints(&seen, 12, Cause::Buffer), vec![WriteHint::NONE]);
    // A flush writes the rest.
    dev.submit(0, &Command::new(Op::Flush, 0, 0)).unwrap();
    assert_eq!(hints(&seen, 11, Cause::Buffer), vec![other]);
    assert_eq!(hints(&seen, 40, Cause::Buffer), vec![WriteHint::NONE]);
    // FUA writes go through with theirs.
    let cmd = Command {
        hint: HINT,
        fua: true,
        ..Command::new(Op::Write, 50, 1)
    };
    dev.submit(0, &cmd).unwrap();
    assert_eq!(hints(&seen, 50, Cause::Host), vec![HINT]);
    assert!(seen
        .lock()
        .unwrap()
        .iter()
        .all(|w| w.cause != Cause::Host || w.lpn == 50));
    dev.verify().unwrap();
}
