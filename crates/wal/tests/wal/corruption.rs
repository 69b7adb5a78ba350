//! The corruption sweep: flip each byte of a small log in turn; every open either
//! succeeds with a correct prefix or reports corruption, and damage to a block that a
//! later block proves durable is always reported.

use super::{NAME, mem_dir_with, open, payload};
use std::sync::Arc;
use wal::format::BlockHeader;
use wal::limits::{BLOCK_HEADER_LEN, FILE_HEADER_LEN};
use wal::{Dir, Lsn, MemDir, MemStorage, Wal, WalError};

/// Builds a log of several blocks, each its own commit; returns the file bytes, the
/// model (indexed by LSN) and the block extents `(start, end of stored bytes, lsn_first)`.
/// A block's extent: start offset, end of its stored bytes, first LSN.
type Extent = (usize, usize, Lsn);

fn small_log() -> (Vec<u8>, Vec<Vec<u8>>, Vec<Extent>) {
    let dir = Arc::new(MemDir::<MemStorage>::new());
    let (wal, _) = open(&dir);
    let mut model = vec![Vec::new()];
    for i in 0..12u64 {
        let record = payload(i, 40 + (i as usize * 31) % 300);
        let lsn = wal.append(&record).expect("append");
        model.push(record);
        if i % 2 == 1 {
            wal.commit(lsn).expect("commit");
        }
    }
    drop(wal);
    let bytes = dir.file(NAME).expect("file").snapshot();
    let mut blocks = Vec::new();
    let mut offset = FILE_HEADER_LEN as usize;
    while let Ok(header) = BlockHeader::decode(&bytes[offset..]) {
        let end = offset + BLOCK_HEADER_LEN + header.len_stored as usize;
        blocks.push((offset, end, header.lsn_first));
        offset += header.len_on_disk() as usize;
    }
    assert_eq!(blocks.len(), 6);
    // Only the log region and a little of the zeros after it matter.
    (bytes[..offset + 1024].to_vec(), model, blocks)
}

#[test]
fn every_flipped_byte_gives_a_correct_prefix_or_corruption() {
    let (bytes, model, blocks) = small_log();
    let last = blocks.len() - 1;
    let (mut corrupt, mut torn, mut intact) = (0, 0, 0);
    for at in 0..bytes.len() {
        for bit in [0x01u8, 0x80] {
            let mut damaged = bytes.clone();
            damaged[at] ^= bit;
            let dir = mem_dir_with(damaged);
            let result = Wal::open(dir as Arc<dyn Dir>, NAME, super::options_small());
            let block = blocks
                .iter()
                .position(|&(start, end, _)| (start..end).contains(&at));
            match result {
                Err(WalError::Corrupt { offset, lsn, .. }) => {
                    corrupt += 1;
                    let expected = match block {
                        Some(k) => (blocks[k].0 as u64, Some(blocks[k].2)),
                        None => (0, None),
                    };
                    assert_eq!((offset, lsn), expected, "flip at {at}: wrong place named");
                    assert!(
                        block != Some(last),
                        "flip at {at} in the tail is corruption"
                    );
                }
                Err(other) => panic!("flip at {at}: unexpected error {other}"),
                Ok((_, recovery)) => {
                    assert!(
                        block.is_none() || block == Some(last),
                        "flip at {at} in durable block {block:?} went unnoticed"
                    );
                    super::check_prefix(&recovery, &model, Lsn(0));
                    if block == Some(last) {
                        torn += 1;
                        assert_eq!(recovery.lsn_next, blocks[last].2);
                        assert!(recovery.torn_tail.is_some());
                    } else {
                        intact += 1;
                        assert_eq!(recovery.records.len(), model.len() - 1);
                    }
                }
            }
        }
    }
    assert!(
        corrupt > 0 && torn > 0 && intact > 0,
        "{corrupt} {torn} {intact}"
    );
}

#[test]
fn zeroed_durable_block_is_corruption_but_zeroed_last_block_is_a_torn_tail() {
    let (bytes, model, blocks) = small_log();
    let mut zeroed = bytes.clone();
    let (start, end, lsn) = blocks[2];
    zeroed[start..end].fill(0);
    let result = Wal::open(
        mem_dir_with(zeroed) as Arc<dyn Dir>,
        NAME,
        super::options_small(),
    );
    match result {
        Err(WalError::Corrupt {
            offset, lsn: at, ..
        }) => {
            assert_eq!((offset, at), (start as u64, Some(lsn)));
        }
        other => panic!("expected corruption, got {other:?}"),
    }
    let mut zeroed = bytes;
    let (start, end, lsn) = *blocks.last().expect("blocks");
    zeroed[start..end].fill(0);
    let (_, recovery) = Wal::open(
        mem_dir_with(zeroed) as Arc<dyn Dir>,
        NAME,
        super::options_small(),
    )
    .expect("torn tail opens");
    assert_eq!(recovery.lsn_next, lsn);
    super::check_prefix(&recovery, &model, Lsn(lsn.0 - 1));
}

#[test]
fn truncated_file_is_a_torn_tail() {
    let (bytes, model, blocks) = small_log();
    let (start, end, lsn) = *blocks.last().expect("blocks");
    for cut in [start + 1, start + BLOCK_HEADER_LEN, end - 1] {
        let dir = mem_dir_with(bytes[..cut].to_vec());
        let (_, recovery) =
            Wal::open(dir as Arc<dyn Dir>, NAME, super::options_small()).expect("open");
        assert_eq!(recovery.lsn_next, lsn, "cut at {cut}");
        super::check_prefix(&recovery, &model, Lsn(lsn.0 - 1));
    }
}
