//! Typed CRUD through the embedded client, an aggregation into a typed result, threads
//! sharing one client, and errors handled by kind: the `mongodb` crate's sync API, with
//! `Client::open(path)` in place of `Client::with_uri_str(uri)`.
//!
//! Run with `cargo run -p engine --example typed [path]`.

use bson::doc;
use engine::client::{Client, ErrorKind, ReturnDocument, WriteFailure};
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Serialize, Deserialize)]
struct Order {
    #[serde(rename = "_id")]
    id: u32,
    customer: String,
    total_cents: i64,
    shipped: bool,
}

#[derive(Debug, Deserialize)]
struct Spend {
    #[serde(rename = "_id")]
    customer: String,
    cents: i64,
}

fn main() -> Result<(), engine::client::Error> {
    let path = std::env::args().nth(1).map_or_else(
        || std::env::temp_dir().join("typed-example.mfdb"),
        Into::into,
    );
    let client = Client::open(&path)?;
    let orders = client.database("shop").collection::<Order>("orders");
    orders.drop().run()?;

    // Four threads insert at once; every handle is Clone + Send + Sync + 'static.
    let writers: Vec<_> = (0..4_u32)
        .map(|thread| {
            let orders = orders.clone();
            std::thread::spawn(move || {
                let batch = (0..25).map(|i| Order {
                    id: thread * 100 + i,
                    customer: format!("c{}", i % 5),
                    total_cents: i64::from(i) * 150,
                    shipped: false,
                });
                orders
                    .insert_many(batch)
                    .run()
                    .map(|r| r.inserted_ids.len())
            })
        })
        .collect();
    for writer in writers {
        let inserted = writer.join().expect("the writer thread")?;
        println!("a thread inserted {inserted} orders");
    }

    let shipped = orders
        .update_many(
            doc! {"total_cents": {"$gte": 3000}},
            doc! {"$set": {"shipped": true}},
        )
        .run()?;
    println!(
        "shipped {} of {} matched",
        shipped.modified_count, shipped.matched_count
    );

    let next = orders
        .find_one_and_update(doc! {"shipped": false}, doc! {"$set": {"shipped": true}})
        .sort(doc! {"total_cents": -1})
        .return_document(ReturnDocument::After)
        .run()?;
    println!("shipped next: {next:?}");

    for order in orders
        .find(doc! {"customer": "c1"})
        .sort(doc! {"_id": 1})
        .limit(3)
        .run()?
    {
        println!("{:?}", order?);
    }

    let spend = orders
        .aggregate([
            doc! {"$group": {"_id": "$customer", "cents": {"$sum": "$total_cents"}}},
            doc! {"$sort": {"cents": -1}},
        ])
        .with_type::<Spend>()
        .run()?;
    for customer in spend {
        let customer = customer?;
        println!("{} spent {} cents", customer.customer, customer.cents);
    }

    // Errors by kind: a duplicate `_id` is a write error with MongoDB's code.
    let duplicate = Order {
        id: 1,
        customer: "c9".into(),
        total_cents: 0,
        shipped: false,
    };
    match orders.insert_one(&duplicate).run() {
        Err(error) => match *error.kind {
            ErrorKind::Write(WriteFailure::WriteError(write)) if write.code == 11000 => {
                println!("duplicate refused: {}", write.message);
            }
            other => println!("another failure: {other}"),
        },
        Ok(_) => println!("unexpectedly inserted"),
    }
    // And a second opener of the same file is refused while this one holds it.
    if let Err(error) = Client::open(&path)
        && let ErrorKind::Locked { message } = &*error.kind
    {
        println!("second opener refused: {message}");
    }

    println!("{} orders", orders.count_documents(doc! {}).run()?);
    client.close()
}
