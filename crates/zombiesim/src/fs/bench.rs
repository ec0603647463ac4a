//! The file-level benchmarks of 002 §IV, each driving one VM's file system.
//!
//! | benchmark | what it does (defaults) |
//! |---|---|
//! | `seq_write` | one file, 8 KiB appends to 600 MB |
//! | `rnd_write` | a 512 MB file (existing), 4 KiB random overwrites until 128 MB |
//! | `postmark` | 2 000 files of 512 B–16 KiB in 10 directories; 20 000 transactions of (create or delete) + (read or append); then every file deleted |
//! | `untar` | 25 000 files in 1 500 directories, log-normal sizes (median 3.5 KiB, σ 1.4: mean ≈ 9.3 KiB, ≈ 230 MB, Linux 2.6.11's tree), 10 KiB tar records, 50 µs CPU per KiB (bzip2) |
//! | `kernel_compile` | an existing tree of 1 500 sources (median 8 KiB) and 2 000 headers (median 4 KiB); per object: read the source and 20 headers, 40 ms CPU, write the object (≈ 1.5 × the source) and its 2 KiB `.cmd`; per 20 objects a `built-in.o`; at the end `vmlinux` and a 2 MiB image |

use super::ext3::Ext3;
use super::inode::Ino;
use crate::error::Result;
use crate::workload::FsBench as Bench;
use rand::{RngExt, SeedableRng};
use rand_distr::{Distribution, LogNormal};
use rand_pcg::Pcg64Mcg;

/// One VM's benchmark in progress.
pub trait Workload: Send {
    /// Files that exist before the run (made without I/O).
    fn setup(&mut self, _fs: &mut Ext3, _rng: &mut Pcg64Mcg) -> Result<()> {
        Ok(())
    }
    /// Do the next step on `fs`; false once the benchmark is done.
    fn step(&mut self, fs: &mut Ext3, rng: &mut Pcg64Mcg) -> Result<bool>;
    /// Fraction done.
    fn progress(&self) -> f64;
}

/// The benchmark `b` for one VM.
pub fn build(b: &Bench) -> Box<dyn Workload> {
    match *b {
        Bench::SeqWrite { size, append } => Box::new(SeqWrite {
            size,
            append,
            file: None,
            written: 0,
        }),
        Bench::RndWrite { file, io, total } => Box::new(RndWrite {
            file_bytes: file,
            io,
            total,
            file: None,
            written: 0,
        }),
        Bench::Postmark {
            files,
            transactions,
            min,
            max,
            dirs,
        } => Box::new(Postmark {
            files,
            transactions,
            min,
            max,
            dirs: Vec::with_capacity(dirs as usize),
            want_dirs: dirs,
            live: Vec::new(),
            done: 0,
            last: None,
        }),
        Bench::Untar {
            files,
            dirs,
            median,
            sigma,
            cpu_us_per_kib,
        } => Box::new(Untar {
            files,
            dirs,
            size: LogNormal::new((median as f64).ln(), sigma).expect("checked"),
            cpu_ns_per_byte: cpu_us_per_kib * 1e3 / 1024.0,
            stack: Vec::new(),
            made_dirs: 0,
            made: 0,
            last: None,
        }),
        Bench::KernelCompile {
            objects,
            headers,
            compile_ms,
        } => Box::new(KernelCompile {
            objects,
            header_count: headers,
            compile_ns: (compile_ms * 1e6) as u64,
            sources: Vec::new(),
            headers: Vec::new(),
            dirs: Vec::new(),
            built: Vec::new(),
            next: 0,
            linked: false,
            last: None,
        }),
    }
}

struct SeqWrite {
    size: u64,
    append: u64,
    file: Option<Ino>,
    written: u64,
}

impl Workload for SeqWrite {
    fn step(&mut self, fs: &mut Ext3, _rng: &mut Pcg64Mcg) -> Result<bool> {
        let file = match self.file {
            Some(f) => f,
            None => {
                let f = fs.create(fs.root(), false)?;
                self.file = Some(f);
                return Ok(true);
            }
        };
        if self.written >= self.size {
            return Ok(false);
        }
        let n = self.append.min(self.size - self.written);
        fs.append(file, n)?;
        self.written += n;
        Ok(true)
    }

    fn progress(&self) -> f64 {
        self.written as f64 / self.size as f64
    }
}

struct RndWrite {
    file_bytes: u64,
    io: u64,
    total: u64,
    file: Option<Ino>,
    written: u64,
}

impl Workload for RndWrite {
    fn setup(&mut self, fs: &mut Ext3, _rng: &mut Pcg64Mcg) -> Result<()> {
        let f = fs.create(fs.root(), false)?;
        fs.write(f, 0, self.file_bytes)?;
        self.file = Some(f);
        Ok(())
    }

    fn step(&mut self, fs: &mut Ext3, rng: &mut Pcg64Mcg) -> Result<bool> {
        if self.written >= self.total {
            return Ok(false);
        }
        let slots = self.file_bytes / self.io;
        let at = rng.random_range(0..slots) * self.io;
        fs.write(self.file.expect("set up"), at, self.io)?;
        self.written += self.io;
        Ok(true)
    }

    fn progress(&self) -> f64 {
        self.written as f64 / self.total as f64
    }
}

struct Postmark {
    files: u64,
    transactions: u64,
    min: u64,
    max: u64,
    dirs: Vec<Ino>,
    want_dirs: u64,
    live: Vec<Ino>,
    /// Steps done: directories, then initial files, transactions, deletions.
    done: u64,
    last: Option<Ino>,
}

impl Postmark {
    fn create(&mut self, fs: &mut Ext3, rng: &mut Pcg64Mcg) -> Result<()> {
        let dir = self.dirs[rng.random_range(0..self.dirs.len())];
        let f = fs.create(dir, false)?;
        let size = rng.random_range(self.min..=self.max);
        fs.write(f, 0, size)?;
        self.live.push(f);
        self.last = Some(f);
        Ok(())
    }
}

impl Workload for Postmark {
    fn step(&mut self, fs: &mut Ext3, rng: &mut Pcg64Mcg) -> Result<bool> {
        let (d, f, t) = (self.want_dirs, self.files, self.transactions);
        let i = self.done;
        self.done += 1;
        if i < d {
            let dir = fs.create(fs.root(), true)?;
            self.dirs.push(dir);
        } else if i < d + f {
            self.create(fs, rng)?;
        } else if i < d + f + t {
            // Create or delete, then read or append (PostMark's biases: 5 / 10).
            if self.live.is_empty() || rng.random_bool(0.5) {
                self.create(fs, rng)?;
            } else {
                let k = rng.random_range(0..self.live.len());
                fs.delete(self.live.swap_remove(k));
            }
            if !self.live.is_empty() {
                let file = self.live[rng.random_range(0..self.live.len())];
                if rng.random_bool(0.5) {
                    fs.read(file, 0, u64::MAX / 2);
                } else {
                    let n = rng.random_range(self.min..=self.max);
                    fs.append(file, n)?;
                    self.last = Some(file);
                }
            }
        } else if let Some(file) = self.live.pop() {
            fs.delete(file);
        } else {
            return Ok(false);
        }
        Ok(true)
    }

    fn progress(&self) -> f64 {
        let total = self.want_dirs + 2 * self.files + self.transactions;
        (self.done as f64 / total.max(1) as f64).min(1.0)
    }
}

/// tar's record size: what one write(2) carries.
const TAR_RECORD: u64 = 10 << 10;

struct Untar {
    files: u64,
    dirs: u64,
    size: LogNormal<f64>,
    cpu_ns_per_byte: f64,
    /// The directory path being extracted (depth-first, as a tarball lists it).
    stack: Vec<Ino>,
    made_dirs: u64,
    made: u64,
    last: Option<Ino>,
}

impl Workload for Untar {
    fn step(&mut self, fs: &mut Ext3, rng: &mut Pcg64Mcg) -> Result<bool> {
        if self.made >= self.files {
            return Ok(false);
        }
        if self.stack.is_empty() {
            self.stack.push(fs.create(fs.root(), true)?);
            self.made_dirs += 1;
        }
        // A new directory about every files/dirs files: a child, or after climbing.
        if self.made_dirs < self.dirs
            && rng.random_bool((self.dirs as f64 / self.files as f64).min(1.0))
        {
            let up = rng.random_range(0..self.stack.len().min(4));
            self.stack.truncate(self.stack.len() - up);
            if self.stack.is_empty() {
                self.stack.push(fs.root());
            }
            let parent = *self.stack.last().expect("non-empty");
            self.stack.push(fs.create(parent, true)?);
            self.made_dirs += 1;
            return Ok(true);
        }
        let dir = *self.stack.last().expect("non-empty");
        let file = fs.create(dir, false)?;
        let size = (self.size.sample(rng) as u64).min(8 << 20);
        let mut off = 0;
        while off < size {
            let n = TAR_RECORD.min(size - off);
            fs.write(file, off, n)?;
            off += n;
        }
        fs.think((size as f64 * self.cpu_ns_per_byte) as u64);
        self.made += 1;
        self.last = Some(file);
        Ok(true)
    }

    fn progress(&self) -> f64 {
        self.made as f64 / self.files as f64
    }
}

/// Objects per directory (one `built-in.o` each).
const OBJECTS_PER_DIR: u64 = 20;
/// Headers one compilation reads.
const HEADERS_PER_OBJECT: usize = 20;

struct KernelCompile {
    objects: u64,
    header_count: u64,
    compile_ns: u64,
    /// (source file, its size, its directory)
    sources: Vec<(Ino, u64, Ino)>,
    headers: Vec<Ino>,
    dirs: Vec<Ino>,
    /// Objects of the directory being built, and every built-in.o.
    built: Vec<(Ino, u64)>,
    next: u64,
    linked: bool,
    last: Option<Ino>,
}

impl Workload for KernelCompile {
    fn setup(&mut self, fs: &mut Ext3, rng: &mut Pcg64Mcg) -> Result<()> {
        let src = LogNormal::new((8192f64).ln(), 1.0).expect("valid");
        let hdr = LogNormal::new((4096f64).ln(), 1.0).expect("valid");
        let include = fs.create(fs.root(), true)?;
        for _ in 0..self.header_count {
            let h = fs.create(include, false)?;
            fs.write(h, 0, (hdr.sample(rng) as u64).clamp(256, 1 << 20))?;
            self.headers.push(h);
        }
        for i in 0..self.objects {
            if i % OBJECTS_PER_DIR == 0 {
                self.dirs.push(fs.create(fs.root(), true)?);
            }
            let dir = *self.dirs.last().expect("made");
            let f = fs.create(dir, false)?;
            let size = (src.sample(rng) as u64).clamp(256, 2 << 20);
            fs.write(f, 0, size)?;
            self.sources.push((f, size, dir));
        }
        Ok(())
    }

    fn step(&mut self, fs: &mut Ext3, rng: &mut Pcg64Mcg) -> Result<bool> {
        if self.next < self.objects {
            let (src, size, dir) = self.sources[self.next as usize];
            fs.read(src, 0, size);
            for _ in 0..HEADERS_PER_OBJECT {
                let h = self.headers[rng.random_range(0..self.headers.len())];
                fs.read(h, 0, u64::MAX / 2);
            }
            fs.think(self.compile_ns);
            let obj = fs.create(dir, false)?;
            let obj_size = (size * 3 / 2).max(1024);
            fs.write(obj, 0, obj_size)?;
            let cmd = fs.create(dir, false)?;
            fs.write(cmd, 0, 2048)?;
            self.built.push((obj, obj_size));
            self.last = Some(obj);
            self.next += 1;
            // A directory's objects linked into its built-in.o.
            if self.next.is_multiple_of(OBJECTS_PER_DIR) || self.next == self.objects {
                let objs: Vec<_> = std::mem::take(&mut self.built);
                let mut total = 0;
                for &(o, n) in &objs {
                    fs.read(o, 0, n);
                    total += n;
                }
                let b = fs.create(dir, false)?;
                fs.write(b, 0, total)?;
                self.sources.push((b, total, dir));
            }
            return Ok(true);
        }
        if !self.linked {
            self.linked = true;
            // vmlinux from every built-in.o, then the compressed image.
            let ins = &self.sources[self.objects as usize..];
            let mut total = 0;
            for &(b, n, _) in ins {
                fs.read(b, 0, n);
                total += n;
            }
            let root = fs.root();
            let vmlinux = fs.create(root, false)?;
            fs.write(vmlinux, 0, total)?;
            let image = fs.create(root, false)?;
            fs.write(image, 0, 2 << 20)?;
            self.last = Some(image);
            return Ok(true);
        }
        Ok(false)
    }

    fn progress(&self) -> f64 {
        self.next as f64 / self.objects as f64
    }
}

/// A VM's own random stream.
pub fn vm_rng(seed: u64, vm: u32) -> Pcg64Mcg {
    Pcg64Mcg::seed_from_u64(seed ^ (0x9e37_79b9_7f4a_7c15u64.wrapping_mul(vm as u64 + 1)))
}
