//! Which of many keys occur whole in one text: the lookups of an answer's facts in the
//! input, the calls and the normalized evidence. A short text or few keys are searched
//! key by key (SIMD substring search, stopping at the first whole occurrence), which
//! costs nothing to set up; many keys over a long text share one Aho-Corasick pass.
//! Either way the answer is the same: a key is found when some occurrence of it,
//! overlapping others or not, is whole (`crate::text::whole`).

use aho_corasick::{AhoCorasick, AhoCorasickKind};

/// Above this many distinct keys over a text longer than [`SHORT`], one automaton pass
/// is cheaper than a substring search per key.
const KEYS_PER_PASS: usize = 16;
/// Texts up to this length are always searched key by key (building an automaton costs
/// more than scanning them many times).
const SHORT: usize = 64 * 1024;

/// For each of `keys` (empty keys are never found), whether it occurs whole in `haystack`.
pub(crate) fn found_whole(keys: &[String], haystack: &str) -> Vec<bool> {
    let mut out = vec![false; keys.len()];
    if haystack.is_empty() {
        return out;
    }
    // Each distinct key once, with the positions that hold it.
    let mut distinct: Vec<(&str, Vec<usize>)> = Vec::new();
    for (i, k) in keys.iter().enumerate().filter(|(_, k)| !k.is_empty()) {
        match distinct.iter_mut().find(|(d, _)| *d == k.as_str()) {
            Some((_, at)) => at.push(i),
            None => distinct.push((k.as_str(), vec![i])),
        }
    }
    if distinct.is_empty() {
        return out;
    }
    let hits: Vec<bool> = if haystack.len() <= SHORT || distinct.len() <= KEYS_PER_PASS {
        distinct
            .iter()
            .map(|(k, _)| occurs_whole(haystack, k))
            .collect()
    } else {
        let mut hits = vec![false; distinct.len()];
        let Ok(ac) = AhoCorasick::builder()
            .kind(Some(AhoCorasickKind::ContiguousNFA))
            .build(distinct.iter().map(|(k, _)| *k))
        else {
            return out;
        };
        for m in ac.find_overlapping_iter(haystack) {
            if crate::text::whole(haystack, m.start(), m.len()) {
                hits[m.pattern().as_usize()] = true;
            }
        }
        hits
    };
    for ((_, at), hit) in distinct.iter().zip(hits) {
        for &i in at {
            out[i] = hit;
        }
    }
    out
}

/// Whether `key` occurs whole in `haystack` at any position, overlapping occurrences
/// included (`11` in `111` at 0 and at 1).
pub(crate) fn occurs_whole(haystack: &str, key: &str) -> bool {
    let finder = memchr::memmem::Finder::new(key.as_bytes());
    let hay = haystack.as_bytes();
    let mut from = 0;
    while let Some(at) = finder.find(&hay[from..]) {
        let at = from + at;
        if crate::text::whole(haystack, at, key.len()) {
            return true;
        }
        from = at + 1;
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    fn keys(k: &[&str]) -> Vec<String> {
        k.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn both_ways_agree_on_whole_numbers_and_overlaps() {
        let hay = "fee$30and$3;ids1111,2;v2.1;".repeat(4000);
        let mut k = keys(&["$3", "$30", "111", "v2", "v2.1", "", "nothere", "$3"]);
        let short = found_whole(&k, &hay[..30]);
        assert_eq!(
            short,
            [true, true, false, false, true, false, false, true],
            "`$3` whole before `;`, `111` only inside `1111`, `v2` only inside `v2.1`"
        );
        // Past KEYS_PER_PASS distinct keys over a long text: the automaton.
        for i in 0..20 {
            k.push(format!("k{i}x"));
        }
        let long = found_whole(&k, &hay);
        assert_eq!(&long[..8], &short[..]);
        let each: Vec<bool> = k
            .iter()
            .map(|x| !x.is_empty() && occurs_whole(&hay, x))
            .collect();
        assert_eq!(long, each);
    }
}
