//! The embedded API in one page: open a file, insert, query, update, delete, close.
//!
//! Run with `cargo run -p engine --example embedded`.

use bson::doc;
use engine::{Database, DbError};

fn main() -> Result<(), DbError> {
    let dir = std::env::temp_dir().join(format!("mfdb-example-{}", std::process::id()));
    std::fs::create_dir_all(&dir).map_err(|e| DbError::new(1, "InternalError", e.to_string()))?;
    let path = dir.join("example.mfdb");

    let db = Database::open(&path)?;
    let people = db.collection("people");
    people.insert_many([
        doc! {"_id": 1, "name": "Ada", "born": 1815},
        doc! {"_id": 2, "name": "Grace", "born": 1906},
        doc! {"_id": 3, "name": "Edsger", "born": 1930},
    ])?;
    people.update_one(doc! {"_id": 2}, doc! {"$set": {"navy": true}})?;
    println!("born after 1900, youngest first:");
    let query = people
        .find(doc! {"born": {"$gt": 1900}})
        .sort(doc! {"born": -1})
        .projection(doc! {"_id": 0, "name": 1});
    for person in query.run()? {
        println!("  {}", person?);
    }
    people.delete_one(doc! {"name": "Edsger"})?;
    println!("{} people left", people.count_documents(doc! {})?);
    db.close()?;

    // Reopened, everything is still there: the closed database is one file.
    let db = Database::open(&path)?;
    let grace = db.collection("people").find_one(doc! {"_id": 2})?;
    println!("after reopen: {grace:?}");
    db.close()?;
    let _ = std::fs::remove_dir_all(&dir);
    Ok(())
}
