//! Logical WAL records: what one write transaction changed, as a list of operations that
//! replay deterministically onto the last checkpoint.
//!
//! A record is the concatenation of operation documents (each a BSON document, so each
//! carries its own length): `{o: "c", n, opt, u, z}` create (`z` the records' compressor,
//! absent for raw records), `{o: "x", n}` drop,
//! `{o: "m", n, to}` rename, `{o: "i", n, r, d}` insert, `{o: "u", n, r, d}` update and
//! `{o: "d", n, r}` delete, `{o: "ci", n, s}` create index (built from the collection's
//! records when applied), `{o: "di", n, x}` drop index and `{o: "mi", n, x, s}` replace an
//! index's specification (collMod), where `n` is the namespace `db.coll`, `r` the record
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

use super::StoreError;
use super::catalog::Namespace;
use super::records::Compressor;
use bson::spec::BinarySubtype;
use bson::{RawDocument, RawDocumentBuf, rawdoc};

/// One change to the database.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Op {
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
}

fn rid_i64(rid: u64) -> i64 {
    i64::try_from(rid).expect("record ids stay below 2^63")
}

impl Op {
    /// Appends the operation's document to `out`.
    pub(crate) fn encode_into(&self, out: &mut Vec<u8>) {
        let doc = match self {
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
            Op::CreateIndex { ns, spec } => {
                rawdoc! { "o": "ci", "n": ns.full(), "s": spec.clone() }
            }
            Op::DropIndex { ns, name } => rawdoc! { "o": "di", "n": ns.full(), "x": name.as_str() },
            Op::ModifyIndex { ns, name, spec } => {
                rawdoc! { "o": "mi", "n": ns.full(), "x": name.as_str(), "s": spec.clone() }
            }
        };
        out.extend_from_slice(doc.as_bytes());
    }

    /// Bytes the encoded operation takes, roughly (for splitting records).
    pub(crate) fn size_hint(&self) -> usize {
        64 + match self {
            Op::Create { options, .. } => options.as_bytes().len(),
            Op::Insert { doc, .. } | Op::Update { doc, .. } => doc.as_bytes().len(),
            Op::CreateIndex { spec, .. } | Op::ModifyIndex { spec, .. } => spec.as_bytes().len(),
            _ => 0,
        }
    }
}

/// Appends the marker that ends a record whose transaction continues in the next record.
pub(crate) fn encode_continued(out: &mut Vec<u8>) {
    out.extend_from_slice(rawdoc! { "o": "+" }.as_bytes());
}

/// Decodes every operation of one record, and whether its transaction continues in the
/// next record (it ends with the `{o: "+"}` marker).
pub(crate) fn decode(record: &[u8]) -> Result<(Vec<Op>, bool), StoreError> {
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
        "ci" => Op::CreateIndex {
            ns: ns("n")?,
            spec: spec()?,
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
        _ => return Err(bad("kind")),
    })
}

#[cfg(test)]
mod tests {
    use super::{Op, decode, encode_continued};
    use crate::store::catalog::Namespace;
    use bson::rawdoc;

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
