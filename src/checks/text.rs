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
    for c in s.chars() {
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
    strip_thousands(&out)
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

/// Whether `needle` occurs in `haystack` once both are normalized.
pub(crate) fn contains(haystack: &str, needle: &str) -> bool {
    let n = normalize(needle);
    !n.is_empty() && normalize(haystack).contains(&n)
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
        assert!(!contains("anything", "  "));
    }
}
