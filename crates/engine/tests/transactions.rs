//! Transaction fields on a standalone: refused exactly as mongod refuses them, never
//! applied as if the fields were absent (Mongoose's `withTransaction` and PyMongo's
//! `with_transaction` would otherwise keep an aborted transaction's writes).

use crate::support::{contents, engine, fails, ok};
use bson::{Binary, RawDocumentBuf, rawdoc, spec::BinarySubtype};

fn lsid() -> RawDocumentBuf {
    let id = Binary {
        subtype: BinarySubtype::Uuid,
        bytes: vec![7; 16],
    };
    rawdoc! { "id": id }
}

#[test]
fn a_write_inside_a_transaction_is_refused_and_not_applied() {
    let engine = engine();
    let reply = fails(
        &engine,
        "db",
        rawdoc! {
            "insert": "c", "documents": [{ "_id": 1 }], "lsid": lsid(),
            "txnNumber": 1_i64, "startTransaction": true, "autocommit": false,
        },
        20,
    );
    assert_eq!(reply.get_str("codeName").ok(), Some("IllegalOperation"));
    assert_eq!(
        reply.get_str("errmsg").ok(),
        Some("Transaction numbers are only allowed on a replica set member or mongos")
    );
    assert!(
        contents(&engine, "db", "c").is_empty(),
        "nothing was written"
    );
    // A retryable write (txnNumber alone) is refused the same way.
    fails(
        &engine,
        "db",
        rawdoc! { "update": "c", "updates": [{ "q": {}, "u": { "$set": { "a": 1 } }, "upsert": true }],
        "lsid": lsid(), "txnNumber": 2_i64 },
        20,
    );
    assert!(
        contents(&engine, "db", "c").is_empty(),
        "nothing was upserted"
    );
    for read in [
        rawdoc! { "find": "c", "lsid": lsid(), "txnNumber": 3_i64, "autocommit": false },
        rawdoc! { "aggregate": "c", "pipeline": [], "cursor": {}, "lsid": lsid(), "txnNumber": 3_i64 },
    ] {
        fails(&engine, "db", read, 20);
    }
}

#[test]
fn the_transaction_commands_answer_as_a_standalone_mongod() {
    let engine = engine();
    for name in ["commitTransaction", "abortTransaction"] {
        // Drivers send them with the transaction's number: refused like any other.
        let with_txn = {
            let mut doc = bson::Document::new();
            doc.insert(name, 1);
            doc.insert(
                "lsid",
                bson::Document::try_from(lsid().as_ref()).expect("lsid"),
            );
            doc.insert("txnNumber", 1_i64);
            doc.insert("autocommit", false);
            RawDocumentBuf::try_from(&doc).expect("encode")
        };
        fails(&engine, "admin", with_txn, 20);
        let mut bare = bson::Document::new();
        bare.insert(name, 1);
        let reply = fails(
            &engine,
            "admin",
            RawDocumentBuf::try_from(&bare).expect("encode"),
            125,
        );
        assert_eq!(
            reply.get_str("errmsg").ok(),
            Some(format!("{name} must be run within a transaction").as_str())
        );
        fails(
            &engine,
            "db",
            RawDocumentBuf::try_from(&bare).expect("encode"),
            13,
        );
    }
}

#[test]
fn session_fields_without_a_transaction_number_get_mongods_messages() {
    let engine = engine();
    let cases = [
        (
            rawdoc! { "find": "c", "txnNumber": 1_i64 },
            72,
            "Transaction number requires a session ID to also be specified",
        ),
        (
            rawdoc! { "find": "c", "lsid": lsid(), "autocommit": false },
            72,
            "'autocommit' field requires a transaction number to also be specified",
        ),
        (
            rawdoc! { "find": "c", "lsid": lsid(), "startTransaction": true },
            72,
            "'startTransaction' field requires 'autocommit' field to also be specified",
        ),
        (
            rawdoc! { "ping": 1, "lsid": lsid(), "autocommit": false },
            263,
            "This command is not supported in transactions",
        ),
        (
            rawdoc! { "hello": 1, "lsid": lsid(), "txnNumber": 1_i64 },
            50889,
            "It is illegal to provide a txnNumber for this command",
        ),
    ];
    for (cmd, code, message) in cases {
        let reply = fails(&engine, "db", cmd, code);
        assert_eq!(reply.get_str("errmsg").ok(), Some(message));
    }
    // A session alone is fine.
    ok(&engine, "db", rawdoc! { "find": "c", "lsid": lsid() });
}
