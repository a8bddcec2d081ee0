//! Text normalization for matching facts against evidence: Unicode compatibility mapping
//! (NFKC's folding: full-width digits and letters become ASCII), lowercase, no whitespace
//! at all, and no thousands separators in numbers (`12,000` = `12000`). The same function
//! is applied to both sides of every match.

/// The normalized form of a text (see the module docs). Linear in the input: ASCII and
/// the CJK ideographs, kana and Hangul (which compatibility mapping leaves alone) take a
/// fast path; other characters are mapped by their compatibility decomposition, so
/// full-width `１２` becomes `12`. Both sides of a match go through this one function.
pub fn normalize(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while !rest.is_empty() {
        // A run of ASCII, byte by byte: most evidence is.
        let run = rest.bytes().take_while(u8::is_ascii).count();
        if run > 0 {
            out.extend(
                rest.as_bytes()[..run]
                    .iter()
                    .filter(|b| !b.is_ascii_whitespace())
                    .map(|b| char::from(b.to_ascii_lowercase())),
            );
            rest = &rest[run..];
            continue;
        }
        let c = rest.chars().next().unwrap_or(' ');
        rest = &rest[c.len_utf8()..];
        // Typographic dashes and quotes are the same facts as their ASCII forms (models
        // write `claude‑3‑5` with U+2011, `60 days’ notice` with U+2019).
        let c = match fold_dash(c) {
            '\u{2018}' | '\u{2019}' | '\u{201A}' | '\u{201B}' | '\u{2032}' => '\'',
            '\u{201C}' | '\u{201D}' | '\u{201E}' | '\u{201F}' | '\u{2033}' => '"',
            other => other,
        };
        if c.is_ascii() {
            if !c.is_ascii_whitespace() {
                out.push(c.to_ascii_lowercase());
            }
        } else if is_plain_cjk(c) {
            out.push(c);
        } else if c.is_whitespace() {
            continue;
        } else {
            unicode_normalization::char::decompose_compatible(c, |d| {
                if !d.is_whitespace() {
                    out.extend(d.to_lowercase());
                }
            });
        }
    }
    // Most texts have no comma: nothing to strip, no second copy.
    if out.contains(',') {
        strip_thousands(&out)
    } else {
        out
    }
}

/// A typographic hyphen, dash or minus as `-`; any other character as it is.
pub(crate) fn fold_dash(c: char) -> char {
    match c {
        '\u{2010}'..='\u{2015}' | '\u{2212}' => '-',
        c => c,
    }
}

/// Characters compatibility mapping leaves unchanged and case does not apply to.
fn is_plain_cjk(c: char) -> bool {
    matches!(c, '\u{4E00}'..='\u{9FFF}' | '\u{3400}'..='\u{4DBF}' | '\u{3041}'..='\u{3096}' | '\u{30A1}'..='\u{30FA}' | '\u{AC00}'..='\u{D7A3}')
}

/// `1,234,567` -> `1234567`: a comma between a digit and exactly three digits (not
/// followed by a fourth) is a thousands separator.
fn strip_thousands(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    for (i, &c) in b.iter().enumerate() {
        if c == b','
            && i > 0
            && b[i - 1].is_ascii_digit()
            && b.len() > i + 3
            && b[i + 1..i + 4].iter().all(u8::is_ascii_digit)
            && !b.get(i + 4).is_some_and(u8::is_ascii_digit)
        {
            continue;
        }
        out.push(c);
    }
    String::from_utf8(out).unwrap_or_default()
}

/// Whether `needle` occurs in `haystack` once both are normalized, as a whole number:
/// `$3` is not in `$30`, `42` is not in `1420`, `USD 15,000` is not in `USD 150,000`.
pub(crate) fn contains(haystack: &str, needle: &str) -> bool {
    let n = normalize(needle);
    let h = normalize(haystack);
    !n.is_empty()
        && h.match_indices(n.as_str())
            .any(|(at, _)| whole(&h, at, n.len()))
}

/// Whether the match of `len` bytes at `at` in the normalized `h` does not cut a number:
/// a match starting with a digit must not follow one, and one ending with a digit must
/// not be followed by a digit, or by a decimal point and a digit.
pub(crate) fn whole(h: &str, at: usize, len: usize) -> bool {
    let b = h.as_bytes();
    let digit = |i: usize| b.get(i).is_some_and(u8::is_ascii_digit);
    let (first, last) = (at, at + len - 1);
    if digit(first) && first > 0 && digit(first - 1) {
        return false;
    }
    if digit(last) && (digit(last + 1) || (b.get(last + 1) == Some(&b'.') && digit(last + 2))) {
        return false;
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matching_ignores_case_spacing_width_and_separators() {
        assert!(contains(
            "The latest is Claude-Sonnet-4-6.",
            "claude-sonnet-4-6"
        ));
        assert!(contains(
            "600  requests\nper minute",
            "600 requests per minute"
        ));
        assert!(contains("fee: USD 12000 a year", "USD 12,000"));
        assert!(contains("费用 １２，０００ 美元", "12,000 美元"));
        assert!(contains("1,234,567 tokens", "1234567 tokens"));
        assert!(!contains("1,23 and 4", "1234"));
        assert!(contains(
            "a non‑breaking claude‑3‑5 – and “quotes” ’",
            "claude-3-5 - and \"quotes\" '"
        ));
    }

    #[test]
    fn numbers_match_whole() {
        assert!(contains("Basic costs $3 per month", "$3"));
        assert!(!contains("Basic costs $30 per month", "$3"));
        assert!(!contains("Basic costs $3.50 per month", "$3"));
        assert!(contains("ends in 3.", "3"));
        assert!(!contains("includes 1420 seats", "42"));
        assert!(contains("the answer is 42", "42"));
        assert!(!contains("USD 150,000", "USD 15,000"));
        assert!(!contains("$75,000", "$75"));
        assert!(contains("version 4.6 today", "4.6"));
        assert!(!contains("anything", "  "));
    }
}
