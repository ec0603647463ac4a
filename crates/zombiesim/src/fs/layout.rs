//! Where an ext3 partition keeps what: block groups, their bitmaps and inode tables,
//! the group descriptors, and the journal.
//!
//! ```text
//!   group 0          [sb][gdt ×G][block bitmap][inode bitmap][inode table ×I][ data … ]
//!   group 1, 3^k,    [sb][gdt ×G][block bitmap][inode bitmap][inode table ×I][ data … ]
//!   5^k, 7^k (backup superblocks, sparse_super)
//!   other groups     [block bitmap][inode bitmap][inode table ×I][ data … ]
//!   journal          an inode's blocks in the middle group's data area (as mke2fs
//!                    places it), contiguous where the groups allow
//! ```
//!
//! Sizes follow mke2fs's defaults: 8 × block-size blocks per group (32 768 for 4 KiB
//! blocks), one inode per 8 KiB of space, 128-byte inodes, 32-byte group descriptors,
//! and the default journal size (1 024 blocks below 128 MiB of 4 KiB blocks, 4 096 below
//! 1 GiB, 8 192 below 2 GiB, 16 384 below 16 GiB, 32 768 above; a tenth of the space at
//! most for tiny partitions).

/// Bytes per inode (mke2fs `inode_ratio`).
pub const INODE_RATIO: u64 = 8192;
/// Bytes per on-disk inode (ext3).
pub const INODE_BYTES: u64 = 128;
/// Bytes per group descriptor.
const DESC_BYTES: u64 = 32;
/// The first inode a file may get (ext3 reserves 1–10; 2 is the root directory).
pub const FIRST_INODE: u64 = 11;
/// The root directory's inode.
pub const ROOT_INODE: u64 = 2;

/// The on-disk layout of one partition, in file-system blocks.
#[derive(Clone, Debug, PartialEq)]
pub struct Layout {
    pub block_bytes: u64,
    /// Blocks in the partition.
    pub blocks: u64,
    pub blocks_per_group: u64,
    pub groups: u64,
    pub inodes_per_group: u64,
    /// Inode-table blocks per group.
    pub itable_blocks: u64,
    /// Group-descriptor blocks (in groups that carry a superblock copy).
    pub gdt_blocks: u64,
    /// Journal blocks (the first is the journal superblock).
    pub journal_blocks: u64,
}

/// mke2fs's default journal size for a file system of `blocks` blocks of `block_bytes`.
pub fn default_journal_blocks(blocks: u64, block_bytes: u64) -> u64 {
    // e2fsprogs counts 4 KiB-block thresholds; scale them for other sizes.
    let b4k = blocks * block_bytes / 4096;
    let per4k = match b4k {
        0..32_768 => 1024,
        32_768..262_144 => 4096,
        262_144..524_288 => 8192,
        524_288..4_194_304 => 16_384,
        _ => 32_768,
    };
    let j = per4k * 4096 / block_bytes;
    j.min(blocks / 10).max(64.min(blocks / 4))
}

impl Layout {
    /// The layout of `blocks` blocks of `block_bytes` with a journal of
    /// `journal_blocks` (0 = mke2fs's default). `Err` says what does not fit.
    pub fn new(
        blocks: u64,
        block_bytes: u64,
        journal_blocks: u64,
    ) -> std::result::Result<Layout, String> {
        let blocks_per_group = 8 * block_bytes;
        let mut groups = blocks.div_ceil(blocks_per_group);
        let inodes_total = (blocks * block_bytes / INODE_RATIO).max(FIRST_INODE + 16);
        let per_block = block_bytes / INODE_BYTES;
        let inodes_per_group = inodes_total
            .div_ceil(groups.max(1))
            .next_multiple_of(per_block)
            .min(8 * block_bytes);
        let itable_blocks = inodes_per_group / per_block;
        let gdt_blocks = (groups * DESC_BYTES).div_ceil(block_bytes);
        // A short last group must hold its metadata and some data, or it is dropped.
        let overhead = 2 + gdt_blocks + 2 + itable_blocks;
        let last = blocks - (groups - 1) * blocks_per_group;
        let blocks = if groups > 1 && last <= overhead {
            groups -= 1;
            groups * blocks_per_group
        } else {
            blocks
        };
        if blocks <= overhead + 16 {
            return Err(format!(
                "{blocks} blocks of {block_bytes} B cannot hold an ext3 file system \
                 (a group's metadata alone takes {overhead})"
            ));
        }
        let journal_blocks = if journal_blocks == 0 {
            default_journal_blocks(blocks, block_bytes)
        } else {
            journal_blocks
        };
        let layout = Layout {
            block_bytes,
            blocks,
            blocks_per_group,
            groups,
            inodes_per_group,
            itable_blocks,
            gdt_blocks,
            journal_blocks,
        };
        let data = layout.data_blocks();
        if journal_blocks < 32 {
            return Err(format!(
                "a journal of {journal_blocks} blocks is too small (32 at least)"
            ));
        }
        if journal_blocks * 2 > data {
            return Err(format!(
                "a journal of {journal_blocks} blocks does not fit: the partition has \
                 {data} data blocks and the journal may take half of them at most"
            ));
        }
        Ok(layout)
    }

    /// Whether group `g` carries a superblock and descriptor copy (sparse_super).
    pub fn has_super(&self, g: u64) -> bool {
        fn power_of(mut n: u64, b: u64) -> bool {
            while n > 1 && n.is_multiple_of(b) {
                n /= b;
            }
            n == 1
        }
        g <= 1 || power_of(g, 3) || power_of(g, 5) || power_of(g, 7)
    }

    pub fn group_start(&self, g: u64) -> u64 {
        g * self.blocks_per_group
    }

    /// One past the last block of group `g`.
    pub fn group_end(&self, g: u64) -> u64 {
        ((g + 1) * self.blocks_per_group).min(self.blocks)
    }

    pub fn group_of(&self, block: u64) -> u64 {
        block / self.blocks_per_group
    }

    pub fn block_bitmap(&self, g: u64) -> u64 {
        let sb = if self.has_super(g) {
            1 + self.gdt_blocks
        } else {
            0
        };
        self.group_start(g) + sb
    }

    pub fn inode_bitmap(&self, g: u64) -> u64 {
        self.block_bitmap(g) + 1
    }

    pub fn inode_table(&self, g: u64) -> u64 {
        self.block_bitmap(g) + 2
    }

    /// The first block of group `g` after its metadata.
    pub fn first_data(&self, g: u64) -> u64 {
        self.inode_table(g) + self.itable_blocks
    }

    /// The primary group-descriptor block that describes group `g`.
    pub fn descriptor_block(&self, g: u64) -> u64 {
        1 + g * DESC_BYTES / self.block_bytes
    }

    /// The inode-table block holding inode `ino`.
    pub fn inode_block(&self, ino: u64) -> u64 {
        let g = ino / self.inodes_per_group;
        let i = ino % self.inodes_per_group;
        self.inode_table(g) + i * INODE_BYTES / self.block_bytes
    }

    pub fn total_inodes(&self) -> u64 {
        self.inodes_per_group * self.groups
    }

    /// Blocks outside the groups' fixed metadata.
    pub fn data_blocks(&self) -> u64 {
        (0..self.groups)
            .map(|g| self.group_end(g) - self.first_data(g))
            .sum()
    }

    /// Block pointers one indirect block holds.
    pub fn pointers_per_block(&self) -> u64 {
        self.block_bytes / 4
    }

    /// Journal tags one descriptor block holds (12-byte header, 16-byte UUID after
    /// the first 8-byte tag).
    pub fn tags_per_descriptor(&self) -> u64 {
        (self.block_bytes - 12 - 16) / 8
    }

    /// Block numbers one revoke block holds (16-byte header, 4 bytes each).
    pub fn revokes_per_block(&self) -> u64 {
        (self.block_bytes - 16) / 4
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_4_gib_partition_matches_mke2fs() {
        let l = Layout::new(1 << 20, 4096, 0).unwrap();
        assert_eq!(l.groups, 32);
        assert_eq!(l.blocks_per_group, 32_768);
        assert_eq!(l.inodes_per_group, 16_384);
        assert_eq!(l.itable_blocks, 512);
        assert_eq!(l.gdt_blocks, 1);
        assert_eq!(
            l.journal_blocks, 16_384,
            "64 MiB, mke2fs's default at 4 GiB"
        );
        assert!(l.has_super(0) && l.has_super(1) && l.has_super(9) && l.has_super(25));
        assert!(!l.has_super(2) && !l.has_super(6));
        assert_eq!(l.block_bitmap(0), 2);
        assert_eq!(l.block_bitmap(2), 2 * 32_768);
        assert_eq!(l.first_data(2), 2 * 32_768 + 2 + 512);
        assert_eq!(l.inode_block(16_384 + 33), l.inode_table(1) + 1);
    }

    #[test]
    fn a_journal_larger_than_the_space_is_refused() {
        let e = Layout::new(65_536, 4096, 60_000).unwrap_err();
        assert!(e.contains("does not fit"), "{e}");
        assert!(Layout::new(100, 4096, 0).is_err());
    }
}
