//! Many patterns over large evidence: one SIMD substring search per pattern, in order,
//! each stopping when the caller says the pattern is done (a fact found early costs
//! little; one never found costs one pass). The text is lowercased into a copy only
//! when a pattern has a letter and the text has an upper-case one, and that copy is
//! shared by every search of the text: numbers as written match the evidence as it is. (One Aho-Corasick pass for all patterns was
//! measured slower: its overlapping search runs at a tenth of a substring search's
//! speed, and evidence is dense in the digits every number pattern starts with.)

use std::sync::OnceLock;

/// Searches `hay` for `patterns` (ASCII letters without case), calling `hit(pattern,
/// start, end)` for each occurrence — non-overlapping, leftmost first, one pattern after
/// the other in order — until `hit` says that pattern is done; `wanted(pattern)` is
/// asked before each pattern's turn (false skips it). Empty patterns are skipped.
/// `lowered` is `hay`'s lowercased copy, kept by the caller for every search of the same
/// `hay` (a tenth of the tracer's time was that copy, made once per search): made on the
/// first pattern with a letter, and left empty when `hay` has no upper-case letter. A
/// pattern without letters is searched in `hay` itself (lowercasing changes only
/// letters, so it matches there exactly where it matches in the copy).
pub(crate) fn search_while(
    hay: &str,
    lowered: &OnceLock<Vec<u8>>,
    patterns: &[String],
    mut wanted: impl FnMut(usize) -> bool,
    hit: &mut impl FnMut(usize, usize, usize) -> bool,
) {
    for (i, pattern) in patterns.iter().enumerate() {
        if pattern.is_empty() || !wanted(i) {
            continue;
        }
        let needle = pattern.as_bytes().to_ascii_lowercase();
        let text = if needle.iter().any(u8::is_ascii_alphabetic) {
            let lower = lowered.get_or_init(|| {
                if hay.bytes().any(|b| b.is_ascii_uppercase()) {
                    hay.as_bytes().to_ascii_lowercase()
                } else {
                    Vec::new()
                }
            });
            if lower.is_empty() {
                hay.as_bytes()
            } else {
                lower.as_slice()
            }
        } else {
            hay.as_bytes()
        };
        for at in memchr::memmem::find_iter(text, &needle) {
            if hit(i, at, at + needle.len()) {
                break;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every call `search_while` makes, with `hit` done after `stop` occurrences.
    fn calls(hay: &str, patterns: &[String], stop: usize) -> Vec<(usize, usize, usize)> {
        let mut out = Vec::new();
        let mut seen = vec![0; patterns.len()];
        search_while(
            hay,
            &OnceLock::new(),
            patterns,
            |i| i != 3,
            &mut |i, s, e| {
                out.push((i, s, e));
                seen[i] += 1;
                seen[i] >= stop
            },
        );
        out
    }

    #[test]
    fn it_hands_out_what_a_search_per_pattern_over_lowercased_text_finds() {
        let unit = "Fee $30 and $3; ids 1111 and 1.1.1; V2.1 v2 ABA ababa. ";
        let patterns: Vec<String> = ["$3", "11", "1.1", "x", "aba", "v2", "", "zz"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        let long = unit.repeat(300);
        for stop in [1, 3, usize::MAX] {
            let got = calls(&long, &patterns, stop);
            // The reference: a substring search per pattern over the lowercased text.
            let lower = long.to_ascii_lowercase();
            let mut want = Vec::new();
            for (i, p) in patterns.iter().enumerate() {
                if p.is_empty() || i == 3 {
                    continue;
                }
                let p = p.to_ascii_lowercase();
                for (n, (at, _)) in lower.match_indices(p.as_str()).enumerate() {
                    want.push((i, at, at + p.len()));
                    if n + 1 >= stop {
                        break;
                    }
                }
            }
            assert_eq!(got, want, "stop after {stop}");
        }
    }
}
