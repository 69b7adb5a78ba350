//! Users as mongod stores them, in `admin.system.users`:
//! `{_id: "<db>.<user>", userId: UUID, user, db, credentials: {SCRAM-SHA-1: {...},
//! SCRAM-SHA-256: {...}}, roles: [{role, db}], customData?}`.
//!
//! Invariants:
//! - `_id` is always `db + "." + user`, so a user is found by one `_id` lookup.
//! - `credentials` hold only [`Credential`]s (salted, iterated keys); the password given to
//!   [`credentials`] is dropped when it returns.
//! - Every change goes through the store's ordinary logged write path (one transaction,
//!   committed durably) and then bumps [`super::Auth::generation`].

use super::Directory;
use super::roles::RoleName;
use super::scram::{self, Credential, Mechanism};
use crate::error::{Error, ErrorCode};
use crate::store::{Namespace, Store};
use bson::{Bson, Document, RawDocumentBuf, doc};

/// Where users live.
pub(crate) fn users_ns() -> Namespace {
    Namespace::new("admin", "system.users")
}

/// `_id` of user `name` of database `db`.
pub(crate) fn user_id(db: &str, name: &str) -> String {
    format!("{db}.{name}")
}

/// A stored user, decoded.
#[derive(Debug, Clone)]
pub(crate) struct User {
    pub(crate) db: String,
    pub(crate) credentials: Vec<(Mechanism, Credential)>,
    pub(crate) roles: Vec<RoleName>,
    /// The stored document as it is.
    pub(crate) doc: Document,
}

impl User {
    fn decode(doc: Document) -> Option<User> {
        let mut credentials = Vec::new();
        if let Ok(stored) = doc.get_document("credentials") {
            for mechanism in scram::MECHANISMS {
                if let Some(credential) = stored
                    .get_document(mechanism.name())
                    .ok()
                    .and_then(Credential::from_document)
                {
                    credentials.push((mechanism, credential));
                }
            }
        }
        let roles = doc
            .get_array("roles")
            .map(|roles| roles.iter().filter_map(RoleName::from_bson).collect())
            .unwrap_or_default();
        Some(User {
            db: doc.get_str("db").ok()?.to_owned(),
            credentials,
            roles,
            doc,
        })
    }

    /// The credential stored for `mechanism`.
    pub(crate) fn credential(&self, mechanism: Mechanism) -> Option<&Credential> {
        self.credentials
            .iter()
            .find(|(m, _)| *m == mechanism)
            .map(|(_, c)| c)
    }

    /// The mechanisms the user can authenticate with.
    pub(crate) fn mechanisms(&self) -> Vec<&'static str> {
        self.credentials.iter().map(|(m, _)| m.name()).collect()
    }
}

fn decode_stored(bytes: &[u8]) -> Result<Document, Error> {
    let raw = bson::RawDocument::from_bytes(bytes)
        .map_err(|e| Error::new(ErrorCode::InvalidBson, e.to_string()))?;
    Document::try_from(raw).map_err(|e| Error::new(ErrorCode::InvalidBson, e.to_string()))
}

/// User `name` of `db`, if it exists.
pub(crate) fn find(store: &Store, db: &str, name: &str) -> Result<Option<User>, Error> {
    let reader = store.read()?;
    let Some(meta) = reader.collection(&users_ns())? else {
        return Ok(None);
    };
    let id = Bson::String(user_id(db, name));
    let id = bson::RawBson::try_from(id)
        .map_err(|e| Error::new(ErrorCode::InternalError, e.to_string()))?;
    let Some((_, bytes)) = reader.find_id(&meta, id.as_raw_bson_ref())? else {
        return Ok(None);
    };
    Ok(User::decode(decode_stored(&bytes)?))
}

/// Every stored user, in `_id` order; only those of `db` when given.
pub(crate) fn list(store: &Store, db: Option<&str>) -> Result<Vec<User>, Error> {
    let reader = store.read()?;
    let Some(meta) = reader.collection(&users_ns())? else {
        return Ok(Vec::new());
    };
    let mut users = Vec::new();
    for record in reader.by_id_order(&meta, true)? {
        let (_, bytes) = record?;
        if let Some(user) = User::decode(decode_stored(&bytes)?)
            && db.is_none_or(|db| user.db == db)
        {
            users.push(user);
        }
    }
    Ok(users)
}

/// Whether any user exists (the localhost exception ends with the first).
pub(crate) fn any_exist(store: &Store) -> Result<bool, Error> {
    let reader = store.read()?;
    let Some(meta) = reader.collection(&users_ns())? else {
        return Ok(false);
    };
    Ok(reader.by_id_order(&meta, true)?.next().is_some())
}

/// How a password is given to createUser / updateUser.
pub(crate) struct Password<'a> {
    pub(crate) pwd: &'a str,
    /// `digestPassword` (default true): false means `pwd` is already mongod's MD5 digest,
    /// which only SCRAM-SHA-1 can use.
    pub(crate) digest: bool,
    /// `mechanisms` (default both).
    pub(crate) mechanisms: Vec<Mechanism>,
}

/// The `credentials` document for `password`: one entry per mechanism, each with fresh
/// salt from the engine's host and the configured iteration count.
pub(crate) fn credentials(
    directory: &Directory<'_>,
    name: &str,
    password: &Password<'_>,
) -> Result<Document, Error> {
    if password.pwd.is_empty() {
        return Err(Error::new(ErrorCode::BadValue, "Password cannot be empty"));
    }
    let mut out = Document::new();
    for &mechanism in &password.mechanisms {
        let prepared = match (mechanism, password.digest) {
            (Mechanism::Sha1, false) => password.pwd.to_owned(),
            (Mechanism::Sha256, false) => {
                return Err(Error::new(
                    ErrorCode::BadValue,
                    "Use of SCRAM-SHA-256 requires undigested passwords",
                ));
            }
            (_, true) => {
                scram::prepared_password(mechanism, name, password.pwd).ok_or_else(|| {
                    Error::new(
                        ErrorCode::BadValue,
                        "Error preparing password: SASLprep failed",
                    )
                })?
            }
        };
        let mut salt = vec![0u8; mechanism.salt_len()];
        directory
            .host
            .fill_random(&mut salt)
            .map_err(random_failed)?;
        let iterations = iteration_count(directory, mechanism);
        let credential = Credential::derive(mechanism, &prepared, salt, iterations);
        out.insert(mechanism.name(), credential.to_document());
    }
    Ok(out)
}

pub(crate) fn random_failed(error: String) -> Error {
    Error::new(
        ErrorCode::InternalError,
        format!("the system's random number source failed: {error}"),
    )
}

/// `scramIterationCount` / `scramSHA256IterationCount` as set, else mongod's defaults.
pub(crate) fn iteration_count(directory: &Directory<'_>, mechanism: Mechanism) -> u32 {
    let name = match mechanism {
        Mechanism::Sha1 => "scramIterationCount",
        Mechanism::Sha256 => "scramSHA256IterationCount",
    };
    match directory.parameters.lock().get(name) {
        Some(Bson::Int32(n)) => u32::try_from(*n).unwrap_or(mechanism.iterations_default()),
        _ => mechanism.iterations_default(),
    }
}

/// A new user's document.
pub(crate) struct NewUser<'a> {
    pub(crate) db: &'a str,
    pub(crate) name: &'a str,
    pub(crate) credentials: Document,
    pub(crate) roles: Vec<RoleName>,
    pub(crate) custom_data: Option<Document>,
}

/// Stores a new user; 51003 when it exists, as mongod answers.
pub(crate) fn create(directory: &Directory<'_>, user: NewUser<'_>) -> Result<(), Error> {
    let store = directory.store();
    let mut writer = store.write()?;
    let id = user_id(user.db, user.name);
    let uuid = bson::Binary {
        subtype: bson::spec::BinarySubtype::Uuid,
        bytes: store.new_uuid().to_vec(),
    };
    let mut doc = doc! {
        "_id": &id,
        "userId": uuid,
        "user": user.name,
        "db": user.db,
        "credentials": user.credentials,
        "roles": user.roles.iter().map(RoleName::to_bson).collect::<Vec<_>>(),
    };
    if let Some(custom) = user.custom_data {
        doc.insert("customData", custom);
    }
    let raw = to_raw(&doc)?;
    let ns = users_ns();
    match writer.insert(&ns, &raw) {
        Ok(_) => {}
        Err(crate::store::StoreError::DuplicateKey(_)) => {
            return Err(Error::new(
                ErrorCode::Location(51003),
                format!("User \"{}@{}\" already exists", user.name, user.db),
            ));
        }
        Err(other) => return Err(other.into()),
    }
    writer.commit()?;
    directory.auth.invalidate();
    Ok(())
}

fn to_raw(doc: &Document) -> Result<RawDocumentBuf, Error> {
    RawDocumentBuf::try_from(doc).map_err(|e| Error::new(ErrorCode::InternalError, e.to_string()))
}

/// 11 UserNotFound, as mongod words it.
pub(crate) fn not_found(db: &str, name: &str) -> Error {
    Error::new(
        ErrorCode::Other(11, "UserNotFound"),
        format!("Could not find user \"{name}\" for db \"{db}\""),
    )
}

/// Rewrites user `name` of `db` with `change`; 11 UserNotFound when it does not exist.
pub(crate) fn update(
    directory: &Directory<'_>,
    db: &str,
    name: &str,
    change: impl FnOnce(&mut Document),
) -> Result<(), Error> {
    let store = directory.store();
    let mut writer = store.write()?;
    let ns = users_ns();
    let id = bson::RawBson::String(user_id(db, name));
    let Some((rid, stored)) = writer.find_id(&ns, id.as_raw_bson_ref())? else {
        return Err(not_found(db, name));
    };
    let mut doc = Document::try_from(stored.as_ref())
        .map_err(|e| Error::new(ErrorCode::InvalidBson, e.to_string()))?;
    change(&mut doc);
    writer.update(&ns, rid, &to_raw(&doc)?)?;
    writer.commit()?;
    directory.auth.invalidate();
    Ok(())
}

/// Drops every user of `db` whose name `matches`; how many were dropped.
pub(crate) fn drop_where(
    directory: &Directory<'_>,
    db: &str,
    matches: impl Fn(&str) -> bool,
) -> Result<u64, Error> {
    let store = directory.store();
    let mut writer = store.write()?;
    let ns = users_ns();
    let doomed = writer.scan_while(&ns, None, |_, doc| {
        Ok(doc.get_str("db").ok() == Some(db) && doc.get_str("user").is_ok_and(&matches))
    })?;
    for (rid, _) in &doomed {
        writer.delete(&ns, *rid)?;
    }
    writer.commit()?;
    directory.auth.invalidate();
    Ok(doomed.len() as u64)
}
