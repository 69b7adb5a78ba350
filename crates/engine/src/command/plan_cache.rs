//! `planCacheClear` (issue 17): drops the plan cache's entries of a collection, or of one
//! query shape of it (`query`, `sort`, `projection` as the shape's example).

use super::Request;
use super::args;
use crate::engine::Engine;
use crate::error::Error;
use crate::plan::cache::Key;
use bson::{Document, doc};

/// `planCacheClear: <collection>, query?, sort?, projection?`.
pub(crate) fn plan_cache_clear(engine: &Engine, request: &Request<'_>) -> Result<Document, Error> {
    args::check_fields(request, &["query", "sort", "projection", "collation"])?;
    let ns = args::collection(request)?;
    let query = args::opt_doc(request, "query")?;
    let sort = args::opt_doc(request, "sort")?;
    let projection = args::opt_doc(request, "projection")?;
    let store = engine.store();
    let reader = store.read()?;
    let Some(meta) = reader.collection(&ns)? else {
        return Ok(doc! {});
    };
    match query {
        Some(query) => engine
            .plans
            .remove(&Key::of(&meta, Some(query), sort, projection)),
        None => engine.plans.clear(&meta),
    }
    Ok(doc! {})
}
