//! Each shipped format version keeps a fixture that a test opens: `fixtures/wal-v1.bin`
//! is a version-1 log (LZ4 and raw blocks, after a truncation). Regenerate it only for a
//! new format version, with `WAL_BLESS=1 cargo test -p wal fixture`.

use super::{NAME, check_prefix, mem_dir_with, open, payload};
use std::path::PathBuf;
use std::sync::Arc;
use wal::{Dir, Lsn, MemDir, MemStorage, Wal};

fn fixture_path() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/wal-v1.bin")
}

/// The records of the fixture, indexed by LSN (LSN 0 unused).
fn model() -> Vec<Vec<u8>> {
    let mut model = vec![Vec::new()];
    for i in 1..=12u64 {
        // Records 7 and 12 are noise, so their blocks are stored raw.
        let record = if i == 7 || i == 12 {
            let mut x = 0x9e37_79b9_7f4a_7c15u64 ^ i;
            (0..700)
                .map(|_| {
                    x ^= x << 13;
                    x ^= x >> 7;
                    x ^= x << 17;
                    x as u8
                })
                .collect()
        } else {
            payload(i, 100 * i as usize)
        };
        model.push(record);
    }
    model
}

fn write_fixture() {
    let dir = Arc::new(MemDir::<MemStorage>::new());
    let (wal, _) = open(&dir);
    let model = model();
    for (i, record) in model.iter().enumerate().take(11).skip(1) {
        let lsn = wal.append(record).expect("append");
        if i % 3 == 0 {
            wal.commit(lsn).expect("commit");
        }
    }
    wal.truncate_before(Lsn(3)).expect("truncate");
    wal.append(&model[11]).expect("append");
    wal.commit_all().expect("commit");
    wal.append(&model[12]).expect("append");
    wal.commit_all().expect("commit");
    wal.append(b"never committed").expect("append");
    drop(wal);
    let bytes = dir.file(NAME).expect("file").snapshot();
    let end = bytes.iter().rposition(|&b| b != 0).expect("data") + 1;
    std::fs::write(fixture_path(), &bytes[..end.next_multiple_of(512) + 512]).expect("write");
}

#[test]
fn format_v1_fixture_still_opens() {
    if std::env::var_os("WAL_BLESS").is_some() {
        write_fixture();
    }
    let bytes = std::fs::read(fixture_path()).expect("fixture");
    let dir = mem_dir_with(bytes);
    let (_, recovery) = Wal::open(dir as Arc<dyn Dir>, NAME, super::options_small()).expect("open");
    assert_eq!(recovery.lsn_start, Lsn(3));
    assert_eq!(
        recovery.lsn_next,
        Lsn(13),
        "the uncommitted record was not written"
    );
    assert_eq!(recovery.torn_tail, None);
    check_prefix(&recovery, &model(), Lsn(12));
    assert_eq!(recovery.records.len(), 10);
}
