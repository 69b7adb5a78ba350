//! The shared `check` helper every data-driven case goes through.

use bson::{Document, RawDocumentBuf, doc};
use query::Filter;
use update::{ApplyContext, Update, UpdateOptions};

/// The expected outcome of a case: a document or an error code.
pub enum Want {
    Doc(Document),
    Code(i32),
}

pub use Want::{Code, Doc};

/// Converts a tree document to raw bytes.
pub fn raw(doc: &Document) -> RawDocumentBuf {
    RawDocumentBuf::try_from(doc).expect("test document converts")
}

/// Applies `update` (with `arrayFilters`, an optional query for `$`) and checks the outcome.
#[track_caller]
pub fn check_with(
    doc: Document,
    update: Document,
    filters: &[Document],
    query: Option<Document>,
    want: Want,
) {
    let options = UpdateOptions {
        array_filters: filters.iter().map(raw).collect(),
        ..UpdateOptions::default()
    };
    let compiled_query = query.map(|q| Filter::parse(&raw(&q)).expect("query parses"));
    let context = ApplyContext {
        query: compiled_query.as_ref(),
        now: Some(bson::DateTime::from_millis(1_700_000_000_000)),
        is_insert: false,
    };
    let result = Update::parse(&raw(&update), options).and_then(|u| u.apply(&raw(&doc), &context));
    match (result, want) {
        (Ok(applied), Doc(expected)) => {
            let got = Document::try_from(applied.doc.as_ref()).expect("result decodes");
            assert!(
                applied.doc == raw(&expected),
                "doc {doc} update {update}: got {got}, want {expected}"
            );
            assert_eq!(
                applied.modified,
                raw(&expected) != raw(&doc),
                "modified flag: {doc} {update}"
            );
        }
        (Ok(applied), Code(code)) => {
            panic!(
                "doc {doc} update {update}: expected code {code}, got {:?}",
                applied.doc
            )
        }
        (Err(e), Doc(expected)) => {
            panic!("doc {doc} update {update}: expected {expected}, got error {e}")
        }
        (Err(e), Code(code)) => assert_eq!(e.code(), code, "doc {doc} update {update}: {e}"),
    }
}

/// Applies `update` to `doc` and checks the outcome.
#[track_caller]
pub fn check(doc: Document, update: Document, want: Want) {
    check_with(doc, update, &[], None, want);
}

/// An empty document, for cases that start from nothing.
pub fn empty() -> Document {
    doc! {}
}

/// Applies a pipeline-style update to `doc` and checks the outcome.
#[track_caller]
pub fn check_pipeline(doc: Document, stages: Vec<Document>, want: Want) {
    let array: bson::RawArrayBuf = stages.iter().map(raw).collect();
    let result = Update::parse_pipeline(&array, UpdateOptions::default())
        .and_then(|u| u.apply(&raw(&doc), &ApplyContext::default()));
    compare(result, want, &doc, &format!("{stages:?}"));
}

/// Builds the upsert document for `filter` and `update` and checks it.
#[track_caller]
pub fn check_upsert(filter: Document, update: Document, want: Want) {
    let context = ApplyContext {
        query: None,
        now: Some(bson::DateTime::from_millis(1_700_000_000_000)),
        is_insert: true,
    };
    let result = update::upsert_seed(&raw(&filter)).and_then(|seed| {
        let parsed = Update::parse(&raw(&update), UpdateOptions::default())?;
        let start = if parsed.is_replacement() {
            let mut only_id = Document::new();
            if let Ok(Some(id)) = seed.get("_id") {
                only_id.insert("_id", bson::Bson::try_from(id).expect("id converts"));
            }
            raw(&only_id)
        } else {
            seed
        };
        parsed.apply(&start, &context)
    });
    compare(result, want, &filter, &update.to_string());
}

#[track_caller]
fn compare(
    result: Result<update::Applied, update::UpdateError>,
    want: Want,
    doc: &Document,
    update: &str,
) {
    match (result, want) {
        (Ok(applied), Doc(expected)) => {
            let got = Document::try_from(applied.doc.as_ref()).expect("result decodes");
            assert!(
                applied.doc == raw(&expected),
                "doc {doc} update {update}: got {got}, want {expected}"
            );
        }
        (Ok(applied), Code(code)) => {
            panic!(
                "doc {doc} update {update}: expected code {code}, got {:?}",
                applied.doc
            )
        }
        (Err(e), Doc(expected)) => {
            panic!("doc {doc} update {update}: expected {expected}, got error {e}")
        }
        (Err(e), Code(code)) => assert_eq!(e.code(), code, "doc {doc} update {update}: {e}"),
    }
}
