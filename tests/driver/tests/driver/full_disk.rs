//! A real full disk (a small tmpfs mounted for the test; skipped with a message where
//! mounting is not allowed): writes are refused with OutOfDiskSpace (14031) and not
//! applied, reads go on, writes resume once space is freed, and the server closes
//! cleanly to one file.

use crate::harness::TestServer;
use bson::{Document, doc};
use mongodb::error::{ErrorKind, WriteFailure};
use std::collections::BTreeSet;
use std::process::Command;

struct Mount(std::path::PathBuf);

impl Mount {
    fn tmpfs(size: &str) -> Option<Mount> {
        let dir = TestServer::temp_db().with_extension("fs");
        std::fs::create_dir_all(&dir).ok()?;
        let mounted = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"])
            .arg(&dir)
            .output()
            .is_ok_and(|out| out.status.success());
        if !mounted {
            let _ = std::fs::remove_dir(&dir);
            return None;
        }
        Some(Mount(dir))
    }

    fn resize(&self, size: &str) {
        let status = Command::new("mount")
            .args(["-o", &format!("remount,size={size}")])
            .arg(&self.0)
            .status()
            .expect("mount runs");
        assert!(status.success(), "remount to {size}");
    }
}

impl Drop for Mount {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg("-l").arg(&self.0).status();
        let _ = std::fs::remove_dir(&self.0);
    }
}

/// What an insert was told: acknowledged, refused with a code, or unknown (the
/// connection closed, as the server does when the outcome is unknown).
enum Told {
    Acked,
    Refused(i32),
    Unknown,
}

fn insert(coll: &mongodb::sync::Collection<Document>, id: i64) -> Told {
    let document = doc! {"_id": id, "pad": "x".repeat(100_000)};
    match coll.insert_one(document).run() {
        Ok(_) => Told::Acked,
        Err(error) => match *error.kind {
            ErrorKind::Write(WriteFailure::WriteError(e)) => Told::Refused(e.code),
            ErrorKind::Command(e) => Told::Refused(e.code),
            ErrorKind::Io(_) | ErrorKind::ConnectionPoolCleared { .. } => Told::Unknown,
            other => panic!("unexpected error {other:?}"),
        },
    }
}

fn ids(coll: &mongodb::sync::Collection<Document>) -> BTreeSet<i64> {
    coll.find(doc! {})
        .projection(doc! {"_id": 1})
        .run()
        .expect("find")
        .map(|d| d.expect("doc").get_i64("_id").expect("id"))
        .collect()
}

#[test]
fn a_full_file_system_refuses_writes_keeps_reads_and_recovers_when_space_is_freed() {
    let Some(mount) = Mount::tmpfs("24m") else {
        eprintln!("skipped: cannot mount a tmpfs here (not root, or no mount permission)");
        return;
    };
    let db = mount.0.join("full.mfdb");
    let mut server = TestServer::start_at(&db, &[]);
    let client = server.client();
    let coll = client.database("test").collection::<Document>("c");
    let (mut acked, mut refused, mut unknown) = (BTreeSet::new(), BTreeSet::new(), 0);
    let mut id = 0;
    while refused.len() < 3 {
        assert!(id < 2_000, "24 MiB never filled up");
        match insert(&coll, id) {
            Told::Acked => {
                acked.insert(id);
            }
            Told::Refused(code) => {
                assert_eq!(code, 14031, "a full disk is OutOfDiskSpace");
                refused.insert(id);
            }
            Told::Unknown => unknown += 1,
        }
        id += 1;
    }
    assert!(acked.len() > 10, "only {} inserts fit", acked.len());
    // hello still says writable, as mongod's does on a full disk: the role of a
    // standalone, not the disk's state (the refused writes say that).
    let hello = client
        .database("admin")
        .run_command(doc! {"hello": 1})
        .run()
        .expect("hello on a full disk");
    assert_eq!(hello.get_bool("isWritablePrimary").ok(), Some(true));
    assert!(
        server.log_contains("storage failure"),
        "the failure is logged"
    );
    // Reads of durable data go on, and a refused write is not among them.
    let seen = ids(&coll);
    assert!(
        acked.is_subset(&seen),
        "every acknowledged write is readable"
    );
    assert!(seen.is_disjoint(&refused), "no refused write is readable");
    assert_eq!(
        client
            .database("test")
            .run_command(doc! {"validate": "c"})
            .run()
            .expect("validate")
            .get_bool("valid")
            .ok(),
        Some(true)
    );
    // Free space: writes resume without a restart.
    mount.resize("256m");
    let resumed = 1_000_000;
    assert!(
        matches!(insert(&coll, resumed), Told::Acked),
        "writes resume"
    );
    assert!(server.terminate().success(), "a clean close");
    assert!(
        !mount.0.join("full.mfdb-wal").exists(),
        "closed to one file"
    );
    let server = TestServer::start_at(&db, &[]);
    let coll = server.client().database("test").collection::<Document>("c");
    let after = ids(&coll);
    assert!(acked.is_subset(&after) && after.contains(&resumed));
    assert!(after.is_disjoint(&refused), "refused writes never appear");
    eprintln!(
        "full disk: {} acknowledged, {} refused with 14031, {unknown} of unknown outcome",
        acked.len(),
        refused.len()
    );
}

#[test]
fn a_server_on_a_full_file_system_still_closes_cleanly_to_one_file() {
    let Some(mount) = Mount::tmpfs("16m") else {
        eprintln!("skipped: cannot mount a tmpfs here (not root, or no mount permission)");
        return;
    };
    let db = mount.0.join("full.mfdb");
    let mut server = TestServer::start_at(&db, &[]);
    let coll = server.client().database("test").collection::<Document>("c");
    let mut acked = BTreeSet::new();
    let mut refused = 0;
    for id in 0..2_000 {
        match insert(&coll, id) {
            Told::Acked => {
                acked.insert(id);
            }
            Told::Refused(_) | Told::Unknown => refused += 1,
        }
        if refused == 2 {
            break;
        }
    }
    assert_eq!(refused, 2, "16 MiB never filled up");
    let status = server.terminate();
    let log = server.log_lines();
    let tail = &log[log.len().saturating_sub(8)..];
    assert!(
        status.success(),
        "SIGTERM on a full disk exits 0: {tail:#?}"
    );
    assert!(
        !mount.0.join("full.mfdb-wal").exists(),
        "closed to one file"
    );
    mount.resize("64m");
    let server = TestServer::start_at(&db, &[]);
    let coll = server.client().database("test").collection::<Document>("c");
    assert!(
        acked.is_subset(&ids(&coll)),
        "every acknowledged write survives"
    );
}
