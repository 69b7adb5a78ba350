//! Command-line flags (clap) and what they turn into: the engine's startup options.

use crate::host::SystemHost;
use bson::doc;
use clap::{Parser, ValueEnum};
use engine::store::{Compressor, StoreOptions};
use engine::{Engine, EngineOptions, StartupOptions};
use std::net::IpAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

/// How verbose the log is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, ValueEnum)]
#[repr(u8)]
pub enum LogLevel {
    /// Only failures.
    Error = 0,
    /// Failures and refused clients.
    Warn = 1,
    /// Start, stop, connections (the default).
    Info = 2,
    /// Every command name and protocol detail.
    Debug = 3,
}

/// Where commands run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Dispatch {
    /// Quick commands (the engine says which) on the network thread, the rest on workers.
    Auto,
    /// Every command on a worker thread (for measuring the hand-off cost).
    Pool,
}

/// How new collections store their documents (`--compressor`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum CompressorArg {
    /// Raw BSON.
    None,
    /// LZ4 blocks where they save at least an eighth.
    Lz4,
}

/// TLS on the port (`--tlsMode`, mongod's meanings for a server's incoming connections).
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum TlsMode {
    /// Plain connections only (the default).
    #[value(name = "disabled")]
    Disabled,
    /// TLS and plain clients on the same port (the first byte tells them apart).
    #[value(name = "allowTLS")]
    AllowTls,
    /// As `allowTLS`: mongod differs only for the connections it opens itself.
    #[value(name = "preferTLS")]
    PreferTls,
    /// TLS clients only; a plain client is disconnected.
    #[value(name = "requireTLS")]
    RequireTls,
}

impl TlsMode {
    /// The flag's spelling (what getCmdLineOpts reports).
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            TlsMode::Disabled => "disabled",
            TlsMode::AllowTls => "allowTLS",
            TlsMode::PreferTls => "preferTLS",
            TlsMode::RequireTls => "requireTLS",
        }
    }
}

/// A protocol `--tlsDisabledProtocols` names. TLS 1.0 and 1.1 are never offered (rustls
/// does not implement them); naming them is accepted, as mongod accepts it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum TlsProtocol {
    /// TLS 1.0 (never offered).
    #[value(name = "TLS1_0")]
    Tls1_0,
    /// TLS 1.1 (never offered).
    #[value(name = "TLS1_1")]
    Tls1_1,
    /// TLS 1.2.
    #[value(name = "TLS1_2")]
    Tls1_2,
    /// TLS 1.3.
    #[value(name = "TLS1_3")]
    Tls1_3,
}

/// The `multiforadb` command line.
#[derive(Debug, Clone, Parser)]
#[command(
    name = "multiforadb",
    version,
    about = "A MongoDB-compatible database server"
)]
pub struct Config {
    /// TCP port to listen on (0 picks a free one and logs it).
    #[arg(long, default_value_t = 27017)]
    pub port: u16,
    /// Addresses to listen on, comma-separated. Only loopback unless asked.
    #[arg(long, value_delimiter = ',', default_value = "127.0.0.1")]
    pub bind: Vec<IpAddr>,
    /// The database file (created when missing; its write-ahead log sits beside it while
    /// the server runs).
    #[arg(long, default_value = "multiforadb.mfdb")]
    pub db: PathBuf,
    /// Seconds between the TTL monitor's passes over the TTL indexes (mongod's
    /// `ttlMonitorSleepSecs`; 0 disables the monitor, so nothing expires).
    #[arg(long, default_value_t = 60)]
    pub ttl_sweep_secs: u64,
    /// Most client connections open at once; further ones are accepted and closed
    /// (also `--maxConns`, mongod's name).
    #[arg(long, alias = "maxConns", default_value_t = 1000)]
    pub max_connections: usize,
    /// Log verbosity.
    #[arg(long, value_enum, default_value_t = LogLevel::Info)]
    pub log_level: LogLevel,
    /// How log lines are written on stderr: `json`, one object a line in mongod's shape
    /// (what `getLog` returns), or `plain` text.
    #[arg(long = "logFormat", value_enum, default_value_t = crate::log::LogFormat::Json)]
    pub log_format: crate::log::LogFormat,
    /// Worker threads for commands (0: sixteen per CPU, between 16 and 128; a durable write
    /// holds its worker until its fdatasync returns).
    #[arg(long, default_value_t = 0)]
    pub workers: usize,
    /// Close a connection whose message is still incomplete this many seconds after its
    /// first byte arrived (0: never). Guards against clients that trickle bytes.
    #[arg(long, default_value_t = 30)]
    pub frame_timeout_secs: u64,
    /// Close a connection that sends nothing for this many seconds (0: never, as mongod).
    #[arg(long, default_value_t = 0)]
    pub idle_timeout_secs: u64,
    /// With `--auth`: close a connection that has not authenticated and sends nothing for
    /// this many seconds (0: never). Drivers' monitoring connections never authenticate
    /// but send `hello` at least every `heartbeatFrequencyMS` (10 s by default) or wait in
    /// a streamed `hello`, so they are not closed unless that interval exceeds this.
    #[arg(long, default_value_t = 60)]
    pub unauthenticated_idle_secs: u64,
    /// How collections created without a `storageEngine` option store their documents
    /// (a collection keeps the compressor it was created with). Default none: scans of
    /// LZ4 records decode whole documents (PLAN D53).
    #[arg(long, value_enum, default_value_t = CompressorArg::None)]
    pub compressor: CompressorArg,
    /// Require authentication (SCRAM-SHA-256 / SCRAM-SHA-1) and check every command's
    /// privileges, as mongod's `--auth` (`security.authorization: enabled`). While no
    /// user exists, a loopback client may create the first one on `admin`.
    #[arg(long, default_value_t = false)]
    pub auth: bool,
    /// TLS on the port: disabled, allowTLS or preferTLS (TLS and plain clients both
    /// served), requireTLS (TLS only). Needs `--tlsCertificateKeyFile`. SIGHUP reloads the
    /// certificate files for new connections.
    #[arg(long = "tlsMode", value_enum, default_value_t = TlsMode::Disabled)]
    pub tls_mode: TlsMode,
    /// PEM file with the server's certificate chain (leaf first) and its private key.
    #[arg(long = "tlsCertificateKeyFile")]
    pub tls_certificate_key_file: Option<PathBuf>,
    /// PEM file of the CA certificates client certificates must chain to; when given,
    /// clients must present one (unless `--tlsAllowConnectionsWithoutCertificates`).
    #[arg(long = "tlsCAFile")]
    pub tls_ca_file: Option<PathBuf>,
    /// With `--tlsCAFile`: clients without a certificate are served too (a certificate
    /// that is presented must still verify).
    #[arg(
        long = "tlsAllowConnectionsWithoutCertificates",
        default_value_t = false
    )]
    pub tls_allow_connections_without_certificates: bool,
    /// Protocols not to offer, comma-separated (TLS1_0, TLS1_1, TLS1_2, TLS1_3).
    #[arg(long = "tlsDisabledProtocols", value_enum, value_delimiter = ',')]
    pub tls_disabled_protocols: Vec<TlsProtocol>,
    /// Compressors offered for OP_COMPRESSED messages, comma-separated (snappy, zstd,
    /// zlib, noop), or `disabled`: mongod's `--networkMessageCompressors`. A client uses
    /// one it also names in `hello`; its requests' replies are compressed the same way.
    #[arg(long = "networkMessageCompressors", default_value = "snappy,zstd,zlib")]
    pub network_message_compressors: String,
    /// A server parameter set at startup, `NAME=VALUE` (mongod's `--setParameter`;
    /// repeatable). Only `enableTestCommands=1` (or `0`, `true`, `false`) is accepted:
    /// it enables `configureFailPoint`, for the drivers' specification tests.
    #[arg(long = "setParameter", value_name = "NAME=VALUE", value_parser = parse_set_parameter)]
    pub set_parameter: Vec<(String, String)>,
    /// Runs as the primary of a one-member replica set named NAME (mongod's `--replSet`):
    /// initiated on the file's first such start, so retryable writes, sessions and the
    /// oplog work, and drivers that need a replica set connect. Without it the server is
    /// a standalone, as mongod is.
    #[arg(long = "replSet", value_name = "NAME")]
    pub repl_set: Option<String>,
    /// The address (`host` or `host:port`) the replica set advertises to clients in
    /// hello's `hosts`, `primary` and `me`; drivers reconnect to it. Default: the bind
    /// address and port, or this machine's host name when bound to all addresses.
    #[arg(
        long = "replSetHost",
        value_name = "HOST[:PORT]",
        requires = "repl_set"
    )]
    pub repl_set_host: Option<String>,
    /// The oplog's size in megabytes when `--replSet` creates it (default 990, mongod's
    /// lower bound; an existing oplog keeps its size).
    #[arg(long = "oplogSizeMB", value_name = "MB", requires = "repl_set",
          value_parser = clap::value_parser!(u64).range(1..=1_073_741_824))]
    pub oplog_size_mb: Option<u64>,
    /// Where commands run (for benchmarking the worker hand-off).
    #[arg(long, value_enum, default_value_t = Dispatch::Auto, hide = true)]
    pub dispatch: Dispatch,
    /// Milliseconds between background checkpoints (0: none by time); default 60 s.
    /// Hidden: for the crash matrix, which needs checkpoints during short runs.
    #[arg(long, hide = true)]
    pub checkpoint_interval_ms: Option<u64>,
    /// Log bytes after which a checkpoint runs; default 64 MiB. Hidden, as above.
    #[arg(long, hide = true)]
    pub checkpoint_log_bytes: Option<u64>,
}

impl Config {
    /// The options in mongod's nested getCmdLineOpts shape.
    #[must_use]
    pub fn parsed_document(&self) -> bson::Document {
        let bind: Vec<String> = self.bind.iter().map(ToString::to_string).collect();
        let verbosity = match self.log_level {
            LogLevel::Debug => 1,
            _ => 0,
        };
        let mut parsed = doc! {
            "net": {
                "bindIp": bind.join(","),
                "port": i32::from(self.port),
                "maxIncomingConnections": i64::try_from(self.max_connections).unwrap_or(i64::MAX),
            },
            "storage": { "dbPath": self.db.display().to_string() },
            "systemLog": { "verbosity": verbosity },
            "multiforadb": {
                "ttlSweepSecs": i64::try_from(self.ttl_sweep_secs).unwrap_or(i64::MAX),
                "frameTimeoutSecs": i64::try_from(self.frame_timeout_secs).unwrap_or(i64::MAX),
                "idleTimeoutSecs": i64::try_from(self.idle_timeout_secs).unwrap_or(i64::MAX),
                "unauthenticatedIdleSecs":
                    i64::try_from(self.unauthenticated_idle_secs).unwrap_or(i64::MAX),
                "compressor": match self.compressor {
                    CompressorArg::None => "none",
                    CompressorArg::Lz4 => "lz4",
                },
                "logFormat": self.log_format.name(),
            },
        };
        if !self.set_parameter.is_empty() {
            // As mongod reports them: the values as given, strings.
            let mut parameters = bson::Document::new();
            for (name, value) in &self.set_parameter {
                parameters.insert(name.clone(), value.clone());
            }
            parsed.insert("setParameter", parameters);
        }
        if let Some(name) = &self.repl_set {
            let mut replication = doc! { "replSet": name.clone() };
            if let Some(mb) = self.oplog_size_mb {
                replication.insert("oplogSizeMB", i64::try_from(mb).unwrap_or(i64::MAX));
            }
            parsed.insert("replication", replication);
        }
        if self.auth {
            // As mongod reports `--auth`.
            parsed.insert("security", doc! { "authorization": "enabled" });
        }
        if self.tls_mode != TlsMode::Disabled
            && let Ok(net) = parsed.get_document_mut("net")
        {
            net.insert("tls", self.tls_document());
        }
        parsed
    }

    /// `net.tls` as mongod reports it in getCmdLineOpts.
    fn tls_document(&self) -> bson::Document {
        let mut tls = doc! { "mode": self.tls_mode.name() };
        if let Some(path) = &self.tls_certificate_key_file {
            tls.insert("certificateKeyFile", path.display().to_string());
        }
        if let Some(path) = &self.tls_ca_file {
            tls.insert("CAFile", path.display().to_string());
        }
        if self.tls_allow_connections_without_certificates {
            tls.insert("allowConnectionsWithoutCertificates", true);
        }
        if !self.tls_disabled_protocols.is_empty() {
            let names: Vec<String> = self
                .tls_disabled_protocols
                .iter()
                .filter_map(|protocol| protocol.to_possible_value())
                .map(|value| value.get_name().to_owned())
                .collect();
            tls.insert("disabledProtocols", names.join(","));
        }
        tls
    }

    fn engine_options(&self, argv: Vec<String>) -> EngineOptions {
        EngineOptions {
            host: Arc::new(SystemHost::new(&self.db)),
            startup: StartupOptions {
                argv,
                parsed: self.parsed_document(),
            },
            connections_max: u64::try_from(self.max_connections).unwrap_or(u64::MAX),
            ttl_interval: (self.ttl_sweep_secs > 0)
                .then(|| Duration::from_secs(self.ttl_sweep_secs)),
        }
    }

    /// The engine for this configuration, on the database file `--db`; `argv` is
    /// reported by getCmdLineOpts.
    pub fn engine(&self, argv: Vec<String>) -> Result<Engine, engine::Error> {
        let engine = Engine::open_with(&self.db, self.engine_options(argv), self.store_options())?;
        engine.set_auth_required(self.auth);
        Ok(engine)
    }

    /// The replica set to start once the server knows the port it listens on
    /// (`addresses`), if `--replSet` names one.
    #[must_use]
    pub fn replica_set(&self, addresses: &[std::net::SocketAddr]) -> Option<engine::repl::Options> {
        let name = self.repl_set.as_ref()?;
        let port = addresses
            .first()
            .map_or(self.port, std::net::SocketAddr::port);
        let host = match &self.repl_set_host {
            Some(host) if has_port(host) => host.clone(),
            Some(host) => format!("{host}:{port}"),
            None => match addresses.first() {
                Some(address) if address.ip().is_unspecified() => {
                    format!("{}:{port}", host_name())
                }
                Some(address) => address.to_string(),
                None => format!("127.0.0.1:{port}"),
            },
        };
        let mut options = engine::repl::Options::new(name, &host);
        if let Some(mb) = self.oplog_size_mb {
            options.oplog_size_bytes = mb.saturating_mul(1024 * 1024);
        }
        Some(options)
    }

    /// The storage options: the defaults, with the hidden checkpoint flags applied.
    #[must_use]
    pub fn store_options(&self) -> StoreOptions {
        let mut options = StoreOptions::default();
        if let Some(ms) = self.checkpoint_interval_ms {
            options.checkpoint_interval = (ms > 0).then(|| Duration::from_millis(ms));
        }
        if let Some(bytes) = self.checkpoint_log_bytes {
            options.checkpoint_log_bytes = bytes;
        }
        options.compressor = match self.compressor {
            CompressorArg::None => Compressor::None,
            CompressorArg::Lz4 => Compressor::Lz4,
        };
        options
    }

    /// The engine for this configuration on an in-memory database (benchmarks).
    #[must_use]
    pub fn memory_engine(&self, argv: Vec<String>) -> Engine {
        let engine = Engine::new(self.engine_options(argv));
        engine.set_auth_required(self.auth);
        engine
    }

    /// A configuration with every default, for in-process use (benchmarks).
    #[must_use]
    pub fn defaults() -> Config {
        Config::parse_from(["multiforadb"])
    }
}

/// Whether `host` ends in a port (`name:27017`, `[::1]:27017`; a bare IPv6 address
/// has none).
fn has_port(host: &str) -> bool {
    match host.rsplit_once(':') {
        Some((before, port)) => {
            port.parse::<u16>().is_ok() && (!before.contains(':') || before.ends_with(']'))
        }
        None => false,
    }
}

/// This machine's host name (what mongod advertises when bound to every address).
fn host_name() -> String {
    ["/proc/sys/kernel/hostname", "/etc/hostname"]
        .iter()
        .find_map(|path| {
            let name = std::fs::read_to_string(path).ok()?;
            let name = name.trim();
            (!name.is_empty()).then(|| name.to_owned())
        })
        .unwrap_or_else(|| "localhost".to_owned())
}

/// `--setParameter NAME=VALUE`: the startup parameters this server knows.
fn parse_set_parameter(text: &str) -> Result<(String, String), String> {
    let Some((name, value)) = text.split_once('=') else {
        return Err(format!("expected NAME=VALUE, got '{text}'"));
    };
    match name {
        "enableTestCommands" if matches!(value, "0" | "1" | "true" | "false") => {
            Ok((name.to_owned(), value.to_owned()))
        }
        "enableTestCommands" => Err(format!(
            "enableTestCommands takes 0, 1, true or false, not '{value}'"
        )),
        _ => Err(format!(
            "unknown startup parameter '{name}' (only enableTestCommands)"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::Config;
    use clap::Parser;

    #[test]
    fn defaults_match_mongod_conventions() {
        let config = Config::parse_from(["multiforadb"]);
        assert_eq!(config.port, 27017);
        assert_eq!(config.bind, vec![std::net::IpAddr::from([127, 0, 0, 1])]);
        assert_eq!(config.db, std::path::PathBuf::from("multiforadb.mfdb"));
    }

    #[test]
    fn flags_parse() {
        let config = Config::parse_from([
            "multiforadb",
            "--port",
            "0",
            "--bind",
            "127.0.0.1,::1",
            "--db",
            "/tmp/x.mfdb",
            "--ttl-sweep-secs",
            "1",
            "--max-connections",
            "5",
            "--log-level",
            "debug",
        ]);
        assert_eq!(config.bind.len(), 2);
        assert_eq!(config.max_connections, 5);
        let parsed = config.parsed_document();
        let storage = parsed.get_document("storage").expect("storage");
        assert_eq!(storage.get_str("dbPath").ok(), Some("/tmp/x.mfdb"));
    }

    #[test]
    fn ttl_sweep_secs_reaches_the_engine_options() {
        let interval = |args: &[&str]| {
            let argv = std::iter::once("multiforadb").chain(args.iter().copied());
            Config::parse_from(argv)
                .engine_options(Vec::new())
                .ttl_interval
        };
        assert_eq!(interval(&[]), Some(std::time::Duration::from_secs(60)));
        assert_eq!(
            interval(&["--ttl-sweep-secs", "1"]),
            Some(std::time::Duration::from_secs(1))
        );
        assert_eq!(interval(&["--ttl-sweep-secs", "0"]), None);
    }

    #[test]
    fn checkpoint_flags_reach_the_store_options() {
        let defaults = Config::parse_from(["multiforadb"]).store_options();
        assert_eq!(
            defaults.checkpoint_interval,
            Some(std::time::Duration::from_secs(60))
        );
        let config = Config::parse_from([
            "multiforadb",
            "--checkpoint-interval-ms",
            "50",
            "--checkpoint-log-bytes",
            "4096",
        ]);
        let options = config.store_options();
        assert_eq!(
            options.checkpoint_interval,
            Some(std::time::Duration::from_millis(50))
        );
        assert_eq!(options.checkpoint_log_bytes, 4096);
        let off = Config::parse_from(["multiforadb", "--checkpoint-interval-ms", "0"]);
        assert_eq!(off.store_options().checkpoint_interval, None);
    }
}
