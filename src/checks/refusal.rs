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
    let m = l.derived(Matchers::of);
    // Word starts for `i ` / `we `: mark spaces before normalizing them away.
    let marked: String = format!(" {} ", sentence.to_lowercase()).replace(' ', "\u{1}");
    let n = normalize(&marked.replace('\u{1}', " ")).replace(' ', "");
    // The marks (ASCII, not whitespace) stay where they are through `normalize`, and no
    // thousands separator is read across one: the same as normalizing word by word.
    let spaced = normalize(&marked);
    let has = |list: &Phrases| list.any_in(&n, &spaced);
    // A failure named as a condition ("retry whenever a request timed out", "if the API
    // is down, back off") is advice, not a report of this request's failure.
    if has(&m.failure) && !conditional(&spaced) {
        return true;
    }
    has(&m.inability) && has(&m.self_) && (has(&m.reason) || has(&m.answer))
}

/// The lexicon's lists of [`sentence_refuses`], each as automata built once per lexicon.
struct Matchers {
    failure: Phrases,
    inability: Phrases,
    self_: Phrases,
    reason: Phrases,
    answer: Phrases,
}

impl Matchers {
    fn of(l: &Lexicon) -> Matchers {
        Matchers {
            failure: Phrases::of(&l.failure),
            inability: Phrases::of(&l.inability),
            self_: Phrases::of(&l.self_),
            reason: Phrases::of(&l.reason),
            answer: Phrases::of(&l.answer),
        }
    }
}

/// One list: its phrases that start a word (marked with a trailing `\u{1}`) are looked
/// for after a word-start mark in the marked text, the others anywhere in the normalized
/// text — one automaton each, not a search per phrase.
struct Phrases {
    marked: Option<aho_corasick::AhoCorasick>,
    plain: Option<aho_corasick::AhoCorasick>,
    /// A phrase normalized to nothing is in every text.
    empty: bool,
}

impl Phrases {
    fn of(list: &[String]) -> Phrases {
        let (marked, plain): (Vec<&String>, Vec<&String>) =
            list.iter().partition(|p| p.ends_with('\u{1}'));
        let build = |patterns: Vec<String>| {
            (!patterns.is_empty())
                .then(|| aho_corasick::AhoCorasick::new(patterns).expect("lexicon compiles"))
        };
        Phrases {
            empty: plain.iter().any(|p| p.is_empty()),
            marked: build(marked.iter().map(|p| format!("\u{1}{p}")).collect()),
            plain: build(plain.iter().map(|p| p.to_string()).collect()),
        }
    }

    fn any_in(&self, normalized: &str, spaced: &str) -> bool {
        self.empty
            || self
                .plain
                .as_ref()
                .is_some_and(|ac| ac.is_match(normalized))
            || self.marked.as_ref().is_some_and(|ac| ac.is_match(spaced))
    }
}

/// Whether a sentence (normalized, with word-start marks) states a condition.
fn conditional(spaced: &str) -> bool {
    const EN: [&str; 4] = ["if", "whenever", "unless", "in case"];
    const ZH: [&str; 6] = ["如果", "假如", "若是", "一旦", "每当", "万一"];
    EN.iter()
        .any(|w| spaced.contains(&format!("\u{1}{}\u{1}", w.replace(' ', "\u{1}"))))
        || ZH.iter().any(|w| spaced.contains(w))
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
