//! The authorization table: for every command, the actions it needs and on what. With
//! `--auth` on, [`check`] runs before every handler; a command with no row in [`RULES`]
//! is refused, and a test fails when a registered command has none.
//!
//! Before authentication only the [`Rule::Open`] commands run (mongod's commands whose
//! `requiresAuth()` is false), and, while no user exists, `createUser` on `admin` from a
//! loopback client (the localhost exception). Anything else is 13 "Command X requires
//! authentication"; an authenticated user lacking an action gets 13 "not authorized on
//! DB to execute command ...".

use super::roles::Target;
use super::{Asked, Directory};
use crate::error::{Error, ErrorCode};
use bson::raw::{RawBsonRef, RawDocument};

/// What a command needs.
#[derive(Clone, Copy)]
pub(crate) enum Rule {
    /// Nothing: runs before authentication (handshake and authentication commands).
    Open,
    /// An authenticated user, with no particular action.
    Authenticated,
    /// These actions on the cluster.
    Cluster(&'static [&'static str]),
    /// These actions on the command's database.
    Database(&'static [&'static str]),
    /// These actions on the collection the command names (its first field).
    Collection(&'static [&'static str]),
    /// Computed from the request (options that need more, or several resources).
    Custom(fn(&Asked<'_>) -> Vec<Need>),
}

/// One action on one resource.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Need {
    pub(crate) action: &'static str,
    pub(crate) on: On,
}

/// A resource a request names (the owned form of [`Target`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum On {
    Cluster,
    Database(String),
    Collection(String, String),
}

impl On {
    fn target(&self) -> Target<'_> {
        match self {
            On::Cluster => Target::Cluster,
            On::Database(db) => Target::Database(db),
            On::Collection(db, coll) => Target::Collection(db, coll),
        }
    }
}

const fn row(name: &'static str, rule: Rule) -> (&'static str, Rule) {
    (name, rule)
}

use Rule::{Authenticated, Cluster, Collection, Custom, Database, Open};

/// Every command's rule, one row per registered command name.
pub(crate) const RULES: &[(&str, Rule)] = &[
    row("hello", Open),
    row("isMaster", Open),
    row("ismaster", Open),
    row("ping", Open),
    // Test commands need no privilege on mongod: they exist only when enabled.
    row("configureFailPoint", Open),
    row("buildInfo", Open),
    row("buildinfo", Open),
    row("saslStart", Open),
    row("saslContinue", Open),
    row("authenticate", Open),
    row("logout", Open),
    row("connectionStatus", Open),
    row("whatsmyuri", Authenticated),
    row("endSessions", Authenticated),
    row("listCommands", Authenticated),
    row("commitTransaction", Authenticated),
    row("abortTransaction", Authenticated),
    row("killAllSessions", Cluster(&["killAnySession"])),
    row("killAllSessionsByPattern", Cluster(&["killAnySession"])),
    row("startSession", Authenticated),
    row("refreshSessions", Authenticated),
    row("killSessions", Authenticated),
    row("hostInfo", Cluster(&["hostInfo"])),
    row("getCmdLineOpts", Cluster(&["getCmdLineOpts"])),
    row("getParameter", Cluster(&["getParameter"])),
    row("setParameter", Cluster(&["setParameter"])),
    row("getLog", Cluster(&["getLog"])),
    row("currentOp", Cluster(&["inprog"])),
    row("killOp", Cluster(&["killop"])),
    row("serverStatus", Cluster(&["serverStatus"])),
    row("replSetGetStatus", Cluster(&["replSetGetStatus"])),
    row("replSetGetConfig", Cluster(&["replSetGetConfig"])),
    row("replSetInitiate", Cluster(&["replSetConfigure"])),
    row("replSetReconfig", Cluster(&["replSetConfigure"])),
    row("replSetStepDown", Cluster(&["replSetStateChange"])),
    row("replSetFreeze", Cluster(&["replSetStateChange"])),
    row("fsync", Cluster(&["fsync"])),
    row("fsyncUnlock", Cluster(&["unlock"])),
    row("shutdown", Cluster(&["shutdown"])),
    row("logRotate", Cluster(&["logRotate"])),
    row("top", Cluster(&["top"])),
    row("listDatabases", Custom(list_databases)),
    row("dbHash", Database(&["dbHash"])),
    row("dbhash", Database(&["dbHash"])),
    row("dbStats", Database(&["dbStats"])),
    row("profile", Database(&["enableProfiler"])),
    row("listCollections", Database(&["listCollections"])),
    row("dropDatabase", Database(&["dropDatabase"])),
    row("compact", Collection(&["compact"])),
    row("find", Collection(&["find"])),
    row("count", Collection(&["find"])),
    row("distinct", Collection(&["find"])),
    row("getMore", Custom(get_more)),
    row("killCursors", Collection(&["killCursors"])),
    row("aggregate", Custom(aggregate)),
    row("explain", Custom(explain)),
    row("listIndexes", Collection(&["listIndexes"])),
    row("insert", Custom(insert)),
    row("update", Custom(update)),
    row("delete", Collection(&["remove"])),
    row("findAndModify", Custom(find_and_modify)),
    row("findandmodify", Custom(find_and_modify)),
    row("create", Collection(&["createCollection"])),
    row("drop", Collection(&["dropCollection"])),
    row("renameCollection", Custom(rename_collection)),
    row("createIndexes", Collection(&["createIndex"])),
    row("dropIndexes", Collection(&["dropIndex"])),
    row("deleteIndexes", Collection(&["dropIndex"])),
    row("collMod", Collection(&["collMod"])),
    row("collStats", Collection(&["collStats"])),
    row("validate", Collection(&["validate"])),
    row("planCacheClear", Collection(&["planCacheWrite"])),
    row("createUser", Database(&["createUser", "grantRole"])),
    row("updateUser", Custom(update_user)),
    row("dropUser", Database(&["dropUser"])),
    row("dropAllUsersFromDatabase", Database(&["dropUser"])),
    row("grantRolesToUser", Database(&["grantRole"])),
    row("revokeRolesFromUser", Database(&["revokeRole"])),
    row("usersInfo", Custom(users_info)),
    row("createRole", Database(&["createRole", "grantRole"])),
    row("dropRole", Database(&["dropRole"])),
    row("rolesInfo", Custom(roles_info)),
    row("grantPrivilegesToRole", Database(&["grantRole"])),
    row("updateRole", Database(&["createRole"])),
    row("grantRolesToRole", Database(&["grantRole"])),
    row("revokeRolesFromRole", Database(&["revokeRole"])),
    row("revokePrivilegesFromRole", Database(&["revokeRole"])),
    row("dropAllRolesFromDatabase", Database(&["dropRole"])),
    row("invalidateUserCache", Cluster(&["invalidateUserCache"])),
];

/// The rule for command `name`.
pub(crate) fn rule(name: &str) -> Option<Rule> {
    RULES.iter().find(|(n, _)| *n == name).map(|(_, r)| *r)
}

fn on_collection(request: &Asked<'_>) -> On {
    match request.body.get(request.name) {
        Ok(Some(RawBsonRef::String(coll))) => {
            On::Collection(request.db.to_owned(), coll.to_owned())
        }
        _ => On::Database(request.db.to_owned()),
    }
}

fn needs(actions: &[&'static str], on: &On) -> Vec<Need> {
    actions
        .iter()
        .map(|action| Need {
            action,
            on: on.clone(),
        })
        .collect()
}

/// What `rule` asks of `request`.
fn required(rule: Rule, request: &Asked<'_>) -> Vec<Need> {
    match rule {
        Open | Authenticated => Vec::new(),
        Cluster(actions) => needs(actions, &On::Cluster),
        Database(actions) => needs(actions, &On::Database(request.db.to_owned())),
        Collection(actions) => needs(actions, &on_collection(request)),
        Custom(compute) => compute(request),
    }
}

fn list_databases(_: &Asked<'_>) -> Vec<Need> {
    // Any user may list the databases it holds privileges on (mongod's
    // `authorizedDatabases`); the handler filters the list (see [`may_list_all`]).
    Vec::new()
}

fn get_more(request: &Asked<'_>) -> Vec<Need> {
    match request.body.get_str("collection") {
        Ok(coll) => needs(
            &["find"],
            &On::Collection(request.db.to_owned(), coll.to_owned()),
        ),
        Err(_) => needs(&["find"], &On::Database(request.db.to_owned())),
    }
}

fn with_bypass(request: &Asked<'_>, mut out: Vec<Need>) -> Vec<Need> {
    if crate::fields::flag(request.body, "bypassDocumentValidation") {
        out.extend(needs(
            &["bypassDocumentValidation"],
            &on_collection(request),
        ));
    }
    out
}

fn insert(request: &Asked<'_>) -> Vec<Need> {
    with_bypass(request, needs(&["insert"], &on_collection(request)))
}

fn update(request: &Asked<'_>) -> Vec<Need> {
    let on = on_collection(request);
    let mut out = needs(&["update"], &on);
    let upsert = request.body.get_array("updates").is_ok_and(|updates| {
        updates.into_iter().flatten().any(|u| {
            u.as_document()
                .is_some_and(|u| crate::fields::flag(u, "upsert"))
        })
    });
    if upsert {
        out.extend(needs(&["insert"], &on));
    }
    with_bypass(request, out)
}

fn find_and_modify(request: &Asked<'_>) -> Vec<Need> {
    let on = on_collection(request);
    let mut out = needs(&["find"], &on);
    if crate::fields::flag(request.body, "remove") {
        out.extend(needs(&["remove"], &on));
    } else {
        out.extend(needs(&["update"], &on));
        if crate::fields::flag(request.body, "upsert") {
            out.extend(needs(&["insert"], &on));
        }
    }
    with_bypass(request, out)
}

fn rename_collection(request: &Asked<'_>) -> Vec<Need> {
    let split = |full: &str| {
        full.split_once('.')
            .map(|(db, coll)| On::Collection(db.to_owned(), coll.to_owned()))
    };
    let source = request
        .body
        .get_str("renameCollection")
        .ok()
        .and_then(split);
    let target = request.body.get_str("to").ok().and_then(split);
    let (Some(source), Some(target)) = (source, target) else {
        return needs(&["renameCollectionSameDB"], &On::Cluster);
    };
    let same_db =
        matches!((&source, &target), (On::Collection(a, _), On::Collection(b, _)) if a == b);
    if same_db {
        let mut out = needs(&["renameCollectionSameDB"], &source);
        out.extend(needs(&["renameCollectionSameDB"], &target));
        return out;
    }
    let mut out = needs(&["find", "dropCollection"], &source);
    out.extend(needs(&["insert", "createIndex"], &target));
    out
}

/// find on the collection, and what the pipeline's stages add.
fn aggregate(request: &Asked<'_>) -> Vec<Need> {
    // A pipeline that starts from the collection's statistics reads no documents: it
    // needs that stage's action, not `find` (mongod's rule for these first stages).
    let first = request
        .body
        .get_array("pipeline")
        .ok()
        .and_then(|pipeline| pipeline.into_iter().next()?.ok()?.as_document())
        .and_then(|stage| Some(stage.iter().next()?.ok()?.0));
    let action = match first.as_ref().map(|name| name.as_str()) {
        Some("$indexStats") => "indexStats",
        Some("$collStats") => "collStats",
        _ => "find",
    };
    let mut out = needs(&[action], &on_collection(request));
    if let Ok(pipeline) = request.body.get_array("pipeline") {
        for stage in pipeline.into_iter().flatten() {
            if let Some(stage) = stage.as_document() {
                out.extend(stage_needs(request.db, stage));
            }
        }
    }
    with_bypass(request, out)
}

fn stage_needs(db: &str, stage: &RawDocument) -> Vec<Need> {
    let Some(Ok((name, value))) = stage.iter().next() else {
        return Vec::new();
    };
    let named = |value: RawBsonRef<'_>, key: &str| -> Option<On> {
        let (db, coll) = match value {
            RawBsonRef::String(coll) => (db.to_owned(), coll.to_owned()),
            RawBsonRef::Document(spec) => {
                let target = match spec.get(key) {
                    Ok(Some(RawBsonRef::Document(into))) => into,
                    Ok(Some(RawBsonRef::String(coll))) => {
                        let db = spec.get_str("db").unwrap_or(db);
                        return Some(On::Collection(db.to_owned(), coll.to_owned()));
                    }
                    _ => spec,
                };
                (
                    target.get_str("db").unwrap_or(db).to_owned(),
                    target.get_str("coll").ok()?.to_owned(),
                )
            }
            _ => return None,
        };
        Some(On::Collection(db, coll))
    };
    match name.as_str() {
        "$out" => named(value, "")
            .map(|on| needs(&["insert", "remove"], &on))
            .unwrap_or_default(),
        "$merge" => named(value, "into")
            .map(|on| needs(&["insert", "update"], &on))
            .unwrap_or_default(),
        "$lookup" | "$graphLookup" | "$unionWith" => {
            let from = match value {
                RawBsonRef::String(coll) => Some(coll),
                RawBsonRef::Document(spec) => {
                    spec.get_str("from").or_else(|_| spec.get_str("coll")).ok()
                }
                _ => None,
            };
            let mut out: Vec<Need> = from
                .map(|coll| needs(&["find"], &On::Collection(db.to_owned(), coll.to_owned())))
                .unwrap_or_default();
            if let RawBsonRef::Document(spec) = value
                && let Ok(pipeline) = spec.get_array("pipeline")
            {
                for inner in pipeline.into_iter().flatten() {
                    if let Some(inner) = inner.as_document() {
                        out.extend(stage_needs(db, inner));
                    }
                }
            }
            out
        }
        "$currentOp" => needs(&["inprog"], &On::Cluster),
        "$listLocalSessions" | "$listSessions" => needs(&["listSessions"], &On::Cluster),
        _ => Vec::new(),
    }
}

/// The explained command's needs.
fn explain(request: &Asked<'_>) -> Vec<Need> {
    let Ok(inner) = request.body.get_document("explain") else {
        return needs(&["find"], &On::Database(request.db.to_owned()));
    };
    let Ok(name) = crate::fields::name_of(inner) else {
        return needs(&["find"], &On::Database(request.db.to_owned()));
    };
    let inner_request = Asked {
        name,
        body: inner,
        ..*request
    };
    match rule(name) {
        Some(rule @ (Collection(_) | Custom(_) | Database(_))) if name != "explain" => {
            required(rule, &inner_request)
        }
        _ => needs(&["find"], &on_collection(&inner_request)),
    }
}

fn update_user(request: &Asked<'_>) -> Vec<Need> {
    let on = On::Database(request.db.to_owned());
    let mut out = Vec::new();
    if request.body.get("pwd").ok().flatten().is_some() {
        out.extend(needs(&["changePassword"], &on));
    }
    if request.body.get("customData").ok().flatten().is_some() {
        out.extend(needs(&["changeCustomData"], &on));
    }
    if request.body.get("roles").ok().flatten().is_some() {
        out.extend(needs(&["grantRole", "revokeRole"], &on));
    }
    if out.is_empty() {
        out.extend(needs(&["changeCustomData"], &on));
    }
    out
}

/// viewUser on the database, unless the user asks only about itself.
fn users_info(request: &Asked<'_>) -> Vec<Need> {
    let own =
        request
            .session
            .user()
            .is_some_and(|(user, db)| match request.body.get("usersInfo") {
                Ok(Some(RawBsonRef::String(name))) => name == user && request.db == db,
                Ok(Some(RawBsonRef::Document(spec))) => {
                    spec.get_str("user").ok() == Some(&user) && spec.get_str("db").ok() == Some(&db)
                }
                _ => false,
            });
    if own && !crate::fields::flag(request.body, "showCredentials") {
        return Vec::new();
    }
    let on = if crate::fields::flag(request.body, "forAllDBs") {
        On::Cluster
    } else {
        On::Database(request.db.to_owned())
    };
    needs(&["viewUser"], &on)
}

fn roles_info(request: &Asked<'_>) -> Vec<Need> {
    needs(&["viewRole"], &On::Database(request.db.to_owned()))
}

fn unauthorized(request: &Asked<'_>) -> Error {
    let value = match request.body.get(request.name) {
        Ok(Some(RawBsonRef::String(s))) => format!("\"{s}\""),
        Ok(Some(RawBsonRef::Int32(n))) => n.to_string(),
        Ok(Some(RawBsonRef::Int64(n))) => n.to_string(),
        Ok(Some(RawBsonRef::Double(n))) => n.to_string(),
        Ok(Some(RawBsonRef::Boolean(b))) => b.to_string(),
        _ => "...".to_owned(),
    };
    Error::new(
        ErrorCode::Unauthorized,
        format!(
            "not authorized on {} to execute command {{ {}: {value}, $db: \"{}\" }}",
            request.db, request.name, request.db
        ),
    )
}

fn is_loopback(address: &str) -> bool {
    let host = address
        .rsplit_once(':')
        .map_or(address, |(host, _)| host)
        .trim_start_matches('[')
        .trim_end_matches(']');
    host.parse::<std::net::IpAddr>()
        .is_ok_and(|ip| ip.is_loopback())
}

/// Whether `request` is an updateUser of the session's own user (name and database).
fn updates_own_user(request: &Asked<'_>) -> bool {
    request.name == "updateUser"
        && request.session.user().is_some_and(|(user, db)| {
            db == request.db
                && request
                    .body
                    .get_str("updateUser")
                    .is_ok_and(|name| name == user)
        })
}

/// Refuses `request` unless its connection may run it (see the module's header).
pub(crate) fn check(directory: &Directory<'_>, request: &Asked<'_>) -> Result<(), Error> {
    if !directory.auth.enabled() {
        return Ok(());
    }
    let Some(rule) = rule(request.name) else {
        return Err(unauthorized(request));
    };
    if matches!(rule, Open) {
        return Ok(());
    }
    let Some(grants) = super::grants(directory, request.session)? else {
        let localhost_exception = request.name == "createUser"
            && request.db == "admin"
            && is_loopback(request.client_address)
            && !super::users::any_exist(&directory.store())?;
        if localhost_exception {
            return Ok(());
        }
        return Err(Error::new(
            ErrorCode::Unauthorized,
            format!("Command {} requires authentication", request.name),
        ));
    };
    let own = updates_own_user(request);
    for need in required(rule, request) {
        let target = need.on.target();
        let holds = |action: &str| {
            grants.privileges.iter().any(|privilege| {
                privilege.resource.matches(target) && privilege.actions.iter().any(|a| a == action)
            })
        };
        // mongod's changeOwnPassword / changeOwnCustomData: the same change, to oneself.
        let own_action = match need.action {
            "changePassword" if own => Some("changeOwnPassword"),
            "changeCustomData" if own => Some("changeOwnCustomData"),
            _ => None,
        };
        let granted = holds(need.action) || own_action.is_some_and(holds);
        if !granted {
            return Err(unauthorized(request));
        }
    }
    Ok(())
}

/// Whether the request's user may see every database in listDatabases (auth off, or the
/// `listDatabases` action on the cluster); otherwise it sees those it holds privileges on.
pub(crate) fn may_list_all(directory: &Directory<'_>, request: &Asked<'_>) -> Result<bool, Error> {
    if !directory.auth.enabled() {
        return Ok(true);
    }
    let Some(grants) = super::grants(directory, request.session)? else {
        return Ok(false);
    };
    Ok(grants.privileges.iter().any(|p| {
        p.resource.matches(Target::Cluster) && p.actions.iter().any(|a| a == "listDatabases")
    }))
}

/// Whether the request's user holds any privilege on database `db` (listDatabases'
/// `authorizedDatabases` filter).
pub(crate) fn holds_any_on(
    directory: &Directory<'_>,
    request: &Asked<'_>,
    db: &str,
) -> Result<bool, Error> {
    let Some(grants) = super::grants(directory, request.session)? else {
        return Ok(false);
    };
    Ok(grants.privileges.iter().any(|p| match &p.resource {
        super::roles::Resource::AnyResource => true,
        super::roles::Resource::Namespace { db: d, .. } => d.is_empty() || d == db,
        super::roles::Resource::Cluster => false,
    }))
}
