//! Retryable writes: what a session's write statements did, so that a driver's retry of a
//! statement that already ran answers its first result instead of running it again.
//!
//! A session's record is one document of `config.transactions`, in mongod's shape
//! (`_id: {id, uid}`, `txnNum`, `lastWriteOpTime: {ts, t}`, `lastWriteDate`) with two
//! fields of ours: `executed`, the statement ids that ran under `txnNum` as ranges
//! `[first, last]`, and `results`, what a retry of a statement answers where that is more
//! than "it ran" (an upsert's `_id`, an update's counts, findAndModify's reply).
//!
//! Invariants:
//! - The record is written by the same write transaction as the statements it records
//!   ([`Statements::save`] before the commit), so kill -9 at any instant leaves both or
//!   neither: a statement is never recorded as run unless its change is durable, and
//!   never run twice once it is.
//! - `txnNum` never goes backwards: a write with a lower number is 225
//!   TransactionTooOld; a higher one starts the record afresh.
//! - Every writer holds the store's write gate, so the record read at the start of a
//!   command is the one its commit replaces: two commands of one session cannot
//!   interleave their statements.
//! - `config.transactions` is not in the oplog (`storage`'s `oplog::records`): as on
//!   mongod, each member derives it, and no change stream shows it.

use crate::error::{Error, ErrorCode};
use crate::store::{Namespace, StoreError, Writer};
use bson::raw::RawBsonRef;
use bson::{Bson, DateTime, Document, RawDocument, RawDocumentBuf, doc};

/// `config.transactions`.
pub(crate) fn namespace() -> Namespace {
    Namespace::new("config", "transactions")
}

fn internal(error: impl std::fmt::Display) -> Error {
    Error::new(ErrorCode::InternalError, error.to_string())
}

fn from_store(error: StoreError) -> Error {
    Error::from(error)
}

/// One session's retryable-write record for a command with `txnNumber`.
#[derive(Debug)]
pub(crate) struct Statements {
    /// The session's id as the record and the oplog carry it (`{id, uid}`).
    session: RawDocumentBuf,
    txn_number: i64,
    /// Statement ids run under `txn_number`, as sorted, disjoint ranges.
    executed: Vec<(i32, i32)>,
    /// What a retry answers, by statement id, where it is more than "it ran".
    results: Vec<(i32, Document)>,
    /// Whether a statement ran since the record was read.
    changed: bool,
}

impl Statements {
    /// Reads the record of session `session` (`{id, uid}`) for a command numbered
    /// `txn_number`: 225 TransactionTooOld when the session has run a higher number.
    pub(crate) fn begin(
        writer: &mut Writer<'_>,
        session: RawDocumentBuf,
        txn_number: i64,
    ) -> Result<Statements, Error> {
        let ns = namespace();
        let found = writer
            .find_id(&ns, RawBsonRef::Document(&session))
            .map_err(from_store)?;
        let mut statements = Statements {
            session,
            txn_number,
            executed: Vec::new(),
            results: Vec::new(),
            changed: false,
        };
        let Some((_, record)) = found else {
            return Ok(statements);
        };
        let stored = record.get_i64("txnNum").unwrap_or(i64::MIN);
        if stored > txn_number {
            let message = format!(
                "Retryable write with txnNumber {txn_number} is prohibited on session {} \
                 because a newer retryable write with txnNumber {stored} has already started \
                 on this session.",
                session_text(&statements.session)
            );
            return Err(Error::new(
                ErrorCode::Other(225, "TransactionTooOld"),
                message,
            ));
        }
        if stored == txn_number {
            statements.executed = read_ranges(&record)?;
            statements.results = read_results(&record)?;
        }
        Ok(statements)
    }

    /// The session fields a statement's oplog entry carries.
    pub(crate) fn oplog_session(&self) -> (RawDocumentBuf, i64) {
        (self.session.clone(), self.txn_number)
    }

    /// Whether statement `stmt_id` already ran under this `txnNumber`.
    pub(crate) fn executed(&self, stmt_id: i32) -> bool {
        self.executed
            .iter()
            .any(|&(first, last)| first <= stmt_id && stmt_id <= last)
    }

    /// What a retry of statement `stmt_id` answers, when it recorded more than "it ran".
    pub(crate) fn result(&self, stmt_id: i32) -> Option<&Document> {
        self.results
            .iter()
            .find(|(id, _)| *id == stmt_id)
            .map(|(_, result)| result)
    }

    /// Records that statement `stmt_id` ran, with what a retry answers (`None`: only
    /// that it ran).
    pub(crate) fn record(&mut self, stmt_id: i32, result: Option<Document>) {
        self.changed = true;
        match self.executed.last_mut() {
            Some((_, last)) if last.checked_add(1) == Some(stmt_id) => *last = stmt_id,
            _ => {
                self.executed.push((stmt_id, stmt_id));
                self.executed.sort_unstable();
                self.executed = merge(std::mem::take(&mut self.executed));
            }
        }
        if let Some(result) = result {
            self.results.push((stmt_id, result));
        }
    }

    /// Writes the record in `writer`'s transaction (before its commit), when a statement
    /// ran; `op_time` is the last write's `{ts, t}`.
    pub(crate) fn save(
        self,
        writer: &mut Writer<'_>,
        op_time: Document,
        wall: DateTime,
    ) -> Result<(), Error> {
        if !self.changed {
            return Ok(());
        }
        let executed: Vec<Bson> = self
            .executed
            .iter()
            .map(|&(first, last)| Bson::Array(vec![Bson::Int32(first), Bson::Int32(last)]))
            .collect();
        let results: Vec<Bson> = self
            .results
            .iter()
            .map(|(id, result)| Bson::Document(doc! { "s": *id, "r": result.clone() }))
            .collect();
        let session = Document::try_from(self.session.as_ref()).map_err(internal)?;
        let record = doc! {
            "_id": session,
            "txnNum": self.txn_number,
            "lastWriteOpTime": op_time,
            "lastWriteDate": wall,
            "executed": executed,
            "results": results,
        };
        let record = RawDocumentBuf::try_from(&record).map_err(internal)?;
        super::put_by_id(writer, &namespace(), &record)
    }
}

/// Sorted ranges with the touching or overlapping ones joined.
fn merge(ranges: Vec<(i32, i32)>) -> Vec<(i32, i32)> {
    let mut out: Vec<(i32, i32)> = Vec::with_capacity(ranges.len());
    for (first, last) in ranges {
        match out.last_mut() {
            Some((_, end)) if i64::from(first) <= i64::from(*end) + 1 => {
                *end = (*end).max(last);
            }
            _ => out.push((first, last)),
        }
    }
    out
}

fn corrupt(what: &str) -> Error {
    internal(format!(
        "config.transactions: a record's {what} is malformed"
    ))
}

fn read_ranges(record: &RawDocument) -> Result<Vec<(i32, i32)>, Error> {
    let Ok(ranges) = record.get_array("executed") else {
        return Ok(Vec::new());
    };
    let mut out = Vec::new();
    for range in ranges {
        let Ok(RawBsonRef::Array(range)) = range else {
            return Err(corrupt("executed"));
        };
        let mut bounds = range.into_iter().map(|b| b.ok().and_then(|b| b.as_i32()));
        match (bounds.next().flatten(), bounds.next().flatten()) {
            (Some(first), Some(last)) if first <= last => out.push((first, last)),
            _ => return Err(corrupt("executed")),
        }
    }
    Ok(merge(out))
}

fn read_results(record: &RawDocument) -> Result<Vec<(i32, Document)>, Error> {
    let Ok(results) = record.get_array("results") else {
        return Ok(Vec::new());
    };
    let mut out = Vec::new();
    for result in results {
        let Ok(RawBsonRef::Document(result)) = result else {
            return Err(corrupt("results"));
        };
        let id = result.get_i32("s").map_err(|_| corrupt("results"))?;
        let value = result.get_document("r").map_err(|_| corrupt("results"))?;
        out.push((id, Document::try_from(value).map_err(internal)?));
    }
    Ok(out)
}

/// A session id for messages: its UUID in mongod's hex form, when it has one.
fn session_text(session: &RawDocument) -> String {
    match session.get("id") {
        Ok(Some(RawBsonRef::Binary(binary))) => {
            let hex: String = binary.bytes.iter().map(|b| format!("{b:02x}")).collect();
            format!("{{ id: UUID(\"{hex}\") }}")
        }
        _ => "{}".to_owned(),
    }
}

/// The errors a retryable write is retried after (the retryable-writes specification's
/// list, which mongod labels `RetryableWriteError`).
const RETRYABLE_CODES: &[i32] = &[
    6, 7, 89, 91, 189, 262, 9001, 10107, 11600, 11602, 13435, 13436,
];

/// The label drivers retry a write on.
pub(crate) const RETRYABLE_WRITE_ERROR: &str = "RetryableWriteError";

/// Whether command `cmd` is a retryable write (`txnNumber` without `autocommit`).
fn is_retryable_write(name: &str, cmd: &RawDocument) -> bool {
    matches!(
        name,
        "insert" | "update" | "delete" | "findAndModify" | "findandmodify"
    ) && matches!(cmd.get("txnNumber"), Ok(Some(_)))
        && matches!(cmd.get("autocommit"), Ok(None))
}

/// Adds `RetryableWriteError` to the reply of a retryable write that failed with a
/// retryable error, or whose `writeConcernError` is one, as mongod labels them; a
/// reply that already names its labels (a fail point's `errorLabels`) is left as it is.
pub(crate) fn label(name: &str, cmd: &RawDocument, reply: &mut RawDocumentBuf) {
    if !is_retryable_write(name, cmd) || matches!(reply.get("errorLabels"), Ok(Some(_))) {
        return;
    }
    let failed = reply.get_f64("ok").is_ok_and(|ok| ok == 0.0);
    let code = if failed {
        reply.get_i32("code").ok()
    } else {
        reply
            .get_document("writeConcernError")
            .ok()
            .and_then(|error| error.get_i32("code").ok())
    };
    if code.is_some_and(|code| RETRYABLE_CODES.contains(&code)) {
        let mut labels = bson::RawArrayBuf::new();
        labels.push(RETRYABLE_WRITE_ERROR);
        reply.append(bson::raw::cstr!("errorLabels"), labels);
    }
}

#[cfg(test)]
mod tests {
    use super::merge;

    #[test]
    fn ranges_merge_when_they_touch_or_overlap() {
        assert_eq!(merge(vec![(0, 2), (3, 5), (7, 7)]), vec![(0, 5), (7, 7)]);
        assert_eq!(merge(vec![(0, 4), (2, 3), (5, 6)]), vec![(0, 6)]);
        assert_eq!(
            merge(vec![(i32::MIN, i32::MAX - 1), (i32::MAX, i32::MAX)]),
            vec![(i32::MIN, i32::MAX)]
        );
        assert!(merge(Vec::new()).is_empty());
    }
}
