//! MongoDB query semantics over raw BSON: filters, expressions, sort and projection.
//!
//! Everything here works on `bson::RawDocument` bytes as stored, so matching a
//! filter reads only the fields it names.
//! - [`Filter`]: a query filter compiled once ([`Filter::parse`]) and matched
//!   many times ([`Filter::matches`]), with MongoDB's array, null and
//!   type-bracket semantics.
//! - [`Expression`]: the aggregation expression language (`$expr`,
//!   projections, pipelines).
//! - [`SortSpec`] and [`top_k`]: canonical-order sorting with the multikey rule.
//! - [`Projection`]: inclusion, exclusion, `$slice`, `$elemMatch`, positional
//!   `$` and computed fields.
//! - [`Pipeline`]: aggregation pipelines (`$match`, `$group`, `$sort`,
//!   `$project`, `$unwind`, ...) over documents the engine supplies.
//! - [`Validator`]: a collection's `validator` (query operators and `$jsonSchema`),
//!   checked against each document a write stores, with mongod's failure details.
//! - [`Variables`]: a command's `let` constants and `$$NOW`, bound when the
//!   command's filter, projection or pipeline is parsed (`parse_with`).
//!
//! ```
//! use bson::rawdoc;
//! use query::Filter;
//!
//! let filter = Filter::parse(&rawdoc! {"a.b": {"$gt": 1}}).unwrap();
//! assert!(filter.matches(&rawdoc! {"a": [{"b": 0}, {"b": 2}]}));
//! assert!(!filter.matches(&rawdoc! {"a": {"b": "x"}}));
//! ```
#![forbid(unsafe_code)]

pub mod error;
mod expr;
mod filter;
pub mod limits;
mod pipeline;
mod projection;
mod raw;
mod sort;
mod validate;
mod value;
mod variables;

pub use error::QueryError;
pub use expr::{Expression, Value};
pub use filter::Filter;
pub use pipeline::{
    CollStats, CurrentOp, DocumentStream, Foreign, GroupFeed, GroupMemory, LocalSessions, Merge,
    Output, Pipeline, Target, TrailingSort, WhenMatched, WhenNotMatched,
};
pub use projection::Projection;
pub use raw::{element_span, get_field_in, is_framed};
pub use sort::{Direction, SortKey, SortSpec, top_k};
pub use validate::Validator;
pub use variables::Variables;

// Compiled plans are shared between the threads that run queries.
const _: fn() = || {
    fn shareable<T: Send + Sync>() {}
    shareable::<Filter>();
    shareable::<Expression>();
    shareable::<SortSpec>();
    shareable::<Projection>();
    shareable::<Pipeline>();
    shareable::<Variables>();
    shareable::<Validator>();
};
