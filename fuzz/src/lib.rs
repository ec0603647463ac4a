//! What every fuzz target links: an allocator that turns an allocation out of proportion
//! to a fuzz input (at most 64 KiB) into a crash libFuzzer saves, instead of a slow
//! swap or an RSS limit hit long after the fact.
//!
//! A single request above [`MAX_ONE`] or more than [`MAX_LIVE`] bytes live at once aborts
//! with a message naming the size.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};

/// The largest single allocation allowed.
pub const MAX_ONE: usize = 256 << 20;
/// The most bytes allowed live at once.
pub const MAX_LIVE: usize = 1 << 30;

struct Capped;

static LIVE: AtomicUsize = AtomicUsize::new(0);

fn refuse(what: &str, size: usize) -> ! {
    // No allocation here: write the message with a fixed buffer.
    use std::io::Write;
    let mut buf = [0u8; 160];
    let mut cur = std::io::Cursor::new(&mut buf[..]);
    let _ = writeln!(
        cur,
        "zombiesim-fuzz: {what} of {size} bytes: unbounded allocation"
    );
    let n = cur.position() as usize;
    let _ = std::io::stderr().write_all(&buf[..n]);
    std::process::abort();
}

unsafe impl GlobalAlloc for Capped {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        self.account(layout.size());
        System.alloc(layout)
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        self.account(layout.size());
        System.alloc_zeroed(layout)
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
        System.dealloc(ptr, layout)
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        if new_size > layout.size() {
            self.account(new_size - layout.size());
        } else {
            LIVE.fetch_sub(layout.size() - new_size, Ordering::Relaxed);
        }
        if new_size > MAX_ONE {
            refuse("a reallocation", new_size);
        }
        System.realloc(ptr, layout, new_size)
    }
}

impl Capped {
    #[inline]
    fn account(&self, size: usize) {
        if size > MAX_ONE {
            refuse("an allocation", size);
        }
        let live = LIVE.fetch_add(size, Ordering::Relaxed) + size;
        if live > MAX_LIVE {
            refuse("live memory", live);
        }
    }
}

#[global_allocator]
static ALLOCATOR: Capped = Capped;
