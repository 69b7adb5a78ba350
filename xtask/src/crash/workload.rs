//! The crash matrix's workloads and the model each run is checked against.
//!
//! A workload is a set of clients, each sending one command at a time over its own
//! connection. Every client owns a disjoint part of the database (its *scope*: a range of
//! `_id`s, and for the DDL client the collections themselves), so after a crash each
//! client's part must equal its acknowledged state, or that state with its one
//! unacknowledged command applied (each command is one transaction: wholly present or
//! wholly absent). Anything outside every scope was never sent.

use super::client::{Client, Failure};
use bson::{Bson, DateTime, Document, doc};
use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::ops::Range;

/// The database the workloads write (and the second one the DDL mix drops).
pub(crate) const DB: &str = "crash";
const DB_B: &str = "crash_b";
/// The collection the data workloads share.
const DATA_NS: &str = "crash.c";
/// `_id`s per client: client `c` owns `c * ID_SPAN .. (c + 1) * ID_SPAN`.
const ID_SPAN: i64 = 1_000_000;

/// What the clients do.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Workload {
    /// Inserts of 1-4 documents of mixed sizes (some past the B+tree's inline limit),
    /// and every fifth command a bulk insert of 6 MiB (logged as two WAL records).
    Insert,
    /// `$inc` and `$set` on a fixed set of documents per client, some multi-document.
    Update,
    /// Delete and reinsert of a few `_id`s per client, each reinsert with new content.
    Delete,
    /// create / drop / rename (with and without dropTarget, across databases) /
    /// dropDatabase, with inserts between; one client.
    Ddl,
    /// Writes under secondary indexes (issue 26): `crash.c` has a unique index on `u` and
    /// a multikey one on `m`; inserts, updates that move `u` and `m`, deletes, inserts
    /// that break the unique index (refused with 11000, changing nothing), and on client
    /// 0 builds and drops of a third index over the data.
    Index,
    /// The TTL monitor's deletes (issue 26): `crash.c` has a TTL index on `exp`
    /// (`expireAfterSeconds: 0`) and the server sweeps it every second; the clients insert
    /// documents whose `exp` is long past (the monitor deletes them), far in the future, or
    /// missing, and update their unexpired ones. An expired document may be present or
    /// gone at any moment, so the model leaves them out ([`expired`]); every other one
    /// must be exactly as acknowledged.
    Ttl,
}

impl Workload {
    pub(crate) const ALL: [Workload; 6] = [
        Workload::Insert,
        Workload::Update,
        Workload::Delete,
        Workload::Ddl,
        Workload::Index,
        Workload::Ttl,
    ];

    pub(crate) fn name(self) -> &'static str {
        match self {
            Workload::Insert => "insert",
            Workload::Update => "update",
            Workload::Delete => "delete",
            Workload::Ddl => "ddl",
            Workload::Index => "index",
            Workload::Ttl => "ttl",
        }
    }

    pub(crate) fn parse(name: &str) -> Option<Workload> {
        Workload::ALL.into_iter().find(|w| w.name() == name)
    }

    /// How many concurrent clients a run with `seed` uses.
    pub(crate) fn clients(self, seed: u64) -> usize {
        match self {
            Workload::Ddl => 1,
            _ => 1 + (seed % 2) as usize,
        }
    }
}

/// A small deterministic generator (splitmix64).
#[derive(Clone, Debug)]
pub(crate) struct Rng(u64);

impl Rng {
    pub(crate) fn new(seed: u64) -> Rng {
        Rng(seed ^ 0x9E37_79B9_7F4A_7C15)
    }

    pub(crate) fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `0..n` (`n > 0`).
    pub(crate) fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }

    fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len() as u64) as usize]
    }
}

/// What the database holds, as far as the workloads are concerned: the collections (by
/// `db.coll`) and every document by collection and `_id` (always an int64).
#[derive(Clone, Debug, Default)]
pub(crate) struct State {
    pub(crate) colls: BTreeSet<String>,
    pub(crate) docs: BTreeMap<(String, i64), Document>,
}

impl PartialEq for State {
    fn eq(&self, other: &State) -> bool {
        self.colls == other.colls
            && self.docs.len() == other.docs.len()
            && self
                .docs
                .iter()
                .zip(&other.docs)
                .all(|((ka, a), (kb, b))| ka == kb && same(a, b))
    }
}

/// One command of a workload.
#[derive(Clone, Debug)]
pub(crate) enum Op {
    Create {
        ns: String,
    },
    Insert {
        ns: String,
        docs: Vec<Document>,
    },
    Inc {
        ns: String,
        ids: Vec<i64>,
        by: i64,
    },
    Set {
        ns: String,
        id: i64,
        field: &'static str,
        value: String,
    },
    Delete {
        ns: String,
        id: i64,
    },
    Drop {
        ns: String,
    },
    Rename {
        from: String,
        to: String,
        drop_target: bool,
    },
    DropDatabase {
        db: String,
    },
    /// An insert the unique index must refuse (11000): changes nothing.
    InsertDuplicate {
        ns: String,
        doc: Document,
    },
    CreateIndexes {
        ns: String,
        specs: Vec<Document>,
    },
    DropIndex {
        ns: String,
        name: String,
    },
}

fn split(ns: &str) -> (&str, &str) {
    ns.split_once('.').unwrap_or((ns, ""))
}

impl Op {
    /// The database and command document to send (durable: `w: 1, j: true`).
    pub(crate) fn request(&self) -> (String, Document) {
        let concern = doc! {"w": 1, "j": true};
        let (db, mut body) = match self {
            Op::Create { ns } => {
                let (db, coll) = split(ns);
                (db, doc! {"create": coll})
            }
            Op::Insert { ns, docs } => {
                let (db, coll) = split(ns);
                (
                    db,
                    doc! {"insert": coll, "documents": docs.clone(), "ordered": true},
                )
            }
            Op::Inc { ns, ids, by } => {
                let (db, coll) = split(ns);
                let update = doc! {
                    "q": {"_id": {"$in": ids.clone()}},
                    "u": {"$inc": {"n": *by}},
                    "multi": ids.len() > 1,
                };
                (db, doc! {"update": coll, "updates": [update]})
            }
            Op::Set {
                ns,
                id,
                field,
                value,
            } => {
                let (db, coll) = split(ns);
                let update = doc! {"q": {"_id": *id}, "u": {"$set": {*field: value.clone()}}};
                (db, doc! {"update": coll, "updates": [update]})
            }
            Op::Delete { ns, id } => {
                let (db, coll) = split(ns);
                let delete = doc! {"q": {"_id": *id}, "limit": 1};
                (db, doc! {"delete": coll, "deletes": [delete]})
            }
            Op::Drop { ns } => {
                let (db, coll) = split(ns);
                (db, doc! {"drop": coll})
            }
            Op::Rename {
                from,
                to,
                drop_target,
            } => (
                "admin",
                doc! {"renameCollection": from, "to": to, "dropTarget": *drop_target},
            ),
            Op::DropDatabase { db } => (db.as_str(), doc! {"dropDatabase": 1}),
            Op::InsertDuplicate { ns, doc } => {
                let (db, coll) = split(ns);
                (db, doc! {"insert": coll, "documents": [doc.clone()]})
            }
            Op::CreateIndexes { ns, specs } => {
                let (db, coll) = split(ns);
                (db, doc! {"createIndexes": coll, "indexes": specs.clone()})
            }
            Op::DropIndex { ns, name } => {
                let (db, coll) = split(ns);
                (db, doc! {"dropIndexes": coll, "index": name.clone()})
            }
        };
        body.insert("writeConcern", concern);
        (db.to_owned(), body)
    }

    /// Whether the command must be answered with a write error (sent without the
    /// client's refusal check).
    fn expects_write_error(&self) -> bool {
        matches!(self, Op::InsertDuplicate { .. })
    }

    /// Checks the counts in an acknowledged reply against what the model expects.
    fn check_reply(&self, reply: &Document) -> Result<(), String> {
        let n = || reply.get_i32("n").map(i64::from).unwrap_or(-1);
        if let Op::InsertDuplicate { .. } = self {
            let code = reply
                .get_array("writeErrors")
                .ok()
                .and_then(|e| e.first())
                .and_then(Bson::as_document)
                .and_then(|e| e.get_i32("code").ok());
            if n() != 0 || code != Some(11000) {
                return Err(format!(
                    "{} answered {reply} (expected 11000)",
                    self.describe()
                ));
            }
            return Ok(());
        }
        let expected = match self {
            Op::Insert { docs, .. } => docs.len() as i64,
            Op::Inc { ids, .. } => ids.len() as i64,
            Op::Set { .. } | Op::Delete { .. } => 1,
            _ => return Ok(()),
        };
        if n() != expected {
            return Err(format!(
                "{} answered n: {} (expected {expected})",
                self.describe(),
                n()
            ));
        }
        Ok(())
    }

    /// The change to the model.
    pub(crate) fn apply(&self, state: &mut State) {
        match self {
            Op::Create { ns } => {
                state.colls.insert(ns.clone());
            }
            Op::Insert { ns, docs } => {
                state.colls.insert(ns.clone());
                for doc in docs {
                    let id = doc.get_i64("_id").expect("workload ids are int64");
                    state.docs.insert((ns.clone(), id), doc.clone());
                }
            }
            Op::Inc { ns, ids, by } => {
                for id in ids {
                    if let Some(doc) = state.docs.get_mut(&(ns.clone(), *id)) {
                        let n = doc.get_i64("n").unwrap_or(0);
                        doc.insert("n", n + by);
                    }
                }
            }
            Op::Set {
                ns,
                id,
                field,
                value,
            } => {
                if let Some(doc) = state.docs.get_mut(&(ns.clone(), *id)) {
                    doc.insert(*field, value.clone());
                }
            }
            Op::Delete { ns, id } => {
                state.docs.remove(&(ns.clone(), *id));
            }
            Op::Drop { ns } => drop_ns(state, ns),
            Op::Rename {
                from,
                to,
                drop_target,
            } => {
                if *drop_target {
                    drop_ns(state, to);
                }
                state.colls.remove(from);
                state.colls.insert(to.clone());
                let moved: Vec<_> = state
                    .docs
                    .iter()
                    .filter(|((ns, _), _)| ns == from)
                    .map(|((_, id), doc)| (*id, doc.clone()))
                    .collect();
                for (id, doc) in moved {
                    state.docs.remove(&(from.clone(), id));
                    state.docs.insert((to.clone(), id), doc);
                }
            }
            Op::InsertDuplicate { .. } | Op::CreateIndexes { .. } | Op::DropIndex { .. } => {}
            Op::DropDatabase { db } => {
                let prefix = format!("{db}.");
                let gone: Vec<String> = state
                    .colls
                    .iter()
                    .filter(|ns| ns.starts_with(&prefix))
                    .cloned()
                    .collect();
                for ns in gone {
                    drop_ns(state, &ns);
                }
            }
        }
    }

    /// A short description for failure messages.
    pub(crate) fn describe(&self) -> String {
        match self {
            Op::Create { ns } => format!("create {ns}"),
            Op::Insert { ns, docs } => {
                let ids: Vec<i64> = docs.iter().filter_map(|d| d.get_i64("_id").ok()).collect();
                match ids.as_slice() {
                    [first, _, _, .., last] => {
                        format!("insert {ns} {} documents [{first}..={last}]", ids.len())
                    }
                    _ => format!("insert {ns} {ids:?}"),
                }
            }
            Op::Inc { ns, ids, by } => format!("$inc n by {by} in {ns} {ids:?}"),
            Op::Set { ns, id, field, .. } => format!("$set {field} in {ns} {id}"),
            Op::Delete { ns, id } => format!("delete {ns} {id}"),
            Op::Drop { ns } => format!("drop {ns}"),
            Op::Rename {
                from,
                to,
                drop_target,
            } => format!("rename {from} -> {to} (dropTarget {drop_target})"),
            Op::DropDatabase { db } => format!("dropDatabase {db}"),
            Op::InsertDuplicate { ns, doc } => format!("duplicate insert {ns} {}", brief(doc)),
            Op::CreateIndexes { ns, specs } => format!("createIndexes {ns} {specs:?}"),
            Op::DropIndex { ns, name } => format!("dropIndexes {ns} {name}"),
        }
    }
}

fn drop_ns(state: &mut State, ns: &str) {
    state.colls.remove(ns);
    state.docs.retain(|(n, _), _| n != ns);
}

/// The part of the database a client owns.
#[derive(Clone, Debug)]
pub(crate) struct Scope {
    /// `_id`s it owns (`None`: every `_id`).
    ids: Option<Range<i64>>,
    /// Whether it owns the set of collections.
    namespaces: bool,
}

impl Scope {
    fn owns(&self, id: i64) -> bool {
        self.ids.as_ref().is_none_or(|r| r.contains(&id))
    }

    fn view(&self, state: &State) -> State {
        State {
            colls: if self.namespaces {
                state.colls.clone()
            } else {
                BTreeSet::new()
            },
            docs: state
                .docs
                .iter()
                .filter(|((_, id), doc)| self.owns(*id) && !expired(doc))
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect(),
        }
    }
}

/// One client: its scope, its generator and what the server acknowledged.
pub(crate) struct Track {
    pub(crate) name: String,
    scope: Scope,
    workload: Workload,
    client: usize,
    rng: Rng,
    op_no: u64,
    next_id: i64,
    /// State as acknowledged (every command answered ok, in order).
    pub(crate) acked: State,
    /// The command sent and not answered (the connection broke), if any.
    pub(crate) pending: Option<Op>,
    /// Commands acknowledged.
    pub(crate) acks: u64,
    /// A scripted first command (the data workloads' documents to update or delete).
    script: Vec<Op>,
    /// The setup client: runs its script alone, before the others start.
    setup: bool,
    /// The index workload's client 0: whether its index `k_1` exists (acknowledged).
    k_index: bool,
}

impl Track {
    /// The setup client of the data workloads: creates `crash.c` and owns the set of
    /// collections.
    pub(crate) fn setup() -> Track {
        let scope = Scope {
            ids: Some(0..0),
            namespaces: true,
        };
        let mut track = Track::new("setup", scope, Workload::Insert, 0, 0);
        track.setup = true;
        track.script = vec![Op::Create {
            ns: DATA_NS.to_owned(),
        }];
        track
    }

    /// The setup client of the index workload: `crash.c` with its two indexes.
    pub(crate) fn setup_indexed() -> Track {
        let mut track = Track::setup();
        track.script.push(Op::CreateIndexes {
            ns: DATA_NS.to_owned(),
            specs: vec![
                doc! {"key": {"u": 1}, "name": "u_1", "unique": true},
                doc! {"key": {"m": 1, "_id": -1}, "name": "m_1__id_-1"},
            ],
        });
        track
    }

    /// The setup client of the TTL workload: `crash.c` with its TTL index.
    pub(crate) fn setup_ttl() -> Track {
        let mut track = Track::setup();
        track.script.push(Op::CreateIndexes {
            ns: DATA_NS.to_owned(),
            specs: vec![doc! {"key": {"exp": 1}, "name": "exp_1", "expireAfterSeconds": 0}],
        });
        track
    }

    /// Client `client` of `workload`.
    pub(crate) fn client(workload: Workload, client: usize, seed: u64) -> Track {
        let base = (client as i64 + 1) * ID_SPAN;
        let scope = match workload {
            Workload::Ddl => Scope {
                ids: None,
                namespaces: true,
            },
            _ => Scope {
                ids: Some(base..base + ID_SPAN),
                namespaces: false,
            },
        };
        let seed = seed
            .wrapping_mul(0x100_0000_01B3)
            .wrapping_add(client as u64 + 1);
        let mut track = Track::new(&format!("client {client}"), scope, workload, client, seed);
        track.next_id = base;
        if workload == Workload::Update {
            let docs = (0..UPDATE_DOCS)
                .map(|k| doc! {"_id": base + k, "n": 0i64, "v": "", "g": ""})
                .collect();
            track.script = vec![Op::Insert {
                ns: DATA_NS.to_owned(),
                docs,
            }];
        }
        track
    }

    fn new(name: &str, scope: Scope, workload: Workload, client: usize, seed: u64) -> Track {
        Track {
            name: name.to_owned(),
            scope,
            workload,
            client,
            rng: Rng::new(seed),
            op_no: 0,
            next_id: 0,
            acked: State::default(),
            pending: None,
            acks: 0,
            script: Vec::new(),
            setup: false,
            k_index: false,
        }
    }

    /// Whether this is the setup client.
    pub(crate) fn is_setup(&self) -> bool {
        self.setup
    }

    /// Whether the scripted commands are all acknowledged.
    pub(crate) fn scripted(&self) -> bool {
        self.script.is_empty()
    }

    /// Sends the next command. `Ok(true)`: acknowledged; `Ok(false)`: the connection broke
    /// (the command stays pending); `Err`: the server refused it (a workload or server bug).
    pub(crate) fn step(&mut self, client: &mut Client) -> Result<bool, String> {
        let op = if self.script.is_empty() {
            self.next_op()
        } else {
            self.script.remove(0)
        };
        let (db, body) = op.request();
        let raw = op.expects_write_error();
        self.pending = Some(op);
        let result = if raw {
            client.raw_command(&db, body)
        } else {
            client.command(&db, body)
        };
        match result {
            Ok(reply) => {
                let op = self.pending.take().expect("pending op");
                op.check_reply(&reply)
                    .map_err(|e| format!("{}: {e}", self.name))?;
                op.apply(&mut self.acked);
                match &op {
                    Op::CreateIndexes { .. } => self.k_index = true,
                    Op::DropIndex { .. } => self.k_index = false,
                    _ => {}
                }
                self.acks += 1;
                Ok(true)
            }
            Err(Failure::Lost(_)) => Ok(false),
            Err(refused) => {
                let op = self.pending.take().expect("pending op");
                Err(format!("{}: {} {refused}", self.name, op.describe()))
            }
        }
    }

    fn next_op(&mut self) -> Op {
        self.op_no += 1;
        match self.workload {
            Workload::Insert => self.insert_op(),
            Workload::Update => self.update_op(),
            Workload::Delete => self.delete_op(),
            Workload::Ddl => self.ddl_op(),
            Workload::Index => self.index_op(),
            Workload::Ttl => self.ttl_op(),
        }
    }

    fn ttl_op(&mut self) -> Op {
        let ns = DATA_NS.to_owned();
        let unexpired: Vec<i64> = self
            .acked
            .docs
            .iter()
            .filter(|((n, id), doc)| *n == ns && self.scope.owns(*id) && !expired(doc))
            .map(|((_, id), _)| *id)
            .collect();
        if !unexpired.is_empty() && self.rng.below(5) == 0 {
            return Op::Set {
                ns,
                id: *self.rng.pick(&unexpired),
                field: "v",
                value: format!("v{}", self.op_no),
            };
        }
        let count = 1 + self.rng.below(4);
        let docs = (0..count)
            .map(|_| {
                let id = self.next_id;
                self.next_id += 1;
                let mut doc = doc! {"_id": id, "op": self.op_no as i64, "pad": pad(self.rng.below(600) as usize, self.op_no)};
                match self.rng.below(10) {
                    // 1970 plus a little: long expired.
                    0..=5 => doc.insert("exp", DateTime::from_millis(id % 100_000)),
                    // 2100: never expires during a run.
                    6..=7 => doc.insert("exp", DateTime::from_millis(4_102_444_800_000)),
                    _ => None,
                };
                doc
            })
            .collect();
        Op::Insert { ns, docs }
    }

    /// A document of the index workload: `u` unique (from the `_id`), `m` an array.
    fn indexed_doc(&mut self) -> Document {
        let id = self.next_id;
        self.next_id += 1;
        let len = self.rng.below(400) as usize;
        doc! {
            "_id": id, "u": format!("u{id}"),
            "m": [(self.op_no % 7) as i64, id % 3],
            "k": self.rng.below(50) as i64, "pad": pad(len, self.op_no),
        }
    }

    fn index_op(&mut self) -> Op {
        let ns = DATA_NS.to_owned();
        let mine: Vec<i64> = self
            .acked
            .docs
            .keys()
            .filter(|(n, id)| *n == ns && self.scope.owns(*id))
            .map(|(_, id)| *id)
            .collect();
        match self.rng.below(12) {
            0..=3 => {
                let count = 1 + self.rng.below(3);
                let docs = (0..count).map(|_| self.indexed_doc()).collect();
                Op::Insert { ns, docs }
            }
            4..=5 if !mine.is_empty() => {
                // Moves the document's unique key to a fresh one.
                let id = *self.rng.pick(&mine);
                let fresh = self.next_id;
                self.next_id += 1;
                Op::Set {
                    ns,
                    id,
                    field: "u",
                    value: format!("u{fresh}"),
                }
            }
            6 if !mine.is_empty() => {
                let id = *self.rng.pick(&mine);
                let taken = self.acked.docs[&(ns.clone(), id)]
                    .get_str("u")
                    .unwrap_or_default()
                    .to_owned();
                let mut doc = self.indexed_doc();
                doc.insert("u", taken);
                Op::InsertDuplicate { ns, doc }
            }
            7 if !mine.is_empty() => Op::Delete {
                id: *self.rng.pick(&mine),
                ns,
            },
            8..=9 if self.client == 0 => {
                if self.k_index {
                    Op::DropIndex {
                        ns,
                        name: "k_1".to_owned(),
                    }
                } else {
                    Op::CreateIndexes {
                        ns,
                        specs: vec![doc! {"key": {"k": 1}, "name": "k_1"}],
                    }
                }
            }
            _ => {
                let docs = vec![self.indexed_doc()];
                Op::Insert { ns, docs }
            }
        }
    }

    fn new_doc(&mut self) -> Document {
        let id = self.next_id;
        self.next_id += 1;
        let len = match self.rng.below(20) {
            0 => 12_000 + self.rng.below(20_000),
            1..=4 => 900 + self.rng.below(3_000),
            _ => self.rng.below(300),
        } as usize;
        doc! {"_id": id, "c": self.client as i64, "op": self.op_no as i64, "pad": pad(len, self.op_no)}
    }

    fn insert_op(&mut self) -> Op {
        if self.op_no % 5 == 2 {
            return self.bulk_insert();
        }
        let count = 1 + self.rng.below(4);
        let docs = (0..count).map(|_| self.new_doc()).collect();
        Op::Insert {
            ns: DATA_NS.to_owned(),
            docs,
        }
    }

    /// One insert of about 6 MiB: the engine logs it as two WAL records.
    fn bulk_insert(&mut self) -> Op {
        let docs = (0..BULK_DOCS)
            .map(|_| {
                let id = self.next_id;
                self.next_id += 1;
                doc! {"_id": id, "c": self.client as i64, "op": self.op_no as i64, "pad": pad(BULK_DOC_BYTES, self.op_no)}
            })
            .collect();
        Op::Insert {
            ns: DATA_NS.to_owned(),
            docs,
        }
    }

    fn update_op(&mut self) -> Op {
        let base = self.scope.ids.as_ref().map_or(0, |r| r.start);
        let id = base + self.rng.below(UPDATE_DOCS as u64) as i64;
        let ns = DATA_NS.to_owned();
        match self.rng.below(10) {
            0..=3 => Op::Inc {
                ns,
                ids: vec![id],
                by: 1 + self.rng.below(100) as i64,
            },
            4 => Op::Inc {
                ns,
                ids: (base..base + UPDATE_DOCS).collect(),
                by: 1,
            },
            5..=7 => Op::Set {
                ns,
                id,
                field: "v",
                value: format!("v{}", self.op_no),
            },
            _ => {
                let len = self.rng.below(3_000) as usize;
                Op::Set {
                    ns,
                    id,
                    field: "g",
                    value: pad(len, self.op_no),
                }
            }
        }
    }

    fn delete_op(&mut self) -> Op {
        let base = self.scope.ids.as_ref().map_or(0, |r| r.start);
        let id = base + self.rng.below(DELETE_KEYS) as i64;
        let ns = DATA_NS.to_owned();
        if self.acked.docs.contains_key(&(ns.clone(), id)) {
            return Op::Delete { ns, id };
        }
        let len = if self.rng.below(4) == 0 {
            1_000 + self.rng.below(2_000)
        } else {
            self.rng.below(200)
        } as usize;
        let doc = doc! {"_id": id, "gen": self.op_no as i64, "pad": pad(len, self.op_no)};
        Op::Insert {
            ns,
            docs: vec![doc],
        }
    }

    fn ddl_op(&mut self) -> Op {
        let all: Vec<String> = [DB, DB_B]
            .iter()
            .flat_map(|db| DDL_COLLS.iter().map(move |c| format!("{db}.{c}")))
            .collect();
        let existing: Vec<String> = self.acked.colls.iter().cloned().collect();
        let absent: Vec<String> = all
            .iter()
            .filter(|ns| !self.acked.colls.contains(*ns))
            .cloned()
            .collect();
        let in_b = existing
            .iter()
            .filter(|ns| ns.starts_with(&format!("{DB_B}.")))
            .count();
        match self.rng.below(20) {
            0..=2 if !absent.is_empty() => Op::Create {
                ns: self.rng.pick(&absent).clone(),
            },
            3..=4 if !existing.is_empty() => Op::Drop {
                ns: self.rng.pick(&existing).clone(),
            },
            5..=8 if !existing.is_empty() => {
                let from = self.rng.pick(&existing).clone();
                let onto_existing = self.rng.below(2) == 0 && existing.len() > 1;
                let targets: Vec<String> = if onto_existing {
                    existing.iter().filter(|ns| **ns != from).cloned().collect()
                } else {
                    absent.clone()
                };
                if targets.is_empty() {
                    return self.ddl_insert(&from);
                }
                let to = self.rng.pick(&targets).clone();
                let drop_target = self.acked.colls.contains(&to);
                Op::Rename {
                    from,
                    to,
                    drop_target,
                }
            }
            9..=10 if in_b >= 2 => Op::DropDatabase {
                db: DB_B.to_owned(),
            },
            11..=13 => {
                let in_db_b: Vec<String> = all
                    .iter()
                    .filter(|ns| ns.starts_with(&format!("{DB_B}.")))
                    .cloned()
                    .collect();
                let ns = self.rng.pick(&in_db_b).clone();
                self.ddl_insert(&ns)
            }
            _ => {
                let ns = self.rng.pick(&all).clone();
                self.ddl_insert(&ns)
            }
        }
    }

    fn ddl_insert(&mut self, ns: &str) -> Op {
        let count = 1 + self.rng.below(3);
        let docs = (0..count).map(|_| self.new_doc()).collect();
        Op::Insert {
            ns: ns.to_owned(),
            docs,
        }
    }
}

const UPDATE_DOCS: i64 = 8;
/// A bulk insert: 384 documents of 16 KiB, 6 MiB in one command.
const BULK_DOCS: usize = 384;
const BULK_DOC_BYTES: usize = 16 * 1024;
const DELETE_KEYS: u64 = 6;
const DDL_COLLS: [&str; 4] = ["a", "b", "c", "d"];

/// Whether `doc` has expired under the TTL workload's index (`exp` a date in the past):
/// the server's monitor may have deleted it at any moment, so the model ignores it. No
/// other workload writes `exp`.
fn expired(doc: &Document) -> bool {
    let now = DateTime::now().timestamp_millis();
    matches!(doc.get("exp"), Some(Bson::DateTime(at)) if at.timestamp_millis() <= now)
}

/// A string of `len` bytes that differs with `tag` (so every write changes content).
fn pad(len: usize, tag: u64) -> String {
    let mut s = format!("{tag}:");
    while s.len() < len {
        s.push(char::from(b'a' + (s.len() % 26) as u8));
    }
    s
}

/// Reads the whole database as a [`State`] (every database but admin, local and config),
/// running `validate` on each collection. Errors name what could not be read or what
/// `validate` found.
pub(crate) fn read_state(client: &mut Client) -> anyhow::Result<State> {
    let mut state = State::default();
    let dbs = client.names("admin", doc! {"listDatabases": 1, "nameOnly": true})?;
    for db in dbs {
        if ["admin", "local", "config"].contains(&db.as_str()) {
            continue;
        }
        for coll in client.names(&db, doc! {"listCollections": 1, "nameOnly": true})? {
            let ns = format!("{db}.{coll}");
            let report = client
                .raw_command(&db, doc! {"validate": &coll, "full": true})
                .map_err(|e| anyhow::anyhow!("validate {ns}: {e}"))?;
            if !report.get_bool("valid").unwrap_or(false) {
                anyhow::bail!("validate {ns}: {report}");
            }
            for doc in client.find_all(&db, &coll)? {
                let Ok(id) = doc.get_i64("_id") else {
                    anyhow::bail!(
                        "{ns} holds a document with a non-int64 _id: {}",
                        brief(&doc)
                    );
                };
                if state.docs.insert((ns.clone(), id), doc).is_some() {
                    anyhow::bail!("{ns} returned _id {id} twice");
                }
            }
            state.colls.insert(ns);
        }
    }
    Ok(state)
}

/// Checks `actual` against every client's acknowledged state (or that state with its
/// pending command applied). `Err` says what is wrong.
pub(crate) fn check(actual: &State, tracks: &[Track]) -> Result<(), String> {
    for ((ns, id), doc) in &actual.docs {
        if !tracks.iter().any(|t| t.scope.owns(*id)) {
            return Err(format!("never-sent document {ns} {id}: {}", brief(doc)));
        }
    }
    for track in tracks {
        let found = track.scope.view(actual);
        let acked = track.scope.view(&track.acked);
        if found == acked {
            continue;
        }
        if let Some(op) = &track.pending {
            let mut after = track.acked.clone();
            op.apply(&mut after);
            if found == track.scope.view(&after) {
                continue;
            }
            return Err(format!(
                "{} (pending: {}) neither acknowledged state nor with the pending command: {}",
                track.name,
                op.describe(),
                diff(&acked, &found)
            ));
        }
        return Err(format!(
            "{} (nothing pending) differs from the acknowledged state: {}",
            track.name,
            diff(&acked, &found)
        ));
    }
    Ok(())
}

/// What `found` lacks, adds and changes against `expected` (the first few of each).
fn diff(expected: &State, found: &State) -> String {
    let mut out = String::new();
    let missing: Vec<_> = expected.colls.difference(&found.colls).collect();
    let extra: Vec<_> = found.colls.difference(&expected.colls).collect();
    if !missing.is_empty() {
        let _ = write!(out, "collections missing {missing:?}; ");
    }
    if !extra.is_empty() {
        let _ = write!(out, "collections unexpected {extra:?}; ");
    }
    let mut shown = 0;
    for (key, doc) in &expected.docs {
        if shown >= 4 {
            break;
        }
        match found.docs.get(key) {
            None => {
                let _ = write!(out, "missing {} {}: {}; ", key.0, key.1, brief(doc));
                shown += 1;
            }
            Some(other) if !same(doc, other) => {
                let _ = write!(
                    out,
                    "changed {} {}: acknowledged {} found {}; ",
                    key.0,
                    key.1,
                    brief(doc),
                    brief(other)
                );
                shown += 1;
            }
            Some(_) => {}
        }
    }
    for (key, doc) in &found.docs {
        if shown >= 8 {
            break;
        }
        if !expected.docs.contains_key(key) {
            let _ = write!(out, "unexpected {} {}: {}; ", key.0, key.1, brief(doc));
            shown += 1;
        }
    }
    let missing = expected
        .docs
        .keys()
        .filter(|k| !found.docs.contains_key(*k))
        .count();
    let unexpected = found
        .docs
        .keys()
        .filter(|k| !expected.docs.contains_key(*k))
        .count();
    let changed = expected
        .docs
        .iter()
        .filter(|(k, d)| found.docs.get(*k).is_some_and(|f| !same(d, f)))
        .count();
    let _ = write!(
        out,
        "({} documents acknowledged, {} found: {missing} missing, {unexpected} unexpected, \
         {changed} changed)",
        expected.docs.len(),
        found.docs.len()
    );
    out
}

/// Equal field by field, in order, with types (`Document`'s `==` ignores order).
fn same(a: &Document, b: &Document) -> bool {
    a.len() == b.len() && a.iter().zip(b.iter()).all(|(x, y)| x == y)
}

/// A document for a message: long strings shortened.
fn brief(doc: &Document) -> String {
    let mut short = Document::new();
    for (key, value) in doc {
        let value = match value {
            Bson::String(s) if s.len() > 24 => {
                Bson::String(format!("{}…({} bytes)", &s[..s.len().min(12)], s.len()))
            }
            other => other.clone(),
        };
        short.insert(key.clone(), value);
    }
    short.to_string()
}
