//! The syntax tree the parser produces and the compiler consumes.

use crate::class::ClassSet;

/// A zero-width assertion about the current position.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Look {
    /// `\A`, and `^` without multiline.
    TextStart,
    /// `^` with multiline: the start, or after a newline that is not the last character.
    LineStart,
    /// `\z`.
    TextEnd,
    /// `\Z`, and `$` without multiline: the end, or before a final newline.
    TextEndNewline,
    /// `$` with multiline: the end, or before any newline.
    LineEnd,
    /// `\b` over ASCII word characters.
    WordBoundary,
    /// `\B`.
    NotWordBoundary,
}

/// How a quantifier chooses between more and fewer repetitions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Greed {
    Greedy,
    Lazy,
    Possessive,
}

/// What kind of group a parenthesis opens.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum GroupKind {
    /// A capturing group with its number (1-based).
    Capture(u32),
    /// `(?:...)` and flag groups.
    NonCapture,
    /// `(?>...)`.
    Atomic,
    /// `(?=...)`, `(?!...)`, `(?<=...)`, `(?<!...)`.
    Look { ahead: bool, negate: bool },
}

/// The least and greatest number of characters a node matches (`None`:
/// unbounded or unknown).
pub(crate) type Width = (u32, Option<u32>);

/// A node of the syntax tree. Flags are resolved at parse time: each node
/// carries the caselessness and dotall state that applied where it was written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Node {
    Empty,
    /// A set of characters (a literal, a class, `.`); caseless closure applied.
    Set(ClassSet),
    /// A single character literal matched exactly.
    Char(char),
    Assert(Look),
    Group {
        kind: GroupKind,
        node: Box<Node>,
    },
    Concat(Vec<Node>),
    Alternate(Vec<Node>),
    Repeat {
        node: Box<Node>,
        min: u32,
        max: Option<u32>,
        greed: Greed,
    },
    Backref {
        group: u32,
        caseless: bool,
    },
}

impl Node {
    /// The least and greatest number of characters a match of this node
    /// spans (`None` for unbounded or unknown). A backreference spans what
    /// its group spans, per `groups` (indexed by group number - 1).
    pub(crate) fn width(&self, groups: &[Width]) -> Width {
        match self {
            Node::Empty | Node::Assert(_) => (0, Some(0)),
            Node::Set(_) | Node::Char(_) => (1, Some(1)),
            Node::Group { kind, node } => match kind {
                GroupKind::Look { .. } => (0, Some(0)),
                _ => node.width(groups),
            },
            Node::Concat(nodes) => nodes.iter().fold((0, Some(0)), |(lo, hi), n| {
                let (nlo, nhi) = n.width(groups);
                let hi = match (hi, nhi) {
                    (Some(a), Some(b)) => a.checked_add(b),
                    _ => None,
                };
                (lo.saturating_add(nlo), hi)
            }),
            Node::Alternate(nodes) => {
                let mut lo = u32::MAX;
                let mut hi = Some(0u32);
                for n in nodes {
                    let (nlo, nhi) = n.width(groups);
                    lo = lo.min(nlo);
                    hi = match (hi, nhi) {
                        (Some(a), Some(b)) => Some(a.max(b)),
                        _ => None,
                    };
                }
                if nodes.is_empty() {
                    (0, Some(0))
                } else {
                    (lo, hi)
                }
            }
            Node::Repeat { node, min, max, .. } => {
                if let Node::Group {
                    kind: GroupKind::Look { ahead: true, .. },
                    ..
                } = **node
                {
                    // PCRE2 treats a repeated lookahead as repeated at most once;
                    // a repeated lookbehind with no upper bound counts as unbounded.
                    return (0, Some(0));
                }
                let (lo, hi) = node.width(groups);
                let hi = match (hi, max) {
                    (Some(h), Some(m)) => h.checked_mul(*m),
                    _ => None,
                };
                (lo.saturating_mul(*min), hi)
            }
            Node::Backref { group, .. } => (*group as usize)
                .checked_sub(1)
                .and_then(|i| groups.get(i))
                .copied()
                .unwrap_or((0, None)),
        }
    }

    /// Whether the node needs the backtracker (backreferences, lookaround,
    /// atomic groups, possessive quantifiers).
    pub(crate) fn needs_backtracking(&self) -> bool {
        match self {
            Node::Empty | Node::Set(_) | Node::Char(_) | Node::Assert(_) => false,
            Node::Backref { .. } => true,
            Node::Group { kind, node } => match kind {
                GroupKind::Atomic | GroupKind::Look { .. } => true,
                _ => node.needs_backtracking(),
            },
            Node::Concat(nodes) | Node::Alternate(nodes) => {
                nodes.iter().any(Node::needs_backtracking)
            }
            Node::Repeat { node, greed, .. } => {
                *greed == Greed::Possessive || node.needs_backtracking()
            }
        }
    }
}

impl Look {
    /// Whether the assertion holds at byte offset `at` of `subject`.
    pub(crate) fn holds(self, subject: &str, at: usize) -> bool {
        let before = subject.get(..at).and_then(|s| s.chars().next_back());
        let after = subject.get(at..).and_then(|s| s.chars().next());
        let len = subject.len();
        match self {
            Look::TextStart => at == 0,
            Look::LineStart => at == 0 || (before == Some('\n') && at < len),
            Look::TextEnd => at == len,
            Look::TextEndNewline => at == len || (at + 1 == len && after == Some('\n')),
            Look::LineEnd => at == len || after == Some('\n'),
            Look::WordBoundary | Look::NotWordBoundary => {
                let word_before = before.is_some_and(crate::class::is_word);
                let word_after = after.is_some_and(crate::class::is_word);
                (word_before != word_after) == (self == Look::WordBoundary)
            }
        }
    }
}
