//! The one error type of the crate: what went wrong compiling or running a pattern.

use thiserror::Error;

/// Everything that can go wrong when compiling a pattern or running it.
///
/// Syntax errors carry the byte offset in the pattern where the problem was
/// found, with a message modelled on PCRE2's.
#[non_exhaustive]
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum RegexError {
    /// The pattern is not valid PCRE syntax.
    #[error("{message} at offset {offset}")]
    Syntax {
        /// What is wrong, in PCRE2's words where it has them.
        message: &'static str,
        /// Byte offset in the pattern.
        offset: usize,
    },
    /// Valid PCRE2 syntax that this engine does not implement.
    #[error("{feature} is not supported at offset {offset}")]
    Unsupported {
        /// The construct.
        feature: &'static str,
        /// Byte offset in the pattern.
        offset: usize,
    },
    /// An option letter other than `i`, `m`, `s`, `x`, `u`.
    #[error("invalid regex option {0:?}")]
    UnknownOption(char),
    /// The pattern is longer than [`crate::limits::PATTERN_LEN_MAX`].
    #[error("pattern of {len} bytes exceeds the limit of {max}")]
    PatternTooLong {
        /// The pattern length in bytes.
        len: usize,
        /// The limit.
        max: usize,
    },
    /// Groups nest deeper than [`crate::limits::NESTING_DEPTH_MAX`].
    #[error("parentheses are too deeply nested at offset {offset}")]
    NestingTooDeep {
        /// Byte offset of the group that went too deep.
        offset: usize,
    },
    /// The compiled program exceeds [`crate::limits::PROGRAM_INSTS_MAX`]
    /// instructions (typically a large counted repetition).
    #[error("compiled pattern is too large (limit {max} instructions)")]
    ProgramTooLarge {
        /// The limit.
        max: usize,
    },
    /// The backtracker ran out of its step budget: the pattern needs more work
    /// on this subject than a server may spend.
    #[error("regular expression is too complex: backtracking limit of {limit} steps exceeded")]
    StepLimitExceeded {
        /// The budget that ran out.
        limit: u64,
    },
}
