//! Compiles a [`Node`] tree to a [`Program`]: the instruction list both matchers run.
//!
//! The program is a Thompson NFA in the Pike style: `Split` lists its
//! preferred branch first, so a leftmost-first simulation or a backtracker
//! walking branches in order finds the match PCRE2 would. Constructs that are
//! not regular (`Backref`, `Atomic`, `LookAround`) appear only when the
//! pattern needs the backtracker.

use crate::ast::{Greed, GroupKind, Look, Node, Width};
use crate::class::CharClass;
use crate::error::RegexError;
use crate::limits::PROGRAM_INSTS_MAX;

/// An index into [`Program::insts`].
pub(crate) type Pc = usize;

/// One alternative of a lookaround body: where it starts, and how many
/// characters back (least, greatest) a lookbehind starts it.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Branch {
    pub(crate) start: Pc,
    pub(crate) back_min: u32,
    pub(crate) back_max: u32,
}

/// One instruction.
#[derive(Debug, Clone)]
pub(crate) enum Inst {
    /// Consume exactly this character.
    Char(char),
    /// Consume a member of `Program::classes[index]`.
    Class(usize),
    /// Try `.0` first, then `.1`.
    Split(Pc, Pc),
    Jmp(Pc),
    /// Record the current position in capture slot `.0`.
    Save(usize),
    Assert(Look),
    /// Record the position at the start of a loop iteration in register `.0`
    /// (backtracker only; a no-op in the Pike VM).
    Mark(usize),
    /// The end of an iteration of a loop whose body can match empty: loop
    /// back to `body` or leave to `exit` (preferred first when `greedy`),
    /// but never loop after an empty iteration (PCRE's rule).
    Repeat {
        register: usize,
        body: Pc,
        exit: Pc,
        greedy: bool,
    },
    /// Match the text captured by group `group` again.
    Backref {
        group: usize,
        caseless: bool,
    },
    /// An atomic group: its body starts at the next instruction and ends
    /// with `SubMatch`; matching continues at `end`.
    Atomic {
        end: Pc,
    },
    /// A lookaround. Each branch is a body (ending with `SubMatch`) and, for
    /// lookbehind, the least and greatest number of characters it spans:
    /// branches are tried in order, each from the farthest start back.
    LookAround {
        ahead: bool,
        negate: bool,
        branches: Box<[Branch]>,
        end: Pc,
    },
    /// The end of an atomic or lookaround body.
    SubMatch,
    Match,
}

/// A compiled pattern.
#[derive(Debug, Clone)]
pub(crate) struct Program {
    pub(crate) insts: Vec<Inst>,
    pub(crate) classes: Vec<CharClass>,
    /// Capture slots: two per group, group 0 included.
    pub(crate) slot_count: usize,
    /// Loop registers used by `Mark` and `Repeat`.
    pub(crate) register_count: usize,
}

/// Compiles `node` with `group_count` capturing groups.
pub(crate) fn compile(
    node: &Node,
    group_count: u32,
    group_widths: &[Width],
) -> Result<Program, RegexError> {
    let mut compiler = Compiler {
        group_widths,
        program: Program {
            insts: Vec::new(),
            classes: Vec::new(),
            slot_count: 2 * (group_count as usize + 1),
            register_count: 0,
        },
    };
    compiler.emit(Inst::Save(0))?;
    compiler.node(node)?;
    compiler.emit(Inst::Save(1))?;
    compiler.emit(Inst::Match)?;
    Ok(compiler.program)
}

struct Compiler<'g> {
    group_widths: &'g [Width],
    program: Program,
}

impl Compiler<'_> {
    fn pc(&self) -> Pc {
        self.program.insts.len()
    }

    fn emit(&mut self, inst: Inst) -> Result<Pc, RegexError> {
        if self.program.insts.len() >= PROGRAM_INSTS_MAX {
            return Err(RegexError::ProgramTooLarge {
                max: PROGRAM_INSTS_MAX,
            });
        }
        self.program.insts.push(inst);
        Ok(self.program.insts.len() - 1)
    }

    /// Points the jump targets of the instruction at `at` that are
    /// placeholders (`usize::MAX`) at `target`.
    fn patch(&mut self, at: Pc, target: Pc) {
        let inst = self
            .program
            .insts
            .get_mut(at)
            .expect("patched instruction was emitted");
        match inst {
            Inst::Jmp(t) => *t = target,
            Inst::Split(a, b) => {
                if *a == usize::MAX {
                    *a = target;
                } else {
                    *b = target;
                }
            }
            Inst::Atomic { end } => *end = target,
            Inst::Repeat { exit, .. } => *exit = target,
            _ => unreachable!("patching a non-jump instruction"),
        }
    }

    fn node(&mut self, node: &Node) -> Result<(), RegexError> {
        match node {
            Node::Empty => {}
            Node::Char(c) => {
                self.emit(Inst::Char(*c))?;
            }
            Node::Set(set) => match set.as_single() {
                Some(c) => {
                    self.emit(Inst::Char(c))?;
                }
                None => {
                    self.program.classes.push(CharClass::new(set.clone()));
                    self.emit(Inst::Class(self.program.classes.len() - 1))?;
                }
            },
            Node::Assert(look) => {
                self.emit(Inst::Assert(*look))?;
            }
            Node::Backref { group, caseless } => {
                self.emit(Inst::Backref {
                    group: *group as usize,
                    caseless: *caseless,
                })?;
            }
            Node::Concat(nodes) => {
                for n in nodes {
                    self.node(n)?;
                }
            }
            Node::Alternate(nodes) => self.alternate(nodes)?,
            Node::Group { kind, node } => self.group(*kind, node)?,
            Node::Repeat {
                node,
                min,
                max,
                greed,
            } => self.repeat(node, *min, *max, *greed)?,
        }
        Ok(())
    }

    fn alternate(&mut self, nodes: &[Node]) -> Result<(), RegexError> {
        let mut jumps = Vec::new();
        let count = nodes.len();
        for (k, n) in nodes.iter().enumerate() {
            if k + 1 < count {
                let split = self.emit(Inst::Split(self.pc() + 1, usize::MAX))?;
                self.node(n)?;
                jumps.push(self.emit(Inst::Jmp(usize::MAX))?);
                let next = self.pc();
                self.patch(split, next);
            } else {
                self.node(n)?;
            }
        }
        let end = self.pc();
        for j in jumps {
            self.patch(j, end);
        }
        Ok(())
    }

    fn group(&mut self, kind: GroupKind, node: &Node) -> Result<(), RegexError> {
        match kind {
            GroupKind::Capture(index) => {
                let slot = 2 * index as usize;
                self.emit(Inst::Save(slot))?;
                self.node(node)?;
                self.emit(Inst::Save(slot + 1))?;
            }
            GroupKind::NonCapture => self.node(node)?,
            GroupKind::Atomic => {
                let at = self.emit(Inst::Atomic { end: usize::MAX })?;
                self.node(node)?;
                self.emit(Inst::SubMatch)?;
                let end = self.pc();
                self.patch(at, end);
            }
            GroupKind::Look { ahead, negate } => {
                let at = self.emit(Inst::Jmp(usize::MAX))?;
                let alternatives: &[Node] = match node {
                    Node::Alternate(nodes) if !ahead => nodes,
                    _ => std::slice::from_ref(node),
                };
                let mut branches = Vec::with_capacity(alternatives.len());
                for alternative in alternatives {
                    let (lo, hi) = alternative.width(self.group_widths);
                    branches.push(Branch {
                        start: self.pc(),
                        back_min: if ahead { 0 } else { lo },
                        back_max: if ahead { 0 } else { hi.unwrap_or(lo) },
                    });
                    self.node(alternative)?;
                    self.emit(Inst::SubMatch)?;
                }
                let end = self.pc();
                let inst = self
                    .program
                    .insts
                    .get_mut(at)
                    .expect("lookaround instruction was emitted");
                *inst = Inst::LookAround {
                    ahead,
                    negate,
                    branches: branches.into_boxed_slice(),
                    end,
                };
            }
        }
        Ok(())
    }

    fn repeat(
        &mut self,
        node: &Node,
        min: u32,
        max: Option<u32>,
        greed: Greed,
    ) -> Result<(), RegexError> {
        if greed == Greed::Possessive {
            let at = self.emit(Inst::Atomic { end: usize::MAX })?;
            self.repeat(node, min, max, Greed::Greedy)?;
            self.emit(Inst::SubMatch)?;
            let end = self.pc();
            self.patch(at, end);
            return Ok(());
        }
        let greedy = greed == Greed::Greedy;
        match max {
            None => {
                // X{n,} is X{n-1} then X+; X* is (X+)?.
                for _ in 1..min {
                    self.node(node)?;
                }
                let skip = if min == 0 {
                    Some(self.emit(self.split(greedy))?)
                } else {
                    None
                };
                let body = self.pc();
                let nullable = node.width(self.group_widths).0 == 0;
                let register = self.program.register_count;
                if nullable {
                    self.program.register_count += 1;
                    self.emit(Inst::Mark(register))?;
                }
                self.node(node)?;
                let end = if nullable {
                    self.emit(Inst::Repeat {
                        register,
                        body,
                        exit: usize::MAX,
                        greedy,
                    })?
                } else if greedy {
                    self.emit(Inst::Split(body, usize::MAX))?
                } else {
                    self.emit(Inst::Split(usize::MAX, body))?
                };
                let exit = self.pc();
                self.patch(end, exit);
                if let Some(skip) = skip {
                    self.set_split(skip, body, exit, greedy);
                }
            }
            Some(max) => {
                for _ in 0..min {
                    self.node(node)?;
                }
                let mut splits = Vec::new();
                for _ in min..max {
                    let split = self.emit(self.split(greedy))?;
                    splits.push(split);
                    self.node(node)?;
                }
                let exit = self.pc();
                for split in splits {
                    self.set_split(split, split + 1, exit, greedy);
                }
            }
        }
        Ok(())
    }

    /// A split with both targets unset, filled in by [`Self::set_split`].
    fn split(&self, greedy: bool) -> Inst {
        let _ = greedy;
        Inst::Split(usize::MAX, usize::MAX)
    }

    /// Sets the split at `at` to prefer `more` (another iteration) when
    /// greedy and `fewer` (leaving) when lazy.
    fn set_split(&mut self, at: Pc, more: Pc, fewer: Pc, greedy: bool) {
        let inst = self
            .program
            .insts
            .get_mut(at)
            .expect("split instruction was emitted");
        *inst = if greedy {
            Inst::Split(more, fewer)
        } else {
            Inst::Split(fewer, more)
        };
    }
}
