//! Replies that stream or wait: OP_MSG's exhaust protocol (`exhaustAllowed` on a request,
//! `moreToCome` on its replies) for `getMore` and the awaitable `hello`, and the awaitable
//! `hello`'s wait, as mongod 4.4+ answers them.
//!
//! The engine decides; a server carries it out (the embedded client never streams):
//!
//! ```text
//!   request ──Engine::reply_wait_ms──▶ Some(ms): hold it ms, then run it (awaitable hello)
//!      │                               None: run it now
//!      ▼ run; exhaustAllowed set?
//!   reply ──Engine::next_in_stream──▶ Some(next): send the reply with moreToCome and run
//!      │                                  `next` as if the client had sent it (its reply
//!      │                                  answers the previous reply's requestId)
//!      └──────────────────────────────▶ None: send the reply as usual; the stream ends
//!   connection closed mid-stream ──Engine::abandon_stream(next)──▶ its cursor is killed
//! ```
//!
//! Invariants:
//! - A stream continues only after a successful reply: a getMore whose cursor is still
//!   open, or an awaitable hello. An error, or a getMore that drained its cursor, ends it.
//! - A standalone's topology never changes: `topologyVersion` is this process's id with
//!   counter 0, so a hello that names it waits its whole `maxAwaitTimeMS`, and one that
//!   names another process (an older server on the same port) is answered at once.
//! - A stream a client leaves holds nothing: the cursor of an abandoned getMore stream
//!   is killed, not left for the idle reaper.

use crate::engine::Engine;
use bson::raw::RawBsonRef;
use bson::{RawDocument, RawDocumentBuf, doc};

/// The commands that answer the awaitable hello protocol.
fn is_hello(name: &str) -> bool {
    matches!(name, "hello" | "isMaster" | "ismaster")
}

impl Engine {
    /// This process's `topologyVersion`: `{processId, counter: 0}`.
    pub(crate) fn topology_version(&self) -> bson::Document {
        doc! { "processId": self.process_id, "counter": 0i64 }
    }

    /// How long a server holds `cmd` before running it: an awaitable hello (with
    /// `topologyVersion` naming this process at its current counter, and a valid
    /// `maxAwaitTimeMS`) waits that long, as on a standalone mongod where nothing can
    /// change meanwhile. `None` for everything else, which runs at once (a malformed
    /// awaitable hello then fails as mongod's does).
    #[must_use]
    pub fn reply_wait_ms(&self, cmd: &RawDocument) -> Option<u64> {
        let name = crate::command::name_of(cmd).ok()?;
        if !is_hello(name) {
            return None;
        }
        let RawBsonRef::Document(version) = cmd.get("topologyVersion").ok()?? else {
            return None;
        };
        let wait = crate::command::read_args::number_i64(cmd.get("maxAwaitTimeMS").ok()??)?;
        let wait = u64::try_from(wait.ok()?).ok()?;
        let ours = version.get("processId").ok()?? == RawBsonRef::ObjectId(self.process_id);
        let counter = match version.get("counter").ok()?? {
            RawBsonRef::Int64(n) => n,
            RawBsonRef::Int32(n) => i64::from(n),
            _ => return None,
        };
        (ours && counter == 0).then_some(wait)
    }

    /// What a server runs next, as if the client had sent it, after answering `cmd` (sent
    /// with `exhaustAllowed`) with `reply`: the same getMore while its cursor is open; the
    /// hello again, naming the topologyVersion just sent (so it waits its
    /// `maxAwaitTimeMS`). `None` ends the stream: `reply` goes out without `moreToCome`.
    #[must_use]
    pub fn next_in_stream(&self, cmd: &RawDocument, reply: &RawDocument) -> Option<RawDocumentBuf> {
        if reply.get_f64("ok").ok() != Some(1.0) {
            return None;
        }
        let name = crate::command::name_of(cmd).ok()?;
        if name == "getMore" {
            let id = reply.get_document("cursor").ok()?.get_i64("id").ok()?;
            return (id != 0).then(|| cmd.to_owned());
        }
        if !is_hello(name) || cmd.get("maxAwaitTimeMS").ok()?.is_none() {
            return None;
        }
        let version = reply.get_document("topologyVersion").ok()?;
        let mut next = RawDocumentBuf::new();
        for element in cmd.iter_elements() {
            let element = element.ok()?;
            let key = element.key();
            if key.as_str() == "topologyVersion" {
                next.append(key, version);
            } else {
                next.append(key, element.value().ok()?);
            }
        }
        Some(next)
    }

    /// Releases what `next` (a [`Engine::next_in_stream`] that will not run, because the
    /// client closed the connection) would have read: the cursor of a getMore stream.
    pub fn abandon_stream(&self, next: &RawDocument) {
        if crate::command::name_of(next).ok() != Some("getMore") {
            return;
        }
        let (Ok(id), Ok(db), Ok(collection)) = (
            next.get_i64("getMore"),
            next.get_str("$db"),
            next.get_str("collection"),
        ) else {
            return;
        };
        let ns = crate::store::Namespace::new(db, collection);
        self.cursors.kill(id, &ns, self.host.now_millis());
    }
}
