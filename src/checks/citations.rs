//! What the detectors report of facts, and forged citations: the kinds of key fact (the
//! facts themselves are read by [`super::claims`]), the text of an output (a JSON output's
//! string values), and cited URLs no call fetched or returned.

/// What kind of fact a span is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum FactKind {
    /// `https://...`
    Url,
    /// `claude-3-5-sonnet-20241022`, `v2.1.0`
    Identifier,
    /// `$15`, `USD 12,000`, `15 美元`
    Amount,
    /// `2027-03-31`, `March 31, 2027`, `2027年3月31日`
    Date,
    /// `99.9%`
    Percentage,
    /// `600 requests per minute`, `200K tokens`, `60 days`, `3 million`
    Quantity,
    /// A quoted span.
    Quote,
    /// A clock time: `08:05`, `8 点 05 分`.
    Time,
    /// A bare number, or a count: `500`, `10 seats`.
    Number,
    /// A proper name: `Nanjing South`.
    Name,
}

/// One key fact of an answer.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Fact {
    /// The text as it appears in the answer.
    pub text: String,
    /// Its kind.
    pub kind: FactKind,
}

/// The text of an output for fact extraction: a string as is; for JSON, its string
/// values and the keys that are phrases (names such as `answer` and punctuation are not
/// claims; `"Latest model: x-9 at $1": "see note"` is). A string that is itself a JSON object or
/// array — an answer a recorder stored serialized — is read as that JSON.
pub fn output_text(output: &serde_json::Value) -> String {
    fn walk(v: &serde_json::Value, out: &mut Vec<String>) {
        match v {
            serde_json::Value::String(s) => match embedded_json(s) {
                Some(inner) => walk(&inner, out),
                None => out.push(s.clone()),
            },
            serde_json::Value::Number(n) => out.push(n.to_string()),
            serde_json::Value::Array(items) => items.iter().for_each(|i| walk(i, out)),
            serde_json::Value::Object(map) if is_record(map) => {
                // A flat object is one record wherever it sits (`results[0]`): its values
                // are read as one sentence, so a number is checked beside its siblings.
                let mut fields = Vec::new();
                walk_fields(map, &mut fields);
                if fields.iter().any(|p| p.contains('\n')) {
                    out.extend(fields);
                } else if !fields.is_empty() {
                    out.push(fields.join("; "));
                }
            }
            serde_json::Value::Object(map) => walk_fields(map, out),
            _ => {}
        }
    }
    fn is_record(map: &serde_json::Map<String, serde_json::Value>) -> bool {
        map.len() >= 2 && !map.values().any(|x| x.is_object() || x.is_array())
    }
    fn walk_fields(map: &serde_json::Map<String, serde_json::Value>, out: &mut Vec<String>) {
        for (key, value) in map {
            // A key that is a phrase, not a name, is a claim like any value.
            if key.trim().contains(char::is_whitespace) {
                out.push(key.clone());
            }
            // Fields about the response itself (`"status": "no_data"`,
            // `"confidence": 0`) say nothing of the subject, nor do those that echo what
            // was asked (`"query": "Team plan SSO"`).
            let k = key.to_ascii_lowercase();
            let about_response = (value.is_string()
                && [
                    "query",
                    "question",
                    "request",
                    "prompt",
                    "user_question",
                    "status",
                    "state",
                    "code",
                    "error",
                    "error_code",
                    "type",
                    "kind",
                    "level",
                    "severity",
                ]
                .contains(&k.as_str()))
                || (value.is_number()
                    && [
                        "confidence",
                        "score",
                        "probability",
                        "rank",
                        "retry",
                        "attempt",
                        "latency",
                        "elapsed",
                    ]
                    .iter()
                    .any(|m| k.contains(m)));
            if !about_response {
                walk(value, out);
            }
        }
    }
    let mut parts = Vec::new();
    walk(output, &mut parts);
    parts.join("\n")
}

/// `s` parsed, when it is a JSON object or array (and nothing else).
fn embedded_json(s: &str) -> Option<serde_json::Value> {
    let t = s.trim();
    let bracketed =
        (t.starts_with('{') && t.ends_with('}')) || (t.starts_with('[') && t.ends_with(']'));
    if !bracketed {
        return None;
    }
    serde_json::from_str(t).ok()
}

/// Whether `text` holds `url` whole: `…/pricing` is not read because `…/pricing/basic` was
/// (a trailing `/` or sentence punctuation after it is allowed). Scheme and host compare
/// case-insensitively.
#[cfg(test)]
fn mentions_url(text: &str, url: &str) -> bool {
    mentions_url_in(text, &std::sync::OnceLock::new(), url)
}

/// [`mentions_url`], with `lowered` the text's lowercased copy where one is needed
/// (see [`super::multisearch::find_iter_ignore_case`]), made once for every URL.
fn mentions_url_in(hay: &str, lowered: &std::sync::OnceLock<Vec<u8>>, url: &str) -> bool {
    let url = url.trim();
    if url.is_empty() {
        return false;
    }
    let needle = url.to_ascii_lowercase();
    let ends_token = |rest: &str| {
        let rest = rest.strip_prefix('/').unwrap_or(rest);
        let rest = rest.trim_start_matches(['.', ',', ';', ':', '!', '?']);
        rest.chars()
            .next()
            .is_none_or(|c| c.is_whitespace() || "\"'<>()[]{}`，。；、】）".contains(c))
    };
    super::multisearch::find_iter_ignore_case(hay, lowered, needle.as_bytes(), 0)
        .any(|at| ends_token(&hay[at + needle.len()..]))
}

/// Cited URLs (the `citations` field, and URLs the answer names outside talk of the
/// process) that no successful call carried or returned: citations of pages never read.
/// Each URL is looked up once; the evidence is lowercased once, and only if a URL has
/// no run without letters to be found by.
pub fn forged_urls(cited: &[String], fetched: &[String], evidence: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut seen = std::collections::HashSet::new();
    let lower = std::sync::OnceLock::new();
    for url in cited {
        if !seen.insert(url.as_str()) {
            continue;
        }
        let known =
            fetched.iter().any(|f| same_url(f, url)) || mentions_url_in(evidence, &lower, url);
        if !known {
            out.push(url.clone());
        }
    }
    out
}

fn same_url(a: &str, b: &str) -> bool {
    a.trim_end_matches('/') == b.trim_end_matches('/')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn forged_urls_are_cited_but_never_read() {
        let forged = forged_urls(
            &[
                "https://docs.anthropic.com/en/release-notes".into(),
                "https://docs.anthropic.com/en/docs/models/".into(),
                "https://docs.example.com/returned-by-search".into(),
            ],
            &["https://docs.anthropic.com/en/docs/models".into()],
            "results: https://docs.example.com/returned-by-search",
        );
        assert_eq!(forged, ["https://docs.anthropic.com/en/release-notes"]);
    }

    #[test]
    fn a_cited_url_is_read_only_if_it_was_there_whole() {
        let ev = "hits: https://docs.example.com/pricing/basic and HTTPS://Docs.Example.com/faq.";
        assert!(mentions_url(ev, "https://docs.example.com/pricing/basic"));
        assert!(mentions_url(ev, "https://docs.example.com/faq"));
        assert!(!mentions_url(ev, "https://docs.example.com/pricing"));
        assert!(!mentions_url(ev, "https://docs.example.com/pric"));
        assert!(!mentions_url(ev, ""));
    }

    #[test]
    fn keys_of_json_answers_are_not_claims_even_when_serialized() {
        let object = serde_json::json!({"answer": "up to 600 requests", "results": [{"url": "u"}]});
        let want = "up to 600 requests\nu";
        assert_eq!(output_text(&object), want);
        assert_eq!(
            output_text(&serde_json::Value::String(object.to_string())),
            want,
            "a recorder stored the object as a string"
        );
        assert_eq!(
            output_text(
                &serde_json::json!({"note": "n", "Latest model: claude-opus-9-9 at $1": "see note"})
            ),
            "n; Latest model: claude-opus-9-9 at $1; see note",
            "a flat object is one record"
        );
        for plain in ["{not json}", "[see the docs]", "a \"quoted\" claim"] {
            assert_eq!(output_text(&plain.into()), plain);
        }
    }
}
