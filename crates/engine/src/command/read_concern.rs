//! The `readConcern` argument, checked once per command at dispatch as mongod checks it.
//!
//! Levels: `local` (the default), `available`, `majority`, `linearizable`, `snapshot`. A
//! one-member set honours the first four with what every read already sees: a write is
//! durable before it is acknowledged and published before its commit returns, so the
//! newest published snapshot is both the member's and the majority's, and a member that
//! is always primary has no stale reads to rule out. On a standalone, what needs a
//! replica set (`linearizable`, `snapshot`, `afterClusterTime`, `atClusterTime`,
//! `afterOpTime`) is mongod's 123 NotAReplicaSet. On a member, `snapshot` outside a
//! transaction (one snapshot across every batch of a cursor) is not done yet: 238 for
//! `find`, `aggregate` and `distinct`, which mongod reads at a snapshot, and mongod's 72
//! for every other command. Before this check, a snapshot read was silently a `local`
//! one: right for one batch, wrong across several.
//!
//! `afterClusterTime` on a member: a time later than the member's cluster time is
//! mongod's 72 InvalidOptions (no client can have seen it from this set); an earlier one
//! waits for the write gate once, so every write stamped at or before it (whose
//! `operationTime` a client may have been told) is published before the read starts.

use super::Request;
use super::args::bson_type_name;
use crate::engine::Engine;
use crate::error::{Error, ErrorCode};
use crate::store::oplog::Ts;
use bson::Timestamp;
use bson::raw::RawBsonRef;

/// A read concern level.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Level {
    Local,
    Available,
    Majority,
    Linearizable,
    Snapshot,
}

/// A parsed `readConcern`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct ReadConcern {
    /// The level (`local` when absent).
    pub(crate) level: Level,
    /// Whether `level` was given.
    pub(crate) level_given: bool,
    pub(crate) after_cluster_time: Option<Timestamp>,
    pub(crate) at_cluster_time: Option<Timestamp>,
    /// Whether the legacy `afterOpTime` was given (internal to replication).
    pub(crate) after_op_time: bool,
}

fn invalid(message: impl Into<String>) -> Error {
    Error::new(ErrorCode::InvalidOptions, message)
}

fn wrong_type(field: &str, value: RawBsonRef<'_>, expected: &str) -> Error {
    Error::new(
        ErrorCode::TypeMismatch,
        format!(
            "BSON field '{field}' is the wrong type '{}', expected type '{expected}'",
            bson_type_name(value)
        ),
    )
}

fn timestamp(field: &str, value: RawBsonRef<'_>) -> Result<Timestamp, Error> {
    match value {
        RawBsonRef::Timestamp(ts) if ts.time == 0 && ts.increment == 0 => {
            Err(invalid(format!("{field} cannot be a null timestamp")))
        }
        RawBsonRef::Timestamp(ts) => Ok(ts),
        other => Err(wrong_type(field, other, "timestamp")),
    }
}

impl ReadConcern {
    /// Parses a `readConcern` document, checking its fields' types and combinations.
    pub(crate) fn parse(value: RawBsonRef<'_>) -> Result<ReadConcern, Error> {
        let RawBsonRef::Document(doc) = value else {
            return Err(wrong_type("readConcern", value, "object"));
        };
        let mut concern = ReadConcern {
            level: Level::Local,
            level_given: false,
            after_cluster_time: None,
            at_cluster_time: None,
            after_op_time: false,
        };
        for element in doc {
            let (key, value) =
                element.map_err(|e| Error::new(ErrorCode::InvalidBson, e.to_string()))?;
            match key.as_str() {
                "level" => {
                    let RawBsonRef::String(level) = value else {
                        return Err(wrong_type("readConcern.level", value, "string"));
                    };
                    concern.level = match level {
                        "local" => Level::Local,
                        "available" => Level::Available,
                        "majority" => Level::Majority,
                        "linearizable" => Level::Linearizable,
                        "snapshot" => Level::Snapshot,
                        other => {
                            return Err(Error::new(
                                ErrorCode::BadValue,
                                format!(
                                    "Enumeration value '{other}' for field 'readConcern.level' \
                                     is not a valid value."
                                ),
                            ));
                        }
                    };
                    concern.level_given = true;
                }
                "afterClusterTime" => {
                    concern.after_cluster_time = Some(timestamp("afterClusterTime", value)?);
                }
                "atClusterTime" => {
                    concern.at_cluster_time = Some(timestamp("atClusterTime", value)?);
                }
                "afterOpTime" => match value {
                    RawBsonRef::Document(_) => concern.after_op_time = true,
                    other => return Err(wrong_type("readConcern.afterOpTime", other, "object")),
                },
                // Who chose the concern (drivers echo a default's): informational.
                "provenance" => {}
                other => {
                    return Err(invalid(format!(
                        "Unrecognized option in readConcern: {other}"
                    )));
                }
            }
        }
        concern.check_combination()?;
        Ok(concern)
    }

    fn check_combination(&self) -> Result<(), Error> {
        if self.after_cluster_time.is_some() && self.at_cluster_time.is_some() {
            return Err(invalid(
                "Can not specify both afterClusterTime and atClusterTime",
            ));
        }
        if self.after_cluster_time.is_some() && self.after_op_time {
            return Err(invalid(
                "Can not specify both afterClusterTime and afterOpTime",
            ));
        }
        if self.after_cluster_time.is_some()
            && !matches!(self.level, Level::Local | Level::Majority | Level::Snapshot)
        {
            return Err(Error::new(
                ErrorCode::BadValue,
                "Only readConcern level 'majority', 'local', or 'snapshot' is allowed when \
                 specifying afterClusterTime",
            ));
        }
        if self.at_cluster_time.is_some() && self.level != Level::Snapshot {
            return Err(Error::new(
                ErrorCode::BadValue,
                "readConcern level 'snapshot' is required when specifying atClusterTime",
            ));
        }
        Ok(())
    }

    /// What a standalone refuses: anything that needs a replica set.
    fn check_standalone(&self) -> Result<(), Error> {
        let needs_set = self.after_cluster_time.is_some()
            || self.at_cluster_time.is_some()
            || self.after_op_time
            || matches!(self.level, Level::Linearizable | Level::Snapshot);
        if needs_set {
            let what = match self.level {
                Level::Snapshot => "readConcern: snapshot",
                _ => "read concern",
            };
            return Err(Error::new(
                ErrorCode::Other(123, "NotAReplicaSet"),
                format!("node needs to be a replica set member to use {what}"),
            ));
        }
        Ok(())
    }
}

/// Checks the command's `readConcern` (if any) and, on a member, waits for its
/// `afterClusterTime`.
pub(crate) fn check(engine: &Engine, request: &Request<'_>) -> Result<(), Error> {
    let Some(value) = request.field("readConcern")? else {
        return Ok(());
    };
    let concern = ReadConcern::parse(value)?;
    // mongod ignores any read concern on the `local` database.
    if request.db == "local" {
        return Ok(());
    }
    if engine.replica_set().is_none() {
        return concern.check_standalone();
    }
    if concern.level == Level::Snapshot {
        // mongod reads a snapshot outside a transaction in these three only.
        if matches!(request.name, "find" | "aggregate" | "distinct") {
            return Err(Error::new(
                ErrorCode::NotImplemented,
                "readConcern level 'snapshot' (one snapshot for every batch of a read) is not \
                 supported yet",
            ));
        }
        return Err(invalid(
            "Command does not support read concern { level: \"snapshot\" }",
        ));
    }
    if concern.after_op_time {
        return Err(invalid(
            "afterOpTime is for replication's internal use; use afterClusterTime",
        ));
    }
    if let Some(after) = concern.after_cluster_time {
        wait_for_cluster_time(engine, after)?;
    }
    Ok(())
}

/// Returns once every write at or before `after` is visible to a read that starts now.
fn wait_for_cluster_time(engine: &Engine, after: Timestamp) -> Result<(), Error> {
    let store = engine.store();
    let wanted = Ts::from_timestamp(after);
    let current = store.oplog_clock().last();
    if wanted > current {
        return Err(invalid(format!(
            "readConcern afterClusterTime value must not be greater than the current \
             clusterTime. Requested clusterTime: {}; current clusterTime: {}",
            describe(wanted),
            describe(current)
        )));
    }
    // Every `ts` up to `current` was handed out under the write gate: once the gate is
    // ours, the writes that took them have published (or failed).
    drop(store.write()?);
    Ok(())
}

/// A time as mongod prints it: `{ ts: Timestamp(s, i) }`.
fn describe(ts: Ts) -> String {
    format!("{{ ts: Timestamp({}, {}) }}", ts.secs(), ts.inc())
}

#[cfg(test)]
mod tests {
    use super::{Level, ReadConcern};
    use bson::raw::RawBsonRef;
    use bson::{RawDocumentBuf, Timestamp, rawdoc};

    fn parse(doc: RawDocumentBuf) -> Result<ReadConcern, i32> {
        ReadConcern::parse(RawBsonRef::Document(&doc)).map_err(|e| e.code().code())
    }

    #[test]
    fn read_concern_cases() {
        let ts = Timestamp {
            time: 5,
            increment: 1,
        };
        let zero = Timestamp {
            time: 0,
            increment: 0,
        };
        assert_eq!(parse(rawdoc! {}).map(|c| c.level), Ok(Level::Local));
        for (name, level) in [
            ("local", Level::Local),
            ("available", Level::Available),
            ("majority", Level::Majority),
            ("linearizable", Level::Linearizable),
            ("snapshot", Level::Snapshot),
        ] {
            assert_eq!(parse(rawdoc! { "level": name }).map(|c| c.level), Ok(level));
        }
        let refused: &[(RawDocumentBuf, i32)] = &[
            (rawdoc! { "level": "strong" }, 2),
            (rawdoc! { "level": 1 }, 14),
            (rawdoc! { "afterClusterTime": 1 }, 14),
            (rawdoc! { "afterClusterTime": zero }, 72),
            (rawdoc! { "level": "available", "afterClusterTime": ts }, 2),
            (
                rawdoc! { "level": "linearizable", "afterClusterTime": ts },
                2,
            ),
            (rawdoc! { "level": "majority", "atClusterTime": ts }, 2),
            (
                rawdoc! { "level": "snapshot", "atClusterTime": ts, "afterClusterTime": ts },
                72,
            ),
            (rawdoc! { "other": 1 }, 72),
        ];
        for (doc, code) in refused {
            assert_eq!(parse(doc.clone()).map(|c| c.level), Err(*code), "{doc:?}");
        }
        let after = parse(rawdoc! { "level": "majority", "afterClusterTime": ts }).expect("ok");
        assert_eq!(after.after_cluster_time, Some(ts));
        assert!(parse(rawdoc! { "level": "local", "provenance": "clientSupplied" }).is_ok());
    }

    #[test]
    fn a_standalone_refuses_what_needs_a_set() {
        let ts = Timestamp {
            time: 5,
            increment: 1,
        };
        let check = |doc: RawDocumentBuf| {
            parse(doc)
                .expect("parses")
                .check_standalone()
                .map_err(|e| e.code().code())
        };
        assert_eq!(check(rawdoc! { "level": "majority" }), Ok(()));
        assert_eq!(check(rawdoc! { "level": "available" }), Ok(()));
        assert_eq!(check(rawdoc! { "level": "linearizable" }), Err(123));
        assert_eq!(check(rawdoc! { "level": "snapshot" }), Err(123));
        assert_eq!(check(rawdoc! { "afterClusterTime": ts }), Err(123));
    }
}
