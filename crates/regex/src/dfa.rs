//! A lazy DFA for `is_match`: Pike-VM thread sets determinised on the fly and cached, so a warm search costs one table lookup per ASCII byte.
//!
//! A state is the set of program counters waiting for the next character
//! (before their epsilon closure), plus what the previous character was
//! (start of subject, newline, word character), which is all the assertions
//! need besides the next character. A transition on character `c` computes
//! the closure with `c` as lookahead, notes whether `Match` was reached (a
//! match ends here), and steps over `c`. Transitions for ASCII characters
//! live in a flat table; others in a map. Only whether a match exists is
//! computed, so thread priority is irrelevant and sets are sorted.
//!
//! `$` and `\Z` depend on whether a newline is the subject's last
//! character, which one character of lookahead cannot tell; that final
//! position is therefore computed without the cache. When the cache grows
//! past [`STATES_MAX`] states the search gives up and the caller falls back to
//! the Pike VM, so memory stays bounded.

use std::collections::HashMap;

use crate::ast::Look;
use crate::class::is_word;
use crate::compile::{Inst, Pc, Program};
use crate::needles::Needles;
use crate::prefilter::Prefilter;

/// Most states one cache may hold before the DFA gives up.
const STATES_MAX: usize = 4096;

/// How many prefilter skips a search makes before judging their worth.
const SKIPS_PROBE: usize = 16;
/// The least average skip length that keeps the prefilter on.
const SKIP_GAIN_MIN: usize = 8;

/// Transition table entry: not yet computed.
const UNKNOWN: u32 = u32::MAX;
/// Transition table entry flag: a match ends before the character.
const MATCHED: u32 = 1 << 31;

type StateId = u32;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
struct Context {
    at_start: bool,
    after_newline: bool,
    after_word: bool,
}

impl Context {
    fn index(self) -> usize {
        usize::from(self.at_start)
            | usize::from(self.after_newline) << 1
            | usize::from(self.after_word) << 2
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct StateKey {
    pcs: Box<[Pc]>,
    context: Context,
}

/// The determinised states of one program, built as searches need them.
#[derive(Debug, Default)]
pub(crate) struct Cache {
    states: Vec<StateKey>,
    ids: HashMap<StateKey, StateId>,
    /// 128 entries per state, indexed by ASCII character.
    ascii: Vec<u32>,
    other: HashMap<(StateId, char), u32>,
    /// Scratch for closures.
    stack: Vec<Pc>,
    seen: Vec<bool>,
    next: Vec<Pc>,
    /// Which parts of [`Context`] the program's assertions look at.
    mask: Context,
    /// Per state: its set is just the start (nothing in progress).
    idle: Vec<bool>,
    /// Per state: its set is empty (no match can follow).
    dead: Vec<bool>,
    /// The idle state for each masked context, by [`Context::index`].
    idle_ids: [Option<StateId>; 8],
    /// Per state: whether a match ends at the end of the subject, once known.
    end_matches: Vec<Option<bool>>,
    /// How many searches ran out of states; after a few, stop trying.
    pub(crate) gave_up: u32,
}

/// What the DFA concluded.
pub(crate) enum Outcome {
    Match,
    NoMatch,
    /// The cache is full: run another matcher.
    GaveUp,
}

/// Whether `program` is something the DFA handles (no backtracking
/// instructions).
pub(crate) fn supports(program: &Program) -> bool {
    program.insts.iter().all(|inst| {
        !matches!(
            inst,
            Inst::Backref { .. } | Inst::Atomic { .. } | Inst::LookAround { .. } | Inst::SubMatch
        )
    })
}

/// Where an unanchored search may jump when no match is in progress.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Skip<'p> {
    /// Some needle occurs in every match, at most `back` bytes after its
    /// start; `first` is the first occurrence in the subject.
    Needles {
        needles: &'p Needles,
        back: usize,
        first: usize,
    },
    /// Every match starts with one of these bytes.
    Bytes(&'p Prefilter),
}

impl Skip<'_> {
    /// Where the next match can start at the earliest, searching from `at`
    /// (a character boundary), and the offset before which the next search
    /// would only find the same needle again; `None` if no match can start
    /// at or after `at`.
    fn next(self, subject: &str, at: usize) -> Option<(usize, usize)> {
        match self {
            Skip::Needles {
                needles,
                back,
                first,
            } => {
                let found = if first >= at {
                    first
                } else {
                    needles.find(subject.as_bytes(), at)?
                };
                // A match holding this occurrence starts at most `back`
                // bytes before it; the earliest character boundary there.
                let mut start = found.saturating_sub(back).max(at);
                while !subject.is_char_boundary(start) {
                    start -= 1;
                }
                Some((start, found + 1))
            }
            Skip::Bytes(prefilter) => prefilter
                .find(subject.as_bytes(), at)
                .map(|start| (start, start)),
        }
    }
}

/// Whether `program` matches anywhere in `subject` (only at 0 if `anchored`;
/// `skip` is for unanchored searches only).
pub(crate) fn is_match(
    program: &Program,
    cache: &mut Cache,
    subject: &str,
    anchored: bool,
    skip: Option<Skip>,
) -> Outcome {
    let bytes = subject.as_bytes();
    let len = bytes.len();
    if cache.states.is_empty() {
        cache.mask = context_mask(program);
    }
    let start_context = Context {
        at_start: true,
        ..Context::default()
    };
    let Some(mut state) = cache.idle_state(start_context) else {
        return Outcome::GaveUp;
    };
    // Only an unanchored search has an idle state to skip from.
    let mut can_skip = !anchored && skip.is_some();
    // No skip before this offset: a search from earlier would find the
    // needle it found last time again.
    let mut skip_from = 0;
    // Skips that land close by cost more than stepping the DFA: after
    // SKIPS_PROBE skips, keep skipping only if they average SKIP_GAIN_MIN bytes.
    let mut skips = 0usize;
    let mut skipped = 0usize;
    let mut at = 0;
    'search: loop {
        if can_skip && at >= skip_from && cache.is_idle(state) {
            skips += 1;
            if skips == SKIPS_PROBE && skipped < SKIPS_PROBE * SKIP_GAIN_MIN {
                can_skip = false;
            }
            let next = skip.and_then(|skip| skip.next(subject, at));
            match next {
                // A match needs at least one character: none can start.
                None => return Outcome::NoMatch,
                Some((next, from)) if next > at => {
                    skip_from = from;
                    skipped += next - at;
                    at = next;
                    let Some(s) = cache.idle_state(context_before(subject, at)) else {
                        return Outcome::GaveUp;
                    };
                    state = s;
                }
                Some((_, from)) => skip_from = from,
            }
        }
        // The hot loop: cached transitions on ASCII bytes.
        while let Some(&byte) = bytes.get(at) {
            if byte >= 128 || (byte == b'\n' && at + 1 == len) {
                break;
            }
            let entry = cache
                .ascii
                .get(state as usize * 128 + usize::from(byte))
                .copied()
                .unwrap_or(UNKNOWN);
            if entry == UNKNOWN {
                break;
            }
            if entry & MATCHED != 0 {
                return Outcome::Match;
            }
            state = entry;
            at += 1;
            if can_skip && at >= skip_from && cache.is_idle(state) {
                continue 'search;
            }
            if anchored && cache.is_dead(state) {
                return Outcome::NoMatch;
            }
        }
        let Some(c) = subject.get(at..).and_then(|s| s.chars().next()) else {
            break;
        };
        let final_newline = c == '\n' && at + 1 == len;
        let cached = if final_newline || c.is_ascii() {
            None
        } else {
            cache.other.get(&(state, c)).copied()
        };
        let entry = match cached {
            Some(entry) => entry,
            None => {
                let Some(entry) = cache.transition(program, state, c, final_newline, anchored)
                else {
                    return Outcome::GaveUp;
                };
                if final_newline {
                    // Not cached: the same byte elsewhere is not final.
                } else if c.is_ascii() {
                    if let Some(slot) = cache.ascii.get_mut(state as usize * 128 + c as usize) {
                        *slot = entry;
                    }
                } else {
                    cache.other.insert((state, c), entry);
                }
                entry
            }
        };
        if entry & MATCHED != 0 {
            return Outcome::Match;
        }
        state = entry;
        at += c.len_utf8();
        if anchored && cache.is_dead(state) {
            return Outcome::NoMatch;
        }
    }
    match cache.matches_at_end(program, state) {
        true => Outcome::Match,
        false => Outcome::NoMatch,
    }
}

/// Which context bits matter: only those some assertion reads, so states
/// that differ only in unread bits are merged.
fn context_mask(program: &Program) -> Context {
    let mut mask = Context::default();
    for inst in &program.insts {
        match inst {
            Inst::Assert(Look::TextStart) => mask.at_start = true,
            Inst::Assert(Look::LineStart) => {
                mask.at_start = true;
                mask.after_newline = true;
            }
            Inst::Assert(Look::WordBoundary | Look::NotWordBoundary) => mask.after_word = true,
            _ => {}
        }
    }
    mask
}

fn context_before(subject: &str, at: usize) -> Context {
    let before = subject.get(..at).and_then(|s| s.chars().next_back());
    Context {
        at_start: at == 0,
        after_newline: before == Some('\n'),
        after_word: before.is_some_and(is_word),
    }
}

impl Cache {
    fn intern(&mut self, pcs: Vec<Pc>, context: Context) -> Option<StateId> {
        let context = self.masked(context);
        let key = StateKey {
            pcs: pcs.into_boxed_slice(),
            context,
        };
        if let Some(&id) = self.ids.get(&key) {
            return Some(id);
        }
        if self.states.len() >= STATES_MAX {
            return None;
        }
        let id = self.states.len() as StateId;
        self.idle.push(*key.pcs == [0]);
        self.end_matches.push(None);
        self.dead.push(key.pcs.is_empty());
        self.states.push(key.clone());
        self.ids.insert(key, id);
        self.ascii.extend(std::iter::repeat_n(UNKNOWN, 128));
        Some(id)
    }

    fn key(&self, state: StateId) -> Option<&StateKey> {
        self.states.get(state as usize)
    }

    #[inline]
    fn is_idle(&self, state: StateId) -> bool {
        self.idle.get(state as usize).copied().unwrap_or(false)
    }

    #[inline]
    fn is_dead(&self, state: StateId) -> bool {
        self.dead.get(state as usize).copied().unwrap_or(false)
    }

    /// The state with nothing in progress after `context`, without allocating
    /// once it exists.
    fn idle_state(&mut self, context: Context) -> Option<StateId> {
        let masked = self.masked(context);
        let index = masked.index();
        if let Some(Some(id)) = self.idle_ids.get(index) {
            return Some(*id);
        }
        let id = self.intern(vec![0], masked)?;
        if let Some(slot) = self.idle_ids.get_mut(index) {
            *slot = Some(id);
        }
        Some(id)
    }

    fn masked(&self, context: Context) -> Context {
        Context {
            at_start: context.at_start && self.mask.at_start,
            after_newline: context.after_newline && self.mask.after_newline,
            after_word: context.after_word && self.mask.after_word,
        }
    }

    /// The transition of `state` on `c`: the next state, with [`MATCHED`] set
    /// if a match ends before `c`. `None` when the cache is full.
    fn transition(
        &mut self,
        program: &Program,
        state: StateId,
        c: char,
        final_newline: bool,
        anchored: bool,
    ) -> Option<u32> {
        let key = self.key(state)?.clone();
        let look = LookContext {
            context: key.context,
            next: Some(c),
            final_newline,
        };
        let matched = self.closure(program, &key.pcs, look);
        if matched {
            return Some(MATCHED);
        }
        let mut next = std::mem::take(&mut self.next);
        next.clear();
        for pc in self
            .seen
            .iter()
            .enumerate()
            .filter_map(|(pc, &s)| s.then_some(pc))
        {
            let consumes = match program.insts.get(pc) {
                Some(Inst::Char(x)) => *x == c,
                Some(Inst::Class(index)) => {
                    program.classes.get(*index).is_some_and(|k| k.matches(c))
                }
                _ => false,
            };
            if consumes {
                next.push(pc + 1);
            }
        }
        if !anchored {
            next.push(0);
        }
        next.sort_unstable();
        next.dedup();
        let context = Context {
            at_start: false,
            after_newline: c == '\n',
            after_word: is_word(c),
        };
        let id = self.intern(next.clone(), context);
        self.next = next;
        id
    }

    /// Whether a match ends at the end of the subject from `state`.
    fn matches_at_end(&mut self, program: &Program, state: StateId) -> bool {
        if let Some(Some(known)) = self.end_matches.get(state as usize) {
            return *known;
        }
        let Some(key) = self.key(state).cloned() else {
            return false;
        };
        let look = LookContext {
            context: key.context,
            next: None,
            final_newline: false,
        };
        let matched = self.closure(program, &key.pcs, look);
        if let Some(slot) = self.end_matches.get_mut(state as usize) {
            *slot = Some(matched);
        }
        matched
    }

    /// Forgets every state (after running out of room).
    pub(crate) fn clear(&mut self) {
        self.states.clear();
        self.idle.clear();
        self.dead.clear();
        self.end_matches.clear();
        self.idle_ids = [None; 8];
        self.ids.clear();
        self.ascii.clear();
        self.other.clear();
    }

    /// Marks in `seen` every instruction reachable from `pcs` without
    /// consuming input; returns whether `Match` is among them.
    fn closure(&mut self, program: &Program, pcs: &[Pc], look: LookContext) -> bool {
        self.seen.clear();
        self.seen.resize(program.insts.len(), false);
        self.stack.clear();
        self.stack.extend(pcs.iter().rev());
        let mut matched = false;
        while let Some(pc) = self.stack.pop() {
            match self.seen.get_mut(pc) {
                Some(seen) if !*seen => *seen = true,
                _ => continue,
            }
            match program.insts.get(pc) {
                Some(Inst::Jmp(target)) => self.stack.push(*target),
                Some(Inst::Split(first, second)) => {
                    self.stack.push(*second);
                    self.stack.push(*first);
                }
                Some(Inst::Repeat { body, exit, .. }) => {
                    self.stack.push(*exit);
                    self.stack.push(*body);
                }
                Some(Inst::Save(_) | Inst::Mark(_)) => self.stack.push(pc + 1),
                Some(Inst::Assert(assertion)) if look.holds(*assertion) => self.stack.push(pc + 1),
                Some(Inst::Match) => matched = true,
                _ => {}
            }
        }
        matched
    }
}

#[derive(Debug, Clone, Copy)]
struct LookContext {
    context: Context,
    /// The next character, `None` at the end of the subject.
    next: Option<char>,
    /// The next character is a newline that ends the subject.
    final_newline: bool,
}

impl LookContext {
    fn holds(&self, look: Look) -> bool {
        let at_end = self.next.is_none();
        match look {
            Look::TextStart => self.context.at_start,
            Look::LineStart => self.context.at_start || (self.context.after_newline && !at_end),
            Look::TextEnd => at_end,
            Look::TextEndNewline => at_end || self.final_newline,
            Look::LineEnd => at_end || self.next == Some('\n'),
            Look::WordBoundary | Look::NotWordBoundary => {
                let after = self.next.is_some_and(is_word);
                (self.context.after_word != after) == (look == Look::WordBoundary)
            }
        }
    }
}
