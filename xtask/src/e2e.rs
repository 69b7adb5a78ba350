//! `cargo xtask e2e`: the server against real clients (PyMongo, the Node.js driver, mongosh)
//! and the ODMs apps use them through (Beanie, Mongoose).
//!
//! Builds the server (dev profile: it shares artifacts with `cargo test`, so CI
//! compiles once; the smoke scripts are not performance tests), starts it on a
//! free port with a temporary database path, runs the clients pinned in
//! `tests/e2e` (install them with `bash tests/e2e/setup.sh`), stops it with
//! SIGTERM and fails on any client failure, any mongosh warning, or an unclean
//! shutdown.

use anyhow::{Context, Result, bail};
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};

/// A `multiforadb` started by [`start`] or [`start_server`]; stop it with [`stop`].
pub(crate) struct RunningServer {
    pub(crate) child: Child,
    /// `host:port` it listens on.
    pub(crate) address: String,
    /// Its stderr lines so far (the reader thread keeps appending).
    pub(crate) log: Arc<Mutex<Vec<String>>>,
    /// Its database file.
    pub(crate) db: PathBuf,
    reader: Option<std::thread::JoinHandle<()>>,
}

impl RunningServer {
    /// Waits until every line of stderr is in `log` (call after the process exited).
    pub(crate) fn drain_log(&mut self) {
        if let Some(reader) = self.reader.take() {
            let _ = reader.join();
        }
    }
}

/// What became of a spawned server: listening, or gone before it listened.
pub(crate) enum Spawned {
    Listening(RunningServer),
    Exited {
        status: std::process::ExitStatus,
        log: Vec<String>,
    },
}

pub fn run(root: &Path, _args: &[String]) -> Result<()> {
    let e2e = root.join("tests/e2e");
    let python = e2e.join(".venv/bin/python");
    let mongosh = e2e.join("node_modules/.bin/mongosh");
    if !python.exists()
        || !e2e.join("node_modules/mongodb").exists()
        || !e2e.join("node_modules/mongoose").exists()
        || !mongosh.exists()
    {
        bail!("e2e clients are not installed: run `bash tests/e2e/setup.sh` first");
    }
    build_server(root)?;
    let mut server = start(root, "e2e")?;
    let uri = format!("mongodb://{}/?directConnection=true", server.address);
    println!("e2e: server on {}", server.address);
    let results = [
        (
            "pymongo",
            check(Command::new(&python).arg(e2e.join("smoke.py")).arg(&uri)),
        ),
        (
            "node",
            check(Command::new("node").arg(e2e.join("smoke.mjs")).arg(&uri)),
        ),
        ("mongosh", run_mongosh(&mongosh, &uri)),
        // Issue 20: the same rounds with OP_COMPRESSED (zlib: built into both drivers).
        (
            "pymongo compressors=zlib",
            check(
                Command::new(&python)
                    .arg(e2e.join("smoke.py"))
                    .arg(format!("{uri}&compressors=zlib")),
            ),
        ),
        (
            "node compressors=zlib",
            check(
                Command::new("node")
                    .arg(e2e.join("smoke.mjs"))
                    .arg(format!("{uri}&compressors=zlib")),
            ),
        ),
        // ODMs as apps use them: Decimal128 money, DBRef links, refused transactions.
        (
            "beanie",
            check(Command::new(&python).arg(e2e.join("odm.py")).arg(&uri)),
        ),
        (
            "mongoose",
            check(Command::new("node").arg(e2e.join("odm.mjs")).arg(&uri)),
        ),
    ];
    let admin = run_mongosh_admin(root, &mongosh, &e2e, &uri, &server.db);
    let stopped = stop(&mut server);
    // db.shutdownServer() last, on a server of its own: it ends that server.
    let shutdown = run_mongosh_shutdown(root, &mongosh, &e2e);
    // Issue 20: the same clients logging in to a server started with --auth.
    let mut secured = start_with(root, "e2e-auth", &["--log-level", "debug", "--auth"])?;
    let secured_uri = format!("mongodb://{}/?directConnection=true", secured.address);
    let auth_results = [
        (
            "pymongo --auth",
            check(
                Command::new(&python)
                    .arg(e2e.join("auth.py"))
                    .arg(&secured_uri),
            ),
        ),
        (
            "node --auth",
            check(
                Command::new("node")
                    .arg(e2e.join("auth.mjs"))
                    .arg(&secured_uri),
            ),
        ),
        (
            "mongosh --auth",
            run_mongosh_login(&mongosh, &secured.address, ""),
        ),
    ];
    let secured_stopped = stop(&mut secured);
    // Issue 43: the clients with their default URIs against a one-member replica set
    // (drivers turn retryable writes on; mongosh's rs helpers; the ODMs' rounds).
    let mut member = start_with(
        root,
        "e2e-replset",
        &["--log-level", "debug", "--replSet", "rs0"],
    )?;
    let member_uri = format!("mongodb://{}/?replicaSet=rs0", member.address);
    let replica_set_results = [
        (
            "pymongo --replSet",
            check(
                Command::new(&python)
                    .arg(e2e.join("smoke.py"))
                    .arg(&member_uri),
            ),
        ),
        (
            "node --replSet",
            check(
                Command::new("node")
                    .arg(e2e.join("smoke.mjs"))
                    .arg(&member_uri),
            ),
        ),
        (
            "odm.py --replSet",
            check(
                Command::new(&python)
                    .arg(e2e.join("odm.py"))
                    .arg(&member_uri),
            ),
        ),
        (
            "odm.mjs --replSet",
            check(
                Command::new("node")
                    .arg(e2e.join("odm.mjs"))
                    .arg(&member_uri),
            ),
        ),
        (
            "mongosh --replSet",
            check(&mut mongosh_eval(
                &mongosh,
                &member_uri,
                "const s = rs.status(); const c = rs.conf(); \
                 db.getSiblingDB('e2e_rs').c.insertOne({a: 1}); \
                 const n = db.getSiblingDB('local').oplog.rs.countDocuments({ns: 'e2e_rs.c'}); \
                 if (s.myState !== 1 || c._id !== 'rs0' || db.hello().setName !== 'rs0' || n < 1) \
                 { throw new Error('replica set: ' + JSON.stringify([s.myState, c._id, n])); } \
                 print('rs.status() PRIMARY, rs.conf() rs0, oplog entries', n)",
            )),
        ),
    ];
    let member_stopped = stop(&mut member);
    // The same round over TLS (requireTLS, a certificate made for this run).
    let (tls_results, tls_stopped, tls_log) = tls_round(root, &python, &mongosh, &e2e)?;
    let mut failed = false;
    let admin = [
        ("mongosh admin", admin),
        ("mongosh shutdownServer", shutdown),
    ];
    for (name, result) in results
        .iter()
        .chain(&admin)
        .chain(&auth_results)
        .chain(&replica_set_results)
        .chain(&tls_results)
    {
        match result {
            Ok(output) => println!("e2e {name}: ok\n{}", indent(output)),
            Err(error) => {
                failed = true;
                println!("e2e {name}: FAILED: {error:#}");
            }
        }
    }
    for stopped in [&stopped, &secured_stopped, &member_stopped, &tls_stopped] {
        if let Err(error) = stopped {
            failed = true;
            println!("e2e shutdown: FAILED: {error:#}");
        }
    }
    if failed {
        println!(
            "server log:\n{}",
            indent(&server.log.lock().expect("log").join("\n"))
        );
        println!(
            "--auth server log:\n{}",
            indent(&secured.log.lock().expect("log").join("\n"))
        );
        println!(
            "--replSet server log:\n{}",
            indent(&member.log.lock().expect("log").join("\n"))
        );
        println!("TLS server log:\n{}", indent(&tls_log));
        bail!("e2e failed");
    }
    println!("e2e: all passed");
    Ok(())
}

/// Builds `<target dir>/debug/multiforadb` (dev profile: it shares artifacts with `cargo test`).
pub(crate) fn build_server(root: &Path) -> Result<()> {
    // Cargo's own progress (what it compiles) shows while it builds.
    eprintln!("xtask: building the server (cargo build -p server)");
    let status = crate::cargo()
        .current_dir(root)
        .args(["build", "-p", "server", "--bin", "multiforadb"])
        .status()?;
    if !status.success() {
        bail!("building the server failed");
    }
    Ok(())
}

pub(crate) fn indent(text: &str) -> String {
    text.lines().map(|line| format!("    {line}\n")).collect()
}

/// Starts the dev build on a free port with its database file in the temp folder
/// (`mfdb-<label>-<pid>.mfdb`) and waits for its "Waiting for connections" line.
pub(crate) fn start(root: &Path, label: &str) -> Result<RunningServer> {
    start_with(root, label, &["--log-level", "debug"])
}

/// As [`start`], with the server flags `args`.
pub(crate) fn start_with(root: &Path, label: &str, args: &[&str]) -> Result<RunningServer> {
    let db = std::env::temp_dir().join(format!("mfdb-{label}-{}.mfdb", std::process::id()));
    start_server(
        &crate::target_dir(root).join("debug/multiforadb"),
        &db,
        args,
        &[],
    )
}

/// mongosh's admin helpers (`tests/e2e/admin.js`), then a second server on the file copy
/// it took under `fsyncLock`: the copy opens and holds the documents written before.
fn run_mongosh_admin(
    root: &Path,
    mongosh: &Path,
    e2e: &Path,
    uri: &str,
    db: &Path,
) -> Result<String> {
    let copy = db.with_extension("copy.mfdb");
    let _ = std::fs::remove_file(&copy);
    let text = check(
        mongosh_command(mongosh, uri)
            .args(["--quiet", "--file"])
            .arg(e2e.join("admin.js"))
            .env("MFDB_DB", db)
            .env("MFDB_COPY", &copy),
    )?;
    for expected in [
        "min/max n=20 first=3 last=4",
        "indexStats k_1 ops=1",
        "serverStatus ok=1 inserts=true engine=multiforadb",
        "stats count=100 nindexes=2 sized=true",
        "latencyStats writes=true",
        "currentOp listed=true",
        "killOp ok=1",
        "fsyncLock count=1",
        "fsyncUnlock count=0",
        "after unlock count=101",
        "setProfilingLevel was=0 now=2",
        "profiled query=true",
        "show profile type=ShowProfileResult count=true read=true",
    ] {
        if !text.contains(expected) {
            bail!("mongosh admin round lacks `{expected}`:\n{}", indent(&text));
        }
    }
    let mut from_copy = start_server(
        &crate::target_dir(root).join("debug/multiforadb"),
        &copy,
        &[],
        &[],
    )?;
    let copy_uri = format!("mongodb://{}/?directConnection=true", from_copy.address);
    let counted = check(&mut mongosh_eval(
        mongosh,
        &copy_uri,
        "print('copy count=' + db.getSiblingDB('smoke_admin_sh').items.countDocuments({}))",
    ));
    let stopped = stop(&mut from_copy);
    let _ = std::fs::remove_file(&copy);
    let counted = counted?;
    stopped?;
    if !counted.contains("copy count=100") {
        bail!("the copy taken under fsyncLock:\n{}", indent(&counted));
    }
    Ok(format!("{text}{counted}"))
}

/// `db.shutdownServer()` from mongosh (`tests/e2e/shutdown.js`) on a fresh server: the
/// server exits by itself, successfully, logging its clean stop, within 10 s.
fn run_mongosh_shutdown(root: &Path, mongosh: &Path, e2e: &Path) -> Result<String> {
    let mut server = start(root, "e2e-shutdown")?;
    let uri = format!("mongodb://{}/?directConnection=true", server.address);
    let text = check(
        mongosh_command(mongosh, &uri)
            .args(["--quiet", "--file"])
            .arg(e2e.join("shutdown.js")),
    );
    let exited = wait_exit(&mut server, std::time::Duration::from_secs(10));
    // A server that did not stop cleanly leaves its log beside the file.
    let _ = std::fs::remove_file(&server.db);
    let _ = std::fs::remove_file(server.db.with_extension("mfdb-wal"));
    let text = text?;
    if let Err(error) = exited {
        let _ = server.child.kill();
        bail!(
            "{error:#}\nmongosh:\n{}server log:\n{}",
            indent(&text),
            indent(&server.log.lock().expect("log").join("\n"))
        );
    }
    if !text.contains("shutdownServer ok=1") && !text.contains("shutdownServer closed=true") {
        bail!("mongosh's shutdownServer:\n{}", indent(&text));
    }
    Ok(text)
}

/// mongosh connecting to `uri`, without its update check and telemetry; the caller adds
/// the script (`--eval`, `--file`) and anything else.
fn mongosh_command(mongosh: &Path, uri: &str) -> Command {
    let mut command = Command::new(mongosh);
    command
        .arg(uri)
        .env("MONGOSH_NO_UPDATE_CHECK", "1")
        .env("DO_NOT_TRACK", "1");
    command
}

/// `mongosh --quiet --eval script` on `uri`.
fn mongosh_eval(mongosh: &Path, uri: &str, script: &str) -> Command {
    let mut command = mongosh_command(mongosh, uri);
    command.args(["--quiet", "--eval", script]);
    command
}

type Round = Vec<(&'static str, Result<String>)>;

/// `auth.py`, `auth.mjs` and mongosh's login against `--auth --tlsMode requireTLS` with a CA and
/// certificate made for this run: the results, the clean stop, and the server's log.
fn tls_round(
    root: &Path,
    python: &Path,
    mongosh: &Path,
    e2e: &Path,
) -> Result<(Round, Result<()>, String)> {
    let dir = std::env::temp_dir().join(format!("mfdb-e2e-tls-{}", std::process::id()));
    let files = crate::certs::write(&dir)?;
    let server_pem = files.server.to_str().context("utf-8 path")?.to_owned();
    let flags = [
        "--log-level",
        "debug",
        "--auth",
        "--tlsMode",
        "requireTLS",
        "--tlsCertificateKeyFile",
        &server_pem,
    ];
    let mut server = start_with(root, "e2e-tls", &flags)?;
    let options = format!("tls=true&tlsCAFile={}", files.ca.display());
    let uri = format!(
        "mongodb://{}/?directConnection=true&{options}",
        server.address
    );
    let results: Round = vec![
        (
            "pymongo --auth over TLS",
            check(Command::new(python).arg(e2e.join("auth.py")).arg(&uri)).and_then(|text| {
                if text.contains("auth ok: tls=requireTLS") {
                    Ok(text)
                } else {
                    bail!("auth.py over TLS:\n{}", indent(&text))
                }
            }),
        ),
        (
            "node --auth over TLS",
            check(Command::new("node").arg(e2e.join("auth.mjs")).arg(&uri)).and_then(|text| {
                if text.contains("tls=requireTLS") {
                    Ok(text)
                } else {
                    bail!("auth.mjs over TLS:\n{}", indent(&text))
                }
            }),
        ),
        (
            "mongosh --auth over TLS",
            run_mongosh_login(mongosh, &server.address, &format!("&{options}")),
        ),
    ];
    let stopped = stop(&mut server);
    let log = server.log.lock().expect("log").join("\n");
    let _ = std::fs::remove_dir_all(&dir);
    let _ = std::fs::remove_file(&server.db);
    Ok((results, stopped, log))
}

/// mongosh logging in as the root user `auth.py` created (SCRAM-SHA-256, URI `options`
/// appended), a CRUD round, its user helpers; then a read-only user's insert (13) and a
/// wrong password (18).
fn run_mongosh_login(mongosh: &Path, address: &str, options: &str) -> Result<String> {
    let eval = "const s = db.runCommand({connectionStatus: 1}); \
                const u = db.getSiblingDB('app').getUsers().users.map(x => x.user).sort().join(','); \
                const c = db.getSiblingDB('app').sh_items; \
                c.insertMany([{_id: 1, n: 1}, {_id: 2, n: 2}]); \
                c.updateOne({_id: 2}, {$inc: {n: 10}}); \
                c.deleteOne({_id: 1}); \
                const crud = c.countDocuments({}) + ',' + c.findOne({_id: 2}).n; \
                c.drop(); \
                print('login ' + s.authInfo.authenticatedUsers[0].user + ' users=' + u + ' crud=' + crud);";
    let text = check(&mut mongosh_eval(
        mongosh,
        &format!("mongodb://root:rootpw@{address}/admin?directConnection=true{options}"),
        eval,
    ))?;
    if !text.contains("login root users=old,reader crud=1,12") {
        bail!("mongosh login round:\n{}", indent(&text));
    }
    let refused = "let code = 0; \
                   try { db.getSiblingDB('app').items.insertOne({_id: 99}); } \
                   catch (e) { code = e.code; } \
                   print('reader insert code=' + code);";
    let reader = check(&mut mongosh_eval(
        mongosh,
        &format!("mongodb://reader:r@{address}/app?directConnection=true{options}"),
        refused,
    ))?;
    if !reader.contains("reader insert code=13") {
        bail!("mongosh read-only insert:\n{}", indent(&reader));
    }
    let wrong = mongosh_eval(
        mongosh,
        &format!("mongodb://reader:wrong@{address}/app?directConnection=true{options}"),
        "print('logged in')",
    )
    .output()?;
    let wrong_text = format!(
        "{}{}",
        String::from_utf8_lossy(&wrong.stdout),
        String::from_utf8_lossy(&wrong.stderr)
    );
    if wrong.status.success() || !wrong_text.contains("Authentication failed") {
        bail!("mongosh with a wrong password:\n{}", indent(&wrong_text));
    }
    Ok(format!(
        "{text}{reader}mongosh wrong password: Authentication failed\n"
    ))
}

/// Starts `binary` on `--port 0` and database `db` with `args` and environment `env`
/// (`MFDB_CRASH_AT` is removed unless `env` sets it), and waits up to 30 s for it to log
/// the address it listens on.
pub(crate) fn start_server(
    binary: &Path,
    db: &Path,
    args: &[&str],
    env: &[(&str, &str)],
) -> Result<RunningServer> {
    match spawn_server(binary, db, args, env)? {
        Spawned::Listening(server) => Ok(server),
        Spawned::Exited { status, log } => {
            bail!(
                "server exited with {status} before listening:\n{}",
                log.join("\n")
            )
        }
    }
}

/// [`start_server`], telling a server that exits before it listens apart from a failure
/// to start it.
pub(crate) fn spawn_server(
    binary: &Path,
    db: &Path,
    args: &[&str],
    env: &[(&str, &str)],
) -> Result<Spawned> {
    let mut command = Command::new(binary);
    command
        .args(["--port", "0"])
        .args(args)
        .arg("--db")
        .arg(db)
        .env_remove("MFDB_CRASH_AT")
        .envs(env.iter().copied())
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    let mut child = command
        .spawn()
        .with_context(|| format!("starting {}", binary.display()))?;
    let stderr = child.stderr.take().context("server stderr")?;
    let log = Arc::new(Mutex::new(Vec::new()));
    let (found, address) = std::sync::mpsc::channel();
    let sink = Arc::clone(&log);
    let reader = std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            // mongod's "Waiting for connections" line, `"attr":{"port":N,..}` (the
            // server listens on 127.0.0.1 unless `--bind` says otherwise).
            if line.contains("Waiting for connections")
                && let Some(rest) = line.split("\"port\":").nth(1)
            {
                let port: String = rest.chars().take_while(char::is_ascii_digit).collect();
                let _ = found.send(format!("127.0.0.1:{port}"));
            }
            sink.lock().expect("log").push(line);
        }
    });
    match address.recv_timeout(std::time::Duration::from_secs(30)) {
        Ok(address) => Ok(Spawned::Listening(RunningServer {
            child,
            address,
            log,
            db: db.to_path_buf(),
            reader: Some(reader),
        })),
        Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => {
            let status = child.wait()?;
            let _ = reader.join();
            let log = log.lock().expect("log").clone();
            Ok(Spawned::Exited { status, log })
        }
        Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {
            let _ = child.kill();
            let _ = child.wait();
            bail!(
                "server did not listen within 30 s:\n{}",
                log.lock().expect("log").join("\n")
            )
        }
    }
}

/// SIGTERM, then checks for a clean exit: status 0, mongod's "Shutting down" with exit
/// code 0, no error lines.
pub(crate) fn stop(server: &mut RunningServer) -> Result<()> {
    stop_within(server, std::time::Duration::from_secs(10))
}

/// `stop`, waiting up to `limit` for the process to exit (a clean stop checkpoints).
pub(crate) fn stop_within(server: &mut RunningServer, limit: std::time::Duration) -> Result<()> {
    let pid = server.child.id().to_string();
    Command::new("kill").args(["-TERM", &pid]).status()?;
    wait_exit(server, limit).map_err(|error| anyhow::anyhow!("after SIGTERM: {error:#}"))
}

/// Waits up to `limit` for the server to exit by itself; it must exit successfully, log
/// mongod's last line (`"msg":"Shutting down","attr":{"exitCode":0}`) and no error
/// (severity `E`).
fn wait_exit(server: &mut RunningServer, limit: std::time::Duration) -> Result<()> {
    let deadline = std::time::Instant::now() + limit;
    loop {
        if let Some(status) = server.child.try_wait()? {
            if !status.success() {
                bail!("server exited with {status}");
            }
            break;
        }
        if std::time::Instant::now() > deadline {
            let _ = server.child.kill();
            bail!("server did not exit within {limit:?}");
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    server.drain_log();
    let log = server.log.lock().expect("log");
    if !log
        .iter()
        .any(|line| line.contains(r#""msg":"Shutting down","attr":{"exitCode":0}"#))
    {
        bail!("server log lacks mongod's 'Shutting down' with exit code 0");
    }
    if let Some(line) = log
        .iter()
        .find(|line| line.contains(r#""s":"E""#) || line.contains(" ERROR "))
    {
        bail!("server logged an error: {line}");
    }
    Ok(())
}

fn check(command: &mut Command) -> Result<String> {
    let output = command
        .output()
        .with_context(|| format!("running {command:?}"))?;
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    if !output.status.success() {
        bail!(
            "{:?} exited with {}:\n{}",
            command.get_program(),
            output.status,
            indent(&text)
        );
    }
    Ok(text)
}

/// mongosh twice: `--eval` must print the result; an interactive session (commands on
/// stdin) shows the banner, where mongosh prints server startup warnings and
/// compatibility notices. Neither may carry a warning, except mongosh's notice about
/// the Node.js version it runs on, which it prints against mongod too.
fn run_mongosh(mongosh: &Path, uri: &str) -> Result<String> {
    let eval = "const r = db.runCommand({ping: 1}); \
                const b = db.adminCommand({buildInfo: 1}); \
                print('ping ok=' + r.ok + ' version=' + b.version); \
                const c = db.getSiblingDB('smoke_sh').items; \
                c.drop(); \
                c.insertMany([{_id: 1, n: 1}, {_id: 2, n: 2}, {_id: 3, n: 3}]); \
                c.updateOne({_id: 2}, {$inc: {n: 10}}); \
                c.deleteOne({_id: 3}); \
                print('crud count=' + c.countDocuments({}) + ' n2=' + c.findOne({_id: 2}).n); \
                c.createIndex({n: 1}); \
                print('explain index=' + c.find({n: 12}).explain().queryPlanner.winningPlan.inputStage.indexName); \
                const ix = c.getIndexes().map(i => i.name).sort().join(','); \
                const hinted = c.find({n: {$gte: 1}}).hint({n: 1}).toArray().map(d => d.n).join(','); \
                c.dropIndex('n_1'); \
                print('index list=' + ix + ' hinted=' + hinted + ' after=' + c.getIndexes().length); \
                c.createIndex({'$**': 1}); \
                const w = c.find({n: 12}).explain().queryPlanner.winningPlan.inputStage; \
                print('wildcard index=' + w.indexName + ' path=' + Object.keys(w.keyPattern).join('+')); \
                const t = db.getSiblingDB('smoke_sh').totals; \
                t.drop(); \
                t.createIndex({n: 1}, {unique: true}); \
                t.insertOne({_id: 'keep', n: 12, old: true}); \
                c.aggregate([{$project: {_id: 0, n: 1, seen: {$literal: true}}}, \
                             {$merge: {into: 'totals', on: 'n', whenMatched: 'merge'}}]); \
                const kept = t.findOne({n: 12}); \
                print('merge on n=' + t.countDocuments({}) + ' kept=' + kept._id + ',' + kept.old + ',' + kept.seen); \
                const ops = db.currentOp().inprog; \
                print('currentOp self=' + ops.some(o => o.command && o.command.aggregate === 1 && o.ns === 'admin.$cmd')); \
                t.drop(); \
                c.drop()";
    // Not --quiet: the banner is where mongosh's warnings would show.
    let text = check(mongosh_command(mongosh, uri).args(["--eval", eval]))?;
    if !text.contains("ping ok=1 version=") {
        bail!("mongosh did not print the ping result:\n{}", indent(&text));
    }
    if !text.contains("crud count=2 n2=12") {
        bail!("mongosh CRUD round failed:\n{}", indent(&text));
    }
    if !text.contains("explain index=n_1") {
        bail!("mongosh explain did not show the index:\n{}", indent(&text));
    }
    if !text.contains("index list=_id_,n_1 hinted=1,12 after=1") {
        bail!("mongosh index round failed:\n{}", indent(&text));
    }
    if !text.contains("wildcard index=$**_1 path=$_path+n") {
        bail!("mongosh wildcard index round failed:\n{}", indent(&text));
    }
    if !text.contains("merge on n=2 kept=keep,true,true") {
        bail!(
            "mongosh $merge on a unique field failed:\n{}",
            indent(&text)
        );
    }
    if !text.contains("currentOp self=true") {
        bail!("mongosh db.currentOp() failed:\n{}", indent(&text));
    }
    reject_warnings(&text)?;
    let interactive = interactive_mongosh(mongosh, uri)?;
    if !interactive.contains("{ ok: 1 }") {
        bail!(
            "interactive mongosh did not answer ping:\n{}",
            indent(&interactive)
        );
    }
    reject_warnings(&interactive)?;
    Ok(format!("{text}{interactive}"))
}

fn interactive_mongosh(mongosh: &Path, uri: &str) -> Result<String> {
    use std::io::Write;
    let mut child = mongosh_command(mongosh, uri)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()?;
    child
        .stdin
        .take()
        .context("stdin")?
        .write_all(b"db.runCommand({ping: 1})\n")?;
    let output = child.wait_with_output()?;
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    if !output.status.success() {
        bail!(
            "interactive mongosh exited with {}:\n{}",
            output.status,
            indent(&text)
        );
    }
    Ok(text)
}

fn reject_warnings(text: &str) -> Result<()> {
    let about_node = |line: &str| {
        line.contains("Node.js versions lower than")
            || line.starts_with("Deprecation warnings:")
            || line.contains("install/#supported-operating-systems")
    };
    for line in text.lines().filter(|line| !about_node(line)) {
        let lower = line.to_lowercase();
        for word in ["warning", "error", "deprecat", "not supported"] {
            if lower.contains(word) {
                bail!("mongosh output mentions {word:?}: {line}\n{}", indent(text));
            }
        }
    }
    Ok(())
}
