//! The SASL exchange of saslStart / saslContinue (and hello's `speculativeAuthenticate`)
//! over [`super::scram`], as mongod runs it: conversation id 1, the server-final message
//! in the second step, and with `options.skipEmptyExchange` the conversation done there;
//! without it, one more empty step.
//!
//! States of a connection's conversation (the functions behind each transition):
//!
//! ```text
//!   none ──saslStart (start)──▶ awaiting client-final ──saslContinue (step)──▶
//!        ├── proof good, skipEmptyExchange: authenticated, none
//!        ├── proof good otherwise: awaiting the empty step ──saslContinue──▶ authenticated
//!        └── anything wrong: none (18 AuthenticationFailed, reason logged)
//! ```
//!
//! Invariants:
//! - Whatever failed, the client gets 18 "Authentication failed." and the conversation is
//!   gone; the reason goes to the log with the user and connection, never a secret.
//! - A connection gets [`FAILURES_MAX`] failed attempts; after them every attempt on it
//!   (saslStart, speculative, MONGODB-X509) fails without a credential being looked at,
//!   so a password is not guessed over one connection faster than it reconnects.

use super::AuthSession;
use super::Directory;
use super::scram::{self, Conversation, Mechanism};
use super::users;
use crate::error::{Error, ErrorCode};

/// mongod's only conversation id.
pub(crate) const CONVERSATION_ID: i32 = 1;

/// A conversation waiting for its next step.
#[derive(Debug)]
pub(crate) struct Pending {
    db: String,
    conversation: Conversation,
    skip_empty_exchange: bool,
    /// The proof checked and the server-final sent: only the empty step is left.
    proved: bool,
}

/// One step's answer: `{conversationId, done, payload}`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Step {
    pub(crate) done: bool,
    pub(crate) payload: Vec<u8>,
}

/// Failed authentication attempts a connection gets before every further attempt fails.
pub(crate) const FAILURES_MAX: u32 = 5;

/// The refusal of an attempt on a connection that used up its [`FAILURES_MAX`].
pub(crate) fn check_attempts(
    directory: &Directory<'_>,
    session: &AuthSession,
    label: &str,
    user: &str,
    db: &str,
) -> Result<(), Error> {
    if session.failures() < FAILURES_MAX {
        return Ok(());
    }
    Err(failed(
        directory,
        session,
        label,
        user,
        db,
        "too many failed attempts on this connection",
    ))
}

/// 18, the one answer a failed authentication gets; the reason is logged and the
/// connection's failure counted.
pub(crate) fn failed(
    directory: &Directory<'_>,
    session: &AuthSession,
    session_label: &str,
    user: &str,
    db: &str,
    reason: &str,
) -> Error {
    session.note_failure();
    // mongod's line (ACCESS 20249), at its level: a failed login is the client's error.
    let (ctx, remote) = session_label
        .split_once(" from ")
        .unwrap_or((session_label, ""));
    let attr = bson::doc! {
        "principalName": user,
        "authenticationDatabase": db,
        "remote": remote,
        "error": format!("AuthenticationFailed: {reason}"),
    };
    directory.log.log(
        access_line(directory, ctx, 20_249, "Authentication failed"),
        &attr,
    );
    Error::new(
        ErrorCode::Other(18, "AuthenticationFailed"),
        "Authentication failed.",
    )
}

/// A log line of mongod's ACCESS component on the connection `ctx`.
fn access_line<'a>(
    directory: &Directory<'_>,
    ctx: &'a str,
    id: i32,
    message: &'a str,
) -> crate::LogLine<'a> {
    crate::LogLine {
        millis: directory.host.now_millis(),
        severity: "I",
        component: "ACCESS",
        id,
        ctx,
        message,
    }
}

/// saslStart: parses the client-first message and answers the server-first.
pub(crate) fn start(
    directory: &Directory<'_>,
    session: &AuthSession,
    label: &str,
    db: &str,
    mechanism: &str,
    payload: &[u8],
    skip_empty_exchange: bool,
) -> Result<Step, Error> {
    // A new saslStart abandons any conversation in progress.
    drop(session.take_pending());
    check_attempts(directory, session, label, "?", db)?;
    let Some(mechanism) = Mechanism::parse(mechanism) else {
        return Err(Error::new(
            ErrorCode::Other(334, "MechanismUnavailable"),
            format!("Received authentication for mechanism {mechanism} which is not enabled"),
        ));
    };
    let client_first = scram::parse_client_first(payload)
        .map_err(|failure| failed(directory, session, label, "?", db, failure.0))?;
    let store = directory.store();
    let Some(user) = users::find(&store, db, &client_first.user)? else {
        return Err(failed(
            directory,
            session,
            label,
            &client_first.user,
            db,
            "no such user",
        ));
    };
    let Some(credential) = user.credential(mechanism).cloned() else {
        return Err(Error::new(
            ErrorCode::Other(334, "MechanismUnavailable"),
            format!(
                "Unable to use {} based authentication for user without any {} credentials registered",
                mechanism.name(),
                mechanism.name()
            ),
        ));
    };
    let mut random = [0u8; 24];
    directory
        .host
        .fill_random(&mut random)
        .map_err(users::random_failed)?;
    let nonce = scram::nonce_from(&random);
    let (conversation, server_first) =
        Conversation::start(mechanism, client_first, credential, &nonce);
    session.set_pending(Pending {
        db: db.to_owned(),
        conversation,
        skip_empty_exchange,
        proved: false,
    });
    Ok(Step {
        done: false,
        payload: server_first.into_bytes(),
    })
}

/// saslContinue: checks the client-final message (or takes the empty last step).
pub(crate) fn step(
    directory: &Directory<'_>,
    session: &AuthSession,
    label: &str,
    conversation_id: Option<i32>,
    payload: &[u8],
) -> Result<Step, Error> {
    let Some(mut pending) = session.take_pending() else {
        return Err(Error::new(
            ErrorCode::ProtocolError,
            "No SASL session state found",
        ));
    };
    if conversation_id != Some(CONVERSATION_ID) {
        return Err(Error::new(
            ErrorCode::ProtocolError,
            "sasl: Mismatched conversation id",
        ));
    }
    let user = pending.conversation.user().to_owned();
    if pending.proved {
        if !payload.is_empty() {
            return Err(failed(
                directory,
                session,
                label,
                &user,
                &pending.db,
                "unexpected payload after the server-final message",
            ));
        }
        session.login(&pending.db, &user);
        return Ok(Step {
            done: true,
            payload: Vec::new(),
        });
    }
    let server_final = pending
        .conversation
        .finish(payload)
        .map_err(|failure| failed(directory, session, label, &user, &pending.db, failure.0))?;
    if pending.skip_empty_exchange {
        session.login(&pending.db, &user);
        let (ctx, remote) = label.split_once(" from ").unwrap_or((label, ""));
        let attr = bson::doc! {
            "mechanism": pending.conversation.mechanism.name(),
            "principalName": &user,
            "authenticationDatabase": &pending.db,
            "remote": remote,
        };
        directory.log.log(
            access_line(directory, ctx, 20_250, "Authentication succeeded"),
            &attr,
        );
        return Ok(Step {
            done: true,
            payload: server_final.into_bytes(),
        });
    }
    pending.proved = true;
    session.set_pending(pending);
    Ok(Step {
        done: false,
        payload: server_final.into_bytes(),
    })
}
