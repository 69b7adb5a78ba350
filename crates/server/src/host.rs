//! The engine's view of this machine and process, read from the OS (Linux `/proc` when present).

use engine::{FileSystemFacts, Host, HostFacts, MemoryFacts};
use std::time::{Instant, SystemTime, UNIX_EPOCH};

/// How long a reading of the process's memory (`/proc/self/statm`) is reused. mongod's
/// own `mem` figures are sampled too; reading the file (an open, a read and a close) was
/// the largest single cost of a serverStatus.
const MEMORY_SAMPLE_MS: u128 = 1000;

/// The real clock and machine.
pub(crate) struct SystemHost {
    started: Instant,
    facts: HostFacts,
    /// The last memory reading and when it was taken (`None` before the first).
    memory: std::sync::Mutex<Option<(Instant, MemoryFacts)>>,
    /// The database file (its file system is dbStats' `fsUsedSize`/`fsTotalSize`).
    db: std::path::PathBuf,
}

impl SystemHost {
    pub(crate) fn new(db: &std::path::Path) -> SystemHost {
        SystemHost {
            started: Instant::now(),
            facts: read_facts(),
            memory: std::sync::Mutex::new(None),
            db: db.to_path_buf(),
        }
    }
}

fn read_trimmed(path: &str) -> Option<String> {
    std::fs::read_to_string(path)
        .ok()
        .map(|text| text.trim().to_owned())
}

fn read_facts() -> HostFacts {
    let os_name = std::fs::read_to_string("/etc/os-release")
        .ok()
        .and_then(|text| {
            text.lines()
                .find_map(|line| line.strip_prefix("PRETTY_NAME="))
                .map(|name| name.trim_matches('"').to_owned())
        })
        .unwrap_or_else(|| std::env::consts::OS.to_owned());
    let memory_mb = std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|text| {
            let line = text.lines().find(|line| line.starts_with("MemTotal:"))?;
            line.split_whitespace().nth(1)?.parse::<u64>().ok()
        })
        .map_or(0, |kib| kib / 1024);
    HostFacts {
        hostname: read_trimmed("/proc/sys/kernel/hostname").unwrap_or_else(|| "localhost".into()),
        os_type: if cfg!(target_os = "linux") {
            "Linux".into()
        } else {
            std::env::consts::OS.into()
        },
        os_name,
        os_version: read_trimmed("/proc/sys/kernel/osrelease").unwrap_or_default(),
        cpu_arch: std::env::consts::ARCH.into(),
        cores: std::thread::available_parallelism()
            .map_or(1, |n| u32::try_from(n.get()).unwrap_or(1)),
        memory_mb,
        process_id: std::process::id(),
        version_string: read_trimmed("/proc/version").unwrap_or_default(),
        cpu_string: cpuinfo("model name"),
        cpu_frequency_mhz: cpuinfo("cpu MHz"),
        cpu_features: cpuinfo("flags"),
        max_open_files: std::fs::read_to_string("/proc/self/limits")
            .ok()
            .and_then(|text| {
                let line = text.lines().find(|l| l.starts_with("Max open files"))?;
                line.split_whitespace().nth(3)?.parse().ok()
            })
            .unwrap_or(0),
    }
}

/// The first `/proc/cpuinfo` value of `key` (empty where there is none).
fn cpuinfo(key: &str) -> String {
    std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|text| {
            text.lines().find_map(|line| {
                let (name, value) = line.split_once(':')?;
                (name.trim() == key).then(|| value.trim().to_owned())
            })
        })
        .unwrap_or_default()
}

/// The process's memory use now, from `/proc/self/statm` (zeros where there is none).
fn read_memory() -> MemoryFacts {
    // Sizes in pages; the first is virtual, the second resident.
    let pages: Vec<u64> = read_trimmed("/proc/self/statm")
        .map(|text| {
            text.split_whitespace()
                .filter_map(|n| n.parse().ok())
                .collect()
        })
        .unwrap_or_default();
    let page_kib = 4;
    let mb = |index: usize| pages.get(index).map_or(0, |p| p * page_kib / 1024);
    MemoryFacts {
        virtual_mb: mb(0),
        resident_mb: mb(1),
    }
}

impl Host for SystemHost {
    fn now_millis(&self) -> i64 {
        let now = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap_or_default();
        i64::try_from(now.as_millis()).unwrap_or(i64::MAX)
    }

    fn uptime_millis(&self) -> u64 {
        u64::try_from(self.started.elapsed().as_millis()).unwrap_or(u64::MAX)
    }

    fn memory(&self) -> MemoryFacts {
        // A poisoned lock only means a reader panicked; the reading in it is whole.
        let mut sample = self
            .memory
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some((taken, facts)) = *sample
            && taken.elapsed().as_millis() < MEMORY_SAMPLE_MS
        {
            return facts;
        }
        let facts = read_memory();
        *sample = Some((Instant::now(), facts));
        facts
    }

    fn file_system(&self) -> Option<FileSystemFacts> {
        // statvfs of the file's directory: the file may not exist yet.
        let dir = match self.db.parent() {
            Some(parent) if !parent.as_os_str().is_empty() => parent,
            _ => std::path::Path::new("."),
        };
        let stats = rustix::fs::statvfs(dir).ok()?;
        let block = stats.f_frsize;
        Some(FileSystemFacts {
            used_bytes: stats
                .f_blocks
                .saturating_sub(stats.f_bfree)
                .saturating_mul(block),
            total_bytes: stats.f_blocks.saturating_mul(block),
        })
    }

    fn facts(&self) -> &HostFacts {
        &self.facts
    }
}
