//! A first-byte prefilter: the UTF-8 lead bytes a match can start with, and a fast scan for them.
//!
//! When a search has nothing in progress it jumps to the next byte that can
//! begin a match instead of stepping through every position. With at most
//! three candidate bytes the scan tests fixed-size chunks without early exit,
//! which the compiler vectorises (a portable `memchr3`); otherwise it looks
//! bytes up in a 256-entry table.

use crate::compile::{Inst, Program};

/// Byte sets larger than this are not worth scanning for.
const TABLE_BYTES_MAX: usize = 64;

/// Bytes so frequent in typical field values (English text, spaces) that
/// scanning for them does not pay.
const COMMON_BYTES: &[u8] = b" eEtaoinsrhl";

/// Chunk width of the vectorisable scan.
const CHUNK: usize = 32;

/// Where a match can start.
#[derive(Debug, Clone)]
pub(crate) enum Prefilter {
    /// Up to three bytes.
    Bytes(Vec<u8>),
    /// Any byte marked in the table.
    Table(Box<[bool; 256]>),
}

impl Prefilter {
    /// The prefilter for `program`, if matches can only start with a few
    /// distinct bytes (none if the pattern can match the empty string).
    pub(crate) fn new(program: &Program) -> Option<Prefilter> {
        let table = first_bytes(program)?;
        let bytes: Vec<u8> = (0..=255u8).filter(|&b| table[usize::from(b)]).collect();
        if bytes.iter().any(|b| COMMON_BYTES.contains(b)) {
            // Candidates would turn up every few bytes in typical text, and
            // stopping at each costs more than the DFA stepping through.
            return None;
        }
        match bytes.len() {
            0 => None,
            1..=3 => Some(Prefilter::Bytes(bytes)),
            n if n <= TABLE_BYTES_MAX => Some(Prefilter::Table(Box::new(table))),
            _ => None,
        }
    }

    /// The first offset at or after `from` whose byte may start a match.
    pub(crate) fn find(&self, haystack: &[u8], from: usize) -> Option<usize> {
        let rest = haystack.get(from..)?;
        let found = match self {
            Prefilter::Bytes(bytes) => {
                let [a, b, c] = match bytes.as_slice() {
                    [a] => [*a, *a, *a],
                    [a, b] => [*a, *b, *b],
                    [a, b, c] => [*a, *b, *c],
                    _ => return Some(from),
                };
                find3(rest, a, b, c)
            }
            Prefilter::Table(table) => rest.iter().position(|&x| table[usize::from(x)]),
        };
        found.map(|i| from + i)
    }
}

/// Block size of [`find_literal`]'s vectorised existence test.
const LITERAL_BLOCK: usize = 1024;

/// The first occurrence of `needle` in `haystack` at or after `from`.
///
/// `str::contains` is vectorised (SSE2) in the standard library but
/// `str::find` is not, so this tests blocks with `contains` and runs `find`
/// only inside the block that holds a match. Blocks overlap by the needle
/// length, so a match across a block edge is found in the earlier block.
pub(crate) fn find_literal(haystack: &str, needle: &str, from: usize) -> Option<usize> {
    let mut start = from;
    while start < haystack.len() {
        let mut end = start
            .saturating_add(LITERAL_BLOCK + needle.len())
            .min(haystack.len());
        while !haystack.is_char_boundary(end) {
            end += 1;
        }
        let block = haystack.get(start..end)?;
        if block.contains(needle) {
            return block.find(needle).map(|i| start + i);
        }
        if end == haystack.len() {
            return None;
        }
        start += LITERAL_BLOCK;
        while !haystack.is_char_boundary(start) {
            start += 1;
        }
    }
    None
}

fn find3(haystack: &[u8], a: u8, b: u8, c: u8) -> Option<usize> {
    let hit = |x: u8| x == a || x == b || x == c;
    let mut chunks = haystack.chunks_exact(CHUNK);
    let mut base = 0;
    for chunk in &mut chunks {
        let any = chunk.iter().fold(false, |acc, &x| acc | hit(x));
        if any {
            return chunk.iter().position(|&x| hit(x)).map(|i| base + i);
        }
        base += CHUNK;
    }
    chunks
        .remainder()
        .iter()
        .position(|&x| hit(x))
        .map(|i| base + i)
}

/// The lead bytes of every character a match can begin with, or `None` if
/// a match can be empty. Assertions are assumed to pass (a superset is safe).
fn first_bytes(program: &Program) -> Option<[bool; 256]> {
    let mut table = [false; 256];
    let mut seen = vec![false; program.insts.len()];
    let mut stack = vec![0];
    while let Some(pc) = stack.pop() {
        match seen.get_mut(pc) {
            Some(s) if !*s => *s = true,
            _ => continue,
        }
        match program.insts.get(pc)? {
            Inst::Jmp(target) => stack.push(*target),
            Inst::Split(first, second) => stack.extend([*first, *second]),
            Inst::Repeat { body, exit, .. } => stack.extend([*body, *exit]),
            Inst::Save(_) | Inst::Mark(_) | Inst::Assert(_) => stack.push(pc + 1),
            Inst::Char(c) => mark(&mut table, *c, *c),
            Inst::Class(index) => {
                for &(lo, hi) in program.classes.get(*index)?.ranges() {
                    mark(&mut table, lo, hi);
                }
            }
            Inst::Match
            | Inst::Backref { .. }
            | Inst::Atomic { .. }
            | Inst::LookAround { .. }
            | Inst::SubMatch => return None,
        }
    }
    Some(table)
}

/// Marks the UTF-8 lead bytes of every character in `lo..=hi`.
fn mark(table: &mut [bool; 256], lo: char, hi: char) {
    const CLASSES: [(u32, u32); 4] = [
        (0, 0x7f),
        (0x80, 0x7ff),
        (0x800, 0xffff),
        (0x1_0000, 0x10_ffff),
    ];
    let lead = |c: u32| -> u32 {
        match c {
            0..=0x7f => c,
            0x80..=0x7ff => 0xc0 | (c >> 6),
            0x800..=0xffff => 0xe0 | (c >> 12),
            _ => 0xf0 | (c >> 18),
        }
    };
    for (start, end) in CLASSES {
        let from = (lo as u32).max(start);
        let to = (hi as u32).min(end);
        if from <= to {
            for byte in lead(from)..=lead(to) {
                if let Some(entry) = table.get_mut(byte as usize) {
                    *entry = true;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compile::compile;
    use crate::parse::{Mode, parse};

    fn prefilter(pattern: &str) -> Option<Prefilter> {
        let parsed = parse(pattern, Mode::default()).expect("valid");
        let program =
            compile(&parsed.node, parsed.group_count, &parsed.group_widths).expect("compiles");
        Prefilter::new(&program)
    }

    #[test]
    fn caseless_word_scans_for_two_bytes() {
        let p = prefilter("(?i)quota").expect("prefilter");
        assert!(matches!(&p, Prefilter::Bytes(b) if b == b"Qq"));
        let hay = format!("{}QUOTA", "x".repeat(100));
        assert_eq!(p.find(hay.as_bytes(), 0), Some(100));
        assert_eq!(p.find(b"xxxx", 0), None);
    }

    #[test]
    fn find_literal_agrees_with_str_find() {
        let hay = "status: the stats of the statue, status quo, éstatus";
        for needle in ["status", "stat", "quo", "é", "éstatus", "zz", "s", "the"] {
            for from in 0..hay.len() {
                if hay.is_char_boundary(from) {
                    let expected = hay[from..].find(needle).map(|i| from + i);
                    assert_eq!(
                        find_literal(hay, needle, from),
                        expected,
                        "{needle} from {from}"
                    );
                }
            }
        }
    }

    #[test]
    fn find_literal_finds_matches_across_block_edges() {
        let hay = format!(
            "{}status{}status{}",
            "x".repeat(1020),
            "é".repeat(700),
            "y".repeat(1030)
        );
        for from in (0..hay.len()).step_by(7) {
            if hay.is_char_boundary(from) {
                let expected = hay[from..].find("status").map(|i| from + i);
                assert_eq!(find_literal(&hay, "status", from), expected, "from {from}");
            }
        }
        assert_eq!(find_literal(&hay, "éy", 0), hay.find("éy"));
    }

    #[test]
    fn common_first_bytes_get_no_prefilter() {
        assert!(prefilter("(?i)error").is_none());
        assert!(prefilter("apple|banana").is_none());
        assert!(prefilter(r"\d{3}").is_some());
    }

    #[test]
    fn non_ascii_starts_mark_lead_bytes() {
        let p = prefilter("[é€]x").expect("prefilter");
        let hay = "ab€x".as_bytes();
        assert_eq!(p.find(hay, 0), Some(2));
    }

    #[test]
    fn empty_matches_and_wide_sets_have_no_prefilter() {
        assert!(prefilter("a*").is_none());
        assert!(prefilter(".*foo").is_none());
        assert!(prefilter(r"\bx|y?").is_none());
    }
}
