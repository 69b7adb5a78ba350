//! TLS on the listening port (issue 20): the `--tls*` flags turned into a rustls
//! `ServerConfig`, its reload on SIGHUP, and each connection's transport.
//!
//! rustls with the ring provider, TLS 1.2 and 1.3 only (rustls implements nothing older).
//! The event loop stays the only thread that touches sockets: a TLS connection is a
//! `rustls::ServerConnection` fed by `read_tls`/`process_new_packets` and drained by
//! `write_tls` on the same non-blocking socket, never a thread of its own.
//!
//! Transport states (`Transport`, one per connection):
//! - `Plain`: bytes are the wire protocol (`--tlsMode disabled`, or a plain client under
//!   `allowTLS`/`preferTLS`).
//! - `Sniffing` → `Tls` or `Plain` (`Transport::sniff`): under any TLS mode, the first
//!   byte decides: 0x16 (a TLS handshake record) starts TLS; anything else is a plain
//!   client, refused under `requireTLS` (the connection is closed and the refusal logged)
//!   and served under `allowTLS`/`preferTLS`, as mongod does.
//! - `Tls`: handshaking, then serving; a TLS error closes the connection after the alert
//!   rustls queued is sent.
//!
//! Invariants: under `requireTLS` no wire-protocol byte is read from a connection that
//! has not completed a TLS handshake; with `--tlsCAFile` and without
//! `--tlsAllowConnectionsWithoutCertificates`, a handshake completes only with a client
//! certificate that chains to that CA. A reload swaps the configuration new handshakes
//! use ([`Tls::current`]); connections already past `Sniffing` keep the one they started
//! with, so they are never interrupted.

use crate::config::{Config, TlsMode, TlsProtocol};
use crate::error::Error;
use rustls::ServerConfig;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use rustls::server::WebPkiClientVerifier;
use std::io::{ErrorKind, Read, Write};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

/// The first byte of a TLS record carrying a handshake message (RFC 8446 §5.1).
const TLS_HANDSHAKE_RECORD: u8 = 0x16;

/// What the TLS flags name: the files a configuration is built from (again on reload).
#[derive(Debug, Clone)]
struct TlsFiles {
    certificate_key: PathBuf,
    ca: Option<PathBuf>,
    allow_without_certificates: bool,
    versions: Vec<&'static rustls::SupportedProtocolVersion>,
}

/// The server's TLS settings and the configuration new handshakes use.
pub struct Tls {
    mode: TlsMode,
    files: TlsFiles,
    current: Mutex<Arc<ServerConfig>>,
}

impl Tls {
    /// The TLS settings `config` asks for: `None` with `--tlsMode disabled`. Fails, naming
    /// the flag and the file, on contradictory flags or a file that cannot be read or
    /// holds no usable certificate or key.
    pub fn from_config(config: &Config) -> Result<Option<Arc<Tls>>, Error> {
        let flag_error = |text: &str| Err(Error::Tls(text.to_owned()));
        if config.tls_mode == TlsMode::Disabled {
            if config.tls_certificate_key_file.is_some() || config.tls_ca_file.is_some() {
                return flag_error(
                    "--tlsCertificateKeyFile and --tlsCAFile need --tlsMode allowTLS, \
                     preferTLS or requireTLS",
                );
            }
            return Ok(None);
        }
        let Some(certificate_key) = config.tls_certificate_key_file.clone() else {
            return flag_error("--tlsMode other than disabled needs --tlsCertificateKeyFile");
        };
        let disabled = &config.tls_disabled_protocols;
        let versions: Vec<_> = [
            (TlsProtocol::Tls1_3, &rustls::version::TLS13),
            (TlsProtocol::Tls1_2, &rustls::version::TLS12),
        ]
        .into_iter()
        .filter(|(protocol, _)| !disabled.contains(protocol))
        .map(|(_, version)| version)
        .collect();
        if versions.is_empty() {
            return flag_error("--tlsDisabledProtocols leaves no protocol (TLS 1.2 and 1.3 only)");
        }
        let files = TlsFiles {
            certificate_key,
            ca: config.tls_ca_file.clone(),
            allow_without_certificates: config.tls_allow_connections_without_certificates,
            versions,
        };
        let server_config = load(&files)?;
        let tls = Tls {
            mode: config.tls_mode,
            files,
            current: Mutex::new(Arc::new(server_config)),
        };
        log_info!("TLS: {}", tls.describe());
        Ok(Some(Arc::new(tls)))
    }

    fn describe(&self) -> String {
        let clients = match (&self.files.ca, self.files.allow_without_certificates) {
            (None, _) => "no client certificates".to_owned(),
            (Some(ca), false) => format!("client certificates required (CA {})", ca.display()),
            (Some(ca), true) => format!("client certificates optional (CA {})", ca.display()),
        };
        format!(
            "{} with {}, {clients}",
            self.mode.name(),
            self.files.certificate_key.display()
        )
    }

    /// Reads the files again and, when they make a valid configuration, has every later
    /// handshake use it; on failure the configuration in use stays.
    pub fn reload(&self) -> Result<(), Error> {
        let fresh = Arc::new(load(&self.files)?);
        *self
            .current
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = fresh;
        log_info!("TLS: reloaded {}", self.files.certificate_key.display());
        Ok(())
    }

    /// The configuration a handshake starting now uses.
    fn current(&self) -> Arc<ServerConfig> {
        Arc::clone(
            &self
                .current
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner),
        )
    }

    /// The transport of a connection just accepted.
    pub(crate) fn transport(tls: Option<&Tls>) -> Transport {
        match tls {
            None => Transport::Plain,
            Some(tls) => Transport::Sniffing {
                config: tls.current(),
                plain_allowed: tls.mode != TlsMode::RequireTls,
            },
        }
    }
}

fn read_file(flag: &str, path: &std::path::Path) -> Result<Vec<u8>, Error> {
    std::fs::read(path)
        .map_err(|error| Error::Tls(format!("{flag} {}: cannot read: {error}", path.display())))
}

/// Builds the rustls configuration from the files (the whole of it, so a reload never
/// mixes a new certificate with an old key).
fn load(files: &TlsFiles) -> Result<ServerConfig, Error> {
    let flag = "--tlsCertificateKeyFile";
    let path = &files.certificate_key;
    let invalid = |flag: &str, path: &std::path::Path, why: String| {
        Error::Tls(format!("{flag} {}: {why}", path.display()))
    };
    let pem = read_file(flag, path)?;
    let chain = certificates(&pem).map_err(|why| invalid(flag, path, why))?;
    let key = PrivateKeyDer::from_pem_slice(&pem)
        .map_err(|error| invalid(flag, path, format!("no usable private key: {error}")))?;
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let builder = ServerConfig::builder_with_provider(Arc::clone(&provider))
        .with_protocol_versions(&files.versions)
        .map_err(|error| Error::Tls(format!("TLS protocol versions: {error}")))?;
    let builder = match &files.ca {
        None => builder.with_no_client_auth(),
        Some(ca_path) => {
            let flag = "--tlsCAFile";
            let ca_pem = read_file(flag, ca_path)?;
            let mut roots = rustls::RootCertStore::empty();
            for certificate in certificates(&ca_pem).map_err(|why| invalid(flag, ca_path, why))? {
                roots.add(certificate).map_err(|error| {
                    invalid(flag, ca_path, format!("bad CA certificate: {error}"))
                })?;
            }
            let verifier = WebPkiClientVerifier::builder_with_provider(Arc::new(roots), provider);
            let verifier = if files.allow_without_certificates {
                verifier.allow_unauthenticated()
            } else {
                verifier
            };
            let verifier = verifier
                .build()
                .map_err(|error| invalid(flag, ca_path, format!("{error}")))?;
            builder.with_client_cert_verifier(verifier)
        }
    };
    builder
        .with_single_cert(chain, key)
        .map_err(|error| invalid(flag, path, format!("unusable certificate or key: {error}")))
}

/// Every certificate in a PEM file, in order; at least one.
fn certificates(pem: &[u8]) -> Result<Vec<CertificateDer<'static>>, String> {
    let chain = CertificateDer::pem_slice_iter(pem)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|error| format!("invalid PEM: {error}"))?;
    if chain.is_empty() {
        return Err("no certificate in the file".to_owned());
    }
    Ok(chain)
}

/// How a connection's bytes travel (see the module header for the states).
pub(crate) enum Transport {
    /// The wire protocol as it is.
    Plain,
    /// Waiting for the first byte.
    Sniffing {
        /// The configuration a handshake would use (taken when the connection arrived).
        config: Arc<ServerConfig>,
        /// Whether a plain client is served (`allowTLS`/`preferTLS`).
        plain_allowed: bool,
    },
    /// TLS, handshaking or serving.
    Tls(Box<rustls::ServerConnection>),
}

/// What reading through a transport gave.
pub(crate) enum Received {
    /// Wire-protocol bytes, at the front of the buffer.
    Bytes(usize),
    /// Nothing more for now.
    WouldBlock,
    /// The peer is gone (end of stream, a read error, a TLS error, a refused plain client).
    Closed(String),
}

impl Transport {
    /// Whether a TLS handshake has started and not finished.
    pub(crate) fn is_handshaking(&self) -> bool {
        matches!(self, Transport::Tls(tls) if tls.is_handshaking())
    }

    /// Once a TLS handshake is complete: the protocol version negotiated and the subject of
    /// the client's certificate (RFC 2253, as mongod names X.509 users). rustls hands over
    /// a peer certificate only after its verifier accepted it (chained to `--tlsCAFile`),
    /// so a subject here is always a verified one. `None` for plain or handshaking.
    pub(crate) fn established(&self) -> Option<(engine::TlsVersion, Option<String>)> {
        let Transport::Tls(tls) = self else {
            return None;
        };
        if tls.is_handshaking() {
            return None;
        }
        let version = match tls.protocol_version() {
            Some(rustls::ProtocolVersion::TLSv1_2) => engine::TlsVersion::V1_2,
            Some(rustls::ProtocolVersion::TLSv1_3) => engine::TlsVersion::V1_3,
            _ => engine::TlsVersion::Unknown,
        };
        let subject = tls
            .peer_certificates()
            .and_then(|chain| chain.first())
            .and_then(|leaf| subject_rfc2253(leaf.as_ref()));
        Some((version, subject))
    }

    /// Whether rustls holds encrypted bytes not yet written to the socket.
    pub(crate) fn wants_write(&self) -> bool {
        matches!(self, Transport::Tls(tls) if tls.wants_write())
    }

    /// Reads wire-protocol bytes into `buffer`.
    pub(crate) fn receive(
        &mut self,
        stream: &mut mio::net::TcpStream,
        buffer: &mut [u8],
    ) -> Received {
        loop {
            match self {
                Transport::Plain => return plain_read(stream, buffer),
                Transport::Sniffing { .. } => {
                    if let Some(closed) = self.sniff(stream) {
                        return closed;
                    }
                }
                Transport::Tls(tls) => return tls_read(tls, stream, buffer),
            }
        }
    }

    /// `Sniffing` → `Tls` or `Plain` on the first byte; `Some` when there is nothing to
    /// decide on yet or the client is refused.
    fn sniff(&mut self, stream: &mut mio::net::TcpStream) -> Option<Received> {
        let Transport::Sniffing {
            config,
            plain_allowed,
        } = self
        else {
            return None;
        };
        let mut first = [0u8; 1];
        match stream.peek(&mut first) {
            Ok(0) => return Some(Received::Closed("client disconnected".into())),
            Ok(_) => {}
            Err(error) if error.kind() == ErrorKind::WouldBlock => {
                return Some(Received::WouldBlock);
            }
            Err(error) if error.kind() == ErrorKind::Interrupted => return None,
            Err(error) => return Some(Received::Closed(format!("read failed: {error}"))),
        }
        if first[0] == TLS_HANDSHAKE_RECORD {
            match rustls::ServerConnection::new(Arc::clone(config)) {
                Ok(tls) => *self = Transport::Tls(Box::new(tls)),
                Err(error) => return Some(Received::Closed(format!("TLS setup failed: {error}"))),
            }
        } else if *plain_allowed {
            *self = Transport::Plain;
        } else {
            // Logged once, as the reason its Connection ended line gives.
            return Some(Received::Closed(
                "plain connection refused: --tlsMode requireTLS".into(),
            ));
        }
        None
    }

    /// Writes as much of `bytes` as the socket takes; returns how many were taken (for TLS,
    /// handed to rustls, which then writes what it can). `Err` means the connection is
    /// broken.
    pub(crate) fn send(
        &mut self,
        stream: &mut mio::net::TcpStream,
        bytes: &[u8],
    ) -> std::io::Result<usize> {
        match self {
            Transport::Plain | Transport::Sniffing { .. } => loop {
                if bytes.is_empty() {
                    return Ok(0);
                }
                match stream.write(bytes) {
                    Ok(0) => return Err(ErrorKind::WriteZero.into()),
                    Ok(count) => return Ok(count),
                    Err(error) if error.kind() == ErrorKind::WouldBlock => return Ok(0),
                    Err(error) if error.kind() == ErrorKind::Interrupted => {}
                    Err(error) => return Err(error),
                }
            },
            Transport::Tls(tls) => {
                let mut taken = 0;
                loop {
                    let rest = bytes.get(taken..).unwrap_or_default();
                    let handed = if rest.is_empty() {
                        0
                    } else {
                        tls.writer().write(rest)?
                    };
                    taken += handed;
                    let written = tls_flush(tls, stream)?;
                    if handed == 0 && !written {
                        return Ok(taken);
                    }
                }
            }
        }
    }

    /// Ends a TLS session politely (best effort: the connection is being closed).
    pub(crate) fn close(&mut self, stream: &mut mio::net::TcpStream) {
        if let Transport::Tls(tls) = self {
            tls.send_close_notify();
            let _ = tls_flush(tls, stream);
        }
    }
}

fn plain_read(stream: &mut mio::net::TcpStream, buffer: &mut [u8]) -> Received {
    loop {
        match stream.read(buffer) {
            Ok(0) => return Received::Closed("client disconnected".into()),
            Ok(count) => return Received::Bytes(count),
            Err(error) if error.kind() == ErrorKind::Interrupted => {}
            Err(error) if error.kind() == ErrorKind::WouldBlock => return Received::WouldBlock,
            Err(error) => return Received::Closed(format!("read failed: {error}")),
        }
    }
}

/// Decrypted bytes from rustls, reading more records from the socket when it has none.
fn tls_read(
    tls: &mut rustls::ServerConnection,
    stream: &mut mio::net::TcpStream,
    buffer: &mut [u8],
) -> Received {
    loop {
        match tls.reader().read(buffer) {
            Ok(0) => return Received::Closed("client closed the TLS session".into()),
            Ok(count) => return Received::Bytes(count),
            Err(error) if error.kind() == ErrorKind::WouldBlock => {}
            Err(error) => return Received::Closed(format!("TLS read failed: {error}")),
        }
        match tls.read_tls(stream) {
            Ok(0) => return Received::Closed("client disconnected".into()),
            Ok(_) => {}
            Err(error) if error.kind() == ErrorKind::Interrupted => continue,
            Err(error) if error.kind() == ErrorKind::WouldBlock => return Received::WouldBlock,
            Err(error) => return Received::Closed(format!("read failed: {error}")),
        }
        if let Err(error) = tls.process_new_packets() {
            // Send the alert rustls queued, so the client learns why.
            let _ = tls_flush(tls, stream);
            log_warn!("TLS handshake or record refused: {error}");
            return Received::Closed(format!("TLS error: {error}"));
        }
    }
}

/// Writes the TLS records rustls has until the socket would block; returns whether any
/// byte was written.
fn tls_flush(
    tls: &mut rustls::ServerConnection,
    stream: &mut mio::net::TcpStream,
) -> std::io::Result<bool> {
    let mut written = false;
    while tls.wants_write() {
        match tls.write_tls(stream) {
            Ok(0) => return Err(ErrorKind::WriteZero.into()),
            Ok(_) => written = true,
            Err(error) if error.kind() == ErrorKind::WouldBlock => break,
            Err(error) if error.kind() == ErrorKind::Interrupted => {}
            Err(error) => return Err(error),
        }
    }
    Ok(written)
}

/// The subject of the DER certificate `der` as an RFC 2253 string, the way mongod names an
/// X.509 user: the RDNs last to first, joined by `,` (multi-valued ones by `+`), each
/// attribute by its short name (`CN`, `OU`, `O`, `L`, `ST`, `C`, `DC`, ...; dotted OID
/// otherwise) and its value with `,+"\\<>;` escaped, a leading `#` or space and a
/// trailing space escaped; a value that is not a string is `#` and its DER in hex.
/// `None` when the certificate does not parse.
pub(crate) fn subject_rfc2253(der: &[u8]) -> Option<String> {
    let (_, certificate) = x509_parser::parse_x509_certificate(der).ok()?;
    let registry = x509_parser::objects::oid_registry();
    let mut rdns: Vec<String> = certificate
        .subject()
        .iter()
        .map(|rdn| {
            rdn.iter()
                .map(|attribute| {
                    let oid = attribute.attr_type();
                    let name = x509_parser::objects::oid2abbrev(oid, registry)
                        .map(str::to_owned)
                        .unwrap_or_else(|_| oid.to_id_string());
                    let value = match attribute.as_str() {
                        Ok(text) => escape_rfc2253(text),
                        Err(_) => {
                            let raw = attribute.attr_value().as_bytes();
                            let hex: String = raw.iter().map(|b| format!("{b:02x}")).collect();
                            format!("#{hex}")
                        }
                    };
                    format!("{name}={value}")
                })
                .collect::<Vec<_>>()
                .join("+")
        })
        .collect();
    rdns.reverse();
    Some(rdns.join(","))
}

fn escape_rfc2253(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let last = text.chars().count().saturating_sub(1);
    for (index, c) in text.chars().enumerate() {
        let special = matches!(c, ',' | '+' | '"' | '\\' | '<' | '>' | ';')
            || (index == 0 && (c == '#' || c == ' '))
            || (index == last && c == ' ');
        if special {
            out.push('\\');
        }
        out.push(c);
    }
    out
}
