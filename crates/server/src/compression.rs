//! OP_COMPRESSED on the server: which compressors it offers (`--networkMessageCompressors`,
//! mongod's default `snappy,zstd,zlib`), and compressing a reply as its request was.
//!
//! Invariants:
//! - A reply is compressed only when its request was, with the request's compressor (one
//!   the client negotiated in `hello` and this server enabled: [`wire::compression::decompress`]
//!   refuses the others), and never for the commands the compression specification forbids
//!   (`hello`, the authentication and user commands).
//! - A reply that cannot be compressed (it would pass the message limit) goes out as it is.

use crate::worker::Outcome;
use wire::Compressor;

/// Commands whose messages are never compressed (the compression specification's list).
const NEVER_COMPRESSED: &[&str] = &[
    "hello",
    "isMaster",
    "ismaster",
    "saslStart",
    "saslContinue",
    "getnonce",
    "authenticate",
    "createUser",
    "updateUser",
    "copydbSaslStart",
    "copydbgetnonce",
    "copydb",
];

/// The compressors named by `list` (comma-separated), or none for `disabled`, as mongod
/// reads `--networkMessageCompressors`.
pub(crate) fn parse(list: &str) -> Result<Vec<Compressor>, String> {
    if list == "disabled" {
        return Ok(Vec::new());
    }
    let mut out = Vec::new();
    for name in list.split(',').map(str::trim).filter(|n| !n.is_empty()) {
        let compressor = Compressor::from_name(name).ok_or_else(|| {
            format!(
                "--networkMessageCompressors: unknown compressor {name:?} (snappy, zstd, zlib, \
                 noop or disabled)"
            )
        })?;
        if !out.contains(&compressor) {
            out.push(compressor);
        }
    }
    Ok(out)
}

/// Whether a reply to `message` may be compressed.
fn may_compress(message: &wire::Message) -> bool {
    let name = match message {
        wire::Message::Msg(msg) => msg
            .body
            .iter()
            .next()
            .and_then(Result::ok)
            .map(|(key, _)| key.to_owned()),
        wire::Message::Query(query) => query
            .query
            .iter()
            .next()
            .and_then(Result::ok)
            .map(|(key, _)| key.to_owned()),
        _ => None,
    };
    name.is_some_and(|name| !NEVER_COMPRESSED.contains(&name.as_str()))
}

/// `outcome` with its bytes compressed by `compressor` (the request's), when the request
/// was compressed and its command may be.
/// What the compressor took and gave is counted for serverStatus `network.compression`.
pub(crate) fn compress_reply(
    engine: &engine::Engine,
    outcome: Outcome,
    message: &wire::Message,
    compressor: Option<Compressor>,
) -> Outcome {
    let Some(compressor) = compressor.filter(|_| may_compress(message)) else {
        return outcome;
    };
    let squeeze = |bytes: Vec<u8>| match wire::compression::compress(&bytes, compressor) {
        Ok(squeezed) => {
            let (taken, given) = (bytes.len() as u64, squeezed.len() as u64);
            engine.stats().compressed(compressor, taken, given);
            squeezed
        }
        Err(_) => bytes,
    };
    match outcome {
        Outcome::Reply(bytes) => Outcome::Reply(squeeze(bytes)),
        Outcome::Stream(bytes, mut next) => {
            next.compressor = Some(compressor);
            Outcome::Stream(squeeze(bytes), next)
        }
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use super::parse;
    use wire::Compressor;

    #[test]
    fn the_flag_reads_as_mongod_reads_it() {
        assert_eq!(
            parse("snappy,zstd,zlib"),
            Ok(vec![Compressor::Snappy, Compressor::Zstd, Compressor::Zlib])
        );
        assert_eq!(parse("disabled"), Ok(Vec::new()));
        assert_eq!(parse("zlib, zlib"), Ok(vec![Compressor::Zlib]));
        assert!(parse("lz4").is_err());
    }
}
