//! The one-opener rule: an exclusive advisory lock on a database's data file.
//!
//! Two openers of one database file corrupt it (each believes it owns the free
//! list and the log), so whoever opens a database first claims its data file with
//! `flock(LOCK_EX | LOCK_NB)` (`File::try_lock`), and a second opener, in this
//! process or another, is refused at once.
//!
//! Invariants:
//! - The lock belongs to the open file description: it is held exactly as long as
//!   the handle that took it is open, and the kernel drops it when the handle is
//!   closed or the process dies (kill -9 included). So a crashed holder never
//!   leaves a stale lock, and there is no lock file to clean up.
//! - A second `open` of the same path in the same process gets its own file
//!   description, so it conflicts like another process would.
//! - A file system that cannot lock (`ENOLCK`, `EOPNOTSUPP`: some network and FUSE
//!   mounts) is reported as [`LockError::Unsupported`]; the caller refuses to open,
//!   since nothing would stop a second opener there.
//!
//! Naming the holder is best effort: Linux lists every lock in `/proc/locks` with
//! the holder's pid and the file's device and inode.

use std::fs::File;
use std::io;

/// Why a file could not be claimed.
#[derive(Debug, thiserror::Error)]
pub enum LockError {
    /// Another handle (another process, or another open in this one) holds the file.
    #[error("the file is locked by {}", describe_holder(*holder))]
    Held {
        /// The holder's process id, when the system says.
        holder: Option<u32>,
    },
    /// The lock call itself failed: the file system does not support locks.
    #[error("the file system refused the lock: {0}")]
    Unsupported(io::Error),
}

fn describe_holder(holder: Option<u32>) -> String {
    match holder {
        Some(pid) if pid == std::process::id() => format!("this process (pid {pid})"),
        Some(pid) => format!("process {pid}"),
        None => "another process".to_owned(),
    }
}

/// Takes the exclusive lock on `file` without waiting.
pub(crate) fn try_lock(file: &File) -> Result<(), LockError> {
    match file.try_lock() {
        Ok(()) => Ok(()),
        Err(std::fs::TryLockError::WouldBlock) => Err(LockError::Held {
            holder: holder_of(file),
        }),
        Err(std::fs::TryLockError::Error(error)) => Err(LockError::Unsupported(error)),
    }
}

/// The pid holding an exclusive `flock` on `file`, from `/proc/locks` (Linux).
fn holder_of(file: &File) -> Option<u32> {
    use std::os::unix::fs::MetadataExt;
    let meta = file.metadata().ok()?;
    let locks = std::fs::read_to_string("/proc/locks").ok()?;
    holder_in(&locks, meta.dev(), meta.ino())
}

/// Finds the holder of a `FLOCK ... WRITE` lock on the file `(dev, ino)` in the text of
/// `/proc/locks`, whose lines read `1: FLOCK  ADVISORY  WRITE 1234 08:02:1311 0 EOF`
/// (device as the kernel's hexadecimal major:minor; waiting requests start with `->`).
fn holder_in(locks: &str, dev: u64, ino: u64) -> Option<u32> {
    // Userspace `st_dev` encoding (glibc's `gnu_dev_major`/`gnu_dev_minor`).
    let major = ((dev >> 8) & 0xfff) | ((dev >> 32) & !0xfff);
    let minor = (dev & 0xff) | ((dev >> 12) & !0xff);
    locks.lines().find_map(|line| {
        let mut fields = line.split_whitespace().skip(1);
        let kind = fields.next()?;
        if kind != "FLOCK" {
            return None; // another kind of lock, or a waiter ("->")
        }
        let (_advisory, mode, pid, file) = (
            fields.next()?,
            fields.next()?,
            fields.next()?,
            fields.next()?,
        );
        if mode != "WRITE" {
            return None;
        }
        let mut parts = file.split(':');
        let lock_major = u64::from_str_radix(parts.next()?, 16).ok()?;
        let lock_minor = u64::from_str_radix(parts.next()?, 16).ok()?;
        let lock_ino: u64 = parts.next()?.parse().ok()?;
        (lock_major == major && lock_minor == minor && lock_ino == ino)
            .then(|| pid.parse().ok())
            .flatten()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_second_handle_is_refused_until_the_first_is_closed() {
        let dir = std::env::temp_dir().join(format!("wal-lock-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("temp dir");
        let path = dir.join("db");
        let first = File::create(&path).expect("create");
        try_lock(&first).expect("the first handle locks");
        let second = File::options().read(true).open(&path).expect("open");
        match try_lock(&second) {
            Err(LockError::Held { holder }) => {
                assert_eq!(holder, Some(std::process::id()), "/proc/locks names us");
            }
            other => panic!("second lock: {other:?}"),
        }
        drop(first);
        try_lock(&second).expect("free once the first handle is closed");
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn holder_lines_are_matched_on_device_and_inode() {
        let locks = "1: POSIX  ADVISORY  WRITE 11 08:02:1311 0 EOF\n\
                     2: -> FLOCK  ADVISORY  WRITE 12 08:02:1311 0 EOF\n\
                     3: FLOCK  ADVISORY  READ 13 08:02:1311 0 EOF\n\
                     4: FLOCK  ADVISORY  WRITE 14 08:03:1311 0 EOF\n\
                     5: FLOCK  ADVISORY  WRITE 15 08:02:1312 0 EOF\n\
                     6: FLOCK  ADVISORY  WRITE 16 08:02:1311 0 EOF\n";
        let dev = (8 << 8) | 2;
        assert_eq!(holder_in(locks, dev, 1311), Some(16));
        assert_eq!(holder_in(locks, dev, 9), None);
        // Large minor numbers use the split encoding: 0x103 = major 0, minor 0x103.
        let wide = "1: FLOCK  ADVISORY  WRITE 21 00:103:77 0 EOF\n";
        assert_eq!(holder_in(wide, (0x1 << 20) | 0x03, 77), Some(21));
    }
}
