//! The refusal lexicon: phrases in Chinese and English that say a lookup failed or the
//! agent cannot answer (they name the reason in findings), partial-answer markers, and the
//! vocabularies [`super::claims`] reads clauses with. Whether an answer was produced is
//! decided from what it asserts, not from these words. The lexicon is a data file
//! (`refusal_lexicon.yaml`); users extend it from fibon.yaml.

use std::path::Path;
use std::sync::{Arc, OnceLock};

use serde::Deserialize;

use super::text::normalize;

/// The phrase lists (see `refusal_lexicon.yaml` for what each means).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Lexicon {
    /// "cannot", "无法".
    #[serde(default)]
    pub inability: Vec<String>,
    /// First-person and apology markers.
    #[serde(default, rename = "self")]
    pub self_: Vec<String>,
    /// Why: unavailable, denied, timed out.
    #[serde(default)]
    pub reason: Vec<String>,
    /// About answering: reliable, answer, 回答.
    #[serde(default)]
    pub answer: Vec<String>,
    /// Statements that a tool or service failed.
    #[serde(default)]
    pub failure: Vec<String>,
    /// Markers of a partial answer that says so.
    #[serde(default)]
    pub partial: Vec<String>,
    /// Words of the process: tools, failures, the agent, retrying, offers.
    #[serde(default)]
    pub process: Vec<String>,
    /// Hedges that make a clause a claim: probably, 一般.
    #[serde(default)]
    pub hedge: Vec<String>,
    /// Clause openings that name a topic: regarding, 关于.
    #[serde(default)]
    pub topic: Vec<String>,
    /// Interrogatives: a clause asking (or restating the question) asserts nothing.
    #[serde(default)]
    pub question: Vec<String>,
    /// Declining to guess: "rather not guess", "不想凭印象猜".
    #[serde(default)]
    pub declines: Vec<String>,
    /// Suppositions: "if you stay 4 hours", "例如".
    #[serde(default)]
    pub supposition: Vec<String>,
    /// Labels naming the question ("Query:", "问题："): the clause after restates it.
    #[serde(default)]
    pub query_label: Vec<String>,
    /// Caveats: "prices vary", "可能已经过时".
    #[serde(default)]
    pub caveat: Vec<String>,
    /// Pointing elsewhere: "refer to", "以…为准", "请在 App 查看".
    #[serde(default)]
    pub redirect: Vec<String>,
    /// Verbs of quoting a figure or guessing; negated, they decline: "不给你乱报".
    #[serde(default)]
    pub quoting: Vec<String>,
    /// The word matchers of `process`, `hedge` and `topic`, built on first use.
    #[serde(skip)]
    vocabularies: OnceLock<Arc<super::claims::Vocabularies>>,
}

impl Lexicon {
    /// The built-in lexicon.
    pub fn builtin() -> Arc<Lexicon> {
        static L: OnceLock<Arc<Lexicon>> = OnceLock::new();
        Arc::clone(L.get_or_init(|| {
            let mut l: Lexicon = serde_yaml::from_str(include_str!("refusal_lexicon.yaml"))
                .expect("the built-in lexicon parses");
            l.normalize();
            Arc::new(l)
        }))
    }

    /// The built-in lexicon extended with a user's file.
    pub fn extended(path: &Path) -> Result<Lexicon, String> {
        let text = crate::source::read_text(path, crate::source::MAX_FILE_BYTES)
            .map_err(|why| format!("cannot read {}: {why}", path.display()))?;
        let mut extra: Lexicon =
            serde_yaml::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))?;
        extra.normalize();
        let mut l = (*Lexicon::builtin()).clone();
        // The matchers are built from the extended lists, not the built-in ones.
        l.vocabularies = OnceLock::new();
        l.inability.extend(extra.inability);
        l.self_.extend(extra.self_);
        l.reason.extend(extra.reason);
        l.answer.extend(extra.answer);
        l.failure.extend(extra.failure);
        l.partial.extend(extra.partial);
        l.process.extend(extra.process);
        l.hedge.extend(extra.hedge);
        l.topic.extend(extra.topic);
        l.question.extend(extra.question);
        l.declines.extend(extra.declines);
        l.supposition.extend(extra.supposition);
        l.caveat.extend(extra.caveat);
        l.query_label.extend(extra.query_label);
        l.redirect.extend(extra.redirect);
        l.quoting.extend(extra.quoting);
        Ok(l)
    }

    /// The matchers of the clause vocabularies.
    pub(crate) fn vocabularies(&self) -> &super::claims::Vocabularies {
        self.vocabularies
            .get_or_init(|| Arc::new(super::claims::Vocabularies::of(self)))
    }

    fn normalize(&mut self) {
        for list in [
            &mut self.inability,
            &mut self.self_,
            &mut self.reason,
            &mut self.answer,
            &mut self.failure,
            &mut self.partial,
        ] {
            for p in list.iter_mut() {
                // `i ` and `we ` keep a trailing marker so "i" does not match inside words.
                let trailing_space = p.ends_with(' ');
                *p = normalize(p);
                if trailing_space {
                    p.push('\u{1}');
                }
            }
        }
    }
}

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
