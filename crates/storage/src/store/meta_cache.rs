//! Decoded catalog entries of the newest snapshot a reader asked about.
//!
//! Every read begins by looking up its collection's catalog entry: a descent of the catalog
//! tree and a decode. A snapshot never changes, so the entries decoded for snapshot `seq`
//! stay right for every reader of `seq`; the cache holds one snapshot's worth and starts
//! over when a reader of a newer snapshot arrives (every write commit publishes one, so a
//! write-heavy load mostly misses, a read-heavy one mostly hits). Readers of an older
//! snapshot neither use nor fill it.

use super::catalog::{CollectionMeta, Namespace};
use parking_lot::RwLock;
use std::collections::HashMap;

#[derive(Default)]
pub struct MetaCache {
    inner: RwLock<Entries>,
}

#[derive(Default)]
struct Entries {
    /// The snapshot the entries were read from.
    seq: u64,
    metas: HashMap<Namespace, CollectionMeta>,
}

impl MetaCache {
    /// The entry of `ns` as snapshot `seq` has it, when cached.
    pub fn get(&self, seq: u64, ns: &Namespace) -> Option<CollectionMeta> {
        let inner = self.inner.read();
        if inner.seq != seq {
            return None;
        }
        inner.metas.get(ns).cloned()
    }

    /// Remembers the entry of `ns` read from snapshot `seq`.
    pub fn put(&self, seq: u64, ns: &Namespace, meta: &CollectionMeta) {
        let mut inner = self.inner.write();
        if seq < inner.seq {
            return;
        }
        if seq > inner.seq {
            inner.seq = seq;
            inner.metas.clear();
        }
        inner.metas.insert(ns.clone(), meta.clone());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn meta(count: u64) -> CollectionMeta {
        let mut meta = CollectionMeta::new(
            bson::RawDocumentBuf::new(),
            [0; 16],
            crate::store::Compressor::None,
        );
        meta.count = count;
        meta
    }

    #[test]
    fn entries_answer_only_for_their_own_snapshot() {
        let cache = MetaCache::default();
        let ns = Namespace::new("db", "c");
        cache.put(5, &ns, &meta(1));
        assert_eq!(cache.get(5, &ns).map(|m| m.count), Some(1));
        assert!(cache.get(4, &ns).is_none(), "an older snapshot");
        assert!(cache.get(6, &ns).is_none(), "a newer snapshot");
        // An older reader does not overwrite the newer snapshot's entries.
        cache.put(4, &ns, &meta(9));
        assert_eq!(cache.get(5, &ns).map(|m| m.count), Some(1));
        // A newer one replaces them all.
        cache.put(6, &ns, &meta(2));
        assert!(cache.get(5, &ns).is_none());
        assert_eq!(cache.get(6, &ns).map(|m| m.count), Some(2));
    }
}
