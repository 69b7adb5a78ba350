//! saslStart, saslContinue, authenticate, logout, connectionStatus, and hello's
//! `speculativeAuthenticate` / `saslSupportedMechs`: thin over [`crate::auth`].

use super::user_admin::EXTERNAL_DB;
use super::{Request, flag};
use crate::auth::sasl::{self, CONVERSATION_ID, Step};
use crate::auth::{roles::RoleName, users};
use crate::engine::Engine;
use crate::error::{Error, ErrorCode};
use bson::raw::{RawBsonRef, RawDocument};
use bson::spec::BinarySubtype;
use bson::{Binary, Bson, Document, doc};

fn label(request: &Request<'_>) -> String {
    format!(
        "conn{} from {}",
        request.ctx.connection_id, request.ctx.client_address
    )
}

/// The payload: BinData (drivers) or a string (some shells).
fn payload(body: &RawDocument) -> Result<&[u8], Error> {
    match body.get("payload") {
        Ok(Some(RawBsonRef::Binary(binary))) => Ok(binary.bytes),
        Ok(Some(RawBsonRef::String(text))) => Ok(text.as_bytes()),
        Ok(None) => Err(Error::new(
            ErrorCode::Location(40414),
            "BSON field 'payload' is missing but a required field",
        )),
        _ => Err(Error::new(
            ErrorCode::TypeMismatch,
            "BSON field 'payload' is the wrong type, expected types '[string, binData]'",
        )),
    }
}

fn step_reply(step: Step) -> Document {
    doc! {
        "conversationId": CONVERSATION_ID,
        "done": step.done,
        "payload": Binary { subtype: BinarySubtype::Generic, bytes: step.payload },
    }
}

fn start(
    engine: &Engine,
    request: &Request<'_>,
    body: &RawDocument,
    db: &str,
) -> Result<Step, Error> {
    let mechanism = body.get_str("mechanism").map_err(|_| {
        Error::new(
            ErrorCode::Location(40414),
            "BSON field 'saslStart.mechanism' is missing but a required field",
        )
    })?;
    let skip_empty = body
        .get_document("options")
        .is_ok_and(|options| flag(options, "skipEmptyExchange"));
    let label = label(request);
    sasl::start(
        &engine.directory(),
        &request.ctx.auth,
        &label,
        db,
        mechanism,
        payload(body)?,
        skip_empty,
    )
}

/// saslStart: `{mechanism, payload, options: {skipEmptyExchange}}`.
pub(super) fn sasl_start(engine: &Engine, request: &Request<'_>) -> Result<Document, Error> {
    start(engine, request, request.body, request.db).map(step_reply)
}

/// saslContinue: `{conversationId, payload}`.
pub(super) fn sasl_continue(engine: &Engine, request: &Request<'_>) -> Result<Document, Error> {
    let conversation_id = match request.field("conversationId")? {
        Some(RawBsonRef::Int32(id)) => Some(id),
        Some(RawBsonRef::Int64(id)) => i32::try_from(id).ok(),
        Some(RawBsonRef::Double(id)) if id.fract() == 0.0 => Some(id as i32),
        _ => None,
    };
    let label = label(request);
    let step = sasl::step(
        &engine.directory(),
        &request.ctx.auth,
        &label,
        conversation_id,
        payload(request.body)?,
    )?;
    Ok(step_reply(step))
}

/// hello's `speculativeAuthenticate`: the saslStart it carries, answered inside hello; a
/// failure leaves the field out (the driver then authenticates the ordinary way).
pub(super) fn speculative(engine: &Engine, request: &Request<'_>) -> Option<Document> {
    let Ok(Some(RawBsonRef::Document(inner))) = request.body.get("speculativeAuthenticate") else {
        return None;
    };
    if inner.get("authenticate").ok().flatten().is_some() {
        // MONGODB-X509 lives in $external only; the Rust driver leaves `db` out here.
        let db = inner.get_str("db").unwrap_or(EXTERNAL_DB);
        return x509(engine, request, inner, db).ok();
    }
    inner.get("saslStart").ok().flatten()?;
    let db = inner.get_str("db").unwrap_or(request.db);
    start(engine, request, inner, db).ok().map(step_reply)
}

/// hello's `saslSupportedMechs: "db.user"`: the user's mechanisms, or nothing when there is
/// no such user.
pub(super) fn supported_mechanisms(engine: &Engine, request: &Request<'_>) -> Option<Bson> {
    let name = request.body.get_str("saslSupportedMechs").ok()?;
    let (db, user) = name.split_once('.')?;
    let found = users::find(&engine.store(), db, user).ok()??;
    Some(Bson::from(found.mechanisms()))
}

/// authenticate: only MONGODB-X509 uses it in mongod 7 (SCRAM goes through saslStart).
/// The user is the subject of the client certificate the TLS handshake verified, and
/// must exist in `$external`; an explicit `user` must equal that subject. Every failure
/// answers 18 only (the reason is logged), as for SCRAM.
pub(super) fn authenticate(engine: &Engine, request: &Request<'_>) -> Result<Document, Error> {
    x509(engine, request, request.body, request.db)
}

/// MONGODB-X509 for `authenticate` and hello's speculative form (`body` is the command or
/// the `speculativeAuthenticate` document); replies `{dbname, user}` as mongod does.
fn x509(
    engine: &Engine,
    request: &Request<'_>,
    body: &RawDocument,
    db: &str,
) -> Result<Document, Error> {
    let Ok(mechanism) = body.get_str("mechanism") else {
        return Err(Error::new(
            ErrorCode::Location(40414),
            "BSON field 'authenticate.mechanism' is missing but a required field",
        ));
    };
    if mechanism != "MONGODB-X509" {
        return Err(Error::new(
            ErrorCode::Other(334, "MechanismUnavailable"),
            format!("Unsupported mechanism '{mechanism}' on authenticate command; use saslStart"),
        ));
    }
    let named = body.get_str("user").ok();
    let label = label(request);
    let session = &request.ctx.auth;
    let failed = |user: &str, reason: &str| {
        sasl::failed(&engine.directory(), session, &label, user, db, reason)
    };
    sasl::check_attempts(
        &engine.directory(),
        session,
        &label,
        named.unwrap_or(""),
        db,
    )?;
    if db != EXTERNAL_DB {
        return Err(failed(
            named.unwrap_or(""),
            "X.509 authentication must always use the $external database",
        ));
    }
    let Some(subject) = request.ctx.auth.certificate_subject() else {
        return Err(failed(
            named.unwrap_or(""),
            "no verified client certificate on this connection (TLS with --tlsCAFile)",
        ));
    };
    if named.is_some_and(|user| user != subject) {
        return Err(failed(
            named.unwrap_or(""),
            &format!(
                "there is no x.509 client certificate matching the user (certificate: {subject})"
            ),
        ));
    }
    if users::find(&engine.store(), EXTERNAL_DB, &subject)?.is_none() {
        return Err(failed(&subject, "no such user"));
    }
    request.ctx.auth.login(EXTERNAL_DB, &subject);
    Ok(doc! { "dbname": EXTERNAL_DB, "user": subject })
}

/// logout: forgets the user authenticated on this database.
pub(super) fn logout(_: &Engine, request: &Request<'_>) -> Result<Document, Error> {
    request.ctx.auth.logout(request.db);
    Ok(Document::new())
}

/// connectionStatus: the authenticated user and its roles (and privileges with
/// `showPrivileges`).
pub(super) fn connection_status(engine: &Engine, request: &Request<'_>) -> Result<Document, Error> {
    let user = request.ctx.auth.user();
    let grants = crate::auth::grants(&engine.directory(), &request.ctx.auth)?;
    let users: Vec<Bson> = user
        .iter()
        .map(|(user, db)| Bson::Document(doc! { "user": user, "db": db }))
        .collect();
    let roles: Vec<Bson> = grants
        .as_ref()
        .map(|g| g.roles.iter().map(RoleName::to_bson).collect())
        .unwrap_or_default();
    let mut auth_info = doc! { "authenticatedUsers": users, "authenticatedUserRoles": roles };
    if flag(request.body, "showPrivileges") {
        let privileges: Vec<Bson> = grants
            .as_ref()
            .map(|g| {
                g.privileges
                    .iter()
                    .map(|p| Bson::Document(p.to_document()))
                    .collect()
            })
            .unwrap_or_default();
        auth_info.insert("authenticatedUserPrivileges", privileges);
    }
    Ok(doc! { "authInfo": auth_info })
}
