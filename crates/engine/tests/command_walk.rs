//! Every command MongoDB 7.0 documents, sent bare (`{name: 1}`): each is answered (ok, or
//! an argument error with MongoDB's code) or refused as mongod refuses what it lacks
//! (59 CommandNotFound, 238 NotImplemented, 20 IllegalOperation for replica-set-only
//! commands on a standalone, 76 NoReplicationEnabled where mongod answers that,
//! 13 Unauthorized for admin-only ones), never an internal
//! error, never a reply without a code.

use crate::support::{engine, run};
use bson::RawDocumentBuf;

/// mongod 7.0's user-facing commands (the manual's "Database Commands" index).
const COMMANDS: &[&str] = &[
    // Aggregation
    "aggregate",
    "count",
    "distinct",
    "mapReduce",
    // Geospatial
    "geoSearch",
    // Query and write
    "bulkWrite",
    "delete",
    "find",
    "findAndModify",
    "getMore",
    "insert",
    "resetError",
    "update",
    // Query plan cache
    "planCacheClear",
    "planCacheClearFilters",
    "planCacheListFilters",
    "planCacheSetFilter",
    // Authentication and users
    "authenticate",
    "logout",
    "createUser",
    "dropAllUsersFromDatabase",
    "dropUser",
    "grantRolesToUser",
    "revokeRolesFromUser",
    "updateUser",
    "usersInfo",
    "createRole",
    "dropRole",
    "dropAllRolesFromDatabase",
    "grantPrivilegesToRole",
    "grantRolesToRole",
    "invalidateUserCache",
    "revokePrivilegesFromRole",
    "revokeRolesFromRole",
    "rolesInfo",
    "updateRole",
    // Replication
    "applyOps",
    "hello",
    "isMaster",
    "replSetAbortPrimaryCatchUp",
    "replSetFreeze",
    "replSetGetConfig",
    "replSetGetStatus",
    "replSetInitiate",
    "replSetMaintenance",
    "replSetReconfig",
    "replSetResizeOplog",
    "replSetStepDown",
    "replSetSyncFrom",
    // Sessions and transactions
    "abortTransaction",
    "commitTransaction",
    "endSessions",
    "killAllSessions",
    "killAllSessionsByPattern",
    "killSessions",
    "refreshSessions",
    "startSession",
    // Administration
    "cloneCollectionAsCapped",
    "collMod",
    "compact",
    "convertToCapped",
    "create",
    "createIndexes",
    "currentOp",
    "drop",
    "dropDatabase",
    "dropConnections",
    "dropIndexes",
    "filemd5",
    "fsync",
    "fsyncUnlock",
    "getDefaultRWConcern",
    "getClusterParameter",
    "getParameter",
    "killCursors",
    "killOp",
    "listCollections",
    "listDatabases",
    "listIndexes",
    "logRotate",
    "reIndex",
    "renameCollection",
    "rotateCertificates",
    "setFeatureCompatibilityVersion",
    "setIndexCommitQuorum",
    "setParameter",
    "setDefaultRWConcern",
    "setUserWriteBlockMode",
    "shutdown",
    // Diagnostics
    "buildInfo",
    "collStats",
    "connPoolStats",
    "connectionStatus",
    "dataSize",
    "dbHash",
    "dbStats",
    "explain",
    "features",
    "getCmdLineOpts",
    "getLog",
    "hostInfo",
    "listCommands",
    "lockInfo",
    "netstat",
    "ping",
    "profile",
    "serverStatus",
    "top",
    "validate",
    "validateDBMetadata",
    "whatsmyuri",
    // Free monitoring, auditing, sharding (mongod answers these on a standalone)
    "getFreeMonitoringStatus",
    "setFreeMonitoring",
    "logApplicationMessage",
    "addShard",
    "balancerStart",
    "enableSharding",
    "shardCollection",
    "listShards",
];

/// Codes a bare command may answer with: the refusals above, and the argument errors a
/// command without its arguments gets from mongod's parsers.
const ACCEPTED: &[i32] = &[
    2, 9, 13, 14, 20, 26, 40, 59, 72, 73, 76, 115, 125, 238, 40414, 40415,
];

#[test]
fn every_documented_command_is_answered_or_refused_as_mongod_refuses_it() {
    let engine = engine();
    let mut unexpected = Vec::new();
    for &name in COMMANDS {
        for db in ["admin", "test"] {
            let mut cmd = bson::Document::new();
            cmd.insert(name, 1);
            let reply = run(&engine, db, RawDocumentBuf::try_from(&cmd).expect("encode"));
            if reply.get_f64("ok").ok() == Some(1.0) {
                continue;
            }
            let code = reply.get_i32("code").ok();
            let named = reply.get_str("codeName").is_ok_and(|n| !n.is_empty());
            let accepted = code.is_some_and(|c| ACCEPTED.contains(&c) || c > 1_000);
            if !accepted || !named || code == Some(1) {
                unexpected.push(format!("{db}.{name}: {reply:?}"));
            }
        }
    }
    assert!(unexpected.is_empty(), "{}", unexpected.join("\n"));
}
