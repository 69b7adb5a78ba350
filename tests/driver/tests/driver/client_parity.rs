//! One test suite, written once in `suite!`, run twice: against the embedded
//! `engine::client::Client` and against the server through the real `mongodb` crate. Each
//! function returns a transcript (every result and error kind, field by field); the tests
//! assert that the two transcripts are identical line for line: the proof that the two
//! APIs are one, so code moves between them by changing imports and one constructor.

use crate::harness::TestServer;
use serde::{Deserialize, Serialize};

/// The typed documents of the suite.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Person {
    #[serde(rename = "_id")]
    pub id: i32,
    pub name: String,
    pub age: i32,
    pub tags: Vec<String>,
}

/// An aggregation result decoded through `with_type`.
#[derive(Debug, PartialEq, Serialize, Deserialize)]
pub struct AgeGroup {
    #[serde(rename = "_id")]
    pub age: i32,
    pub n: i32,
}

fn person(id: i32, name: &str, age: i32) -> Person {
    Person {
        id,
        name: name.to_owned(),
        age,
        tags: vec![format!("t{}", id % 3)],
    }
}

/// The suite's body; the importing module supplies `Client`, `Error`, `ErrorKind`,
/// `WriteFailure` and `ReturnDocument` from one API or the other.
macro_rules! suite {
    () => {
        use super::{AgeGroup, Person, person};
        use bson::{Bson, Document, doc};

        fn kind(error: &Error) -> String {
            match &*error.kind {
                ErrorKind::Write(WriteFailure::WriteError(w)) => {
                    format!(
                        "Write({}, {:?}, {}, {:?})",
                        w.code, w.code_name, w.message, w.details
                    )
                }
                ErrorKind::Command(c) => {
                    format!("Command({}, {}, {})", c.code, c.code_name, c.message)
                }
                ErrorKind::InsertMany(m) => {
                    let errors: Vec<_> = m
                        .write_errors
                        .iter()
                        .flatten()
                        .map(|w| (w.index, w.code, w.message.clone()))
                        .collect();
                    format!("InsertMany({errors:?})")
                }
                ErrorKind::BulkWrite(b) => {
                    let mut errors: Vec<_> = b
                        .write_errors
                        .iter()
                        .map(|(i, w)| (*i, w.code, w.message.clone()))
                        .collect();
                    errors.sort();
                    let partial = b.partial_result.as_ref().map(|p| match p {
                        PartialBulkWriteResult::Summary(s) => summary(s),
                        PartialBulkWriteResult::Verbose(v) => verbose_text(v),
                        // Ours is `non_exhaustive`; the driver's is not.
                        #[allow(unreachable_patterns)]
                        _ => "unexpected partial result".to_owned(),
                    });
                    format!("BulkWrite({errors:?}, {partial:?})")
                }
                ErrorKind::InvalidArgument { message, .. } => format!("InvalidArgument({message})"),
                ErrorKind::Bson(_) => "Bson".to_owned(),
                other => format!("unexpected {other:?}"),
            }
        }

        fn summary(s: &SummaryBulkWriteResult) -> String {
            format!(
                "inserted {}, matched {}, modified {}, upserted {}, deleted {}",
                s.inserted_count,
                s.matched_count,
                s.modified_count,
                s.upserted_count,
                s.deleted_count
            )
        }

        /// Each model's result, by position, after the totals.
        fn verbose_text(v: &VerboseBulkWriteResult) -> String {
            let mut each: Vec<String> = Vec::new();
            for (i, r) in &v.insert_results {
                each.push(format!("{i}: insert {}", r.inserted_id));
            }
            for (i, r) in &v.update_results {
                each.push(format!(
                    "{i}: update {} {} {:?}",
                    r.matched_count, r.modified_count, r.upserted_id
                ));
            }
            for (i, r) in &v.delete_results {
                each.push(format!("{i}: delete {}", r.deleted_count));
            }
            each.sort_by_key(|e| e.split(':').next().and_then(|n| n.parse::<usize>().ok()));
            format!("{} [{}]", summary(&v.summary), each.join("; "))
        }

        fn line<T: std::fmt::Debug>(log: &mut Vec<String>, what: &str, result: Result<T, Error>) {
            log.push(match result {
                Ok(value) => format!("{what}: ok {value:?}"),
                Err(error) => format!("{what}: err {}", kind(&error)),
            });
        }

        fn sorted_ids(ids: &std::collections::HashMap<usize, Bson>) -> Vec<(usize, String)> {
            let mut ids: Vec<_> = ids
                .iter()
                .map(|(i, id)| match id {
                    Bson::ObjectId(_) => (*i, "ObjectId".to_owned()),
                    other => (*i, format!("{other:?}")),
                })
                .collect();
            ids.sort();
            ids
        }

        /// Typed CRUD: every write's result struct and every read's documents.
        pub fn crud(client: &Client, db: &str) -> Vec<String> {
            let mut log = Vec::new();
            let people = client.database(db).collection::<Person>("people");
            let _ = people.drop().run();
            let r = people.insert_one(person(1, "Ada", 36)).run();
            line(&mut log, "insert_one", r.map(|r| r.inserted_id));
            let r = people.insert_one(person(1, "again", 1)).run();
            line(&mut log, "insert_one duplicate", r.map(|r| r.inserted_id));
            let many: Vec<Person> = (2..=20)
                .map(|i| person(i, &format!("p{i}"), 20 + i % 5))
                .collect();
            let r = people.insert_many(&many).run();
            line(
                &mut log,
                "insert_many",
                r.map(|r| sorted_ids(&r.inserted_ids)),
            );

            let r = people
                .find(doc! {"age": {"$gte": 22}})
                .sort(doc! {"age": -1, "_id": 1})
                .skip(1)
                .limit(6)
                .batch_size(2)
                .run()
                .and_then(|c| c.collect::<Result<Vec<_>, _>>());
            line(&mut log, "find typed", r);
            let untyped = people.clone_with_type::<Document>();
            let r = untyped
                .find(doc! {"_id": {"$lt": 5}})
                .projection(doc! {"name": 1, "_id": 0})
                .run()
                .and_then(|c| c.collect::<Result<Vec<_>, _>>());
            line(&mut log, "find projected", r);
            line(&mut log, "find_one", people.find_one(doc! {"_id": 3}).run());
            line(
                &mut log,
                "find_one none",
                people.find_one(doc! {"_id": 99}).run(),
            );
            let r = people
                .find_one(doc! {"age": 21})
                .sort(doc! {"_id": -1})
                .run();
            line(&mut log, "find_one sorted", r);

            let r = people
                .update_one(doc! {"_id": 2}, doc! {"$set": {"age": 50}})
                .run();
            line(
                &mut log,
                "update_one",
                r.map(|r| (r.matched_count, r.modified_count, r.upserted_id)),
            );
            let r = people
                .update_many(doc! {"age": {"$lt": 23}}, doc! {"$inc": {"age": 1}})
                .run();
            line(
                &mut log,
                "update_many",
                r.map(|r| (r.matched_count, r.modified_count, r.upserted_id)),
            );
            let r = people
                .update_one(
                    doc! {"_id": 100},
                    doc! {"$set": {"name": "new", "age": 1, "tags": []}},
                )
                .upsert(true)
                .run();
            line(
                &mut log,
                "update upsert",
                r.map(|r| (r.matched_count, r.modified_count, r.upserted_id)),
            );
            let r = people
                .update_one(doc! {"_id": 3}, doc! {"$set": {"tags.$[t]": "x"}})
                .array_filters([doc! {"t": "t0"}])
                .run();
            line(
                &mut log,
                "update array_filters",
                r.map(|r| r.modified_count),
            );
            let pipeline = vec![doc! {"$set": {"name": {"$concat": ["$name", "!"]}}}];
            let r = people
                .update_many(doc! {"_id": {"$in": [4, 5]}}, pipeline)
                .run();
            line(
                &mut log,
                "update pipeline",
                r.map(|r| (r.matched_count, r.modified_count)),
            );
            let r = people
                .replace_one(doc! {"_id": 6}, person(6, "six", 6))
                .run();
            line(
                &mut log,
                "replace_one",
                r.map(|r| (r.matched_count, r.modified_count, r.upserted_id)),
            );
            let r = people
                .replace_one(doc! {"_id": 101}, person(101, "up", 1))
                .upsert(true)
                .run();
            line(
                &mut log,
                "replace upsert",
                r.map(|r| (r.matched_count, r.upserted_id)),
            );
            line(
                &mut log,
                "delete_one",
                people
                    .delete_one(doc! {"_id": 7})
                    .run()
                    .map(|r| r.deleted_count),
            );
            let r = people.delete_many(doc! {"age": {"$gte": 24}}).run();
            line(&mut log, "delete_many", r.map(|r| r.deleted_count));

            let r = people
                .find_one_and_update(doc! {"_id": 8}, doc! {"$inc": {"age": 10}})
                .return_document(ReturnDocument::After)
                .run();
            line(&mut log, "find_one_and_update after", r);
            let r = people
                .find_one_and_update(doc! {"_id": 8}, doc! {"$inc": {"age": 1}})
                .run();
            line(&mut log, "find_one_and_update before", r);
            let r = people
                .find_one_and_update(
                    doc! {"_id": 200},
                    doc! {"$set": {"name": "z", "age": 0, "tags": []}},
                )
                .upsert(true)
                .return_document(ReturnDocument::After)
                .run();
            line(&mut log, "find_one_and_update upsert", r);
            let r = people
                .find_one_and_replace(doc! {"_id": 9}, person(9, "nine", 9))
                .return_document(ReturnDocument::After)
                .run();
            line(&mut log, "find_one_and_replace", r);
            let r = untyped
                .find_one_and_delete(doc! {"age": {"$lt": 30}})
                .sort(doc! {"_id": -1})
                .projection(doc! {"name": 1})
                .run();
            line(&mut log, "find_one_and_delete", r);

            line(
                &mut log,
                "count_documents",
                people.count_documents(doc! {"age": {"$lt": 30}}).run(),
            );
            line(
                &mut log,
                "count skip limit",
                people.count_documents(doc! {}).skip(2).limit(3).run(),
            );
            line(
                &mut log,
                "estimated_document_count",
                people.estimated_document_count().run(),
            );
            line(
                &mut log,
                "distinct",
                people.distinct("age", doc! {"_id": {"$lt": 50}}).run(),
            );
            let r = people
                .aggregate([
                    doc! {"$group": {"_id": "$age", "n": {"$sum": 1}}},
                    doc! {"$sort": {"_id": 1}},
                ])
                .with_type::<AgeGroup>()
                .run()
                .and_then(|c| c.collect::<Result<Vec<_>, _>>());
            line(&mut log, "aggregate with_type", r);
            let r = people
                .aggregate([
                    doc! {"$match": {"_id": {"$lt": 4}}},
                    doc! {"$project": {"age": 1}},
                ])
                .batch_size(1)
                .run()
                .and_then(|c| c.collect::<Result<Vec<_>, _>>());
            line(&mut log, "aggregate documents", r);
            log
        }

        /// Generated `_id`s, ordered and unordered `insert_many` failures, and the checks
        /// the driver makes before sending.
        pub fn errors(client: &Client, db: &str) -> Vec<String> {
            let mut log = Vec::new();
            let coll = client.database(db).collection::<Document>("errors");
            let _ = coll.drop().run();
            let r = coll.insert_one(doc! {"a": 1}).run();
            line(
                &mut log,
                "generated id",
                r.map(|r| matches!(r.inserted_id, Bson::ObjectId(_))),
            );
            let docs = [
                doc! {"_id": 1},
                doc! {"_id": 1},
                doc! {"_id": 2},
                doc! {"a": 3},
            ];
            let r = coll.insert_many(docs.clone()).run();
            line(
                &mut log,
                "insert_many ordered",
                r.map(|r| sorted_ids(&r.inserted_ids)),
            );
            let r = coll.insert_many(docs).ordered(false).run();
            line(
                &mut log,
                "insert_many unordered",
                r.map(|r| sorted_ids(&r.inserted_ids)),
            );
            line(&mut log, "count", coll.count_documents(doc! {}).run());
            // The fields the kinds do not carry are in the reply the error keeps.
            let reply = |error: &Error| {
                let reply = Document::try_from(error.server_response()?.as_ref()).ok()?;
                let errors = reply.get_array("writeErrors").ok()?;
                let first = errors.first()?.as_document()?;
                Some((
                    first.get("index").cloned(),
                    first.get("keyPattern").cloned(),
                    first.get("keyValue").cloned(),
                ))
            };
            // (The driver's insert_one drops the reply when it turns the insert's error
            // into a Write error; ours keeps it, so an update shows the fields.)
            let r = client
                .database(db)
                .run_command(doc! {
                    "createIndexes": "errors",
                    "indexes": [{"key": {"u": 1}, "name": "u_1", "unique": true, "sparse": true}],
                })
                .run();
            line(&mut log, "unique index", r.map(|r| r.get("ok").cloned()));
            let r = coll
                .update_one(doc! {"_id": 1}, doc! {"$set": {"u": 1}})
                .run();
            line(&mut log, "set u", r.map(|r| r.modified_count));
            let r = coll
                .update_one(doc! {"_id": 2}, doc! {"$set": {"u": 1}})
                .run();
            log.push(format!(
                "duplicate's reply: {:?}",
                r.err().map(|e| (kind(&e), reply(&e)))
            ));
            let r = coll.delete_one(doc! {"$bad": 1}).run();
            log.push(format!(
                "command error's reply kept: {:?}",
                r.err().map(|e| e.server_response().is_some())
            ));
            let r = coll.insert_many(Vec::<Document>::new()).run();
            log.push(format!(
                "refused before sending, no reply: {:?}",
                r.err().map(|e| e.server_response().is_some())
            ));
            let r = coll.insert_many(Vec::<Document>::new()).run();
            line(
                &mut log,
                "insert_many empty",
                r.map(|r| r.inserted_ids.len()),
            );
            let r = coll.update_one(doc! {}, doc! {"a": 2}).run();
            line(
                &mut log,
                "update without operators",
                r.map(|r| r.matched_count),
            );
            let r = coll.update_many(doc! {}, doc! {}).run();
            line(&mut log, "update empty", r.map(|r| r.matched_count));
            let r = coll.replace_one(doc! {}, doc! {"$set": {"a": 2}}).run();
            line(
                &mut log,
                "replace with operators",
                r.map(|r| r.matched_count),
            );
            let r = coll.find_one_and_update(doc! {}, doc! {"a": 2}).run();
            line(&mut log, "find_one_and_update without operators", r);
            let r = coll
                .update_one(doc! {"_id": 2}, doc! {"$set": {"_id": 3}})
                .run();
            line(&mut log, "update of _id", r.map(|r| r.matched_count));
            let r = coll
                .update_one(doc! {"_id": 2}, doc! {"$inc": {"x": "s"}})
                .run();
            line(&mut log, "update type mismatch", r.map(|r| r.matched_count));
            let r = coll.find(doc! {"$bad": 1}).run().map(|_| ());
            line(&mut log, "find bad operator", r);
            line(
                &mut log,
                "find_one bad operator",
                coll.find_one(doc! {"_id": {"$bad": 1}}).run(),
            );
            let r = coll.aggregate([doc! {"$nope": {}}]).run().map(|_| ());
            line(&mut log, "aggregate unknown stage", r);
            let r = coll
                .find_one_and_update(doc! {"_id": 2}, doc! {"$set": {"_id": 9}})
                .run();
            line(&mut log, "find_one_and_update of _id", r);
            let typed = coll.clone_with_type::<Person>();
            let r = typed
                .find(doc! {})
                .run()
                .and_then(|c| c.collect::<Result<Vec<_>, _>>());
            line(&mut log, "typed decode of a foreign document", r);
            line(
                &mut log,
                "typed find_one decode",
                typed.find_one(doc! {"_id": 1}).run(),
            );
            log
        }

        /// Collections and commands.
        pub fn catalog(client: &Client, db: &str) -> Vec<String> {
            let mut log = Vec::new();
            let database = client.database(db);
            line(&mut log, "drop database", database.drop().run());
            line(&mut log, "create", database.create_collection("a").run());
            line(
                &mut log,
                "create again",
                database.create_collection("a").run(),
            );
            line(&mut log, "create b", database.create_collection("b").run());
            let names = database.list_collection_names().run().map(|mut n| {
                n.sort();
                n
            });
            line(&mut log, "list_collection_names", names);
            let r = database
                .list_collection_names()
                .filter(doc! {"name": "b"})
                .run();
            line(&mut log, "list filtered", r);
            line(
                &mut log,
                "drop a",
                database.collection::<Document>("a").drop().run(),
            );
            line(
                &mut log,
                "drop missing",
                database.collection::<Document>("zz").drop().run(),
            );
            let r = database.list_collection_names().run();
            line(&mut log, "after drop", r);
            let r = database.run_command(doc! {"ping": 1}).run();
            line(
                &mut log,
                "run_command ping",
                r.map(|r| r.get("ok").cloned()),
            );
            let r = database.run_command(doc! {"count": "b"}).run();
            line(
                &mut log,
                "run_command count",
                r.map(|r| r.get("n").cloned()),
            );
            let r = database.run_command(doc! {"noSuchCommand": 1}).run();
            line(&mut log, "run_command unknown", r.map(|_| ()));
            let r = database.run_command(doc! {"create": "b"}).run();
            line(&mut log, "run_command failing", r.map(|_| ()));
            log
        }

        /// Index helpers: create (default and given names, options, several at once, the
        /// same again, a conflicting one), a unique index refusing a duplicate, listing
        /// (names, keys, options, TTL), dropping (one, a missing one, all).
        pub fn indexes(client: &Client, db: &str) -> Vec<String> {
            use std::time::Duration;
            let mut log = Vec::new();
            let coll = client.database(db).collection::<Document>("ix");
            line(&mut log, "drop", coll.drop().run());
            line(
                &mut log,
                "insert",
                coll.insert_one(doc! {"_id": 1, "a": 1, "b": "x"})
                    .run()
                    .map(|r| r.inserted_id),
            );
            let model = IndexModel::builder().keys(doc! {"a": 1, "b": -1}).build();
            line(
                &mut log,
                "create default name",
                coll.create_index(model.clone()).run().map(|r| r.index_name),
            );
            line(
                &mut log,
                "create same again",
                coll.create_index(model).run().map(|r| r.index_name),
            );
            let unique = IndexModel::builder()
                .keys(doc! {"b": 1})
                .options(
                    IndexOptions::builder()
                        .name("b_unique".to_string())
                        .unique(true)
                        .build(),
                )
                .build();
            line(
                &mut log,
                "create unique",
                coll.create_index(unique).run().map(|r| r.index_name),
            );
            let r = coll.insert_one(doc! {"_id": 2, "b": "x"}).run();
            line(&mut log, "duplicate under unique", r.map(|r| r.inserted_id));
            let several = vec![
                IndexModel::builder().keys(doc! {"c": 1}).build(),
                IndexModel::builder()
                    .keys(doc! {"when": 1})
                    .options(
                        IndexOptions::builder()
                            .expire_after(Duration::from_secs(3600))
                            .build(),
                    )
                    .build(),
                IndexModel::builder()
                    .keys(doc! {"d": 1})
                    .options(IndexOptions::builder().sparse(true).build())
                    .build(),
                IndexModel::builder()
                    .keys(doc! {"e": 1})
                    .options(
                        IndexOptions::builder()
                            .partial_filter_expression(doc! {"e": {"$gt": 0}})
                            .build(),
                    )
                    .build(),
            ];
            line(
                &mut log,
                "create_indexes",
                coll.create_indexes(several).run().map(|r| r.index_names),
            );
            let conflicting = IndexModel::builder()
                .keys(doc! {"c": 1})
                .options(
                    IndexOptions::builder()
                        .name("other_name".to_string())
                        .build(),
                )
                .build();
            line(
                &mut log,
                "create conflicting",
                coll.create_index(conflicting).run().map(|r| r.index_name),
            );
            let names = coll.list_index_names().run().map(|mut n| {
                n.sort();
                n
            });
            line(&mut log, "list_index_names", names);
            let listed = coll.list_indexes().run().map(|cursor| {
                let mut out: Vec<String> = cursor
                    .map(|m| {
                        let m = m.expect("index model");
                        let o = m.options.clone().unwrap_or_default();
                        format!(
                            "{:?} {:?} unique={:?} sparse={:?} ttl={:?} partial={:?}",
                            m.keys,
                            o.name,
                            o.unique,
                            o.sparse,
                            o.expire_after,
                            o.partial_filter_expression
                        )
                    })
                    .collect();
                out.sort();
                out
            });
            line(&mut log, "list_indexes", listed);
            line(&mut log, "drop_index", coll.drop_index("c_1").run());
            line(
                &mut log,
                "drop missing index",
                coll.drop_index("nope_1").run(),
            );
            line(&mut log, "drop_indexes", coll.drop_indexes().run());
            line(
                &mut log,
                "after drop_indexes",
                coll.list_index_names().run(),
            );
            log
        }

        /// `bulk_write` with `verbose_results`: each model's result beside the totals, and
        /// a verbose partial result when models fail (ordered and unordered).
        pub fn bulk_verbose(client: &Client, db: &str) -> Vec<String> {
            let mut log = Vec::new();
            let coll = client.database(db).collection::<Document>("bulk_verbose");
            let _ = coll.drop().run();
            let ns = coll.namespace();
            let insert = |id: i32| -> WriteModel {
                InsertOneModel::builder()
                    .namespace(ns.clone())
                    .document(doc! {"_id": id, "n": id})
                    .build()
                    .into()
            };
            let models = vec![
                insert(1),
                insert(2),
                insert(3),
                UpdateOneModel::builder()
                    .namespace(ns.clone())
                    .filter(doc! {"_id": 1})
                    .update(doc! {"$inc": {"n": 10}})
                    .build()
                    .into(),
                UpdateManyModel::builder()
                    .namespace(ns.clone())
                    .filter(doc! {"n": {"$lt": 5}})
                    .update(doc! {"$set": {"small": true}})
                    .build()
                    .into(),
                UpdateOneModel::builder()
                    .namespace(ns.clone())
                    .filter(doc! {"_id": 9})
                    .update(doc! {"$set": {"n": 9}})
                    .upsert(true)
                    .build()
                    .into(),
                ReplaceOneModel::builder()
                    .namespace(ns.clone())
                    .filter(doc! {"_id": 2})
                    .replacement(doc! {"n": 20})
                    .build()
                    .into(),
                UpdateOneModel::builder()
                    .namespace(ns.clone())
                    .filter(doc! {"_id": 42})
                    .update(doc! {"$set": {"n": 1}})
                    .build()
                    .into(),
                DeleteOneModel::builder()
                    .namespace(ns.clone())
                    .filter(doc! {"_id": 3})
                    .build()
                    .into(),
                DeleteManyModel::builder()
                    .namespace(ns.clone())
                    .filter(doc! {"n": {"$gt": 100}})
                    .build()
                    .into(),
            ];
            let r = run_bulk_verbose(client, models, true);
            line(&mut log, "verbose mixed", r.map(|v| verbose_text(&v)));
            for ordered in [true, false] {
                let models = vec![insert(30), insert(1), insert(31)];
                let r = run_bulk_verbose(client, models, ordered);
                line(
                    &mut log,
                    &format!("verbose duplicate ordered={ordered}"),
                    r.map(|v| verbose_text(&v)),
                );
            }
            log
        }

        /// `bulk_write` over two namespaces: the summary of mixed models, ordered and
        /// unordered failures by model index with what was written, and the driver's
        /// check of an empty call.
        pub fn bulk(client: &Client, db: &str) -> Vec<String> {
            let mut log = Vec::new();
            let people = client.database(db).collection::<Person>("bulk_people");
            let notes = client.database(db).collection::<Document>("bulk_notes");
            let _ = people.drop().run();
            let _ = notes.drop().run();
            let (p, n) = (people.namespace(), notes.namespace());
            let insert = |ns: &Namespace, document: Document| -> WriteModel {
                InsertOneModel::builder()
                    .namespace(ns.clone())
                    .document(document)
                    .build()
                    .into()
            };
            // (`insert_one_model` and `replace_one_model` are the async driver's only.)
            let typed = |id: i32, name: &str, age: i32| -> WriteModel {
                let document = bson::serialize_to_document(&person(id, name, age));
                insert(&p, document.expect("a document"))
            };
            let update = |filter: Document, update: Document| -> WriteModel {
                UpdateOneModel::builder()
                    .namespace(p.clone())
                    .filter(filter)
                    .update(update)
                    .build()
                    .into()
            };
            let models = vec![
                typed(1, "Ada", 36),
                typed(2, "Bob", 20),
                insert(&n, doc! {"_id": 1, "text": "hello"}),
                update(doc! {"_id": 1}, doc! {"$inc": {"age": 1}}),
                UpdateManyModel::builder()
                    .namespace(p.clone())
                    .filter(doc! {})
                    .update(doc! {"$push": {"tags": "bulk"}})
                    .build()
                    .into(),
                UpdateOneModel::builder()
                    .namespace(p.clone())
                    .filter(doc! {"_id": 3})
                    .update(doc! {"$set": {"name": "Cy", "age": 30, "tags": []}})
                    .upsert(true)
                    .build()
                    .into(),
                ReplaceOneModel::builder()
                    .namespace(p.clone())
                    .filter(doc! {"_id": 2})
                    .replacement(bson::serialize_to_document(&person(2, "Bo", 21)).expect("doc"))
                    .build()
                    .into(),
                DeleteOneModel::builder()
                    .namespace(n.clone())
                    .filter(doc! {"_id": 1})
                    .build()
                    .into(),
                DeleteManyModel::builder()
                    .namespace(p.clone())
                    .filter(doc! {"age": {"$gt": 100}})
                    .build()
                    .into(),
                update(doc! {"_id": 99}, doc! {"$set": {"x": 1}}),
            ];
            let r = run_bulk(client, models, true);
            line(&mut log, "bulk_write mixed", r.map(|s| summary(&s)));
            let r = people
                .find(doc! {})
                .sort(doc! {"_id": 1})
                .run()
                .and_then(|c| c.collect::<Result<Vec<_>, _>>());
            line(&mut log, "after", r);
            line(&mut log, "notes", notes.count_documents(doc! {}).run());
            let models = vec![typed(4, "D", 4), typed(1, "dup", 1), typed(5, "E", 5)];
            let r = run_bulk(client, models, true);
            line(&mut log, "ordered duplicate", r.map(|s| summary(&s)));
            let models = vec![
                typed(1, "dup", 1),
                typed(6, "F", 6),
                update(doc! {"_id": 6}, doc! {"$set": {"_id": 7}}),
                typed(8, "H", 8),
            ];
            let r = run_bulk(client, models, false);
            line(&mut log, "unordered failures", r.map(|s| summary(&s)));
            let r = run_bulk(client, vec![typed(1, "dup", 1)], true);
            line(&mut log, "nothing written", r.map(|s| summary(&s)));
            let r = run_bulk(client, Vec::new(), true);
            line(&mut log, "empty", r.map(|s| summary(&s)));
            line(&mut log, "count", people.count_documents(doc! {}).run());
            log
        }

        /// `insert_many` past `maxWriteBatchSize`: split into two batches, the failure's
        /// index counted across them.
        pub fn batches(client: &Client, db: &str) -> Vec<String> {
            let mut log = Vec::new();
            let coll = client.database(db).collection::<Document>("batches");
            let _ = coll.drop().run();
            let r = coll
                .insert_many((0..100_003).map(|i| doc! {"_id": i}))
                .run();
            line(
                &mut log,
                "insert_many 100,003",
                r.map(|r| r.inserted_ids.len()),
            );
            let r = coll
                .insert_many(
                    (100_003..200_010).map(|i| doc! {"_id": if i == 200_008 { 5 } else { i }}),
                )
                .run();
            line(
                &mut log,
                "insert_many with a late duplicate",
                r.map(|r| r.inserted_ids.len()),
            );
            line(&mut log, "count", coll.estimated_document_count().run());
            log
        }
    };
}

mod embedded {
    use engine::client::{
        Client, DeleteManyModel, DeleteOneModel, Error, ErrorKind, IndexModel, IndexOptions,
        InsertOneModel, Namespace, PartialBulkWriteResult, ReplaceOneModel, ReturnDocument,
        SummaryBulkWriteResult, UpdateManyModel, UpdateOneModel, VerboseBulkWriteResult,
        WriteFailure, WriteModel,
    };

    fn run_bulk(
        client: &Client,
        models: Vec<WriteModel>,
        ordered: bool,
    ) -> Result<SummaryBulkWriteResult, Error> {
        client.bulk_write(models).ordered(ordered).run()
    }

    fn run_bulk_verbose(
        client: &Client,
        models: Vec<WriteModel>,
        ordered: bool,
    ) -> Result<VerboseBulkWriteResult, Error> {
        client
            .bulk_write(models)
            .verbose_results()
            .ordered(ordered)
            .run()
    }

    suite!();
}

mod driver {
    use mongodb::error::{
        BulkWriteError, Error, ErrorKind, PartialBulkWriteResult, WriteError, WriteFailure,
    };
    use mongodb::options::{
        DeleteManyModel, DeleteOneModel, IndexOptions, InsertOneModel, ReplaceOneModel,
        ReturnDocument, UpdateManyModel, UpdateOneModel, WriteModel,
    };
    use mongodb::results::{SummaryBulkWriteResult, VerboseBulkWriteResult};
    use mongodb::sync::Client;
    use mongodb::{IndexModel, Namespace};
    use std::collections::HashMap;

    /// The server answers with MongoDB 7.0's wire version, which has no `bulkWrite`
    /// command, so the driver refuses its own `bulk_write` (checked here). The remote
    /// side then runs the models as the separate calls (`insert_one`, `update_one`, ...)
    /// an application on 7.0 makes, one by one, and gathers the driver's own result and
    /// error types from them; an empty call is the driver's own check.
    fn run_bulk(
        client: &Client,
        models: Vec<WriteModel>,
        ordered: bool,
    ) -> Result<SummaryBulkWriteResult, Error> {
        if models.is_empty() {
            return client.bulk_write(models).ordered(ordered).run();
        }
        run_models(client, models, ordered, false).map(|v| v.summary)
    }

    fn run_bulk_verbose(
        client: &Client,
        models: Vec<WriteModel>,
        ordered: bool,
    ) -> Result<VerboseBulkWriteResult, Error> {
        run_models(client, models, ordered, true)
    }

    /// The separate calls standing for a bulk write (see `run_bulk`), each model's result
    /// kept, the partial result verbose or not as asked.
    fn run_models(
        client: &Client,
        models: Vec<WriteModel>,
        ordered: bool,
        verbose: bool,
    ) -> Result<VerboseBulkWriteResult, Error> {
        let refused = client.bulk_write(models.clone()).ordered(ordered).run();
        let refused = refused.expect_err("bulkWrite needs MongoDB 8.0");
        assert!(
            matches!(*refused.kind, ErrorKind::IncompatibleServer { .. }),
            "{refused:?}"
        );
        let mut summary = SummaryBulkWriteResult::default();
        let mut each = VerboseBulkWriteResult::default();
        let mut write_errors: HashMap<usize, WriteError> = HashMap::new();
        let mut succeeded = 0;
        let collection = |ns: &Namespace| {
            client
                .database(&ns.db)
                .collection::<bson::Document>(&ns.coll)
        };
        let counts = |s: &mut SummaryBulkWriteResult, r: mongodb::results::UpdateResult| {
            let count = |n: u64| i64::try_from(n).expect("count");
            s.matched_count += count(r.matched_count);
            s.modified_count += count(r.modified_count);
            s.upserted_count += i64::from(r.upserted_id.is_some());
        };
        for (index, model) in models.into_iter().enumerate() {
            let mut updated = |s: &mut SummaryBulkWriteResult,
                               r: mongodb::results::UpdateResult| {
                counts(s, r.clone());
                each.update_results.insert(index, r);
            };
            let outcome = match model {
                WriteModel::InsertOne(m) => collection(&m.namespace)
                    .insert_one(m.document)
                    .run()
                    .map(|r| {
                        summary.inserted_count += 1;
                        each.insert_results.insert(index, r);
                    }),
                WriteModel::UpdateOne(m) => collection(&m.namespace)
                    .update_one(m.filter, m.update)
                    .upsert(m.upsert.unwrap_or(false))
                    .run()
                    .map(|r| updated(&mut summary, r)),
                WriteModel::UpdateMany(m) => collection(&m.namespace)
                    .update_many(m.filter, m.update)
                    .upsert(m.upsert.unwrap_or(false))
                    .run()
                    .map(|r| updated(&mut summary, r)),
                WriteModel::ReplaceOne(m) => collection(&m.namespace)
                    .replace_one(m.filter, m.replacement)
                    .upsert(m.upsert.unwrap_or(false))
                    .run()
                    .map(|r| updated(&mut summary, r)),
                WriteModel::DeleteOne(m) => collection(&m.namespace)
                    .delete_one(m.filter)
                    .run()
                    .map(|r| {
                        summary.deleted_count += i64::try_from(r.deleted_count).expect("n");
                        each.delete_results.insert(index, r);
                    }),
                WriteModel::DeleteMany(m) => collection(&m.namespace)
                    .delete_many(m.filter)
                    .run()
                    .map(|r| {
                        summary.deleted_count += i64::try_from(r.deleted_count).expect("n");
                        each.delete_results.insert(index, r);
                    }),
                other => panic!("a model the suite does not use: {other:?}"),
            };
            match outcome {
                Ok(()) => succeeded += 1,
                Err(error) => match *error.kind {
                    ErrorKind::Write(WriteFailure::WriteError(w)) => {
                        write_errors.insert(index, w);
                        if ordered {
                            break;
                        }
                    }
                    _ => return Err(error),
                },
            }
        }
        each.summary = summary;
        if write_errors.is_empty() {
            return Ok(each);
        }
        let mut error = BulkWriteError::default();
        error.write_errors = write_errors;
        error.partial_result = (succeeded > 0).then(|| {
            if verbose {
                PartialBulkWriteResult::Verbose(each)
            } else {
                PartialBulkWriteResult::Summary(each.summary)
            }
        });
        Err(ErrorKind::BulkWrite(error).into())
    }

    suite!();
}

fn assert_same(ours: &[String], theirs: &[String]) {
    for (ours, theirs) in ours.iter().zip(theirs) {
        assert_eq!(ours, theirs, "embedded (left) and driver (right) differ");
        assert!(!ours.contains("unexpected"), "{ours}");
    }
    assert_eq!(ours.len(), theirs.len());
}

fn both(
    run: fn(&embedded_client::Client, &str) -> Vec<String>,
    remote: fn(&mongodb::sync::Client, &str) -> Vec<String>,
) {
    let server = TestServer::start(&[]);
    let theirs = remote(&server.client(), "parity");
    let ours = run(&embedded_client::Client::memory(), "parity");
    assert_same(&ours, &theirs);
}

use engine::client as embedded_client;

#[test]
fn typed_crud_answers_alike_embedded_and_through_the_driver() {
    both(embedded::crud, driver::crud);
}

#[test]
fn index_helpers_answer_alike_embedded_and_through_the_driver() {
    both(embedded::indexes, driver::indexes);
}

#[test]
fn verbose_bulk_results_answer_as_the_separate_calls_through_the_driver() {
    both(embedded::bulk_verbose, driver::bulk_verbose);
}

#[test]
fn errors_have_the_same_kinds_embedded_and_through_the_driver() {
    both(embedded::errors, driver::errors);
}

#[test]
fn collections_and_commands_answer_alike_embedded_and_through_the_driver() {
    both(embedded::catalog, driver::catalog);
}

#[test]
fn bulk_write_answers_as_the_separate_calls_through_the_driver() {
    both(embedded::bulk, driver::bulk);
}

#[test]
fn insert_many_splits_batches_as_the_driver_does() {
    both(embedded::batches, driver::batches);
}

#[test]
fn a_typed_document_round_trips_through_a_file() {
    let path = TestServer::temp_db();
    let client = embedded_client::Client::open(&path).expect("open");
    let people = client.database("app").collection::<Person>("people");
    let ada = person(1, "Ada", 36);
    people.insert_one(&ada).run().expect("insert");
    client.close().expect("close");
    drop(people);
    drop(client);
    let client = embedded_client::Client::open(&path).expect("reopen");
    let people = client.database("app").collection::<Person>("people");
    let found = people
        .find_one(bson::doc! {"_id": 1})
        .run()
        .expect("find_one");
    assert_eq!(found, Some(ada));
    let second = embedded_client::Client::open(&path).expect_err("the file is locked");
    assert!(
        matches!(*second.kind, embedded_client::ErrorKind::Locked { .. }),
        "{second:?}"
    );
    client.close().expect("close");
    let _ = std::fs::remove_file(&path);
}
