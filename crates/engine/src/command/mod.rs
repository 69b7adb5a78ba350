//! The command dispatcher: command name to handler, the admin-only rule, and the `ok` field.
//!
//! To add a command: write `fn handler(engine: &Engine, request: &Request) ->
//! Result<Document, Error>` in the module for its family (`handshake`, `admin`,
//! `find`, `cursor`, ...) and add one [`Spec`] row to [`COMMANDS`]. The
//! handler returns the reply without `ok`; the dispatcher adds `ok: 1.0`, and
//! turns an `Err` into MongoDB's error shape. Names are matched exactly, as
//! mongod does; aliases (`isMaster`/`ismaster`) are separate rows.

mod access;
mod admin;
mod aggregate;
mod aggregate_output;
pub(crate) mod args;
mod authentication;
mod catalog_reads;
mod count;
pub(crate) mod cursor;
mod ddl;
mod delete;
pub(crate) mod explain;
mod find;
mod find_and_modify;
mod handshake;
mod indexes;
mod insert;
mod introspection;
mod maintenance;
mod parameters;
mod plan_cache;
pub(crate) mod point;
pub(crate) mod read_args;
mod read_concern;
pub(crate) mod registry;
mod repl_commands;
mod retry;
mod session_commands;
mod sort_merge;
mod stats;
mod status;
mod test_commands;
mod update;
mod user_admin;
mod write;
mod write_concern;

use crate::engine::{ConnectionContext, Engine};
use crate::error::{Error, ErrorCode};
pub(crate) use crate::fields::{flag, name_of};
use bson::{Document, RawDocument, RawDocumentBuf};

/// One command as a handler sees it.
pub(crate) struct Request<'a> {
    /// The database the command runs against.
    pub(crate) db: &'a str,
    /// The command name (the first field of the body).
    pub(crate) name: &'a str,
    /// The whole command document.
    pub(crate) body: &'a RawDocument,
    /// The connection it came from.
    pub(crate) ctx: &'a ConnectionContext,
    /// The body's fields, decoded once on first use (options are looked up many times).
    fields: std::cell::OnceCell<Vec<(&'a str, bson::raw::RawBsonRef<'a>)>>,
    /// Its `currentOp` entry while dispatch runs it (long work reports progress there).
    running: std::cell::OnceCell<std::sync::Arc<crate::operations::Running>>,
    /// Whether it runs on a replica-set member (dispatch sets it).
    replicated: std::cell::Cell<bool>,
    /// The `writeConcernError` its reply carries: a concern the set cannot satisfy.
    unsatisfied: std::cell::RefCell<Option<Document>>,
}

impl<'a> Request<'a> {
    /// The request as authorization reads it.
    pub(crate) fn asked(&self) -> crate::auth::Asked<'a> {
        crate::auth::Asked {
            db: self.db,
            name: self.name,
            body: self.body,
            session: &self.ctx.auth,
            client_address: &self.ctx.client_address,
        }
    }

    pub(crate) fn new(
        db: &'a str,
        name: &'a str,
        body: &'a RawDocument,
        ctx: &'a ConnectionContext,
    ) -> Self {
        Request {
            db,
            name,
            body,
            ctx,
            fields: std::cell::OnceCell::new(),
            running: std::cell::OnceCell::new(),
            replicated: std::cell::Cell::new(false),
            unsatisfied: std::cell::RefCell::new(None),
        }
    }

    /// Whether it runs on a replica-set member.
    pub(crate) fn replicated(&self) -> bool {
        self.replicated.get()
    }

    /// Notes the `writeConcernError` its reply is to carry (the write itself is applied).
    pub(crate) fn note_unsatisfied_write_concern(&self, error: Document) {
        *self.unsatisfied.borrow_mut() = Some(error);
    }

    /// The `writeConcernError` noted for its reply.
    pub(crate) fn unsatisfied_write_concern(&self) -> Option<Document> {
        self.unsatisfied.borrow().clone()
    }

    /// Its `currentOp` entry, when dispatch runs it.
    pub(crate) fn running(&self) -> Option<&std::sync::Arc<crate::operations::Running>> {
        self.running.get()
    }

    /// The body's field `key`: one decoding pass over the body for all lookups.
    pub(crate) fn field(&self, key: &str) -> Result<Option<bson::raw::RawBsonRef<'a>>, Error> {
        let body: &'a RawDocument = self.body;
        if self.fields.get().is_none() {
            let mut fields = Vec::new();
            for element in body.iter() {
                let (name, value) =
                    element.map_err(|e| Error::new(ErrorCode::InvalidBson, e.to_string()))?;
                fields.push((name.as_str(), value));
            }
            let _ = self.fields.set(fields);
        }
        let fields = self.fields.get().map_or(&[][..], Vec::as_slice);
        Ok(fields
            .iter()
            .find(|(name, _)| *name == key)
            .map(|(_, v)| *v))
    }
}

/// What a handler answers, without `ok` (dispatch appends it).
pub(crate) enum Reply {
    /// A reply built as a tree: most commands.
    Doc(Document),
    /// A reply already encoded: cursor batches, whose documents are stored bytes and
    /// would otherwise be decoded only to be encoded again.
    Raw(RawDocumentBuf),
}

impl From<Document> for Reply {
    fn from(document: Document) -> Reply {
        Reply::Doc(document)
    }
}

type Handler = fn(&Engine, &Request<'_>) -> Result<Reply, Error>;

/// Adapts a handler that answers with a tree to [`Handler`].
macro_rules! tree {
    ($handler:path) => {
        |engine: &Engine, request: &Request<'_>| $handler(engine, request).map(Reply::Doc)
    };
}

/// A row of the command table.
pub(crate) struct Spec {
    /// The exact command name.
    pub(crate) name: &'static str,
    /// The function that answers it.
    pub(crate) handler: Handler,
    /// Bounded, cheap work a server may run on its network thread.
    pub(crate) quick: bool,
    /// Refused outside the `admin` database, as mongod does.
    pub(crate) admin_only: bool,
}

const fn spec(name: &'static str, handler: Handler, quick: bool, admin_only: bool) -> Spec {
    Spec {
        name,
        handler,
        quick,
        admin_only,
    }
}

/// Every command the engine answers. Anything else is `CommandNotFound`.
const COMMANDS: &[Spec] = &[
    spec("hello", tree!(handshake::hello), true, false),
    spec("isMaster", tree!(handshake::hello), true, false),
    spec("ismaster", tree!(handshake::hello), true, false),
    spec("ping", tree!(handshake::ping), true, false),
    spec("buildInfo", tree!(handshake::build_info), true, false),
    spec("buildinfo", tree!(handshake::build_info), true, false),
    spec("whatsmyuri", tree!(handshake::whats_my_uri), true, false),
    spec(
        "connectionStatus",
        tree!(authentication::connection_status),
        false,
        false,
    ),
    spec("saslStart", tree!(authentication::sasl_start), false, false),
    spec(
        "saslContinue",
        tree!(authentication::sasl_continue),
        false,
        false,
    ),
    spec(
        "authenticate",
        tree!(authentication::authenticate),
        true,
        false,
    ),
    spec("logout", tree!(authentication::logout), true, false),
    spec("endSessions", tree!(handshake::end_sessions), true, false),
    spec(
        "startSession",
        tree!(session_commands::start_session),
        true,
        false,
    ),
    spec(
        "refreshSessions",
        tree!(session_commands::refresh_sessions),
        true,
        false,
    ),
    spec(
        "killSessions",
        tree!(session_commands::kill_sessions),
        true,
        false,
    ),
    spec(
        "killAllSessionsByPattern",
        tree!(session_commands::kill_all_sessions_by_pattern),
        true,
        false,
    ),
    spec(
        "commitTransaction",
        tree!(handshake::outside_transaction),
        true,
        true,
    ),
    spec(
        "abortTransaction",
        tree!(handshake::outside_transaction),
        true,
        true,
    ),
    spec(
        "killAllSessions",
        tree!(handshake::end_sessions),
        true,
        false,
    ),
    spec("hostInfo", tree!(admin::host_info), true, false),
    spec(
        "getCmdLineOpts",
        tree!(admin::get_cmd_line_opts),
        true,
        true,
    ),
    spec("getParameter", tree!(parameters::get_parameter), true, true),
    spec("setParameter", tree!(parameters::set_parameter), true, true),
    spec("getLog", tree!(admin::get_log), true, true),
    spec("currentOp", tree!(admin::current_op), true, true),
    spec("killOp", tree!(admin::kill_op), true, true),
    spec(
        "planCacheClear",
        tree!(plan_cache::plan_cache_clear),
        true,
        false,
    ),
    spec("serverStatus", status::server_status, true, false),
    spec(
        "replSetGetStatus",
        tree!(repl_commands::get_status),
        true,
        true,
    ),
    spec(
        "replSetGetConfig",
        tree!(repl_commands::get_config),
        true,
        true,
    ),
    spec(
        "replSetInitiate",
        tree!(repl_commands::initiate),
        true,
        true,
    ),
    spec(
        "replSetReconfig",
        tree!(repl_commands::reconfig),
        false,
        true,
    ),
    spec(
        "replSetStepDown",
        tree!(repl_commands::step_down),
        true,
        true,
    ),
    spec("replSetFreeze", tree!(repl_commands::freeze), true, true),
    spec(
        "listCommands",
        tree!(introspection::list_commands),
        true,
        false,
    ),
    spec("usersInfo", tree!(user_admin::users_info), false, false),
    spec("createUser", tree!(user_admin::create_user), false, false),
    spec("updateUser", tree!(user_admin::update_user), false, false),
    spec("dropUser", tree!(user_admin::drop_user), false, false),
    spec(
        "dropAllUsersFromDatabase",
        tree!(user_admin::drop_all_users),
        false,
        false,
    ),
    spec(
        "grantRolesToUser",
        tree!(user_admin::change_user_roles),
        false,
        false,
    ),
    spec(
        "revokeRolesFromUser",
        tree!(user_admin::change_user_roles),
        false,
        false,
    ),
    spec("createRole", tree!(user_admin::create_role), false, false),
    spec("dropRole", tree!(user_admin::drop_role), false, false),
    spec("rolesInfo", tree!(user_admin::roles_info), false, false),
    spec(
        "grantPrivilegesToRole",
        tree!(user_admin::grant_privileges),
        false,
        false,
    ),
    spec(
        "invalidateUserCache",
        tree!(user_admin::invalidate_user_cache),
        true,
        true,
    ),
    spec(
        "updateRole",
        tree!(user_admin::not_implemented),
        true,
        false,
    ),
    spec(
        "grantRolesToRole",
        tree!(user_admin::not_implemented),
        true,
        false,
    ),
    spec(
        "revokeRolesFromRole",
        tree!(user_admin::not_implemented),
        true,
        false,
    ),
    spec(
        "revokePrivilegesFromRole",
        tree!(user_admin::not_implemented),
        true,
        false,
    ),
    spec(
        "dropAllRolesFromDatabase",
        tree!(user_admin::not_implemented),
        true,
        false,
    ),
    spec("fsync", tree!(maintenance::fsync), false, true),
    spec("fsyncUnlock", tree!(maintenance::fsync_unlock), true, true),
    spec("shutdown", tree!(maintenance::shutdown), false, true),
    spec("logRotate", tree!(maintenance::log_rotate), true, true),
    spec("top", tree!(maintenance::top), true, true),
    spec("dbHash", tree!(maintenance::db_hash), false, false),
    spec("dbhash", tree!(maintenance::db_hash), false, false),
    spec("compact", tree!(maintenance::compact), false, false),
    spec("profile", tree!(maintenance::profile), true, false),
    spec("find", find::find, false, false),
    spec("explain", tree!(explain::explain), false, false),
    spec("getMore", cursor::get_more, false, false),
    spec("killCursors", tree!(cursor::kill_cursors), false, false),
    spec("count", tree!(count::count), false, false),
    spec("distinct", tree!(count::distinct), false, false),
    spec("aggregate", aggregate::aggregate, false, false),
    spec(
        "listCollections",
        catalog_reads::list_collections,
        false,
        false,
    ),
    spec("listIndexes", catalog_reads::list_indexes, false, false),
    spec("listDatabases", tree!(stats::list_databases), false, true),
    spec("insert", tree!(insert::insert), false, false),
    spec("update", tree!(update::update), false, false),
    spec("delete", tree!(delete::delete), false, false),
    spec(
        "findAndModify",
        tree!(find_and_modify::find_and_modify),
        false,
        false,
    ),
    spec(
        "findandmodify",
        tree!(find_and_modify::find_and_modify),
        false,
        false,
    ),
    spec("create", tree!(ddl::create), false, false),
    spec("drop", tree!(ddl::drop), false, false),
    spec("dropDatabase", tree!(ddl::drop_database), false, false),
    spec(
        "renameCollection",
        tree!(ddl::rename_collection),
        false,
        true,
    ),
    spec(
        "createIndexes",
        tree!(indexes::create_indexes),
        false,
        false,
    ),
    spec("dropIndexes", tree!(indexes::drop_indexes), false, false),
    spec("collMod", tree!(indexes::coll_mod), false, false),
    spec("deleteIndexes", tree!(indexes::drop_indexes), false, false),
    spec("collStats", tree!(stats::coll_stats), false, false),
    spec("dbStats", tree!(stats::db_stats), false, false),
    spec(
        "configureFailPoint",
        tree!(test_commands::configure_fail_point),
        true,
        true,
    ),
    spec("validate", tree!(stats::validate), false, false),
];

/// Every registered command name (the authorization table's test walks them).
#[cfg(test)]
pub(crate) fn names() -> impl Iterator<Item = &'static str> {
    COMMANDS.iter().map(|spec| spec.name)
}

/// The row for `name`, if the engine knows it.
pub(crate) fn find(name: &str) -> Option<&'static Spec> {
    COMMANDS.iter().find(|spec| spec.name == name)
}

/// Whether `spec` exists on this engine (test commands only when enabled).
pub(crate) fn available(engine: &Engine, spec: &Spec) -> bool {
    engine.test_commands || !test_commands::NAMES.contains(&spec.name)
}

/// What the `failCommand` fail point does to `request` before it runs: waits, closes
/// the connection, or fails it (the error), or lets it run and returns what its reply
/// then carries (`writeConcernError`, and `errorLabels` when given).
fn fail_point(engine: &Engine, request: &Request<'_>) -> Result<Option<Document>, Error> {
    if !engine.test_commands || !engine.fail_points.is_on() {
        return Ok(None);
    }
    let coll = match request.body.get(request.name) {
        Ok(Some(bson::raw::RawBsonRef::String(coll))) => coll,
        _ => "$cmd",
    };
    let ns = format!("{}.{coll}", request.db);
    let app_name = request.ctx.client.app_name();
    let mut random = [0u8; 8];
    let random = match engine.host.fill_random(&mut random) {
        Ok(()) => (u64::from_le_bytes(random) >> 11) as f64 / (1u64 << 53) as f64,
        Err(_) => 0.0,
    };
    let Some(action) = engine
        .fail_points
        .check(request.name, &ns, app_name.as_deref(), random)
    else {
        return Ok(None);
    };
    if let Some(ms) = action.block_ms {
        std::thread::sleep(std::time::Duration::from_millis(ms));
    }
    if action.close_connection {
        return Err(crate::failpoint::close());
    }
    if let Some((code, labels)) = action.error {
        return Err(crate::failpoint::error(code, labels));
    }
    Ok(action.write_concern_error.map(|error| {
        let mut added = bson::doc! { "writeConcernError": error };
        if let Some(labels) = action.error_labels {
            added.insert("errorLabels", labels);
        }
        added
    }))
}

/// Runs `request` through the table and shapes the reply.
pub(crate) fn dispatch(engine: &Engine, request: &Request<'_>) -> Result<RawDocumentBuf, Error> {
    if !(request.db == user_admin::EXTERNAL_DB && external_command(request.name)) {
        check_database_name(request.db)?;
    }
    if let Some(bson::raw::RawBsonRef::Document(lsid)) = request.field("lsid")? {
        engine.sessions.touch(lsid, engine.host.now_millis());
    }
    let Some(spec) = find(request.name).filter(|spec| available(engine, spec)) else {
        let message = format!("no such command: '{}'", request.name);
        return Err(Error::new(ErrorCode::CommandNotFound, message));
    };
    if spec.admin_only && request.db != "admin" {
        let message = format!("{} may only be run against the admin database.", spec.name);
        return Err(Error::new(ErrorCode::Unauthorized, message));
    }
    request.replicated.set(engine.replica_set().is_some());
    // Authorization before anything else looks at the request (see `auth::authorize`).
    crate::auth::authorize::check(&engine.directory(), &request.asked())?;
    let fail_point = fail_point(engine, request)?;
    crate::sessions::check_operation_session_info(
        request.name,
        engine.replica_set().is_some(),
        request.field("lsid")?.is_some(),
        request.field("txnNumber")?,
        request.field("autocommit")?,
        request.field("startTransaction")?,
    )?;
    read_concern::check(engine, request)?;
    count_operation(engine, request);
    // maxTimeMS bounds every command: its loops stop with 50 once it is spent.
    // A getMore's maxTimeMS is how long an awaitData cursor waits, not a deadline.
    let time_limit = match request.name {
        "getMore" => None,
        _ => read_args::max_time_ms(request)?,
    };
    let deadline = time_limit.map(|ms| {
        (
            std::sync::Arc::clone(&engine.host),
            engine.host.now_millis() + ms,
        )
    });
    let started = crate::operations::Started {
        db: request.db,
        name: request.name,
        body: request.body,
        connection_id: request.ctx.connection_id,
        client: &request.ctx.client_address,
    };
    let operation = engine.operations.begin(&started, deadline);
    let _ = request
        .running
        .set(std::sync::Arc::clone(operation.running()));
    let mut reply = (spec.handler)(engine, request);
    if let (Some(added), Ok(Reply::Doc(reply))) = (fail_point, &mut reply) {
        reply.extend(added);
    }
    if let (Some(error), Ok(reply)) = (request.unsatisfied_write_concern(), &mut reply) {
        add_write_concern_error(reply, error);
    }
    profile(engine, request, operation.running(), &reply);
    drop(operation);
    count_outcome(engine, request, &reply);
    match reply? {
        Reply::Doc(mut reply) => {
            reply.insert("ok", 1.0);
            RawDocumentBuf::try_from(&reply)
                .map_err(|error| Error::new(ErrorCode::InternalError, error.to_string()))
        }
        Reply::Raw(mut reply) => {
            reply.append(bson::raw::cstr!("ok"), 1.0);
            Ok(reply)
        }
    }
}

/// Adds `writeConcernError` to a reply that has none (a fail point's comes first).
fn add_write_concern_error(reply: &mut Reply, error: Document) {
    match reply {
        Reply::Doc(reply) => {
            if !reply.contains_key("writeConcernError") {
                reply.insert("writeConcernError", error);
            }
        }
        Reply::Raw(reply) => {
            if !matches!(reply.get("writeConcernError"), Ok(Some(_)))
                && let Ok(error) = RawDocumentBuf::try_from(&error)
            {
                reply.append(bson::raw::cstr!("writeConcernError"), error);
            }
        }
    }
}

/// Counts a command in serverStatus's `opcounters` before it runs, as mongod does (the
/// rules are in [`crate::stats`]).
fn count_operation(engine: &Engine, request: &Request<'_>) {
    use crate::stats::Counter;
    use bson::raw::RawBsonRef;
    let counter = crate::stats::op_counter(request.name);
    let statements = match counter {
        Counter::OpInsert => "documents",
        Counter::OpUpdate => "updates",
        Counter::OpDelete => "deletes",
        _ => "",
    };
    let items = match request.body.get(statements) {
        Ok(Some(RawBsonRef::Array(items))) => items.into_iter().count() as u64,
        _ => 0,
    };
    let value = if statements.is_empty() { 1 } else { items };
    engine.stats().add(counter, value);
}

/// Hands a finished command to the slow operation log and to the profiler (which decides
/// whether its database profiles it); the profiler's own failures do not fail the
/// command, which has run.
fn profile(
    engine: &Engine,
    request: &Request<'_>,
    running: &crate::operations::Running,
    reply: &Result<Reply, Error>,
) {
    let (nreturned, response_length) = match reply {
        Ok(reply) if matches!(request.name, "find" | "getMore" | "aggregate") => {
            let length = match reply {
                Reply::Raw(raw) => Some(raw.as_bytes().len() as u64),
                Reply::Doc(_) => None,
            };
            (Some(batch_len(reply)), length)
        }
        _ => (None, None),
    };
    let finished = crate::profile::Finished {
        db: request.db,
        running,
        millis: running.millis(),
        nreturned,
        response_length,
        user: request
            .ctx
            .auth
            .user()
            .map(|(user, db)| format!("{user}@{db}"))
            .unwrap_or_default(),
    };
    crate::profile::log_slow(engine, &finished);
    if let Err(error) = crate::profile::record(engine, &finished) {
        let _ = error;
    }
}

/// Counts what a command did in serverStatus's `metrics.document`.
fn count_outcome(engine: &Engine, request: &Request<'_>, reply: &Result<Reply, Error>) {
    use crate::stats::Counter;
    let stats = engine.stats();
    let counter = crate::stats::op_counter(request.name);
    let reply = match reply {
        Ok(reply) => reply,
        Err(error) => {
            // Counted as a user assertion by the engine's entry point.
            if error.code().code() == 50 {
                stats.add(Counter::MaxTimeExpired, 1);
            }
            return;
        }
    };
    let number = |key: &str| match reply {
        Reply::Doc(doc) => match doc.get(key) {
            Some(bson::Bson::Int32(n)) => u64::try_from(*n).unwrap_or(0),
            Some(bson::Bson::Int64(n)) => u64::try_from(*n).unwrap_or(0),
            _ => 0,
        },
        Reply::Raw(_) => 0,
    };
    match counter {
        Counter::OpInsert => stats.add(Counter::DocumentInserted, number("n")),
        Counter::OpUpdate => stats.add(Counter::DocumentUpdated, number("nModified")),
        Counter::OpDelete => stats.add(Counter::DocumentDeleted, number("n")),
        _ => {}
    }
    if matches!(request.name, "find" | "getMore" | "aggregate") {
        stats.add(Counter::DocumentReturned, batch_len(reply));
    }
}

/// The documents in a cursor reply's batch (their lengths are skipped, not decoded).
fn batch_len(reply: &Reply) -> u64 {
    let batch = |cursor: &RawDocument| {
        ["firstBatch", "nextBatch"]
            .iter()
            .find_map(|key| cursor.get_array(key).ok())
            .map_or(0, |batch| elements(batch.as_bytes()))
    };
    match reply {
        Reply::Raw(raw) => raw.get_document("cursor").map_or(0, batch),
        Reply::Doc(doc) => doc
            .get_document("cursor")
            .ok()
            .and_then(|cursor| RawDocumentBuf::try_from(cursor).ok())
            .map_or(0, |cursor| batch(&cursor)),
    }
}

/// The elements of one BSON document or array's bytes, each skipped by its length (no
/// key is checked as UTF-8, no value decoded); bson's count where an element is of a type
/// the skip does not know.
fn elements(bytes: &[u8]) -> u64 {
    let end = bytes.len().saturating_sub(1);
    let (mut count, mut at) = (0, 4);
    while at < end {
        match query::element_span(bytes, at) {
            Some((_, next)) if next > at => {
                count += 1;
                at = next;
            }
            _ => {
                return RawDocument::from_bytes(bytes)
                    .map_or(count, |doc| doc.iter().count() as u64);
            }
        }
    }
    count
}

/// Runs an OP_QUERY: only `hello`/`isMaster` on `<db>.$cmd`, the way drivers open a
/// connection; anything else gets MongoDB's `UnsupportedOpQueryCommand`.
pub(crate) fn run_legacy(
    engine: &Engine,
    query: &wire::OpQuery,
    ctx: &ConnectionContext,
) -> Result<RawDocumentBuf, Error> {
    if query.collection() != "$cmd" {
        let message = format!(
            "Unsupported OP_QUERY on {}: legacy queries were removed; use OP_MSG find",
            query.full_collection_name
        );
        return Err(Error::new(ErrorCode::UnsupportedOpQueryCommand, message));
    }
    // Old drivers wrap the command as {$query: {...}, $readPreference: ...}.
    let body = match query.query.get_document("$query") {
        Ok(inner) => inner,
        Err(_) => &*query.query,
    };
    let name = name_of(body)?;
    if !matches!(name, "hello" | "isMaster" | "ismaster") {
        let message = format!(
            "Unsupported OP_QUERY command: {name}. The client driver may require an upgrade. \
             For more details see https://dochub.mongodb.org/core/legacy-opcode-removal"
        );
        return Err(Error::new(ErrorCode::UnsupportedOpQueryCommand, message));
    }
    dispatch(engine, &Request::new(query.database(), name, body, ctx))
}

/// The commands `$external` (the users authenticated outside, MONGODB-X509) takes: it
/// holds users, never collections.
fn external_command(name: &str) -> bool {
    matches!(
        name,
        "authenticate"
            | "logout"
            | "createUser"
            | "updateUser"
            | "dropUser"
            | "dropAllUsersFromDatabase"
            | "usersInfo"
            | "grantRolesToUser"
            | "revokeRolesFromUser"
            | "ping"
            | "hello"
            | "isMaster"
            | "ismaster"
            | "connectionStatus"
    )
}

pub(crate) fn check_database_name(db: &str) -> Result<(), Error> {
    let bad = db.is_empty()
        || db.len() > crate::limits::DATABASE_NAME_LEN_MAX
        || db.contains(['/', '\\', '.', ' ', '"', '$', '\0']);
    if bad {
        let message = format!("Invalid database name: '{db}'");
        return Err(Error::new(ErrorCode::InvalidNamespace, message));
    }
    Ok(())
}

#[cfg(test)]
mod read_tests;
#[cfg(test)]
mod tests;
