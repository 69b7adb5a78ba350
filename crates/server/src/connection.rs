//! One client connection's buffers and state, driven by the event loop.
//!
//! States: `Reading` (assembling a frame; bytes may trickle in) → a complete frame
//! is taken by [`Connection::next_frame`] → either answered inline or `in_flight`
//! at a worker (no further frame is taken, so replies keep request order) → the
//! reply is queued with [`Connection::queue`] and drained by
//! [`Connection::flush`] → back to `Reading`. A read of zero bytes marks the peer
//! closed; the connection is dropped once nothing is in flight.
//!
//! Two more states take no frame either: `parked` (an awaitable hello the event loop
//! runs when its wait is over) and a pending `continuation` (the next request of an
//! exhaust stream, run once the replies before it have drained below
//! `WRITE_QUEUE_MAX`, so a client that stops reading stops the stream).
//!
//! Bytes go through the connection's [`Transport`] (plain or TLS, `crate::tls`): the
//! buffers here always hold wire-protocol bytes.

use crate::limits::{READ_AHEAD_MAX, WRITE_QUEUE_MAX};
use crate::tls::{Received, Transport};
use engine::ConnectionContext;
use mio::net::TcpStream;
use std::time::Instant;

/// A client connection.
pub(crate) struct Connection {
    pub(crate) stream: TcpStream,
    pub(crate) transport: Transport,
    pub(crate) ctx: ConnectionContext,
    read_buffer: Vec<u8>,
    read_start: usize,
    write_buffer: Vec<u8>,
    write_start: usize,
    /// A request is at a worker; no other frame is taken until it answers.
    pub(crate) in_flight: bool,
    /// The peer closed its side (or a read failed).
    pub(crate) peer_closed: bool,
    /// Why the peer is gone, when it is worth more than "client disconnected".
    pub(crate) closed_reason: Option<String>,
    /// When the first byte of the frame being assembled (or of the TLS handshake) arrived.
    pub(crate) frame_started: Option<Instant>,
    /// When the client last sent anything.
    pub(crate) last_read: Instant,
    /// An awaitable hello held until the event loop's timer for it fires.
    pub(crate) parked: Option<(wire::Header, wire::Message)>,
    /// The next request of an exhaust stream.
    pub(crate) continuation: Option<Box<crate::worker::Continuation>>,
}

/// What [`Connection::next_frame`] found in the read buffer.
pub(crate) enum FrameState {
    /// A whole frame, removed from the buffer.
    Ready(Vec<u8>),
    /// Not enough bytes yet.
    Partial,
    /// The length prefix is impossible; the stream cannot be resynchronised.
    Bad(wire::Error),
}

impl Connection {
    pub(crate) fn new(
        stream: TcpStream,
        transport: Transport,
        ctx: ConnectionContext,
    ) -> Connection {
        Connection {
            stream,
            transport,
            ctx,
            read_buffer: Vec::new(),
            read_start: 0,
            write_buffer: Vec::new(),
            write_start: 0,
            in_flight: false,
            peer_closed: false,
            closed_reason: None,
            frame_started: None,
            last_read: Instant::now(),
            parked: None,
            continuation: None,
        }
    }

    /// Whether the server, not the client, has the next move: a request at a worker, a
    /// parked hello or a stream to continue. No frame is taken meanwhile.
    pub(crate) fn busy(&self) -> bool {
        self.in_flight || self.parked.is_some() || self.continuation.is_some()
    }

    fn buffered(&self) -> usize {
        self.read_buffer.len() - self.read_start
    }

    /// Bytes of replies not yet written.
    pub(crate) fn write_pending(&self) -> usize {
        self.write_buffer.len() - self.write_start
    }

    /// Whether reading more now would only grow buffers nobody is draining.
    fn read_allowed(&self) -> bool {
        if self.peer_closed || self.write_pending() >= WRITE_QUEUE_MAX {
            return false;
        }
        if self.busy() {
            return self.buffered() < READ_AHEAD_MAX;
        }
        let frame = self.pending_frame_length().unwrap_or(0);
        self.buffered() < frame.max(READ_AHEAD_MAX)
    }

    fn pending_frame_length(&self) -> Option<usize> {
        let rest = self.read_buffer.get(self.read_start..).unwrap_or_default();
        wire::frame_length(rest).ok().flatten()
    }

    /// Reads until the socket would block or reading is not allowed, through the event
    /// loop's `scratch` buffer (so no per-read zeroing or over-allocation happens here).
    /// Returns whether any bytes arrived. A TLS handshake completing here is counted in
    /// `stats` (serverStatus `transportSecurity`) and hands the verified client
    /// certificate's subject to the connection's authentication session (MONGODB-X509).
    pub(crate) fn fill(&mut self, scratch: &mut [u8], stats: &engine::Stats) -> bool {
        let mut got = false;
        while self.read_allowed() {
            let handshaking = self.transport.is_handshaking();
            let received = self.transport.receive(&mut self.stream, scratch);
            if handshaking
                && !self.transport.is_handshaking()
                && let Some((version, subject)) = self.transport.established()
            {
                // Once per connection: handshaking never starts again.
                stats.tls_connection(version);
                self.ctx.auth.set_certificate_subject(subject);
            }
            if handshaking && !self.transport.is_handshaking() && self.buffered() == 0 {
                // The handshake's clock stops; the first frame's starts with its first byte.
                self.frame_started = None;
            } else if self.transport.is_handshaking() && self.frame_started.is_none() {
                self.frame_started = Some(Instant::now());
            }
            match received {
                Received::Bytes(count) => {
                    if self.read_start > 0 && self.read_start * 2 >= self.read_buffer.len() {
                        self.read_buffer.drain(..self.read_start);
                        self.read_start = 0;
                    }
                    self.read_buffer
                        .extend_from_slice(scratch.get(..count).unwrap_or_default());
                    if self.frame_started.is_none() {
                        self.frame_started = Some(Instant::now());
                    }
                    self.last_read = Instant::now();
                    got = true;
                }
                Received::WouldBlock => break,
                Received::Closed(reason) => {
                    log_debug!("conn{} read side closed: {reason}", self.ctx.connection_id);
                    self.peer_closed = true;
                    if reason != "client disconnected" {
                        self.closed_reason = Some(reason);
                    }
                }
            }
        }
        got
    }

    /// Takes the next complete frame, if any (never while a request is in flight).
    pub(crate) fn next_frame(&mut self) -> FrameState {
        if self.busy() {
            return FrameState::Partial;
        }
        let rest = self.read_buffer.get(self.read_start..).unwrap_or_default();
        match wire::frame_length(rest) {
            Err(error) => FrameState::Bad(error),
            Ok(Some(length)) if length <= rest.len() => {
                let frame = rest.get(..length).unwrap_or_default().to_vec();
                self.read_start += length;
                if self.read_start == self.read_buffer.len() {
                    self.read_buffer.clear();
                    self.read_start = 0;
                }
                self.frame_started = (self.buffered() > 0).then(Instant::now);
                FrameState::Ready(frame)
            }
            Ok(_) => FrameState::Partial,
        }
    }

    /// Whether a frame is partly assembled.
    pub(crate) fn has_partial_frame(&self) -> bool {
        (self.buffered() > 0 || self.transport.is_handshaking()) && !self.busy()
    }

    /// Queues reply bytes: they become the write buffer when nothing else is waiting (a
    /// reply of a batch of large documents is not copied again on its way to the socket).
    pub(crate) fn queue(&mut self, bytes: Vec<u8>) {
        if self.write_start == self.write_buffer.len() {
            let written = std::mem::replace(&mut self.write_buffer, bytes);
            wire::buffers::give(written);
            self.write_start = 0;
            return;
        }
        self.write_buffer.extend_from_slice(&bytes);
        wire::buffers::give(bytes);
    }

    /// Writes queued bytes until done or the socket would block. `Err` means the
    /// connection is broken.
    pub(crate) fn flush(&mut self) -> std::io::Result<()> {
        while self.write_pending() > 0 || self.transport.wants_write() {
            let pending = self
                .write_buffer
                .get(self.write_start..)
                .unwrap_or_default();
            let count = self.transport.send(&mut self.stream, pending)?;
            if count == 0 {
                break;
            }
            self.write_start += count;
        }
        if self.write_pending() == 0 {
            // Written: a large buffer serves the next reply of any connection (an idle
            // connection keeps none).
            wire::buffers::give(std::mem::take(&mut self.write_buffer));
            self.write_start = 0;
        }
        Ok(())
    }

    /// Whether the connection has nothing left to do and can be dropped.
    pub(crate) fn finished(&self) -> bool {
        self.peer_closed
            && !self.in_flight
            && self.write_pending() == 0
            && !self.transport.wants_write()
    }
}
