//! Facts about a pattern used for fast paths: start anchoring, a literal prefix, a pure literal, the needles `is_match` scans for.

use crate::ast::{GroupKind, Look, Node};
use crate::class::ClassSet;
use crate::needles::{NEEDLE_LEN_MAX, NEEDLES_MAX, NeedleByte, Needles};

/// The worst per-needle [`Needles::score_max`] worth scanning for: above
/// it, candidates turn up so often in typical text that stopping at each
/// costs more than the DFA stepping through.
const NEEDLE_SCORE_MAX: u32 = 240;

/// A set of at most this many characters becomes one needle per character.
const SET_CHARS_MAX: u32 = 4;

/// Whether every match must start at offset 0 (`\A`, or `^` without multiline,
/// heading every alternative).
pub(crate) fn is_anchored_start(node: &Node) -> bool {
    match node {
        Node::Assert(Look::TextStart) => true,
        Node::Concat(nodes) => nodes.first().is_some_and(is_anchored_start),
        Node::Alternate(nodes) => !nodes.is_empty() && nodes.iter().all(is_anchored_start),
        Node::Group {
            kind: GroupKind::Capture(_) | GroupKind::NonCapture | GroupKind::Atomic,
            node,
        } => is_anchored_start(node),
        Node::Repeat { node, min, .. } => *min >= 1 && is_anchored_start(node),
        _ => false,
    }
}

/// The characters every match starts with (exact, case-sensitive), after
/// any leading start anchor.
pub(crate) fn prefix(node: &Node) -> String {
    let mut out = String::new();
    let _complete = collect(node, &mut out, true);
    out
}

/// Appends the literal prefix of `node` to `out`; returns whether the whole
/// node was a literal (so the caller may continue with what follows).
fn collect(node: &Node, out: &mut String, at_start: bool) -> bool {
    match node {
        Node::Char(c) => {
            out.push(*c);
            true
        }
        Node::Empty => true,
        Node::Assert(Look::TextStart) => at_start && out.is_empty(),
        // Other assertions consume nothing: what follows still starts the match.
        Node::Assert(_) => true,
        Node::Concat(nodes) => {
            for n in nodes {
                if !collect(n, out, at_start) {
                    return false;
                }
            }
            true
        }
        Node::Group {
            kind: GroupKind::Capture(_) | GroupKind::NonCapture,
            node,
        } => collect(node, out, at_start),
        Node::Repeat { node, min, max, .. } if *min >= 1 => {
            let whole = collect(node, out, at_start);
            whole && *max == Some(*min) && *min == 1
        }
        _ => false,
    }
}

/// The text of a pattern that is nothing but literal characters (no groups,
/// anchors or classes), for a plain substring search.
pub(crate) fn pure_literal(node: &Node) -> Option<String> {
    match node {
        Node::Char(c) => Some(c.to_string()),
        Node::Concat(nodes) => nodes
            .iter()
            .map(|n| match n {
                Node::Char(c) => Some(*c),
                _ => None,
            })
            .collect(),
        _ => None,
    }
}

/// The items of `node` read as a sequence: concatenations and groups
/// flattened (for `is_match`, where groups capture nothing).
fn sequence(node: &Node) -> Vec<&Node> {
    match node {
        Node::Concat(nodes) => nodes.iter().flat_map(sequence).collect(),
        Node::Group {
            kind: GroupKind::Capture(_) | GroupKind::NonCapture,
            node,
        } => sequence(node),
        _ => vec![node],
    }
}

/// For `is_match` only: `node` without the optional repeats (`min` 0) that
/// lead or trail its sequence, or `None` if there are none. `R*T` matches
/// somewhere exactly when `T` does (take `R*` empty; conversely a match of
/// `R*T` ends with one of `T`), and likewise `TR*`; so the answer is the
/// same, and the shorter pattern reaches a literal or a match sooner.
pub(crate) fn without_optional_ends(node: &Node) -> Option<Node> {
    let items = sequence(node);
    let optional = |n: &&&Node| matches!(n, Node::Repeat { min: 0, .. });
    let lead = items.iter().take_while(optional).count();
    let trail = items.iter().skip(lead).rev().take_while(optional).count();
    if lead == 0 && trail == 0 {
        return None;
    }
    let kept = items.get(lead..items.len() - trail)?;
    Some(Node::Concat(kept.iter().map(|&n| n.clone()).collect()))
}

/// Needles for `is_match` on an unanchored pattern: some needle occurs in
/// every match, starting at most `back` bytes (the second value) after the
/// match starts. The needles are the literal prefixes of a suffix of the
/// pattern's sequence whose items before it span a bounded number of bytes
/// (`\d{3}-\d{4}`: the needle `-`, at most 3 bytes in); the rarest such set
/// wins, the earliest on a tie.
pub(crate) fn inner_needles(node: &Node) -> Option<(Needles, usize)> {
    let items = sequence(node);
    let mut back = 0usize;
    let mut best: Option<(Needles, usize)> = None;
    for (k, item) in items.iter().enumerate() {
        let candidate = items
            .get(k..)
            .and_then(literal_prefixes)
            .and_then(Needles::new)
            .filter(|n| n.score_max() <= NEEDLE_SCORE_MAX);
        if let Some(needles) = candidate
            && best
                .as_ref()
                .is_none_or(|(b, _)| needles.score() < b.score())
        {
            best = Some((needles, back));
        }
        match max_bytes(item).and_then(|n| back.checked_add(n)) {
            Some(sum) => back = sum,
            None => break,
        }
    }
    best
}

/// The literals one of which starts every match of the sequence `items`;
/// `None` if a match may start with anything.
fn literal_prefixes(items: &[&Node]) -> Option<Vec<Vec<NeedleByte>>> {
    let (set, _) = concat_literals(items.iter().copied());
    (!set.iter().any(Vec::is_empty)).then_some(set)
}

/// The literal prefixes of a concatenation, and whether they are exact
/// (every match is one of them).
fn concat_literals<'n>(items: impl Iterator<Item = &'n Node>) -> (Vec<Vec<NeedleByte>>, bool) {
    let mut acc: Vec<Vec<NeedleByte>> = vec![Vec::new()];
    for item in items {
        let Some((set, exact)) = literals(item) else {
            return (acc, false);
        };
        let Some(crossed) = cross(&acc, &set) else {
            return (acc, false);
        };
        acc = crossed;
        if !exact {
            return (acc, false);
        }
    }
    (acc, true)
}

/// Every concatenation of a member of `left` with one of `right`, unless
/// that makes too many needles or too long a needle.
fn cross(left: &[Vec<NeedleByte>], right: &[Vec<NeedleByte>]) -> Option<Vec<Vec<NeedleByte>>> {
    if left.len().checked_mul(right.len())? > NEEDLES_MAX {
        return None;
    }
    let mut out = Vec::new();
    for l in left {
        for r in right {
            if l.len() + r.len() > NEEDLE_LEN_MAX {
                return None;
            }
            let joined: Vec<NeedleByte> = l.iter().chain(r).copied().collect();
            if !out.contains(&joined) {
                out.push(joined);
            }
        }
    }
    Some(out)
}

/// The literal prefixes of `node` (one of them starts every match) and
/// whether they are exact; `None` when there is no small such set.
fn literals(node: &Node) -> Option<(Vec<Vec<NeedleByte>>, bool)> {
    match node {
        Node::Empty | Node::Assert(_) => Some((vec![Vec::new()], true)),
        Node::Char(c) => Some((vec![char_bytes(*c)], true)),
        Node::Set(set) => set_literals(set).map(|s| (s, true)),
        Node::Group {
            kind: GroupKind::Capture(_) | GroupKind::NonCapture,
            node,
        } => literals(node),
        Node::Concat(nodes) => Some(concat_literals(nodes.iter())),
        Node::Alternate(nodes) => {
            let mut out: Vec<Vec<NeedleByte>> = Vec::new();
            let mut exact = true;
            for n in nodes {
                let (set, e) = literals(n)?;
                exact &= e;
                for needle in set {
                    if !out.contains(&needle) {
                        out.push(needle);
                    }
                }
            }
            (out.len() <= NEEDLES_MAX).then_some((out, exact))
        }
        Node::Repeat { node, min, .. } if *min >= 1 => {
            let (set, _) = literals(node)?;
            Some((set, false))
        }
        Node::Repeat { .. } => Some((vec![Vec::new()], false)),
        Node::Group { .. } | Node::Backref { .. } => None,
    }
}

/// One needle per member of a small set; a set of the two cases of one
/// ASCII letter is one caseless needle.
fn set_literals(set: &ClassSet) -> Option<Vec<Vec<NeedleByte>>> {
    if let [(upper, upper_end), (lower, lower_end)] = set.ranges()
        && upper == upper_end
        && lower == lower_end
        && upper.is_ascii_uppercase()
        && upper.to_ascii_lowercase() == *lower
    {
        return Some(vec![vec![NeedleByte::caseless(*upper as u8)?]]);
    }
    let mut count = 0u32;
    let mut out = Vec::new();
    for &(lo, hi) in set.ranges() {
        count = count.checked_add(hi as u32 - lo as u32 + 1)?;
        if count > SET_CHARS_MAX {
            return None;
        }
        out.extend((lo..=hi).map(char_bytes));
    }
    Some(out)
}

fn char_bytes(c: char) -> Vec<NeedleByte> {
    c.to_string().bytes().map(NeedleByte::exact).collect()
}

/// The most bytes a match of `node` spans (`None`: unbounded).
fn max_bytes(node: &Node) -> Option<usize> {
    match node {
        Node::Empty | Node::Assert(_) => Some(0),
        Node::Char(c) => Some(c.len_utf8()),
        Node::Set(set) => Some(set.ranges().last().map_or(0, |&(_, hi)| hi.len_utf8())),
        Node::Group {
            kind: GroupKind::Look { .. },
            ..
        } => Some(0),
        Node::Group { node, .. } => max_bytes(node),
        Node::Concat(nodes) => nodes
            .iter()
            .try_fold(0usize, |sum, n| sum.checked_add(max_bytes(n)?)),
        Node::Alternate(nodes) => nodes
            .iter()
            .try_fold(0usize, |most, n| Some(most.max(max_bytes(n)?))),
        Node::Repeat { node, max, .. } => {
            max_bytes(node)?.checked_mul(usize::try_from((*max)?).ok()?)
        }
        Node::Backref { .. } => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse::{Mode, parse};

    fn node(pattern: &str) -> Node {
        parse(pattern, Mode::default()).expect("valid").node
    }

    #[test]
    fn prefix_stops_at_the_first_non_literal() {
        assert_eq!(prefix(&node(r"^abc\d")), "abc");
        assert_eq!(prefix(&node(r"\bstatus\b")), "status");
        assert_eq!(prefix(&node("ab*c")), "a");
        assert_eq!(prefix(&node("(?:ab)+c")), "ab");
        assert_eq!(prefix(&node("a|b")), "");
    }

    #[test]
    fn pure_literals_are_only_plain_characters() {
        assert_eq!(pure_literal(&node("needle")), Some("needle".to_string()));
        assert_eq!(pure_literal(&node("ne.dle")), None);
        assert_eq!(pure_literal(&node("(needle)")), None);
    }

    #[test]
    fn inner_needles_reach_back_over_bounded_items() {
        let (needles, back) = inner_needles(&node(r"\d{3}-\d{4}")).expect("needles");
        assert_eq!(back, 3);
        assert_eq!(needles.find(b"12 555-1234", 0), Some(6));
        // `.` spans up to four bytes, so two of them reach eight bytes back.
        let (_, back) = inner_needles(&node(".{2}-x")).expect("needles");
        assert_eq!(back, 8);
        // Unbounded before the literal, nothing to start with: no needles.
        assert!(inner_needles(&node(r"\d+-\d")).is_none());
        assert!(inner_needles(&node("a*")).is_none());
        let (needles, back) = inner_needles(&node("(?i)error|apple")).expect("needles");
        assert_eq!(back, 0);
        assert_eq!(needles.find(b"an ErRoR", 0), Some(3));
        // A literal prefix is preferred to an equally rare inner literal.
        let (_, back) = inner_needles(&node(r"\bstatus\b")).expect("needles");
        assert_eq!(back, 0);
    }

    #[test]
    fn optional_ends_are_stripped_for_is_match() {
        let chars = |text: &str| Node::Concat(text.chars().map(Node::Char).collect());
        assert_eq!(without_optional_ends(&node(".*foo.*")), Some(chars("foo")));
        assert_eq!(
            without_optional_ends(&node("(?:x?)(foo)")),
            Some(chars("foo"))
        );
        assert_eq!(without_optional_ends(&node(".*")), Some(chars("")));
        assert_eq!(without_optional_ends(&node("foo")), None);
        assert_eq!(without_optional_ends(&node("a.*b")), None);
    }
}
