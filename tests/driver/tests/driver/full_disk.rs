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
    classify(coll.insert_one(document).run())
}

fn classify<T>(result: mongodb::error::Result<T>) -> Told {
    match result {
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

/// `validate` of `test.c`: valid, with every index holding exactly its documents' keys.
fn assert_valid(client: &mongodb::sync::Client) {
    let reply = client
        .database("test")
        .run_command(doc! {"validate": "c", "full": true})
        .run()
        .expect("validate");
    assert_eq!(reply.get_bool("valid").ok(), Some(true), "{reply:?}");
}

/// The `_id`s `filter` finds through index `hint` (`{"$natural": 1}`: a collection scan).
fn ids_through(
    coll: &mongodb::sync::Collection<Document>,
    filter: Document,
    hint: Document,
) -> BTreeSet<i64> {
    coll.find(filter)
        .hint(mongodb::options::Hint::Keys(hint))
        .projection(doc! {"_id": 1})
        .run()
        .expect("find")
        .map(|d| d.expect("doc").get_i64("_id").expect("id"))
        .collect()
}

#[test]
fn indexes_stay_exact_through_a_full_file_system_and_its_recovery() {
    let Some(mount) = Mount::tmpfs("24m") else {
        eprintln!("skipped: cannot mount a tmpfs here (not root, or no mount permission)");
        return;
    };
    let db = mount.0.join("indexed.mfdb");
    let mut server = TestServer::start_at(&db, &[]);
    let client = server.client();
    let coll = client.database("test").collection::<Document>("c");
    client
        .database("test")
        .run_command(doc! {"createIndexes": "c", "indexes": [
            {"key": {"u": 1}, "name": "u_1", "unique": true},
            {"key": {"k": 1, "tags": 1}, "name": "k_1_tags_1"},
        ]})
        .run()
        .expect("createIndexes");
    let document = |id: i64| {
        doc! {"_id": id, "u": id, "k": id % 7, "tags": [id % 3, id % 5], "pad": "x".repeat(100_000)}
    };
    let (mut acked, mut refused) = (BTreeSet::new(), 0);
    let mut id = 0;
    while refused < 3 {
        assert!(id < 2_000, "24 MiB never filled up");
        match classify(coll.insert_one(document(id)).run()) {
            Told::Acked => {
                acked.insert(id);
            }
            Told::Refused(code) => {
                assert_eq!(code, 14031, "a full disk is OutOfDiskSpace");
                refused += 1;
            }
            Told::Unknown => {}
        }
        id += 1;
    }
    // Updates that move index keys (and grow documents) meet the full disk too.
    let mut updates_refused = 0;
    for _ in 0..3 {
        let moved = coll
            .update_many(
                doc! {"k": 3},
                doc! {"$inc": {"k": 10}, "$set": {"more": "y".repeat(200_000)}},
            )
            .run();
        if let Err(error) = moved {
            assert!(
                matches!(
                    classify::<()>(Err(error)),
                    Told::Refused(14031) | Told::Unknown
                ),
                "a refused update is OutOfDiskSpace"
            );
            updates_refused += 1;
        }
    }
    assert!(updates_refused > 0, "the growing updates met the full disk");
    assert_valid(&client);
    // Every index answers as a collection scan does, and uniqueness still holds.
    let scan = |filter: Document| ids_through(&coll, filter, doc! {"$natural": 1});
    for filter in [
        doc! {"k": 3},
        doc! {"k": 13},
        doc! {"k": {"$gte": 2}, "tags": 4},
    ] {
        let through = ids_through(&coll, filter.clone(), doc! {"k": 1, "tags": 1});
        assert_eq!(through, scan(filter.clone()), "k_1_tags_1 on {filter}");
    }
    let low = doc! {"u": {"$lt": 5}};
    assert_eq!(ids_through(&coll, low.clone(), doc! {"u": 1}), scan(low));
    assert!(
        acked.is_subset(&ids(&coll)),
        "every acknowledged insert is readable"
    );
    mount.resize("256m");
    let again = coll
        .insert_one(doc! {"_id": 1_000_000_i64, "u": 0_i64})
        .run();
    assert!(
        matches!(classify(again), Told::Refused(11000)),
        "the unique index still refuses a duplicate"
    );
    coll.insert_one(doc! {"_id": 1_000_001_i64, "u": 1_000_001_i64, "k": 3})
        .run()
        .expect("writes resume");
    assert!(server.terminate().success(), "a clean close");
    let server = TestServer::start_at(&db, &[]);
    let client = server.client();
    let coll = client.database("test").collection::<Document>("c");
    assert_valid(&client);
    let filter = doc! {"k": 3};
    assert_eq!(
        ids_through(&coll, filter.clone(), doc! {"k": 1, "tags": 1}),
        ids_through(&coll, filter, doc! {"$natural": 1}),
        "after the restart"
    );
    assert!(acked.is_subset(&ids(&coll)));
    eprintln!(
        "indexed full disk: {} inserts acknowledged, {refused} refused, {updates_refused} of 3 \
         key-moving updates refused",
        acked.len()
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

/// A small ext4 image on a loop device, mounted for the test (skipped with a message
/// where `mkfs.ext4`, loop devices or `mount` are unavailable or refused).
struct Ext4 {
    dir: std::path::PathBuf,
    image: std::path::PathBuf,
}

impl Ext4 {
    fn mount(size: &str) -> Option<Ext4> {
        let dir = TestServer::temp_db().with_extension("ext4");
        let image = dir.with_extension("img");
        std::fs::create_dir_all(&dir).ok()?;
        let ok = |cmd: &mut Command| cmd.output().is_ok_and(|out| out.status.success());
        let made = ok(Command::new("truncate").args(["-s", size]).arg(&image))
            && ok(Command::new("mkfs.ext4").args(["-q", "-F"]).arg(&image));
        let ext4 = Ext4 { dir, image };
        if !made || !ext4.mount_again() {
            return None;
        }
        Some(ext4)
    }

    fn mount_again(&self) -> bool {
        Command::new("mount")
            .args(["-o", "loop"])
            .arg(&self.image)
            .arg(&self.dir)
            .output()
            .is_ok_and(|out| out.status.success())
    }

    fn unmount(&self) -> bool {
        Command::new("umount")
            .arg(&self.dir)
            .output()
            .is_ok_and(|out| out.status.success())
    }

    /// `EXT4_IOC_SHUTDOWN` with `EXT4_GOING_FLAGS_NOLOGFLUSH`: from now on every write,
    /// sync and most reads on the file system fail with EIO, as when the device dies.
    fn shut_down(&self) -> bool {
        let script = "import fcntl, os, struct, sys\n\
                      fd = os.open(sys.argv[1], os.O_RDONLY)\n\
                      fcntl.ioctl(fd, 0x8004587D, struct.pack('I', 2))\n";
        Command::new("python3")
            .args(["-c", script])
            .arg(&self.dir)
            .output()
            .is_ok_and(|out| out.status.success())
    }
}

impl Drop for Ext4 {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg("-l").arg(&self.dir).status();
        let _ = std::fs::remove_dir(&self.dir);
        let _ = std::fs::remove_file(&self.image);
    }
}

/// What a read of the whole collection gave: the ids, or the error (a clear refusal).
fn try_ids(coll: &mongodb::sync::Collection<Document>) -> Result<BTreeSet<i64>, String> {
    let cursor = coll
        .find(doc! {})
        .projection(doc! {"_id": 1})
        .run()
        .map_err(|e| e.to_string())?;
    cursor
        .map(|d| {
            d.map_err(|e| e.to_string())
                .map(|d| d.get_i64("_id").expect("id"))
        })
        .collect()
}

/// The device fails under a running server (ext4's shutdown ioctl, EIO from then on):
/// the failed write's reply is an error or an unknown outcome (never an acknowledgement),
/// that write is never readable, reads of durable data go on or are refused with a clear
/// error, the server does not panic, and after an unmount and remount (the journal
/// replayed) a restart has every acknowledged write.
#[test]
fn a_failing_device_gives_no_phantom_data_and_loses_no_acknowledged_write() {
    let Some(fs) = Ext4::mount("64M") else {
        eprintln!(
            "skipped: cannot make or loop-mount an ext4 image here (mkfs.ext4, loop or mount refused)"
        );
        return;
    };
    let db = fs.dir.join("dev.mfdb");
    let mut server = TestServer::start_at(&db, &[]);
    let client = server.client();
    let coll = client.database("test").collection::<Document>("c");
    let mut acked = BTreeSet::new();
    for id in 0..40 {
        assert!(matches!(insert(&coll, id), Told::Acked), "insert {id}");
        acked.insert(id);
    }
    client
        .database("admin")
        .run_command(doc! {"fsync": 1})
        .run()
        .expect("a checkpoint");
    for id in 40..60 {
        assert!(matches!(insert(&coll, id), Told::Acked), "insert {id}");
        acked.insert(id);
    }
    if !fs.shut_down() {
        eprintln!("skipped: EXT4_IOC_SHUTDOWN refused (no python3 or no CAP_SYS_ADMIN)");
        return;
    }
    // A small document: its page waits in the write-back buffer, so the commit publishes
    // it before the log's write fails (a large one fails earlier, writing its pages).
    let failed = 1_000;
    let told = classify(coll.insert_one(doc! {"_id": failed}).run());
    assert!(
        !matches!(told, Told::Acked),
        "a write on a failed device is never acknowledged"
    );
    let refused = match told {
        Told::Refused(code) => Some(code),
        _ => None,
    };
    let mut reads = Vec::new();
    for _ in 0..3 {
        match try_ids(&coll) {
            Ok(seen) => {
                assert!(!seen.contains(&failed), "no phantom data");
                assert!(acked.is_subset(&seen), "durable data reads as it was");
                reads.push(format!("{} documents", seen.len()));
            }
            Err(message) => {
                assert!(message.contains("rror"), "a refusal says why: {message}");
                reads.push(message.chars().take(150).collect());
            }
        }
    }
    assert!(server.is_running(), "no panic, no exit");
    assert!(
        !server.log_lines().iter().any(|l| l.contains("panicked")),
        "no panic"
    );
    server.kill9();
    assert!(fs.unmount(), "unmount the shut-down file system");
    assert!(fs.mount_again(), "remount (the journal is replayed)");
    let server = TestServer::start_at(&db, &[]);
    let coll = server.client().database("test").collection::<Document>("c");
    let after = ids(&coll);
    assert!(acked.is_subset(&after), "every acknowledged write survives");
    if refused.is_some() {
        assert!(!after.contains(&failed), "a refused write never appears");
    }
    eprintln!(
        "device failure: {} acknowledged, the failed write {refused:?} (None: unknown \
         outcome), reads after it: {reads:?}",
        acked.len(),
    );
}

/// A read-only remount under a running server (EROFS): Linux refuses it while the
/// database's files are open for writing (EBUSY), which is what this test finds here;
/// if a kernel allows it, the write is not acknowledged and never readable.
#[test]
fn a_read_only_remount_is_refused_or_refuses_writes_without_phantom_data() {
    let Some(fs) = Ext4::mount("32M") else {
        eprintln!(
            "skipped: cannot make or loop-mount an ext4 image here (mkfs.ext4, loop or mount refused)"
        );
        return;
    };
    let db = fs.dir.join("ro.mfdb");
    let mut server = TestServer::start_at(&db, &[]);
    let coll = server.client().database("test").collection::<Document>("c");
    for id in 0..10 {
        assert!(matches!(insert(&coll, id), Told::Acked), "insert {id}");
    }
    let remounted = Command::new("mount")
        .args(["-o", "remount,ro"])
        .arg(&fs.dir)
        .output()
        .expect("mount runs");
    if !remounted.status.success() {
        eprintln!(
            "read-only remount refused while the files are open for writing: {}",
            String::from_utf8_lossy(&remounted.stderr).trim()
        );
        assert!(matches!(insert(&coll, 10), Told::Acked), "writes go on");
        assert!(server.terminate().success(), "a clean close");
        return;
    }
    let told = insert(&coll, 10);
    assert!(!matches!(told, Told::Acked), "EROFS is never acknowledged");
    if let Ok(seen) = try_ids(&coll) {
        assert!(!seen.contains(&10), "no phantom data");
    }
    assert!(server.is_running(), "no panic, no exit");
    server.kill9();
}
