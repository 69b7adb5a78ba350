//! The shared `check` helpers every data-driven case goes through.

use bson::{Bson, Document, RawDocumentBuf};
use query::{Filter, QueryError};

/// Converts a tree document to raw bytes.
pub fn raw(doc: &Document) -> RawDocumentBuf {
    RawDocumentBuf::try_from(doc).expect("test document converts")
}

/// Asserts that `filter` selects exactly the documents with `expected` ids, in order.
#[track_caller]
pub fn check(docs: &[Document], filter: Document, expected: &[i32]) {
    let compiled =
        Filter::parse(&raw(&filter)).unwrap_or_else(|e| panic!("filter {filter} refused: {e}"));
    let got: Vec<i32> = docs
        .iter()
        .filter(|d| compiled.matches(&raw(d)))
        .map(|d| match d.get("_id") {
            Some(Bson::Int32(id)) => *id,
            other => panic!("test documents need an int32 _id, got {other:?}"),
        })
        .collect();
    assert_eq!(got, expected, "filter {filter}");
}

/// Asserts that `filter` is refused with `code` and a message containing `text`.
#[track_caller]
pub fn refused(filter: Document, code: i32, text: &str) {
    match Filter::parse(&raw(&filter)) {
        Ok(_) => panic!("filter {filter} was accepted; expected code {code}"),
        Err(e) => {
            assert_eq!(e.code(), code, "filter {filter}: {e}");
            assert!(
                e.to_string().contains(text),
                "filter {filter}: message {e:?} lacks {text:?}"
            );
        }
    }
}

/// The error a filter fails with at match time on `doc`.
pub fn match_error(filter: Document, doc: Document) -> QueryError {
    let compiled = Filter::parse(&raw(&filter)).expect("filter parses");
    compiled
        .try_matches(&raw(&doc))
        .expect_err("matching fails")
}
