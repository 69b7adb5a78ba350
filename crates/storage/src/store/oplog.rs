//! The oplog (issue 43): `local.oplog.rs`, one entry per change, in MongoDB's entry shape,
//! written by the [`Writer`](super::Writer) in the same transaction as the change it
//! records.
//!
//! The oplog is a collection of its own kind ([`Kind::Oplog`]): it has no `_id_` index,
//! and each entry's record id is its `ts` ([`Ts`]: `Timestamp(secs, inc)` as one
//! big-endian `u64`, seconds high), so record order is `ts` order and a resume position
//! is one descent of the records tree. It exists once the engine creates it (a
//! replica-set member), and entries are written only while the store's oplog writes are
//! on ([`Store::set_oplog_writes`](super::Store::set_oplog_writes), which the replica-set
//! layer turns on at each open): a standalone start of a replica-set file writes none, as
//! mongod writes none when started without `--replSet`.
//!
//! How an entry is written, live and at replay alike: before each change to a namespace
//! outside `local`, the writer allocates the next `ts` and applies [`Op::Stamp`]
//! (`super::log`: the `ts`, the wall time, the term and the statement's session fields,
//! a few dozen bytes in the log); applying the change that follows consumes the stamp and
//! appends the entry built from the change and the state it was applied to ([`Entry`]).
//! The document bytes are logged once, in the change; replay rebuilds the same entry from
//! the same stamp and change (the store's replay invariant). Past the collection's `size`
//! option, the oldest entries are removed in the same transaction, the same way at replay.
//!
//! Invariants:
//! - `ts` is strictly increasing in commit order: it is allocated under the write gate
//!   ([`Clock::next`]), so oplog order is log order is commit order. A writer dropped
//!   after allocating leaves a gap, never a repeat.
//! - The clock is reloaded from the last entry at every open, after replay: it never goes
//!   backwards across a restart or a crash.
//! - An entry and its change are in one transaction: kill -9 at any instant leaves both
//!   or neither.
//! - Entries are never changed after they are written; only the oldest are removed.
//!
//! [`Op::Stamp`]: super::log::Op::Stamp

use super::catalog::Namespace;
use bson::raw::{RawBsonRef, RawDocument, RawDocumentBuf};
use bson::spec::BinarySubtype;
use bson::{Timestamp, cstr, rawdoc};

/// The oplog's database.
pub const OPLOG_DB: &str = "local";
/// The oplog's collection name.
pub const OPLOG_COLL: &str = "oplog.rs";

/// `local.oplog.rs`.
pub fn namespace() -> Namespace {
    Namespace::new(OPLOG_DB, OPLOG_COLL)
}

/// The collections outside `local` whose changes are not recorded either: the
/// executed-statement records of retryable writes and their images, which mongod derives
/// on each member instead of replicating (and a change stream never shows).
const UNRECORDED: &[(&str, &str)] = &[("config", "transactions"), ("config", "image_collection")];

/// Whether changes to `ns` are recorded in the oplog (everything outside `local`, but
/// for [`UNRECORDED`]).
pub fn records(ns: &Namespace) -> bool {
    ns.db != OPLOG_DB
        && !UNRECORDED
            .iter()
            .any(|(db, coll)| ns.db == *db && ns.coll == *coll)
}

/// What kind of collection a catalog entry is.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Kind {
    /// Documents with an `_id_` index, record ids allocated in insertion order.
    #[default]
    Documents,
    /// The oplog: no `_id_` index, record id = the entry's `ts`.
    Oplog,
}

/// An oplog position: MongoDB's `Timestamp(secs, inc)` as one `u64` (seconds in the high
/// 32 bits), so numeric order is MongoDB's timestamp order.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Ts(pub u64);

impl Ts {
    /// `Timestamp(secs, inc)`.
    pub const fn new(secs: u32, inc: u32) -> Ts {
        Ts(((secs as u64) << 32) | inc as u64)
    }

    /// The seconds part.
    pub const fn secs(self) -> u32 {
        (self.0 >> 32) as u32
    }

    /// The increment part.
    pub const fn inc(self) -> u32 {
        self.0 as u32
    }

    /// As BSON.
    pub const fn timestamp(self) -> Timestamp {
        Timestamp {
            time: self.secs(),
            increment: self.inc(),
        }
    }

    /// From BSON.
    pub const fn from_timestamp(ts: Timestamp) -> Ts {
        Ts::new(ts.time, ts.increment)
    }

    /// The next position after `self` at wall time `wall_millis`: the wall clock's second
    /// with increment 1 when it is later than `self`'s, else `self`'s second with the
    /// next increment (the next second when the increment is spent).
    pub fn next(self, wall_millis: i64) -> Ts {
        let secs = u32::try_from(wall_millis.max(0) / 1000).unwrap_or(u32::MAX);
        if secs > self.secs() {
            Ts::new(secs, 1)
        } else if self.inc() < u32::MAX {
            Ts::new(self.secs(), self.inc() + 1)
        } else {
            Ts::new(self.secs().saturating_add(1), 1)
        }
    }
}

/// The oplog clock: the last `ts` handed out.
#[derive(Debug, Default)]
pub struct Clock {
    last: parking_lot::Mutex<Ts>,
}

impl Clock {
    /// The last `ts` handed out (or found in the oplog at open).
    pub fn last(&self) -> Ts {
        *self.last.lock()
    }

    /// Hands out the next `ts` at wall time `wall_millis` (the caller holds the write gate).
    pub fn next(&self, wall_millis: i64) -> Ts {
        let mut last = self.last.lock();
        *last = last.next(wall_millis);
        *last
    }

    /// Moves the clock to `ts` unless it is already later (open, replay).
    pub fn observe(&self, ts: Ts) {
        let mut last = self.last.lock();
        if ts > *last {
            *last = ts;
        }
    }
}

/// What the statement being written tells its oplog entries beyond the change itself.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Context {
    /// The entry's wall time (`wall`), in milliseconds since the epoch; `None`: now.
    pub wall_millis: Option<i64>,
    /// `lsid` and `txnNumber` of a retryable write (the entry's leading fields).
    pub session: Option<(RawDocumentBuf, i64)>,
    /// The statement's `stmtId`.
    pub stmt_id: Option<i32>,
    /// An update replaces the whole document (replacement style, or an upsert's
    /// replacement): its entry's `o` is the new document, not a diff.
    pub replacement: bool,
}

/// A stamp: what one entry has beyond its change (the log's `Stamp` operation).
#[derive(Clone, Debug, PartialEq)]
pub struct Stamp {
    /// The entry's position.
    pub ts: Ts,
    /// `wall`, milliseconds since the epoch.
    pub wall_millis: i64,
    /// `t`, the term the entry was written in.
    pub term: i64,
    /// Session fields: `{lsid, txnNumber, stmtId}` as present, and `r: true` for a
    /// replacement; empty for none.
    pub extra: RawDocumentBuf,
}

impl Stamp {
    /// The stamp of a change at `ts` written under `context` in `term`.
    pub fn new(ts: Ts, wall_millis: i64, term: i64, context: &Context) -> Stamp {
        let mut extra = RawDocumentBuf::new();
        if let Some((lsid, txn_number)) = &context.session {
            extra.append(cstr!("lsid"), lsid.clone());
            extra.append(cstr!("txnNumber"), *txn_number);
        }
        if let Some(stmt_id) = context.stmt_id {
            extra.append(cstr!("stmtId"), stmt_id);
        }
        if context.replacement {
            extra.append(cstr!("r"), true);
        }
        Stamp {
            ts,
            wall_millis,
            term,
            extra,
        }
    }

    fn replacement(&self) -> bool {
        self.extra.get_bool("r").unwrap_or(false)
    }
}

/// The change an entry records, with what the entry needs of the state it was applied to.
pub enum Entry<'a> {
    /// A document inserted.
    Insert {
        /// The new document.
        doc: &'a RawDocument,
    },
    /// A document replaced by `new` (an update).
    Update {
        /// The document before.
        old: &'a RawDocument,
        /// The document after.
        new: &'a RawDocument,
    },
    /// A document deleted.
    Delete {
        /// The deleted document.
        old: &'a RawDocument,
    },
    /// A command (`op: "c"`): `o`, and `o2` where the command has one.
    Command {
        /// The command document.
        o: RawDocumentBuf,
        /// Its `o2` (a dropped collection's `numRecords`, a dropped index's spec).
        o2: Option<RawDocumentBuf>,
    },
    /// A no-op (`op: "n"`, `ns: ""`, no `ui`): a note of the replica-set layer.
    Noop {
        /// The note (`{msg: ...}`).
        o: RawDocumentBuf,
    },
}

/// The oplog entry of `entry` on `ns` (collection UUID `uuid`) with `stamp`, in mongod's
/// field order: `lsid`, `txnNumber`, `op`, `ns`, `ui`, `o`, `o2`, `stmtId`, `ts`, `t`,
/// `v`, `wall`.
pub fn entry(stamp: &Stamp, ns: &Namespace, uuid: [u8; 16], change: &Entry<'_>) -> RawDocumentBuf {
    let mut doc = RawDocumentBuf::new();
    if let Ok(lsid) = stamp.extra.get_document("lsid") {
        doc.append(cstr!("lsid"), lsid.to_owned());
    }
    if let Ok(txn_number) = stamp.extra.get_i64("txnNumber") {
        doc.append(cstr!("txnNumber"), txn_number);
    }
    let (op, entry_ns) = match change {
        Entry::Insert { .. } => ("i", ns.full()),
        Entry::Update { .. } => ("u", ns.full()),
        Entry::Delete { .. } => ("d", ns.full()),
        Entry::Command { .. } => ("c", format!("{}.$cmd", ns.db)),
        Entry::Noop { .. } => ("n", String::new()),
    };
    doc.append(cstr!("op"), op);
    doc.append(cstr!("ns"), entry_ns);
    if !matches!(change, Entry::Noop { .. }) {
        doc.append(
            cstr!("ui"),
            bson::Binary {
                subtype: BinarySubtype::Uuid,
                bytes: uuid.to_vec(),
            },
        );
    }
    match change {
        Entry::Insert { doc: new } => {
            doc.append(cstr!("o"), (*new).to_owned());
            doc.append(cstr!("o2"), id_of(new));
        }
        Entry::Update { old, new } => {
            let diffed = if stamp.replacement() {
                None
            } else {
                diff(old, new)
            };
            match diffed {
                Some(diff) => doc.append(cstr!("o"), rawdoc! { "$v": 2, "diff": diff }),
                None => doc.append(cstr!("o"), (*new).to_owned()),
            }
            doc.append(cstr!("o2"), id_of(old));
        }
        Entry::Delete { old } => doc.append(cstr!("o"), id_of(old)),
        Entry::Command { o, o2 } => {
            doc.append(cstr!("o"), o.clone());
            if let Some(o2) = o2 {
                doc.append(cstr!("o2"), o2.clone());
            }
        }
        Entry::Noop { o } => doc.append(cstr!("o"), o.clone()),
    }
    if let Ok(stmt_id) = stamp.extra.get_i32("stmtId") {
        doc.append(cstr!("stmtId"), stmt_id);
    }
    doc.append(cstr!("ts"), stamp.ts.timestamp());
    doc.append(cstr!("t"), stamp.term);
    doc.append(cstr!("v"), 2i64);
    doc.append(
        cstr!("wall"),
        bson::DateTime::from_millis(stamp.wall_millis),
    );
    doc
}

/// `{_id: <the document's _id>}` (empty when it has none).
fn id_of(doc: &RawDocument) -> RawDocumentBuf {
    let mut out = RawDocumentBuf::new();
    if let Ok(Some(id)) = doc.get("_id") {
        out.append(cstr!("_id"), id);
    }
    out
}

/// mongod's `$v: 2` update diff turning `old` into `new`: `d` (deleted fields), `u`
/// (changed fields), `i` (fields new at the end), then `s<field>` sub-diffs for
/// sub-documents changed in place. Arrays that changed are written whole in `u`.
/// `None` when the fields the two share are not in the same order (mongod then logs
/// the new document whole, as a replacement).
pub fn diff(old: &RawDocument, new: &RawDocument) -> Option<RawDocumentBuf> {
    let mut deleted = RawDocumentBuf::new();
    let mut updated = RawDocumentBuf::new();
    let mut inserted = RawDocumentBuf::new();
    let mut nested: Vec<(String, RawDocumentBuf)> = Vec::new();
    let old_fields: Vec<(&str, RawBsonRef<'_>)> = fields(old)?;
    let new_fields: Vec<(&str, RawBsonRef<'_>)> = fields(new)?;
    // The shared fields, in each document's order, must be the same sequence.
    let shared_old = old_fields
        .iter()
        .filter(|(k, _)| new_fields.iter().any(|(n, _)| n == k));
    let shared_new = new_fields
        .iter()
        .filter(|(k, _)| old_fields.iter().any(|(o, _)| o == k));
    if !shared_old.map(|(k, _)| k).eq(shared_new.map(|(k, _)| k)) {
        return None;
    }
    // A new field must come after every shared field: mongod inserts at the end.
    let last_shared = new_fields
        .iter()
        .rposition(|(k, _)| old_fields.iter().any(|(o, _)| o == k));
    for (key, _) in &old_fields {
        if !new_fields.iter().any(|(n, _)| n == key) {
            deleted.append(name(key)?, false);
        }
    }
    for (position, (key, value)) in new_fields.iter().enumerate() {
        match old_fields.iter().find(|(o, _)| o == key) {
            None => {
                if last_shared.is_some_and(|last| position < last) {
                    return None;
                }
                inserted.append(name(key)?, *value);
            }
            Some((_, before)) if same(*before, *value) => {}
            Some((_, RawBsonRef::Document(before))) => match value {
                RawBsonRef::Document(after) => match diff(before, after) {
                    Some(sub) => nested.push((format!("s{key}"), sub)),
                    None => updated.append(name(key)?, *value),
                },
                _ => updated.append(name(key)?, *value),
            },
            Some(_) => updated.append(name(key)?, *value),
        }
    }
    let mut out = RawDocumentBuf::new();
    if !deleted.is_empty() {
        out.append(cstr!("d"), deleted);
    }
    if !updated.is_empty() {
        out.append(cstr!("u"), updated);
    }
    if !inserted.is_empty() {
        out.append(cstr!("i"), inserted);
    }
    for (key, sub) in nested {
        out.append(name(&key)?, sub);
    }
    Some(out)
}

fn fields(doc: &RawDocument) -> Option<Vec<(&str, RawBsonRef<'_>)>> {
    doc.iter()
        .map(|field| field.ok().map(|(key, value)| (key.as_str(), value)))
        .collect()
}

fn name(key: &str) -> Option<&bson::raw::CStr> {
    <&bson::raw::CStr>::try_from(key).ok()
}

/// Whether two values are the same BSON (type and bytes): a diff records any change a
/// reader could see, `1` to `NumberLong(1)` included.
fn same(a: RawBsonRef<'_>, b: RawBsonRef<'_>) -> bool {
    let mut left = RawDocumentBuf::new();
    left.append(cstr!("v"), a);
    let mut right = RawDocumentBuf::new();
    right.append(cstr!("v"), b);
    left.as_bytes() == right.as_bytes()
}

/// Applies a `$v: 2` diff (as [`diff`] writes it) to `old`: the inverse the tests and
/// oplog readers use.
pub fn apply_diff(old: &RawDocument, diff: &RawDocument) -> Option<RawDocumentBuf> {
    let deleted = diff.get_document("d").ok();
    let updated = diff.get_document("u").ok();
    let inserted = diff.get_document("i").ok();
    let mut out = RawDocumentBuf::new();
    for field in old {
        let (key, value) = field.ok()?;
        let key = key.as_str();
        if deleted.is_some_and(|d| d.get(key).ok().flatten().is_some()) {
            continue;
        }
        if let Some(new) = updated.and_then(|u| u.get(key).ok().flatten()) {
            out.append(name(key)?, new);
            continue;
        }
        let sub_key = format!("s{key}");
        match (diff.get_document(&sub_key), value) {
            (Ok(sub), RawBsonRef::Document(before)) => {
                out.append(name(key)?, apply_diff(before, sub)?);
            }
            (Ok(_), _) => return None,
            (Err(_), value) => out.append(name(key)?, value),
        }
    }
    if let Some(inserted) = inserted {
        for field in inserted {
            let (key, value) = field.ok()?;
            out.append(key, value);
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use bson::{Bson, Document, doc};
    use proptest::prelude::*;

    fn raw(doc: &Document) -> RawDocumentBuf {
        RawDocumentBuf::try_from(doc).expect("raw")
    }

    #[test]
    fn ts_orders_as_timestamps_and_the_clock_never_repeats() {
        assert!(Ts::new(5, 1) > Ts::new(4, u32::MAX));
        assert_eq!(
            Ts::new(7, 3).timestamp(),
            Timestamp {
                time: 7,
                increment: 3
            }
        );
        let clock = Clock::default();
        let a = clock.next(10_500);
        assert_eq!(a, Ts::new(10, 1));
        assert_eq!(clock.next(10_900), Ts::new(10, 2));
        // A clock that steps back keeps counting in the last second.
        assert_eq!(clock.next(9_000), Ts::new(10, 3));
        assert_eq!(clock.next(11_000), Ts::new(11, 1));
        clock.observe(Ts::new(20, 5));
        assert_eq!(clock.next(11_000), Ts::new(20, 6));
        assert_eq!(Ts::new(3, u32::MAX).next(0), Ts::new(4, 1));
    }

    #[test]
    fn entries_have_mongods_shape() {
        let stamp = Stamp::new(
            Ts::new(100, 2),
            100_123,
            1,
            &Context {
                session: Some((raw(&doc! {"id": 1}), 7)),
                stmt_id: Some(0),
                ..Context::default()
            },
        );
        let ns = Namespace::new("db", "c");
        let inserted = raw(&doc! {"_id": 1, "a": 1});
        let insert = entry(&stamp, &ns, [9; 16], &Entry::Insert { doc: &inserted });
        let insert = Document::try_from(insert.as_ref()).expect("doc");
        let keys: Vec<&str> = insert.keys().map(String::as_str).collect();
        assert_eq!(
            keys,
            [
                "lsid",
                "txnNumber",
                "op",
                "ns",
                "ui",
                "o",
                "o2",
                "stmtId",
                "ts",
                "t",
                "v",
                "wall"
            ]
        );
        assert_eq!(insert.get_str("op").ok(), Some("i"));
        assert_eq!(insert.get_document("o2").ok(), Some(&doc! {"_id": 1}));
        assert_eq!(insert.get_i64("v").ok(), Some(2));
        let plain = Stamp::new(Ts::new(100, 3), 100_200, 1, &Context::default());
        let old = raw(&doc! {"_id": 1, "a": 1, "b": {"c": 1, "d": 2}, "gone": true});
        let new = raw(&doc! {"_id": 1, "a": 2, "b": {"c": 1, "d": 3}, "z": 1});
        let update = entry(
            &plain,
            &ns,
            [9; 16],
            &Entry::Update {
                old: &old,
                new: &new,
            },
        );
        let update = Document::try_from(update.as_ref()).expect("doc");
        assert_eq!(
            update.get_document("o").ok(),
            Some(
                &doc! {"$v": 2, "diff": {"d": {"gone": false}, "u": {"a": 2}, "i": {"z": 1}, "sb": {"u": {"d": 3}}}}
            )
        );
        let delete = entry(&plain, &ns, [9; 16], &Entry::Delete { old: &old });
        let delete = Document::try_from(delete.as_ref()).expect("doc");
        assert_eq!(delete.get_document("o").ok(), Some(&doc! {"_id": 1}));
        assert!(delete.get("o2").is_none());
        let replaced = Stamp::new(
            Ts::new(100, 4),
            0,
            1,
            &Context {
                replacement: true,
                ..Context::default()
            },
        );
        let replace = entry(
            &replaced,
            &ns,
            [9; 16],
            &Entry::Update {
                old: &old,
                new: &new,
            },
        );
        let replace = Document::try_from(replace.as_ref()).expect("doc");
        assert_eq!(
            replace.get_document("o").ok(),
            Some(&Document::try_from(new.as_ref()).expect("doc"))
        );
        let command = Entry::Command {
            o: rawdoc! {"drop": "c"},
            o2: Some(rawdoc! {"numRecords": 3i64}),
        };
        let command =
            Document::try_from(entry(&plain, &ns, [9; 16], &command).as_ref()).expect("doc");
        assert_eq!(command.get_str("ns").ok(), Some("db.$cmd"));
        assert_eq!(
            command.get("ts"),
            Some(&Bson::Timestamp(Timestamp {
                time: 100,
                increment: 3
            }))
        );
    }

    #[test]
    fn a_reordered_document_is_logged_whole() {
        let old = raw(&doc! {"_id": 1, "a": 1, "b": 2});
        let new = raw(&doc! {"_id": 1, "b": 2, "a": 1});
        assert_eq!(diff(&old, &new), None);
        let inserted_before = raw(&doc! {"_id": 1, "x": 0, "a": 1, "b": 2});
        assert_eq!(diff(&old, &inserted_before), None);
        assert_eq!(
            diff(&old, &raw(&doc! {"_id": 1, "a": 1i64, "b": 2}))
                .map(|d| Document::try_from(d.as_ref()).expect("doc")),
            Some(doc! {"u": {"a": 1i64}})
        );
    }

    fn value() -> impl Strategy<Value = Bson> {
        let leaf = prop_oneof![
            any::<i32>().prop_map(Bson::Int32),
            any::<i64>().prop_map(Bson::Int64),
            "[a-c]{0,3}".prop_map(Bson::String),
            Just(Bson::Null),
        ];
        leaf.prop_recursive(2, 12, 4, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..3).prop_map(Bson::Array),
                prop::collection::btree_map("[a-d]", inner, 0..4)
                    .prop_map(|m| Bson::Document(m.into_iter().collect())),
            ]
        })
    }

    fn document() -> impl Strategy<Value = Document> {
        prop::collection::vec(("[a-e]", value()), 0..6)
            .prop_map(|fields| fields.into_iter().collect())
    }

    proptest! {
        /// Applying the diff to the old document gives the new one, byte for byte,
        /// whenever a diff is given.
        #[test]
        fn a_diff_applied_gives_the_new_document(old in document(), new in document()) {
            let (old, new) = (raw(&old), raw(&new));
            if let Some(diff) = diff(&old, &new) {
                let applied = apply_diff(&old, &diff).expect("applies");
                prop_assert_eq!(applied.as_bytes(), new.as_bytes());
            }
        }

        /// Small edits are diffs: a `$set`-like change of one existing field always is.
        #[test]
        fn a_changed_field_is_a_diff(old in document(), v in value()) {
            let mut new = old.clone();
            if let Some(key) = old.keys().next().cloned() {
                new.insert(key, v);
                let (old, new) = (raw(&old), raw(&new));
                prop_assert!(diff(&old, &new).is_some());
            }
        }
    }
}
