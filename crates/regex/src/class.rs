//! Character sets: ranges of scalar values, the PCRE shorthand and POSIX classes, and caseless closure.

use std::sync::OnceLock;

/// Characters at or above this code point have no case mappings in Unicode.
const CASED_END: u32 = 0x1_E944;

/// A set of Unicode scalar values as sorted, non-overlapping, non-adjacent ranges.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct ClassSet {
    ranges: Vec<(char, char)>,
}

impl ClassSet {
    /// The empty set.
    pub(crate) fn new() -> Self {
        ClassSet { ranges: Vec::new() }
    }

    /// A set of one character.
    pub(crate) fn single(c: char) -> Self {
        ClassSet {
            ranges: vec![(c, c)],
        }
    }

    /// Adds the inclusive range `lo..=hi` (`lo <= hi`).
    pub(crate) fn push(&mut self, lo: char, hi: char) {
        self.ranges.push((lo, hi));
        self.normalize();
    }

    /// Adds every member of `other`.
    pub(crate) fn union(&mut self, other: &ClassSet) {
        self.ranges.extend_from_slice(&other.ranges);
        self.normalize();
    }

    /// Replaces the set by its complement over all scalar values.
    pub(crate) fn negate(&mut self) {
        let mut out = Vec::with_capacity(self.ranges.len() + 1);
        let mut next: Option<char> = Some('\0');
        for &(lo, hi) in &self.ranges {
            if let Some(start) = next
                && start < lo
                && let Some(end) = char_before(lo)
            {
                out.push((start, end));
            }
            next = char_after(hi);
        }
        if let Some(start) = next {
            out.push((start, char::MAX));
        }
        self.ranges = out;
    }

    /// Whether `c` is a member (binary search).
    pub(crate) fn contains(&self, c: char) -> bool {
        self.ranges
            .binary_search_by(|&(lo, hi)| {
                if hi < c {
                    std::cmp::Ordering::Less
                } else if lo > c {
                    std::cmp::Ordering::Greater
                } else {
                    std::cmp::Ordering::Equal
                }
            })
            .is_ok()
    }

    /// The member ranges, sorted and disjoint.
    pub(crate) fn ranges(&self) -> &[(char, char)] {
        &self.ranges
    }

    /// The single member, when the set has exactly one.
    pub(crate) fn as_single(&self) -> Option<char> {
        match self.ranges.as_slice() {
            [(lo, hi)] if lo == hi => Some(*lo),
            _ => None,
        }
    }

    /// Closes the set under simple case folding: afterwards it holds every
    /// character whose fold equals the fold of a member.
    pub(crate) fn case_fold(&mut self) {
        let mut folds = ClassSet::new();
        for &(lo, hi) in &self.ranges {
            let hi_cased = (hi as u32).min(CASED_END - 1);
            for code in (lo as u32)..=hi_cased {
                if let Some(c) = char::from_u32(code) {
                    let f = fold(c);
                    if f != c {
                        folds.ranges.push((f, f));
                    }
                }
            }
        }
        folds.normalize();
        let mut added = folds.clone();
        for &(c, f) in fold_table() {
            if self.contains(f) || folds.contains(f) {
                added.ranges.push((c, c));
            }
        }
        added.normalize();
        self.union(&added);
    }

    fn normalize(&mut self) {
        self.ranges.sort_unstable();
        let mut out: Vec<(char, char)> = Vec::with_capacity(self.ranges.len());
        for &(lo, hi) in &self.ranges {
            if let Some(last) = out.last_mut()
                && (last.1 >= lo || char_after(last.1) == Some(lo))
            {
                if hi > last.1 {
                    last.1 = hi;
                }
                continue;
            }
            out.push((lo, hi));
        }
        self.ranges = out;
    }
}

/// The next scalar value after `c`, skipping the surrogate gap.
fn char_after(c: char) -> Option<char> {
    match c {
        '\u{D7FF}' => Some('\u{E000}'),
        char::MAX => None,
        _ => char::from_u32(c as u32 + 1),
    }
}

/// The scalar value before `c`, skipping the surrogate gap.
fn char_before(c: char) -> Option<char> {
    match c {
        '\u{E000}' => Some('\u{D7FF}'),
        '\0' => None,
        _ => char::from_u32(c as u32 - 1),
    }
}

/// Simple case folding: the lowercase of the uppercase, keeping only
/// one-to-one mappings (so `ß` folds to itself, `K` (Kelvin) and `K` to `k`).
pub(crate) fn fold(c: char) -> char {
    if c.is_ascii() {
        return c.to_ascii_lowercase();
    }
    if c == '\u{130}' || c == '\u{131}' {
        // Dotted and dotless i have no simple fold partner in PCRE2.
        return c;
    }
    let upper = single(c.to_uppercase()).unwrap_or(c);
    single(upper.to_lowercase()).unwrap_or(upper)
}

fn single(mut it: impl Iterator<Item = char>) -> Option<char> {
    let first = it.next()?;
    match it.next() {
        None => Some(first),
        Some(_) => None,
    }
}

/// Every cased character whose fold differs from itself, with its fold.
fn fold_table() -> &'static [(char, char)] {
    static TABLE: OnceLock<Vec<(char, char)>> = OnceLock::new();
    TABLE.get_or_init(|| {
        (0..CASED_END)
            .filter_map(char::from_u32)
            .filter_map(|c| {
                let f = fold(c);
                (f != c).then_some((c, f))
            })
            .collect()
    })
}

/// The PCRE shorthand classes (without UCP they are ASCII-only, except `\h`
/// and `\v`, which PCRE2 defines over Unicode).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Perl {
    Digit,
    Word,
    Space,
    HorizontalSpace,
    VerticalSpace,
}

/// The set behind a shorthand class, before any negation.
pub(crate) fn perl_set(kind: Perl) -> ClassSet {
    let mut set = ClassSet::new();
    let ranges: &[(char, char)] = match kind {
        Perl::Digit => &[('0', '9')],
        Perl::Word => &[('0', '9'), ('A', 'Z'), ('_', '_'), ('a', 'z')],
        Perl::Space => &[('\t', '\r'), (' ', ' ')],
        Perl::HorizontalSpace => &[
            ('\t', '\t'),
            (' ', ' '),
            ('\u{a0}', '\u{a0}'),
            ('\u{1680}', '\u{1680}'),
            ('\u{180e}', '\u{180e}'),
            ('\u{2000}', '\u{200a}'),
            ('\u{202f}', '\u{202f}'),
            ('\u{205f}', '\u{205f}'),
            ('\u{3000}', '\u{3000}'),
        ],
        Perl::VerticalSpace => &[('\n', '\r'), ('\u{85}', '\u{85}'), ('\u{2028}', '\u{2029}')],
    };
    set.ranges.extend_from_slice(ranges);
    set.normalize();
    set
}

/// The set behind a POSIX class name (`alpha` in `[[:alpha:]]`), ASCII-only as
/// in PCRE2 without UCP.
pub(crate) fn posix_set(name: &str) -> Option<ClassSet> {
    let ranges: &[(char, char)] = match name {
        "alnum" => &[('0', '9'), ('A', 'Z'), ('a', 'z')],
        "alpha" => &[('A', 'Z'), ('a', 'z')],
        "ascii" => &[('\0', '\x7f')],
        "blank" => &[('\t', '\t'), (' ', ' ')],
        "cntrl" => &[('\0', '\x1f'), ('\x7f', '\x7f')],
        "digit" => &[('0', '9')],
        "graph" => &[('!', '~')],
        "lower" => &[('a', 'z')],
        "print" => &[(' ', '~')],
        "punct" => &[('!', '/'), (':', '@'), ('[', '`'), ('{', '~')],
        "space" => &[('\t', '\r'), (' ', ' ')],
        "upper" => &[('A', 'Z')],
        "word" => &[('0', '9'), ('A', 'Z'), ('_', '_'), ('a', 'z')],
        "xdigit" => &[('0', '9'), ('A', 'F'), ('a', 'f')],
        _ => return None,
    };
    let mut set = ClassSet::new();
    set.ranges.extend_from_slice(ranges);
    set.normalize();
    Some(set)
}

/// Whether `c` is an ASCII word character (`\w` without UCP).
pub(crate) fn is_word(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

/// A compiled set for matching: an ASCII bitmap in front of the ranges.
#[derive(Debug, Clone)]
pub(crate) struct CharClass {
    ascii: u128,
    set: ClassSet,
}

impl CharClass {
    pub(crate) fn new(set: ClassSet) -> Self {
        let mut ascii = 0u128;
        for b in 0u8..128 {
            if set.contains(char::from(b)) {
                ascii |= 1 << b;
            }
        }
        CharClass { ascii, set }
    }

    /// The member ranges.
    pub(crate) fn ranges(&self) -> &[(char, char)] {
        &self.set.ranges
    }

    /// Whether `c` is a member.
    #[inline]
    pub(crate) fn matches(&self, c: char) -> bool {
        let code = c as u32;
        if code < 128 {
            self.ascii & (1u128 << code) != 0
        } else {
            self.set.contains(c)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn negate_twice_is_identity() {
        let mut set = ClassSet::new();
        set.push('a', 'c');
        set.push('\u{D000}', '\u{E100}');
        let before = set.clone();
        set.negate();
        assert!(!set.contains('b'));
        assert!(set.contains('\u{10FFFF}'));
        set.negate();
        assert_eq!(set, before);
    }

    #[test]
    fn case_fold_reaches_kelvin_and_long_s() {
        let mut set = ClassSet::single('k');
        set.case_fold();
        assert!(set.contains('K'));
        assert!(set.contains('\u{212A}'));
        let mut set = ClassSet::single('S');
        set.case_fold();
        assert!(set.contains('s'));
        assert!(set.contains('\u{17F}'));
    }
}
