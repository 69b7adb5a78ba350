//! The gates report: sections of `name<TAB>value` rows, written as a dated TSV under
//! `results/`, compared row by row with the previous report, and the benchmark table printed
//! with its floors, ratios and the predecessor's figures.

use anyhow::{Context, Result};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// One figure: its name (units in the name) and its value as printed.
pub(crate) type Row = (String, String);

/// A report: sections in order, each a name and its rows.
#[derive(Default)]
pub(crate) struct Report {
    pub(crate) sections: Vec<(String, Vec<Row>)>,
}

impl Report {
    /// The rows of `section`, created empty at the end if new.
    pub(crate) fn section(&mut self, name: &str) -> &mut Vec<Row> {
        let index = match self.sections.iter().position(|(n, _)| n == name) {
            Some(index) => index,
            None => {
                self.sections.push((name.to_owned(), Vec::new()));
                self.sections.len() - 1
            }
        };
        &mut self.sections[index].1
    }

    /// The value of `name` in `section`.
    pub(crate) fn get(&self, section: &str, name: &str) -> Option<&str> {
        self.sections
            .iter()
            .find(|(n, _)| n == section)?
            .1
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }

    /// The report as TSV: `# section` lines, then `name<TAB>value` rows.
    pub(crate) fn to_tsv(&self) -> String {
        let mut text = String::new();
        for (section, rows) in &self.sections {
            let _ = writeln!(text, "# {section}");
            for (name, value) in rows {
                let _ = writeln!(text, "{name}\t{value}");
            }
        }
        text
    }

    /// Reads a report written by `to_tsv`.
    pub(crate) fn parse(text: &str) -> Report {
        let mut report = Report::default();
        let mut current = String::from("?");
        for line in text.lines() {
            if let Some(section) = line.strip_prefix("# ") {
                current = section.trim().to_owned();
                report.section(&current);
            } else if let Some((name, value)) = line.split_once('\t') {
                report
                    .section(&current)
                    .push((name.to_owned(), value.to_owned()));
            }
        }
        report
    }
}

/// Formats a figure with three or four significant digits.
pub(crate) fn number(value: f64) -> String {
    if !value.is_finite() {
        return "n/a".into();
    }
    let abs = value.abs();
    if abs >= 1000.0 || (value.fract() == 0.0 && abs < 1e15) {
        format!("{value:.0}")
    } else if abs >= 100.0 {
        format!("{value:.1}")
    } else if abs >= 10.0 {
        format!("{value:.2}")
    } else if abs >= 1.0 {
        format!("{value:.3}")
    } else {
        format!("{value:.4}")
    }
}

/// Writes `report` as `results/gates-<stamp>.tsv` and returns its path.
pub(crate) fn write(root: &Path, stamp: &str, report: &Report) -> Result<PathBuf> {
    let dir = root.join("results");
    std::fs::create_dir_all(&dir)?;
    let path = dir.join(format!("gates-{stamp}.tsv"));
    std::fs::write(&path, report.to_tsv())
        .with_context(|| format!("writing {}", path.display()))?;
    Ok(path)
}

/// The newest report in `results/` older than `current` (names sort by date).
pub(crate) fn previous(root: &Path, current: &Path) -> Option<PathBuf> {
    let current_name = current.file_name()?.to_string_lossy().into_owned();
    let mut reports: Vec<String> = std::fs::read_dir(root.join("results"))
        .ok()?
        .filter_map(|entry| entry.ok())
        .map(|entry| entry.file_name().to_string_lossy().into_owned())
        .filter(|name| name.starts_with("gates-") && name.ends_with(".tsv"))
        .filter(|name| *name < current_name)
        .collect();
    reports.sort();
    reports.pop().map(|name| root.join("results").join(name))
}

/// Prints `new` against `old` row by row: old, new, new/old where both are numbers.
pub(crate) fn print_diff(old_name: &str, old: &Report, new: &Report) {
    println!("\ndifference from {old_name} (ratio = new / old):");
    println!("{:<48} {:>14} {:>14} {:>8}", "row", "old", "new", "ratio");
    for (section, rows) in &new.sections {
        println!("# {section}");
        for (name, value) in rows {
            let previous = old.get(section, name);
            let ratio = match (
                previous.and_then(|v| v.parse::<f64>().ok()),
                value.parse::<f64>().ok(),
            ) {
                (Some(a), Some(b)) if a != 0.0 => format!("{:.2}", b / a),
                _ => String::new(),
            };
            println!(
                "{:<48} {:>14} {:>14} {:>8}",
                name,
                clip(previous.unwrap_or("-")),
                clip(value),
                ratio
            );
        }
    }
}

fn clip(value: &str) -> String {
    if value.chars().count() > 14 {
        value.chars().take(13).collect::<String>() + "…"
    } else {
        value.to_owned()
    }
}

/// The predecessor's figures (Zig, on a 12-core Mac, best of three; MongoDB 8.3.7 beside it),
/// from `../shared/seeds/000_*.txt` and `002_*.txt`: (row, predecessor, mongod).
pub(crate) const PREDECESSOR: &[(&str, &str, &str)] = &[
    ("insertOne_seq_x200_ms", "0.20", "4.4"),
    ("insertMany_MBps", "555", "739"),
    ("createIndex_k_ms", "27.9", "70"),
    ("countDocuments_ms", "2.6", "11.3"),
    ("findOne_id_ms", "0.60", "0.61"),
    ("findOne_k_indexed_ms", "0.54", "1.1"),
    ("range_count_unindexed_ms", "11.2", "12.5"),
    ("sort_id_desc_limit20_ms", "1.5", "2.0"),
    ("projection_limit1000_ms", "3.6", "4.3"),
    ("aggregate_group_k_ms", "7.4", "13.4"),
    ("updateOne_id_x50_ms", "0.15", "0.21"),
    ("updateMany_k_ms", "1.9 (indexed)", "5.9"),
    ("deleteOne_insertOne_ms", "0.63", "4.9"),
    ("insertOne_c1_docs_per_s", "8373", ""),
    ("insertOne_c4_docs_per_s", "20880", ""),
    ("insertOne_c8_docs_per_s", "26349", ""),
    ("insertOne_c16_docs_per_s", "29594", ""),
    ("insertOne_c32_docs_per_s", "32817", "3765"),
    ("rss_after_load_MB", "1060", "1180"),
    ("kill9_to_ping_ms", "300", "1300"),
    ("disk_over_live", "0.85 (914 MB)", "0.079 (85 MB)"),
    ("large_open_after_kill_ms", "500", ""),
    (
        "large_rss_after_reopen_share_pct",
        "3.0 (4 GB); 1.1 (21.5 GB)",
        "",
    ),
    ("large_file_over_live", "1.014 (4 GB)", ""),
    ("churn_final_delete_file_over_live", "1.65", ""),
    ("churn_final_set_file_over_live", "2.47", ""),
];

/// Each benchmark row and the floor it is measured against: (row, ratio row, floor text).
pub(crate) const FLOORS: &[(&str, &str, &str)] = &[
    (
        "insertOne_seq_x200_ms",
        "insertOne_seq_x200_over_floor",
        "ping + fdatasync 16k",
    ),
    (
        "insertMany_MBps",
        "insertMany_share_of_seq_write",
        "seq write MB/s",
    ),
    (
        "countDocuments_ms",
        "countDocuments_over_ping",
        "ping (the catalog keeps the count)",
    ),
    ("findOne_id_ms", "findOne_id_over_ping", "ping"),
    (
        "range_count_unindexed_ms",
        "range_count_unindexed_over_floor",
        "ping + touch scan",
    ),
    (
        "sort_id_desc_limit20_ms",
        "sort_id_desc_limit20_over_ping",
        "ping",
    ),
    (
        "sort_id_desc_limit20_raw_ms",
        "sort_id_desc_limit20_raw_over_ping",
        "ping (the client keeps raw BSON)",
    ),
    (
        "projection_limit1000_ms",
        "projection_limit1000_over_ping",
        "ping",
    ),
    (
        "projection_limit1000_raw_ms",
        "projection_limit1000_raw_over_ping",
        "ping (the client keeps raw BSON)",
    ),
    (
        "aggregate_group_k_ms",
        "aggregate_group_k_over_floor",
        "ping + touch scan",
    ),
    (
        "updateOne_id_x50_ms",
        "updateOne_id_x50_over_floor",
        "ping + fdatasync 16k",
    ),
    (
        "updateMany_k_ms",
        "updateMany_k_over_floor",
        "ping + fdatasync 16k + matched docs at seq write (indexed k; goal <= 3x)",
    ),
    (
        "createIndex_k_ms",
        "createIndex_k_over_range_count",
        "unindexed range count, interleaved (median of rebuilds; goal <= 2x)",
    ),
    (
        "findOne_k_indexed_ms",
        "findOne_k_indexed_over_findOne_id",
        "findOne({_id}) (goal <= 1.3x)",
    ),
    (
        "find_k_range_sort_limit20_ms",
        "find_k_range_sort_limit20_over_findOne_id",
        "findOne({_id}) (indexed range, sort, limit 20; goal <= 1.5x)",
    ),
    (
        "ping_tls_ms",
        "ping_tls_over_plain",
        "plain ping, same server (goal <= 1.3x)",
    ),
    (
        "find_k_or2_ms",
        "find_k_or2_over_equality",
        "one indexed equality (goal <= 2x)",
    ),
    (
        "insertOne_seq_3idx_x200_ms",
        "insertOne_3idx_over_plain",
        "insertOne without indexes (goal <= 1.25x)",
    ),
    (
        "deleteOne_insertOne_ms",
        "deleteOne_insertOne_over_floor",
        "2 x (ping + fdatasync 16k)",
    ),
    (
        "insertOne_c1_docs_per_s",
        "insertOne_c1_share_of_ceiling",
        "1 / (ping + fdatasync 16k)",
    ),
    ("insertOne_c4_docs_per_s", "insertOne_c4_over_c1", "c1"),
    ("insertOne_c8_docs_per_s", "insertOne_c8_over_c1", "c1"),
    ("insertOne_c16_docs_per_s", "insertOne_c16_over_c1", "c1"),
    ("insertOne_c32_docs_per_s", "insertOne_c32_over_c1", "c1"),
    (
        "rss_after_reopen_MB",
        "rss_after_reopen_share_of_live_pct",
        "live data",
    ),
    (
        "kill9_to_ping_ms",
        "kill9_to_ping_over_empty_open",
        "open of an empty db",
    ),
    ("disk_bytes", "disk_over_live", "live data"),
];

/// Prints the benchmark section as a table: figure, floor, ratio, predecessor, mongod.
pub(crate) fn print_bench_table(report: &Report) {
    let Some((_, rows)) = report.sections.iter().find(|(n, _)| n == "bench") else {
        return;
    };
    println!(
        "\nbenchmark table (ratio: to the floor measured in this run; throughput rows: share of it)"
    );
    println!(
        "{:<28} {:>10} {:<34} {:>8} {:>14} {:>8}",
        "row", "ours", "floor", "ratio", "predecessor", "mongod"
    );
    for (name, value) in rows {
        if FLOORS.iter().any(|(_, ratio, _)| ratio == name) || name.starts_with("floor_") {
            continue;
        }
        let (floor, ratio) = FLOORS
            .iter()
            .find(|(row, _, _)| row == name)
            .map_or(("", ""), |(_, ratio, floor)| {
                (*floor, report.get("bench", ratio).unwrap_or(""))
            });
        let (pred, mongod) = PREDECESSOR
            .iter()
            .find(|(row, _, _)| row == name)
            .map_or(("", ""), |(_, p, m)| (*p, *m));
        println!(
            "{:<28} {:>10} {:<34} {:>8} {:>14} {:>8}",
            name,
            value,
            floor,
            ratio,
            clip(pred),
            mongod
        );
    }
}
