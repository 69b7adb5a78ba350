//! The outside world as the engine sees it: clock, host and process facts, passed in.

/// Facts about the machine, reported by hostInfo and serverStatus.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct HostFacts {
    /// The host name.
    pub hostname: String,
    /// The operating system family, e.g. `Linux`.
    pub os_type: String,
    /// The distribution or OS name, e.g. `Debian GNU/Linux 12`.
    pub os_name: String,
    /// The kernel version.
    pub os_version: String,
    /// The CPU architecture, e.g. `x86_64`.
    pub cpu_arch: String,
    /// Logical CPUs available.
    pub cores: u32,
    /// Physical memory in MiB.
    pub memory_mb: u64,
    /// This process's id.
    pub process_id: u32,
    /// hostInfo `extra` (Linux): `/proc/version`.
    pub version_string: String,
    /// hostInfo `extra`: the CPU model name.
    pub cpu_string: String,
    /// hostInfo `extra`: the CPU clock, as `/proc/cpuinfo` gives it (`"2400.000"`).
    pub cpu_frequency_mhz: String,
    /// hostInfo `extra`: the CPU's feature flags, space-separated.
    pub cpu_features: String,
    /// hostInfo `extra`: the process's soft limit of open files (0: unknown).
    pub max_open_files: u64,
}

/// The process's memory use, reported by serverStatus.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct MemoryFacts {
    /// Resident set size in MiB.
    pub resident_mb: u64,
    /// Virtual size in MiB.
    pub virtual_mb: u64,
}

/// The file system holding the database file, reported by dbStats (`fsUsedSize`,
/// `fsTotalSize`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct FileSystemFacts {
    /// Bytes in use (total less free).
    pub used_bytes: u64,
    /// The file system's size in bytes.
    pub total_bytes: u64,
}

/// What the engine asks of its environment. The server implements it over the OS;
/// tests use [`FixedHost`].
pub trait Host: Send + Sync {
    /// Milliseconds since the Unix epoch.
    fn now_millis(&self) -> i64;
    /// Milliseconds since the process (or engine) started.
    fn uptime_millis(&self) -> u64;
    /// Current memory use.
    fn memory(&self) -> MemoryFacts;
    /// Static machine facts.
    fn facts(&self) -> &HostFacts;
    /// The database's file system now; `None` where there is none (in memory) or it is
    /// unknown.
    fn file_system(&self) -> Option<FileSystemFacts> {
        None
    }
    /// Fills `buf` with cryptographically secure random bytes (SCRAM nonces and salts).
    /// The default asks the operating system; a test host may answer deterministically.
    fn fill_random(&self, buf: &mut [u8]) -> Result<(), String> {
        getrandom::fill(buf).map_err(|error| error.to_string())
    }
}

/// A host whose clock and facts never change: for tests and embedding.
#[derive(Debug, Clone, Default)]
pub struct FixedHost {
    /// The time `now_millis` returns.
    pub now_millis: i64,
    /// The uptime `uptime_millis` returns.
    pub uptime_millis: u64,
    /// The memory `memory` returns.
    pub memory: MemoryFacts,
    /// The facts `facts` returns.
    pub facts: HostFacts,
}

impl Host for FixedHost {
    fn now_millis(&self) -> i64 {
        self.now_millis
    }
    fn uptime_millis(&self) -> u64 {
        self.uptime_millis
    }
    fn memory(&self) -> MemoryFacts {
        self.memory
    }
    fn facts(&self) -> &HostFacts {
        &self.facts
    }
}
