//! PCRE-compatible regular expressions for MongoDB's `$regex`: an automaton first, a bounded backtracker only when needed.
//!
#![doc = include_str!("../README.md")]
//!
//! MongoDB matches `$regex` with PCRE2 in UTF mode, so PCRE2's syntax and
//! semantics are the specification. The pipeline is
//! `parse` (pattern to syntax tree, errors with byte offsets)
//! → `compile` (tree to a Thompson-NFA program) → one of
//! three matchers:
//!
//! 1. a pure literal pattern is a substring search;
//! 2. a regular pattern runs on the Pike VM (`pikevm`), linear in the
//!    subject, with literal-prefix skipping and start anchoring;
//! 3. a pattern with backreferences, lookaround, atomic groups or possessive
//!    quantifiers runs on the backtracker (`backtrack`), which has a step
//!    budget: a pathological pattern returns
//!    [`RegexError::StepLimitExceeded`] instead of hanging the server.
//!
//! `is_match` on a regular pattern first tries a lazy DFA (`dfa`) built from
//! the same program (less any optional leading or trailing repeat such as
//! `.*`, which cannot change the answer), which costs one table lookup per
//! ASCII byte once warm. While no match is in progress it jumps ahead with a
//! literal prefilter (`needles`): a few literals, one of which every match
//! contains a bounded number of bytes after its start (`ERROR` caselessly,
//! `apple|banana`, the `-` of `\d{3}-\d{4}`), found by a block scan that the
//! compiler vectorises.
//!
//! # Supported syntax
//!
//! Options `i`, `m`, `s`, `x` (and `u`, accepted and redundant); inline
//! `(?imsxnU-imsxnU)` and `(?flags:...)`; literals and escapes (`\t \n \r \f
//! \e \a \0oo \ooo \o{..} \xhh \x{..} \cX \Q..\E`); `.`; classes with ranges,
//! negation and POSIX classes `[[:alpha:]]`, `[[:^digit:]]`; `\d \D \w \W \s \S
//! \h \H \v \V \N \R`; anchors `^ $ \A \z \Z` and `\b \B`; groups: capturing,
//! `(?:..)`, named `(?<n>..)`, `(?'n'..)`, `(?P<n>..)`, atomic `(?>..)`,
//! comments `(?#..)`; alternation; `* + ? {n} {n,} {n,m} {,m}` each greedy,
//! lazy (`?`) or possessive (`+`); backreferences `\1`, `\g{n}`, `\g{-n}`,
//! `\k<n>`, `\k'n'`, `\k{n}`, `(?P=n)`; lookahead and lookbehind (bounded
//! length up to 255 characters, alternatives of different lengths allowed).
//!
//! # Differences from PCRE2 (10.46, UTF mode, no UCP)
//!
//! - Not implemented (a compile error saying so): `\p`/`\P`/`\X` Unicode
//!   properties, `\G`, `\K`, `\C`, recursion and subroutine calls, conditional
//!   groups, branch reset `(?|..)`, backtracking verbs and leading `(*OPTION)`
//!   settings, callouts.
//! - Case-insensitive matching uses simple one-to-one case folding
//!   (lowercase of uppercase) plus closure: `k`, `K` and KELVIN SIGN are one
//!   class, as are `s`, `S` and LONG S. Dotted and dotless i (U+0130,
//!   U+0131) fold only to themselves; PCRE2 lets `ı` match `I` one way.
//! - `find` and `captures` on a regular pattern with a loop whose body can
//!   match empty (`(a|)+`, `(?:\\D*?| )+`) follow PCRE's rule that an empty
//!   iteration ends the loop by running the backtracker with a budget of
//!   [`limits::NULLABLE_LOOP_STEPS_MAX`] steps; past it the Pike VM answers,
//!   whose match starts at the same place but may end elsewhere, and whose
//!   groups inside such loops keep the last non-empty iteration. `is_match`
//!   is unaffected (the rule changes priorities, never whether a match exists).
//! - Counted repetition is expanded, so `(a{1000}){1000}` is rejected with
//!   [`RegexError::ProgramTooLarge`] where PCRE2 compiles it.
//! - A search that needs the backtracker gives up with
//!   [`RegexError::StepLimitExceeded`] after [`limits::BACKTRACK_STEPS_MAX`]
//!   steps, where PCRE2's match limit is larger (and MongoDB's can hang).
//! - A lookbehind that refers, through a backreference, to a group that
//!   contains the lookbehind itself (a cycle such as `((?<!\\2)a)(\\1b)`) is
//!   accepted when every group has a bounded length; PCRE2 rejects it.
//! - PCRE2's auto-possessification mis-handles some possessive optional
//!   groups before `\b` (`A*(?:a)?+\bA+` on `Ab`: PCRE2 finds no match). We
//!   follow the semantics, i.e. PCRE2 with `(*NO_AUTO_POSSESS)`.
//!
//! ```
//! use regex::Regex;
//! let re = Regex::new(r"^(?<user>[a-z]+)@example\.com$", "i").unwrap();
//! assert!(re.is_match("Ann@Example.com").unwrap());
//! let caps = re.captures("bob@example.com").unwrap().unwrap();
//! assert_eq!(caps.name("user").map(|m| m.range()), Some(0..3));
//! ```
#![forbid(unsafe_code)]
#![deny(missing_docs)]

mod ast;
mod backtrack;
mod class;
mod compile;
mod dfa;
pub mod error;
pub mod limits;
mod literal;
mod needles;
mod parse;
mod pikevm;
mod prefilter;

use std::sync::Mutex;

use crate::compile::Program;
pub use crate::error::RegexError;
use crate::parse::Mode;

/// Compile options: MongoDB's `$options` letters.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Flags {
    /// `i`: case-insensitive (ASCII and simple Unicode case folding).
    pub caseless: bool,
    /// `m`: `^` and `$` match at line starts and ends.
    pub multiline: bool,
    /// `s`: `.` matches `\n` too.
    pub dotall: bool,
    /// `x`: whitespace and `#` comments in the pattern are ignored.
    pub extended: bool,
}

impl Flags {
    /// Parses MongoDB `$options` letters (`i`, `m`, `s`, `x`, `u`; `u` is
    /// accepted and redundant, as patterns are always UTF-8).
    pub fn from_options(options: &str) -> Result<Flags, RegexError> {
        let mut flags = Flags::default();
        for c in options.chars() {
            match c {
                'i' => flags.caseless = true,
                'm' => flags.multiline = true,
                's' => flags.dotall = true,
                'x' => flags.extended = true,
                'u' => {}
                other => return Err(RegexError::UnknownOption(other)),
            }
        }
        Ok(flags)
    }
}

/// The matcher a pattern runs on.
#[derive(Debug)]
enum Engine {
    /// The whole pattern is this literal text.
    Literal(String),
    PikeVm,
    Backtrack,
}

/// A compiled regular expression. Shareable between threads; matching takes
/// `&self`.
#[derive(Debug)]
pub struct Regex {
    pattern: String,
    program: Program,
    engine: Engine,
    anchored_start: bool,
    prefix: String,
    names: Vec<(String, u32)>,
    step_limit: u64,
    #[expect(
        clippy::vec_box,
        reason = "caches move out of and back into the pool on every search; boxed, that is a pointer copy"
    )]
    caches: Mutex<Vec<Box<pikevm::Cache>>>,
    /// The bytes a match can start with (unanchored patterns only).
    prefilter: Option<prefilter::Prefilter>,
    /// Whether `is_match` may use the lazy DFA.
    dfa: bool,
    /// The lazy DFA's program when it differs from `program`: the pattern
    /// without optional leading and trailing repeats, which changes no
    /// `is_match` answer.
    dfa_program: Option<Program>,
    /// For the lazy DFA on an unanchored pattern: needles, one of which
    /// occurs in every match at most this many bytes after its start.
    needles: Option<(needles::Needles, usize)>,
    #[expect(
        clippy::vec_box,
        reason = "caches move out of and back into the pool on every search; boxed, that is a pointer copy"
    )]
    dfa_caches: Mutex<Vec<Box<dfa::Cache>>>,
}

/// A match: a byte range of the subject.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Match {
    /// Byte offset where the match starts.
    pub start: usize,
    /// Byte offset just past the match.
    pub end: usize,
}

impl Match {
    /// `start..end`.
    pub fn range(&self) -> std::ops::Range<usize> {
        self.start..self.end
    }
}

/// The groups of one match: group 0 is the whole match.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Captures {
    groups: Vec<Option<Match>>,
    names: Vec<(String, u32)>,
}

impl Captures {
    /// Group `index` (0 is the whole match), if it took part in the match.
    pub fn get(&self, index: usize) -> Option<Match> {
        self.groups.get(index).copied().flatten()
    }

    /// The group named `name`, if it exists and took part in the match.
    pub fn name(&self, name: &str) -> Option<Match> {
        let (_, index) = self.names.iter().find(|(n, _)| n == name)?;
        self.get(*index as usize)
    }

    /// Number of groups, the whole match included.
    pub fn len(&self) -> usize {
        self.groups.len()
    }

    /// Always false: group 0 exists.
    pub fn is_empty(&self) -> bool {
        self.groups.is_empty()
    }
}

impl Regex {
    /// Compiles `pattern` with MongoDB `$options` letters.
    pub fn new(pattern: &str, options: &str) -> Result<Regex, RegexError> {
        Regex::with_flags(pattern, Flags::from_options(options)?)
    }

    /// Compiles `pattern` with `flags`.
    pub fn with_flags(pattern: &str, flags: Flags) -> Result<Regex, RegexError> {
        if pattern.len() > limits::PATTERN_LEN_MAX {
            return Err(RegexError::PatternTooLong {
                len: pattern.len(),
                max: limits::PATTERN_LEN_MAX,
            });
        }
        let mode = Mode {
            caseless: flags.caseless,
            multiline: flags.multiline,
            dotall: flags.dotall,
            extended: flags.extended,
            ..Mode::default()
        };
        let parsed = parse::parse(pattern, mode)?;
        let program = compile::compile(&parsed.node, parsed.group_count, &parsed.group_widths)?;
        let engine = if parsed.node.needs_backtracking() {
            Engine::Backtrack
        } else if let Some(text) = literal::pure_literal(&parsed.node) {
            Engine::Literal(text)
        } else {
            Engine::PikeVm
        };
        let dfa = matches!(engine, Engine::PikeVm) && dfa::supports(&program);
        let anchored_start = literal::is_anchored_start(&parsed.node);
        let prefilter = if anchored_start {
            None
        } else {
            prefilter::Prefilter::new(&program)
        };
        let mut dfa_program = None;
        let mut needles = None;
        if dfa {
            let stripped = literal::without_optional_ends(&parsed.node);
            let node = stripped.as_ref().unwrap_or(&parsed.node);
            if !anchored_start {
                needles = literal::inner_needles(node);
            }
            if let Some(node) = &stripped {
                dfa_program = Some(compile::compile(
                    node,
                    parsed.group_count,
                    &parsed.group_widths,
                )?);
            }
        }
        Ok(Regex {
            prefilter,
            dfa,
            dfa_program,
            needles,
            dfa_caches: Mutex::new(Vec::new()),
            pattern: pattern.to_string(),
            program,
            engine,
            anchored_start,
            prefix: literal::prefix(&parsed.node),
            names: parsed.names,
            step_limit: limits::BACKTRACK_STEPS_MAX,
            caches: Mutex::new(Vec::new()),
        })
    }

    /// Replaces the backtracking step budget (default
    /// [`limits::BACKTRACK_STEPS_MAX`]).
    pub fn with_step_limit(mut self, steps: u64) -> Regex {
        self.step_limit = steps;
        self
    }

    /// The pattern text.
    pub fn as_str(&self) -> &str {
        &self.pattern
    }

    /// Whether every match must start at the start of the subject.
    pub fn is_anchored_start(&self) -> bool {
        self.anchored_start
    }

    /// For a start-anchored pattern, the literal text every matching subject
    /// begins with (case-sensitive), for index range bounds.
    pub fn literal_prefix(&self) -> Option<&str> {
        (self.anchored_start && !self.prefix.is_empty()).then_some(self.prefix.as_str())
    }

    /// Number of groups, the whole match included.
    pub fn captures_len(&self) -> usize {
        self.program.slot_count / 2
    }

    /// Whether the pattern matches anywhere in `subject`. Errs only when the
    /// backtracker's step budget runs out.
    pub fn is_match(&self, subject: &str) -> Result<bool, RegexError> {
        if let Engine::Literal(text) = &self.engine {
            return Ok(subject.contains(text.as_str()));
        }
        if self.anchored_start && !subject.starts_with(self.prefix.as_str()) {
            return Ok(false);
        }
        if self.dfa
            && let Some(found) = self.dfa_is_match(subject)
        {
            return Ok(found);
        }
        Ok(self.run(subject, 0, 0, true)?.is_some())
    }

    /// The leftmost match (PCRE's leftmost-first choice among alternatives).
    pub fn find(&self, subject: &str) -> Result<Option<Match>, RegexError> {
        if let Engine::Literal(text) = &self.engine {
            return Ok(
                prefilter::find_literal(subject, text, 0).map(|start| Match {
                    start,
                    end: start + text.len(),
                }),
            );
        }
        Ok(self
            .run(subject, 0, 2, false)?
            .and_then(|slots| group(&slots, 0)))
    }

    /// The leftmost match with every group.
    pub fn captures(&self, subject: &str) -> Result<Option<Captures>, RegexError> {
        self.captures_at(subject, 0)
    }

    /// The leftmost match starting at byte `start` or later, with every group
    /// (PCRE's start offset): anchors, `\b` and lookbehind still see the text
    /// before `start`, so `^a` finds nothing at offset 1 of `aa`. `None` when
    /// `start` is past the end or inside a character.
    pub fn captures_at(&self, subject: &str, start: usize) -> Result<Option<Captures>, RegexError> {
        if !subject.is_char_boundary(start) {
            return Ok(None);
        }
        let slots = match &self.engine {
            Engine::Literal(text) => match prefilter::find_literal(subject, text, start) {
                Some(found) => vec![found, found + text.len()],
                None => return Ok(None),
            },
            _ => match self.run(subject, start, self.program.slot_count, false)? {
                Some(slots) => slots,
                None => return Ok(None),
            },
        };
        let groups = (0..self.captures_len()).map(|g| group(&slots, g)).collect();
        Ok(Some(Captures {
            groups,
            names: self.names.clone(),
        }))
    }

    /// `is_match` on the lazy DFA; `None` when it ran out of states.
    fn dfa_is_match(&self, subject: &str) -> Option<bool> {
        // Every match contains a needle: without one, no need for the DFA.
        let needles = match &self.needles {
            Some((needles, back)) if !self.anchored_start => {
                let Some(first) = needles.find(subject.as_bytes(), 0) else {
                    return Some(false);
                };
                Some(dfa::Skip::Needles {
                    needles,
                    back: *back,
                    first,
                })
            }
            _ => None,
        };
        let mut cache = self
            .dfa_caches
            .lock()
            .ok()
            .and_then(|mut caches| caches.pop())
            .unwrap_or_default();
        let found = if cache.gave_up >= DFA_GIVE_UPS_MAX {
            None
        } else {
            let skip = if self.anchored_start {
                None
            } else if needles.is_some() {
                needles
            } else {
                self.prefilter.as_ref().map(dfa::Skip::Bytes)
            };
            match dfa::is_match(
                self.dfa_program.as_ref().unwrap_or(&self.program),
                &mut cache,
                subject,
                self.anchored_start,
                skip,
            ) {
                dfa::Outcome::Match => Some(true),
                dfa::Outcome::NoMatch => Some(false),
                dfa::Outcome::GaveUp => {
                    cache.gave_up += 1;
                    cache.clear();
                    None
                }
            }
        };
        if let Ok(mut caches) = self.dfa_caches.lock() {
            caches.push(cache);
        }
        found
    }

    /// Runs the automaton or the backtracker, tracking `slot_count` slots.
    fn run(
        &self,
        subject: &str,
        start: usize,
        slot_count: usize,
        earliest: bool,
    ) -> Result<Option<Vec<usize>>, RegexError> {
        if let Engine::Backtrack = self.engine {
            let mut backtracker =
                backtrack::Backtracker::new(&self.program, subject, self.step_limit);
            let found = backtracker.search(
                start,
                self.anchored_start,
                &self.prefix,
                self.prefilter.as_ref(),
            )?;
            return Ok(found.map(|slots| slots.to_vec()));
        }
        if !earliest && self.program.register_count > 0 {
            // A loop whose body can match empty: PCRE's spans come from its
            // backtracking order, which the backtracker reproduces; past a
            // small budget, fall back to the Pike VM (same match or not, and
            // the same start; the end can differ in rare cases).
            let budget = self.step_limit.min(limits::NULLABLE_LOOP_STEPS_MAX);
            let mut backtracker = backtrack::Backtracker::new(&self.program, subject, budget);
            if let Ok(found) = backtracker.search(
                start,
                self.anchored_start,
                &self.prefix,
                self.prefilter.as_ref(),
            ) {
                return Ok(found.map(|slots| slots.to_vec()));
            }
        }
        let mut cache = self
            .caches
            .lock()
            .ok()
            .and_then(|mut caches| caches.pop())
            .unwrap_or_default();
        let mut slots = vec![pikevm::UNSET; slot_count];
        let search = pikevm::Search {
            subject,
            start,
            anchored: self.anchored_start,
            earliest,
            prefix: &self.prefix,
            prefilter: self.prefilter.as_ref(),
        };
        let found = pikevm::search(&self.program, &mut cache, &search, &mut slots);
        if let Ok(mut caches) = self.caches.lock() {
            caches.push(cache);
        }
        Ok(found.then_some(slots))
    }
}

/// After this many searches of one cache run out of DFA states, `is_match`
/// uses the Pike VM directly.
const DFA_GIVE_UPS_MAX: u32 = 3;

fn group(slots: &[usize], index: usize) -> Option<Match> {
    let start = *slots.get(2 * index)?;
    let end = *slots.get(2 * index + 1)?;
    (start != pikevm::UNSET && end != pikevm::UNSET).then_some(Match { start, end })
}
