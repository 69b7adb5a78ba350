//! The `replSet*` commands, thin over [`crate::repl`]: what mongosh's `rs.status()`,
//! `rs.conf()`, `rs.initiate()`, `rs.reconfig()`, `rs.stepDown()` and `rs.freeze()` send.
//!
//! On a standalone every one is mongod's 76 NoReplicationEnabled. On the one member:
//! the status and config are read, initiation is 23 AlreadyInitialized, step-down and
//! freeze are refused as mongod refuses them on a primary with no electable secondary,
//! and a reconfig may change the config's settings (never the set's name, its id, or its
//! one member).

use super::Request;
use crate::engine::Engine;
use crate::error::{Error, ErrorCode};
use crate::repl::Member;
use bson::{Bson, Document, doc};

fn not_enabled(message: &str) -> Error {
    Error::new(ErrorCode::Other(76, "NoReplicationEnabled"), message)
}

/// The member, or mongod's refusal on a standalone.
fn member(engine: &Engine) -> Result<&Member, Error> {
    engine
        .replica_set()
        .ok_or_else(|| not_enabled("not running with --replSet"))
}

/// replSetGetStatus: the one member, primary, healthy, in mongod's shape.
pub(super) fn get_status(engine: &Engine, _: &Request<'_>) -> Result<Document, Error> {
    let member = member(engine)?;
    let store = engine.store();
    let op_time = member.op_time(&store);
    let wall = Member::last_write_date(&store);
    let now = bson::DateTime::from_millis(engine.host.now_millis());
    let uptime = i64::try_from(engine.host.uptime_millis() / 1000).unwrap_or(i64::MAX);
    let config = member.config();
    let config_term = config.get_i64("term").unwrap_or(member.term());
    let election_time = member.election_time();
    Ok(doc! {
        "set": member.name(),
        "date": now,
        "myState": 1,
        "term": member.term(),
        "syncSourceHost": "",
        "syncSourceId": -1,
        "heartbeatIntervalMillis": 2000_i64,
        "majorityVoteCount": 1,
        "writeMajorityCount": 1,
        "votingMembersCount": 1,
        "writableVotingMembersCount": 1,
        "optimes": {
            "lastCommittedOpTime": op_time.clone(),
            "lastCommittedWallTime": wall,
            "readConcernMajorityOpTime": op_time.clone(),
            "appliedOpTime": op_time.clone(),
            "durableOpTime": op_time.clone(),
            "lastAppliedWallTime": wall,
            "lastDurableWallTime": wall,
        },
        "members": [{
            "_id": 0,
            "name": member.host(),
            "health": 1.0,
            "state": 1,
            "stateStr": "PRIMARY",
            "uptime": uptime,
            "optime": op_time.clone(),
            "optimeDate": wall,
            "lastAppliedWallTime": wall,
            "lastDurableWallTime": wall,
            "syncSourceHost": "",
            "syncSourceId": -1,
            "infoMessage": "",
            "electionTime": election_time,
            "electionDate": member.elected(),
            "configVersion": member.version(),
            "configTerm": config_term,
            "self": true,
            "lastHeartbeatMessage": "",
        }],
    })
}

/// replSetGetConfig: the stored config (`commitmentStatus: true` adds that it is
/// committed: one member has it).
pub(super) fn get_config(engine: &Engine, request: &Request<'_>) -> Result<Document, Error> {
    let member = member(engine)?;
    let mut reply = doc! { "config": member.config() };
    if super::flag(request.body, "commitmentStatus") {
        reply.insert("commitmentStatus", true);
    }
    Ok(reply)
}

/// replSetInitiate: the member initiated itself at its first start.
pub(super) fn initiate(engine: &Engine, _: &Request<'_>) -> Result<Document, Error> {
    member(engine)
        .map_err(|_| not_enabled("This node was not started with replication enabled."))?;
    Err(Error::new(
        ErrorCode::Other(23, "AlreadyInitialized"),
        "already initialized",
    ))
}

/// replSetStepDown: a primary without an electable secondary refuses (mongod's answer
/// without `force`; with it, mongod would stand down and elect itself again, which
/// this member does not do).
pub(super) fn step_down(engine: &Engine, request: &Request<'_>) -> Result<Document, Error> {
    member(engine)?;
    if super::flag(request.body, "force") {
        return Err(Error::new(
            ErrorCode::NotImplemented,
            "replSetStepDown with force: the only member of a one-member set stays primary",
        ));
    }
    let now = bson::DateTime::from_millis(engine.host.now_millis());
    let message = format!(
        "No electable secondaries caught up as of {}. Please use the replSetStepDown \
         command with the argument {{force: true}} to force node to step down.",
        now.try_to_rfc3339_string().unwrap_or_default()
    );
    Err(Error::new(
        ErrorCode::Other(262, "ExceededTimeLimit"),
        message,
    ))
}

/// replSetFreeze: refused on a primary, as mongod refuses it.
pub(super) fn freeze(engine: &Engine, _: &Request<'_>) -> Result<Document, Error> {
    member(engine)?;
    Err(Error::new(
        ErrorCode::Other(95, "NotSecondary"),
        "cannot freeze node when primary or running for election. state: Primary",
    ))
}

fn incompatible(message: String) -> Error {
    Error::new(
        ErrorCode::Other(103, "NewReplicaSetConfigurationIncompatible"),
        message,
    )
}

/// replSetReconfig: a new config for the one member. Its `_id` (the set's name),
/// `settings.replicaSetId` and its one member's `_id` and `host` stay as they are; its
/// `version` must be greater than the current one (mongod's rule; `force` lets any
/// version through). A set of more members is not built: 238.
pub(super) fn reconfig(engine: &Engine, request: &Request<'_>) -> Result<Document, Error> {
    let member = member(engine)?;
    let mut new = match request.body.get("replSetReconfig") {
        Ok(Some(bson::raw::RawBsonRef::Document(config))) => Document::try_from(config)
            .map_err(|error| Error::new(ErrorCode::InvalidBson, error.to_string()))?,
        _ => {
            return Err(Error::new(
                ErrorCode::TypeMismatch,
                "BSON field 'replSetReconfig' is the wrong type, expected type 'object'",
            ));
        }
    };
    let force = super::flag(request.body, "force");
    let current = member.config();
    if new.get_str("_id").ok() != Some(member.name()) {
        return Err(incompatible(format!(
            "New and old configurations differ in replica set name; old was {}, and new is {}",
            member.name(),
            new.get_str("_id").unwrap_or_default()
        )));
    }
    let members = new.get_array("members").cloned().unwrap_or_default();
    if members.len() != 1 {
        return Err(Error::new(
            ErrorCode::NotImplemented,
            "a replica set of more than one member is not supported: this server is the \
             only member of its set",
        ));
    }
    let Some(Bson::Document(only)) = members.first() else {
        return Err(Error::new(
            ErrorCode::TypeMismatch,
            "members.0 must be an object",
        ));
    };
    if only.get_str("host").ok() != Some(member.host()) {
        let message = format!(
            "No host described in new configuration with {{version: {}, term: {}}} for \
             replica set {} maps to this node",
            new.get_i32("version").unwrap_or_default(),
            member.term(),
            member.name()
        );
        return Err(Error::new(ErrorCode::Other(74, "NodeNotFound"), message));
    }
    let version = match new.get("version") {
        Some(Bson::Int32(v)) => i64::from(*v),
        Some(Bson::Int64(v)) => *v,
        Some(Bson::Double(v)) if v.fract() == 0.0 => *v as i64,
        _ => {
            return Err(Error::new(
                ErrorCode::Other(93, "InvalidReplicaSetConfig"),
                "replica set configuration must have a numeric version",
            ));
        }
    };
    let old_version = i64::from(member.version());
    if !force && version <= old_version {
        return Err(incompatible(format!(
            "New replica set configuration version must be greater than old, but {version} \
             is not greater than {old_version} for replica set {}",
            member.name()
        )));
    }
    let version = if force {
        version.max(old_version + 1)
    } else {
        version
    };
    // What the member keeps whatever the new config says.
    let old_settings = current
        .get_document("settings")
        .cloned()
        .unwrap_or_default();
    let mut settings = new
        .get_document("settings")
        .cloned()
        .unwrap_or(old_settings.clone());
    if let Ok(id) = old_settings.get_object_id("replicaSetId") {
        if settings
            .get_object_id("replicaSetId")
            .is_ok_and(|given| given != id)
        {
            return Err(incompatible(
                "New and old configurations differ in replicaSetId".to_owned(),
            ));
        }
        settings.insert("replicaSetId", id);
    }
    new.insert("settings", settings);
    new.insert("version", i32::try_from(version).unwrap_or(i32::MAX));
    new.insert("term", member.term());
    member.reconfigure(&engine.store(), new)?;
    Ok(Document::new())
}
