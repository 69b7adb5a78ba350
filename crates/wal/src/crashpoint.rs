//! Named crash points: places in the storage code where the crash matrix (`cargo xtask
//! crash`) makes the process die, to check that a restart loses nothing acknowledged.
//!
//! Off by default and free when off: without the cargo feature `crash-points`, [`hit`] is
//! an empty inline function. With it, the environment variable `MFDB_CRASH_AT=<name>[:<n>]`
//! makes the process call `std::process::abort()` the `n`-th time (default 1) execution
//! passes point `<name>`: no destructor, flush or sync runs, as after `kill -9` (unsynced
//! writes already handed to the OS survive, as they do after a process crash; a power cut
//! is the `CrashStorage` tests' job). Each pass of the armed point writes one line to
//! stderr, `crash point <name>: hit <k> of <n>`, and the last one ends in `, aborting`, so
//! the driver can tell the point's crash from any other death.
//!
//! Every point is named in [`ALL`], hierarchically (`layer.operation.moment`); the matrix
//! iterates it, and a test checks that each name is passed to `hit` somewhere and that
//! every `hit` names a listed point.

/// Every crash point, in the order the matrix runs them.
pub const ALL: &[&str] = &[
    // The write path (engine `Writer::commit`, then the WAL's group commit).
    "txn.commit.before_append",
    "wal.append.after_flush",
    "txn.commit.after_append",
    "pager.commit.before_batch",
    "txn.commit.after_publish",
    "wal.commit.before_write",
    "wal.commit.before_sync",
    "wal.commit.after_sync",
    "txn.commit.after_sync",
    // The catalog: entries written back at commit.
    "catalog.commit.between_entries",
    // DDL commands, between their steps.
    "ddl.create.before_commit",
    "ddl.drop.before_commit",
    "ddl.rename.after_drop_target",
    "ddl.rename.before_commit",
    "ddl.drop_database.between_drops",
    "ddl.drop_database.before_commit",
    // Index DDL: a build sorted and about to be bulk-loaded (live and at replay), and the
    // commands before they commit.
    "ddl.create_index.before_load",
    "ddl.create_index.before_commit",
    "ddl.drop_index.before_commit",
    // The TTL monitor: a batch of expired documents deleted, not yet committed.
    "ttl.before_commit",
    // Checkpoints (`Store::checkpoint`, `Pager::checkpoint`, `Wal::truncate_before`).
    "checkpoint.start",
    "checkpoint.before_pages",
    "checkpoint.after_pages",
    "checkpoint.after_header_write",
    "checkpoint.after_header",
    "wal.truncate.before_rename",
    "wal.truncate.after_rename",
    "checkpoint.after_truncate",
    // A clean close: checkpointed, log not yet removed.
    "close.before_remove_log",
    // Recovery (`Store::open`).
    "recovery.before_replay",
    "recovery.replay.mid",
    "recovery.unfinished.before_checkpoint",
    "recovery.after_replay",
];

/// Whether this build has crash points (the `crash-points` feature).
pub const ENABLED: bool = cfg!(feature = "crash-points");

/// Marks crash point `name` (one of [`ALL`]). Without the `crash-points` feature this
/// does nothing and compiles to nothing.
#[inline(always)]
pub fn hit(name: &'static str) {
    #[cfg(feature = "crash-points")]
    armed::hit(name);
    #[cfg(not(feature = "crash-points"))]
    let _ = name;
}

/// Parses `MFDB_CRASH_AT`'s value: `name` or `name:n` (`n >= 1`).
pub fn parse_spec(spec: &str) -> Option<(&str, u64)> {
    let (name, n) = match spec.rsplit_once(':') {
        Some((name, n)) => (name, n.parse().ok().filter(|&n| n >= 1)?),
        None => (spec, 1),
    };
    (!name.is_empty()).then_some((name, n))
}

#[cfg(feature = "crash-points")]
mod armed {
    use std::io::Write;
    use std::sync::OnceLock;
    use std::sync::atomic::{AtomicU64, Ordering};

    static TARGET: OnceLock<Option<(String, u64)>> = OnceLock::new();
    static PASSES: AtomicU64 = AtomicU64::new(0);

    fn target() -> Option<&'static (String, u64)> {
        TARGET
            .get_or_init(|| {
                let spec = std::env::var("MFDB_CRASH_AT").ok()?;
                let Some((name, n)) = super::parse_spec(&spec) else {
                    eprintln!("MFDB_CRASH_AT={spec:?} is not <name>[:<n>]; no crash point armed");
                    return None;
                };
                if !super::ALL.contains(&name) {
                    eprintln!("MFDB_CRASH_AT names {name:?}, which is not a crash point");
                }
                Some((name.to_owned(), n))
            })
            .as_ref()
    }

    pub(super) fn hit(name: &'static str) {
        debug_assert!(
            super::ALL.contains(&name),
            "crash point {name} is not listed"
        );
        let Some((armed, n)) = target() else {
            return;
        };
        if armed != name {
            return;
        }
        let k = PASSES.fetch_add(1, Ordering::SeqCst) + 1;
        let mut err = std::io::stderr().lock();
        if k == *n {
            let _ = writeln!(err, "crash point {name}: hit {k} of {n}, aborting");
            let _ = err.flush();
            std::process::abort();
        }
        if k < *n {
            let _ = writeln!(err, "crash point {name}: hit {k} of {n}");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{ALL, parse_spec};

    #[test]
    fn names_are_unique_and_hierarchical() {
        for (i, name) in ALL.iter().enumerate() {
            assert!(!ALL[..i].contains(name), "{name} listed twice");
            assert!(name.split('.').count() >= 2, "{name} is not layer.moment");
            assert!(
                name.chars()
                    .all(|c| c.is_ascii_lowercase() || c == '.' || c == '_'),
                "{name}"
            );
        }
    }

    #[test]
    fn specs_parse() {
        assert_eq!(
            parse_spec("wal.commit.before_sync"),
            Some(("wal.commit.before_sync", 1))
        );
        assert_eq!(
            parse_spec("checkpoint.start:3"),
            Some(("checkpoint.start", 3))
        );
        assert_eq!(parse_spec("checkpoint.start:0"), None);
        assert_eq!(parse_spec("checkpoint.start:x"), None);
        assert_eq!(parse_spec(""), None);
    }

    #[test]
    fn hit_without_a_target_returns() {
        // The armed build reads MFDB_CRASH_AT, unset here; the plain build does nothing.
        if std::env::var_os("MFDB_CRASH_AT").is_none() {
            super::hit("checkpoint.start");
        }
    }
}
