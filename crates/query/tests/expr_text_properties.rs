//! Property tests of the string and regex operators against models built from the
//! standard library: `$regexFindAll` of a literal pattern against `match_indices`
//! (with code point positions), `$replaceAll`/`$replaceOne` against `replace`,
//! `$indexOfBytes`/`$indexOfCP` against `find`, `$substrCP` against `chars`, and
//! `$arrayToObject` undoing `$objectToArray`.

use crate::support::evaluate;
use bson::{Bson, Document, doc};
use proptest::prelude::*;

fn eval(expr: Document) -> Option<Bson> {
    evaluate(&doc! {}, Bson::Document(expr.clone())).unwrap_or_else(|e| panic!("{expr}: {e}"))
}

/// Short strings over an alphabet mixing one-, two- and three-byte characters.
fn text() -> impl Strategy<Value = String> {
    prop::collection::vec(prop::sample::select(vec!['a', 'b', 'é', '日']), 0..10)
        .prop_map(|chars| chars.into_iter().collect())
}

fn needle() -> impl Strategy<Value = String> {
    prop::collection::vec(prop::sample::select(vec!['a', 'b', 'é', '日']), 1..3)
        .prop_map(|chars| chars.into_iter().collect())
}

fn code_points_before(s: &str, byte: usize) -> i32 {
    i32::try_from(s.get(..byte).map_or(0, |p| p.chars().count())).unwrap_or(-1)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn regex_operators_on_a_literal_match_a_model(input in text(), find in needle()) {
        let model: Vec<Bson> = input
            .match_indices(find.as_str())
            .map(|(at, m)| Bson::Document(doc! {
                "match": m, "idx": code_points_before(&input, at), "captures": []
            }))
            .collect();
        let spec = doc! {"input": input.clone(), "regex": find.clone()};
        prop_assert_eq!(eval(doc! {"$regexFindAll": spec.clone()}), Some(Bson::Array(model.clone())));
        prop_assert_eq!(
            eval(doc! {"$regexFind": spec.clone()}),
            Some(model.first().cloned().unwrap_or(Bson::Null))
        );
        prop_assert_eq!(
            eval(doc! {"$regexMatch": spec}),
            Some(Bson::Boolean(input.contains(find.as_str())))
        );
    }

    #[test]
    fn replace_matches_the_standard_library(input in text(), find in needle(), with in text()) {
        let spec = doc! {"input": input.clone(), "find": find.clone(), "replacement": with.clone()};
        prop_assert_eq!(
            eval(doc! {"$replaceAll": spec.clone()}),
            Some(Bson::String(input.replace(find.as_str(), &with)))
        );
        prop_assert_eq!(
            eval(doc! {"$replaceOne": spec}),
            Some(Bson::String(input.replacen(find.as_str(), &with, 1)))
        );
    }

    #[test]
    fn index_of_matches_the_standard_library(input in text(), find in needle()) {
        let bytes = input.find(find.as_str()).map_or(-1, |at| i32::try_from(at).unwrap_or(-1));
        let code_points = input
            .find(find.as_str())
            .map_or(-1, |at| code_points_before(&input, at));
        prop_assert_eq!(
            eval(doc! {"$indexOfBytes": [input.clone(), find.clone()]}),
            Some(Bson::Int32(bytes))
        );
        prop_assert_eq!(
            eval(doc! {"$indexOfCP": [input, find]}),
            Some(Bson::Int32(code_points))
        );
    }

    #[test]
    fn substr_cp_matches_chars(input in text(), start in 0..12i32, length in 0..12i32) {
        let model: String = input.chars().skip(start as usize).take(length as usize).collect();
        prop_assert_eq!(
            eval(doc! {"$substrCP": [input, start, length]}),
            Some(Bson::String(model))
        );
    }

    #[test]
    fn array_to_object_undoes_object_to_array(
        entries in prop::collection::btree_map("[a-c]{1,2}", -3..3i32, 0..6)
    ) {
        let mut object = Document::new();
        for (k, v) in &entries {
            object.insert(k.clone(), *v);
        }
        let round_trip = eval(doc! {"$arrayToObject": {"$objectToArray": {"$literal": object.clone()}}});
        prop_assert_eq!(round_trip, Some(Bson::Document(object)));
    }
}
