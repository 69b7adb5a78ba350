//! An aggregation whose results are decoded into a type of their own
//! (`.with_type::<U>()`), beside the untyped `Cursor<Document>` the same pipeline gives.
//!
//! Run with `cargo run -p engine --example aggregate`.

use bson::doc;
use engine::client::{Client, Result};
use serde::{Deserialize, Serialize};

#[derive(Debug, Serialize, Deserialize)]
struct Order {
    #[serde(rename = "_id")]
    id: u32,
    customer: String,
    total_cents: i64,
}

/// One row of the pipeline's output: not the collection's type.
#[derive(Debug, Deserialize)]
struct Spend {
    #[serde(rename = "_id")]
    customer: String,
    cents: i64,
    orders: i32,
}

fn main() -> Result<()> {
    let client = Client::memory();
    let orders = client.database("shop").collection::<Order>("orders");
    orders
        .insert_many((0..20_u32).map(|i| Order {
            id: i,
            customer: format!("c{}", i % 4),
            total_cents: i64::from(i) * 125,
        }))
        .run()?;

    let pipeline = [
        doc! {"$match": {"total_cents": {"$gt": 0}}},
        doc! {"$group": {
            "_id": "$customer",
            "cents": {"$sum": "$total_cents"},
            "orders": {"$sum": 1},
        }},
        doc! {"$sort": {"cents": -1}},
    ];
    let spend: Vec<Spend> = orders
        .aggregate(pipeline.clone())
        .with_type::<Spend>()
        .run()?
        .collect::<Result<_>>()?;
    for row in &spend {
        println!(
            "{} spent {} cents over {} orders",
            row.customer, row.cents, row.orders
        );
    }
    assert_eq!(spend.len(), 4);

    // Without `with_type` the results are documents.
    let first = orders.aggregate(pipeline).run()?.next().transpose()?;
    println!("as a document: {first:?}");
    Ok(())
}
