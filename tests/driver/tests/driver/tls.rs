//! TLS (issue 20) through the real Rust driver and a raw rustls client: `--tlsMode`
//! requireTLS/allowTLS, `--tlsCAFile` with required and optional client certificates, a
//! wrong CA, the protocol versions, SIGHUP reloading the certificate for new connections
//! while old ones go on, and startup refusing bad flags and files. Every certificate is
//! made here, per test, by rcgen (no key is committed).

use crate::harness::{TestServer, closed_within, ping_frame};
use bson::{Document, doc};
use rcgen::{
    BasicConstraints, CertificateParams, DnType, ExtendedKeyUsagePurpose, IsCa, Issuer, KeyPair,
    KeyUsagePurpose, SerialNumber,
};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

static NEXT: AtomicUsize = AtomicUsize::new(0);

/// A folder of PEM files for one test, removed on drop.
struct Files {
    dir: PathBuf,
}

impl Files {
    fn new() -> Files {
        let dir = std::env::temp_dir().join(format!(
            "mfdb-tls-{}-{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        ));
        std::fs::create_dir_all(&dir).expect("temp dir");
        Files { dir }
    }

    fn write(&self, name: &str, text: &str) -> PathBuf {
        let path = self.dir.join(name);
        std::fs::write(&path, text).expect("write PEM");
        path
    }
}

impl Drop for Files {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// A certificate authority that issues server and client certificates.
struct Ca {
    issuer: Issuer<'static, KeyPair>,
    pem: String,
}

/// An issued certificate: its PEM (certificate then key, as `--tlsCertificateKeyFile` and
/// the driver's `tlsCertificateKeyFile` take it) and its DER.
struct Issued {
    pem: String,
    der: Vec<u8>,
}

impl Ca {
    fn new(name: &str) -> Ca {
        let mut params = CertificateParams::new(Vec::<String>::new()).expect("CA params");
        params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        params.distinguished_name.push(DnType::CommonName, name);
        params.key_usages = vec![KeyUsagePurpose::KeyCertSign, KeyUsagePurpose::CrlSign];
        let key = KeyPair::generate().expect("CA key");
        let pem = params.self_signed(&key).expect("CA certificate").pem();
        Ca {
            issuer: Issuer::new(params, key),
            pem,
        }
    }

    fn issue(&self, name: &str, serial: u64, usage: ExtendedKeyUsagePurpose) -> Issued {
        let names = vec!["localhost".to_owned(), "127.0.0.1".to_owned()];
        let mut params = CertificateParams::new(names).expect("params");
        params.distinguished_name.push(DnType::CommonName, name);
        params.serial_number = Some(SerialNumber::from(serial));
        params.extended_key_usages = vec![usage];
        let key = KeyPair::generate().expect("key");
        let certificate = params.signed_by(&key, &self.issuer).expect("sign");
        Issued {
            pem: format!("{}{}", certificate.pem(), key.serialize_pem()),
            der: certificate.der().to_vec(),
        }
    }

    fn server(&self, serial: u64) -> Issued {
        self.issue("server", serial, ExtendedKeyUsagePurpose::ServerAuth)
    }

    fn client(&self, name: &str) -> Issued {
        self.issue(name, 7, ExtendedKeyUsagePurpose::ClientAuth)
    }
}

/// A server with `--tlsMode mode` and a certificate from `ca`, plus `extra` flags.
fn start_tls(files: &Files, ca: &Ca, mode: &str, extra: &[&str]) -> (TestServer, PathBuf) {
    let key_file = files.write("server.pem", &ca.server(1).pem);
    let ca_file = files.write("ca.pem", &ca.pem);
    let key_arg = key_file.to_str().expect("utf-8 path").to_owned();
    let mut args = vec!["--tlsMode", mode, "--tlsCertificateKeyFile", &key_arg];
    args.extend_from_slice(extra);
    (TestServer::start(&args), ca_file)
}

/// A driver client over TLS trusting `ca_file`, with `extra` URI options.
fn tls_client(server: &TestServer, ca_file: &Path, extra: &str) -> mongodb::sync::Client {
    let uri = format!(
        "mongodb://{}/?directConnection=true&serverSelectionTimeoutMS=3000&tls=true&tlsCAFile={}{extra}",
        server.address,
        ca_file.display()
    );
    mongodb::sync::Client::with_uri_str(uri).expect("client")
}

fn ping(client: &mongodb::sync::Client) -> Result<Document, mongodb::error::Error> {
    client
        .database("admin")
        .run_command(doc! { "ping": 1 })
        .run()
}

/// A raw rustls client: the handshake with `versions` only, trusting `ca_pem`.
fn raw_tls(
    server: &TestServer,
    ca_pem: &str,
    versions: &[&'static rustls::SupportedProtocolVersion],
) -> std::io::Result<rustls::StreamOwned<rustls::ClientConnection, std::net::TcpStream>> {
    use rustls::pki_types::pem::PemObject;
    let mut roots = rustls::RootCertStore::empty();
    let ca = rustls::pki_types::CertificateDer::from_pem_slice(ca_pem.as_bytes()).expect("CA");
    roots.add(ca).expect("root");
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let config = rustls::ClientConfig::builder_with_provider(provider)
        .with_protocol_versions(versions)
        .expect("versions")
        .with_root_certificates(roots)
        .with_no_client_auth();
    let name = rustls::pki_types::ServerName::try_from("localhost").expect("name");
    let connection = rustls::ClientConnection::new(Arc::new(config), name).expect("client");
    let stream = server.raw();
    let mut tls = rustls::StreamOwned::new(connection, stream);
    while tls.conn.is_handshaking() {
        tls.conn.complete_io(&mut tls.sock)?;
    }
    Ok(tls)
}

/// Sends a ping over `stream` and returns the reply's `ok`.
fn raw_ping(stream: &mut impl std::io::Read, send: impl FnOnce(&[u8])) -> Option<f64> {
    send(&ping_frame(5));
    let mut prefix = [0u8; 4];
    stream.read_exact(&mut prefix).ok()?;
    let length = usize::try_from(i32::from_le_bytes(prefix)).ok()?;
    let mut frame = prefix.to_vec();
    frame.resize(length, 0);
    stream.read_exact(&mut frame[4..]).ok()?;
    let (_, reply) = crate::harness::decode_reply(&frame);
    reply.get_f64("ok").ok()
}

fn tls_ping(
    tls: &mut rustls::StreamOwned<rustls::ClientConnection, std::net::TcpStream>,
) -> Option<f64> {
    tls.write_all(&ping_frame(5)).ok()?;
    raw_ping(tls, |_| {})
}

#[test]
fn require_tls_serves_the_driver_over_tls_and_refuses_a_plain_client() {
    let files = Files::new();
    let ca = Ca::new("test CA");
    let (mut server, ca_file) = start_tls(&files, &ca, "requireTLS", &[]);
    let client = tls_client(&server, &ca_file, "");
    let coll = client.database("app").collection::<Document>("items");
    coll.insert_one(doc! { "_id": 1, "n": 1 })
        .run()
        .expect("insert over TLS");
    coll.update_one(doc! { "_id": 1 }, doc! { "$inc": { "n": 1 } })
        .run()
        .expect("update over TLS");
    let found = coll
        .find_one(doc! { "_id": 1 })
        .run()
        .expect("find")
        .expect("doc");
    assert_eq!(found.get_i32("n").ok(), Some(2));

    // A plain client's first bytes are a wire message, not a handshake: closed unanswered.
    let mut plain = server.raw();
    plain.write_all(&ping_frame(1)).expect("send");
    assert!(closed_within(&mut plain, Duration::from_secs(5)));
    assert!(server.log_contains("plain connection refused: --tlsMode requireTLS"));
    let plain_driver = mongodb::sync::Client::with_uri_str(format!(
        "mongodb://{}/?directConnection=true&serverSelectionTimeoutMS=1000",
        server.address
    ))
    .expect("client");
    assert!(
        ping(&plain_driver).is_err(),
        "requireTLS served a plain driver"
    );

    // The refused clients left the server serving TLS ones.
    assert_eq!(coll.count_documents(doc! {}).run().expect("count"), 1);
    assert!(server.is_running());
    let options = client
        .database("admin")
        .run_command(doc! { "getCmdLineOpts": 1 })
        .run()
        .expect("getCmdLineOpts");
    let mode = options
        .get_document("parsed")
        .and_then(|parsed| parsed.get_document("net"))
        .and_then(|net| net.get_document("tls"))
        .and_then(|tls| tls.get_str("mode"));
    assert_eq!(mode.ok(), Some("requireTLS"), "{options:?}");
}

#[test]
fn allow_tls_serves_plain_and_tls_clients_on_one_port() {
    let files = Files::new();
    let ca = Ca::new("test CA");
    let (server, ca_file) = start_tls(&files, &ca, "allowTLS", &[]);
    let secure = tls_client(&server, &ca_file, "");
    secure
        .database("app")
        .collection::<Document>("items")
        .insert_one(doc! { "_id": 1 })
        .run()
        .expect("insert over TLS");
    let plain = server.client();
    let count = plain
        .database("app")
        .collection::<Document>("items")
        .count_documents(doc! {})
        .run()
        .expect("a plain client under allowTLS");
    assert_eq!(count, 1);
    let mut raw = server.raw();
    let mut writer = raw.try_clone().expect("clone");
    assert_eq!(
        raw_ping(&mut raw, |frame| writer.write_all(frame).expect("send")),
        Some(1.0)
    );
    let (prefer, prefer_ca) = start_tls(&files, &ca, "preferTLS", &[]);
    assert!(
        ping(&prefer.client()).is_ok(),
        "preferTLS takes plain clients"
    );
    assert!(ping(&tls_client(&prefer, &prefer_ca, "")).is_ok());
}

#[test]
fn a_client_trusting_another_ca_fails_the_handshake() {
    let files = Files::new();
    let ca = Ca::new("test CA");
    let (mut server, _) = start_tls(&files, &ca, "requireTLS", &[]);
    let other = files.write("other-ca.pem", &Ca::new("other CA").pem);
    let refused = ping(&tls_client(&server, &other, "")).expect_err("wrong CA");
    assert!(
        matches!(
            *refused.kind,
            mongodb::error::ErrorKind::ServerSelection { .. }
        ),
        "{refused:?}"
    );
    assert!(
        raw_tls(
            &server,
            &Ca::new("third CA").pem,
            &[&rustls::version::TLS13]
        )
        .is_err()
    );
    server.assert_tls_healthy(&ca.pem);
}

impl TestServer {
    /// A fresh TLS client trusting `ca_pem` still gets a ping answered.
    fn assert_tls_healthy(&mut self, ca_pem: &str) {
        assert!(self.is_running(), "server exited");
        let mut tls = raw_tls(self, ca_pem, &[&rustls::version::TLS13]).expect("handshake");
        assert_eq!(tls_ping(&mut tls), Some(1.0));
    }
}

#[test]
fn client_certificates_are_required_with_a_ca_file_unless_allowed_without() {
    let files = Files::new();
    let ca = Ca::new("test CA");
    let ca_file = files.write("clients-ca.pem", &ca.pem);
    let ca_arg = ca_file.to_str().expect("utf-8").to_owned();
    let (mut required, server_ca) = start_tls(&files, &ca, "requireTLS", &["--tlsCAFile", &ca_arg]);
    let good = files.write("client.pem", &ca.client("alice").pem);
    let good_option = format!("&tlsCertificateKeyFile={}", good.display());
    assert!(ping(&tls_client(&required, &server_ca, &good_option)).is_ok());
    assert!(
        ping(&tls_client(&required, &server_ca, "")).is_err(),
        "a client without a certificate was served"
    );
    let stranger = files.write("stranger.pem", &Ca::new("other CA").client("mallory").pem);
    let stranger_option = format!("&tlsCertificateKeyFile={}", stranger.display());
    assert!(
        ping(&tls_client(&required, &server_ca, &stranger_option)).is_err(),
        "a certificate from another CA was accepted"
    );
    assert!(required.log_contains("TLS handshake or record refused"));
    assert!(required.is_running());

    let flags = [
        "--tlsCAFile",
        &ca_arg,
        "--tlsAllowConnectionsWithoutCertificates",
    ];
    let (optional, server_ca) = start_tls(&files, &ca, "requireTLS", &flags);
    assert!(ping(&tls_client(&optional, &server_ca, "")).is_ok());
    assert!(ping(&tls_client(&optional, &server_ca, &good_option)).is_ok());
    assert!(
        ping(&tls_client(&optional, &server_ca, &stranger_option)).is_err(),
        "optional certificates must still verify when presented"
    );
}

#[test]
fn tls_1_2_and_1_3_are_offered_and_disabled_protocols_are_not() {
    let files = Files::new();
    let ca = Ca::new("test CA");
    let (server, _) = start_tls(&files, &ca, "requireTLS", &[]);
    for version in [&rustls::version::TLS12, &rustls::version::TLS13] {
        let mut tls = raw_tls(&server, &ca.pem, &[version]).expect("handshake");
        assert_eq!(tls.conn.protocol_version(), Some(version.version));
        assert_eq!(tls_ping(&mut tls), Some(1.0));
    }
    let (no_12, _) = start_tls(
        &files,
        &ca,
        "requireTLS",
        &["--tlsDisabledProtocols", "TLS1_0,TLS1_2"],
    );
    assert!(raw_tls(&no_12, &ca.pem, &[&rustls::version::TLS12]).is_err());
    assert!(raw_tls(&no_12, &ca.pem, &[&rustls::version::TLS13]).is_ok());
}

/// The certificate the server presents to a new connection.
fn presented(server: &TestServer, ca_pem: &str) -> Vec<u8> {
    let tls = raw_tls(server, ca_pem, &[&rustls::version::TLS13]).expect("handshake");
    let chain = tls.conn.peer_certificates().expect("server certificates");
    chain.first().expect("leaf").to_vec()
}

#[test]
fn sighup_reloads_the_certificate_for_new_connections_only() {
    let files = Files::new();
    let first_ca = Ca::new("first CA");
    let (mut server, first_ca_file) = start_tls(&files, &first_ca, "requireTLS", &[]);
    let before = presented(&server, &first_ca.pem);
    let mut kept = raw_tls(&server, &first_ca.pem, &[&rustls::version::TLS13]).expect("handshake");
    let old_driver = tls_client(&server, &first_ca_file, "");
    ping(&old_driver).expect("the driver before the reload");

    // A new certificate, from a new CA, under the same file name; then SIGHUP.
    let second_ca = Ca::new("second CA");
    let second = second_ca.server(2);
    files.write("server.pem", &second.pem);
    let second_ca_file = files.write("second-ca.pem", &second_ca.pem);
    assert!(
        ping(&tls_client(&server, &second_ca_file, "")).is_err(),
        "not reloaded yet"
    );
    signal(&server, "HUP");
    assert!(
        server.log_contains("TLS: reloaded"),
        "{:?}",
        server.log_lines()
    );
    let after = presented(&server, &second_ca.pem);
    assert_ne!(before, after);
    assert_eq!(
        after, second.der,
        "a fresh connection sees the new certificate"
    );
    ping(&tls_client(&server, &second_ca_file, "")).expect("a driver trusting the new CA");

    // Connections from before the reload go on with the session they have.
    assert_eq!(tls_ping(&mut kept), Some(1.0));
    ping(&old_driver).expect("the pooled connection from before the reload");

    // A broken file on the next SIGHUP keeps the certificate in use.
    files.write("server.pem", "-----BEGIN CERTIFICATE-----\nnot base64\n");
    signal(&server, "HUP");
    assert!(server.log_contains("TLS certificate kept, reload failed"));
    assert_eq!(presented(&server, &second_ca.pem), second.der);
    assert!(server.is_running());
}

fn signal(server: &TestServer, name: &str) {
    let status = std::process::Command::new("kill")
        .args([format!("-{name}"), server.pid().to_string()])
        .status()
        .expect("kill runs");
    assert!(status.success());
}

#[test]
fn bad_tls_flags_and_files_stop_the_server_at_startup_naming_the_file() {
    let files = Files::new();
    let ca = Ca::new("test CA");
    let good = files.write("good.pem", &ca.server(1).pem);
    let only_certificate = files.write("cert-only.pem", &ca.pem);
    let garbage = files.write(
        "garbage.pem",
        "-----BEGIN CERTIFICATE-----\n%%%\n-----END CERTIFICATE-----\n",
    );
    let missing = files.dir.join("missing.pem");
    let path = |p: &Path| p.to_str().expect("utf-8").to_owned();
    let cases: Vec<(Vec<String>, String)> = vec![
        (
            vec!["--tlsMode".into(), "requireTLS".into()],
            "needs --tlsCertificateKeyFile".into(),
        ),
        (
            vec!["--tlsCertificateKeyFile".into(), path(&good)],
            "need --tlsMode".into(),
        ),
        (
            tls_args(&missing, &[]),
            format!("{}: cannot read", missing.display()),
        ),
        (
            tls_args(&garbage, &[]),
            format!("{}: invalid PEM", garbage.display()),
        ),
        (
            tls_args(&only_certificate, &[]),
            format!("{}: no usable private key", only_certificate.display()),
        ),
        (
            tls_args(&good, &["--tlsCAFile".into(), path(&missing)]),
            format!("--tlsCAFile {}: cannot read", missing.display()),
        ),
        (
            tls_args(&good, &["--tlsCAFile".into(), path(&garbage)]),
            format!("--tlsCAFile {}", garbage.display()),
        ),
        (
            tls_args(
                &good,
                &["--tlsDisabledProtocols".into(), "TLS1_2,TLS1_3".into()],
            ),
            "leaves no protocol".into(),
        ),
    ];
    for (args, expected) in cases {
        let db = TestServer::temp_db();
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let (status, stderr) = TestServer::refused_with(&db, &args);
        assert!(!status.success(), "{args:?} started");
        assert!(stderr.contains(&expected), "{args:?}: {stderr}");
        assert!(
            !db.exists(),
            "{args:?} opened the database before checking TLS"
        );
    }
}

fn tls_args(key_file: &Path, extra: &[String]) -> Vec<String> {
    let mut args = vec![
        "--tlsMode".to_owned(),
        "requireTLS".to_owned(),
        "--tlsCertificateKeyFile".to_owned(),
        key_file.to_str().expect("utf-8").to_owned(),
    ];
    args.extend_from_slice(extra);
    args
}

#[test]
fn a_tls_client_that_stalls_its_handshake_is_closed_by_the_frame_timeout() {
    let files = Files::new();
    let ca = Ca::new("test CA");
    let (server, _) = start_tls(&files, &ca, "requireTLS", &["--frame-timeout-secs", "1"]);
    let mut stalled = server.raw();
    // The first five bytes of a TLS record header announcing a handshake, then nothing.
    stalled
        .write_all(&[0x16, 0x03, 0x01, 0x00, 0x80])
        .expect("send");
    assert!(closed_within(&mut stalled, Duration::from_secs(5)));
    assert!(server.log_contains("TLS handshake incomplete after 1s"));
}

#[test]
fn server_status_counts_tls_connections_by_protocol_version() {
    let files = Files::new();
    let ca = Ca::new("test CA");
    let (server, ca_file) = start_tls(&files, &ca, "allowTLS", &[]);
    let counts = |client: &mongodb::sync::Client| {
        let status = client
            .database("admin")
            .run_command(doc! { "serverStatus": 1 })
            .run()
            .expect("serverStatus");
        let section = status
            .get_document("transportSecurity")
            .expect("transportSecurity")
            .clone();
        ["1.0", "1.1", "1.2", "1.3", "unknown"].map(|name| {
            section
                .get_i64(name)
                .unwrap_or_else(|_| panic!("{name}: {section:?}"))
        })
    };
    // Plain connections count nowhere.
    let plain = server.client();
    assert_eq!(counts(&plain), [0, 0, 0, 0, 0]);
    let mut v12 = raw_tls(&server, &ca.pem, &[&rustls::version::TLS12]).expect("TLS 1.2");
    assert_eq!(tls_ping(&mut v12), Some(1.0));
    let mut v13 = raw_tls(&server, &ca.pem, &[&rustls::version::TLS13]).expect("TLS 1.3");
    assert_eq!(tls_ping(&mut v13), Some(1.0));
    let after = counts(&plain);
    assert_eq!(after, [0, 0, 1, 1, 0], "one 1.2 and one 1.3 handshake");
    // The driver negotiates 1.3; its connections add there and only there.
    let secure = tls_client(&server, &ca_file, "");
    let seen = counts(&secure);
    assert_eq!(seen[2], 1);
    assert!(seen[3] >= 2, "{seen:?}");
    assert_eq!([seen[0], seen[1], seen[4]], [0, 0, 0]);
}

/// The subject the X.509 tests issue, and the RFC 2253 name mongod gives it: the RDNs
/// last to first, the comma inside the organisation escaped.
const X509_SUBJECT: &str = "CN=app-client,OU=eng,O=Example\\, Inc.";

impl Ca {
    /// A client certificate whose subject is O, OU, CN (in that DER order).
    fn client_with_units(&self, organisation: &str, unit: &str, name: &str) -> Issued {
        let mut params = CertificateParams::new(Vec::<String>::new()).expect("params");
        // Not rcgen's default CN first.
        params.distinguished_name = rcgen::DistinguishedName::new();
        params
            .distinguished_name
            .push(DnType::OrganizationName, organisation);
        params
            .distinguished_name
            .push(DnType::OrganizationalUnitName, unit);
        params.distinguished_name.push(DnType::CommonName, name);
        params.serial_number = Some(SerialNumber::from(11u64));
        params.extended_key_usages = vec![ExtendedKeyUsagePurpose::ClientAuth];
        let key = KeyPair::generate().expect("key");
        let certificate = params.signed_by(&key, &self.issuer).expect("sign");
        Issued {
            pem: format!("{}{}", certificate.pem(), key.serialize_pem()),
            der: certificate.der().to_vec(),
        }
    }
}

fn command_code(error: &mongodb::error::Error) -> Option<i32> {
    match *error.kind {
        mongodb::error::ErrorKind::Command(ref failure) => Some(failure.code),
        _ => None,
    }
}

/// A driver login failure, as the driver reports an 18 during its handshake.
fn auth_refused(error: &mongodb::error::Error) -> bool {
    matches!(
        *error.kind,
        mongodb::error::ErrorKind::Authentication { .. }
    ) || command_code(error) == Some(18)
}

#[test]
fn x509_authenticates_the_certificate_subject_as_an_external_user() {
    let files = Files::new();
    let ca = Ca::new("test CA");
    let ca_file = files.write("clients-ca.pem", &ca.pem);
    let ca_arg = ca_file.to_str().expect("utf-8").to_owned();
    let flags = [
        "--auth",
        "--tlsCAFile",
        &ca_arg,
        "--tlsAllowConnectionsWithoutCertificates",
    ];
    let (server, server_ca) = start_tls(&files, &ca, "requireTLS", &flags);
    let app = files.write(
        "app.pem",
        &ca.client_with_units("Example, Inc.", "eng", "app-client")
            .pem,
    );
    let app_option = format!("&tlsCertificateKeyFile={}", app.display());
    // The localhost exception makes root; root makes the $external user.
    let anonymous = tls_client(&server, &server_ca, "");
    anonymous
        .database("admin")
        .run_command(doc! { "createUser": "root", "pwd": "pw", "roles": ["root"] })
        .run()
        .expect("first user");
    let root = mongodb::sync::Client::with_uri_str(format!(
        "mongodb://root:pw@{}/?directConnection=true&serverSelectionTimeoutMS=3000&tls=true&tlsCAFile={}&authSource=admin",
        server.address,
        server_ca.display()
    ))
    .expect("root client");
    let external = root.database("$external");
    let with_pwd = external
        .run_command(doc! { "createUser": "CN=x", "pwd": "p", "roles": [] })
        .run()
        .expect_err("a password in $external");
    assert_eq!(command_code(&with_pwd), Some(2), "{with_pwd:?}");
    assert!(
        with_pwd
            .to_string()
            .contains("Cannot set the password for users defined on the '$external' database"),
        "{with_pwd}"
    );
    external
        .run_command(doc! {
            "createUser": X509_SUBJECT,
            "roles": [{ "role": "readWrite", "db": "app" }],
        })
        .run()
        .expect("the X.509 user");
    let stored = external
        .run_command(doc! { "usersInfo": X509_SUBJECT })
        .run()
        .expect("usersInfo");
    let users = stored.get_array("users").expect("users");
    assert_eq!(users.len(), 1, "{stored:?}");

    // The driver's MONGODB-X509 login (speculative inside hello, then authenticate).
    let login = tls_client(
        &server,
        &server_ca,
        &format!("{app_option}&authMechanism=MONGODB-X509&authSource=%24external"),
    );
    let items = login.database("app").collection::<Document>("items");
    items
        .insert_one(doc! { "_id": 1 })
        .run()
        .unwrap_or_else(|e| panic!("X.509 login: {e:?}\n{:#?}", server.log_lines()));
    let status = login
        .database("admin")
        .run_command(doc! { "connectionStatus": 1 })
        .run()
        .expect("connectionStatus");
    let who = status
        .get_document("authInfo")
        .and_then(|info| info.get_array("authenticatedUsers"))
        .expect("users")
        .clone();
    assert_eq!(
        who,
        vec![bson::Bson::Document(
            doc! { "user": X509_SUBJECT, "db": "$external" }
        )]
    );
    let refused = login
        .database("other")
        .collection::<Document>("items")
        .insert_one(doc! { "_id": 1 })
        .run()
        .expect_err("readWrite on app only");
    assert!(refused.to_string().contains("not authorized"), "{refused}");

    // Explicit authenticate on a connection with the certificate: the subject, and the
    // speculative form inside hello answers {dbname, user}.
    let holder = tls_client(&server, &server_ca, &app_option);
    let hello = holder
        .database("admin")
        .run_command(doc! {
            "hello": 1,
            "speculativeAuthenticate": {
                "authenticate": 1, "mechanism": "MONGODB-X509", "db": "$external",
            },
        })
        .run()
        .expect("hello");
    let speculative = hello
        .get_document("speculativeAuthenticate")
        .unwrap_or_else(|_| panic!("no speculativeAuthenticate: {hello:?}"));
    assert_eq!(speculative.get_str("user").ok(), Some(X509_SUBJECT));
    assert_eq!(speculative.get_str("dbname").ok(), Some("$external"));
    let reply = holder
        .database("$external")
        .run_command(doc! { "authenticate": 1, "mechanism": "MONGODB-X509", "user": X509_SUBJECT })
        .run()
        .expect("authenticate naming the subject");
    assert_eq!(reply.get_str("user").ok(), Some(X509_SUBJECT));
    let mismatch = holder
        .database("$external")
        .run_command(
            doc! { "authenticate": 1, "mechanism": "MONGODB-X509", "user": "CN=app-client" },
        )
        .run()
        .expect_err("a user other than the certificate's");
    assert_eq!(command_code(&mismatch), Some(18), "{mismatch:?}");
    let wrong_db = holder
        .database("admin")
        .run_command(doc! { "authenticate": 1, "mechanism": "MONGODB-X509" })
        .run()
        .expect_err("X.509 outside $external");
    assert_eq!(command_code(&wrong_db), Some(18), "{wrong_db:?}");

    // No certificate: naming the user proves nothing.
    let bare = tls_client(&server, &server_ca, "");
    let no_certificate = bare
        .database("$external")
        .run_command(doc! { "authenticate": 1, "mechanism": "MONGODB-X509", "user": X509_SUBJECT })
        .run()
        .expect_err("X.509 without a certificate");
    assert_eq!(
        command_code(&no_certificate),
        Some(18),
        "{no_certificate:?}"
    );
    let still_anonymous = bare
        .database("app")
        .collection::<Document>("items")
        .find_one(doc! {})
        .run()
        .expect_err("not authenticated");
    assert_eq!(command_code(&still_anonymous), Some(13));

    // A verified certificate of a subject with no user: refused.
    let stranger = files.write("nobody.pem", &ca.client("nobody").pem);
    let unknown = tls_client(
        &server,
        &server_ca,
        &format!(
            "&tlsCertificateKeyFile={}&authMechanism=MONGODB-X509&authSource=%24external",
            stranger.display()
        ),
    );
    let unknown = ping(&unknown).expect_err("a subject without a user");
    assert!(auth_refused(&unknown), "{unknown:?}");
    assert!(
        server.log_contains(r#""principalName":"CN=nobody","authenticationDatabase":"$external""#)
    );
}
