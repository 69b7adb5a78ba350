//! Errors handled by kind, as with the `mongodb` crate: a duplicate key is
//! `ErrorKind::Write(WriteFailure::WriteError(..))` with code 11000 (its key value in the
//! reply the error keeps), `insert_many` failures list each failed document's index, a
//! failed command is `ErrorKind::Command` with MongoDB's code and name, a call refused
//! before it ran is `InvalidArgument`, a stored document that does not fit the type is
//! `Bson`; and, embedded only, `Locked` (the file is open elsewhere) and `Closed`.
//!
//! Run with `cargo run -p engine --example errors`.

use bson::{Document, doc};
use engine::client::{Client, Error, ErrorKind, WriteFailure};
use serde::{Deserialize, Serialize};

#[derive(Debug, Serialize, Deserialize)]
struct User {
    #[serde(rename = "_id")]
    id: i32,
    email: String,
}

/// What an application does with each kind.
fn explain(error: &Error) -> String {
    match &*error.kind {
        ErrorKind::Write(WriteFailure::WriteError(write)) if write.code == 11000 => {
            let key = error
                .server_response()
                .and_then(|reply| Document::try_from(reply.as_ref()).ok())
                .and_then(|reply| {
                    let entry = reply.get_array("writeErrors").ok()?.first()?.clone();
                    entry.as_document()?.get_document("keyValue").ok().cloned()
                });
            format!("duplicate key {key:?}: {}", write.message)
        }
        ErrorKind::Write(WriteFailure::WriteError(write)) => {
            format!("write refused, code {}: {}", write.code, write.message)
        }
        ErrorKind::InsertMany(failure) => {
            let failed: Vec<_> = failure
                .write_errors
                .iter()
                .flatten()
                .map(|e| (e.index, e.code))
                .collect();
            let inserted = failure.inserted_ids().len();
            format!("insert_many: {inserted} inserted, failed (index, code): {failed:?}")
        }
        ErrorKind::Command(command) => format!(
            "command failed: {} ({}): {}",
            command.code, command.code_name, command.message
        ),
        ErrorKind::InvalidArgument { message } => format!("refused before running: {message}"),
        ErrorKind::Bson(error) => format!("not a User: {error}"),
        ErrorKind::Locked { message } => format!("the file is taken: {message}"),
        ErrorKind::Closed => "the client was closed".to_owned(),
        other => format!("something else: {other}"),
    }
}

fn main() -> Result<(), Error> {
    let dir = std::env::temp_dir().join(format!("mfdb-example-errors-{}", std::process::id()));
    std::fs::create_dir_all(&dir)?;
    let path = dir.join("errors.mfdb");
    let client = Client::open(&path)?;
    let db = client.database("app");
    let users = db.collection::<User>("users");
    let ada = User {
        id: 1,
        email: "ada@example.com".into(),
    };
    users.insert_one(&ada).run()?;

    let duplicate = users.insert_one(&ada).run().expect_err("a duplicate _id");
    assert!(matches!(
        &*duplicate.kind,
        ErrorKind::Write(WriteFailure::WriteError(w)) if w.code == 11000
    ));
    println!("{}", explain(&duplicate));

    let batch = [2, 1, 3].map(|id| User {
        id,
        email: format!("u{id}@example.com"),
    });
    let unordered = users.insert_many(&batch).ordered(false).run();
    println!("{}", explain(&unordered.expect_err("one duplicate")));

    let immutable = users
        .update_one(doc! {"_id": 1}, doc! {"$set": {"_id": 9}})
        .run();
    println!("{}", explain(&immutable.expect_err("_id is immutable")));

    let unknown = db.run_command(doc! {"noSuchCommand": 1}).run();
    println!("{}", explain(&unknown.expect_err("no such command")));
    let bad_filter = users.find(doc! {"$bogus": 1}).run();
    println!("{}", explain(&bad_filter.expect_err("unknown operator")));

    let no_operators = users.update_one(doc! {"_id": 1}, doc! {"email": "x"}).run();
    println!("{}", explain(&no_operators.expect_err("not an update")));

    db.collection::<Document>("users")
        .insert_one(doc! {"_id": 7, "name": "no email"})
        .run()?;
    let foreign = users.find_one(doc! {"_id": 7}).run();
    println!("{}", explain(&foreign.expect_err("missing field")));

    let second = Client::open(&path);
    println!("{}", explain(&second.expect_err("one opener per file")));

    client.close()?;
    let closed = users.find_one(doc! {"_id": 1}).run();
    println!("{}", explain(&closed.expect_err("closed")));
    drop((users, db, client));
    let _ = std::fs::remove_dir_all(&dir);
    Ok(())
}
