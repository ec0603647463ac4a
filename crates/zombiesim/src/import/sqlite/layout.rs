//! The trace's address layout: where each of the capture's three files (the
//! database, the WAL, the WAL index) sits in the one byte address space, which file a
//! path names ([`FileKind`]), and the 4 KiB pages a byte range touches ([`pages`]).

/// Bytes per database page (and per fingerprint, and per device page).
pub const PAGE: u64 = 4096;
/// Where the database file starts in the trace's address space.
pub const DB_BASE: u64 = 0;
/// Where the WAL file (`-wal`) starts: 1 TiB.
pub const WAL_BASE: u64 = 1 << 40;
/// Where the WAL index (`-shm`) starts: 2 TiB.
pub const SHM_BASE: u64 = 2 << 40;
/// The largest file each region holds.
pub const REGION_BYTES: u64 = 1 << 40;
/// Bytes of the WAL's own header, before the first frame.
pub const WAL_HEADER: u64 = 32;

/// Which of the database's files a write goes to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum FileKind {
    Db,
    Wal,
    Shm,
}

impl FileKind {
    pub(super) fn base(self) -> u64 {
        match self {
            FileKind::Db => DB_BASE,
            FileKind::Wal => WAL_BASE,
            FileKind::Shm => SHM_BASE,
        }
    }

    /// The kind of `path` by its suffix (`-wal`, `-shm`, else the database), and the
    /// database's path; `None` for a rollback journal.
    pub(super) fn of_path(path: &str) -> Option<(FileKind, &str)> {
        if path.ends_with("-journal") {
            None
        } else if let Some(db) = path.strip_suffix("-wal") {
            Some((FileKind::Wal, db))
        } else if let Some(db) = path.strip_suffix("-shm") {
            Some((FileKind::Shm, db))
        } else {
            Some((FileKind::Db, path))
        }
    }
}

/// The 4 KiB pages `[offset, offset + len)` touches: `(first, count)`.
pub(super) fn pages(offset: u64, len: u64) -> (u64, u64) {
    if len == 0 {
        return (offset / PAGE, 0);
    }
    let first = offset / PAGE;
    let last = offset.saturating_add(len - 1) / PAGE;
    (first, last - first + 1)
}
