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

/// Evaluates the aggregation expression `expr` against `doc`.
pub fn evaluate(doc: &Document, expr: Bson) -> Result<Option<Bson>, QueryError> {
    let wrapper = bson::doc! {"e": expr};
    let raw_wrapper = raw(&wrapper);
    let value = raw_wrapper.get("e").expect("valid").expect("present");
    query::Expression::parse(value)?.evaluate(&raw(doc))
}

/// Asserts that `expr` evaluates to `expected` against `doc`.
#[track_caller]
pub fn yields(doc: &Document, expr: Document, expected: Bson) {
    let got = evaluate(doc, Bson::Document(expr.clone()))
        .unwrap_or_else(|e| panic!("{expr}: error {} {e}", e.code()));
    assert_eq!(got, Some(expected), "{expr}");
}

/// Asserts that `expr` evaluates to missing against `doc`.
#[track_caller]
pub fn yields_missing(doc: &Document, expr: Document) {
    let got = evaluate(doc, Bson::Document(expr.clone()))
        .unwrap_or_else(|e| panic!("{expr}: error {} {e}", e.code()));
    assert_eq!(got, None, "{expr}");
}

/// Asserts that `expr` fails with MongoDB error `code` against `doc`.
#[track_caller]
pub fn fails_with(doc: &Document, expr: Document, code: i32) {
    match evaluate(doc, Bson::Document(expr.clone())) {
        Ok(v) => panic!("{expr} gave {v:?}, expected error {code}"),
        Err(e) => assert_eq!(e.code(), code, "{expr}: {e}"),
    }
}

/// A date from its RFC 3339 text.
pub fn date(text: &str) -> Bson {
    Bson::DateTime(bson::DateTime::parse_rfc3339_str(text).expect("test date parses"))
}

/// A date from milliseconds since the epoch.
pub fn millis(ms: i64) -> Bson {
    Bson::DateTime(bson::DateTime::from_millis(ms))
}
