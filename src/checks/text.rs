//! Text normalization for matching facts and messages: lowercase, whitespace collapsed.

/// Lowercased, with every run of whitespace one space, trimmed.
pub fn normalize(s: &str) -> String {
    s.split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .to_lowercase()
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
    fn matching_ignores_case_and_spacing() {
        assert!(contains(
            "The latest is Claude-Sonnet-4-6.",
            "claude-sonnet-4-6"
        ));
        assert!(contains(
            "600  requests\nper minute",
            "600 requests per minute"
        ));
        assert!(!contains("anything", "  "));
    }
}
