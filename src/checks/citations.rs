//! The citation tracer (`strict_citation_required`) and forged citations. The key facts of
//! an answer — model and version identifiers, prices and amounts, dates, percentages,
//! large numbers with units, URLs, quoted spans — are extracted and looked up in the
//! cell's evidence (the tool results the gateway served, plus the input) in one
//! Aho-Corasick pass over the normalized evidence: linear in the evidence, whatever the
//! number of facts. Ordinary prose has no key facts and is never flagged.

use std::sync::OnceLock;

use aho_corasick::AhoCorasick;
use regex::Regex;

use super::text::normalize;

/// What kind of fact a span is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
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
}

/// One key fact of an answer.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Fact {
    /// The text as it appears in the answer.
    pub text: String,
    /// Its kind.
    pub kind: FactKind,
}

/// Words that number parts of things rather than name products.
const GENERIC: [&str; 16] = [
    "version", "section", "chapter", "article", "clause", "step", "table", "figure", "page",
    "part", "item", "rule", "level", "phase", "stage", "release",
];

fn patterns() -> &'static [(FactKind, Regex)] {
    static P: OnceLock<Vec<(FactKind, Regex)>> = OnceLock::new();
    P.get_or_init(|| {
        let months = "January|February|March|April|May|June|July|August|September|October|November|December|Jan|Feb|Mar|Apr|Jun|Jul|Aug|Sep|Sept|Oct|Nov|Dec";
        let units = r"requests?\s+per\s+(?:second|minute|hour|day)|requests?/(?:s|min|h)|rpm|rps|tokens?|business\s+days?|days?|hours?|minutes?|mins?|seconds?|secs?|ms|weeks?|months?|years?|users?|calls?|attempts?|pages?|MB|GB|TB|KB|次/分钟|次|天|小时|分钟|秒|周|个月|年|万|亿|个";
        let n = r"\d[\d,]*(?:\.\d+)?";
        let counts = "batches|requests|calls|items|files|users|customers|employees|engineers|seats|instances|nodes|GPUs|CPUs|cores|vCPUs|replicas|messages|documents|records|rows|entries|characters|words|bytes|queries|transactions|orders|licenses|regions|servers|devices|patients|flights|rooms|nights|shares|downloads|installs|stars|commits|issues|tickets|invoices|accounts";
        let raw: Vec<(FactKind, String)> = vec![
            (FactKind::Url, r#"https?://[^\s<>"'()\[\]{}，。；、】）]+"#.to_string()),
            (FactKind::Date, r"\b\d{4}-\d{1,2}-\d{1,2}\b".to_string()),
            (FactKind::Date, r"\d{4}\s*年\s*\d{1,2}\s*月(?:\s*\d{1,2}\s*日)?".to_string()),
            (FactKind::Date, format!(r"\b(?:{months})\.?\s+\d{{1,2}}(?:st|nd|rd|th)?,?\s+\d{{4}}\b")),
            (FactKind::Date, format!(r"\b\d{{1,2}}\s+(?:{months})\.?,?\s+\d{{4}}\b")),
            (FactKind::Identifier, r"\b[A-Za-z][A-Za-z0-9]*(?:[-_.][A-Za-z0-9]+)+\b".to_string()),
            (FactKind::Identifier, r"\bv\d+(?:\.\d+)*\b|\b\d+\.\d+\.\d+(?:\.\d+)?\b".to_string()),
            // A product and its version: `Claude 3.5`, `GPT 4.1`, `Python 3.11`.
            (FactKind::Identifier, r"\b[A-Z][A-Za-z]+\s\d+\.\d+\b".to_string()),
            (FactKind::Amount, format!(r"(?:[$€£¥￥]|\b(?:USD|EUR|GBP|CNY|RMB|JPY)\s?){n}(?:\s?(?:[KMB]\b|k\b|million|billion|thousand))?")),
            (FactKind::Amount, format!(r"{n}\s?(?:万|亿|千|百万)?\s?(?:美元|元|欧元|人民币|港元|日元|dollars?\b|euros?\b|USD\b|EUR\b)")),
            (FactKind::Percentage, format!(r"{n}\s?%")),
            (FactKind::Quantity, format!(r"{n}\s?(?:[KMB]\s?|(?:million|billion|thousand)\s+)?(?:[A-Za-z]+\s+per\s+(?:second|minute|hour|day|week|month|year)\b|{units})")),
            (FactKind::Quantity, format!(r"{n}\s?(?:[KMB]\s?|(?:million|billion|thousand)\s+)?(?:{counts})\b")),
            (FactKind::Quantity, format!(r"{n}\s?(?:万|亿|千)?\s?(?:名|位|家|台|条|份|辆|架|张|件|次|个)\p{{Han}}{{0,4}}|{n}\s?(?:万|亿|千)?\s?(?:人|晚|间)")),
            (FactKind::Quantity, format!(r"{n}\s?(?:°\s?[CF]|℃|℉)")),
            (FactKind::Quantity, format!(r"{n}\s?(?:million|billion|thousand)\b|\b\d+(?:\.\d+)?[KMB]\b|\b\d{{1,3}}(?:,\d{{3}})+\b")),
            (FactKind::Quote, r#""([^"\n]{3,200})"|“([^”\n]{3,200})”|「([^」\n]{3,200})」"#.to_string()),
        ];
        raw.into_iter().map(|(k, p)| (k, Regex::new(&p).expect("fact patterns compile"))).collect()
    })
}

/// The key facts of a text, without overlaps (the longest span wins), in text order.
/// Typographic hyphens and dashes are read as `-` (`claude‐3‐5` is `claude-3-5`).
pub fn extract(text: &str) -> Vec<Fact> {
    let folded: String;
    let text = if text.chars().any(|c| super::text::fold_dash(c) != c) {
        folded = text.chars().map(super::text::fold_dash).collect();
        folded.as_str()
    } else {
        text
    };
    let mut spans: Vec<(usize, usize, FactKind)> = Vec::new();
    for (kind, re) in patterns() {
        for m in re.find_iter(text) {
            let s = m.as_str().trim_end_matches(['.', ',', ';', ':', '!', '?']);
            if s.is_empty() {
                continue;
            }
            // An identifier needs a digit (or it is prose with hyphens, "e.g.", "well-known").
            if *kind == FactKind::Identifier && !s.bytes().any(|b| b.is_ascii_digit()) {
                continue;
            }
            // `Name 3.5` is a product's version, unless the name is a word for a part of a
            // document ("Version 2.1", "Section 4.1"): its number is then the fact.
            if *kind == FactKind::Identifier
                && let Some((word, _)) = s.split_once(char::is_whitespace)
                && GENERIC.contains(&word.to_ascii_lowercase().as_str())
            {
                continue;
            }
            spans.push((m.start(), m.start() + s.len(), *kind));
        }
    }
    spans.sort_by(|a, b| a.0.cmp(&b.0).then(b.1.cmp(&a.1)));
    let mut out: Vec<Fact> = Vec::new();
    // Each distinct fact once; a set keeps a flooded answer (a megabyte of numbers) linear.
    let mut seen: std::collections::HashSet<&str> = std::collections::HashSet::new();
    let mut end = 0;
    for (s, e, kind) in spans {
        if s < end {
            continue;
        }
        end = e;
        if seen.insert(&text[s..e]) {
            out.push(Fact {
                text: text[s..e].to_string(),
                kind,
            });
        }
    }
    out
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
            serde_json::Value::Object(map) => {
                for (key, value) in map {
                    // A key that is a phrase, not a name, is a claim like any value.
                    if key.trim().contains(char::is_whitespace) {
                        out.push(key.clone());
                    }
                    walk(value, out);
                }
            }
            _ => {}
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

/// The facts of `answer` that the evidence does not support. The evidence is normalized
/// once and scanned once with an automaton of every fact.
pub fn unsupported(facts: &[Fact], evidence: &str) -> Vec<Fact> {
    let keys: Vec<String> = facts.iter().map(|f| normalize(quote_inner(f))).collect();
    let wanted: Vec<(usize, &String)> = keys
        .iter()
        .enumerate()
        .filter(|(_, k)| !k.is_empty())
        .collect();
    if wanted.is_empty() {
        return Vec::new();
    }
    let Ok(ac) = AhoCorasick::new(wanted.iter().map(|(_, k)| k.as_str())) else {
        return facts.to_vec();
    };
    let haystack = normalize(evidence);
    let mut found = vec![false; wanted.len()];
    for m in ac.find_overlapping_iter(&haystack) {
        // `$3` is not supported by evidence saying `$30`.
        if super::text::whole(&haystack, m.start(), m.len()) {
            found[m.pattern().as_usize()] = true;
        }
    }
    wanted
        .iter()
        .zip(found)
        .filter(|(_, f)| !f)
        .map(|((i, _), _)| facts[*i].clone())
        .collect()
}

/// Scans evidence for a set of normalized needles; the throughput benchmark's entry point.
pub fn scan(needles: &[String], evidence: &str) -> usize {
    let Ok(ac) = AhoCorasick::new(needles) else {
        return 0;
    };
    ac.find_overlapping_iter(&normalize(evidence)).count()
}

fn quote_inner(f: &Fact) -> &str {
    if f.kind == FactKind::Quote {
        f.text
            .trim_matches(|c| matches!(c, '"' | '“' | '”' | '「' | '」'))
    } else {
        &f.text
    }
}

/// Whether `text` holds `url` whole: `…/pricing` is not read because `…/pricing/basic` was
/// (a trailing `/` or sentence punctuation after it is allowed). Scheme and host compare
/// case-insensitively.
fn mentions_url(text: &str, url: &str) -> bool {
    let url = url.trim();
    if url.is_empty() {
        return false;
    }
    let (hay, needle) = (text.to_ascii_lowercase(), url.to_ascii_lowercase());
    let ends_token = |rest: &str| {
        let rest = rest.strip_prefix('/').unwrap_or(rest);
        let rest = rest.trim_start_matches(['.', ',', ';', ':', '!', '?']);
        rest.chars()
            .next()
            .is_none_or(|c| c.is_whitespace() || "\"'<>()[]{}`，。；、】）".contains(c))
    };
    hay.match_indices(needle.as_str())
        .any(|(at, m)| ends_token(&hay[at + m.len()..]))
}

/// URLs cited in the answer text and in `citations` that no successful call carried or
/// returned: citations of pages the agent never read.
pub fn forged_urls(
    answer: &str,
    citations: &[String],
    fetched: &[String],
    evidence: &str,
) -> Vec<String> {
    let mut cited: Vec<String> = extract(answer)
        .into_iter()
        .filter(|f| f.kind == FactKind::Url)
        .map(|f| f.text)
        .collect();
    cited.extend(citations.iter().cloned());
    let mut out = Vec::new();
    for url in cited {
        let known = fetched.iter().any(|f| same_url(f, &url)) || mentions_url(evidence, &url);
        if !known && !out.contains(&url) {
            out.push(url);
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

    fn texts(s: &str) -> Vec<String> {
        extract(s).into_iter().map(|f| f.text).collect()
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
            "n\nLatest model: claude-opus-9-9 at $1\nsee note"
        );
        for plain in ["{not json}", "[see the docs]", "a \"quoted\" claim"] {
            assert_eq!(output_text(&plain.into()), plain);
        }
    }

    #[test]
    fn extracts_key_facts_and_not_prose() {
        assert_eq!(
            texts(
                "The latest is claude-3-5-sonnet-20241022 (v2.1.0), $15 / $75, since 2024-10-22; 99.9% uptime."
            ),
            [
                "claude-3-5-sonnet-20241022",
                "v2.1.0",
                "$15",
                "$75",
                "2024-10-22",
                "99.9%"
            ]
        );
        assert_eq!(
            texts(
                "Up to 600 requests per minute, a 200K tokens window, 60 days' notice, USD 12,000."
            ),
            [
                "600 requests per minute",
                "200K tokens",
                "60 days",
                "USD 12,000"
            ]
        );
        assert_eq!(
            texts("价格为 15 美元，截止 2027年3月31日，见 https://docs.example.com/a。"),
            ["15 美元", "2027年3月31日", "https://docs.example.com/a"]
        );
        assert!(
            texts("I can look that up for you once the well-known search service is back.")
                .is_empty()
        );
        assert!(texts("这个问题需要查阅文档后才能回答。").is_empty());
    }

    #[test]
    fn support_survives_case_spacing_width_and_separators() {
        let facts =
            extract("Fee USD 12,000; model Claude-Sonnet-4-6; window 200K tokens; made up: $75.");
        let evidence =
            "fee: usd 12000 per year. Model: claude-sonnet-4-6. Context: 200 k tokens ｜ ＄１５";
        let bad: Vec<String> = unsupported(&facts, evidence)
            .into_iter()
            .map(|f| f.text)
            .collect();
        assert_eq!(bad, ["$75"]);
    }

    #[test]
    fn forged_urls_are_cited_but_never_read() {
        let forged = forged_urls(
            "See [来源: https://docs.anthropic.com/en/release-notes] and https://docs.anthropic.com/en/docs/models/",
            &["https://blog.example/x".into()],
            &["https://docs.anthropic.com/en/docs/models".into()],
            "results: https://docs.example.com/returned-by-search",
        );
        assert_eq!(
            forged,
            [
                "https://docs.anthropic.com/en/release-notes",
                "https://blog.example/x"
            ]
        );
    }
}
