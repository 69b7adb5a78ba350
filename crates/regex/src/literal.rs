//! Facts about a pattern used for fast paths: start anchoring, a literal prefix, a pure literal.

use crate::ast::{GroupKind, Look, Node};

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
}
