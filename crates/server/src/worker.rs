//! Running one decoded request, and the worker pool that runs the ones that may be slow.
//!
//! [`execute`] is the single path from a decoded message to reply bytes; the event
//! loop calls it inline for quick commands and the workers call it for the rest,
//! so both give byte-identical answers.

use crate::log::debug_enabled;
use crossbeam::channel::{Receiver, Sender};
use engine::{ConnectionContext, Engine};
use std::sync::Arc;
use std::sync::atomic::{AtomicI32, Ordering};
use wire::{Header, Message, OpReply};

/// What to do after a request ran.
#[derive(Debug)]
pub(crate) enum Outcome {
    /// Send these bytes.
    Reply(Vec<u8>),
    /// Send these bytes (a reply with `moreToCome`), then run `next` as the client's next
    /// request: an exhaust stream goes on (see `engine::streaming`).
    Stream(Vec<u8>, Box<Continuation>),
    /// Send nothing (the client set moreToCome).
    Silent,
    /// Send nothing and close the connection, for this reason: the command's outcome is
    /// unknown (the log failed mid-commit), and a closed connection is how drivers learn
    /// that; or a fail point asked for it (test commands).
    Close(String),
}

/// A request handed to a worker.
pub(crate) struct Job {
    pub(crate) token: usize,
    pub(crate) connection_id: i64,
    pub(crate) header: Header,
    pub(crate) message: Message,
    pub(crate) ctx: ConnectionContext,
    /// The compressor the request came with (its reply goes out the same way).
    pub(crate) compressor: Option<wire::Compressor>,
}

/// The request an exhaust stream runs next on its connection, as if the client sent it.
#[derive(Debug)]
pub(crate) struct Continuation {
    /// Its `requestId` is the id of the reply just sent, which the next reply answers;
    /// its length is 0 (no bytes came in for it).
    pub(crate) header: Header,
    pub(crate) message: Message,
    /// The compressor of the request that started the stream.
    pub(crate) compressor: Option<wire::Compressor>,
}

impl Continuation {
    /// The command body it would run.
    pub(crate) fn body(&self) -> Option<&bson::RawDocument> {
        match &self.message {
            Message::Msg(msg) => Some(&msg.body),
            _ => None,
        }
    }
}

/// A worker's answer, routed back to the connection by token and id.
pub(crate) struct Done {
    pub(crate) token: usize,
    pub(crate) connection_id: i64,
    pub(crate) outcome: Outcome,
}

/// Ids for messages the server originates; replies carry the request's id in `responseTo`.
static REQUEST_ID: AtomicI32 = AtomicI32::new(1);

fn next_request_id() -> i32 {
    REQUEST_ID.fetch_add(1, Ordering::Relaxed) & i32::MAX
}

fn msg_reply(engine: &Engine, header: &Header, body: &bson::RawDocument) -> Outcome {
    // The encoding reserves the header's bytes on top.
    let mut out = wire::buffers::take(body.as_bytes().len());
    match wire::encode_reply_into(&mut out, next_request_id(), header.request_id, body) {
        Ok(()) => Outcome::Reply(out),
        Err(error) => error_reply(engine, header, &error, out),
    }
}

/// A reply with `moreToCome` and the request that continues the stream, or (when the reply
/// cannot be encoded) the error reply that ends it.
fn stream_reply(
    engine: &Engine,
    header: &Header,
    flags: wire::MsgFlags,
    body: &bson::RawDocument,
    next: bson::RawDocumentBuf,
) -> Outcome {
    let mut out = wire::buffers::take(body.as_bytes().len());
    let id = next_request_id();
    let more = wire::MsgFlags(wire::MsgFlags::MORE_TO_COME);
    match wire::encode_reply_flagged_into(&mut out, id, header.request_id, more, body) {
        Ok(()) => {
            let message = wire::OpMsg {
                flags: wire::MsgFlags(flags.0 & wire::MsgFlags::EXHAUST_ALLOWED),
                body: next,
                sequences: Vec::new(),
            };
            let continuation = Continuation {
                header: Header {
                    message_length: 0,
                    request_id: id,
                    response_to: 0,
                    op_code: wire::OpCode::Msg.code(),
                },
                message: Message::Msg(message),
                compressor: None,
            };
            Outcome::Stream(out, Box::new(continuation))
        }
        Err(error) => {
            engine.abandon_stream(&next);
            error_reply(engine, header, &error, out)
        }
    }
}

/// A reply over the message limit cannot be sent; say so instead.
fn error_reply(engine: &Engine, header: &Header, error: &wire::Error, mut out: Vec<u8>) -> Outcome {
    let fallback = engine.protocol_error_reply(error);
    out.clear();
    let id = next_request_id();
    let encoded = wire::encode_reply_into(&mut out, id, header.request_id, &fallback);
    assert!(encoded.is_ok(), "an error reply always fits: {encoded:?}");
    Outcome::Reply(out)
}

fn reply_reply(engine: &Engine, header: &Header, body: bson::RawDocumentBuf) -> Outcome {
    let reply = OpReply::single(body);
    match reply.encode(next_request_id(), header.request_id) {
        Ok(bytes) => Outcome::Reply(bytes),
        Err(error) => msg_reply(engine, header, &engine.protocol_error_reply(&error)),
    }
}

/// Runs one decoded message against the engine and encodes the answer (compressed as the
/// request was, `compressor`), counting both frames in serverStatus `network`.
pub(crate) fn execute(
    engine: &Engine,
    header: &Header,
    message: &Message,
    ctx: &ConnectionContext,
    compressor: Option<wire::Compressor>,
) -> Outcome {
    let outcome = answer(engine, header, message, ctx);
    let bytes_out = reply_len(&outcome);
    let outcome = crate::compression::compress_reply(engine, outcome, message, compressor);
    count(engine, header, bytes_out, &outcome);
    outcome
}

/// Counts the request and its reply in serverStatus `network`: `bytes_out` before
/// compression, `outcome` as sent.
fn count(engine: &Engine, header: &Header, bytes_out: u64, outcome: &Outcome) {
    let bytes_in = u64::try_from(header.message_length).unwrap_or(0);
    engine
        .stats()
        .network_request(bytes_in, bytes_out, reply_len(outcome));
}

/// The bytes of the reply `outcome` sends (0: none).
fn reply_len(outcome: &Outcome) -> u64 {
    match outcome {
        Outcome::Reply(bytes) | Outcome::Stream(bytes, _) => bytes.len() as u64,
        Outcome::Silent | Outcome::Close(_) => 0,
    }
}

/// mongod's "client metadata" line (NETWORK 51800) for a handshake that carries the
/// driver's `client` document (drivers send it once, in a connection's first `hello`, an
/// OP_MSG or, from the Node.js driver and mongosh, a legacy OP_QUERY, maybe wrapped in
/// `$query`).
fn log_client_metadata(command: &bson::RawDocument, ctx: &ConnectionContext) {
    if !crate::log::enabled(crate::config::LogLevel::Info) {
        return;
    }
    let command = command.get_document("$query").unwrap_or(command);
    let Some(Ok(first)) = command.iter_elements().next() else {
        return;
    };
    if !matches!(first.key().as_str(), "hello" | "isMaster" | "ismaster") {
        return;
    }
    let Ok(client) = command.get_document("client") else {
        return;
    };
    let Ok(client) = bson::Document::try_from(client) else {
        return;
    };
    let name = format!("conn{}", ctx.connection_id);
    let attr = bson::doc! { "remote": &ctx.client_address, "client": &name, "doc": client };
    let level = crate::config::LogLevel::Info;
    crate::log::event(
        level,
        "NETWORK",
        51_800,
        &name,
        "client metadata",
        Some(&attr),
    );
}

fn answer(engine: &Engine, header: &Header, message: &Message, ctx: &ConnectionContext) -> Outcome {
    match message {
        Message::Msg(msg) => {
            let reply = match msg.command_document() {
                Ok(command) => {
                    if debug_enabled() {
                        let name = command.iter_elements().next().and_then(Result::ok);
                        let name = name
                            .map(|e| e.key().as_str().to_owned())
                            .unwrap_or_default();
                        log_debug!("conn{} command {name}", ctx.connection_id);
                    }
                    log_client_metadata(&command, ctx);
                    engine.run_message(&command, ctx)
                }
                Err(error) => engine.protocol_error_reply(&error),
            };
            if let Some(reason) = Engine::closes_connection(&reply) {
                // A fail point's close is asked for (test commands) and only the
                // connection's end is logged, with the reason; an unknown outcome is the
                // server failing, an error of its own.
                if Engine::is_outcome_unknown(&reply) {
                    log_error!("conn{} closed without a reply: {reason}", ctx.connection_id);
                }
                Outcome::Close(format!("closed without a reply: {reason}"))
            } else if msg.flags.more_to_come() {
                Outcome::Silent
            } else if let Some(next) = msg
                .flags
                .exhaust_allowed()
                .then(|| msg.command_document().ok())
                .flatten()
                .and_then(|command| engine.next_in_stream(&command, &reply))
            {
                stream_reply(engine, header, msg.flags, &reply, next)
            } else {
                let outcome = msg_reply(engine, header, &reply);
                // Copied into the message: the cursor document's buffer serves again.
                wire::buffers::give(reply.into_bytes());
                outcome
            }
        }
        Message::Query(query) => {
            log_debug!(
                "conn{} legacy OP_QUERY on {}",
                ctx.connection_id,
                query.full_collection_name
            );
            log_client_metadata(&query.query, ctx);
            reply_reply(engine, header, engine.run_legacy_query(query, ctx))
        }
        _ => {
            let error = wire::Error::UnsupportedOpcode {
                opcode: header.op_code,
            };
            msg_reply(engine, header, &engine.protocol_error_reply(&error))
        }
    }
}

/// The answer for a frame whose header was readable but whose contents were not.
pub(crate) fn refuse(engine: &Engine, header: &Header, error: &wire::Error) -> Outcome {
    let body = engine.protocol_error_reply(error);
    let outcome = if header.op_code == wire::OpCode::Query.code() {
        reply_reply(engine, header, body)
    } else {
        msg_reply(engine, header, &body)
    };
    count(engine, header, reply_len(&outcome), &outcome);
    outcome
}

/// Starts `count` workers that run jobs from `jobs` and send results to `done`,
/// waking the event loop after each.
pub(crate) fn spawn_pool(
    count: usize,
    engine: &Arc<Engine>,
    jobs: &Receiver<Job>,
    done: &Sender<Done>,
    waker: &Arc<mio::Waker>,
) -> std::io::Result<Vec<std::thread::JoinHandle<()>>> {
    (0..count)
        .map(|index| {
            let engine = Arc::clone(engine);
            let jobs = jobs.clone();
            let done = done.clone();
            let waker = Arc::clone(waker);
            std::thread::Builder::new()
                .name(format!("worker-{index}"))
                .spawn(move || {
                    for job in jobs {
                        let outcome =
                            execute(&engine, &job.header, &job.message, &job.ctx, job.compressor);
                        let result = Done {
                            token: job.token,
                            connection_id: job.connection_id,
                            outcome,
                        };
                        if done.send(result).is_err() {
                            break;
                        }
                        if let Err(error) = waker.wake() {
                            log_error!("worker cannot wake the event loop: {error}");
                        }
                    }
                })
        })
        .collect()
}
