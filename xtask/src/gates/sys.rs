//! The machine side of the gates: physical floors (fdatasync, sequential write), `/proc`
//! readings (RSS, load, kernel), file sizes, and a bare OP_MSG `ping` for open times.

use anyhow::{Context, Result, bail};
use std::fs::{File, OpenOptions};
use std::io::{Read, Write};
use std::net::TcpStream;
use std::os::unix::fs::{FileExt, MetadataExt};
use std::path::Path;
use std::time::{Duration, Instant};

/// The median of `values` (which it sorts).
pub(crate) fn median(values: &mut [f64]) -> f64 {
    values.sort_by(f64::total_cmp);
    let mid = values.len() / 2;
    match values.len() {
        0 => f64::NAN,
        n if n % 2 == 1 => values[mid],
        _ => (values[mid - 1] + values[mid]) / 2.0,
    }
}

/// Milliseconds since `start`.
pub(crate) fn ms_since(start: Instant) -> f64 {
    start.elapsed().as_secs_f64() * 1e3
}

/// Median milliseconds of one `write` of `size` bytes followed by `fdatasync`, `reps` times,
/// in a new file in `dir`: appended (the file grows, so each sync also commits the size
/// change) or overwriting a file written and synced beforehand (as a preallocated log does).
pub(crate) fn fdatasync_ms(dir: &Path, size: usize, overwrite: bool, reps: usize) -> Result<f64> {
    let path = dir.join(format!("floor-fdatasync-{size}-{overwrite}"));
    let file = OpenOptions::new()
        .create(true)
        .truncate(true)
        .read(true)
        .write(true)
        .open(&path)
        .with_context(|| format!("creating {}", path.display()))?;
    let block = vec![0x5au8; size];
    if overwrite {
        for i in 0..reps {
            file.write_all_at(&block, (i * size) as u64)?;
        }
        file.sync_all()?;
    }
    let mut times = Vec::with_capacity(reps);
    for i in 0..reps {
        let start = Instant::now();
        file.write_all_at(&block, (i * size) as u64)?;
        file.sync_data()?;
        times.push(ms_since(start));
    }
    drop(file);
    std::fs::remove_file(&path)?;
    Ok(median(&mut times))
}

/// Sequential write bandwidth in MB/s (10^6 B/s): `bytes` written in 1 MiB pieces to a new
/// file in `dir`, then one `fdatasync`; the median of `reps` runs.
pub(crate) fn sequential_write_mbps(dir: &Path, bytes: usize, reps: usize) -> Result<f64> {
    let path = dir.join("floor-sequential");
    let chunk = vec![0xa5u8; 1 << 20];
    let mut speeds = Vec::with_capacity(reps);
    for _ in 0..reps {
        let mut file = File::create(&path)?;
        let start = Instant::now();
        let mut written = 0;
        while written < bytes {
            file.write_all(&chunk)?;
            written += chunk.len();
        }
        file.sync_data()?;
        speeds.push(written as f64 / start.elapsed().as_secs_f64() / 1e6);
        drop(file);
        std::fs::remove_file(&path)?;
    }
    Ok(median(&mut speeds))
}

/// The least a scan that matches on a document's first fields can cost: one read of one word
/// per document, `docs` documents `stride` bytes apart in memory (a buffer as large as the data,
/// up to 1 GiB, scaled beyond), in ms; the fastest of `reps` passes. Stored documents start on
/// their own pages and the matcher skips the fields it does not need by their lengths, so such a
/// scan need not read the rest of each document.
pub(crate) fn touch_scan_ms(docs: usize, stride: usize, reps: usize) -> f64 {
    let words_per_doc = (stride / 8).max(1);
    let touched = docs.min((1 << 30) / (words_per_doc * 8)).max(1);
    // Written in full (`vec!` of a non-zero value), so every page is resident.
    let words = vec![1u64; touched * words_per_doc];
    let mut best = f64::INFINITY;
    for _ in 0..reps {
        let start = Instant::now();
        let words = std::hint::black_box(&words);
        let mut sum = 0u64;
        for doc in 0..touched {
            sum = sum.wrapping_add(words[doc * words_per_doc]);
        }
        std::hint::black_box(sum);
        best = best.min(ms_since(start));
    }
    best * docs as f64 / touched as f64
}

/// A field of `/proc/<pid>/status` in kB (`VmRSS`, `VmHWM`, `RssAnon`, `RssFile`).
pub(crate) fn status_kb(pid: u32, field: &str) -> Result<u64> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/status"))?;
    for line in text.lines() {
        if let Some(rest) = line.strip_prefix(field).and_then(|r| r.strip_prefix(':')) {
            let number = rest.trim().trim_end_matches("kB").trim();
            return Ok(number.parse()?);
        }
    }
    bail!("/proc/{pid}/status has no {field}")
}

/// The three load averages.
pub(crate) fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|text| {
            text.split_whitespace()
                .take(3)
                .collect::<Vec<_>>()
                .join(" ")
        })
        .unwrap_or_else(|_| "?".into())
}

/// Facts about the machine for the report's header: (name, value) pairs.
pub(crate) fn machine() -> Vec<(String, String)> {
    let read = |path: &str| std::fs::read_to_string(path).unwrap_or_default();
    let cpu = read("/proc/cpuinfo")
        .lines()
        .find_map(|l| {
            l.strip_prefix("model name")
                .map(|r| r.trim_start_matches([' ', '\t', ':']))
        })
        .unwrap_or("?")
        .to_owned();
    let mem_kb: f64 = read("/proc/meminfo")
        .lines()
        .find_map(|l| l.strip_prefix("MemTotal:"))
        .and_then(|r| r.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or(f64::NAN);
    vec![
        (
            "nproc".into(),
            std::thread::available_parallelism()
                .map_or(0, |n| n.get())
                .to_string(),
        ),
        ("cpu".into(), cpu),
        ("mem_total_GiB".into(), format!("{:.1}", mem_kb / 1048576.0)),
        (
            "kernel".into(),
            read("/proc/sys/kernel/osrelease").trim().to_owned(),
        ),
        ("loadavg_start".into(), load_average()),
    ]
}

/// The apparent size of a file (0 if it does not exist).
pub(crate) fn file_len(path: &Path) -> u64 {
    std::fs::metadata(path).map_or(0, |m| m.len())
}

/// The bytes a file has allocated on disk (0 if it does not exist).
pub(crate) fn file_allocated(path: &Path) -> u64 {
    std::fs::metadata(path).map_or(0, |m| m.blocks() * 512)
}

/// The `ping` command as an OP_MSG: `{ping: 1, $db: "admin"}`.
fn ping_message() -> Vec<u8> {
    let mut body = Vec::new();
    body.push(0x10);
    body.extend_from_slice(b"ping\0");
    body.extend_from_slice(&1i32.to_le_bytes());
    body.push(0x02);
    body.extend_from_slice(b"$db\0");
    body.extend_from_slice(&6i32.to_le_bytes());
    body.extend_from_slice(b"admin\0");
    body.push(0);
    let document_len = (body.len() + 4) as i32;
    let total = (16 + 4 + 1 + 4 + body.len()) as i32;
    let mut message = Vec::new();
    message.extend_from_slice(&total.to_le_bytes());
    message.extend_from_slice(&1i32.to_le_bytes()); // requestID
    message.extend_from_slice(&0i32.to_le_bytes()); // responseTo
    message.extend_from_slice(&2013i32.to_le_bytes()); // OP_MSG
    message.extend_from_slice(&0u32.to_le_bytes()); // flagBits
    message.push(0); // section kind 0: the body
    message.extend_from_slice(&document_len.to_le_bytes());
    message.extend_from_slice(&body);
    message
}

/// One `ping` on a new connection; Ok when the reply says `ok: 1`.
fn ping_once(address: &str) -> Result<()> {
    let target = address.parse()?;
    let mut stream = TcpStream::connect_timeout(&target, Duration::from_secs(1))?;
    stream.set_read_timeout(Some(Duration::from_secs(5)))?;
    stream.write_all(&ping_message())?;
    let mut prefix = [0u8; 4];
    stream.read_exact(&mut prefix)?;
    let len = usize::try_from(i32::from_le_bytes(prefix))?;
    if !(16..=48_000_000).contains(&len) {
        bail!("reply length {len}");
    }
    let mut reply = vec![0u8; len - 4];
    stream.read_exact(&mut reply)?;
    let double_one = [&b"\x01ok\x00"[..], &1f64.to_le_bytes()].concat();
    let int_one = [&b"\x10ok\x00"[..], &1i32.to_le_bytes()].concat();
    let has = |needle: &[u8]| reply.windows(needle.len()).any(|w| w == needle);
    if has(&double_one) || has(&int_one) {
        Ok(())
    } else {
        bail!("ping reply without ok: 1")
    }
}

/// Pings `address` until it answers (or `limit` passes).
pub(crate) fn wait_ping(address: &str, limit: Duration) -> Result<()> {
    let deadline = Instant::now() + limit;
    loop {
        match ping_once(address) {
            Ok(()) => return Ok(()),
            Err(error) if Instant::now() > deadline => {
                return Err(error.context(format!("no ping answer from {address} in {limit:?}")));
            }
            Err(_) => std::thread::sleep(Duration::from_millis(1)),
        }
    }
}
