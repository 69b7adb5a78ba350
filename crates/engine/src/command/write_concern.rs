//! The `writeConcern` argument of write commands, read the way a standalone mongod reads it,
//! and the commit that honours it.
//!
//! The server always journals: `{w: 1}`, `{w: "majority"}` and `{j: true}` all wait for
//! the log's group-commit fsync; `{j: false}` still waits (a stronger guarantee than asked,
//! never a weaker one); `{w: 0}` alone commits without waiting. On a standalone, what it
//! cannot satisfy (`w > 1`, a tag set) is refused up front with mongod's `BadValue`,
//! before anything is written. A one-member replica set answers as a member of a set too
//! small for it does: the write is applied and acknowledged as `{w: 1}`, and the reply
//! carries a `writeConcernError` (100 UnsatisfiableWriteConcern for `w > 1`, 79
//! UnknownReplWriteConcern for a mode its config does not define), at once: no `wtimeout`
//! can change the answer.

use super::Request;
use super::args::bson_type_name;
use crate::error::{Error, ErrorCode};
use crate::store::Writer;
use bson::raw::RawBsonRef;
use bson::{Document, RawDocument, doc};

/// The most members a replica set may have: mongod's upper bound for a numeric `w`.
const W_MAX: i64 = 50;

/// A parsed write concern.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct WriteConcern {
    /// Whether the command waits until its changes are durable before answering.
    pub(crate) wait_durable: bool,
}

impl Default for WriteConcern {
    fn default() -> Self {
        WriteConcern { wait_durable: true }
    }
}

fn failed(message: impl Into<String>) -> Error {
    Error::new(ErrorCode::FailedToParse, message)
}

/// A number or bool in a write concern field, as mongod's `safeBool`/number rules read it.
fn number(value: RawBsonRef<'_>) -> Option<f64> {
    match value {
        RawBsonRef::Int32(v) => Some(f64::from(v)),
        RawBsonRef::Int64(v) => Some(v as f64),
        RawBsonRef::Double(v) => Some(v),
        RawBsonRef::Boolean(v) => Some(if v { 1.0 } else { 0.0 }),
        _ => None,
    }
}

impl WriteConcern {
    /// Reads `writeConcern` from a command; the default (`{w: 1}`) when it is absent. On
    /// a replica-set member, a concern the set cannot satisfy is noted on the request
    /// (its reply gets the `writeConcernError`; see [`Request::unsatisfied_write_concern`]).
    pub(crate) fn parse(request: &Request<'_>) -> Result<WriteConcern, Error> {
        match request.body.get("writeConcern") {
            Ok(None) => Ok(WriteConcern::default()),
            Ok(Some(RawBsonRef::Document(doc))) => {
                let (concern, unsatisfied) =
                    WriteConcern::parse_document(doc, request.replicated())?;
                if let Some(error) = unsatisfied {
                    request.note_unsatisfied_write_concern(error);
                }
                Ok(concern)
            }
            Ok(Some(value)) => Err(Error::new(
                ErrorCode::TypeMismatch,
                format!(
                    "BSON field 'writeConcern' is the wrong type '{}', expected type 'object'",
                    bson_type_name(value)
                ),
            )),
            Err(error) => Err(Error::new(ErrorCode::InvalidBson, error.to_string())),
        }
    }

    /// The concern in `doc`, and on a member (`replicated`) the `writeConcernError` it
    /// earns when the set cannot satisfy it.
    fn parse_document(
        doc: &RawDocument,
        replicated: bool,
    ) -> Result<(WriteConcern, Option<Document>), Error> {
        let mut w_zero = false;
        let mut unsatisfied = None;
        let mut journal = false;
        let mut fsync = false;
        for element in doc {
            let (key, value) =
                element.map_err(|e| Error::new(ErrorCode::InvalidBson, e.to_string()))?;
            match key.as_str() {
                "w" => match parse_w(value, replicated)? {
                    W::Zero => w_zero = true,
                    W::One => {}
                    W::Unsatisfied(error) => unsatisfied = Some(error),
                },
                "j" => {
                    journal = number(value)
                        .ok_or_else(|| failed("j must be numeric or a boolean value"))?
                        != 0.0;
                }
                "fsync" => {
                    fsync = number(value)
                        .ok_or_else(|| failed("fsync must be numeric or a boolean value"))?
                        != 0.0;
                }
                "wtimeout" | "wtimeoutMS" if number(value).is_none() => {
                    return Err(failed("wtimeout must be a number"));
                }
                // Replication bookkeeping a standalone ignores.
                _ => {}
            }
        }
        if journal && fsync {
            return Err(failed("fsync and j options cannot be used together"));
        }
        let concern = WriteConcern {
            wait_durable: !w_zero || journal || fsync,
        };
        let unsatisfied = unsatisfied.map(|(code, name, errmsg)| {
            let mut given = bson::Document::try_from(doc).unwrap_or_default();
            given.insert("provenance", "clientSupplied");
            doc! {
                "code": code,
                "codeName": name,
                "errmsg": errmsg,
                "errInfo": { "writeConcern": given },
            }
        });
        Ok((concern, unsatisfied))
    }

    /// Commits `writer`: waits for durability unless the client asked for `{w: 0}`. A
    /// transaction that changed nothing is dropped instead, so it writes nothing at all.
    pub(crate) fn commit(self, writer: Writer<'_>) -> Result<(), Error> {
        if writer.is_unchanged() {
            return Ok(());
        }
        if self.wait_durable {
            writer.commit().map_err(Error::from)
        } else {
            writer.commit_nowait().map(|_| ()).map_err(Error::from)
        }
    }
}

/// What a `w` asks of this server.
enum W {
    /// `w: 0`: no acknowledgement awaited.
    Zero,
    /// Acknowledged by this server (`1`, `"majority"`).
    One,
    /// More than a one-member set can give (a member only): the code, its name and the
    /// message of the `writeConcernError`.
    Unsatisfied((i32, &'static str, String)),
}

/// Reads `w` as a standalone (refusing what it cannot satisfy) or a one-member set's
/// member (`replicated`) reads it.
fn parse_w(value: RawBsonRef<'_>, replicated: bool) -> Result<W, Error> {
    match value {
        RawBsonRef::String("majority") => Ok(W::One),
        RawBsonRef::String(mode) if replicated => Ok(W::Unsatisfied((
            79,
            "UnknownReplWriteConcern",
            format!("No write concern mode named '{mode}' found in replica set configuration"),
        ))),
        RawBsonRef::String(mode) => Err(Error::new(
            ErrorCode::BadValue,
            format!(
                "cannot use non-majority 'w' mode {mode} when a host is not a member of a \
                 replica set"
            ),
        )),
        RawBsonRef::Document(_) if replicated => Ok(W::Unsatisfied((
            79,
            "UnknownReplWriteConcern",
            "No write concern mode matches the 'w' tag set: the replica set configuration \
             defines no tags"
                .to_owned(),
        ))),
        RawBsonRef::Document(_) => Err(Error::new(
            ErrorCode::BadValue,
            "cannot use a 'w' tag set when a host is not a member of a replica set",
        )),
        RawBsonRef::Int32(_) | RawBsonRef::Int64(_) | RawBsonRef::Double(_) => {
            let w = number(value).unwrap_or(-1.0);
            if !(0.0..=W_MAX as f64).contains(&w) || w.fract() != 0.0 {
                return Err(failed(format!(
                    "w has to be a non-negative number and not greater than {W_MAX}; found: {w}"
                )));
            }
            if w > 1.0 && replicated {
                return Ok(W::Unsatisfied((
                    100,
                    "UnsatisfiableWriteConcern",
                    "Not enough data-bearing nodes".to_owned(),
                )));
            }
            if w > 1.0 {
                return Err(Error::new(
                    ErrorCode::BadValue,
                    "cannot use 'w' > 1 when a host is not replicated",
                ));
            }
            Ok(if w == 0.0 { W::Zero } else { W::One })
        }
        _ => Err(failed("w has to be a number or a string")),
    }
}

#[cfg(test)]
mod tests {
    use super::WriteConcern;
    use bson::{RawDocumentBuf, rawdoc};

    fn parse(wc: RawDocumentBuf) -> Result<bool, i32> {
        WriteConcern::parse_document(&wc, false)
            .map(|(wc, _)| wc.wait_durable)
            .map_err(|e| e.code().code())
    }

    /// A member's reading: the durable flag and the `writeConcernError` code, or the
    /// refusal's code.
    type MemberReading = Result<(bool, Option<i32>), i32>;

    /// On a member: the durable flag and the code of the `writeConcernError`, if any.
    fn parse_member(wc: RawDocumentBuf) -> MemberReading {
        WriteConcern::parse_document(&wc, true)
            .map(|(wc, error)| {
                let code = error.map(|e| e.get_i32("code").expect("a code"));
                (wc.wait_durable, code)
            })
            .map_err(|e| e.code().code())
    }

    #[test]
    fn a_member_applies_what_it_cannot_satisfy_and_says_so() {
        let cases: &[(RawDocumentBuf, MemberReading)] = &[
            (rawdoc! {}, Ok((true, None))),
            (rawdoc! { "w": 1 }, Ok((true, None))),
            (rawdoc! { "w": "majority" }, Ok((true, None))),
            (rawdoc! { "w": 0 }, Ok((false, None))),
            (rawdoc! { "w": 2, "wtimeout": 100 }, Ok((true, Some(100)))),
            (rawdoc! { "w": 50 }, Ok((true, Some(100)))),
            (rawdoc! { "w": "dc1" }, Ok((true, Some(79)))),
            (rawdoc! { "w": { "dc": 1 } }, Ok((true, Some(79)))),
            (rawdoc! { "w": 51 }, Err(9)),
            (rawdoc! { "w": 1.5 }, Err(9)),
        ];
        for (wc, expected) in cases {
            assert_eq!(&parse_member(wc.clone()), expected, "{wc:?}");
        }
    }

    #[test]
    fn write_concern_cases() {
        let cases: &[(RawDocumentBuf, Result<bool, i32>)] = &[
            (rawdoc! {}, Ok(true)),
            (rawdoc! { "w": 1 }, Ok(true)),
            (rawdoc! { "w": 0 }, Ok(false)),
            (rawdoc! { "w": 0, "j": true }, Ok(true)),
            (rawdoc! { "w": 0.0 }, Ok(false)),
            (rawdoc! { "w": "majority", "wtimeout": 100 }, Ok(true)),
            (rawdoc! { "w": 1, "j": false }, Ok(true)),
            (rawdoc! { "w": 2 }, Err(2)),
            (rawdoc! { "w": 51 }, Err(9)),
            (rawdoc! { "w": -1 }, Err(9)),
            (rawdoc! { "w": 1.5 }, Err(9)),
            (rawdoc! { "w": "dc1" }, Err(2)),
            (rawdoc! { "w": { "dc": 1 } }, Err(2)),
            (rawdoc! { "w": true }, Err(9)),
            (rawdoc! { "j": "yes" }, Err(9)),
            (rawdoc! { "j": true, "fsync": true }, Err(9)),
            (rawdoc! { "wtimeout": "x" }, Err(9)),
        ];
        for (wc, expected) in cases {
            assert_eq!(&parse(wc.clone()), expected, "{wc:?}");
        }
    }
}
