//! What an FTL sees of the device's write buffer while it relocates pages.

/// What an FTL may see of the device's write buffer while it relocates pages (003
/// §3.3: GC reads a device-shadow page's up-to-date content from the buffer). The
/// device passes it to every operation that may run GC or refresh.
pub trait BufferView {
    /// Whether any page is dirty (when not, no page is device-shadow).
    fn any_dirty(&self) -> bool;
    /// Whether a dirty copy of `lpn` is buffered: its flash copy is device-shadow.
    fn is_dirty(&self, lpn: u64) -> bool;
    /// Take the dirty copy of `lpn` for a relocation: the buffered copy becomes clean
    /// (its eviction writes nothing) and its content value is returned (`None`:
    /// unknown content). Call only when [`BufferView::is_dirty`] holds.
    fn take(&mut self, lpn: u64) -> Option<u64>;
    /// The chance that the dirty buffered copy of `lpn` is written again before the
    /// buffer evicts it, `P(U)` of 004 §5: the 3-region buffer's estimate for the
    /// region holding it. Only BA-VBS reads it, and the configuration lets BA-VBS run
    /// only above a 3-region buffer; other buffers answer 0.
    fn update_probability(&self, lpn: u64) -> f64;
}

/// The view of a device without a write buffer.
#[derive(Clone)]
pub struct NoBuffer;

impl BufferView for NoBuffer {
    fn any_dirty(&self) -> bool {
        false
    }
    #[inline]
    fn is_dirty(&self, _lpn: u64) -> bool {
        false
    }
    fn take(&mut self, _lpn: u64) -> Option<u64> {
        None
    }
    fn update_probability(&self, _lpn: u64) -> f64 {
        0.0
    }
}
