//! A crash model: remembers every write since the last sync and, at a simulated crash,
//! keeps, drops or tears each of them at 512-byte sector granularity, in any order.
//!
//! Reads see every write at once (like the page cache). `sync` makes all prior writes
//! durable. `crash(seed)` computes what a power cut could leave on disk, replaces the
//! contents with it (as after a reboot) and returns it; the same seed gives the same
//! result.
//!
//! Invariants:
//! - Bytes made durable by a successful `sync` survive every crash unchanged.
//! - A crash applies each pending write whole, not at all, or sector by sector (each
//!   512-byte sector it touches kept or dropped as a unit), in a seeded random order.
//! - A crash never invents bytes: every byte of the result was written at some point,
//!   or is a zero from growing the file.

use super::Storage;
use parking_lot::Mutex;
use std::io;

/// The sector: the unit a device writes atomically.
pub const SECTOR_LEN: u64 = 512;

#[derive(Debug, Clone)]
enum Pending {
    Write { offset: u64, bytes: Vec<u8> },
    SetLen(u64),
}

#[derive(Debug, Default)]
struct State {
    current: Vec<u8>,
    durable: Vec<u8>,
    pending: Vec<Pending>,
}

/// An in-memory file with a crash model.
#[derive(Debug, Default)]
pub struct CrashStorage {
    state: Mutex<State>,
}

impl CrashStorage {
    /// An empty file.
    pub fn new() -> Self {
        Self::default()
    }

    /// A file whose durable contents are `bytes`.
    pub fn from_bytes(bytes: Vec<u8>) -> Self {
        CrashStorage {
            state: Mutex::new(State {
                current: bytes.clone(),
                durable: bytes,
                pending: Vec::new(),
            }),
        }
    }

    /// What reads see now.
    pub fn snapshot(&self) -> Vec<u8> {
        self.state.lock().current.clone()
    }

    /// What has been made durable.
    pub fn durable_snapshot(&self) -> Vec<u8> {
        self.state.lock().durable.clone()
    }

    /// How many writes and length changes are not yet durable.
    pub fn pending_count(&self) -> usize {
        self.state.lock().pending.len()
    }

    /// Simulates a power cut: each pending write is kept, dropped or torn, in an order
    /// chosen by `seed`. The result becomes the durable and current contents, and is
    /// returned.
    pub fn crash(&self, seed: u64) -> Vec<u8> {
        let mut state = self.state.lock();
        let mut rng = SplitMix(seed);
        let mut pending = std::mem::take(&mut state.pending);
        for i in (1..pending.len()).rev() {
            let j = rng.below(i as u64 + 1) as usize;
            pending.swap(i, j);
        }
        let mut image = std::mem::take(&mut state.durable);
        for op in &pending {
            match op {
                Pending::SetLen(len) => {
                    if rng.below(2) == 0 {
                        resize(&mut image, *len);
                    }
                }
                Pending::Write { offset, bytes } => match rng.below(3) {
                    0 => apply(&mut image, *offset, bytes),
                    1 => {}
                    _ => tear(&mut image, *offset, bytes, &mut rng),
                },
            }
        }
        state.durable = image.clone();
        state.current = image.clone();
        image
    }
}

fn resize(image: &mut Vec<u8>, len: u64) {
    image.resize(
        usize::try_from(len).expect("in-memory file fits in memory"),
        0,
    );
}

fn apply(image: &mut Vec<u8>, offset: u64, bytes: &[u8]) {
    let start = usize::try_from(offset).expect("in-memory file fits in memory");
    let end = start + bytes.len();
    if image.len() < end {
        image.resize(end, 0);
    }
    image[start..end].copy_from_slice(bytes);
}

/// Applies the sectors of one write independently, each kept with probability 1/2.
fn tear(image: &mut Vec<u8>, offset: u64, bytes: &[u8], rng: &mut SplitMix) {
    let mut at = 0usize;
    while at < bytes.len() {
        let position = offset + at as u64;
        let sector_end = (position / SECTOR_LEN + 1) * SECTOR_LEN;
        let len = ((sector_end - position) as usize).min(bytes.len() - at);
        if rng.below(2) == 0 {
            apply(image, position, &bytes[at..at + len]);
        }
        at += len;
    }
}

/// A tiny seeded generator (splitmix64), so crashes replay exactly.
struct SplitMix(u64);

impl SplitMix {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    fn below(&mut self, bound: u64) -> u64 {
        self.next() % bound
    }
}

impl Storage for CrashStorage {
    fn read_at(&self, buf: &mut [u8], offset: u64) -> io::Result<usize> {
        let state = self.state.lock();
        let Ok(start) = usize::try_from(offset) else {
            return Ok(0);
        };
        if start >= state.current.len() {
            return Ok(0);
        }
        let n = buf.len().min(state.current.len() - start);
        buf[..n].copy_from_slice(&state.current[start..start + n]);
        Ok(n)
    }

    fn write_at(&self, buf: &[u8], offset: u64) -> io::Result<usize> {
        let mut state = self.state.lock();
        usize::try_from(offset + buf.len() as u64)
            .map_err(|_| io::Error::from(io::ErrorKind::InvalidInput))?;
        apply(&mut state.current, offset, buf);
        state.pending.push(Pending::Write {
            offset,
            bytes: buf.to_vec(),
        });
        Ok(buf.len())
    }

    fn sync(&self) -> io::Result<()> {
        let mut state = self.state.lock();
        let pending = std::mem::take(&mut state.pending);
        for op in pending {
            match op {
                Pending::SetLen(len) => resize(&mut state.durable, len),
                Pending::Write { offset, bytes } => apply(&mut state.durable, offset, &bytes),
            }
        }
        debug_assert!(
            state.durable == state.current,
            "sync must reach the current image"
        );
        Ok(())
    }

    fn len(&self) -> io::Result<u64> {
        Ok(self.state.lock().current.len() as u64)
    }

    fn set_len(&self, len: u64) -> io::Result<()> {
        let mut state = self.state.lock();
        usize::try_from(len).map_err(|_| io::Error::from(io::ErrorKind::InvalidInput))?;
        resize(&mut state.current, len);
        state.pending.push(Pending::SetLen(len));
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn crash_keeps_synced_bytes_and_only_written_sectors() {
        for seed in 0..200 {
            let storage = CrashStorage::new();
            storage.write_all_at(&[1u8; 1024], 0).expect("write");
            storage.sync().expect("sync");
            storage.write_all_at(&[2u8; 1536], 512).expect("write");
            let image = storage.crash(seed);
            assert!(image[..512].iter().all(|&b| b == 1), "synced sector lost");
            for sector in image[512..].chunks(512) {
                let first = sector[0];
                assert!(sector.iter().all(|&b| b == first), "sector torn inside");
                assert!(
                    first == 1 || first == 2 || first == 0,
                    "invented byte {first}"
                );
            }
            assert_eq!(storage.snapshot(), image);
        }
    }

    #[test]
    fn crash_outcomes_cover_keep_drop_and_tear() {
        let mut seen = std::collections::BTreeSet::new();
        for seed in 0..64 {
            let storage = CrashStorage::new();
            storage.write_all_at(&[7u8; 2048], 0).expect("write");
            let image = storage.crash(seed);
            let kept = image.chunks(512).filter(|s| s[0] == 7).count();
            seen.insert((image.len(), kept));
        }
        assert!(seen.contains(&(0, 0)), "never dropped: {seen:?}");
        assert!(seen.contains(&(2048, 4)), "never kept: {seen:?}");
        assert!(seen.len() > 2, "never torn: {seen:?}");
    }
}
