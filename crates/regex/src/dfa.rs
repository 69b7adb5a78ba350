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
use crate::prefilter::Prefilter;

/// Most states one cache may hold before the DFA gives up.
const STATES_MAX: usize = 4096;

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

/// Whether `program` matches anywhere in `subject` (only at 0 if `anchored`).
pub(crate) fn is_match(
    program: &Program,
    cache: &mut Cache,
    subject: &str,
    anchored: bool,
    prefix: &str,
    prefilter: Option<&Prefilter>,
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
    let Some(mut state) = cache.intern(vec![0], start_context) else {
        return Outcome::GaveUp;
    };
    let idle = (!anchored).then(|| cache.intern(vec![0], Context::default()));
    let mut at = 0;
    while at < len {
        let Some(&byte) = bytes.get(at) else { break };
        // Nothing in progress: jump to the next place a match can start.
        if idle.is_some() && cache.is_idle(state) {
            let next = if !prefix.is_empty() {
                subject
                    .get(at..)
                    .and_then(|s| s.find(prefix))
                    .map(|i| at + i)
            } else if let Some(prefilter) = prefilter {
                prefilter.find(bytes, at)
            } else {
                Some(at)
            };
            match next {
                Some(next) if next > at => {
                    at = next;
                    let context = context_before(subject, at);
                    let Some(s) = cache.intern(vec![0], context) else {
                        return Outcome::GaveUp;
                    };
                    state = s;
                    continue;
                }
                Some(_) => {}
                None => return Outcome::NoMatch,
            }
        }
        let entry = if byte < 128 && (byte != b'\n' || at + 1 < len) {
            let index = state as usize * 128 + usize::from(byte);
            match cache.ascii.get(index) {
                Some(&entry) if entry != UNKNOWN => entry,
                _ => {
                    let Some(entry) =
                        cache.transition(program, state, char::from(byte), false, anchored)
                    else {
                        return Outcome::GaveUp;
                    };
                    if let Some(slot) = cache.ascii.get_mut(index) {
                        *slot = entry;
                    }
                    entry
                }
            }
        } else {
            let Some(c) = subject.get(at..).and_then(|s| s.chars().next()) else {
                break;
            };
            let final_newline = c == '\n' && at + 1 == len;
            let cached = if final_newline {
                None
            } else {
                cache.other.get(&(state, c)).copied()
            };
            match cached {
                Some(entry) => entry,
                None => {
                    let Some(entry) = cache.transition(program, state, c, final_newline, anchored)
                    else {
                        return Outcome::GaveUp;
                    };
                    if !final_newline {
                        cache.other.insert((state, c), entry);
                    }
                    entry
                }
            }
        };
        if entry & MATCHED != 0 {
            return Outcome::Match;
        }
        state = entry;
        if anchored && cache.is_dead(state) {
            return Outcome::NoMatch;
        }
        at += utf8_len(byte);
    }
    match cache.matches_at_end(program, state) {
        true => Outcome::Match,
        false => Outcome::NoMatch,
    }
}

/// The length of the UTF-8 sequence that `lead` starts.
fn utf8_len(lead: u8) -> usize {
    match lead {
        0x00..=0x7f => 1,
        0xc0..=0xdf => 2,
        0xe0..=0xef => 3,
        _ => 4,
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
        let context = Context {
            at_start: context.at_start && self.mask.at_start,
            after_newline: context.after_newline && self.mask.after_newline,
            after_word: context.after_word && self.mask.after_word,
        };
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
        self.states.push(key.clone());
        self.ids.insert(key, id);
        self.ascii.extend(std::iter::repeat_n(UNKNOWN, 128));
        Some(id)
    }

    fn key(&self, state: StateId) -> Option<&StateKey> {
        self.states.get(state as usize)
    }

    fn is_idle(&self, state: StateId) -> bool {
        self.key(state).is_some_and(|k| *k.pcs == [0])
    }

    fn is_dead(&self, state: StateId) -> bool {
        self.key(state).is_some_and(|k| k.pcs.is_empty())
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
        let Some(key) = self.key(state).cloned() else {
            return false;
        };
        let look = LookContext {
            context: key.context,
            next: None,
            final_newline: false,
        };
        self.closure(program, &key.pcs, look)
    }

    /// Forgets every state (after running out of room).
    pub(crate) fn clear(&mut self) {
        self.states.clear();
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
