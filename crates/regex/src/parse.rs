//! The pattern parser: PCRE2 syntax to a [`Node`] tree, with PCRE-like errors at byte offsets.
//!
//! The pattern is outside input, so this module never indexes a slice: every
//! read goes through [`Parser::peek`] and friends, which return `Option`.
#![deny(clippy::indexing_slicing)]

use crate::ast::{Greed, GroupKind, Look, Node, Width};
use crate::class::{ClassSet, Perl, perl_set, posix_set};
use crate::error::RegexError;
use crate::limits::{GROUP_NAME_LEN_MAX, LOOKBEHIND_LEN_MAX, NESTING_DEPTH_MAX, REPEAT_MAX};

/// The options that apply at a point of the pattern; inline flags change them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Mode {
    pub(crate) caseless: bool,
    pub(crate) multiline: bool,
    pub(crate) dotall: bool,
    pub(crate) extended: bool,
    pub(crate) no_auto_capture: bool,
    pub(crate) ungreedy: bool,
}

/// A parsed pattern.
#[derive(Debug)]
pub(crate) struct Parsed {
    pub(crate) node: Node,
    /// Number of capturing groups, not counting the whole match.
    pub(crate) group_count: u32,
    /// Named groups and their numbers.
    pub(crate) names: Vec<(String, u32)>,
    /// The width of each capturing group (index = group number - 1).
    pub(crate) group_widths: Vec<Width>,
}

/// Parses `pattern` under the starting `mode`.
pub(crate) fn parse(pattern: &str, mode: Mode) -> Result<Parsed, RegexError> {
    let mut parser = Parser::new(pattern, mode, Vec::new());
    let node = parser.parse_top()?;
    if parser.unresolved_names.is_empty() {
        return parser.finish(node);
    }
    // Forward references by name: parse again knowing every group's name.
    let names = std::mem::take(&mut parser.names);
    let mut parser = Parser::new(pattern, mode, names);
    let node = parser.parse_top()?;
    if let Some(&(_, offset)) = parser.unresolved_names.first() {
        return Err(syntax("reference to non-existent subpattern", offset));
    }
    parser.finish(node)
}

fn syntax(message: &'static str, offset: usize) -> RegexError {
    RegexError::Syntax { message, offset }
}

fn unsupported(feature: &'static str, offset: usize) -> RegexError {
    RegexError::Unsupported { feature, offset }
}

struct Parser {
    chars: Vec<char>,
    offsets: Vec<usize>,
    len: usize,
    i: usize,
    mode: Mode,
    depth: usize,
    group_count: u32,
    names: Vec<(String, u32)>,
    known_names: Vec<(String, u32)>,
    unresolved_names: Vec<(String, usize)>,
    /// Numeric backreferences and where they were written, checked at the end.
    backrefs: Vec<(u32, usize)>,
    /// Where each lookbehind was opened, in pre-order.
    lookbehinds: Vec<usize>,
}

/// What an escape sequence stands for.
enum Escape {
    Char(char),
    Set(ClassSet),
    Assert(Look),
    Backref(u32),
    NamedBackref(String),
    /// `\Q`, `\E`: quoting changes, handled by the caller.
    QuoteStart,
    QuoteEnd,
    /// `\R`: any newline sequence, atomically.
    Newline,
}

impl Parser {
    fn new(pattern: &str, mode: Mode, known_names: Vec<(String, u32)>) -> Self {
        let (offsets, chars) = pattern.char_indices().unzip();
        Parser {
            chars,
            offsets,
            len: pattern.len(),
            i: 0,
            mode,
            depth: 0,
            group_count: 0,
            names: Vec::new(),
            known_names,
            unresolved_names: Vec::new(),
            backrefs: Vec::new(),
            lookbehinds: Vec::new(),
        }
    }

    fn finish(self, node: Node) -> Result<Parsed, RegexError> {
        for &(group, offset) in &self.backrefs {
            if group > self.group_count {
                return Err(syntax("reference to non-existent subpattern", offset));
            }
        }
        let mut group_widths = vec![(0, None); self.group_count as usize];
        measure_groups(&node, &mut group_widths);
        let mut lookbehinds = self.lookbehinds.iter().copied();
        check_lookbehinds(&node, &group_widths, &mut Vec::new(), &mut lookbehinds)?;
        Ok(Parsed {
            node,
            group_count: self.group_count,
            names: self.names,
            group_widths,
        })
    }

    fn peek(&self) -> Option<char> {
        self.chars.get(self.i).copied()
    }

    fn peek_at(&self, ahead: usize) -> Option<char> {
        self.chars.get(self.i + ahead).copied()
    }

    /// Byte offset of the current character (the pattern length at the end).
    fn offset(&self) -> usize {
        self.offset_of(self.i)
    }

    fn offset_of(&self, index: usize) -> usize {
        self.offsets.get(index).copied().unwrap_or(self.len)
    }

    fn bump(&mut self) -> Option<char> {
        let c = self.peek()?;
        self.i += 1;
        Some(c)
    }

    fn eat(&mut self, c: char) -> bool {
        if self.peek() == Some(c) {
            self.i += 1;
            true
        } else {
            false
        }
    }

    fn parse_top(&mut self) -> Result<Node, RegexError> {
        let node = self.parse_alternation()?;
        if self.peek() == Some(')') {
            return Err(syntax("unmatched closing parenthesis", self.offset()));
        }
        Ok(node)
    }

    /// Alternatives up to a `)` or the end (neither consumed).
    fn parse_alternation(&mut self) -> Result<Node, RegexError> {
        let mut branches = vec![self.parse_concat()?];
        while self.eat('|') {
            branches.push(self.parse_concat()?);
        }
        Ok(if branches.len() == 1 {
            branches.pop().unwrap_or(Node::Empty)
        } else {
            Node::Alternate(branches)
        })
    }

    /// Skips whitespace and `#` comments in extended mode.
    fn skip_extended(&mut self) {
        if !self.mode.extended {
            return;
        }
        loop {
            match self.peek() {
                Some(c) if is_pattern_space(c) => self.i += 1,
                Some('#') => {
                    while let Some(c) = self.bump() {
                        if c == '\n' {
                            break;
                        }
                    }
                }
                _ => return,
            }
        }
    }

    fn parse_concat(&mut self) -> Result<Node, RegexError> {
        let mut items = Vec::new();
        loop {
            self.skip_extended();
            let start = self.offset();
            let Some(c) = self.peek() else { break };
            if c == '|' || c == ')' {
                break;
            }
            let atom = match self.parse_atom(&mut items)? {
                Some(atom) => atom,
                None => continue,
            };
            let atom = self.parse_quantifiers(atom, start)?;
            items.push(atom);
        }
        Ok(match items.len() {
            0 => Node::Empty,
            1 => items.pop().unwrap_or(Node::Empty),
            _ => Node::Concat(items),
        })
    }

    /// One atom, or `None` for constructs that produce nothing (comments,
    /// flag settings, `\E`, quoted text already pushed to `items`).
    fn parse_atom(&mut self, items: &mut Vec<Node>) -> Result<Option<Node>, RegexError> {
        let start = self.offset();
        let Some(c) = self.bump() else {
            return Ok(None);
        };
        let node = match c {
            '(' => return self.parse_group(start),
            '[' => self.parse_class(start)?,
            '.' => {
                let mut set = ClassSet::single('\n');
                if !self.mode.dotall {
                    set.negate();
                } else {
                    set.push('\0', char::MAX);
                }
                Node::Set(set)
            }
            '^' => Node::Assert(if self.mode.multiline {
                Look::LineStart
            } else {
                Look::TextStart
            }),
            '$' => Node::Assert(if self.mode.multiline {
                Look::LineEnd
            } else {
                Look::TextEndNewline
            }),
            '*' | '+' | '?' => {
                return Err(syntax(
                    "quantifier does not follow a repeatable item",
                    start,
                ));
            }
            '{' => {
                self.i -= 1;
                if self.quantifier_braces()?.is_some() {
                    return Err(syntax(
                        "quantifier does not follow a repeatable item",
                        start,
                    ));
                }
                self.i += 1;
                self.literal('{')
            }
            '\\' => match self.parse_escape(false, start)? {
                Escape::Char(c) => self.literal(c),
                Escape::Set(set) => self.set_node(set),
                Escape::Assert(look) => Node::Assert(look),
                Escape::Backref(group) => {
                    self.backrefs.push((group, start));
                    Node::Backref {
                        group,
                        caseless: self.mode.caseless,
                    }
                }
                Escape::NamedBackref(name) => self.named_backref(&name, start),
                Escape::QuoteEnd => return Ok(None),
                Escape::QuoteStart => {
                    self.parse_quoted(items);
                    // The last quoted character takes any quantifier that follows.
                    return Ok(items.pop());
                }
                Escape::Newline => newline_sequence(),
            },
            c => self.literal(c),
        };
        Ok(Some(node))
    }

    /// `\Q...\E`: every character is literal; the last one stays quantifiable.
    fn parse_quoted(&mut self, items: &mut Vec<Node>) {
        while let Some(c) = self.peek() {
            if c == '\\' && self.peek_at(1) == Some('E') {
                self.i += 2;
                return;
            }
            self.i += 1;
            items.push(self.literal(c));
        }
    }

    fn named_backref(&mut self, name: &str, offset: usize) -> Node {
        let found = self
            .names
            .iter()
            .chain(self.known_names.iter())
            .find(|(n, _)| n == name)
            .map(|&(_, g)| g);
        let group = match found {
            Some(group) => group,
            None => {
                self.unresolved_names.push((name.to_string(), offset));
                0
            }
        };
        Node::Backref {
            group,
            caseless: self.mode.caseless,
        }
    }

    fn literal(&self, c: char) -> Node {
        if self.mode.caseless {
            let mut set = ClassSet::single(c);
            set.case_fold();
            if set.as_single().is_none() {
                return Node::Set(set);
            }
        }
        Node::Char(c)
    }

    fn set_node(&self, mut set: ClassSet) -> Node {
        if self.mode.caseless {
            set.case_fold();
        }
        Node::Set(set)
    }

    /// Applies any quantifiers that follow `atom`.
    fn parse_quantifiers(&mut self, atom: Node, start: usize) -> Result<Node, RegexError> {
        let mut atom = atom;
        loop {
            self.skip_extended();
            let at = self.offset();
            let (min, max) = match self.peek() {
                Some('*') => {
                    self.i += 1;
                    (0, None)
                }
                Some('+') => {
                    self.i += 1;
                    (1, None)
                }
                Some('?') => {
                    self.i += 1;
                    (0, Some(1))
                }
                Some('{') => match self.quantifier_braces()? {
                    Some(bounds) => bounds,
                    None => return Ok(atom),
                },
                _ => return Ok(atom),
            };
            if let Node::Assert(_) = atom {
                return Err(syntax("quantifier does not follow a repeatable item", at));
            }
            if let Node::Repeat { .. } = atom {
                return Err(syntax(
                    "quantifier does not follow a repeatable item",
                    self.offset_of(self.i - 1),
                ));
            }
            // Extended mode skips whitespace before a lazy or possessive suffix too.
            self.skip_extended();
            let mut greed = if self.eat('?') {
                Greed::Lazy
            } else if self.eat('+') {
                Greed::Possessive
            } else {
                Greed::Greedy
            };
            if self.mode.ungreedy {
                greed = match greed {
                    Greed::Greedy => Greed::Lazy,
                    Greed::Lazy => Greed::Greedy,
                    Greed::Possessive => Greed::Possessive,
                };
            }
            let _ = start;
            atom = Node::Repeat {
                node: Box::new(atom),
                min,
                max,
                greed,
            };
        }
    }

    /// Parses `{n}`, `{n,}`, `{n,m}` or `{,m}` at the cursor. When the text is
    /// not a quantifier, leaves the cursor alone and returns `None` (the `{`
    /// is then a literal, as in PCRE2).
    fn quantifier_braces(&mut self) -> Result<Option<(u32, Option<u32>)>, RegexError> {
        let save = self.i;
        if !self.eat('{') {
            return Ok(None);
        }
        let min = self.read_decimal();
        let (min, max) = if self.eat(',') {
            let max = self.read_decimal();
            if min.is_none() && max.is_none() {
                self.i = save;
                return Ok(None);
            }
            (min, max)
        } else {
            if min.is_none() {
                self.i = save;
                return Ok(None);
            }
            (min, Some(min.unwrap_or(0)))
        };
        if !self.eat('}') {
            self.i = save;
            return Ok(None);
        }
        let too_big = |n: u64| n > u64::from(REPEAT_MAX);
        if min.is_some_and(too_big) || max.is_some_and(too_big) {
            return Err(syntax(
                "number too big in {} quantifier",
                self.offset_of(self.i - 1),
            ));
        }
        let min = min.unwrap_or(0) as u32;
        let max = max.map(|m| m as u32);
        if let Some(max) = max
            && max < min
        {
            return Err(syntax(
                "numbers out of order in {} quantifier",
                self.offset_of(self.i - 1),
            ));
        }
        Ok(Some((min, max)))
    }

    fn read_decimal(&mut self) -> Option<u64> {
        let mut value: Option<u64> = None;
        while let Some(d) = self.peek().and_then(|c| c.to_digit(10)) {
            self.i += 1;
            value = Some(
                value
                    .unwrap_or(0)
                    .saturating_mul(10)
                    .saturating_add(u64::from(d)),
            );
        }
        value
    }

    fn parse_group(&mut self, start: usize) -> Result<Option<Node>, RegexError> {
        self.depth += 1;
        if self.depth > NESTING_DEPTH_MAX {
            return Err(RegexError::NestingTooDeep { offset: start });
        }
        let result = self.parse_group_inner(start);
        self.depth -= 1;
        result
    }

    fn parse_group_inner(&mut self, start: usize) -> Result<Option<Node>, RegexError> {
        if self.peek() == Some('*') {
            return Err(unsupported("(*VERB) and (*OPTION)", start));
        }
        if !self.eat('?') {
            let kind = if self.mode.no_auto_capture {
                GroupKind::NonCapture
            } else {
                self.group_count += 1;
                GroupKind::Capture(self.group_count)
            };
            return self.group_body(kind).map(Some);
        }
        let at = self.offset();
        let Some(c) = self.bump() else {
            return Err(syntax("missing closing parenthesis", self.len));
        };
        let kind = match c {
            ':' => GroupKind::NonCapture,
            '>' => GroupKind::Atomic,
            '=' => GroupKind::Look {
                ahead: true,
                negate: false,
            },
            '!' => GroupKind::Look {
                ahead: true,
                negate: true,
            },
            '#' => {
                while let Some(c) = self.bump() {
                    if c == ')' {
                        return Ok(None);
                    }
                }
                return Err(syntax("missing ) after (?# comment", self.len));
            }
            '<' if self.eat('=') => {
                self.lookbehinds.push(start);
                GroupKind::Look {
                    ahead: false,
                    negate: false,
                }
            }
            '<' if self.eat('!') => {
                self.lookbehinds.push(start);
                GroupKind::Look {
                    ahead: false,
                    negate: true,
                }
            }
            '<' => self.named_group('>', at)?,
            '\'' => self.named_group('\'', at)?,
            'P' if self.eat('<') => self.named_group('>', at)?,
            'P' if self.eat('=') => {
                let name = self.read_name(')', at)?;
                return Ok(Some(self.named_backref(&name, start)));
            }
            '|' => return Err(unsupported("branch reset group (?|", start)),
            '(' => return Err(unsupported("conditional group", start)),
            'R' | '&' | '+' | '0'..='9' => return Err(unsupported("recursion", start)),
            'P' => return Err(unsupported("recursion", start)),
            _ => {
                self.i -= 1;
                return self.parse_flags(start);
            }
        };
        self.group_body(kind).map(Some)
    }

    fn named_group(&mut self, close: char, at: usize) -> Result<GroupKind, RegexError> {
        let name = self.read_name(close, at)?;
        if self.names.iter().any(|(n, _)| *n == name) {
            return Err(syntax("two named subpatterns have the same name", at));
        }
        self.group_count += 1;
        self.names.push((name, self.group_count));
        Ok(GroupKind::Capture(self.group_count))
    }

    /// A group name up to (and consuming) `close`.
    fn read_name(&mut self, close: char, at: usize) -> Result<String, RegexError> {
        let mut name = String::new();
        while let Some(c) = self.peek() {
            if c == close {
                break;
            }
            if !(c.is_ascii_alphanumeric() || c == '_') {
                return Err(syntax(
                    "syntax error in subpattern name (missing terminator?)",
                    self.offset(),
                ));
            }
            name.push(c);
            self.i += 1;
        }
        if name.is_empty() {
            return Err(syntax("subpattern name expected", self.offset()));
        }
        if name.starts_with(|c: char| c.is_ascii_digit()) {
            return Err(syntax("subpattern name must start with a non-digit", at));
        }
        if name.len() > GROUP_NAME_LEN_MAX {
            return Err(syntax(
                "subpattern name is too long (maximum 32 code units)",
                at,
            ));
        }
        if !self.eat(close) {
            return Err(syntax(
                "syntax error in subpattern name (missing terminator?)",
                self.offset(),
            ));
        }
        Ok(name)
    }

    /// `(?imsxnU-imsxnU)` or `(?flags:...)`.
    fn parse_flags(&mut self, start: usize) -> Result<Option<Node>, RegexError> {
        let mut mode = self.mode;
        let mut on = true;
        loop {
            let at = self.offset();
            let Some(c) = self.bump() else {
                return Err(syntax("missing closing parenthesis", self.len));
            };
            match c {
                'i' => mode.caseless = on,
                'm' => mode.multiline = on,
                's' => mode.dotall = on,
                'x' => mode.extended = on,
                'n' => mode.no_auto_capture = on,
                'U' => mode.ungreedy = on,
                '-' if on => on = false,
                ')' => {
                    // Applies to the rest of the enclosing group.
                    self.mode = mode;
                    return Ok(None);
                }
                ':' => {
                    let outer = self.mode;
                    self.mode = mode;
                    let node = self.group_body(GroupKind::NonCapture);
                    self.mode = outer;
                    return node.map(Some);
                }
                _ => {
                    let _ = start;
                    return Err(syntax("unrecognized character after (? or (?-", at));
                }
            }
        }
    }

    /// The inside of a group through its `)`; restores the mode afterwards.
    fn group_body(&mut self, kind: GroupKind) -> Result<Node, RegexError> {
        let outer = self.mode;
        let node = self.parse_alternation()?;
        self.mode = outer;
        if !self.eat(')') {
            return Err(syntax("missing closing parenthesis", self.len));
        }
        Ok(Node::Group {
            kind,
            node: Box::new(node),
        })
    }

    /// An escape after its backslash. `in_class` selects the class meanings
    /// (`\b` is backspace, digits are octal).
    fn parse_escape(&mut self, in_class: bool, start: usize) -> Result<Escape, RegexError> {
        let Some(c) = self.bump() else {
            return Err(syntax("\\ at end of pattern", start));
        };
        let perl = |kind: Perl, negate: bool| {
            let mut set = perl_set(kind);
            if negate {
                set.negate();
            }
            Escape::Set(set)
        };
        Ok(match c {
            'd' => perl(Perl::Digit, false),
            'D' => perl(Perl::Digit, true),
            'w' => perl(Perl::Word, false),
            'W' => perl(Perl::Word, true),
            's' => perl(Perl::Space, false),
            'S' => perl(Perl::Space, true),
            'h' => perl(Perl::HorizontalSpace, false),
            'H' => perl(Perl::HorizontalSpace, true),
            'v' => perl(Perl::VerticalSpace, false),
            'V' => perl(Perl::VerticalSpace, true),
            'N' if !in_class && self.peek() != Some('{') => {
                let mut set = ClassSet::single('\n');
                set.negate();
                Escape::Set(set)
            }
            'R' if !in_class => Escape::Newline,
            'b' if in_class => Escape::Char('\u{8}'),
            'b' => Escape::Assert(Look::WordBoundary),
            'B' if !in_class => Escape::Assert(Look::NotWordBoundary),
            'A' if !in_class => Escape::Assert(Look::TextStart),
            'z' if !in_class => Escape::Assert(Look::TextEnd),
            'Z' if !in_class => Escape::Assert(Look::TextEndNewline),
            'G' if !in_class => return Err(unsupported("\\G", start)),
            'Q' => Escape::QuoteStart,
            'E' => Escape::QuoteEnd,
            't' => Escape::Char('\t'),
            'n' => Escape::Char('\n'),
            'r' => Escape::Char('\r'),
            'f' => Escape::Char('\u{c}'),
            'e' => Escape::Char('\u{1b}'),
            'a' => Escape::Char('\u{7}'),
            'x' => Escape::Char(self.parse_hex(start)?),
            'o' => Escape::Char(self.parse_braced_octal(start)?),
            'c' => {
                let Some(x) = self.bump() else {
                    return Err(syntax("\\c at end of pattern", start));
                };
                if !x.is_ascii() || x.is_ascii_control() {
                    return Err(syntax(
                        "\\c must be followed by a printable ASCII character",
                        start,
                    ));
                }
                let code = (x.to_ascii_uppercase() as u8) ^ 0x40;
                Escape::Char(char::from(code))
            }
            '0' => Escape::Char(self.parse_octal_digits(0, 2)),
            '1'..='9' if in_class => {
                let d = c.to_digit(8);
                match d {
                    Some(d) => Escape::Char(self.parse_octal_digits(d, 2)),
                    None => return Err(syntax("unrecognized character follows \\", start)),
                }
            }
            '1'..='9' => self.parse_digit_escape(c, start)?,
            'g' if !in_class => self.parse_g_reference(start)?,
            'k' if !in_class => {
                let close = match self.bump() {
                    Some('<') => '>',
                    Some('\'') => '\'',
                    Some('{') => '}',
                    _ => {
                        return Err(syntax(
                            "\\k is not followed by a braced, angle-bracketed, or quoted name",
                            start,
                        ));
                    }
                };
                Escape::NamedBackref(self.read_name(close, start)?)
            }
            'p' | 'P' | 'X' => {
                return Err(unsupported("Unicode properties (\\p, \\P, \\X)", start));
            }
            'K' => return Err(unsupported("\\K", start)),
            'C' => return Err(unsupported("\\C", start)),
            'L' | 'l' | 'U' | 'u' | 'N' => {
                return Err(syntax(
                    "PCRE2 does not support \\F, \\L, \\l, \\N{name}, \\U, or \\u",
                    start,
                ));
            }
            c if c.is_ascii_alphanumeric() => {
                return Err(syntax("unrecognized character follows \\", start));
            }
            c => Escape::Char(c),
        })
    }

    /// `\1`..`\9` and longer numbers: a backreference, or octal when there
    /// are not that many groups so far, as PCRE2 decides.
    fn parse_digit_escape(&mut self, first: char, start: usize) -> Result<Escape, RegexError> {
        let save = self.i;
        self.i -= 1;
        let number = self.read_decimal().unwrap_or(0);
        if number < 10 || first == '8' || first == '9' || number <= u64::from(self.group_count) {
            if number > u64::from(REPEAT_MAX) {
                return Err(syntax("subpattern number is too big", start));
            }
            return Ok(Escape::Backref(number as u32));
        }
        self.i = save;
        let d = first.to_digit(8).unwrap_or(0);
        Ok(Escape::Char(self.parse_octal_digits(d, 2)))
    }

    /// Up to `more` further octal digits after a first digit value `value`.
    fn parse_octal_digits(&mut self, value: u32, more: usize) -> char {
        let mut value = value;
        for _ in 0..more {
            match self.peek().and_then(|c| c.to_digit(8)) {
                Some(d) => {
                    value = value * 8 + d;
                    self.i += 1;
                }
                None => break,
            }
        }
        char::from_u32(value).unwrap_or('\0')
    }

    fn parse_braced_octal(&mut self, start: usize) -> Result<char, RegexError> {
        if !self.eat('{') {
            return Err(syntax("missing opening brace after \\o", start));
        }
        let mut value: u32 = 0;
        let mut digits = 0;
        while let Some(d) = self.peek().and_then(|c| c.to_digit(8)) {
            self.i += 1;
            digits += 1;
            value = value.saturating_mul(8).saturating_add(d);
        }
        if digits == 0 || !self.eat('}') {
            return Err(syntax("digits missing in \\x{} or \\o{} or \\N{U+}", start));
        }
        code_point(value, start)
    }

    fn parse_hex(&mut self, start: usize) -> Result<char, RegexError> {
        if self.eat('{') {
            let mut value: u32 = 0;
            let mut digits = 0;
            while let Some(d) = self.peek().and_then(|c| c.to_digit(16)) {
                self.i += 1;
                digits += 1;
                value = value.saturating_mul(16).saturating_add(d);
            }
            if digits == 0 {
                return Err(syntax("digits missing in \\x{} or \\o{} or \\N{U+}", start));
            }
            if !self.eat('}') {
                return Err(syntax(
                    "non-hex character in \\x{} (closing brace missing?)",
                    start,
                ));
            }
            return code_point(value, start);
        }
        let mut value = 0;
        for _ in 0..2 {
            match self.peek().and_then(|c| c.to_digit(16)) {
                Some(d) => {
                    value = value * 16 + d;
                    self.i += 1;
                }
                None => break,
            }
        }
        code_point(value, start)
    }

    /// `\gN`, `\g{N}`, `\g{-N}`, `\g{name}`, `\g<...>` (the last is a subroutine call).
    fn parse_g_reference(&mut self, start: usize) -> Result<Escape, RegexError> {
        if matches!(self.peek(), Some('<') | Some('\'')) {
            return Err(unsupported("subroutine call \\g<...>", start));
        }
        let braced = self.eat('{');
        let negative = self.eat('-');
        if self.eat('+') {
            return Err(unsupported("relative forward reference", start));
        }
        if braced && !negative && !self.peek().is_some_and(|c| c.is_ascii_digit()) {
            return Ok(Escape::NamedBackref(self.read_name('}', start)?));
        }
        let Some(number) = self.read_decimal() else {
            return Err(syntax("a numbered reference must not be zero", start));
        };
        if braced && !self.eat('}') {
            return Err(syntax(
                "\\g is not followed by a braced, angle-bracketed, or quoted name/number or by a plain number",
                start,
            ));
        }
        if number == 0 {
            return Err(syntax("a numbered reference must not be zero", start));
        }
        let group = if negative {
            let back = u64::from(self.group_count) + 1;
            match back.checked_sub(number) {
                Some(g) if g >= 1 => g,
                _ => return Err(syntax("reference to non-existent subpattern", start)),
            }
        } else {
            number
        };
        if group > u64::from(REPEAT_MAX) {
            return Err(syntax("subpattern number is too big", start));
        }
        Ok(Escape::Backref(group as u32))
    }

    /// A bracketed class; the cursor is after `[`.
    fn parse_class(&mut self, start: usize) -> Result<Node, RegexError> {
        if self.peek() == Some(':') && self.posix_name_ahead().is_some() {
            return Err(syntax(
                "POSIX named classes are supported only within a class",
                start,
            ));
        }
        let negated = self.eat('^');
        let mut set = ClassSet::new();
        let mut first = true;
        loop {
            let at = self.offset();
            let Some(c) = self.bump() else {
                return Err(syntax(
                    "missing terminating ] for character class",
                    self.len,
                ));
            };
            if c == ']' && !first {
                break;
            }
            first = false;
            let lo = match c {
                '[' if self.peek() == Some(':') => {
                    if let Some((name, negate, len)) = self.posix_name_ahead() {
                        let Some(mut posix) = posix_set(&name) else {
                            return Err(syntax("unknown POSIX class name", at));
                        };
                        self.i += len;
                        if negate {
                            posix.negate();
                        }
                        set.union(&posix);
                        self.check_range_after_set(at)?;
                        continue;
                    }
                    '['
                }
                '\\' => match self.parse_escape(true, at)? {
                    Escape::Char(c) => c,
                    Escape::Set(s) => {
                        set.union(&s);
                        self.check_range_after_set(at)?;
                        continue;
                    }
                    Escape::QuoteStart => {
                        self.class_quoted(&mut set);
                        continue;
                    }
                    Escape::QuoteEnd => continue,
                    _ => return Err(syntax("escape sequence is invalid in character class", at)),
                },
                c => c,
            };
            // A range `lo-hi`, unless the `-` is last.
            if self.peek() == Some('-') && self.peek_at(1).is_some_and(|c| c != ']') {
                let save = self.i;
                self.i += 1;
                let hi_at = self.offset();
                let hi = match self.bump() {
                    Some('\\') => match self.parse_escape(true, hi_at)? {
                        Escape::Char(c) => Some(c),
                        Escape::Set(_) => {
                            return Err(syntax("invalid range in character class", hi_at));
                        }
                        _ => None,
                    },
                    Some('[') if self.peek() == Some(':') && self.posix_name_ahead().is_some() => {
                        return Err(syntax("invalid range in character class", hi_at));
                    }
                    Some(c) => Some(c),
                    None => None,
                };
                match hi {
                    Some(hi) if hi < lo => {
                        return Err(syntax("range out of order in character class", hi_at));
                    }
                    Some(hi) => set.push(lo, hi),
                    None => {
                        self.i = save;
                        set.push(lo, lo);
                    }
                }
            } else {
                set.push(lo, lo);
            }
        }
        if self.mode.caseless {
            set.case_fold();
        }
        if negated {
            set.negate();
        }
        Ok(Node::Set(set))
    }

    /// After a class item that is a set, `-` followed by more is an error.
    fn check_range_after_set(&self, at: usize) -> Result<(), RegexError> {
        if self.peek() == Some('-') && self.peek_at(1).is_some_and(|c| c != ']') {
            return Err(syntax("invalid range in character class", at));
        }
        Ok(())
    }

    fn class_quoted(&mut self, set: &mut ClassSet) {
        while let Some(c) = self.bump() {
            if c == '\\' && self.peek() == Some('E') {
                self.i += 1;
                return;
            }
            set.push(c, c);
        }
    }

    /// At `:` after `[`: a POSIX class `:name:]` or `:^name:]`; returns the
    /// name, whether it is negated, and how many characters it spans.
    fn posix_name_ahead(&self) -> Option<(String, bool, usize)> {
        let mut k = 1;
        let negate = self.peek_at(k) == Some('^');
        if negate {
            k += 1;
        }
        let mut name = String::new();
        while let Some(c) = self.peek_at(k) {
            if c.is_ascii_alphabetic() {
                name.push(c);
                k += 1;
            } else {
                break;
            }
        }
        (self.peek_at(k) == Some(':') && self.peek_at(k + 1) == Some(']')).then_some((
            name,
            negate,
            k + 2,
        ))
    }
}

fn code_point(value: u32, start: usize) -> Result<char, RegexError> {
    if (0xD800..=0xDFFF).contains(&value) {
        return Err(syntax(
            "disallowed Unicode code point (>= 0xd800 && <= 0xdfff)",
            start,
        ));
    }
    char::from_u32(value).ok_or_else(|| {
        syntax(
            "character code point value in \\x{} or \\o{} is too large",
            start,
        )
    })
}

/// Whitespace that extended mode skips (PCRE2's list in UTF mode).
fn is_pattern_space(c: char) -> bool {
    matches!(
        c,
        ' ' | '\t'
            | '\n'
            | '\u{b}'
            | '\u{c}'
            | '\r'
            | '\u{85}'
            | '\u{200e}'
            | '\u{200f}'
            | '\u{2028}'
            | '\u{2029}'
    )
}

/// `\R`: `(?>\r\n|[\n\x0b\f\r\x85\x{2028}\x{2029}])`.
fn newline_sequence() -> Node {
    let mut single = ClassSet::new();
    single.push('\n', '\r');
    single.push('\u{85}', '\u{85}');
    single.push('\u{2028}', '\u{2029}');
    Node::Group {
        kind: GroupKind::Atomic,
        node: Box::new(Node::Alternate(vec![
            Node::Concat(vec![Node::Char('\r'), Node::Char('\n')]),
            Node::Set(single),
        ])),
    }
}

/// Records the width of every capturing group, in pre-order so that a
/// backreference to an earlier group sees its width.
fn measure_groups(node: &Node, widths: &mut [Width]) {
    match node {
        Node::Group { kind, node: inner } => {
            measure_groups(inner, widths);
            if let GroupKind::Capture(index) = kind {
                let width = inner.width(widths);
                if let Some(slot) = (*index as usize)
                    .checked_sub(1)
                    .and_then(|i| widths.get_mut(i))
                {
                    *slot = width;
                }
            }
        }
        Node::Concat(nodes) | Node::Alternate(nodes) => {
            for n in nodes {
                measure_groups(n, widths);
            }
        }
        Node::Repeat { node: inner, .. } => measure_groups(inner, widths),
        _ => {}
    }
}

/// Every lookbehind must have a bounded length of at most
/// [`LOOKBEHIND_LEN_MAX`]; `offsets` yields where each was opened, in pre-order.
fn check_lookbehinds(
    node: &Node,
    widths: &[Width],
    open: &mut Vec<u32>,
    offsets: &mut impl Iterator<Item = usize>,
) -> Result<(), RegexError> {
    match node {
        Node::Group { kind, node: inner } => {
            if let GroupKind::Look { ahead: false, .. } = kind {
                let offset = offsets.next().unwrap_or(0);
                // A reference to a group that encloses the lookbehind has no
                // known length yet (PCRE2 rejects it too).
                let mut known = widths.to_vec();
                for &group in open.iter() {
                    if let Some(w) = (group as usize)
                        .checked_sub(1)
                        .and_then(|i| known.get_mut(i))
                    {
                        *w = (0, None);
                    }
                }
                match inner.width(&known) {
                    (_, None) => {
                        return Err(syntax(
                            "length of lookbehind assertion is not limited",
                            offset,
                        ));
                    }
                    (_, Some(max)) if max > LOOKBEHIND_LEN_MAX => {
                        return Err(syntax("lookbehind assertion is too long", offset));
                    }
                    _ => {}
                }
            }
            if let GroupKind::Capture(index) = kind {
                open.push(*index);
            }
            let result = check_lookbehinds(inner, widths, open, offsets);
            if let GroupKind::Capture(_) = kind {
                open.pop();
            }
            result
        }
        Node::Concat(nodes) | Node::Alternate(nodes) => nodes
            .iter()
            .try_for_each(|n| check_lookbehinds(n, widths, open, offsets)),
        Node::Repeat { node: inner, .. } => check_lookbehinds(inner, widths, open, offsets),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn error_of(pattern: &str) -> RegexError {
        parse(pattern, Mode::default()).expect_err(pattern)
    }

    #[test]
    fn errors_carry_pcre_like_messages_and_offsets() {
        assert_eq!(
            error_of("(ab").to_string(),
            "missing closing parenthesis at offset 3"
        );
        assert_eq!(
            error_of("ab)").to_string(),
            "unmatched closing parenthesis at offset 2"
        );
        assert_eq!(
            error_of("a**").to_string(),
            "quantifier does not follow a repeatable item at offset 2"
        );
        assert_eq!(
            error_of("é(?<=a+)").to_string(),
            "length of lookbehind assertion is not limited at offset 2"
        );
    }

    #[test]
    fn unsupported_constructs_say_so() {
        for pattern in [r"\p{L}", "(?R)", "(?(1)a|b)", "(*UTF)a", r"\K", "(?|a)"] {
            assert!(
                matches!(error_of(pattern), RegexError::Unsupported { .. }),
                "{pattern}"
            );
        }
    }

    #[test]
    fn digits_after_backslash_are_backrefs_or_octal_as_in_pcre() {
        let parsed = parse(r"(a)\1\101", Mode::default()).expect("valid");
        let Node::Concat(items) = parsed.node else {
            panic!("concat expected");
        };
        assert_eq!(
            items.get(1),
            Some(&Node::Backref {
                group: 1,
                caseless: false
            })
        );
        assert_eq!(items.get(2), Some(&Node::Char('A')));
    }

    #[test]
    fn inline_flags_last_to_the_end_of_the_group() {
        let parsed = parse("(a(?i)b)c", Mode::default()).expect("valid");
        let Node::Concat(items) = parsed.node else {
            panic!("concat expected");
        };
        assert_eq!(items.get(1), Some(&Node::Char('c')));
    }
}
