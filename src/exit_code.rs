//! The process exit codes of fibon-verify: a CI pipeline branches on these, so they are
//! part of the public interface (docs/exit-codes.md) and never written as literals.
//!
//! When several apply, the most important wins, in this order:
//! [`USAGE`], [`INVALID_INPUT`], then [`SILENT_DEGRADATION`], [`CONTRACT_VIOLATION`],
//! [`QUALITY_GATE_FAILED`], [`PROBE_FAILED`], [`UNSTABLE`], [`UNAVAILABLE`], [`NO_CELLS`].

/// Every cell passed (or, for `check`, every file is valid; warnings are allowed).
pub const SUCCESS: i32 = 0;
/// Silent degradation found: a fault was injected, no failure signal reached the caller,
/// and an answer was still produced.
pub const SILENT_DEGRADATION: i32 = 1;
/// A contract violation was found, and no silent degradation.
pub const CONTRACT_VIOLATION: i32 = 2;
/// The quality gate failed.
pub const QUALITY_GATE_FAILED: i32 = 3;
/// The capability probe failed: a critical precondition is unmet or the lockfile drifted.
pub const PROBE_FAILED: i32 = 4;
/// The filters selected no cells.
pub const NO_CELLS: i32 = 5;
/// Reproducibility sampling found unstable skills.
pub const UNSTABLE: i32 = 6;
/// Usage error: a bad flag or argument on the command line (sysexits `EX_USAGE`).
pub const USAGE: i32 = 64;
/// An invalid contract, scenario or config file (sysexits `EX_DATAERR`).
pub const INVALID_INPUT: i32 = 65;
/// Could not evaluate: a target or upstream unreachable, a judge unavailable. The
/// verifier fails closed (sysexits `EX_UNAVAILABLE`).
pub const UNAVAILABLE: i32 = 69;
/// An internal error: a bug in fibon-verify (sysexits `EX_SOFTWARE`).
pub const INTERNAL: i32 = 70;
/// Interrupted by a signal; a partial report is still written.
pub const INTERRUPTED: i32 = 130;

/// Precedence of the codes, most important first (docs/exit-codes.md, "When several apply").
pub const PRECEDENCE: [i32; 9] = [
    USAGE,
    INVALID_INPUT,
    SILENT_DEGRADATION,
    CONTRACT_VIOLATION,
    QUALITY_GATE_FAILED,
    PROBE_FAILED,
    UNSTABLE,
    UNAVAILABLE,
    NO_CELLS,
];

/// Combines the outcomes of several checks into one exit code: the most important
/// non-zero code by [`PRECEDENCE`], else [`INTERRUPTED`] or [`INTERNAL`] if present, else
/// [`SUCCESS`].
pub fn combine(codes: impl IntoIterator<Item = i32>) -> i32 {
    let codes: Vec<i32> = codes.into_iter().filter(|&c| c != SUCCESS).collect();
    PRECEDENCE
        .iter()
        .chain(&[INTERRUPTED, INTERNAL])
        .copied()
        .find(|c| codes.contains(c))
        .or_else(|| codes.first().copied())
        .unwrap_or(SUCCESS)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn combine_follows_the_documented_precedence() {
        assert_eq!(combine([]), SUCCESS);
        assert_eq!(combine([SUCCESS, SUCCESS]), SUCCESS);
        assert_eq!(combine([NO_CELLS, UNAVAILABLE]), UNAVAILABLE);
        assert_eq!(
            combine([CONTRACT_VIOLATION, SILENT_DEGRADATION]),
            SILENT_DEGRADATION
        );
        assert_eq!(
            combine([UNAVAILABLE, QUALITY_GATE_FAILED]),
            QUALITY_GATE_FAILED
        );
        assert_eq!(combine([SILENT_DEGRADATION, INVALID_INPUT]), INVALID_INPUT);
        assert_eq!(combine([INVALID_INPUT, USAGE]), USAGE);
        assert_eq!(combine([PROBE_FAILED, UNSTABLE]), PROBE_FAILED);
    }
}
