//! Typed CRUD through the embedded client on a file: insert, find with a filter, sort and
//! projection, update, replace, delete, count, then close and reopen (a closed database is
//! one file). The `mongodb` crate's sync API, with `Client::open(path)` in place of
//! `Client::with_uri_str(uri)`.
//!
//! Run with `cargo run -p engine --example crud`.

use bson::{Document, doc};
use engine::client::{Client, Result};
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct Person {
    #[serde(rename = "_id")]
    id: i32,
    name: String,
    born: i32,
    #[serde(default)]
    navy: bool,
}

fn person(id: i32, name: &str, born: i32) -> Person {
    Person {
        id,
        name: name.into(),
        born,
        navy: false,
    }
}

fn main() -> Result<()> {
    let dir = std::env::temp_dir().join(format!("mfdb-example-crud-{}", std::process::id()));
    let path = dir.join("example.mfdb");
    std::fs::create_dir_all(&dir)?;

    let client = Client::open(&path)?;
    let people = client.database("app").collection::<Person>("people");
    people
        .insert_many([
            person(1, "Ada", 1815),
            person(2, "Grace", 1906),
            person(3, "Edsger", 1930),
        ])
        .run()?;
    let inserted = people.insert_one(person(4, "Barbara", 1939)).run()?;
    println!("inserted {}", inserted.inserted_id);

    let updated = people
        .update_one(doc! {"_id": 2}, doc! {"$set": {"navy": true}})
        .run()?;
    println!(
        "updated: matched {}, modified {}",
        updated.matched_count, updated.modified_count
    );

    println!("born after 1900, youngest first:");
    for person in people
        .find(doc! {"born": {"$gt": 1900}})
        .sort(doc! {"born": -1})
        .run()?
    {
        let person = person?;
        println!("  {} ({})", person.name, person.born);
    }
    // A projection no longer fits the type: read it untyped.
    let names = people
        .clone_with_type::<Document>()
        .find(doc! {})
        .projection(doc! {"_id": 0, "name": 1})
        .run()?
        .collect::<Result<Vec<_>>>()?;
    println!("names: {names:?}");

    let replaced = people
        .replace_one(doc! {"_id": 3}, person(3, "Edsger W. Dijkstra", 1930))
        .run()?;
    println!("replaced {}", replaced.modified_count);
    let deleted = people.delete_one(doc! {"name": "Barbara"}).run()?;
    println!("deleted {}", deleted.deleted_count);
    println!(
        "{} people left, {} born before 1900",
        people.count_documents(doc! {}).run()?,
        people.count_documents(doc! {"born": {"$lt": 1900}}).run()?
    );
    // Closing checkpoints the file to one and releases it (the handles answer Closed).
    client.close()?;

    // Reopened, everything is still there.
    let client = Client::open(&path)?;
    let people = client.database("app").collection::<Person>("people");
    let grace = people.find_one(doc! {"_id": 2}).run()?;
    println!("after reopen: {grace:?}");
    assert_eq!(grace.map(|g| g.navy), Some(true));
    client.close()?;
    let _ = std::fs::remove_dir_all(&dir);
    Ok(())
}
