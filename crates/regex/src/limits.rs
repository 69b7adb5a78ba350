//! Bounds on patterns and on matching work, so user regexes never exhaust the server.

/// Longest accepted pattern, in bytes (MongoDB caps regex patterns at 32 KiB).
pub const PATTERN_LEN_MAX: usize = 32 * 1024;

/// Deepest nesting of groups, counted in parentheses (PCRE2's default is 250).
pub const NESTING_DEPTH_MAX: usize = 250;

/// Largest counted repetition bound, as in PCRE2 (`{n,m}` with n, m <= 65535).
pub const REPEAT_MAX: u32 = 65_535;

/// Most instructions in a compiled program. Counted repetition multiplies the
/// program, so this bounds memory per pattern and per match.
pub const PROGRAM_INSTS_MAX: usize = 200_000;

/// Longest lookbehind, in characters (PCRE2's default `max_varlookbehind`).
pub const LOOKBEHIND_LEN_MAX: u32 = 255;

/// Default budget of backtracker steps per match call. One step is one
/// instruction executed; a step costs a few nanoseconds, so the budget bounds a
/// single call to well under a second.
pub const BACKTRACK_STEPS_MAX: u64 = 10_000_000;

/// Budget of backtracker steps for `find` and `captures` on a regular
/// pattern with a loop whose body can match empty. The backtracker gives
/// PCRE's spans there (an empty iteration ends the loop); past this budget the
/// linear Pike VM answers instead, so such patterns never fail or hang.
pub const NULLABLE_LOOP_STEPS_MAX: u64 = 100_000;

/// Named group names are at most this many bytes, as in PCRE2.
pub const GROUP_NAME_LEN_MAX: usize = 32;

const _: () = assert!(PROGRAM_INSTS_MAX < u32::MAX as usize);
const _: () = assert!(LOOKBEHIND_LEN_MAX <= REPEAT_MAX);
const _: () = assert!(NULLABLE_LOOP_STEPS_MAX <= BACKTRACK_STEPS_MAX);
