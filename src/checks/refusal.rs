//! Reading the refusal lexicon ([`crate::lexicon`]) over an answer: whether it says a
//! lookup failed or the agent will not answer (which names the reason in findings), and
//! whether it marks itself partial. Whether an answer was produced is decided from what it
//! asserts ([`super::claims`]), not from these words.

pub use crate::lexicon::Lexicon;
use crate::text::normalize;

/// Whether a text marks itself as a partial answer ("partial answer: ...", "部分结果").
pub fn is_partial(text: &str, lexicon: &Lexicon) -> bool {
    let n = normalize(text);
    lexicon
        .partial
        .iter()
        .any(|p| n.contains(p.trim_end_matches('\u{1}')))
}

/// Whether a text is, or contains, a refusal: the template matched, or a sentence of it
/// is a refusal by the lexicon.
pub fn is_refusal(text: &str, template: Option<&str>, lexicon: &Lexicon) -> bool {
    if let Some(t) = template
        && template_matches(text, t)
    {
        return true;
    }
    sentences(text).iter().any(|s| sentence_refuses(s, lexicon))
}

fn sentence_refuses(sentence: &str, l: &Lexicon) -> bool {
    // Word starts for `i ` / `we `: mark spaces before normalizing them away.
    let marked: String = format!(" {} ", sentence.to_lowercase()).replace(' ', "\u{1}");
    let n = normalize(&marked.replace('\u{1}', " ")).replace(' ', "");
    let spaced = normalize_keep_marks(&marked);
    let has = |list: &[String]| {
        list.iter().any(|p| {
            if p.ends_with('\u{1}') {
                spaced.contains(&format!("\u{1}{p}"))
            } else {
                n.contains(p.as_str())
            }
        })
    };
    // A failure named as a condition ("retry whenever a request timed out", "if the API
    // is down, back off") is advice, not a report of this request's failure.
    if has(&l.failure) && !conditional(&spaced) {
        return true;
    }
    has(&l.inability) && has(&l.self_) && (has(&l.reason) || has(&l.answer))
}

/// Whether a sentence (normalized, with word-start marks) states a condition.
fn conditional(spaced: &str) -> bool {
    const EN: [&str; 4] = ["if", "whenever", "unless", "in case"];
    const ZH: [&str; 6] = ["如果", "假如", "若是", "一旦", "每当", "万一"];
    EN.iter()
        .any(|w| spaced.contains(&format!("\u{1}{}\u{1}", w.replace(' ', "\u{1}"))))
        || ZH.iter().any(|w| spaced.contains(w))
}

/// Normalized, keeping the word-boundary marks.
fn normalize_keep_marks(s: &str) -> String {
    s.split('\u{1}')
        .map(normalize)
        .collect::<Vec<_>>()
        .join("\u{1}")
}

fn sentences(text: &str) -> Vec<&str> {
    text.split_inclusive(['.', '!', '?', '。', '！', '？', ';', '；', '\n'])
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .collect()
}

/// The template in the text: verbatim after normalization, or most of its character
/// bigrams present (a paraphrase that keeps its words).
fn template_matches(text: &str, template: &str) -> bool {
    let (t, a) = (normalize(template), normalize(text));
    if t.is_empty() {
        return false;
    }
    if a.contains(&t) {
        return true;
    }
    let bigrams = |s: &str| -> Vec<(char, char)> {
        let cs: Vec<char> = s.chars().collect();
        cs.windows(2).map(|w| (w[0], w[1])).collect()
    };
    let tb = bigrams(&t);
    let ab: std::collections::HashSet<(char, char)> = bigrams(&a).into_iter().collect();
    if tb.len() < 4 {
        return false;
    }
    let hit = tb.iter().filter(|b| ab.contains(b)).count();
    hit as f64 / tb.len() as f64 >= 0.7
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refuses(s: &str) -> bool {
        is_refusal(s, None, &Lexicon::builtin())
    }

    #[test]
    fn recognizes_refusals_in_both_languages() {
        assert!(refuses(
            "I couldn't reach the documentation service, so I can't give you a reliable answer."
        ));
        assert!(refuses(
            "抱歉，文档服务暂时无法访问，我没办法给出可靠的回答。"
        ));
        assert!(refuses("工具不可用。"));
        assert!(refuses(
            "Sorry — the search tool timed out. Please try again later."
        ));
        assert!(!refuses(
            "The API cannot be called more than the limit allows; see the docs."
        ));
        assert!(!refuses(
            "Each API key may send up to 600 requests per minute."
        ));
        assert!(!refuses("这个模型的上下文窗口是 200K tokens。"));
    }

    #[test]
    fn the_template_matches_verbatim_or_nearly() {
        let t = "检索工具当前不可用，无法给出有依据的回答。";
        assert!(template_matches(
            "检索工具当前不可用, 无法给出有依据的回答",
            t
        ));
        assert!(template_matches(
            "很抱歉：检索工具当前不可用，所以无法给出有依据的回答。",
            t
        ));
        assert!(!template_matches("最新模型是 claude-sonnet-4-6。", t));
    }
}
