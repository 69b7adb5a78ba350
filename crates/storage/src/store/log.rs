//! Logical WAL records: what one write transaction changed, as a list of operations that
//! replay deterministically onto the last checkpoint.
//!
//! A record is the concatenation of operation documents (each a BSON document, so each
//! carries its own length): `{o: "c", n, opt, u, z}` create (`z` the records' compressor,
//! absent for raw records), `{o: "x", n}` drop,
//! `{o: "m", n, to}` rename, `{o: "i", n, r, d}` insert, `{o: "u", n, r, d}` update and
//! `{o: "d", n, r}` delete, `{o: "p", n, r, a, b, d}` patch (an update logged as the bytes
//! that changed, see [`Patch`]), `{o: "ci", n, s}` create index (built from the collection's
//! records when applied), `{o: "di", n, x}` drop index and `{o: "mi", n, x, s}` replace an
//! index's specification (collMod), `{o: "mo", n, opt}` replace a collection's options
//! (collMod of its validation), where `n` is the namespace `db.coll`, `r` the record
//! id, `d` the document, `s` an index specification in its stored form and `x` an index
//! name. Index entries are never logged: applying an insert, update or delete derives
//! them from the documents, live and at replay alike. A transaction too large for one record spans several: each but the
//! last ends with the marker `{o: "+"}` (continued), and replay applies a transaction only
//! once its last record is read. See `docs/format.md`, "Engine log records".
//!
//! Invariants:
//! - Replaying the records after `checkpoint_lsn`, in order, onto the checkpoint rebuilds
//!   exactly the state the live writer published: operations carry record ids and UUIDs,
//!   never anything chosen again at replay.
//! - A patch applied to the record it names, as replay finds it, yields exactly the
//!   document the live update wrote: replay reaches the record in the state the live
//!   writer saw (the invariant above), and [`Patch::diff`] is checked against
//!   [`Patch::apply`] by a property test.

use super::StoreError;
use super::catalog::Namespace;
use super::records::Compressor;
use bson::spec::BinarySubtype;
use bson::{RawDocument, RawDocumentBuf, rawdoc};

/// One change to the database.
#[derive(Clone, Debug, PartialEq)]
pub enum Op {
    Create {
        ns: Namespace,
        options: RawDocumentBuf,
        uuid: [u8; 16],
        compressor: Compressor,
    },
    Drop {
        ns: Namespace,
    },
    Rename {
        from: Namespace,
        to: Namespace,
    },
    Insert {
        ns: Namespace,
        rid: u64,
        doc: RawDocumentBuf,
    },
    Update {
        ns: Namespace,
        rid: u64,
        doc: RawDocumentBuf,
    },
    Delete {
        ns: Namespace,
        rid: u64,
    },
    /// An update of record `rid` logged as the bytes that changed.
    Patch {
        ns: Namespace,
        rid: u64,
        patch: Patch,
    },
    CreateIndex {
        ns: Namespace,
        spec: RawDocumentBuf,
    },
    DropIndex {
        ns: Namespace,
        name: String,
    },
    ModifyIndex {
        ns: Namespace,
        name: String,
        spec: RawDocumentBuf,
    },
    /// Replaces the collection's options (collMod of `validator`, `validationLevel`,
    /// `validationAction`; format 1.6).
    ModifyOptions {
        ns: Namespace,
        options: RawDocumentBuf,
    },
    /// The oplog entry of the change that follows (`super::oplog`): its position, wall
    /// time, term and session fields. The entry itself is never logged: applying the
    /// next change builds it, live and at replay alike.
    Stamp(super::oplog::Stamp),
    /// A no-op oplog entry (`op: "n"`) with object `o`, after its stamp: the replica-set
    /// layer's notes ("initiating set", "new primary"). Changes nothing else.
    Note {
        o: RawDocumentBuf,
    },
}

/// An update as an edit of the old document's bytes: the new document is the old one's
/// first `front` bytes and last `back` bytes with `middle` between them, under the new
/// length (the first four bytes, BSON's length, are always rewritten). A same-size `$inc`
/// or `$set` of a 16 KiB document logs a few bytes instead of the whole document.
#[derive(Clone, Debug, PartialEq)]
pub struct Patch {
    pub front: u32,
    pub back: u32,
    pub middle: Vec<u8>,
}

/// Documents smaller than this are logged whole: a patch saves little on them.
const PATCH_MIN_DOC: usize = 256;

impl Patch {
    /// The edit turning `old` into `new` (both whole BSON documents), or `None` when
    /// logging `new` whole is about as small (the edit spans over a quarter of it).
    pub fn diff(old: &[u8], new: &[u8]) -> Option<Patch> {
        if new.len() < PATCH_MIN_DOC || old.len() < 5 || new.len() < 5 {
            return None;
        }
        let most = old.len().min(new.len());
        let front = 4 + common_prefix(&old[4..most], &new[4..most]);
        let back = common_suffix(&old[front..], &new[front..]);
        let middle = &new[front..new.len() - back];
        if middle.len() > new.len() / 4 {
            return None;
        }
        Some(Patch {
            front: u32::try_from(front).ok()?,
            back: u32::try_from(back).ok()?,
            middle: middle.to_vec(),
        })
    }

    /// The new document: the edit applied to `old`; `Corrupt` when it does not fit.
    pub fn apply(&self, old: &[u8]) -> Result<RawDocumentBuf, StoreError> {
        let (front, back) = (self.front as usize, self.back as usize);
        if front < 4 || front.checked_add(back).is_none_or(|kept| kept > old.len()) {
            return Err(bad("patch bounds"));
        }
        let len = front + self.middle.len() + back;
        let header = i32::try_from(len).map_err(|_| bad("patch length"))?;
        let mut doc = Vec::with_capacity(len);
        doc.extend_from_slice(&header.to_le_bytes());
        doc.extend_from_slice(&old[4..front]);
        doc.extend_from_slice(&self.middle);
        doc.extend_from_slice(&old[old.len() - back..]);
        RawDocumentBuf::from_bytes(doc).map_err(|_| bad("patched document"))
    }
}

/// Compared a block at a time (a slice comparison is a `memcmp`); the byte loop only
/// inside the first block that differs.
const COMPARE_BLOCK: usize = 64;

/// The length of the longest common prefix of `a` and `b`.
fn common_prefix(a: &[u8], b: &[u8]) -> usize {
    let most = a.len().min(b.len());
    let mut same = 0;
    while same + COMPARE_BLOCK <= most
        && a[same..same + COMPARE_BLOCK] == b[same..same + COMPARE_BLOCK]
    {
        same += COMPARE_BLOCK;
    }
    same + a[same..most]
        .iter()
        .zip(&b[same..most])
        .take_while(|(x, y)| x == y)
        .count()
}

/// The length of the longest common suffix of `a` and `b`.
fn common_suffix(a: &[u8], b: &[u8]) -> usize {
    let most = a.len().min(b.len());
    let (a, b) = (&a[a.len() - most..], &b[b.len() - most..]);
    let mut same = 0;
    while same + COMPARE_BLOCK <= most
        && a[most - same - COMPARE_BLOCK..most - same]
            == b[most - same - COMPARE_BLOCK..most - same]
    {
        same += COMPARE_BLOCK;
    }
    same + a[..most - same]
        .iter()
        .rev()
        .zip(b[..most - same].iter().rev())
        .take_while(|(x, y)| x == y)
        .count()
}

fn rid_i64(rid: u64) -> i64 {
    i64::try_from(rid).expect("record ids stay below 2^63")
}

/// Writes a BSON document straight into a buffer: the bytes `rawdoc!` gives for the same
/// fields in the same order, without building the document first (the record writes of a
/// bulk load copied each document twice more through `rawdoc!`: ~16% of an embedded
/// `insert_many`'s CPU).
struct DocWriter<'a> {
    out: &'a mut Vec<u8>,
    start: usize,
}

impl<'a> DocWriter<'a> {
    fn begin(out: &'a mut Vec<u8>) -> DocWriter<'a> {
        let start = out.len();
        out.extend_from_slice(&[0; 4]);
        DocWriter { out, start }
    }

    fn key(&mut self, kind: u8, key: &str) {
        self.out.push(kind);
        self.out.extend_from_slice(key.as_bytes());
        self.out.push(0);
    }

    fn string(&mut self, key: &str, parts: &[&str]) {
        self.key(0x02, key);
        let len: usize = parts.iter().map(|p| p.len()).sum::<usize>() + 1;
        self.out.extend_from_slice(&len_i32(len).to_le_bytes());
        for part in parts {
            self.out.extend_from_slice(part.as_bytes());
        }
        self.out.push(0);
    }

    fn int64(&mut self, key: &str, value: i64) {
        self.key(0x12, key);
        self.out.extend_from_slice(&value.to_le_bytes());
    }

    fn document(&mut self, key: &str, doc: &RawDocumentBuf) {
        self.key(0x03, key);
        self.out.extend_from_slice(doc.as_bytes());
    }

    fn binary(&mut self, key: &str, bytes: &[u8]) {
        self.key(0x05, key);
        self.out
            .extend_from_slice(&len_i32(bytes.len()).to_le_bytes());
        self.out.push(0x00);
        self.out.extend_from_slice(bytes);
    }

    fn end(self) {
        self.out.push(0);
        let len = len_i32(self.out.len() - self.start).to_le_bytes();
        self.out[self.start..self.start + 4].copy_from_slice(&len);
    }
}

/// A length as BSON's `int32` (documents and log records are far below 2 GiB).
fn len_i32(len: usize) -> i32 {
    i32::try_from(len).expect("a log document fits in 2 GiB")
}

impl Op {
    /// Appends the operation's document to `out`.
    pub fn encode_into(&self, out: &mut Vec<u8>) {
        // The record operations, written straight into `out`.
        match self {
            Op::Insert { ns, rid, doc } | Op::Update { ns, rid, doc } => {
                let kind = if matches!(self, Op::Insert { .. }) {
                    "i"
                } else {
                    "u"
                };
                let mut w = DocWriter::begin(out);
                w.string("o", &[kind]);
                w.string("n", &[&ns.db, ".", &ns.coll]);
                w.int64("r", rid_i64(*rid));
                w.document("d", doc);
                w.end();
                return;
            }
            Op::Delete { ns, rid } => {
                let mut w = DocWriter::begin(out);
                w.string("o", &["d"]);
                w.string("n", &[&ns.db, ".", &ns.coll]);
                w.int64("r", rid_i64(*rid));
                w.end();
                return;
            }
            Op::Patch { ns, rid, patch } => {
                let mut w = DocWriter::begin(out);
                w.string("o", &["p"]);
                w.string("n", &[&ns.db, ".", &ns.coll]);
                w.int64("r", rid_i64(*rid));
                w.int64("a", i64::from(patch.front));
                w.int64("b", i64::from(patch.back));
                w.binary("d", &patch.middle);
                w.end();
                return;
            }
            _ => {}
        }
        out.extend_from_slice(self.encode_built().as_bytes());
    }

    /// The operation's document built with `rawdoc!` (every operation; the record ones are
    /// also written directly by `encode_into`, which a test holds to these bytes).
    fn encode_built(&self) -> RawDocumentBuf {
        match self {
            Op::Create {
                ns,
                options,
                uuid,
                compressor,
            } => {
                let mut doc = rawdoc! {
                    "o": "c", "n": ns.full(), "opt": options.clone(),
                    "u": bson::Binary { subtype: BinarySubtype::Uuid, bytes: uuid.to_vec() },
                };
                if *compressor != Compressor::None {
                    doc.append(bson::cstr!("z"), compressor.name());
                }
                doc
            }
            Op::Drop { ns } => rawdoc! { "o": "x", "n": ns.full() },
            Op::Rename { from, to } => rawdoc! { "o": "m", "n": from.full(), "to": to.full() },
            Op::Insert { ns, rid, doc } => {
                rawdoc! { "o": "i", "n": ns.full(), "r": rid_i64(*rid), "d": doc.clone() }
            }
            Op::Update { ns, rid, doc } => {
                rawdoc! { "o": "u", "n": ns.full(), "r": rid_i64(*rid), "d": doc.clone() }
            }
            Op::Delete { ns, rid } => rawdoc! { "o": "d", "n": ns.full(), "r": rid_i64(*rid) },
            Op::Patch { ns, rid, patch } => rawdoc! {
                "o": "p", "n": ns.full(), "r": rid_i64(*rid),
                "a": i64::from(patch.front), "b": i64::from(patch.back),
                "d": bson::Binary { subtype: BinarySubtype::Generic, bytes: patch.middle.clone() },
            },
            Op::CreateIndex { ns, spec } => {
                rawdoc! { "o": "ci", "n": ns.full(), "s": spec.clone() }
            }
            Op::DropIndex { ns, name } => rawdoc! { "o": "di", "n": ns.full(), "x": name.as_str() },
            Op::ModifyIndex { ns, name, spec } => {
                rawdoc! { "o": "mi", "n": ns.full(), "x": name.as_str(), "s": spec.clone() }
            }
            Op::ModifyOptions { ns, options } => {
                rawdoc! { "o": "mo", "n": ns.full(), "opt": options.clone() }
            }
            Op::Stamp(stamp) => rawdoc! {
                "o": "t", "t": stamp.ts.timestamp(), "w": stamp.wall_millis, "e": stamp.term,
                "x": stamp.extra.clone(),
            },
            Op::Note { o } => rawdoc! { "o": "n", "x": o.clone() },
        }
    }

    /// Bytes the encoded operation takes, roughly (for splitting records).
    pub fn size_hint(&self) -> usize {
        64 + match self {
            Op::Create { options, .. } | Op::ModifyOptions { options, .. } => {
                options.as_bytes().len()
            }
            Op::Insert { doc, .. } | Op::Update { doc, .. } => doc.as_bytes().len(),
            Op::Patch { patch, .. } => patch.middle.len(),
            Op::CreateIndex { spec, .. } | Op::ModifyIndex { spec, .. } => spec.as_bytes().len(),
            Op::Stamp(stamp) => stamp.extra.as_bytes().len(),
            Op::Note { o } => o.as_bytes().len(),
            _ => 0,
        }
    }
}

/// Appends the marker that ends a record whose transaction continues in the next record.
pub fn encode_continued(out: &mut Vec<u8>) {
    out.extend_from_slice(rawdoc! { "o": "+" }.as_bytes());
}

/// Decodes every operation of one record, and whether its transaction continues in the
/// next record (it ends with the `{o: "+"}` marker).
pub fn decode(record: &[u8]) -> Result<(Vec<Op>, bool), StoreError> {
    let mut ops = Vec::new();
    let mut rest = record;
    while !rest.is_empty() {
        let len = rest
            .get(..4)
            .map(|b| i32::from_le_bytes([b[0], b[1], b[2], b[3]]))
            .and_then(|len| usize::try_from(len).ok())
            .filter(|&len| len >= 5 && len <= rest.len())
            .ok_or_else(|| bad("operation length"))?;
        let doc = RawDocument::from_bytes(&rest[..len]).map_err(|_| bad("operation bytes"))?;
        rest = &rest[len..];
        if doc.get_str("o").is_ok_and(|kind| kind == "+") {
            if !rest.is_empty() {
                return Err(bad("continuation marker before the record's end"));
            }
            return Ok((ops, true));
        }
        ops.push(decode_op(doc)?);
    }
    Ok((ops, false))
}

fn bad(what: &str) -> StoreError {
    StoreError::Corrupt(format!("log record: bad {what}"))
}

fn decode_op(doc: &RawDocument) -> Result<Op, StoreError> {
    let ns = |key: &str| {
        doc.get_str(key)
            .ok()
            .and_then(Namespace::parse)
            .ok_or_else(|| bad("namespace"))
    };
    let rid = || {
        doc.get_i64("r")
            .ok()
            .and_then(|r| u64::try_from(r).ok())
            .ok_or_else(|| bad("record id"))
    };
    let body = || {
        doc.get_document("d")
            .map(ToOwned::to_owned)
            .map_err(|_| bad("document"))
    };
    let spec = || {
        doc.get_document("s")
            .map(ToOwned::to_owned)
            .map_err(|_| bad("index specification"))
    };
    let index_name = || {
        doc.get_str("x")
            .map(ToOwned::to_owned)
            .map_err(|_| bad("index name"))
    };
    let kind = doc.get_str("o").map_err(|_| bad("kind"))?;
    Ok(match kind {
        "c" => {
            let options = doc.get_document("opt").map_err(|_| bad("options"))?;
            let uuid = doc.get_binary("u").map_err(|_| bad("uuid"))?;
            let compressor = match doc.get("z") {
                Ok(None) => Compressor::None,
                Ok(Some(bson::raw::RawBsonRef::String(name))) => {
                    Compressor::from_name(name).ok_or_else(|| bad("compressor"))?
                }
                _ => return Err(bad("compressor")),
            };
            Op::Create {
                ns: ns("n")?,
                options: options.to_owned(),
                uuid: uuid.bytes.try_into().map_err(|_| bad("uuid"))?,
                compressor,
            }
        }
        "x" => Op::Drop { ns: ns("n")? },
        "m" => Op::Rename {
            from: ns("n")?,
            to: ns("to")?,
        },
        "i" => Op::Insert {
            ns: ns("n")?,
            rid: rid()?,
            doc: body()?,
        },
        "u" => Op::Update {
            ns: ns("n")?,
            rid: rid()?,
            doc: body()?,
        },
        "d" => Op::Delete {
            ns: ns("n")?,
            rid: rid()?,
        },
        "p" => {
            let kept = |key: &str| {
                doc.get_i64(key)
                    .ok()
                    .and_then(|n| u32::try_from(n).ok())
                    .ok_or_else(|| bad("patch bounds"))
            };
            let middle = doc.get_binary("d").map_err(|_| bad("patch bytes"))?;
            Op::Patch {
                ns: ns("n")?,
                rid: rid()?,
                patch: Patch {
                    front: kept("a")?,
                    back: kept("b")?,
                    middle: middle.bytes.to_vec(),
                },
            }
        }
        "ci" => Op::CreateIndex {
            ns: ns("n")?,
            spec: spec()?,
        },
        "t" => Op::Stamp(super::oplog::Stamp {
            ts: super::oplog::Ts::from_timestamp(doc.get_timestamp("t").map_err(|_| bad("ts"))?),
            wall_millis: doc.get_i64("w").map_err(|_| bad("wall time"))?,
            term: doc.get_i64("e").map_err(|_| bad("term"))?,
            extra: doc
                .get_document("x")
                .map(ToOwned::to_owned)
                .map_err(|_| bad("stamp fields"))?,
        }),
        "n" => Op::Note {
            o: doc
                .get_document("x")
                .map(ToOwned::to_owned)
                .map_err(|_| bad("note"))?,
        },
        "di" => Op::DropIndex {
            ns: ns("n")?,
            name: index_name()?,
        },
        "mi" => Op::ModifyIndex {
            ns: ns("n")?,
            name: index_name()?,
            spec: spec()?,
        },
        "mo" => Op::ModifyOptions {
            ns: ns("n")?,
            options: doc
                .get_document("opt")
                .map(ToOwned::to_owned)
                .map_err(|_| bad("options"))?,
        },
        _ => return Err(bad("kind")),
    })
}

#[cfg(test)]
mod tests {
    use super::{Op, PATCH_MIN_DOC, Patch, decode, encode_continued};
    use crate::store::catalog::Namespace;
    use bson::{RawDocumentBuf, rawdoc};
    use proptest::prelude::*;

    /// A document of `fields` (name, value) pairs, with a filler so that most pass the
    /// patch's size threshold.
    fn document(fields: &[(u8, i64)], filler: usize) -> RawDocumentBuf {
        let mut doc = RawDocumentBuf::new();
        doc.append(bson::cstr!("_id"), 1);
        doc.append(bson::cstr!("pad"), "x".repeat(filler));
        for (name, value) in fields {
            let name = format!("f{}", name % 8);
            let key = bson::raw::CString::try_from(name.as_str()).expect("name");
            match value % 3 {
                0 => doc.append(key, *value),
                1 => doc.append(key, value.to_string()),
                _ => doc.append(key, rawdoc! { "v": *value, "w": [*value, 1] }),
            }
        }
        doc
    }

    proptest! {
        /// Every edit `diff` proposes rebuilds the new document byte for byte, is smaller
        /// than a quarter of it, and survives the log's encoding.
        #[test]
        fn a_patch_rebuilds_the_new_document(
            old in proptest::collection::vec((any::<u8>(), any::<i64>()), 0..6),
            new in proptest::collection::vec((any::<u8>(), any::<i64>()), 0..6),
            keep in 0usize..6,
            filler in 0usize..2_000,
            grow in 0usize..40,
        ) {
            let old_doc = document(&old, filler);
            // Half the cases share a prefix of fields, so the edit is small.
            let mut shared: Vec<(u8, i64)> = old.iter().take(keep).copied().collect();
            shared.extend(new);
            let new_doc = document(&shared, filler + grow);
            match Patch::diff(old_doc.as_bytes(), new_doc.as_bytes()) {
                Some(patch) => {
                    prop_assert!(patch.middle.len() <= new_doc.as_bytes().len() / 4);
                    prop_assert_eq!(patch.apply(old_doc.as_bytes()).expect("apply"), new_doc.clone());
                    let op = Op::Patch { ns: Namespace::new("d", "c"), rid: 3, patch };
                    let mut bytes = Vec::new();
                    op.encode_into(&mut bytes);
                    prop_assert_eq!(decode(&bytes).expect("decode"), (vec![op], false));
                }
                None => prop_assert!(
                    new_doc.as_bytes().len() < PATCH_MIN_DOC
                        || old_doc.as_bytes() != new_doc.as_bytes()
                ),
            }
        }
    }

    proptest! {
        /// The record operations written straight into the buffer are the bytes the
        /// `rawdoc!` encoding gives, appended after what the buffer held.
        #[test]
        fn direct_encoding_equals_the_built_document(
            fields in proptest::collection::vec((any::<u8>(), any::<i64>()), 0..6),
            filler in 0usize..3_000,
            rid in 0u64..(1 << 62),
            db in "[a-z]{1,8}",
            coll in "[a-z.]{1,12}",
            front in any::<u32>(),
            back in any::<u32>(),
            kind in 0u8..4,
            before in proptest::collection::vec(any::<u8>(), 0..20),
        ) {
            let ns = Namespace::new(&db, &coll);
            let doc = document(&fields, filler);
            let op = match kind {
                0 => Op::Insert { ns, rid, doc },
                1 => Op::Update { ns, rid, doc },
                2 => Op::Delete { ns, rid },
                _ => Op::Patch {
                    ns,
                    rid,
                    patch: Patch { front, back, middle: doc.as_bytes()[..filler.min(doc.as_bytes().len())].to_vec() },
                },
            };
            let mut direct = before.clone();
            op.encode_into(&mut direct);
            let mut built = before;
            built.extend_from_slice(op.encode_built().as_bytes());
            prop_assert_eq!(direct, built);
        }
    }

    proptest! {
        /// A stamp survives the log's encoding, past 2038's seconds too.
        #[test]
        fn a_stamp_round_trips(
            secs in any::<u32>(),
            inc in any::<u32>(),
            wall in any::<i64>(),
            term in any::<i64>(),
            txn in proptest::option::of(any::<i64>()),
            stmt in proptest::option::of(any::<i32>()),
            replacement in any::<bool>(),
        ) {
            use crate::store::oplog::{Context, Stamp, Ts};
            let context = Context {
                wall_millis: None,
                session: txn.map(|txn| (rawdoc! { "id": 1 }, txn)),
                stmt_id: stmt,
                replacement,
            };
            let op = Op::Stamp(Stamp::new(Ts::new(secs, inc), wall, term, &context));
            let mut bytes = Vec::new();
            op.encode_into(&mut bytes);
            prop_assert_eq!(decode(&bytes).expect("decode"), (vec![op], false));
        }

        #[test]
        fn notes_decode_to_themselves(msg in ".{0,40}") {
            let op = Op::Note { o: rawdoc! { "msg": msg } };
            let mut bytes = Vec::new();
            op.encode_into(&mut bytes);
            prop_assert_eq!(decode(&bytes).expect("decode"), (vec![op], false));
        }
    }

    #[test]
    fn common_prefix_and_suffix_find_the_first_difference_at_every_position() {
        for len in 0..300 {
            let a: Vec<u8> = (0..len).map(|i| (i * 7) as u8).collect();
            assert_eq!(super::common_prefix(&a, &a), len);
            assert_eq!(super::common_suffix(&a, &a), len);
            for at in 0..len {
                let mut b = a.clone();
                b[at] ^= 1;
                assert_eq!(super::common_prefix(&a, &b), at, "len {len} at {at}");
                assert_eq!(
                    super::common_suffix(&a, &b),
                    len - at - 1,
                    "len {len} at {at}"
                );
            }
            // Unequal lengths: the shorter one bounds both.
            let longer: Vec<u8> = a.iter().copied().chain([9, 9]).collect();
            assert_eq!(super::common_prefix(&a, &longer), len);
            let tail: Vec<u8> = [9, 9].into_iter().chain(a.iter().copied()).collect();
            assert_eq!(super::common_suffix(&a, &tail), len);
        }
    }

    #[test]
    fn a_same_size_increment_is_a_few_bytes() {
        let old = rawdoc! { "_id": 1, "pad": "x".repeat(16_000), "u": 41 };
        let new = rawdoc! { "_id": 1, "pad": "x".repeat(16_000), "u": 42 };
        let patch = Patch::diff(old.as_bytes(), new.as_bytes()).expect("a patch");
        assert_eq!(patch.middle, vec![42]);
        assert_eq!(patch.apply(old.as_bytes()).expect("apply"), new);
        // A patch that does not fit the record it names is corruption, not a panic.
        let short = rawdoc! { "_id": 1 };
        assert!(patch.apply(short.as_bytes()).is_err());
        assert!(
            Patch {
                front: 2,
                back: 1,
                middle: vec![]
            }
            .apply(old.as_bytes())
            .is_err()
        );
        // Small documents are logged whole.
        assert!(Patch::diff(rawdoc! {"u": 1}.as_bytes(), rawdoc! {"u": 2}.as_bytes()).is_none());
    }

    #[test]
    fn every_operation_round_trips() {
        let ns = Namespace::new("db", "c.d");
        let ops = vec![
            Op::Create {
                ns: ns.clone(),
                options: rawdoc! {"capped": false},
                uuid: [7; 16],
                compressor: crate::store::Compressor::None,
            },
            Op::Create {
                ns: Namespace::new("db", "z"),
                options: rawdoc! {},
                uuid: [8; 16],
                compressor: crate::store::Compressor::Lz4,
            },
            Op::Insert {
                ns: ns.clone(),
                rid: 1,
                doc: rawdoc! {"_id": 1},
            },
            Op::Update {
                ns: ns.clone(),
                rid: 1,
                doc: rawdoc! {"_id": 1, "a": "b"},
            },
            Op::Delete {
                ns: ns.clone(),
                rid: 1,
            },
            Op::Patch {
                ns: ns.clone(),
                rid: 2,
                patch: Patch {
                    front: 9,
                    back: 3,
                    middle: vec![1, 2, 3],
                },
            },
            Op::CreateIndex {
                ns: ns.clone(),
                spec: rawdoc! {"v": 2, "key": {"a": 1}, "name": "a_1"},
            },
            Op::ModifyIndex {
                ns: ns.clone(),
                name: "a_1".into(),
                spec: rawdoc! {"v": 2, "hidden": true, "key": {"a": 1}, "name": "a_1"},
            },
            Op::DropIndex {
                ns: ns.clone(),
                name: "a_1".into(),
            },
            Op::ModifyOptions {
                ns: ns.clone(),
                options: rawdoc! {"validator": {"a": {"$gt": 1}}, "validationLevel": "moderate"},
            },
            Op::Rename {
                from: ns.clone(),
                to: Namespace::new("db", "e"),
            },
            Op::Drop { ns },
        ];
        let mut bytes = Vec::new();
        for op in &ops {
            op.encode_into(&mut bytes);
        }
        assert_eq!(decode(&bytes).expect("decode"), (ops.clone(), false));
        assert!(decode(&bytes[..bytes.len() - 1]).is_err());
        let mut continued = bytes.clone();
        encode_continued(&mut continued);
        assert_eq!(decode(&continued).expect("decode"), (ops, true));
        let mut misplaced = Vec::new();
        encode_continued(&mut misplaced);
        misplaced.extend_from_slice(&bytes);
        assert!(decode(&misplaced).is_err(), "the marker ends a record");
    }
}
