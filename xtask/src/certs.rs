//! Certificates for `cargo xtask e2e`'s TLS round, made per run with rcgen (no key is
//! committed, and the openssl command is not assumed): a CA and a server certificate for
//! `localhost` and 127.0.0.1 signed by it.

use anyhow::{Context, Result};
use rcgen::{
    BasicConstraints, CertificateParams, DnType, ExtendedKeyUsagePurpose, IsCa, Issuer, KeyPair,
    KeyUsagePurpose,
};
use std::path::{Path, PathBuf};

/// The files [`write`] made.
pub(crate) struct TlsFiles {
    /// The server's certificate and key (`--tlsCertificateKeyFile`).
    pub(crate) server: PathBuf,
    /// The CA clients trust (`tlsCAFile`).
    pub(crate) ca: PathBuf,
}

/// Writes `server.pem` and `ca.pem` into `dir` (created when missing).
pub(crate) fn write(dir: &Path) -> Result<TlsFiles> {
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    let mut ca_params = CertificateParams::new(Vec::<String>::new())?;
    ca_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    ca_params
        .distinguished_name
        .push(DnType::CommonName, "multiforadb e2e CA");
    ca_params.key_usages = vec![KeyUsagePurpose::KeyCertSign, KeyUsagePurpose::CrlSign];
    let ca_key = KeyPair::generate()?;
    let ca_pem = ca_params.self_signed(&ca_key)?.pem();
    let issuer = Issuer::new(ca_params, ca_key);
    let mut params = CertificateParams::new(vec!["localhost".to_owned(), "127.0.0.1".to_owned()])?;
    params
        .distinguished_name
        .push(DnType::CommonName, "localhost");
    params.extended_key_usages = vec![ExtendedKeyUsagePurpose::ServerAuth];
    let key = KeyPair::generate()?;
    let certificate = params.signed_by(&key, &issuer)?;
    let files = TlsFiles {
        server: dir.join("server.pem"),
        ca: dir.join("ca.pem"),
    };
    std::fs::write(
        &files.server,
        format!("{}{}", certificate.pem(), key.serialize_pem()),
    )?;
    std::fs::write(&files.ca, ca_pem)?;
    Ok(files)
}
