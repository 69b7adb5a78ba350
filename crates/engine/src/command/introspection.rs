//! listCommands: every command of the table, with the fields mongod 7.0 gives each
//! (`help`, `requiresAuth`, `secondaryOk`, `adminOnly`, `apiVersions`,
//! `deprecatedApiVersions`), in name order.

use super::{COMMANDS, Request};
use crate::engine::Engine;
use crate::error::Error;
use bson::{Bson, Document, doc};

/// The commands of mongod's Stable API version 1 that this server answers.
const API_VERSION_1: &[&str] = &[
    "abortTransaction",
    "aggregate",
    "collMod",
    "commitTransaction",
    "count",
    "create",
    "createIndexes",
    "delete",
    "distinct",
    "drop",
    "dropDatabase",
    "dropIndexes",
    "endSessions",
    "explain",
    "find",
    "findAndModify",
    "getMore",
    "hello",
    "insert",
    "killCursors",
    "listCollections",
    "listDatabases",
    "listIndexes",
    "ping",
    "update",
];

/// A sentence on what a command does.
fn help(name: &str) -> &'static str {
    match name {
        "hello" | "isMaster" | "ismaster" => "Check if this server is primary for a replica set",
        "ping" => "a way to check that the server is alive. responds immediately",
        "find" => "query for documents",
        "getMore" => "retrieve more results from an existing cursor",
        "insert" | "update" | "delete" => "insert, update or delete documents",
        "aggregate" => "Runs the aggregation command",
        "serverStatus" => "returns lots of administrative server statistics",
        "getParameter" => "get administrative option(s)",
        "setParameter" => "set administrative option(s)",
        "fsync" => "invoke fsync (a checkpoint); with lock: true, block writes until fsyncUnlock",
        "fsyncUnlock" => "unlock the database for writes after fsync lock: true",
        "shutdown" => "shutdown the database",
        "dbHash" | "dbhash" => "the md5 of the documents of each collection and of the database",
        "listCommands" => "get a list of all db commands",
        _ => "no help defined",
    }
}

/// listCommands.
pub(super) fn list_commands(engine: &Engine, _: &Request<'_>) -> Result<Document, Error> {
    let mut specs: Vec<_> = COMMANDS
        .iter()
        .filter(|spec| super::available(engine, spec))
        .collect();
    specs.sort_by_key(|spec| spec.name);
    let mut commands = Document::new();
    for spec in specs {
        let versions: Vec<Bson> = if API_VERSION_1.contains(&spec.name) {
            vec![Bson::String("1".into())]
        } else {
            Vec::new()
        };
        commands.insert(
            spec.name,
            doc! {
                "help": help(spec.name),
                "requiresAuth": false,
                "secondaryOk": true,
                "adminOnly": spec.admin_only,
                "apiVersions": versions,
                "deprecatedApiVersions": [],
            },
        );
    }
    Ok(doc! { "commands": commands })
}
