//! The write commands' side of retryable writes ([`crate::repl::retryable`]): which
//! statement ids a command's statements have, whether each already ran, and the oplog
//! context each is written under.
//!
//! Only on a replica-set member, and only for a command with `lsid` and `txnNumber`
//! (dispatch has refused `txnNumber` everywhere else).

use super::Request;
use crate::engine::Engine;
use crate::error::{Error, ErrorCode};
use crate::repl::retryable::Statements;
use crate::store::Writer;
use crate::store::oplog::Context;
use bson::raw::RawBsonRef;
use bson::{Bson, Document};

/// Statement ids: `stmtIds` as given, or `stmtId` (default 0) plus the position.
enum StmtIds {
    Listed(Vec<i32>),
    From(i32),
}

/// A retryable write command under way.
pub(super) struct Retry {
    statements: Statements,
    ids: StmtIds,
    /// The statement ids skipped because they had run (`retriedStmtIds`).
    retried: Vec<i32>,
}

fn wrong_type(field: &str, expected: &str) -> Error {
    Error::new(
        ErrorCode::TypeMismatch,
        format!("BSON field '{field}' is the wrong type, expected type '{expected}'"),
    )
}

impl Retry {
    /// The command's retryable-write state, read in `writer`'s transaction; `None` when
    /// it is not a retryable write.
    pub(super) fn begin(
        engine: &Engine,
        request: &Request<'_>,
        writer: &mut Writer<'_>,
    ) -> Result<Option<Retry>, Error> {
        if engine.replica_set().is_none() {
            return Ok(None);
        }
        let txn_number = match request.field("txnNumber")? {
            None => return Ok(None),
            Some(RawBsonRef::Int64(n)) => n,
            Some(_) => return Err(wrong_type("txnNumber", "long")),
        };
        let Some(RawBsonRef::Document(lsid)) = request.field("lsid")? else {
            return Ok(None);
        };
        let ids = match (request.field("stmtIds")?, request.field("stmtId")?) {
            (Some(RawBsonRef::Array(ids)), _) => {
                let mut listed = Vec::new();
                for id in ids {
                    match id {
                        Ok(RawBsonRef::Int32(id)) => listed.push(id),
                        _ => return Err(wrong_type("stmtIds", "int")),
                    }
                }
                StmtIds::Listed(listed)
            }
            (Some(_), _) => return Err(wrong_type("stmtIds", "array")),
            (None, Some(RawBsonRef::Int32(first))) => StmtIds::From(first),
            (None, Some(_)) => return Err(wrong_type("stmtId", "int")),
            (None, None) => StmtIds::From(0),
        };
        let session = crate::sessions::owned_session_id(lsid);
        let statements = Statements::begin(writer, session, txn_number)?;
        Ok(Some(Retry {
            statements,
            ids,
            retried: Vec::new(),
        }))
    }

    /// The id of the statement at `index`.
    pub(super) fn stmt_id(&self, index: usize) -> i32 {
        match &self.ids {
            StmtIds::Listed(ids) => ids.get(index).copied().unwrap_or(i32::MAX),
            StmtIds::From(first) => first.saturating_add(i32::try_from(index).unwrap_or(i32::MAX)),
        }
    }

    /// Whether the statement at `index` ran before: then it is skipped, and
    /// `Some(recorded)` is what it answered (an empty document when only that it ran).
    /// Otherwise the writer is set to write the statement's oplog entries.
    pub(super) fn previous(&mut self, index: usize, writer: &mut Writer<'_>) -> Option<Document> {
        let stmt_id = self.stmt_id(index);
        if self.statements.executed(stmt_id) {
            self.retried.push(stmt_id);
            return Some(self.statements.result(stmt_id).cloned().unwrap_or_default());
        }
        writer.set_oplog_context(Context {
            session: Some(self.statements.oplog_session()),
            stmt_id: Some(stmt_id),
            ..Context::default()
        });
        None
    }

    /// Records that the statement at `index` ran, with what a retry answers.
    pub(super) fn ran(&mut self, index: usize, result: Option<Document>) {
        let stmt_id = self.stmt_id(index);
        self.statements.record(stmt_id, result);
    }

    /// Writes the session's record in `writer`'s transaction (before the commit), after
    /// the `onPrimaryTransactionalWrite` fail point had its say (an error here commits
    /// nothing).
    pub(super) fn save(self, engine: &Engine, writer: &mut Writer<'_>) -> Result<Saved, Error> {
        let mut close_after_commit = false;
        if engine.test_commands
            && let Some(action) = engine.fail_points.transactional_write(0.0)
        {
            if let Some(code) = action.fail_before_commit {
                return Err(crate::failpoint::error(code, None));
            }
            close_after_commit = action.close_connection;
        }
        if let Some(member) = engine.replica_set() {
            let store = engine.store();
            let op_time = member.op_time(&store);
            let wall = crate::repl::Member::last_write_date(&store);
            self.statements.save(writer, op_time, wall)?;
        }
        let retried = (!self.retried.is_empty())
            .then(|| Bson::Array(self.retried.iter().map(|&id| Bson::Int32(id)).collect()));
        Ok(Saved {
            retried,
            close_after_commit,
        })
    }
}

/// What a saved retryable write tells its command.
pub(super) struct Saved {
    /// `retriedStmtIds`, when a statement was skipped.
    pub(super) retried: Option<Bson>,
    /// The fail point drops the connection once the write has committed.
    close_after_commit: bool,
}

impl Saved {
    /// After the commit: the fail point's dropped connection, if it asked for one.
    pub(super) fn after_commit(&self) -> Result<(), Error> {
        if self.close_after_commit {
            return Err(crate::failpoint::close());
        }
        Ok(())
    }
}

/// After the commit of a command that may be a retryable write.
pub(super) fn after_commit(saved: Option<&Saved>) -> Result<Option<Bson>, Error> {
    match saved {
        Some(saved) => {
            saved.after_commit()?;
            Ok(saved.retried.clone())
        }
        None => Ok(None),
    }
}

/// The refusal of a multi-document write in a retryable write, as mongod words it.
pub(super) fn refuse_multi(field: &str) -> Error {
    Error::new(
        ErrorCode::InvalidOptions,
        format!("Cannot use (or request) retryable writes with {field}"),
    )
}
