//! Roles: mongod's built-in roles (their privileges as mongod 7.0 documents them, the
//! actions this server's commands check), and user-defined roles stored as mongod stores
//! them in `admin.system.roles`: `{_id: "<db>.<role>", role, db, privileges: [{resource,
//! actions}], roles: [{role, db}]}`.
//!
//! Invariants:
//! - A resource `{db: "", collection: ""}` or `{db: d, collection: ""}` matches only
//!   normal collections (not `system.*`), as mongod's; a system collection is reached only
//!   by naming it exactly, or by `anyResource`.
//! - Resolving a user's roles visits each role once (inherited roles may form cycles).

use super::{Directory, Grants};
use crate::error::{Error, ErrorCode};
use crate::store::{Namespace, Store};
use bson::raw::RawBsonRef;
use bson::{Bson, Document, doc};

/// Where user-defined roles live.
pub(crate) fn roles_ns() -> Namespace {
    Namespace::new("admin", "system.roles")
}

/// A role, named by its name and database.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct RoleName {
    pub(crate) role: String,
    pub(crate) db: String,
}

impl RoleName {
    pub(crate) fn new(role: &str, db: &str) -> RoleName {
        RoleName {
            role: role.to_owned(),
            db: db.to_owned(),
        }
    }

    pub(crate) fn from_bson(value: &Bson) -> Option<RoleName> {
        let doc = value.as_document()?;
        Some(RoleName::new(
            doc.get_str("role").ok()?,
            doc.get_str("db").ok()?,
        ))
    }

    pub(crate) fn to_bson(&self) -> Bson {
        Bson::Document(doc! { "role": &self.role, "db": &self.db })
    }
}

/// What a privilege applies to (mongod's names, `anyResource` among them).
#[derive(Debug, Clone, PartialEq, Eq)]
#[expect(clippy::enum_variant_names, reason = "mongod's resource name")]
pub(crate) enum Resource {
    Cluster,
    AnyResource,
    /// `{db, collection}`; an empty part means any (normal collections only).
    Namespace {
        db: String,
        collection: String,
    },
}

/// What a command acts on (see [`super::authorize`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Target<'a> {
    Cluster,
    Database(&'a str),
    Collection(&'a str, &'a str),
}

impl Resource {
    pub(crate) fn matches(&self, target: Target<'_>) -> bool {
        match (self, target) {
            (Resource::AnyResource, _) => true,
            (Resource::Cluster, Target::Cluster) => true,
            (Resource::Namespace { db, collection }, Target::Database(d)) => {
                (db.is_empty() || db == d) && collection.is_empty()
            }
            (Resource::Namespace { db, collection }, Target::Collection(d, c)) => {
                let db_ok = db.is_empty() || db == d;
                let collection_ok = if collection.is_empty() {
                    !c.starts_with("system.")
                } else {
                    collection == c
                };
                db_ok && collection_ok
            }
            _ => false,
        }
    }

    pub(crate) fn to_document(&self) -> Document {
        match self {
            Resource::Cluster => doc! { "cluster": true },
            Resource::AnyResource => doc! { "anyResource": true },
            Resource::Namespace { db, collection } => doc! { "db": db, "collection": collection },
        }
    }

    fn parse(doc: &Document) -> Result<Resource, Error> {
        if doc.get_bool("cluster").unwrap_or(false) {
            return Ok(Resource::Cluster);
        }
        if doc.get_bool("anyResource").unwrap_or(false) {
            return Ok(Resource::AnyResource);
        }
        match (doc.get_str("db"), doc.get_str("collection")) {
            (Ok(db), Ok(collection)) => Ok(Resource::Namespace {
                db: db.to_owned(),
                collection: collection.to_owned(),
            }),
            _ => Err(Error::new(
                ErrorCode::FailedToParse,
                "resource must have db and collection fields, or cluster: true, or anyResource: true",
            )),
        }
    }
}

/// Actions on a resource.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Privilege {
    pub(crate) resource: Resource,
    pub(crate) actions: Vec<String>,
}

impl Privilege {
    pub(crate) fn to_document(&self) -> Document {
        doc! { "resource": self.resource.to_document(), "actions": self.actions.clone() }
    }
}

const READ: &[&str] = &[
    "changeStream",
    "collStats",
    "dbHash",
    "dbStats",
    "find",
    "killCursors",
    "listCollections",
    "listIndexes",
    "listSearchIndexes",
];
const WRITE: &[&str] = &[
    "convertToCapped",
    "createCollection",
    "createIndex",
    "dropCollection",
    "dropIndex",
    "insert",
    "remove",
    "renameCollectionSameDB",
    "update",
];
const DB_ADMIN: &[&str] = &[
    "bypassDocumentValidation",
    "collMod",
    "collStats",
    "compact",
    "convertToCapped",
    "createCollection",
    "createIndex",
    "dbHash",
    "dbStats",
    "dropCollection",
    "dropDatabase",
    "dropIndex",
    "enableProfiler",
    "listCollections",
    "listIndexes",
    "planCacheRead",
    "planCacheWrite",
    "reIndex",
    "renameCollectionSameDB",
    "validate",
];
const USER_ADMIN: &[&str] = &[
    "changeCustomData",
    "changePassword",
    "createRole",
    "createUser",
    "dropRole",
    "dropUser",
    "grantRole",
    "revokeRole",
    "viewRole",
    "viewUser",
];
const CLUSTER_MONITOR: &[&str] = &[
    "connPoolStats",
    "getCmdLineOpts",
    "getLog",
    "getParameter",
    "hostInfo",
    "inprog",
    "listDatabases",
    "listSessions",
    "replSetGetConfig",
    "replSetGetStatus",
    "serverStatus",
    "top",
];
const CLUSTER_MONITOR_ANY: &[&str] = &["collStats", "dbStats", "indexStats"];
const HOST_MANAGER: &[&str] = &[
    "fsync",
    "invalidateUserCache",
    "killAnyCursor",
    "killAnySession",
    "killop",
    "logRotate",
    "setParameter",
    "shutdown",
    "unlock",
];
const HOST_MANAGER_ANY: &[&str] = &["killCursors", "repairDatabase"];
const LIST_DATABASES: &[&str] = &["listDatabases"];
const CLUSTER_MANAGER: &[&str] = &[
    "listDatabases",
    "replSetConfigure",
    "replSetGetConfig",
    "replSetGetStatus",
    "replSetStateChange",
];
const SYSTEM_READ: &[&str] = &["collStats", "dbHash", "dbStats", "find", "killCursors"];
const BACKUP_ANY: &[&str] = &[
    "collStats",
    "dbHash",
    "dbStats",
    "find",
    "listCollections",
    "listIndexes",
];
const BACKUP_CLUSTER: &[&str] = &["getParameter", "listDatabases", "serverStatus"];
const RESTORE_ANY: &[&str] = &[
    "bypassDocumentValidation",
    "changeCustomData",
    "changePassword",
    "collMod",
    "convertToCapped",
    "createCollection",
    "createIndex",
    "createRole",
    "createUser",
    "dropCollection",
    "dropRole",
    "dropUser",
    "grantRole",
    "insert",
    "listCollections",
    "revokeRole",
    "viewRole",
    "viewUser",
];
const GET_PARAMETER: &[&str] = &["getParameter"];
const DROP_DATABASE: &[&str] = &["dropDatabase"];
const VALIDATE: &[&str] = &["validate"];

/// Where a built-in grant applies, relative to the role's database.
#[derive(Clone, Copy)]
enum Scope {
    /// The role's database (its normal collections and itself).
    ThisDb,
    /// Every database's normal collections.
    AnyDb,
    Cluster,
    AnyResource,
    /// One collection of `admin`.
    Admin(&'static str),
}

struct BuiltIn {
    name: &'static str,
    /// Exists only on `admin` (the cluster-wide roles).
    admin_only: bool,
    grants: &'static [(Scope, &'static [&'static str])],
    inherits: &'static [&'static str],
}

const fn built_in(
    name: &'static str,
    admin_only: bool,
    grants: &'static [(Scope, &'static [&'static str])],
    inherits: &'static [&'static str],
) -> BuiltIn {
    BuiltIn {
        name,
        admin_only,
        grants,
        inherits,
    }
}

/// mongod's built-in roles this server knows.
const BUILT_IN: &[BuiltIn] = &[
    built_in("read", false, &[(Scope::ThisDb, READ)], &[]),
    built_in(
        "readWrite",
        false,
        &[(Scope::ThisDb, READ), (Scope::ThisDb, WRITE)],
        &[],
    ),
    built_in("dbAdmin", false, &[(Scope::ThisDb, DB_ADMIN)], &[]),
    built_in("userAdmin", false, &[(Scope::ThisDb, USER_ADMIN)], &[]),
    built_in(
        "dbOwner",
        false,
        &[],
        &["readWrite", "dbAdmin", "userAdmin"],
    ),
    built_in(
        "clusterMonitor",
        true,
        &[
            (Scope::Cluster, CLUSTER_MONITOR),
            (Scope::AnyDb, CLUSTER_MONITOR_ANY),
        ],
        &[],
    ),
    built_in(
        "hostManager",
        true,
        &[
            (Scope::Cluster, HOST_MANAGER),
            (Scope::AnyDb, HOST_MANAGER_ANY),
        ],
        &[],
    ),
    built_in(
        "clusterManager",
        true,
        &[(Scope::Cluster, CLUSTER_MANAGER)],
        &[],
    ),
    built_in(
        "clusterAdmin",
        true,
        &[(Scope::AnyDb, DROP_DATABASE)],
        &["clusterManager", "clusterMonitor", "hostManager"],
    ),
    built_in(
        "readAnyDatabase",
        true,
        &[(Scope::AnyDb, READ), (Scope::Cluster, LIST_DATABASES)],
        &[],
    ),
    built_in(
        "readWriteAnyDatabase",
        true,
        &[
            (Scope::AnyDb, READ),
            (Scope::AnyDb, WRITE),
            (Scope::Cluster, LIST_DATABASES),
        ],
        &[],
    ),
    built_in(
        "userAdminAnyDatabase",
        true,
        &[
            (Scope::AnyDb, USER_ADMIN),
            (Scope::Cluster, LIST_DATABASES),
            (Scope::Cluster, &["invalidateUserCache"]),
            (Scope::Admin("system.users"), SYSTEM_READ),
            (Scope::Admin("system.roles"), SYSTEM_READ),
        ],
        &[],
    ),
    built_in(
        "dbAdminAnyDatabase",
        true,
        &[(Scope::AnyDb, DB_ADMIN), (Scope::Cluster, LIST_DATABASES)],
        &[],
    ),
    built_in(
        "backup",
        true,
        &[
            (Scope::AnyDb, BACKUP_ANY),
            (Scope::Cluster, BACKUP_CLUSTER),
            (Scope::Admin("system.users"), &["find"]),
            (Scope::Admin("system.roles"), &["find"]),
        ],
        &[],
    ),
    built_in(
        "restore",
        true,
        &[(Scope::AnyDb, RESTORE_ANY), (Scope::Cluster, GET_PARAMETER)],
        &[],
    ),
    built_in(
        "root",
        true,
        &[(Scope::AnyResource, VALIDATE)],
        &[
            "readWriteAnyDatabase",
            "dbAdminAnyDatabase",
            "userAdminAnyDatabase",
            "clusterAdmin",
            "backup",
            "restore",
        ],
    ),
];

/// Every action a built-in role grants: what a user-defined role may name.
/// Actions mongod knows that no built-in role grants (custom roles may).
const CUSTOM_ONLY_ACTIONS: &[&str] = &["changeOwnPassword", "changeOwnCustomData"];

fn is_known_action(action: &str) -> bool {
    CUSTOM_ONLY_ACTIONS.contains(&action)
        || BUILT_IN
            .iter()
            .flat_map(|role| role.grants.iter())
            .any(|(_, actions)| actions.contains(&action))
}

fn built_in_role(name: &RoleName) -> Option<&'static BuiltIn> {
    BUILT_IN
        .iter()
        .find(|role| role.name == name.role && (!role.admin_only || name.db == "admin"))
}

/// Whether `name` is a built-in role (on a database where it exists).
pub(crate) fn is_built_in(name: &RoleName) -> bool {
    built_in_role(name).is_some()
}

fn expand(role: &BuiltIn, db: &str) -> Vec<Privilege> {
    role.grants
        .iter()
        .map(|(scope, actions)| Privilege {
            resource: match scope {
                Scope::ThisDb => Resource::Namespace {
                    db: db.to_owned(),
                    collection: String::new(),
                },
                Scope::AnyDb => Resource::Namespace {
                    db: String::new(),
                    collection: String::new(),
                },
                Scope::Cluster => Resource::Cluster,
                Scope::AnyResource => Resource::AnyResource,
                Scope::Admin(collection) => Resource::Namespace {
                    db: "admin".to_owned(),
                    collection: (*collection).to_owned(),
                },
            },
            actions: actions.iter().map(|a| (*a).to_owned()).collect(),
        })
        .collect()
}

/// A stored role, decoded.
#[derive(Debug, Clone)]
pub(crate) struct StoredRole {
    pub(crate) name: RoleName,
    pub(crate) privileges: Vec<Privilege>,
    pub(crate) roles: Vec<RoleName>,
}

impl StoredRole {
    fn decode(doc: &Document) -> Option<StoredRole> {
        let name = RoleName::new(doc.get_str("role").ok()?, doc.get_str("db").ok()?);
        let privileges = doc
            .get_array("privileges")
            .map(|list| {
                list.iter()
                    .filter_map(|p| parse_privilege(p.as_document()?).ok())
                    .collect()
            })
            .unwrap_or_default();
        let roles = doc
            .get_array("roles")
            .map(|list| list.iter().filter_map(RoleName::from_bson).collect())
            .unwrap_or_default();
        Some(StoredRole {
            name,
            privileges,
            roles,
        })
    }

    pub(crate) fn to_document(&self) -> Document {
        doc! {
            "_id": format!("{}.{}", self.name.db, self.name.role),
            "role": &self.name.role,
            "db": &self.name.db,
            "privileges": self.privileges.iter().map(Privilege::to_document).collect::<Vec<_>>(),
            "roles": self.roles.iter().map(RoleName::to_bson).collect::<Vec<_>>(),
        }
    }
}

fn parse_privilege(doc: &Document) -> Result<Privilege, Error> {
    let resource = doc
        .get_document("resource")
        .map_err(|_| Error::new(ErrorCode::FailedToParse, "privilege lacks a resource"))?;
    let actions = doc
        .get_array("actions")
        .map_err(|_| Error::new(ErrorCode::FailedToParse, "privilege lacks actions"))?;
    let mut names = Vec::new();
    for action in actions {
        let Some(action) = action.as_str() else {
            return Err(Error::new(
                ErrorCode::FailedToParse,
                "actions must be strings",
            ));
        };
        names.push(action.to_owned());
    }
    Ok(Privilege {
        resource: Resource::parse(resource)?,
        actions: names,
    })
}

/// Parses a request's `privileges` array, refusing actions mongod would not know.
pub(crate) fn parse_privileges(value: RawBsonRef<'_>) -> Result<Vec<Privilege>, Error> {
    let RawBsonRef::Array(list) = value else {
        return Err(Error::new(
            ErrorCode::TypeMismatch,
            "privileges must be an array",
        ));
    };
    let mut out = Vec::new();
    for item in list {
        let item = item.map_err(|e| Error::new(ErrorCode::InvalidBson, e.to_string()))?;
        let Some(doc) = item.as_document() else {
            return Err(Error::new(
                ErrorCode::TypeMismatch,
                "each privilege must be a document",
            ));
        };
        let doc = Document::try_from(doc)
            .map_err(|e| Error::new(ErrorCode::InvalidBson, e.to_string()))?;
        let privilege = parse_privilege(&doc)?;
        if let Some(unknown) = privilege.actions.iter().find(|a| !is_known_action(a)) {
            return Err(Error::new(
                ErrorCode::BadValue,
                format!("Unrecognized action privilege string: {unknown}"),
            ));
        }
        out.push(privilege);
    }
    Ok(out)
}

/// Parses a request's `roles` array: names (roles of `default_db`) or `{role, db}`.
pub(crate) fn parse_role_names(
    value: RawBsonRef<'_>,
    default_db: &str,
) -> Result<Vec<RoleName>, Error> {
    let RawBsonRef::Array(list) = value else {
        return Err(Error::new(
            ErrorCode::TypeMismatch,
            "roles must be an array",
        ));
    };
    let mut out = Vec::new();
    for item in list {
        let item = item.map_err(|e| Error::new(ErrorCode::InvalidBson, e.to_string()))?;
        let name = match item {
            RawBsonRef::String(role) => RoleName::new(role, default_db),
            RawBsonRef::Document(doc) => match (doc.get_str("role"), doc.get_str("db")) {
                (Ok(role), Ok(db)) => RoleName::new(role, db),
                _ => {
                    return Err(Error::new(
                        ErrorCode::Location(40414),
                        "BSON field 'role' or 'db' is missing but a required field",
                    ));
                }
            },
            _ => {
                return Err(Error::new(
                    ErrorCode::BadValue,
                    "Role names must be either strings or objects",
                ));
            }
        };
        out.push(name);
    }
    Ok(out)
}

/// 31 RoleNotFound, as mongod words it.
pub(crate) fn not_found(name: &RoleName) -> Error {
    Error::new(
        ErrorCode::Other(31, "RoleNotFound"),
        format!("Could not find role: {}@{}", name.role, name.db),
    )
}

/// The stored role `name`.
pub(crate) fn find_stored(store: &Store, name: &RoleName) -> Result<Option<StoredRole>, Error> {
    let reader = store.read()?;
    let Some(meta) = reader.collection(&roles_ns())? else {
        return Ok(None);
    };
    let id = bson::RawBson::String(format!("{}.{}", name.db, name.role));
    let Some((_, bytes)) = reader.find_id(&meta, id.as_raw_bson_ref())? else {
        return Ok(None);
    };
    let raw = bson::RawDocument::from_bytes(&bytes)
        .map_err(|e| Error::new(ErrorCode::InvalidBson, e.to_string()))?;
    let doc =
        Document::try_from(raw).map_err(|e| Error::new(ErrorCode::InvalidBson, e.to_string()))?;
    Ok(StoredRole::decode(&doc))
}

/// Every stored role, of `db` when given.
pub(crate) fn list_stored(store: &Store, db: Option<&str>) -> Result<Vec<StoredRole>, Error> {
    let reader = store.read()?;
    let Some(meta) = reader.collection(&roles_ns())? else {
        return Ok(Vec::new());
    };
    let mut out = Vec::new();
    for record in reader.by_id_order(&meta, true)? {
        let (_, bytes) = record?;
        let raw = bson::RawDocument::from_bytes(&bytes)
            .map_err(|e| Error::new(ErrorCode::InvalidBson, e.to_string()))?;
        let doc = Document::try_from(raw)
            .map_err(|e| Error::new(ErrorCode::InvalidBson, e.to_string()))?;
        if let Some(role) = StoredRole::decode(&doc)
            && db.is_none_or(|db| role.name.db == db)
        {
            out.push(role);
        }
    }
    Ok(out)
}

/// Fails with 31 RoleNotFound unless every role in `names` exists.
pub(crate) fn check_exist(store: &Store, names: &[RoleName]) -> Result<(), Error> {
    for name in names {
        if !is_built_in(name) && find_stored(store, name)?.is_none() {
            return Err(not_found(name));
        }
    }
    Ok(())
}

/// The roles reachable from `direct` (themselves included) and all their privileges.
/// Roles that no longer exist grant nothing.
pub(crate) fn resolve(store: &Store, direct: &[RoleName]) -> Result<Grants, Error> {
    let mut seen: Vec<RoleName> = Vec::new();
    let mut queue: Vec<RoleName> = direct.to_vec();
    let mut privileges = Vec::new();
    while let Some(name) = queue.pop() {
        if seen.contains(&name) {
            continue;
        }
        if let Some(role) = built_in_role(&name) {
            privileges.extend(expand(role, &name.db));
            queue.extend(role.inherits.iter().map(|r| RoleName::new(r, &name.db)));
        } else if let Some(role) = find_stored(store, &name)? {
            privileges.extend(role.privileges);
            queue.extend(role.roles);
        } else {
            continue;
        }
        seen.push(name);
    }
    seen.sort();
    Ok(Grants {
        roles: seen,
        privileges,
    })
}

/// The privileges role `name` holds (inherited ones included), for rolesInfo.
pub(crate) fn privileges_of(store: &Store, name: &RoleName) -> Result<Vec<Privilege>, Error> {
    Ok(resolve(store, std::slice::from_ref(name))?.privileges)
}

fn to_raw(doc: &Document) -> Result<bson::RawDocumentBuf, Error> {
    bson::RawDocumentBuf::try_from(doc)
        .map_err(|e| Error::new(ErrorCode::InternalError, e.to_string()))
}

/// Stores a new role; 51002 when it exists, as mongod answers.
pub(crate) fn create_stored(directory: &Directory<'_>, role: &StoredRole) -> Result<(), Error> {
    if is_built_in(&role.name) {
        return Err(Error::new(
            ErrorCode::Location(51002),
            format!(
                "Role \"{}@{}\" already exists",
                role.name.role, role.name.db
            ),
        ));
    }
    let store = directory.store();
    let mut writer = store.write()?;
    match writer.insert(&roles_ns(), &to_raw(&role.to_document())?) {
        Ok(_) => {}
        Err(crate::store::StoreError::DuplicateKey(_)) => {
            return Err(Error::new(
                ErrorCode::Location(51002),
                format!(
                    "Role \"{}@{}\" already exists",
                    role.name.role, role.name.db
                ),
            ));
        }
        Err(other) => return Err(other.into()),
    }
    writer.commit()?;
    directory.auth.invalidate();
    Ok(())
}

/// Rewrites stored role `name` with `change`; 31 RoleNotFound when it is not stored.
pub(crate) fn update_stored(
    directory: &Directory<'_>,
    name: &RoleName,
    change: impl FnOnce(&mut StoredRole),
) -> Result<(), Error> {
    let store = directory.store();
    let mut writer = store.write()?;
    let ns = roles_ns();
    let id = bson::RawBson::String(format!("{}.{}", name.db, name.role));
    let Some((rid, stored)) = writer.find_id(&ns, id.as_raw_bson_ref())? else {
        return Err(not_found(name));
    };
    let doc = Document::try_from(stored.as_ref())
        .map_err(|e| Error::new(ErrorCode::InvalidBson, e.to_string()))?;
    let Some(mut role) = StoredRole::decode(&doc) else {
        return Err(Error::new(
            ErrorCode::DataCorruptionDetected,
            format!("stored role {}@{} is malformed", name.role, name.db),
        ));
    };
    change(&mut role);
    writer.update(&ns, rid, &to_raw(&role.to_document())?)?;
    writer.commit()?;
    directory.auth.invalidate();
    Ok(())
}

/// Drops stored role `name`; whether it existed.
pub(crate) fn drop_stored(directory: &Directory<'_>, name: &RoleName) -> Result<bool, Error> {
    let store = directory.store();
    let mut writer = store.write()?;
    let ns = roles_ns();
    let id = bson::RawBson::String(format!("{}.{}", name.db, name.role));
    let Some((rid, _)) = writer.find_id(&ns, id.as_raw_bson_ref())? else {
        return Ok(false);
    };
    writer.delete(&ns, rid)?;
    writer.commit()?;
    directory.auth.invalidate();
    Ok(true)
}
