//! The bounded backtracker, for programs with backreferences, lookaround, atomic groups or possessive quantifiers.
//!
//! It walks the program depth-first in priority order, like PCRE2's
//! interpreter, with an explicit stack of alternatives and undo records. Every
//! instruction executed costs one step from a budget shared by the whole
//! search; when the budget runs out the search fails with
//! [`RegexError::StepLimitExceeded`] instead of running for exponential time.
//! Atomic groups and lookarounds run their body as a nested search whose
//! alternatives are dropped once it succeeds; nesting is bounded by the
//! parser's group depth limit.

use crate::class::fold;
use crate::compile::{Branch, Inst, Pc, Program};
use crate::error::RegexError;
use crate::pikevm::UNSET;
use crate::prefilter::Prefilter;

#[derive(Debug, Clone)]
enum Frame {
    /// Resume at `pc` with position `at`.
    Alternative {
        pc: Pc,
        at: usize,
    },
    RestoreSlot {
        slot: usize,
        value: usize,
    },
    RestoreRegister {
        register: usize,
        value: usize,
    },
    RestoreAll {
        slots: Vec<usize>,
    },
}

/// One search over one subject.
pub(crate) struct Backtracker<'a> {
    program: &'a Program,
    subject: &'a str,
    slots: Vec<usize>,
    /// Where each open group started (index = group number).
    open: Vec<usize>,
    registers: Vec<usize>,
    stack: Vec<Frame>,
    steps: u64,
    step_limit: u64,
}

impl<'a> Backtracker<'a> {
    pub(crate) fn new(program: &'a Program, subject: &'a str, step_limit: u64) -> Self {
        Backtracker {
            program,
            subject,
            slots: vec![UNSET; program.slot_count],
            open: vec![UNSET; program.slot_count / 2],
            registers: vec![UNSET; program.register_count],
            stack: Vec::new(),
            steps: 0,
            step_limit,
        }
    }

    /// Tries each start position from `from` on in turn (only 0 when `anchored`,
    /// only occurrences of `prefix` otherwise); on a match returns the slots.
    pub(crate) fn search(
        &mut self,
        from: usize,
        anchored: bool,
        prefix: &str,
        prefilter: Option<&Prefilter>,
    ) -> Result<Option<&[usize]>, RegexError> {
        if anchored && from > 0 {
            return Ok(None);
        }
        let mut start = from;
        loop {
            if !prefix.is_empty() {
                match crate::prefilter::find_literal(self.subject, prefix, start) {
                    Some(next) => start = next,
                    None => return Ok(None),
                }
            } else if let Some(prefilter) = prefilter {
                match prefilter.find(self.subject.as_bytes(), start) {
                    Some(next) => start = next,
                    None => return Ok(None),
                }
            }
            self.slots.fill(UNSET);
            self.open.fill(UNSET);
            self.registers.fill(UNSET);
            if self.run(0, start, None)?.is_some() {
                return Ok(Some(&self.slots));
            }
            if anchored {
                return Ok(None);
            }
            match self.subject.get(start..).and_then(|s| s.chars().next()) {
                Some(c) => start += c.len_utf8(),
                None => return Ok(None),
            }
        }
    }

    fn step(&mut self) -> Result<(), RegexError> {
        self.steps += 1;
        if self.steps > self.step_limit {
            return Err(RegexError::StepLimitExceeded {
                limit: self.step_limit,
            });
        }
        Ok(())
    }

    /// Runs from `pc` at `at` until `Match` (or `SubMatch`, ending at
    /// `required_end` if given); returns the end position. Alternatives the
    /// run leaves on the stack are removed before returning.
    fn run(
        &mut self,
        pc: Pc,
        at: usize,
        required_end: Option<usize>,
    ) -> Result<Option<usize>, RegexError> {
        let base = self.stack.len();
        let mut pc = pc;
        let mut at = at;
        loop {
            self.step()?;
            let program = self.program;
            let advanced = match program.insts.get(pc) {
                Some(Inst::Match) => {
                    self.stack.truncate(base);
                    return Ok(Some(at));
                }
                Some(Inst::SubMatch) => {
                    if required_end.is_none_or(|end| end == at) {
                        self.stack.truncate(base);
                        return Ok(Some(at));
                    }
                    None
                }
                Some(inst) => self.execute(inst, pc, at)?,
                None => None,
            };
            match advanced {
                Some((next_pc, next_at)) => {
                    pc = next_pc;
                    at = next_at;
                }
                None => match self.backtrack(base) {
                    Some((next_pc, next_at)) => {
                        pc = next_pc;
                        at = next_at;
                    }
                    None => return Ok(None),
                },
            }
        }
    }

    /// Pops undo records down to the next alternative above `base`.
    fn backtrack(&mut self, base: usize) -> Option<(Pc, usize)> {
        while self.stack.len() > base {
            match self.stack.pop()? {
                Frame::Alternative { pc, at } => return Some((pc, at)),
                Frame::RestoreSlot { slot, value } => {
                    let slot_count = self.slots.len();
                    let cell = if slot < slot_count {
                        self.slots.get_mut(slot)
                    } else {
                        self.open.get_mut(slot - slot_count)
                    };
                    if let Some(cell) = cell {
                        *cell = value;
                    }
                }
                Frame::RestoreRegister { register, value } => {
                    if let Some(r) = self.registers.get_mut(register) {
                        *r = value;
                    }
                }
                Frame::RestoreAll { slots } => self.slots = slots,
            }
        }
        None
    }

    /// Executes one instruction; `None` means this path failed.
    fn execute(
        &mut self,
        inst: &'a Inst,
        pc: Pc,
        at: usize,
    ) -> Result<Option<(Pc, usize)>, RegexError> {
        let next_char = || self.subject.get(at..).and_then(|s| s.chars().next());
        Ok(match *inst {
            Inst::Char(x) => match next_char() {
                Some(c) if c == x => Some((pc + 1, at + c.len_utf8())),
                _ => None,
            },
            Inst::Class(index) => match (next_char(), self.program.classes.get(index)) {
                (Some(c), Some(class)) if class.matches(c) => Some((pc + 1, at + c.len_utf8())),
                _ => None,
            },
            Inst::Jmp(target) => Some((target, at)),
            Inst::Split(first, second) => {
                self.stack.push(Frame::Alternative { pc: second, at });
                Some((first, at))
            }
            Inst::Save(slot) => {
                // A group's start is held aside until the group closes, so a
                // backreference inside a repeated group still sees the
                // previous iteration's text, as in PCRE.
                let target = if slot >= 2 && slot % 2 == 0 {
                    self.slots.len() + slot / 2
                } else {
                    slot
                };
                self.set_slot(target, at);
                if slot >= 2 && slot % 2 == 1 {
                    let start = self.open_start(slot / 2);
                    self.set_slot(slot - 1, start);
                }
                Some((pc + 1, at))
            }
            Inst::Assert(look) => look.holds(self.subject, at).then_some((pc + 1, at)),
            Inst::Mark(register) => {
                if let Some(r) = self.registers.get_mut(register) {
                    let value = std::mem::replace(r, at);
                    self.stack.push(Frame::RestoreRegister { register, value });
                }
                Some((pc + 1, at))
            }
            Inst::Repeat {
                register,
                body,
                exit,
                greedy,
            } => {
                let empty_iteration = self.registers.get(register) == Some(&at);
                if empty_iteration {
                    Some((exit, at))
                } else {
                    let (first, second) = if greedy { (body, exit) } else { (exit, body) };
                    self.stack.push(Frame::Alternative { pc: second, at });
                    Some((first, at))
                }
            }
            Inst::Backref { group, caseless } => {
                self.backref(group, caseless, at).map(|end| (pc + 1, end))
            }
            Inst::Atomic { end } => {
                let saved = self.slots.clone();
                self.run(pc + 1, at, None)?.map(|after| {
                    self.stack.push(Frame::RestoreAll { slots: saved });
                    (end, after)
                })
            }
            Inst::LookAround {
                ahead,
                negate,
                ref branches,
                end,
            } => {
                let saved = self.slots.clone();
                let mut found = false;
                for branch in branches.iter() {
                    found = if ahead {
                        self.run(branch.start, at, None)?.is_some()
                    } else {
                        self.lookbehind(*branch, at)?
                    };
                    if found {
                        break;
                    }
                }
                if found == negate {
                    // A failed assertion leaves no captures behind.
                    self.slots.clone_from(&saved);
                    None
                } else {
                    if negate {
                        self.slots.clone_from(&saved);
                    }
                    self.stack.push(Frame::RestoreAll { slots: saved });
                    Some((end, at))
                }
            }
            Inst::SubMatch | Inst::Match => None,
        })
    }

    /// Sets slot `index` (past the capture slots: a group's pending start),
    /// recording the old value for backtracking.
    fn set_slot(&mut self, index: usize, value: usize) {
        let slot_count = self.slots.len();
        let cell = if index < slot_count {
            self.slots.get_mut(index)
        } else {
            self.open.get_mut(index - slot_count)
        };
        if let Some(cell) = cell {
            let old = std::mem::replace(cell, value);
            self.stack.push(Frame::RestoreSlot {
                slot: index,
                value: old,
            });
        }
    }

    fn open_start(&self, group: usize) -> usize {
        self.open.get(group).copied().unwrap_or(UNSET)
    }

    /// Tries start points from the farthest back to the nearest, as PCRE2
    /// does for variable-length lookbehind.
    fn lookbehind(&mut self, branch: Branch, at: usize) -> Result<bool, RegexError> {
        let before = self.subject.get(..at).unwrap_or_default();
        let mut starts = Vec::new();
        let mut start = at;
        let mut chars = before.chars().rev();
        for back in 0..=branch.back_max {
            if back >= branch.back_min {
                starts.push(start);
            }
            match chars.next() {
                Some(c) => start -= c.len_utf8(),
                None => break,
            }
        }
        for &start in starts.iter().rev() {
            if self.run(branch.start, start, Some(at))?.is_some() {
                return Ok(true);
            }
        }
        Ok(false)
    }

    /// The end of a repeat of group `group`'s text at `at`; an unset group
    /// fails, as in PCRE2 by default.
    fn backref(&self, group: usize, caseless: bool, at: usize) -> Option<usize> {
        let start = *self.slots.get(2 * group)?;
        let end = *self.slots.get(2 * group + 1)?;
        if start == UNSET || end == UNSET {
            return None;
        }
        let captured = self.subject.get(start..end)?;
        let rest = self.subject.get(at..)?;
        if !caseless {
            return rest.starts_with(captured).then_some(at + captured.len());
        }
        let mut rest_chars = rest.char_indices();
        for c in captured.chars() {
            let (_, r) = rest_chars.next()?;
            if fold(r) != fold(c) {
                return None;
            }
        }
        let consumed = rest_chars.next().map_or(rest.len(), |(i, _)| i);
        Some(at + consumed)
    }
}
