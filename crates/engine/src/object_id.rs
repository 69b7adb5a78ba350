//! Values the server generates for documents: ObjectIds for missing `_id`s and
//! timestamps for top-level `Timestamp(0, 0)` fields, from the host's clock.
//!
//! An ObjectId is 4 bytes of seconds, 5 bytes unique to this engine and 3 bytes of a
//! counter, as MongoDB makes them. The 5 bytes are a hash of host facts and the clock at
//! start, so nothing here reaches for randomness the host did not pass in.

use crate::host::Host;
use bson::Timestamp;
use bson::oid::ObjectId;
use std::sync::atomic::{AtomicU32, Ordering};

/// Generates ObjectIds and timestamps for one engine.
#[derive(Debug)]
pub(crate) struct IdSource {
    unique: [u8; 5],
    counter: AtomicU32,
    increment: AtomicU32,
}

impl IdSource {
    /// A source whose unique bytes come from `host`'s facts and clock.
    pub(crate) fn new(host: &dyn Host) -> IdSource {
        let facts = host.facts();
        let mut seed = Vec::new();
        seed.extend_from_slice(facts.hostname.as_bytes());
        seed.extend_from_slice(&facts.process_id.to_le_bytes());
        seed.extend_from_slice(&host.now_millis().to_le_bytes());
        seed.extend_from_slice(&host.uptime_millis().to_le_bytes());
        let hash = xxhash_rust::xxh3::xxh3_64(&seed).to_le_bytes();
        let mut unique = [0u8; 5];
        unique.copy_from_slice(&hash[..5]);
        let counter = u32::from_le_bytes([hash[5], hash[6], hash[7], 0]);
        IdSource {
            unique,
            counter: AtomicU32::new(counter),
            increment: AtomicU32::new(0),
        }
    }

    /// A new ObjectId stamped with `now_millis`.
    pub(crate) fn object_id(&self, now_millis: i64) -> ObjectId {
        let count = self.counter.fetch_add(1, Ordering::Relaxed).to_be_bytes();
        ObjectId::from_parts(
            seconds(now_millis),
            self.unique,
            [count[1], count[2], count[3]],
        )
    }

    /// A new timestamp for `now_millis` (increments distinguish those of one second).
    pub(crate) fn timestamp(&self, now_millis: i64) -> Timestamp {
        Timestamp {
            time: seconds(now_millis),
            increment: self
                .increment
                .fetch_add(1, Ordering::Relaxed)
                .wrapping_add(1),
        }
    }
}

fn seconds(now_millis: i64) -> u32 {
    u32::try_from(now_millis.div_euclid(1000)).unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::IdSource;
    use crate::host::FixedHost;

    #[test]
    fn object_ids_are_distinct_and_stamped() {
        let host = FixedHost {
            now_millis: 1_700_000_000_500,
            ..FixedHost::default()
        };
        let ids = IdSource::new(&host);
        let a = ids.object_id(host.now_millis);
        let b = ids.object_id(host.now_millis);
        assert_ne!(a, b);
        assert_eq!(a.timestamp().timestamp_millis(), 1_700_000_000_000);
        assert_eq!(a.bytes()[4..9], b.bytes()[4..9]);
    }
}
