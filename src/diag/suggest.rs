//! "Did you mean": the closest known name to a misspelled key or value.

/// The candidate closest to `word`, if it is close enough to be a likely typo.
pub fn did_you_mean<'a>(
    word: &str,
    candidates: impl IntoIterator<Item = &'a str>,
) -> Option<&'a str> {
    let lower = word.to_lowercase();
    candidates
        .into_iter()
        .filter_map(|c| {
            let c_lower = c.to_lowercase();
            let distance = strsim::damerau_levenshtein(&lower, &c_lower);
            let limit = (c.chars().count() / 4).clamp(1, 3);
            // `length` for `len`: a word that extends a short name is a likely mix-up too.
            let extends = c_lower.len() >= 3 && lower.starts_with(&c_lower);
            ((distance <= limit || extends) && c != word).then_some((distance, c))
        })
        .min_by_key(|&(d, c)| (d, c))
        .map(|(_, c)| c)
}

/// A help line: "did you mean `x`?" when there is a close candidate, else the list of
/// valid names (when it is short enough to read).
pub fn suggestion_help(word: &str, candidates: &[&str], what: &str) -> String {
    match did_you_mean(word, candidates.iter().copied()) {
        Some(s) => format!("did you mean `{s}`?"),
        None if candidates.is_empty() => format!("remove this {what}"),
        None => {
            let list: Vec<String> = candidates.iter().map(|c| format!("`{c}`")).collect();
            format!("expected one of {}", list.join(", "))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn suggests_close_names_only() {
        let keys = [
            "must_call_tools",
            "tool_call_min_frequency",
            "strict_citation_required",
        ];
        assert_eq!(
            did_you_mean("must_cal_tools", keys),
            Some("must_call_tools")
        );
        assert_eq!(
            did_you_mean("MUST_CALL_TOOLS", keys),
            Some("must_call_tools")
        );
        assert_eq!(did_you_mean("banana", keys), None);
        let modes = ["hard_fail", "refuse_with_reason", "degraded_with_marker"];
        assert_eq!(
            did_you_mean("refuse_with_reson", modes),
            Some("refuse_with_reason")
        );
        assert_eq!(
            did_you_mean("id", ["skill", "id"]),
            None,
            "an exact match is no typo"
        );
    }

    #[test]
    fn help_lists_candidates_without_a_close_one() {
        assert_eq!(
            suggestion_help("x", &["simple", "complex"], "value"),
            "expected one of `simple`, `complex`"
        );
        assert_eq!(
            suggestion_help("simpel", &["simple", "complex"], "value"),
            "did you mean `simple`?"
        );
    }
}
