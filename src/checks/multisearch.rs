//! Many patterns over large evidence: one SIMD substring search per pattern, in order,
//! each stopping when the caller says the pattern is done (a fact found early costs
//! little; one never found costs one pass). A pattern with a letter is found through
//! its longest run without letters (`/9700` of a URL), compared without case where that
//! run occurs; only a pattern without such a run needs the text lowercased, into a copy
//! shared by every search of the text. Numbers (the ways an answer's quantities could
//! be written) are found for all patterns in one pass over the text's digit runs
//! ([`search_numbers_while`]): a number never written costs no pass of its own. (One
//! Aho-Corasick pass for all patterns was measured slower: its overlapping search runs
//! at a tenth of a substring search's speed, and evidence is dense in the digits every
//! number pattern starts with.)

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
        for at in find_iter_ignore_case(hay, lowered, &needle, 0) {
            if hit(i, at, at + needle.len()) {
                break;
            }
        }
    }
}

/// Shortest run without letters worth searching for instead of the lowercased copy.
const ANCHOR: usize = 3;

/// The occurrences of `needle` (ASCII lowercase) in `hay[from..]` with ASCII letters
/// compared without case, as offsets in `hay`: non-overlapping, leftmost first — what a
/// substring search of the lowercased text finds. A needle without letters is searched
/// in `hay` itself; one with a run of [`ANCHOR`] bytes or more without letters, through
/// that run (every occurrence of the needle holds it, and lowercasing leaves it as it
/// is); any other needle in `lowered` (see [`search_while`]).
pub(crate) fn find_iter_ignore_case<'a>(
    hay: &'a str,
    lowered: &'a OnceLock<Vec<u8>>,
    needle: &'a [u8],
    from: usize,
) -> Box<dyn Iterator<Item = usize> + 'a> {
    let hay_b = hay.as_bytes();
    let from = from.min(hay_b.len());
    if !needle.iter().any(u8::is_ascii_alphabetic) {
        return Box::new(
            memchr::memmem::find_iter(&hay_b[from..], needle).map(move |at| at + from),
        );
    }
    // The longest run of bytes that are no letters, first of equals.
    let (mut best, mut run_start) = ((0, 0), 0);
    for (k, b) in needle.iter().enumerate() {
        if b.is_ascii_alphabetic() {
            run_start = k + 1;
        } else if k + 1 - run_start > best.1 - best.0 {
            best = (run_start, k + 1);
        }
    }
    if best.1 - best.0 >= ANCHOR {
        let (off, anchor) = (best.0, &needle[best.0..best.1]);
        let finder = memchr::memmem::Finder::new(anchor);
        let n = needle.len();
        // Each occurrence of the anchor, overlapping ones too, is a candidate start.
        let mut pos = from + off;
        let mut next_free = from;
        return Box::new(std::iter::from_fn(move || {
            loop {
                let a = pos + finder.find(hay_b.get(pos..)?)?;
                pos = a + 1;
                let start = a - off;
                if start < next_free || start + n > hay_b.len() {
                    continue;
                }
                if hay_b[start..start + n].eq_ignore_ascii_case(needle) {
                    next_free = start + n;
                    return Some(start);
                }
            }
        }));
    }
    let lower = lowered.get_or_init(|| {
        if hay.bytes().any(|b| b.is_ascii_uppercase()) {
            hay.as_bytes().to_ascii_lowercase()
        } else {
            Vec::new()
        }
    });
    let text = if lower.is_empty() {
        hay_b
    } else {
        lower.as_slice()
    };
    Box::new(memchr::memmem::find_iter(&text[from..], needle).map(move |at| at + from))
}

/// Whether `b` may be part of a number as written: digits and their separators.
fn numeric(b: u8) -> bool {
    b.is_ascii_digit() || matches!(b, b',' | b'.' | b':')
}

/// A pattern the one pass finds: digits and single separators between them (`12,000`,
/// `0.5`, `8:05`), no longer than this.
const NUMBER_MAX: usize = 40;

fn number_pattern(p: &[u8]) -> bool {
    p.len() <= NUMBER_MAX
        && p.first().is_some_and(u8::is_ascii_digit)
        && p.last().is_some_and(u8::is_ascii_digit)
        && p.iter().all(|&b| numeric(b))
        && !p
            .windows(2)
            .any(|w| !w[0].is_ascii_digit() && !w[1].is_ascii_digit())
}

/// [`search_while`] for the occurrences of `patterns` that `whole(start, end)` accepts,
/// numbers as written (a digit before or after an occurrence, `whole` refuses): the
/// same calls of `hit`, in the same order, save those of occurrences `whole` refuses.
/// The first whole occurrence of every number pattern is found in one pass over the
/// starts of `hay`'s digit runs; a pattern's search goes on from there only when `hit`
/// wants more. Other patterns are searched one by one, as [`search_while`] does.
pub(crate) fn search_numbers_while(
    hay: &str,
    lowered: &OnceLock<Vec<u8>>,
    patterns: &[String],
    whole: impl Fn(usize, usize) -> bool,
    mut wanted: impl FnMut(usize) -> bool,
    hit: &mut impl FnMut(usize, usize, usize) -> bool,
) {
    let first = first_whole_numbers(hay, patterns, &whole);
    for (i, pattern) in patterns.iter().enumerate() {
        if pattern.is_empty() || !wanted(i) {
            continue;
        }
        let needle = pattern.as_bytes().to_ascii_lowercase();
        let from = match first[i] {
            Some(None) => continue,
            Some(Some(at)) => {
                if hit(i, at, at + needle.len()) {
                    continue;
                }
                at + needle.len()
            }
            None => 0,
        };
        for at in find_iter_ignore_case(hay, lowered, &needle, from) {
            if whole(at, at + needle.len()) && hit(i, at, at + needle.len()) {
                break;
            }
        }
    }
}

/// For each pattern: `None` when it is no number pattern, else where its first whole
/// occurrence (that a substring search of `hay` meets) starts, if anywhere.
fn first_whole_numbers(
    hay: &str,
    patterns: &[String],
    whole: &impl Fn(usize, usize) -> bool,
) -> Vec<Option<Option<usize>>> {
    let b = hay.as_bytes();
    let mut out: Vec<Option<Option<usize>>> = patterns
        .iter()
        .map(|p| number_pattern(p.as_bytes()).then_some(None))
        .collect();
    // The number patterns not found yet, by first digit and length; and the pairs of
    // bytes they open with (a pattern of one digit: that digit and any byte but a digit).
    let mut open = out.iter().filter(|o| o.is_some()).count();
    if open == 0 {
        return out;
    }
    let mut buckets: Vec<Vec<usize>> = vec![Vec::new(); 10 * (NUMBER_MAX + 1)];
    let bucket = |p: &[u8]| usize::from(p[0] - b'0') * (NUMBER_MAX + 1) + p.len();
    let mut pairs = vec![false; 1 << 16];
    let fill = |pairs: &mut Vec<bool>, out: &[Option<Option<usize>>]| {
        pairs.iter_mut().for_each(|x| *x = false);
        for (i, p) in patterns.iter().enumerate() {
            if out[i] != Some(None) {
                continue;
            }
            let p = p.as_bytes();
            if p.len() >= 2 {
                pairs[usize::from(p[0]) << 8 | usize::from(p[1])] = true;
            } else {
                for next in (0..=255u8).filter(|x| !x.is_ascii_digit()) {
                    pairs[usize::from(p[0]) << 8 | usize::from(next)] = true;
                }
            }
        }
    };
    for (i, p) in patterns.iter().enumerate() {
        if out[i].is_some() {
            buckets[bucket(p.as_bytes())].push(i);
        }
    }
    fill(&mut pairs, &out);
    // The last byte stands for the end of the text (no digit follows it).
    let pair_at =
        |p: usize| usize::from(b[p]) << 8 | usize::from(b.get(p + 1).copied().unwrap_or(0));
    let record = |p: usize, out: &mut Vec<Option<Option<usize>>>, pairs: &mut Vec<bool>| -> bool {
        // The ends a number pattern from `p` can have: after each digit group.
        let mut j = p;
        let mut changed = false;
        while j < b.len() && j - p < NUMBER_MAX {
            while j < b.len() && b[j].is_ascii_digit() {
                j += 1;
            }
            if j - p > NUMBER_MAX {
                break;
            }
            for &i in &buckets[usize::from(b[p] - b'0') * (NUMBER_MAX + 1) + (j - p)] {
                if out[i] == Some(None)
                    && patterns[i].as_bytes() == &b[p..j]
                    && whole(p, j)
                    && met(b, p, patterns[i].as_bytes())
                {
                    out[i] = Some(Some(p));
                    changed = true;
                }
            }
            if j + 1 < b.len() && matches!(b[j], b',' | b'.' | b':') && b[j + 1].is_ascii_digit() {
                j += 1;
            } else {
                break;
            }
        }
        if changed {
            fill(pairs, out);
        }
        changed
    };
    // The starts of digit runs, eight bytes at a time: a byte is a digit when, XOR '0',
    // it is below 10.
    const LOW: u64 = 0x7f7f_7f7f_7f7f_7f7f;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    let digits = |x: u64| {
        let t = x ^ 0x3030_3030_3030_3030;
        let ten_or_more = ((t & LOW) + 0x7676_7676_7676_7676) & HIGH;
        !(ten_or_more | t) & HIGH
    };
    let mut prev = 0u64;
    let mut w = 0;
    while w + 8 <= b.len() {
        let x = u64::from_le_bytes(b[w..w + 8].try_into().expect("eight bytes"));
        let d = digits(x);
        let mut starts = d & !((d << 8) | (prev >> 56));
        prev = d;
        while starts != 0 {
            let p = w + (starts.trailing_zeros() / 8) as usize;
            starts &= starts - 1;
            if pairs[pair_at(p)] && record(p, &mut out, &mut pairs) {
                open = out.iter().filter(|o| **o == Some(None)).count();
                if open == 0 {
                    return out;
                }
            }
        }
        w += 8;
    }
    for p in w..b.len() {
        let starts = b[p].is_ascii_digit() && (p == 0 || !b[p - 1].is_ascii_digit());
        if starts && pairs[pair_at(p)] && record(p, &mut out, &mut pairs) {
            open = out.iter().filter(|o| **o == Some(None)).count();
            if open == 0 {
                return out;
            }
        }
    }
    out
}

/// Whether a substring search of `b` for `pattern` meets its occurrence at `p`: not
/// when an occurrence before it overlaps it. Every occurrence lies inside one run of
/// digits and separators, and the search enters each run at its first occurrence.
fn met(b: &[u8], p: usize, pattern: &[u8]) -> bool {
    let mut run = p;
    while run > 0 && numeric(b[run - 1]) {
        run -= 1;
    }
    memchr::memmem::find_iter(&b[run..p + pattern.len()], pattern).any(|at| run + at == p)
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

    /// The whole-number rule of the tracer's callers, for the tests.
    fn whole_number(text: &str, start: usize, end: usize) -> bool {
        let b = text.as_bytes();
        let digit = |i: usize| b.get(i).is_some_and(u8::is_ascii_digit);
        crate::text::whole(text, start, end - start)
            && !(digit(end - 1) && b.get(end) == Some(&b',') && (1..=3).all(|k| digit(end + k)))
            && !(digit(start)
                && start >= 2
                && matches!(b[start - 1], b',' | b'.')
                && digit(start - 2))
    }

    #[test]
    fn the_number_pass_makes_the_calls_a_search_per_pattern_makes() {
        let unit = "Fee USD 12,000, 1,200 or 12; 112:12:12 and 12:12:12 at 8:05, 0.5 of 10.5.\n\
            v9.9.9 1.1.1 2026-02-17 x600y 600. (45) 3 ９ 600,000 99.9% 1111 11 ";
        let patterns: Vec<String> = [
            "12", "12,000", "1,200", "12:12", "8:05", "0.5", "5", "600", "45", "3", "11", "1.1",
            "9.9.9", "v9.9.9", "2026", "17", "99.9", "", "600,000", "7", "10.5", "1111",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        for reps in [1, 2, 50] {
            let hay = unit.repeat(reps);
            for stop in [1, 2, usize::MAX] {
                for skip in [usize::MAX, 0, 5] {
                    let run = |numbers: bool| {
                        let mut out = Vec::new();
                        let mut seen = vec![0; patterns.len()];
                        let mut hit = |i: usize, s: usize, e: usize| {
                            if !whole_number(&hay, s, e) {
                                return false;
                            }
                            out.push((i, s, e));
                            seen[i] += 1;
                            seen[i] >= stop
                        };
                        if numbers {
                            search_numbers_while(
                                &hay,
                                &OnceLock::new(),
                                &patterns,
                                |s, e| whole_number(&hay, s, e),
                                |i| i != skip,
                                &mut hit,
                            );
                        } else {
                            search_while(
                                &hay,
                                &OnceLock::new(),
                                &patterns,
                                |i| i != skip,
                                &mut hit,
                            );
                        }
                        out
                    };
                    let (want, got) = (run(false), run(true));
                    assert!(!want.is_empty());
                    assert_eq!(got, want, "{reps} units, stop after {stop}, skip {skip}");
                }
            }
        }
    }

    #[test]
    fn a_search_through_a_run_without_letters_finds_what_the_lowercased_copy_does() {
        let hay = "See HTTPS://Docs.Example.com/page/9700 and https://docs.example.com/page/97001; \
            Claude-Sonnet-4-6, claude-sonnet-4-6-4-6 AbAbA-1-1-1 ab";
        let lower = hay.to_ascii_lowercase();
        for needle in [
            "https://docs.example.com/page/9700",
            "claude-sonnet-4-6",
            "-4-6",
            "a-1-1",
            "ab",
            "zz-9-9-9",
        ] {
            for from in [0, 10, 60, hay.len()] {
                let want: Vec<usize> = memchr::memmem::find_iter(&lower.as_bytes()[from..], needle)
                    .map(|at| at + from)
                    .collect();
                let got: Vec<usize> =
                    find_iter_ignore_case(hay, &OnceLock::new(), needle.as_bytes(), from).collect();
                assert_eq!(got, want, "{needle} from {from}");
            }
        }
    }
}
