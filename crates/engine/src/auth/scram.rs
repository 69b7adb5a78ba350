//! SCRAM-SHA-1 and SCRAM-SHA-256, the server's side (RFC 5802, RFC 7677), with MongoDB's
//! password rules: SCRAM-SHA-1 hashes mongod's MD5 digest `hex(md5("user:mongo:pwd"))`,
//! SCRAM-SHA-256 the SASLprep'd password (RFC 4013).
//!
//! Invariants:
//! - Only salted, iterated keys ([`Credential`]) are kept; the password exists only for
//!   the time [`Credential::derive`] runs.
//! - The client's proof is compared in constant time (`subtle`), and whatever part of a
//!   conversation was wrong, the caller learns only "failed" and a reason for the log.
//! - The hashes, HMAC and PBKDF2 are RustCrypto's; nothing here computes them by hand.
//! - Parsing never panics on any payload (all byte access is checked).

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;
use hmac::{Hmac, KeyInit, Mac};
use sha1::Sha1;
use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;

/// A SCRAM variant.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Mechanism {
    /// SCRAM-SHA-1 (over mongod's MD5 password digest).
    Sha1,
    /// SCRAM-SHA-256 (over the SASLprep'd password).
    Sha256,
}

/// Both mechanisms, in the order mongod lists them.
pub(crate) const MECHANISMS: [Mechanism; 2] = [Mechanism::Sha1, Mechanism::Sha256];

impl Mechanism {
    /// The SASL name (also the key under a stored user's `credentials`).
    pub(crate) fn name(self) -> &'static str {
        match self {
            Mechanism::Sha1 => "SCRAM-SHA-1",
            Mechanism::Sha256 => "SCRAM-SHA-256",
        }
    }

    /// The mechanism named `name`.
    pub(crate) fn parse(name: &str) -> Option<Mechanism> {
        MECHANISMS.into_iter().find(|m| m.name() == name)
    }

    /// Salt length mongod uses (the hash's output length less 4 for SHA-1's 16).
    pub(crate) fn salt_len(self) -> usize {
        match self {
            Mechanism::Sha1 => 16,
            Mechanism::Sha256 => 28,
        }
    }

    /// mongod's default iteration count (`scramIterationCount`,
    /// `scramSHA256IterationCount`).
    pub(crate) fn iterations_default(self) -> u32 {
        match self {
            Mechanism::Sha1 => 10_000,
            Mechanism::Sha256 => 15_000,
        }
    }

    pub(super) fn hash(self, data: &[u8]) -> Vec<u8> {
        match self {
            Mechanism::Sha1 => Sha1::digest(data).to_vec(),
            Mechanism::Sha256 => Sha256::digest(data).to_vec(),
        }
    }

    pub(super) fn hmac(self, key: &[u8], data: &[u8]) -> Vec<u8> {
        match self {
            Mechanism::Sha1 => {
                let mut mac = <Hmac<Sha1> as KeyInit>::new_from_slice(key)
                    .expect("HMAC takes keys of any length");
                mac.update(data);
                mac.finalize().into_bytes().to_vec()
            }
            Mechanism::Sha256 => {
                let mut mac = <Hmac<Sha256> as KeyInit>::new_from_slice(key)
                    .expect("HMAC takes keys of any length");
                mac.update(data);
                mac.finalize().into_bytes().to_vec()
            }
        }
    }

    pub(super) fn salted_password(self, password: &[u8], salt: &[u8], iterations: u32) -> Vec<u8> {
        match self {
            Mechanism::Sha1 => {
                let mut out = vec![0u8; 20];
                pbkdf2::pbkdf2_hmac::<Sha1>(password, salt, iterations, &mut out);
                out
            }
            Mechanism::Sha256 => {
                let mut out = vec![0u8; 32];
                pbkdf2::pbkdf2_hmac::<Sha256>(password, salt, iterations, &mut out);
                out
            }
        }
    }
}

/// The password as the mechanism hashes it: mongod's `hex(md5("user:mongo:pwd"))` for
/// SCRAM-SHA-1, the SASLprep'd password for SCRAM-SHA-256 (`None`: SASLprep refuses it).
pub(crate) fn prepared_password(mechanism: Mechanism, user: &str, pwd: &str) -> Option<String> {
    match mechanism {
        Mechanism::Sha1 => Some(mongo_digest(user, pwd)),
        Mechanism::Sha256 => stringprep::saslprep(pwd).ok().map(|p| p.into_owned()),
    }
}

/// mongod's legacy password digest, `hex(md5("user:mongo:pwd"))`.
pub(crate) fn mongo_digest(user: &str, pwd: &str) -> String {
    use md5::Md5;
    let digest = Md5::digest(format!("{user}:mongo:{pwd}").as_bytes());
    digest.iter().map(|b| format!("{b:02x}")).collect()
}

/// What is stored for one mechanism: never the password.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Credential {
    pub(crate) iterations: u32,
    pub(crate) salt: Vec<u8>,
    pub(crate) stored_key: Vec<u8>,
    pub(crate) server_key: Vec<u8>,
}

impl Credential {
    /// The keys for `password` (already prepared, see [`prepared_password`]).
    pub(crate) fn derive(
        mechanism: Mechanism,
        password: &str,
        salt: Vec<u8>,
        iterations: u32,
    ) -> Credential {
        let salted = mechanism.salted_password(password.as_bytes(), &salt, iterations);
        let client_key = mechanism.hmac(&salted, b"Client Key");
        let server_key = mechanism.hmac(&salted, b"Server Key");
        Credential {
            iterations,
            salt,
            stored_key: mechanism.hash(&client_key),
            server_key,
        }
    }

    /// The stored shape: `{iterationCount, salt, storedKey, serverKey}` (base64 strings).
    pub(crate) fn to_document(&self) -> bson::Document {
        bson::doc! {
            "iterationCount": i32::try_from(self.iterations).unwrap_or(i32::MAX),
            "salt": BASE64.encode(&self.salt),
            "storedKey": BASE64.encode(&self.stored_key),
            "serverKey": BASE64.encode(&self.server_key),
        }
    }

    /// Reads the stored shape back; `None` if any field is missing or malformed.
    pub(crate) fn from_document(doc: &bson::Document) -> Option<Credential> {
        let iterations = match doc.get("iterationCount")? {
            bson::Bson::Int32(n) => u32::try_from(*n).ok()?,
            bson::Bson::Int64(n) => u32::try_from(*n).ok()?,
            _ => return None,
        };
        let field = |key: &str| BASE64.decode(doc.get_str(key).ok()?).ok();
        Some(Credential {
            iterations,
            salt: field("salt")?,
            stored_key: field("storedKey")?,
            server_key: field("serverKey")?,
        })
    }
}

/// Why a conversation failed: for the server's log only; the client hears 18.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Failure(pub(crate) &'static str);

/// The client's first message, parsed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ClientFirst {
    /// The user name, `=2C`/`=3D` decoded.
    pub(crate) user: String,
    /// The GS2 header as sent (`n,,` or `y,,`): the client-final's `c=` must echo it.
    gs2_header: String,
    nonce: String,
    bare: String,
}

/// Parses `n,,n=user,r=nonce` (RFC 5802 section 7). Channel binding and authorization
/// identities are refused, as mongod refuses them.
pub(crate) fn parse_client_first(payload: &[u8]) -> Result<ClientFirst, Failure> {
    let text = std::str::from_utf8(payload).map_err(|_| Failure("payload is not UTF-8"))?;
    let (gs2_header, bare) = if let Some(rest) = text.strip_prefix("n,,") {
        ("n,,", rest)
    } else if let Some(rest) = text.strip_prefix("y,,") {
        ("y,,", rest)
    } else {
        return Err(Failure(
            "client-first must start with n,, (no channel binding, no authzid)",
        ));
    };
    let mut fields = bare.split(',');
    let user = fields
        .next()
        .and_then(|f| f.strip_prefix("n="))
        .ok_or(Failure("client-first lacks n="))?;
    let nonce = fields
        .next()
        .and_then(|f| f.strip_prefix("r="))
        .ok_or(Failure("client-first lacks r="))?;
    if fields.any(|f| f.starts_with("m=")) {
        return Err(Failure("mandatory extensions are not supported"));
    }
    if nonce.is_empty() || !is_printable(nonce) {
        return Err(Failure("client nonce is empty or not printable"));
    }
    Ok(ClientFirst {
        user: decode_name(user).ok_or(Failure("bad escape in user name"))?,
        gs2_header: gs2_header.to_owned(),
        nonce: nonce.to_owned(),
        bare: bare.to_owned(),
    })
}

/// RFC 5802's `printable`: `%x21-2B / %x2D-7E` (no comma).
fn is_printable(text: &str) -> bool {
    text.bytes()
        .all(|b| (0x21..=0x7e).contains(&b) && b != b',')
}

/// Decodes `=2C` and `=3D`; any other `=` is an error.
fn decode_name(name: &str) -> Option<String> {
    let mut out = String::with_capacity(name.len());
    let mut rest = name;
    while let Some(at) = rest.find('=') {
        out.push_str(rest.get(..at)?);
        let escape = rest.get(at..at + 3)?;
        out.push(match escape {
            "=2C" => ',',
            "=3D" => '=',
            _ => return None,
        });
        rest = rest.get(at + 3..)?;
    }
    out.push_str(rest);
    (!out.is_empty()).then_some(out)
}

/// A conversation after the server's first message: what the client-final is checked
/// against.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Conversation {
    pub(crate) mechanism: Mechanism,
    client_first: ClientFirst,
    server_first: String,
    credential: Credential,
}

impl Conversation {
    /// Answers `client_first` for a user with `credential`; `server_nonce` must be fresh
    /// randomness (printable, no comma): it is appended to the client's nonce.
    pub(crate) fn start(
        mechanism: Mechanism,
        client_first: ClientFirst,
        credential: Credential,
        server_nonce: &str,
    ) -> (Conversation, String) {
        assert!(
            is_printable(server_nonce),
            "server nonce {server_nonce:?} is not printable"
        );
        let server_first = format!(
            "r={}{server_nonce},s={},i={}",
            client_first.nonce,
            BASE64.encode(&credential.salt),
            credential.iterations
        );
        let conversation = Conversation {
            mechanism,
            client_first,
            server_first: server_first.clone(),
            credential,
        };
        (conversation, server_first)
    }

    /// Checks the client-final message (`c=..,r=..,p=..`) and returns the server-final
    /// (`v=<server signature>`).
    pub(crate) fn finish(&self, payload: &[u8]) -> Result<String, Failure> {
        let text = std::str::from_utf8(payload).map_err(|_| Failure("payload is not UTF-8"))?;
        let at = text.rfind(",p=").ok_or(Failure("client-final lacks p="))?;
        let without_proof = text.get(..at).ok_or(Failure("client-final lacks p="))?;
        let proof = text.get(at + 3..).ok_or(Failure("client-final lacks p="))?;
        let mut fields = without_proof.split(',');
        let binding = fields
            .next()
            .and_then(|f| f.strip_prefix("c="))
            .ok_or(Failure("client-final lacks c="))?;
        let nonce = fields
            .next()
            .and_then(|f| f.strip_prefix("r="))
            .ok_or(Failure("client-final lacks r="))?;
        if BASE64.decode(binding).ok().as_deref() != Some(self.client_first.gs2_header.as_bytes()) {
            return Err(Failure("channel binding does not match the GS2 header"));
        }
        let expected_nonce = self
            .server_first
            .split(',')
            .next()
            .and_then(|f| f.strip_prefix("r="))
            .expect("the server-first message starts with r=");
        if nonce != expected_nonce {
            return Err(Failure("nonce changed during the conversation"));
        }
        let proof = BASE64
            .decode(proof)
            .map_err(|_| Failure("proof is not base64"))?;
        let auth_message = format!(
            "{},{},{without_proof}",
            self.client_first.bare, self.server_first
        );
        let mechanism = self.mechanism;
        let signature = mechanism.hmac(&self.credential.stored_key, auth_message.as_bytes());
        if proof.len() != signature.len() {
            return Err(Failure("proof has the wrong length"));
        }
        let client_key: Vec<u8> = proof.iter().zip(&signature).map(|(p, s)| p ^ s).collect();
        let stored_key = mechanism.hash(&client_key);
        if !bool::from(stored_key.ct_eq(&self.credential.stored_key)) {
            return Err(Failure("proof does not match the stored key"));
        }
        let server_signature = mechanism.hmac(&self.credential.server_key, auth_message.as_bytes());
        Ok(format!("v={}", BASE64.encode(server_signature)))
    }

    /// The user the client named.
    pub(crate) fn user(&self) -> &str {
        &self.client_first.user
    }
}

/// A fresh server nonce from `random` bytes (base64 of them, as mongod sends 24 bytes).
pub(crate) fn nonce_from(random: &[u8]) -> String {
    BASE64.encode(random)
}

/// base64, for the stored salt of tests and callers that shape payloads.
#[cfg(test)]
pub(crate) fn base64_decode(text: &str) -> Vec<u8> {
    BASE64.decode(text).expect("test base64")
}
