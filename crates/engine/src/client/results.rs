//! What the client's writes return, named and shaped as the `mongodb` crate's results.

use bson::Bson;
use std::collections::HashMap;

/// The result of `insert_one`.
#[derive(Clone, Debug, Default, PartialEq)]
#[non_exhaustive]
pub struct InsertOneResult {
    /// The `_id` of the inserted document (generated when it had none).
    pub inserted_id: Bson,
}

/// The result of `insert_many`.
#[derive(Clone, Debug, Default, PartialEq)]
#[non_exhaustive]
pub struct InsertManyResult {
    /// The `_id` of each inserted document, by its position in the call.
    pub inserted_ids: HashMap<usize, Bson>,
}

/// The result of `update_one`, `update_many` and `replace_one`.
#[derive(Clone, Debug, Default, PartialEq)]
#[non_exhaustive]
pub struct UpdateResult {
    /// Documents the filter matched (0 when the call upserted).
    pub matched_count: u64,
    /// Documents changed.
    pub modified_count: u64,
    /// The `_id` of the document an upsert inserted.
    pub upserted_id: Option<Bson>,
}

/// The result of `delete_one` and `delete_many`.
#[derive(Clone, Debug, Default, PartialEq)]
#[non_exhaustive]
pub struct DeleteResult {
    /// Documents deleted.
    pub deleted_count: u64,
}
