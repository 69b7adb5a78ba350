//! The storage seam: the only way `wal` and `pager` reach a file.
//!
//! Everything above the seam treats a file as a byte array with positional
//! reads and writes, a length, and a durability barrier (`sync`). Tests swap the
//! OS file for an in-memory one, a faulty one or a crash model, so every I/O
//! path can be driven into torn writes, short writes, ENOSPC and fsync failure.
//!
//! Invariants:
//! - `sync` returning `Ok` means every byte written before the call is durable.
//! - After `sync` fails, the state of unsynced bytes is unknown; callers must
//!   not retry the sync as if nothing happened (they stop and recover).

mod crash;
mod dir;
mod faulty;
mod lock;

pub use crash::CrashStorage;
pub use dir::{Dir, MemDir, OsDir};
pub use faulty::{Fault, FaultKind, FaultyStorage, Op};
pub use lock::LockError;

use parking_lot::Mutex;
use std::fs::File;
use std::io;
use std::path::Path;

/// A file as the log and the pager see it.
///
/// Methods take `&self` so one file can be shared between threads; positional
/// I/O needs no cursor.
pub trait Storage: Send + Sync + std::fmt::Debug {
    /// Reads up to `buf.len()` bytes at `offset`; returns how many were read
    /// (fewer only at end of file).
    fn read_at(&self, buf: &mut [u8], offset: u64) -> io::Result<usize>;

    /// Writes up to `buf.len()` bytes at `offset`; returns how many were written.
    /// A short count is legal and callers must handle it.
    fn write_at(&self, buf: &[u8], offset: u64) -> io::Result<usize>;

    /// Makes every byte written so far durable (fdatasync).
    fn sync(&self) -> io::Result<()>;

    /// The file's current length in bytes.
    fn len(&self) -> io::Result<u64>;

    /// Whether the file is empty.
    fn is_empty(&self) -> io::Result<bool> {
        Ok(self.len()? == 0)
    }

    /// Grows or truncates the file to `len` bytes.
    fn set_len(&self, len: u64) -> io::Result<()>;

    /// The OS file behind this storage, when there is one (the pager maps it).
    /// In-memory and test storages return `None`, and callers fall back to
    /// plain reads.
    fn os_file(&self) -> Option<&File> {
        None
    }

    /// Claims the file for this handle alone until it is dropped: an exclusive advisory
    /// lock that the kernel also releases when the process dies (`storage/lock.rs`).
    /// Files no other opener can reach (memory, the test models) have nothing to claim.
    fn try_lock(&self) -> Result<(), LockError> {
        Ok(())
    }

    /// Makes `offset..offset + len` hold real blocks that read as zeros, growing the file
    /// if it ends before: after this, overwriting that range never fails for want of
    /// space (a full disk fails here instead). The default writes zeros.
    fn allocate(&self, offset: u64, len: u64) -> io::Result<()> {
        write_zeros(self, offset, len)
    }

    /// The file's identity on its device (`(st_dev, st_ino)`), where there is one: how a
    /// log notices that the file at its path is no longer the one it writes.
    fn identity(&self) -> Option<(u64, u64)> {
        None
    }

    /// Reads exactly `buf.len()` bytes at `offset`, or fails with
    /// `UnexpectedEof` if the file ends first.
    fn read_exact_at(&self, mut buf: &mut [u8], mut offset: u64) -> io::Result<()> {
        while !buf.is_empty() {
            match self.read_at(buf, offset)? {
                0 => return Err(io::ErrorKind::UnexpectedEof.into()),
                n => {
                    buf = &mut buf[n..];
                    offset += n as u64;
                }
            }
        }
        Ok(())
    }

    /// Writes `bufs` one after another from `offset` on: the same bytes, in the same
    /// places, as `write_all_at` of their concatenation, without building it. The default
    /// writes each buffer in turn (so a faulty storage sees, and can fail, each one); a
    /// real file does it in `pwritev`s, going on after short ones.
    fn write_all_vectored_at(&self, bufs: &[&[u8]], offset: u64) -> io::Result<()> {
        let mut at = offset;
        for buf in bufs {
            self.write_all_at(buf, at)?;
            at += buf.len() as u64;
        }
        Ok(())
    }

    /// Writes all of `buf` at `offset`, continuing after short writes.
    fn write_all_at(&self, mut buf: &[u8], mut offset: u64) -> io::Result<()> {
        while !buf.is_empty() {
            match self.write_at(buf, offset)? {
                0 => return Err(io::ErrorKind::WriteZero.into()),
                n => {
                    buf = &buf[n..];
                    offset += n as u64;
                }
            }
        }
        Ok(())
    }
}

/// A real file on the operating system's file system.
#[derive(Debug)]
pub struct OsStorage {
    file: File,
}

impl OsStorage {
    /// Opens `path` for reading and writing, creating it if it does not exist.
    pub fn open(path: &Path) -> io::Result<Self> {
        let file = File::options()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(path)?;
        Ok(OsStorage { file })
    }

    /// Wraps an already open file.
    pub fn from_file(file: File) -> Self {
        OsStorage { file }
    }
}

impl Storage for OsStorage {
    fn read_at(&self, buf: &mut [u8], offset: u64) -> io::Result<usize> {
        std::os::unix::fs::FileExt::read_at(&self.file, buf, offset)
    }

    fn write_at(&self, buf: &[u8], offset: u64) -> io::Result<usize> {
        std::os::unix::fs::FileExt::write_at(&self.file, buf, offset)
    }

    fn write_all_vectored_at(&self, bufs: &[&[u8]], offset: u64) -> io::Result<()> {
        let mut bufs: Vec<&[u8]> = bufs.iter().copied().filter(|b| !b.is_empty()).collect();
        let mut first = 0;
        let mut at = offset;
        while first < bufs.len() {
            // rustix passes at most IOV_MAX buffers: a longer list is a short write.
            let slices: Vec<io::IoSlice<'_>> =
                bufs[first..].iter().map(|b| io::IoSlice::new(b)).collect();
            let mut written = match rustix::io::pwritev(&self.file, &slices, at) {
                Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
                Ok(n) => n,
                Err(rustix::io::Errno::INTR) => continue,
                Err(errno) => return Err(errno.into()),
            };
            at += written as u64;
            // A short write ends inside some buffer: go on from its first unwritten byte.
            while written > 0 {
                let len = bufs[first].len();
                if written >= len {
                    written -= len;
                    first += 1;
                } else {
                    bufs[first] = &bufs[first][written..];
                    written = 0;
                }
            }
        }
        Ok(())
    }

    fn sync(&self) -> io::Result<()> {
        self.file.sync_data()
    }

    fn len(&self) -> io::Result<u64> {
        Ok(self.file.metadata()?.len())
    }

    fn set_len(&self, len: u64) -> io::Result<()> {
        self.file.set_len(len)
    }

    fn os_file(&self) -> Option<&File> {
        Some(&self.file)
    }

    fn try_lock(&self) -> Result<(), LockError> {
        lock::try_lock(&self.file)
    }

    fn allocate(&self, offset: u64, len: u64) -> io::Result<()> {
        // fallocate(2) reserves the blocks without writing them (half the bytes of zeros
        // then data); file systems without it get the zeros.
        match rustix::fs::fallocate(&self.file, rustix::fs::FallocateFlags::empty(), offset, len) {
            Ok(()) => Ok(()),
            Err(rustix::io::Errno::OPNOTSUPP | rustix::io::Errno::NOSYS) => {
                write_zeros(self, offset, len)
            }
            Err(errno) => Err(errno.into()),
        }
    }

    fn identity(&self) -> Option<(u64, u64)> {
        use std::os::unix::fs::MetadataExt;
        let meta = self.file.metadata().ok()?;
        Some((meta.dev(), meta.ino()))
    }
}

/// Writes `len` zero bytes at `offset`, a megabyte at a time.
fn write_zeros<S: Storage + ?Sized>(storage: &S, offset: u64, len: u64) -> io::Result<()> {
    const PIECE: u64 = 1 << 20;
    let zeros = vec![0u8; PIECE.min(len) as usize];
    let mut at = offset;
    let end = offset + len;
    while at < end {
        let n = (end - at).min(PIECE) as usize;
        storage.write_all_at(zeros.get(..n).unwrap_or_default(), at)?;
        at += n as u64;
    }
    Ok(())
}

/// Makes a directory entry change (create, rename, remove) in `dir` durable.
pub fn sync_dir(dir: &Path) -> io::Result<()> {
    File::open(dir)?.sync_all()
}

/// An in-memory file: fast, and the base the fault and crash models wrap.
#[derive(Debug, Default)]
pub struct MemStorage {
    bytes: Mutex<Vec<u8>>,
}

impl MemStorage {
    /// An empty in-memory file.
    pub fn new() -> Self {
        Self::default()
    }

    /// An in-memory file holding `bytes`.
    pub fn from_bytes(bytes: Vec<u8>) -> Self {
        MemStorage {
            bytes: Mutex::new(bytes),
        }
    }

    /// A copy of the whole contents.
    pub fn snapshot(&self) -> Vec<u8> {
        self.bytes.lock().clone()
    }
}

impl Storage for MemStorage {
    fn read_at(&self, buf: &mut [u8], offset: u64) -> io::Result<usize> {
        let bytes = self.bytes.lock();
        let Ok(start) = usize::try_from(offset) else {
            return Ok(0);
        };
        if start >= bytes.len() {
            return Ok(0);
        }
        let n = buf.len().min(bytes.len() - start);
        buf[..n].copy_from_slice(&bytes[start..start + n]);
        Ok(n)
    }

    fn write_at(&self, buf: &[u8], offset: u64) -> io::Result<usize> {
        let mut bytes = self.bytes.lock();
        let start =
            usize::try_from(offset).map_err(|_| io::Error::from(io::ErrorKind::InvalidInput))?;
        let end = start + buf.len();
        if bytes.len() < end {
            bytes.resize(end, 0);
        }
        bytes[start..end].copy_from_slice(buf);
        Ok(buf.len())
    }

    fn sync(&self) -> io::Result<()> {
        Ok(())
    }

    fn len(&self) -> io::Result<u64> {
        Ok(self.bytes.lock().len() as u64)
    }

    fn set_len(&self, len: u64) -> io::Result<()> {
        let len = usize::try_from(len).map_err(|_| io::Error::from(io::ErrorKind::InvalidInput))?;
        self.bytes.lock().resize(len, 0);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mem_storage_reads_back_what_was_written_and_zero_fills_gaps() {
        let storage = MemStorage::new();
        storage.write_all_at(b"abc", 4).expect("write");
        let mut buf = [9u8; 7];
        storage.read_exact_at(&mut buf, 0).expect("read");
        assert_eq!(&buf, b"\0\0\0\0abc");
        assert_eq!(storage.len().expect("len"), 7);
        let mut past = [0u8; 1];
        assert_eq!(storage.read_at(&mut past, 7).expect("read"), 0);
    }
}
