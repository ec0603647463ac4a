//! Inodes as the allocator keeps them: a file's data blocks as extents (logical to
//! physical), its indirect blocks in allocation order, where its entry is in its
//! parent directory, and for a directory its blocks and the entries each holds.

/// An inode number.
pub type Ino = u32;

/// Direct block pointers in an inode.
pub(super) const DIRECT: u64 = 12;
/// Directory entries per block of `block_bytes` (32 bytes each on average).
pub(super) const DIRENT_BYTES: u64 = 32;

#[derive(Clone, Copy, Debug)]
pub(super) struct Extent {
    pub(super) lblk: u64,
    pub(super) pblk: u64,
    pub(super) len: u64,
}

#[derive(Debug, Default)]
pub(super) struct Dir {
    pub(super) blocks: Vec<u64>,
    pub(super) counts: Vec<u32>,
    pub(super) hint: usize,
}

#[derive(Debug, Default)]
pub(super) struct Inode {
    pub(super) size: u64,
    pub(super) nblocks: u64,
    pub(super) extents: Vec<Extent>,
    /// Indirect blocks in allocation order: [IND, DIND, second-level …].
    pub(super) indirect: Vec<u64>,
    pub(super) dir: Option<Box<Dir>>,
    pub(super) parent: Ino,
    /// Index of the parent's directory block holding this inode's entry.
    pub(super) slot: u32,
}
