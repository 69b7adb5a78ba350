//! The user and role commands (createUser ... rolesInfo), thin over [`crate::auth`]:
//! parse as mongod does, call `auth::users` / `auth::roles`, shape mongod's reply. Those
//! not built answer 238 NotImplemented, never a success.

use super::Request;
use crate::auth::roles::{self, RoleName, StoredRole};
use crate::auth::scram::{MECHANISMS, Mechanism};
use crate::auth::users::{self, NewUser, Password};
use crate::engine::Engine;
use crate::error::{Error, ErrorCode};
use bson::raw::RawBsonRef;
use bson::{Bson, Document, doc};

fn missing(command: &str, field: &str) -> Error {
    Error::new(
        ErrorCode::Location(40414),
        format!("BSON field '{command}.{field}' is missing but a required field"),
    )
}

/// The name a command's first field gives (createUser: "name").
fn subject<'a>(request: &Request<'a>) -> Result<&'a str, Error> {
    match request.field(request.name)? {
        Some(RawBsonRef::String(name)) if !name.is_empty() => Ok(name),
        Some(RawBsonRef::String(_)) => Err(Error::new(
            ErrorCode::BadValue,
            format!("{} requires a non-empty name", request.name),
        )),
        _ => Err(Error::new(
            ErrorCode::TypeMismatch,
            format!(
                "BSON field '{}.{}' is the wrong type, expected type 'string'",
                request.name, request.name
            ),
        )),
    }
}

fn roles_field(
    engine: &Engine,
    request: &Request<'_>,
    required: bool,
) -> Result<Option<Vec<RoleName>>, Error> {
    match request.field("roles")? {
        Some(value) => {
            let names = roles::parse_role_names(value, request.db)?;
            roles::check_exist(&engine.store(), &names)?;
            Ok(Some(names))
        }
        None if required => Err(missing(request.name, "roles")),
        None => Ok(None),
    }
}

fn mechanisms(request: &Request<'_>) -> Result<Vec<Mechanism>, Error> {
    let Some(value) = request.field("mechanisms")? else {
        return Ok(MECHANISMS.to_vec());
    };
    let RawBsonRef::Array(list) = value else {
        return Err(Error::new(
            ErrorCode::TypeMismatch,
            "mechanisms must be an array",
        ));
    };
    let mut out = Vec::new();
    for item in list {
        let item = item.map_err(|e| Error::new(ErrorCode::InvalidBson, e.to_string()))?;
        let Some(name) = item.as_str() else {
            return Err(Error::new(
                ErrorCode::TypeMismatch,
                "mechanisms must be strings",
            ));
        };
        let Some(mechanism) = Mechanism::parse(name) else {
            return Err(Error::new(
                ErrorCode::BadValue,
                format!("Unknown auth mechanism '{name}'"),
            ));
        };
        if !out.contains(&mechanism) {
            out.push(mechanism);
        }
    }
    if out.is_empty() {
        return Err(Error::new(
            ErrorCode::BadValue,
            "mechanisms field must not be empty",
        ));
    }
    out.sort();
    Ok(out)
}

fn password<'a>(request: &Request<'a>) -> Result<Option<Password<'a>>, Error> {
    let pwd = match request.field("pwd")? {
        None => return Ok(None),
        Some(RawBsonRef::String(pwd)) => pwd,
        Some(_) => {
            return Err(Error::new(
                ErrorCode::TypeMismatch,
                format!(
                    "BSON field '{}.pwd' is the wrong type, expected type 'string'",
                    request.name
                ),
            ));
        }
    };
    let digest = match request.field("digestPassword")? {
        None => true,
        Some(RawBsonRef::Boolean(b)) => b,
        Some(_) => {
            return Err(Error::new(
                ErrorCode::TypeMismatch,
                "digestPassword must be a boolean",
            ));
        }
    };
    Ok(Some(Password {
        pwd,
        digest,
        mechanisms: mechanisms(request)?,
    }))
}

fn custom_data(request: &Request<'_>) -> Result<Option<Document>, Error> {
    match request.field("customData")? {
        None => Ok(None),
        Some(RawBsonRef::Document(doc)) => Document::try_from(doc)
            .map(Some)
            .map_err(|e| Error::new(ErrorCode::InvalidBson, e.to_string())),
        Some(_) => Err(Error::new(
            ErrorCode::TypeMismatch,
            "customData must be an object",
        )),
    }
}

/// The database of users authenticated outside the server (MONGODB-X509).
pub(crate) const EXTERNAL_DB: &str = "$external";

/// mongod's answer to a password for a `$external` user.
fn external_password() -> Error {
    Error::new(
        ErrorCode::BadValue,
        "Cannot set the password for users defined on the '$external' database",
    )
}

/// createUser: `{createUser, pwd, roles, mechanisms?, digestPassword?, customData?}`.
pub(super) fn create_user(engine: &Engine, request: &Request<'_>) -> Result<Document, Error> {
    let name = subject(request)?;
    let roles = roles_field(engine, request, true)?.unwrap_or_default();
    let credentials = if request.db == EXTERNAL_DB {
        // Users of $external (MONGODB-X509) prove who they are outside: no SCRAM keys.
        if password(request)?.is_some() {
            return Err(external_password());
        }
        if request.field("mechanisms")?.is_some() {
            return Err(Error::new(
                ErrorCode::BadValue,
                "mechanisms field may only be specified with a password",
            ));
        }
        bson::doc! { "external": true }
    } else {
        let Some(password) = password(request)? else {
            return Err(Error::new(
                ErrorCode::BadValue,
                "Must provide a 'pwd' field for all user documents, except those with '$external' as the user's source db",
            ));
        };
        if request.field("mechanisms")?.is_some() && password.mechanisms.is_empty() {
            return Err(missing(request.name, "mechanisms"));
        }
        users::credentials(&engine.directory(), name, &password)?
    };
    users::create(
        &engine.directory(),
        NewUser {
            db: request.db,
            name,
            credentials,
            roles,
            custom_data: custom_data(request)?,
        },
    )?;
    Ok(Document::new())
}

/// updateUser: a new password, roles or customData.
pub(super) fn update_user(engine: &Engine, request: &Request<'_>) -> Result<Document, Error> {
    let name = subject(request)?;
    let roles = roles_field(engine, request, false)?;
    let custom = custom_data(request)?;
    let credentials = match password(request)? {
        Some(_) if request.db == EXTERNAL_DB => return Err(external_password()),
        Some(password) => Some(users::credentials(&engine.directory(), name, &password)?),
        None if request.field("mechanisms")?.is_some() => {
            return Err(Error::new(
                ErrorCode::BadValue,
                "mechanisms field may only be specified with a password",
            ));
        }
        None => None,
    };
    if roles.is_none() && custom.is_none() && credentials.is_none() {
        return Err(Error::new(
            ErrorCode::BadValue,
            "Must specify at least one field to update in updateUser",
        ));
    }
    users::update(&engine.directory(), request.db, name, |doc| {
        if let Some(credentials) = credentials {
            doc.insert("credentials", credentials);
        }
        if let Some(roles) = roles {
            doc.insert(
                "roles",
                roles.iter().map(RoleName::to_bson).collect::<Vec<_>>(),
            );
        }
        if let Some(custom) = custom {
            doc.insert("customData", custom);
        }
    })?;
    Ok(Document::new())
}

/// dropUser: 11 UserNotFound when absent.
pub(super) fn drop_user(engine: &Engine, request: &Request<'_>) -> Result<Document, Error> {
    let name = subject(request)?;
    if users::drop_where(&engine.directory(), request.db, |user| user == name)? == 0 {
        return Err(users::not_found(request.db, name));
    }
    Ok(Document::new())
}

/// dropAllUsersFromDatabase: `{n}`.
pub(super) fn drop_all_users(engine: &Engine, request: &Request<'_>) -> Result<Document, Error> {
    let n = users::drop_where(&engine.directory(), request.db, |_| true)?;
    Ok(doc! { "n": i64::try_from(n).unwrap_or(i64::MAX) })
}

/// grantRolesToUser / revokeRolesFromUser.
pub(super) fn change_user_roles(engine: &Engine, request: &Request<'_>) -> Result<Document, Error> {
    let name = subject(request)?;
    let Some(changed) = request.field("roles")? else {
        return Err(missing(request.name, "roles"));
    };
    let changed = roles::parse_role_names(changed, request.db)?;
    let grant = request.name == "grantRolesToUser";
    if grant {
        roles::check_exist(&engine.store(), &changed)?;
    }
    users::update(&engine.directory(), request.db, name, |doc| {
        let mut held: Vec<RoleName> = doc
            .get_array("roles")
            .map(|roles| roles.iter().filter_map(RoleName::from_bson).collect())
            .unwrap_or_default();
        for role in changed {
            let at = held.iter().position(|r| *r == role);
            match (grant, at) {
                (true, None) => held.push(role),
                (false, Some(at)) => {
                    held.remove(at);
                }
                _ => {}
            }
        }
        doc.insert(
            "roles",
            held.iter().map(RoleName::to_bson).collect::<Vec<_>>(),
        );
    })?;
    Ok(Document::new())
}

/// One usersInfo entry as mongod shapes it.
fn user_entry(
    engine: &Engine,
    user: &users::User,
    credentials: bool,
    privileges: bool,
) -> Result<Document, Error> {
    let mut entry = Document::new();
    for key in ["_id", "userId", "user", "db"] {
        if let Some(value) = user.doc.get(key) {
            entry.insert(key, value.clone());
        }
    }
    if let Some(custom) = user.doc.get("customData") {
        entry.insert("customData", custom.clone());
    }
    entry.insert(
        "roles",
        user.roles.iter().map(RoleName::to_bson).collect::<Vec<_>>(),
    );
    if credentials && let Some(stored) = user.doc.get("credentials") {
        entry.insert("credentials", stored.clone());
    }
    if privileges {
        let grants = roles::resolve(&engine.store(), &user.roles)?;
        entry.insert(
            "inheritedRoles",
            grants
                .roles
                .iter()
                .map(RoleName::to_bson)
                .collect::<Vec<_>>(),
        );
        entry.insert(
            "inheritedPrivileges",
            grants
                .privileges
                .iter()
                .map(|p| Bson::Document(p.to_document()))
                .collect::<Vec<_>>(),
        );
    }
    entry.insert("mechanisms", user.mechanisms());
    Ok(entry)
}

/// Which users a usersInfo / rolesInfo value names: `1` (all of the database), a name, a
/// `{user|role, db}` document, or an array of those.
fn named(
    value: RawBsonRef<'_>,
    db: &str,
    key: &str,
) -> Result<Option<Vec<(String, String)>>, Error> {
    let one = |item: RawBsonRef<'_>| -> Result<(String, String), Error> {
        match item {
            RawBsonRef::String(name) => Ok((db.to_owned(), name.to_owned())),
            RawBsonRef::Document(spec) => match (spec.get_str(key), spec.get_str("db")) {
                (Ok(name), Ok(db)) => Ok((db.to_owned(), name.to_owned())),
                _ => Err(Error::new(
                    ErrorCode::BadValue,
                    format!("{key} and db fields are required"),
                )),
            },
            _ => Err(Error::new(
                ErrorCode::BadValue,
                format!("{key} names must be strings or {{{key}, db}} documents"),
            )),
        }
    };
    match value {
        RawBsonRef::Int32(1) | RawBsonRef::Int64(1) => Ok(None),
        RawBsonRef::Double(1.0) => Ok(None),
        RawBsonRef::Array(list) => {
            let mut out = Vec::new();
            for item in list {
                out.push(one(item.map_err(|e| {
                    Error::new(ErrorCode::InvalidBson, e.to_string())
                })?)?);
            }
            Ok(Some(out))
        }
        other => Ok(Some(vec![one(other)?])),
    }
}

/// usersInfo: `{usersInfo: 1 | name | {user, db} | [...] , showCredentials,
/// showPrivileges}` or `{usersInfo: {forAllDBs: true}}`.
pub(super) fn users_info(engine: &Engine, request: &Request<'_>) -> Result<Document, Error> {
    let Some(value) = request.field("usersInfo")? else {
        return Err(missing("usersInfo", "usersInfo"));
    };
    let credentials = super::flag(request.body, "showCredentials");
    let privileges = super::flag(request.body, "showPrivileges");
    let store = engine.store();
    let all_dbs = matches!(value, RawBsonRef::Document(spec) if super::flag(spec, "forAllDBs"));
    let found = if all_dbs {
        users::list(&store, None)?
    } else {
        match named(value, request.db, "user")? {
            None => users::list(&store, Some(request.db))?,
            Some(names) => {
                let mut out = Vec::new();
                for (db, name) in names {
                    out.extend(users::find(&store, &db, &name)?);
                }
                out
            }
        }
    };
    let mut entries = Vec::new();
    for user in &found {
        entries.push(Bson::Document(user_entry(
            engine,
            user,
            credentials,
            privileges,
        )?));
    }
    Ok(doc! { "users": entries })
}

/// createRole: `{createRole, privileges, roles}`.
pub(super) fn create_role(engine: &Engine, request: &Request<'_>) -> Result<Document, Error> {
    let name = subject(request)?;
    let Some(privileges) = request.field("privileges")? else {
        return Err(missing(request.name, "privileges"));
    };
    let privileges = roles::parse_privileges(privileges)?;
    let inherited = roles_field(engine, request, true)?.unwrap_or_default();
    roles::create_stored(
        &engine.directory(),
        &StoredRole {
            name: RoleName::new(name, request.db),
            privileges,
            roles: inherited,
        },
    )?;
    Ok(Document::new())
}

/// dropRole: 31 RoleNotFound when absent.
pub(super) fn drop_role(engine: &Engine, request: &Request<'_>) -> Result<Document, Error> {
    let name = RoleName::new(subject(request)?, request.db);
    if !roles::drop_stored(&engine.directory(), &name)? {
        return Err(roles::not_found(&name));
    }
    Ok(Document::new())
}

/// grantPrivilegesToRole: `{grantPrivilegesToRole, privileges}`.
pub(super) fn grant_privileges(engine: &Engine, request: &Request<'_>) -> Result<Document, Error> {
    let name = RoleName::new(subject(request)?, request.db);
    let Some(privileges) = request.field("privileges")? else {
        return Err(missing(request.name, "privileges"));
    };
    let privileges = roles::parse_privileges(privileges)?;
    roles::update_stored(&engine.directory(), &name, |role| {
        for privilege in privileges {
            if !role.privileges.contains(&privilege) {
                role.privileges.push(privilege);
            }
        }
    })?;
    Ok(Document::new())
}

/// rolesInfo: `{rolesInfo: 1 | name | {role, db} | [...], showPrivileges,
/// showBuiltinRoles}`.
pub(super) fn roles_info(engine: &Engine, request: &Request<'_>) -> Result<Document, Error> {
    let Some(value) = request.field("rolesInfo")? else {
        return Err(missing("rolesInfo", "rolesInfo"));
    };
    let show_privileges = super::flag(request.body, "showPrivileges");
    let store = engine.store();
    let mut entries = Vec::new();
    let names: Vec<RoleName> = match named(value, request.db, "role")? {
        None => roles::list_stored(&store, Some(request.db))?
            .into_iter()
            .map(|role| role.name)
            .collect(),
        Some(names) => names
            .into_iter()
            .map(|(db, role)| RoleName::new(&role, &db))
            .collect(),
    };
    for name in names {
        let stored = roles::find_stored(&store, &name)?;
        let built_in = roles::is_built_in(&name);
        if stored.is_none() && !built_in {
            continue;
        }
        let direct: Vec<Bson> = stored
            .as_ref()
            .map(|r| r.roles.iter().map(RoleName::to_bson).collect())
            .unwrap_or_default();
        let mut entry = doc! {
            "_id": format!("{}.{}", name.db, name.role),
            "role": &name.role,
            "db": &name.db,
            "isBuiltin": built_in,
            "roles": direct,
        };
        if show_privileges {
            let privileges = roles::privileges_of(&store, &name)?;
            let list: Vec<Bson> = privileges
                .iter()
                .map(|p| Bson::Document(p.to_document()))
                .collect();
            entry.insert("inheritedPrivileges", list);
        }
        entries.push(Bson::Document(entry));
    }
    Ok(doc! { "roles": entries })
}

/// invalidateUserCache: every session recomputes its privileges.
pub(super) fn invalidate_user_cache(engine: &Engine, _: &Request<'_>) -> Result<Document, Error> {
    engine.auth.invalidate();
    Ok(Document::new())
}

/// The role commands not built yet: refused, never a silent success.
pub(super) fn not_implemented(_: &Engine, request: &Request<'_>) -> Result<Document, Error> {
    Err(Error::new(
        ErrorCode::NotImplemented,
        format!("{} is not implemented by this server yet", request.name),
    ))
}
