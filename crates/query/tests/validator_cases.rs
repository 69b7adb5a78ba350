//! Collection validators: each `$jsonSchema` keyword on documents that pass and fail, the
//! schemas and operators refused with mongod's codes, and the failure details' shape.

use bson::{Bson, Document, RawDocumentBuf, doc};
use query::Validator;

fn raw(d: &Document) -> RawDocumentBuf {
    RawDocumentBuf::try_from(d).expect("test document")
}

fn validator(spec: Document) -> Validator {
    Validator::parse(&raw(&spec)).unwrap_or_else(|e| panic!("{spec}: {e}"))
}

/// `schema` as a `$jsonSchema` validator accepts `doc` exactly when `expected`.
fn check(schema: Document, doc: Document, expected: bool) {
    let v = validator(doc! {"$jsonSchema": schema.clone()});
    assert_eq!(v.matches(&raw(&doc)), expected, "schema {schema} on {doc}");
    if !expected {
        let details = v.explain(&raw(&doc));
        assert_eq!(
            details.get_str("operatorName").ok(),
            Some("$jsonSchema"),
            "{details}"
        );
        let rules = details.get_array("schemaRulesNotSatisfied").expect("rules");
        assert!(
            !rules.is_empty(),
            "no rule named for {schema} on {doc}: {details}"
        );
    }
}

/// `spec` (a whole validator) is refused with `code`.
fn refused(spec: Document, code: i32) {
    match Validator::parse(&raw(&spec)) {
        Ok(_) => panic!("{spec} was accepted"),
        Err(e) => assert_eq!(e.code(), code, "{spec}: {e}"),
    }
}

#[test]
fn type_keywords() {
    check(
        doc! {"properties": {"a": {"bsonType": "int"}}},
        doc! {"a": 1},
        true,
    );
    check(
        doc! {"properties": {"a": {"bsonType": "int"}}},
        doc! {"a": 1.5},
        false,
    );
    check(
        doc! {"properties": {"a": {"bsonType": ["int", "string"]}}},
        doc! {"a": "x"},
        true,
    );
    check(
        doc! {"properties": {"a": {"bsonType": "number"}}},
        doc! {"a": 2i64},
        true,
    );
    check(
        doc! {"properties": {"a": {"bsonType": "number"}}},
        doc! {"a": "2"},
        false,
    );
    check(
        doc! {"properties": {"a": {"type": "number"}}},
        doc! {"a": 2.5},
        true,
    );
    check(
        doc! {"properties": {"a": {"type": "boolean"}}},
        doc! {"a": 0},
        false,
    );
    check(
        doc! {"properties": {"a": {"type": ["null", "array"]}}},
        doc! {"a": [1]},
        true,
    );
    // Arrays are values: a type is not checked element by element.
    check(
        doc! {"properties": {"a": {"bsonType": "int"}}},
        doc! {"a": [1, 2]},
        false,
    );
    // A top-level type other than object matches nothing; object matches every document.
    check(doc! {"bsonType": "object"}, doc! {"a": 1}, true);
    check(doc! {"bsonType": "string"}, doc! {"a": 1}, false);
    check(doc! {"type": ["string", "object"]}, doc! {}, true);
}

#[test]
fn object_keywords() {
    check(
        doc! {"required": ["a", "b"]},
        doc! {"a": 1, "b": null},
        true,
    );
    check(doc! {"required": ["a", "b"]}, doc! {"a": 1}, false);
    check(
        doc! {"properties": {"a": {"required": ["x"]}}},
        doc! {"a": {"y": 1}},
        false,
    );
    check(
        doc! {"properties": {"a": {"required": ["x"]}}},
        doc! {"a": 5},
        true,
    );
    check(doc! {"properties": {"a": {"minimum": 1}}}, doc! {}, true);
    check(
        doc! {"properties": {"a": {"bsonType": "int"}}, "additionalProperties": false},
        doc! {"a": 1},
        true,
    );
    check(
        doc! {"properties": {"a": {}}, "additionalProperties": false},
        doc! {"a": 1, "b": 2},
        false,
    );
    check(
        doc! {"additionalProperties": {"bsonType": "string"}},
        doc! {"a": "x", "b": "y"},
        true,
    );
    check(
        doc! {"additionalProperties": {"bsonType": "string"}},
        doc! {"a": "x", "b": 2},
        false,
    );
    check(
        doc! {"patternProperties": {"^n_": {"bsonType": "int"}}},
        doc! {"n_a": 1, "s": "x"},
        true,
    );
    check(
        doc! {"patternProperties": {"^n_": {"bsonType": "int"}}},
        doc! {"n_a": "1"},
        false,
    );
    check(
        doc! {"patternProperties": {"^n_": {}}, "additionalProperties": false},
        doc! {"n_a": 1, "other": 2},
        false,
    );
    check(doc! {"minProperties": 2}, doc! {"a": 1}, false);
    check(doc! {"maxProperties": 2}, doc! {"a": 1, "b": 2}, true);
    check(doc! {"maxProperties": 1}, doc! {"a": 1, "b": 2}, false);
    check(doc! {"dependencies": {"a": ["b"]}}, doc! {"a": 1}, false);
    check(doc! {"dependencies": {"a": ["b"]}}, doc! {"c": 1}, true);
    check(
        doc! {"dependencies": {"a": {"required": ["c"]}}},
        doc! {"a": 1, "c": 1},
        true,
    );
    check(
        doc! {"dependencies": {"a": {"required": ["c"]}}},
        doc! {"a": 1},
        false,
    );
}

#[test]
fn scalar_keywords() {
    let p = |s: Document| doc! {"properties": {"v": s}};
    check(p(doc! {"minimum": 5}), doc! {"v": 5}, true);
    check(
        p(doc! {"minimum": 5, "exclusiveMinimum": true}),
        doc! {"v": 5},
        false,
    );
    check(p(doc! {"maximum": 5.5}), doc! {"v": 6i64}, false);
    check(
        p(doc! {"maximum": 5, "exclusiveMaximum": false}),
        doc! {"v": 5},
        true,
    );
    check(p(doc! {"minimum": 5}), doc! {"v": "a string"}, true);
    check(p(doc! {"multipleOf": 3}), doc! {"v": 9}, true);
    check(p(doc! {"multipleOf": 3}), doc! {"v": 10}, false);
    check(p(doc! {"multipleOf": 0.5}), doc! {"v": 2.5}, true);
    check(p(doc! {"minLength": 2}), doc! {"v": "é"}, false);
    check(p(doc! {"maxLength": 2}), doc! {"v": "éé"}, true);
    check(p(doc! {"maxLength": 2}), doc! {"v": 12345}, true);
    check(p(doc! {"pattern": "^a.c$"}), doc! {"v": "abc"}, true);
    check(p(doc! {"pattern": "^a.c$"}), doc! {"v": "abcd"}, false);
    check(
        p(doc! {"enum": [1, "x", {"a": 1, "b": 2}]}),
        doc! {"v": 1.0},
        true,
    );
    check(
        p(doc! {"enum": [1, "x", {"a": 1, "b": 2}]}),
        doc! {"v": {"b": 2, "a": 1}},
        true,
    );
    check(p(doc! {"enum": [1, "x"]}), doc! {"v": "y"}, false);
    check(doc! {"enum": [{"a": 1}, 5]}, doc! {"a": 1}, true);
    check(doc! {"enum": [{"a": 1}]}, doc! {"a": 2}, false);
    check(
        doc! {"title": "t", "description": "d", "minimum": 5},
        doc! {"a": 1},
        true,
    );
}

#[test]
fn array_keywords() {
    let p = |s: Document| doc! {"properties": {"v": s}};
    check(p(doc! {"minItems": 2}), doc! {"v": [1]}, false);
    check(p(doc! {"maxItems": 2}), doc! {"v": [1, 2]}, true);
    check(
        p(doc! {"uniqueItems": true}),
        doc! {"v": [1, 2, 1.0]},
        false,
    );
    check(
        p(doc! {"uniqueItems": true}),
        doc! {"v": [{"a": 1, "b": 1}, {"b": 1, "a": 1}]},
        false,
    );
    check(p(doc! {"uniqueItems": false}), doc! {"v": [1, 1]}, true);
    check(
        p(doc! {"items": {"bsonType": "int"}}),
        doc! {"v": [1, 2]},
        true,
    );
    check(
        p(doc! {"items": {"bsonType": "int"}}),
        doc! {"v": [1, "2"]},
        false,
    );
    check(
        p(doc! {"items": [{"bsonType": "int"}, {"bsonType": "string"}]}),
        doc! {"v": [1, "a", 3.5]},
        true,
    );
    check(
        p(doc! {"items": [{"bsonType": "int"}], "additionalItems": false}),
        doc! {"v": [1, 2]},
        false,
    );
    check(
        p(doc! {"items": [{"bsonType": "int"}], "additionalItems": false}),
        doc! {"v": [1]},
        true,
    );
    check(
        p(doc! {"items": [{}], "additionalItems": {"bsonType": "string"}}),
        doc! {"v": ["x", "y", 3]},
        false,
    );
    // additionalItems without an items array has nothing to apply to.
    check(p(doc! {"additionalItems": false}), doc! {"v": [1, 2]}, true);
}

#[test]
fn logical_keywords() {
    let p = |s: Document| doc! {"properties": {"v": s}};
    check(
        p(doc! {"allOf": [{"minimum": 1}, {"maximum": 3}]}),
        doc! {"v": 4},
        false,
    );
    check(
        p(doc! {"anyOf": [{"bsonType": "string"}, {"minimum": 3}]}),
        doc! {"v": 4},
        true,
    );
    check(
        p(doc! {"anyOf": [{"bsonType": "string"}, {"minimum": 3}]}),
        doc! {"v": 2},
        false,
    );
    check(
        p(doc! {"oneOf": [{"minimum": 1}, {"minimum": 2}]}),
        doc! {"v": 1},
        true,
    );
    check(
        p(doc! {"oneOf": [{"minimum": 1}, {"minimum": 2}]}),
        doc! {"v": 5},
        false,
    );
    check(p(doc! {"not": {"bsonType": "string"}}), doc! {"v": 5}, true);
    check(
        p(doc! {"not": {"bsonType": "string"}}),
        doc! {"v": "s"},
        false,
    );
    check(
        doc! {"anyOf": [{"required": ["a"]}, {"required": ["b"]}]},
        doc! {"b": 1},
        true,
    );
}

#[test]
fn schemas_refused_as_mongod_refuses_them() {
    let s = |schema: Document| doc! {"$jsonSchema": schema};
    for keyword in ["$ref", "$schema", "default", "definitions", "format", "id"] {
        refused(s(doc! {keyword: "x"}), 9);
    }
    refused(s(doc! {"unknownKeyword": 1}), 9);
    refused(s(doc! {"type": "integer"}), 9);
    refused(s(doc! {"bsonType": "integer"}), 9);
    refused(s(doc! {"type": "int"}), 2);
    refused(s(doc! {"bsonType": "notAType"}), 2);
    refused(s(doc! {"type": "string", "bsonType": "string"}), 9);
    refused(s(doc! {"required": []}), 9);
    refused(s(doc! {"required": "a"}), 14);
    refused(s(doc! {"required": ["a", "a"]}), 9);
    refused(s(doc! {"properties": {"a": 1}}), 14);
    refused(s(doc! {"minimum": "1"}), 14);
    refused(s(doc! {"exclusiveMinimum": true}), 9);
    refused(s(doc! {"minLength": -1}), 9);
    refused(s(doc! {"minLength": 1.5}), 9);
    refused(s(doc! {"multipleOf": 0}), 9);
    refused(s(doc! {"enum": []}), 9);
    refused(s(doc! {"enum": [1, 1.0]}), 9);
    refused(s(doc! {"allOf": []}), 2);
    refused(s(doc! {"anyOf": [1]}), 14);
    refused(s(doc! {"not": []}), 14);
    refused(s(doc! {"items": 1}), 14);
    refused(s(doc! {"additionalProperties": 1}), 14);
    refused(s(doc! {"pattern": "("}), 51091);
    refused(s(doc! {"dependencies": {"a": []}}), 9);
    refused(s(doc! {"title": 1}), 14);
    refused(s(doc! {"properties": {"a": {"format": "date"}}}), 9);
}

#[test]
fn operators_refused_in_a_validator() {
    refused(doc! {"$where": "true"}, 2);
    refused(doc! {"$text": {"$search": "x"}}, 2);
    refused(doc! {"a": {"$near": [0, 0]}}, 2);
    refused(doc! {"$or": [{"a": {"$nearSphere": [0, 0]}}]}, 2);
    refused(doc! {"a": {"$bogus": 1}}, 2);
    // $expr and ordinary operators are allowed, with $jsonSchema beside them.
    let v = validator(
        doc! {"$jsonSchema": {"required": ["a"]}, "a": {"$gt": 1}, "$expr": {"$lt": ["$a", 10]}},
    );
    assert!(v.matches(&raw(&doc! {"a": 5})));
    assert!(!v.matches(&raw(&doc! {"a": 0})));
    assert!(!v.matches(&raw(&doc! {"a": 11})));
    assert!(!v.matches(&raw(&doc! {"b": 5})));
}

#[test]
fn details_of_a_failed_schema_name_the_rules() {
    let v = validator(doc! {"$jsonSchema": {
        "bsonType": "object",
        "required": ["name", "year"],
        "properties": {
            "name": {"bsonType": "string", "description": "must be a string"},
            "year": {"bsonType": "int", "minimum": 2017},
        },
    }});
    let details = v.explain(&raw(&doc! {"_id": 1, "name": 5}));
    let expected = doc! {
        "operatorName": "$jsonSchema",
        "schemaRulesNotSatisfied": [
            {"operatorName": "properties", "propertiesNotSatisfied": [
                {"propertyName": "name", "description": "must be a string", "details": [
                    {"operatorName": "bsonType", "specifiedAs": {"bsonType": "string"},
                     "reason": "type did not match", "consideredValue": 5, "consideredType": "int"},
                ]},
            ]},
            {"operatorName": "required", "specifiedAs": {"required": ["name", "year"]},
             "missingProperties": ["year"]},
        ],
    };
    assert_eq!(details, expected);
}

#[test]
fn details_of_failed_operators() {
    let v = validator(doc! {"a": {"$gt": 1}});
    assert_eq!(
        v.explain(&raw(&doc! {"a": 0})),
        doc! {"operatorName": "$gt", "specifiedAs": {"a": {"$gt": 1}}, "reason": "comparison failed", "consideredValue": 0}
    );
    assert_eq!(
        v.explain(&raw(&doc! {"b": 0})),
        doc! {"operatorName": "$gt", "specifiedAs": {"a": {"$gt": 1}}, "reason": "field was missing"}
    );
    let v = validator(doc! {"a": 1, "$or": [{"b": {"$exists": true}}, {"c": "x"}]});
    let details = v.explain(&raw(&doc! {"a": 2}));
    assert_eq!(details.get_str("operatorName").ok(), Some("$and"));
    let failing = details.get_array("clausesNotSatisfied").expect("clauses");
    assert_eq!(failing.len(), 2, "{details}");
    let Some(Bson::Document(second)) = failing.get(1) else {
        panic!("{details}")
    };
    assert_eq!(
        second
            .get_document("details")
            .and_then(|d| d.get_str("operatorName"))
            .ok(),
        Some("$or")
    );
    let v = validator(doc! {"$expr": {"$eq": ["$a", "$b"]}});
    let details = v.explain(&raw(&doc! {"a": 1, "b": 2}));
    assert_eq!(
        details.get_str("reason").ok(),
        Some("expression did not match")
    );
    assert_eq!(details.get_bool("expressionResult").ok(), Some(false));
}

#[test]
fn an_empty_validator_matches_everything() {
    let v = validator(doc! {});
    assert!(v.matches(&raw(&doc! {"anything": [1, {"x": null}]})));
}
