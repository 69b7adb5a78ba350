//! Reusable buffers for large replies (PLAN D74).
//!
//! A reply of a batch of large documents is built in a fresh multi-MiB allocation twice
//! (the cursor document, then the message around it) and freed once written. Fresh memory
//! of that size comes from the allocator as new pages, a fault and a zeroed page per 4 KiB,
//! which cost more than copying the bytes into them: a 2.1 MB batch took twice as long as
//! two batches of 1 MB. Buffers between [`KEEP_BYTES_MIN`] and [`KEEP_BYTES_MAX`] of
//! capacity are kept here once their reply is written, and handed out again.
//!
//! Invariants:
//! - A buffer handed out is empty: only its capacity is reused, never its bytes.
//! - At most [`KEPT_MAX`] buffers of at most [`KEEP_BYTES_MAX`] each are kept (32 MiB).

use std::sync::{Mutex, PoisonError};

/// Buffers below this capacity are left to the allocator (small ones are cheap).
pub const KEEP_BYTES_MIN: usize = 64 * 1024;

/// Buffers above this capacity are freed (a rare 16 MiB batch is not kept for later).
pub const KEEP_BYTES_MAX: usize = 4 * 1024 * 1024;

/// Buffers kept at most.
pub const KEPT_MAX: usize = 8;

static KEPT: Mutex<Vec<Vec<u8>>> = Mutex::new(Vec::new());

/// An empty buffer of at least `capacity` bytes: a kept one when `capacity` is large
/// enough to be worth it and one is kept, else a new one.
pub fn take(capacity: usize) -> Vec<u8> {
    if capacity >= KEEP_BYTES_MIN {
        let kept = KEPT.lock().unwrap_or_else(PoisonError::into_inner).pop();
        if let Some(mut buffer) = kept {
            buffer.reserve(capacity);
            return buffer;
        }
    }
    Vec::with_capacity(capacity)
}

/// Gives back a buffer whose bytes are no longer needed (it is kept if its capacity is in
/// range and fewer than [`KEPT_MAX`] are kept, else freed).
pub fn give(mut buffer: Vec<u8>) {
    if !(KEEP_BYTES_MIN..=KEEP_BYTES_MAX).contains(&buffer.capacity()) {
        return;
    }
    buffer.clear();
    let mut kept = KEPT.lock().unwrap_or_else(PoisonError::into_inner);
    if kept.len() < KEPT_MAX {
        kept.push(buffer);
    }
}

/// Buffers kept now (for tests).
pub fn kept() -> usize {
    KEPT.lock().unwrap_or_else(PoisonError::into_inner).len()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kept_buffers_come_back_empty_and_the_pool_stays_bounded() {
        let mut big = take(KEEP_BYTES_MIN);
        big.extend_from_slice(&[7; 100]);
        give(big);
        let again = take(KEEP_BYTES_MIN * 2);
        assert!(again.is_empty(), "only the capacity is reused");
        assert!(again.capacity() >= KEEP_BYTES_MIN * 2);
        drop(again);
        // Small and huge buffers are not kept; the pool never passes its bound.
        let before = kept();
        give(Vec::with_capacity(16));
        give(Vec::with_capacity(KEEP_BYTES_MAX + 1));
        assert_eq!(kept(), before);
        for _ in 0..KEPT_MAX * 2 {
            give(Vec::with_capacity(KEEP_BYTES_MIN));
        }
        assert!(kept() <= KEPT_MAX);
        let reused = take(KEEP_BYTES_MIN);
        assert!(reused.is_empty());
    }
}
