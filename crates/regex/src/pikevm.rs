//! The Pike VM: a Thompson NFA simulation in leftmost-first priority order, linear in the subject.
//!
//! Threads live in a sparse set ordered by priority; each keeps its own
//! capture slots (none at all for `is_match`). At every position a new thread
//! starts at the lowest priority unless the search is anchored or a match is
//! already known, so the first match found in priority order is the one a
//! backtracker (PCRE2) would report. Work is O(subject x program).

use crate::compile::{Inst, Pc, Program};
use crate::prefilter::Prefilter;

/// `usize::MAX` marks an unset slot.
pub(crate) const UNSET: usize = usize::MAX;

/// Reusable buffers for one search at a time.
#[derive(Debug, Default)]
pub(crate) struct Cache {
    current: Threads,
    next: Threads,
    stack: Vec<Frame>,
    scratch: Vec<usize>,
}

#[derive(Debug, Default)]
struct Threads {
    dense: Vec<Pc>,
    sparse: Vec<usize>,
    slots: Vec<usize>,
}

impl Threads {
    fn reset(&mut self, inst_count: usize, slot_count: usize) {
        self.dense.clear();
        self.dense.reserve(inst_count);
        self.sparse.resize(inst_count, 0);
        self.slots.resize(inst_count * slot_count, UNSET);
    }

    fn contains(&self, pc: Pc) -> bool {
        self.sparse
            .get(pc)
            .is_some_and(|&i| self.dense.get(i) == Some(&pc))
    }

    fn insert(&mut self, pc: Pc) {
        if let Some(entry) = self.sparse.get_mut(pc) {
            *entry = self.dense.len();
            self.dense.push(pc);
        }
    }
}

#[derive(Debug, Clone, Copy)]
enum Frame {
    Explore(Pc),
    Restore(usize, usize),
}

/// The search parameters.
pub(crate) struct Search<'s> {
    pub(crate) subject: &'s str,
    /// The first offset a match may start at (a character boundary).
    pub(crate) start: usize,
    /// Only try a match starting at offset 0.
    pub(crate) anchored: bool,
    /// Stop at the first match found (for `is_match`).
    pub(crate) earliest: bool,
    /// A literal every match starts with, to skip ahead when no thread lives.
    pub(crate) prefix: &'s str,
    /// The bytes a match can start with, used when there is no prefix.
    pub(crate) prefilter: Option<&'s Prefilter>,
}

/// Runs the program; on a match fills `slots` (whose length picks how many
/// capture slots to track) and returns true.
pub(crate) fn search(
    program: &Program,
    cache: &mut Cache,
    search: &Search,
    slots: &mut [usize],
) -> bool {
    let slot_count = slots.len();
    let inst_count = program.insts.len();
    cache.current.reset(inst_count, slot_count);
    cache.next.reset(inst_count, slot_count);
    cache.scratch.clear();
    cache.scratch.resize(slot_count, UNSET);
    let subject = search.subject;
    let mut matched = false;
    let mut at = search.start;
    loop {
        if cache.current.dense.is_empty() {
            if matched || (search.anchored && at > 0) {
                break;
            }
            if !search.prefix.is_empty() {
                match crate::prefilter::find_literal(subject, search.prefix, at) {
                    Some(next) => at = next,
                    None => break,
                }
            } else if let Some(prefilter) = search.prefilter {
                match prefilter.find(subject.as_bytes(), at) {
                    Some(next) => at = next,
                    None => break,
                }
            }
        }
        if !matched && (!search.anchored || at == 0) {
            cache.scratch.fill(UNSET);
            add_thread(
                program,
                &mut cache.current,
                &mut cache.stack,
                &mut cache.scratch,
                0,
                subject,
                at,
            );
        }
        let c = subject.get(at..).and_then(|s| s.chars().next());
        let next_at = at + c.map_or(1, char::len_utf8);
        let Cache {
            current,
            next,
            stack,
            scratch,
            ..
        } = cache;
        for k in 0..current.dense.len() {
            let Some(&pc) = current.dense.get(k) else {
                break;
            };
            let consumes = match program.insts.get(pc) {
                Some(Inst::Match) => {
                    let from = pc * slot_count;
                    if let Some(thread) = current.slots.get(from..from + slot_count) {
                        slots.copy_from_slice(thread);
                    }
                    matched = true;
                    if search.earliest {
                        return true;
                    }
                    // Lower-priority threads can no longer win.
                    break;
                }
                Some(Inst::Char(x)) => c == Some(*x),
                Some(Inst::Class(index)) => match (c, program.classes.get(*index)) {
                    (Some(c), Some(class)) => class.matches(c),
                    _ => false,
                },
                _ => false,
            };
            if consumes {
                let from = pc * slot_count;
                if let Some(thread) = current.slots.get(from..from + slot_count) {
                    scratch.copy_from_slice(thread);
                }
                add_thread(program, next, stack, scratch, pc + 1, subject, next_at);
            }
        }
        std::mem::swap(&mut cache.current, &mut cache.next);
        cache.next.dense.clear();
        if c.is_none() {
            break;
        }
        at = next_at;
    }
    matched
}

/// Adds the thread at `start` and everything reachable from it without
/// consuming input, in priority order, with capture slots `scratch`.
fn add_thread(
    program: &Program,
    list: &mut Threads,
    stack: &mut Vec<Frame>,
    scratch: &mut [usize],
    start: Pc,
    subject: &str,
    at: usize,
) {
    let slot_count = scratch.len();
    stack.push(Frame::Explore(start));
    while let Some(frame) = stack.pop() {
        let pc = match frame {
            Frame::Explore(pc) => pc,
            Frame::Restore(slot, value) => {
                if let Some(s) = scratch.get_mut(slot) {
                    *s = value;
                }
                continue;
            }
        };
        if list.contains(pc) {
            // Reaching a loop's end again at the same position means the
            // iteration matched empty: PCRE then leaves the loop with this
            // iteration's captures, so do the same (the exit has lower
            // priority on the stack and is not yet in the set).
            if let Some(Inst::Repeat { exit, .. }) = program.insts.get(pc) {
                stack.push(Frame::Explore(*exit));
            }
            continue;
        }
        list.insert(pc);
        match program.insts.get(pc) {
            Some(Inst::Jmp(target)) => stack.push(Frame::Explore(*target)),
            Some(Inst::Split(first, second)) => {
                stack.push(Frame::Explore(*second));
                stack.push(Frame::Explore(*first));
            }
            Some(Inst::Repeat {
                body, exit, greedy, ..
            }) => {
                let (first, second) = if *greedy {
                    (*body, *exit)
                } else {
                    (*exit, *body)
                };
                stack.push(Frame::Explore(second));
                stack.push(Frame::Explore(first));
            }
            Some(Inst::Save(slot)) => {
                if let Some(s) = scratch.get_mut(*slot) {
                    stack.push(Frame::Restore(*slot, *s));
                    *s = at;
                }
                stack.push(Frame::Explore(pc + 1));
            }
            Some(Inst::Mark(_)) => stack.push(Frame::Explore(pc + 1)),
            Some(Inst::Assert(look)) => {
                if look.holds(subject, at) {
                    stack.push(Frame::Explore(pc + 1));
                }
            }
            Some(Inst::Char(_) | Inst::Class(_) | Inst::Match) => {
                let from = pc * slot_count;
                if let Some(thread) = list.slots.get_mut(from..from + slot_count) {
                    thread.copy_from_slice(scratch);
                }
            }
            // Not regular: the backtracker handles programs that use these.
            Some(
                Inst::Backref { .. }
                | Inst::Atomic { .. }
                | Inst::LookAround { .. }
                | Inst::SubMatch,
            )
            | None => {}
        }
    }
}
