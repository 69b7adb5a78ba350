//! A point read by `_id` without the command around it, for the embedded API's `find_one`.
//!
//! `find_one({_id: v})` through the find command builds a command document, parses its
//! options, opens a cursor and encodes a reply, and the caller decodes it again: more
//! than half the time of a read that is two B+tree descents. This path does only what
//! find would do for that filter: the same namespace checks, the same `_id_` lookup, and
//! the same re-check of the whole filter against the document the index proposes.

use super::access::if_matches;
use super::args;
use crate::engine::Engine;
use crate::error::Error;
use crate::plan::id_equality;
use crate::store::Namespace;
use bson::{RawDocument, RawDocumentBuf};
use query::Filter;

/// The first document `filter` selects in `db.coll`, when `filter` has a top-level `_id`
/// equality (`{_id: v, ...}` or `{_id: {$eq: v}, ...}`: at most one document can match);
/// `None` when it has none, for the caller to run the find command instead.
pub(crate) fn find_by_id(
    engine: &Engine,
    db: &str,
    coll: &str,
    filter: &RawDocument,
) -> Result<Option<Option<RawDocumentBuf>>, Error> {
    let Some(id) = id_equality(filter) else {
        return Ok(None);
    };
    super::check_database_name(db)?;
    let ns = Namespace::new(db, coll);
    args::check_namespace(&ns)?;
    let compiled = Filter::parse(filter)?;
    let store = engine.store();
    let reader = store.read()?;
    let Some(meta) = reader.collection(&ns)? else {
        return Ok(Some(None));
    };
    engine.index_usage.used(meta.uuid, "_id_");
    let Some((rid, bytes)) = reader.find_id(&meta, id)? else {
        return Ok(Some(None));
    };
    Ok(Some(if_matches(&ns, Some(&compiled), rid, &bytes)?))
}
