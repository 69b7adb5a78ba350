//! Buffer sizes and timeouts of the network layer.

use std::time::Duration;

/// Bytes read from a socket per `read` call.
pub const READ_CHUNK: usize = 64 * 1024;

/// Bytes buffered beyond the frame being assembled; past this a connection is not read
/// until its pending work drains (back-pressure on pipelining clients).
pub const READ_AHEAD_MAX: usize = 256 * 1024;

/// Reply bytes queued for a client that is not reading; past this the connection stops
/// being read, so a client cannot make the server buffer without bound.
pub const WRITE_QUEUE_MAX: usize = 4 * 1024 * 1024;

/// The event loop's tick while any connection has a deadline to check.
pub const TICK: Duration = Duration::from_millis(250);

/// The longest an awaitable hello is held (its `maxAwaitTimeMS` is the client's; drivers
/// send their heartbeat frequency, 10 s by default).
pub const AWAIT_MAX: Duration = Duration::from_secs(24 * 60 * 60);

/// How long shutdown waits for commands already running before closing anyway.
pub const SHUTDOWN_GRACE: Duration = Duration::from_secs(5);

const _: () = assert!(READ_CHUNK <= READ_AHEAD_MAX);
