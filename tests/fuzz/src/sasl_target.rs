//! The SASL payload parsers (issue 20): `saslStart` and `saslContinue` with arbitrary
//! payloads through an engine that requires authentication, as a client would drive them.
//!
//! Input: `[flags] client-first 0xFF client-final [0xFF third]`. With flag bit 0 the
//! mechanism is SCRAM-SHA-1 (else SCRAM-SHA-256); with bit 1 every `{r}` in the later
//! payloads becomes the combined nonce the server sent, so mutations reach the proof
//! check instead of dying at the nonce comparison. Any reply is fine; a panic is a bug,
//! and so is a conversation that authenticates without the password (checked after each
//! run: the connection must not be authenticated unless the proof was the real one, which
//! the fuzzer cannot forge).

use bson::rawdoc;
use bson::spec::BinarySubtype;
use engine::{ConnectionContext, Engine, EngineOptions, StartupOptions};
use std::sync::{Arc, OnceLock};

const USER: &str = "fuzz";

fn engine() -> &'static Engine {
    static ENGINE: OnceLock<Engine> = OnceLock::new();
    ENGINE.get_or_init(|| {
        let engine = Engine::new(EngineOptions {
            host: Arc::new(engine::FixedHost::default()),
            startup: StartupOptions::default(),
            connections_max: 10,
            ttl_interval: None,
        });
        engine.set_auth_required(true);
        let local = context("127.0.0.1:1");
        let created = engine.run_command(
            "admin",
            &rawdoc! {
                "createUser": USER, "pwd": "secret", "roles": ["root"],
                "mechanisms": ["SCRAM-SHA-1", "SCRAM-SHA-256"],
            },
            &local,
        );
        assert_eq!(created.get_f64("ok").ok(), Some(1.0), "{created:?}");
        engine
    })
}

fn context(address: &str) -> ConnectionContext {
    ConnectionContext {
        client_address: address.to_owned(),
        ..ConnectionContext::default()
    }
}

fn payload(bytes: &[u8]) -> bson::RawBson {
    bson::RawBson::Binary(bson::Binary {
        subtype: BinarySubtype::Generic,
        bytes: bytes.to_vec(),
    })
}

/// Client-first and client-final payloads for both mechanisms, with and without the
/// server's nonce spliced in.
pub fn seeds() -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    for flags in [0u8, 1, 2, 3] {
        let mut seed = vec![flags];
        seed.extend_from_slice(b"n,,n=fuzz,r=clientnonceclientnonce");
        seed.push(0xFF);
        seed.extend_from_slice(b"c=biws,r={r},p=dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ=");
        seed.push(0xFF);
        seed.extend_from_slice(b"");
        out.push(seed);
    }
    out.push(b"\x02n=fuzz,r=x\xFFc=biws,r={r}".to_vec());
    out.push(b"\x00p=tls-unique,,n=fuzz,r=abc\xFF".to_vec());
    out.push(b"\x02n,a=admin,n=fuzz,r=abc\xFFc=bixz,r={r},p=AA==".to_vec());
    out
}

/// One conversation: `saslStart`, then a `saslContinue` per later payload.
pub fn run(input: &[u8]) {
    let Some((&flags, rest)) = input.split_first() else {
        return;
    };
    let engine = engine();
    let ctx = context("10.0.0.1:2");
    let mut parts = rest.split(|&b| b == 0xFF);
    let first = parts.next().unwrap_or_default();
    let mechanism = if flags & 1 == 1 {
        "SCRAM-SHA-1"
    } else {
        "SCRAM-SHA-256"
    };
    let reply = engine.run_command(
        "admin",
        &rawdoc! { "saslStart": 1, "mechanism": mechanism, "payload": payload(first) },
        &ctx,
    );
    let (Ok(id), Ok(server_first)) = (reply.get_i32("conversationId"), reply.get_binary("payload"))
    else {
        return;
    };
    let nonce = std::str::from_utf8(server_first.bytes)
        .ok()
        .and_then(|text| text.split(',').find_map(|part| part.strip_prefix("r=")))
        .unwrap_or_default()
        .as_bytes()
        .to_vec();
    for part in parts {
        let mut sent = part.to_vec();
        if flags & 2 == 2 {
            sent = replace(&sent, b"{r}", &nonce);
        }
        let reply = engine.run_command(
            "admin",
            &rawdoc! { "saslContinue": 1, "conversationId": id, "payload": payload(&sent) },
            &ctx,
        );
        if reply.get_f64("ok").ok() != Some(1.0) {
            break;
        }
    }
    // No proof the fuzzer can make is the real one: the connection stays unauthenticated.
    let status = engine.run_command("admin", &rawdoc! { "connectionStatus": 1 }, &ctx);
    let users = status
        .get_document("authInfo")
        .and_then(|info| info.get_array("authenticatedUsers"))
        .map(|users| users.into_iter().count())
        .unwrap_or(0);
    assert_eq!(
        users, 0,
        "a forged SASL conversation authenticated: {input:?}"
    );
}

fn replace(haystack: &[u8], needle: &[u8], with: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(haystack.len());
    let mut i = 0;
    while i < haystack.len() {
        if haystack[i..].starts_with(needle) {
            out.extend_from_slice(with);
            i += needle.len();
        } else {
            out.push(haystack[i]);
            i += 1;
        }
    }
    out
}
