//! Properties: update parsing never panics, and applying a `$set` then
//! reading the path back gives the value.

use bson::{Bson, Document, RawDocumentBuf, doc};
use proptest::prelude::*;
use update::{ApplyContext, Update, UpdateOptions};

fn path() -> impl Strategy<Value = String> {
    prop::collection::vec(
        prop_oneof![
            "[a-c]",
            "[0-2]",
            Just("$".to_owned()),
            Just("$[]".to_owned())
        ],
        1..4,
    )
    .prop_map(|parts| parts.join("."))
}

fn value() -> impl Strategy<Value = Bson> {
    prop_oneof![
        any::<i32>().prop_map(Bson::Int32),
        any::<i64>().prop_map(Bson::Int64),
        any::<f64>().prop_map(Bson::Double),
        "[a-z]{0,3}".prop_map(Bson::String),
        Just(Bson::Null),
        Just(Bson::Array(vec![
            Bson::Int32(1),
            Bson::Document(doc! {"b": 2})
        ])),
        Just(Bson::Document(doc! {"a": [1, 2], "b": {"c": 1}})),
    ]
}

fn operator() -> impl Strategy<Value = &'static str> {
    prop::sample::select(vec![
        "$set",
        "$unset",
        "$inc",
        "$mul",
        "$min",
        "$max",
        "$push",
        "$addToSet",
        "$pop",
        "$pull",
        "$pullAll",
        "$bit",
        "$rename",
        "$currentDate",
    ])
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn apply_never_panics_and_stays_valid(
        start in prop::collection::vec((path(), value()), 0..4),
        ops in prop::collection::vec((operator(), path(), value()), 1..4),
    ) {
        let mut doc = doc! {"_id": 1};
        for (p, v) in start {
            doc.insert(p.replace(['.', '$', '[', ']'], "_"), v);
        }
        let mut update = Document::new();
        for (op, p, v) in ops {
            let mut inner = update.get_document(op).cloned().unwrap_or_default();
            inner.insert(p, v);
            update.insert(op, inner);
        }
        let raw_doc = RawDocumentBuf::try_from(&doc).expect("doc encodes");
        let raw_update = RawDocumentBuf::try_from(&update).expect("update encodes");
        if let Ok(parsed) = Update::parse(&raw_update, UpdateOptions::default())
            && let Ok(applied) = parsed.apply(&raw_doc, &ApplyContext::default())
        {
            let back = Document::try_from(applied.doc.as_ref()).expect("result decodes");
            prop_assert_eq!(back.get("_id"), Some(&Bson::Int32(1)));
            prop_assert_eq!(applied.modified, applied.doc.as_bytes() != raw_doc.as_bytes());
            prop_assert_eq!(applied.modified, !applied.changed_paths.is_empty());
        }
    }

    #[test]
    fn set_then_read_back(name in "[a-d]{1,3}", inner in "[a-d]{1,3}", v in value()) {
        let raw_doc = RawDocumentBuf::try_from(&doc! {"_id": 1}).expect("encodes");
        let update = RawDocumentBuf::try_from(&doc! {"$set": {format!("{name}.{inner}"): v.clone()}}).expect("encodes");
        let applied = Update::parse(&update, UpdateOptions::default())
            .and_then(|u| u.apply(&raw_doc, &ApplyContext::default()))
            .expect("applies");
        let back = Document::try_from(applied.doc.as_ref()).expect("decodes");
        let got = back.get_document(&name).ok().and_then(|d| d.get(&inner)).cloned();
        prop_assert_eq!(got, Some(v));
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    /// The bytes fast path and the whole-tree path give the same bytes, flags and errors.
    #[test]
    fn bytes_path_agrees_with_tree_path(
        start in prop::collection::vec(("[a-c]", value()), 0..4),
        ops in prop::collection::vec((operator(), path(), value()), 1..3),
    ) {
        let mut doc = doc! {"_id": 1};
        for (p, v) in start {
            doc.insert(p, v);
        }
        let mut update = Document::new();
        for (op, p, v) in ops {
            let mut inner = update.get_document(op).cloned().unwrap_or_default();
            inner.insert(p, v);
            update.insert(op, inner);
        }
        let raw_doc = RawDocumentBuf::try_from(&doc).expect("doc encodes");
        let raw_update = RawDocumentBuf::try_from(&update).expect("update encodes");
        let context = ApplyContext { now: Some(bson::DateTime::from_millis(0)), ..ApplyContext::default() };
        if let Ok(parsed) = Update::parse(&raw_update, UpdateOptions::default()) {
            let fast = parsed.apply(&raw_doc, &context).map_err(|e| e.code());
            let tree = parsed.apply_tree(&raw_doc, &context).map_err(|e| e.code());
            prop_assert_eq!(fast, tree);
        }
    }
}
