//! `--auth` through the real Rust driver: the localhost exception, SCRAM-SHA-256 with
//! speculative authentication, SCRAM-SHA-1 for a user that has only it, wrong passwords,
//! unauthenticated and unauthorized commands, and users surviving a restart.

use crate::harness::TestServer;
use bson::{Document, doc};
use mongodb::error::ErrorKind;
use mongodb::sync::Client;

fn code_of(error: &mongodb::error::Error) -> Option<i32> {
    match *error.kind {
        ErrorKind::Command(ref failure) => Some(failure.code),
        ErrorKind::Write(mongodb::error::WriteFailure::WriteError(ref failure)) => {
            Some(failure.code)
        }
        _ => None,
    }
}

/// A client logged in as `user` with `password` (`extra` URI options appended).
fn login(server: &TestServer, user: &str, password: &str, extra: &str) -> Client {
    let uri = format!(
        "mongodb://{user}:{password}@{}/?directConnection=true&serverSelectionTimeoutMS=5000&authSource=admin{extra}",
        server.address
    );
    Client::with_uri_str(uri).expect("client")
}

fn admin_command(client: &Client, command: Document) -> Result<Document, mongodb::error::Error> {
    client.database("admin").run_command(command).run()
}

/// Starts `--auth` on `db` and creates the root user `admin` through the localhost
/// exception.
fn with_root(db: &std::path::Path) -> TestServer {
    with_root_and(db, &[])
}

/// [`with_root`] with more server flags.
fn with_root_and(db: &std::path::Path, extra: &[&str]) -> TestServer {
    let mut args = vec!["--auth"];
    args.extend_from_slice(extra);
    let server = TestServer::start_at(db, &args);
    let anonymous = server.client();
    admin_command(
        &anonymous,
        doc! { "createUser": "admin", "pwd": "adminpw", "roles": [{ "role": "root", "db": "admin" }] },
    )
    .expect("the localhost exception allows the first user");
    let second = admin_command(
        &anonymous,
        doc! { "createUser": "late", "pwd": "x", "roles": [] },
    )
    .expect_err("the exception ends with the first user");
    assert_eq!(code_of(&second), Some(13), "{second:?}");
    server
}

#[test]
fn scram_sha256_login_then_roles_decide_what_runs() {
    let db = TestServer::temp_db();
    let server = with_root(&db);
    let root = login(&server, "admin", "adminpw", "");
    let users = [
        ("reader", doc! { "role": "read", "db": "app" }),
        ("writer", doc! { "role": "readWrite", "db": "app" }),
    ];
    for (name, role) in users {
        admin_command(
            &root,
            doc! { "createUser": name, "pwd": "pw", "roles": [role] },
        )
        .expect("createUser");
    }
    let writer = login(&server, "writer", "pw", "");
    let coll = writer.database("app").collection::<Document>("c");
    coll.insert_one(doc! { "_id": 1 })
        .run()
        .expect("readWrite inserts");

    let reader = login(&server, "reader", "pw", "");
    let coll = reader.database("app").collection::<Document>("c");
    assert_eq!(coll.count_documents(doc! {}).run().expect("read counts"), 1);
    let refused = coll
        .insert_one(doc! { "_id": 2 })
        .run()
        .expect_err("read cannot insert");
    assert_eq!(code_of(&refused), Some(13), "{refused:?}");

    let status = reader
        .database("admin")
        .run_command(doc! { "connectionStatus": 1 })
        .run()
        .expect("connectionStatus");
    let auth_info = status.get_document("authInfo").expect("authInfo");
    assert_eq!(
        auth_info.get_array("authenticatedUsers").ok(),
        Some(&vec![bson::Bson::Document(
            doc! { "user": "reader", "db": "admin" }
        )])
    );

    let anonymous = server.client();
    let unauthenticated = anonymous
        .database("app")
        .collection::<Document>("c")
        .find_one(doc! {})
        .run()
        .expect_err("no user, no find");
    assert_eq!(code_of(&unauthenticated), Some(13), "{unauthenticated:?}");
    // The handshake commands still run.
    admin_command(&anonymous, doc! { "ping": 1 }).expect("ping needs no user");
}

#[test]
fn a_wrong_password_or_unknown_user_is_authentication_failed() {
    let server = with_root(&TestServer::temp_db());
    for (user, password) in [("admin", "wrong"), ("nobody", "adminpw")] {
        let client = login(&server, user, password, "");
        let error = admin_command(&client, doc! { "ping": 1 }).expect_err("refused");
        let text = format!("{error:?}");
        assert!(
            matches!(*error.kind, ErrorKind::Authentication { .. }),
            "{text}"
        );
        assert!(text.contains("Authentication failed"), "{text}");
    }
    assert!(server.log_contains(r#""msg":"Authentication failed","attr":{"principalName":"admin","authenticationDatabase":"admin""#));
    // The server keeps serving the others.
    admin_command(&login(&server, "admin", "adminpw", ""), doc! { "ping": 1 }).expect("ping");
}

#[test]
fn a_user_with_only_scram_sha1_logs_in_by_negotiation_and_by_uri() {
    let server = with_root(&TestServer::temp_db());
    let root = login(&server, "admin", "adminpw", "");
    admin_command(
        &root,
        doc! {
            "createUser": "legacy", "pwd": "pw", "mechanisms": ["SCRAM-SHA-1"],
            "roles": [{ "role": "read", "db": "app" }],
        },
    )
    .expect("createUser");
    for extra in ["", "&authMechanism=SCRAM-SHA-1"] {
        let client = login(&server, "legacy", "pw", extra);
        let names = client
            .database("app")
            .list_collection_names()
            .run()
            .expect("SCRAM-SHA-1 login");
        assert!(names.is_empty(), "{names:?}");
    }
    let wrong = login(&server, "legacy", "pw", "&authMechanism=SCRAM-SHA-256");
    admin_command(&wrong, doc! { "ping": 1 }).expect_err("no SCRAM-SHA-256 credentials");
}

#[test]
fn users_and_roles_round_trip_and_survive_a_restart() {
    let db = TestServer::temp_db();
    let mut server = with_root(&db);
    let root = login(&server, "admin", "adminpw", "");
    admin_command(
        &root,
        doc! {
            "createRole": "finder",
            "privileges": [{ "resource": { "db": "app", "collection": "c" }, "actions": ["find"] }],
            "roles": [],
        },
    )
    .expect("createRole");
    admin_command(
        &root,
        doc! { "createUser": "u", "pwd": "pw", "roles": ["finder"], "customData": { "team": 7 } },
    )
    .expect("createUser");
    let info = admin_command(&root, doc! { "usersInfo": "u" }).expect("usersInfo");
    let user = info.get_array("users").expect("users")[0]
        .as_document()
        .expect("user")
        .clone();
    assert_eq!(user.get_str("_id").ok(), Some("admin.u"));
    assert!(user.get("credentials").is_none(), "{user}");
    let roles = admin_command(
        &root,
        doc! { "rolesInfo": "finder", "showPrivileges": true },
    )
    .expect("rolesInfo");
    assert_eq!(
        roles.get_array("roles").map(Vec::len).ok(),
        Some(1),
        "{roles}"
    );
    server.terminate();

    let server = TestServer::start_at(&db, &["--auth"]);
    let user = login(&server, "u", "pw", "");
    let coll = user.database("app").collection::<Document>("c");
    assert_eq!(
        coll.count_documents(doc! {}).run().expect("finder finds"),
        0
    );
    let other = user
        .database("app")
        .collection::<Document>("d")
        .find_one(doc! {})
        .run()
        .expect_err("only app.c");
    assert_eq!(code_of(&other), Some(13), "{other:?}");
    let root = login(&server, "admin", "adminpw", "");
    admin_command(&root, doc! { "dropUser": "u" }).expect("dropUser");
    let again = admin_command(&root, doc! { "dropUser": "u" }).expect_err("gone");
    assert_eq!(code_of(&again), Some(11), "{again:?}");
    let _ = std::fs::remove_file(&db);
}

/// A cursor belongs to the user who opened it: another user's getMore and killCursors
/// answer 13 and leave it alone; the same user goes on from another connection.
#[test]
fn cursors_serve_only_the_user_who_opened_them() {
    let db = TestServer::temp_db();
    let server = with_root(&db);
    let root = login(&server, "admin", "adminpw", "");
    for name in ["alice", "bob"] {
        admin_command(
            &root,
            doc! { "createUser": name, "pwd": "pw", "roles": [{ "role": "readWrite", "db": "app" }] },
        )
        .expect("createUser");
    }
    let alice = login(&server, "alice", "pw", "");
    let app = alice.database("app");
    let docs: Vec<Document> = (0..10).map(|i| doc! { "_id": i }).collect();
    app.collection::<Document>("c")
        .insert_many(docs)
        .run()
        .expect("insert");
    let opened = app
        .run_command(doc! { "find": "c", "batchSize": 2 })
        .run()
        .expect("find");
    let id = opened
        .get_document("cursor")
        .and_then(|cursor| cursor.get_i64("id"))
        .expect("cursor id");
    assert_ne!(id, 0);
    let get_more = doc! { "getMore": id, "collection": "c", "batchSize": 2 };

    let bob = login(&server, "bob", "pw", "");
    let stolen = bob
        .database("app")
        .run_command(get_more.clone())
        .run()
        .expect_err("another user's getMore");
    assert_eq!(code_of(&stolen), Some(13), "{stolen:?}");
    assert!(
        stolen.to_string().contains(&format!(
            "cursor id {id} was not created by the authenticated user"
        )),
        "{stolen}"
    );
    let killed = bob
        .database("app")
        .run_command(doc! { "killCursors": "c", "cursors": [id] })
        .run()
        .expect_err("another user's killCursors");
    assert_eq!(code_of(&killed), Some(13), "{killed:?}");

    // Alice, on a connection of her own, continues where she stopped.
    let again = login(&server, "alice", "pw", "");
    let next = again
        .database("app")
        .run_command(get_more)
        .run()
        .expect("the owner's getMore");
    let batch = next
        .get_document("cursor")
        .and_then(|cursor| cursor.get_array("nextBatch"))
        .expect("nextBatch");
    assert_eq!(batch.len(), 2, "{next:?}");
    let done = again
        .database("app")
        .run_command(doc! { "killCursors": "c", "cursors": [id] })
        .run()
        .expect("the owner's killCursors");
    assert_eq!(
        done.get_array("cursorsKilled").expect("killed"),
        &vec![bson::Bson::Int64(id)]
    );
}

/// A custom role granting changeOwnPassword / changeOwnCustomData lets a user without
/// userAdmin change its own password and customData, and nobody else's, nor its roles.
#[test]
fn change_own_password_changes_only_ones_own() {
    let db = TestServer::temp_db();
    let server = with_root(&db);
    let root = login(&server, "admin", "adminpw", "");
    root.database("app")
        .run_command(doc! {
            "createRole": "selfService",
            "privileges": [{
                "resource": { "db": "app", "collection": "" },
                "actions": ["changeOwnPassword", "changeOwnCustomData"],
            }],
            "roles": [],
        })
        .run()
        .expect("createRole");
    for name in ["carol", "dave"] {
        root.database("app")
            .run_command(doc! { "createUser": name, "pwd": "old", "roles": ["selfService"] })
            .run()
            .expect("createUser");
    }
    let in_app = |user: &str, password: &str| {
        Client::with_uri_str(format!(
            "mongodb://{user}:{password}@{}/?directConnection=true&serverSelectionTimeoutMS=5000&authSource=app",
            server.address
        ))
        .expect("client")
    };
    let carol = in_app("carol", "old");
    let app = carol.database("app");
    app.run_command(doc! { "updateUser": "carol", "pwd": "new", "customData": { "k": 1 } })
        .run()
        .expect("changing one's own password and customData");
    let other = app
        .run_command(doc! { "updateUser": "dave", "pwd": "stolen" })
        .run()
        .expect_err("another user's password");
    assert_eq!(code_of(&other), Some(13), "{other:?}");
    let roles = app
        .run_command(doc! { "updateUser": "carol", "roles": ["readWrite"] })
        .run()
        .expect_err("one's own roles");
    assert_eq!(code_of(&roles), Some(13), "{roles:?}");
    let relogin = in_app("carol", "new");
    relogin
        .database("app")
        .run_command(doc! { "connectionStatus": 1 })
        .run()
        .expect("the new password logs in");
    let dave = in_app("dave", "old");
    dave.database("app")
        .run_command(doc! { "connectionStatus": 1 })
        .run()
        .expect("dave's password is unchanged");
}

/// `$indexStats` needs the `indexStats` action (clusterMonitor has it), not `find`.
#[test]
fn index_stats_needs_its_own_action() {
    let db = TestServer::temp_db();
    let server = with_root(&db);
    let root = login(&server, "admin", "adminpw", "");
    root.database("app")
        .collection::<Document>("c")
        .insert_one(doc! { "_id": 1 })
        .run()
        .expect("insert");
    for (name, role, db) in [
        ("reader", "readWrite", "app"),
        ("monitor", "clusterMonitor", "admin"),
    ] {
        admin_command(
            &root,
            doc! { "createUser": name, "pwd": "pw", "roles": [{ "role": role, "db": db }] },
        )
        .expect("createUser");
    }
    let stats = doc! { "aggregate": "c", "pipeline": [{ "$indexStats": {} }], "cursor": {} };
    let reader = login(&server, "reader", "pw", "");
    let refused = reader
        .database("app")
        .run_command(stats.clone())
        .run()
        .expect_err("readWrite has no indexStats");
    assert_eq!(code_of(&refused), Some(13), "{refused:?}");
    let monitor = login(&server, "monitor", "pw", "");
    monitor
        .database("app")
        .run_command(stats)
        .run()
        .expect("clusterMonitor reads index statistics");
}

/// One OP_MSG round on a raw connection.
fn raw_command(
    stream: &mut std::net::TcpStream,
    id: i32,
    command: bson::RawDocumentBuf,
) -> Document {
    let frame = wire::OpMsg::new(command).encode(id, 0).expect("encode");
    crate::harness::roundtrip(stream, &frame).1
}

/// With `--auth`, a connection that has not authenticated and goes quiet is closed; an
/// authenticated one, and the driver's own monitoring, are not.
#[test]
fn a_quiet_unauthenticated_connection_is_closed() {
    let db = TestServer::temp_db();
    let server = with_root_and(&db, &["--unauthenticated-idle-secs", "1"]);
    let root = login(&server, "admin", "adminpw", "");
    let mut quiet = server.raw();
    let hello = raw_command(&mut quiet, 1, bson::rawdoc! { "hello": 1, "$db": "admin" });
    assert_eq!(
        hello.get_bool("isWritablePrimary").ok(),
        Some(true),
        "{hello}"
    );
    assert!(crate::harness::closed_within(
        &mut quiet,
        std::time::Duration::from_secs(5)
    ));
    assert!(server.log_contains("not authenticated and idle for 1s"));
    // The authenticated client, quiet longer than the limit, still works.
    std::thread::sleep(std::time::Duration::from_millis(2500));
    admin_command(&root, doc! { "ping": 1 }).expect("an authenticated client is left alone");
    let reply = admin_command(&root, doc! { "connectionStatus": 1 }).expect("status");
    let users = reply
        .get_document("authInfo")
        .and_then(|i| i.get_array("authenticatedUsers"));
    assert_eq!(users.map(|u| u.len()).ok(), Some(1));
}

/// A connection gets five failed attempts; the sixth fails even with the right start.
#[test]
fn failed_attempts_on_one_connection_are_limited() {
    let db = TestServer::temp_db();
    let server = with_root(&db);
    let start = |nonce: &str| {
        let payload = bson::Binary {
            subtype: bson::spec::BinarySubtype::Generic,
            bytes: format!("n,,n=admin,r={nonce}").into_bytes(),
        };
        bson::rawdoc! { "saslStart": 1, "mechanism": "SCRAM-SHA-256", "payload": payload, "$db": "admin" }
    };
    let mut fresh = server.raw();
    let reply = raw_command(&mut fresh, 1, start("abcdef"));
    assert_eq!(reply.get_f64("ok").ok(), Some(1.0), "a good start: {reply}");
    let mut guessing = server.raw();
    for i in 0..5 {
        let bad = bson::rawdoc! {
            "saslStart": 1, "mechanism": "SCRAM-SHA-256", "$db": "admin",
            "payload": bson::Binary { subtype: bson::spec::BinarySubtype::Generic, bytes: b"y,,n=admin".to_vec() },
        };
        let reply = raw_command(&mut guessing, 10 + i, bad);
        assert_eq!(reply.get_i32("code").ok(), Some(18), "{reply}");
    }
    let reply = raw_command(&mut guessing, 20, start("abcdef"));
    assert_eq!(reply.get_i32("code").ok(), Some(18), "{reply}");
    assert_eq!(reply.get_str("errmsg").ok(), Some("Authentication failed."));
    assert!(server.log_contains("too many failed attempts on this connection"));
    // Another connection is not affected.
    let reply = raw_command(&mut fresh, 2, start("ghijkl"));
    assert_eq!(reply.get_f64("ok").ok(), Some(1.0), "{reply}");
}
