//! One analysis of an answer, shared by every check: what the text *asserts*. The answer
//! is folded once (full-width, dashes, Traditional as Simplified), split into sentences
//! and clauses, and its key facts are read: every quantity (numbers in any notation,
//! amounts, durations, clock times, dates), every token that mixes letters and digits or
//! is a name of code (`G102`, `A12`, `v3.4.1`, `request_timeout_ms`, `--retries`,
//! `EXCTL_TIMEOUT_MS`), URLs and quotes. Each clause is about the subject (it names what
//! the question names and says something of it), about the process (tools, failures, the
//! agent, retrying, offers), or neither. An answer was produced when it asserts: a key
//! fact the input does not already hold, or a clause about the subject — however much
//! regret wraps it. The evidence side ([`Evidence`]) says which facts the tool results
//! support, directly, in another notation, in context (the same line or table cell), or
//! as a simple computation from them.

use std::collections::{HashMap, HashSet};
use std::sync::OnceLock;

use aho_corasick::AhoCorasick;
use regex::Regex;

use super::citations::{Fact, FactKind};
use super::numbers::{self, Dim, Quantity};
use super::refusal::Lexicon;
use crate::text::normalize;

/// What a clause is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    /// States something about the question's subject.
    Subject,
    /// Speaks of the process: the tools, their failure, the agent, retrying, offers.
    Process,
    /// Neither (a label, a greeting, a restated topic).
    Neutral,
    /// Asks, or restates what was asked ("which one is cheaper", "几点发车").
    Question,
}

/// One clause of the answer.
#[derive(Debug, Clone)]
pub struct Clause {
    /// Byte span in [`Analysis::folded`].
    pub start: usize,
    /// End of the span.
    pub end: usize,
    /// Its sentence.
    pub sentence: usize,
    /// What it is about.
    pub role: Role,
    /// It opens with a supposition ("if you stay 4 hours", "例如停 4 小时"): the numbers
    /// it counts with are the example's, not claims.
    pub hypothetical: bool,
    /// It points to another source ("以 12306 为准"): its names and numbers name it.
    pub redirect: bool,
    /// It opens on the topic ("关于“…”", "regarding"): what it quotes or names is the
    /// question's topic restated.
    pub topic: bool,
    /// It holds a hedge ("usually", "一般"): a guess is a statement even without a verb.
    pub hedged: bool,
    /// It is a heading or a label before a colon.
    pub label: bool,
    /// It is a label or heading that speaks of the process ("1 次查询失败：").
    pub process_label: bool,
    /// It opens with a condition ("如果你本地装了 exctl", "if you have the app"): it
    /// supposes, it states nothing.
    pub condition: bool,
}

/// One key fact of the answer.
#[derive(Debug, Clone)]
pub struct Claim {
    /// The fact as reported.
    pub fact: Fact,
    /// Its value, for a quantity.
    pub quantity: Option<Quantity>,
    /// The clause it is in.
    pub clause: usize,
    /// Where it starts in [`Analysis::folded`].
    pub at: usize,
}

/// The analysis of one answer.
#[derive(Debug, Clone)]
pub struct Analysis {
    /// The folded text.
    pub folded: String,
    /// Key facts, in text order, each once.
    pub claims: Vec<Claim>,
    /// Clauses, in text order.
    pub clauses: Vec<Clause>,
    /// Whether some sentence reports a failure or refuses, by the lexicon (it names the
    /// reason in findings; it does not decide the verdict).
    pub reports_failure: bool,
}

const STOP: &[&str] = &[
    "the", "a", "an", "is", "are", "was", "were", "be", "been", "being", "of", "to", "in", "on",
    "at", "for", "and", "or", "with", "by", "from", "as", "it", "its", "it's", "this", "that",
    "these", "those", "what", "which", "who", "whom", "how", "when", "where", "why", "do", "does",
    "did", "can", "could", "would", "should", "will", "there", "here", "right", "now", "today",
    "much", "many", "per", "any", "some", "so", "if", "than", "then", "also", "just", "only",
    "very", "more", "most", "up", "out", "into", "over", "under", "about", "get", "got", "has",
    "have", "had", "one", "ones", "not", "no", "yes", "ok", "okay", "hi", "hello", "hey", "all",
    "both", "each", "either", "neither", "other", "such", "own", "same", "too", "big", "vs", "via",
    "e.g", "i.e", "etc", "like", "well", "still", "yet", "but", "however", "though", "although",
    "hmm", "oh", "ah", "um", "btw", "fyi", "note", "tl", "dr", "re",
];

/// Chinese words that make a clause a statement rather than a noun phrase: copulas,
/// comparison, modals, aspect, negation, adverbs of degree, frequency and approximation
/// (a closed class; content words are open). Folded (Simplified) forms.
const ZH_PREDICATE: &[&str] = &[
    "是", "为", "比", "更", "最", "较", "会", "要", "需", "能", "可", "就", "都", "很", "太", "挺",
    "按", "有", "没", "在", "一般", "通常", "大概", "应该", "多半", "一定", "肯定", "向来", "往往",
    "只", "才", "已", "了", "过", "着", "得", "约", "左右", "之间", "以上", "以下", "不", "别",
];

/// English auxiliaries, copulas and modals: a clause with none names or points (a closed
/// class; verbs are open).
const EN_AUXILIARY: &[&str] = &[
    "is", "are", "was", "were", "be", "been", "being", "am", "has", "have", "had", "do", "does",
    "did", "will", "would", "can", "could", "may", "might", "must", "should", "shall", "cannot",
];

/// Words whose `'s` is `is` or `has`.
const EN_S_CONTRACTED: &[&str] = &[
    "it", "that", "there", "here", "what", "who", "where", "how", "he", "she", "this",
];

/// Whether a text calls something an example value: the word in lower case (`Example
/// Cloud` is a name) or its Chinese forms.
fn names_example(text: &str) -> bool {
    const ZH: &[&str] = &["示例", "范例", "例子", "样例"];
    // Split on what ends a word but not on what joins a host (`docs.example.com`).
    let mut words = text
        .split(|c: char| !(c.is_alphanumeric() || "./:-_@".contains(c)))
        .map(|w| w.trim_matches(|c: char| !c.is_alphanumeric()));
    ZH.iter().any(|n| text.contains(n)) || words.any(|w| w == "example" || w == "sample")
}

/// Common nouns built on a [`ZH_PREDICATE`] character ("版本号和更新亮点" names a topic).
const ZH_NOMINAL: &[&str] = &[
    "更新", "最新", "会员", "会议", "要求", "要点", "需求", "比例", "可用", "有效", "在线", "过程",
    "能力",
];

/// Characters that make a Chinese bigram a function word rather than a name.
const ZH_FUNCTION: &str = "的了吗呢吧么嘛啊呀哦是和与跟及或请问几多少哪怎什这那个些";

/// Emoji and pictographs (`👍`, `🚀`, `⚠`).
fn is_pictograph(c: char) -> bool {
    matches!(c, '\u{1F300}'..='\u{1FAFF}' | '\u{2600}'..='\u{27BF}' | '\u{1F000}'..='\u{1F2FF}')
}

fn is_han(c: char) -> bool {
    ('\u{4E00}'..='\u{9FFF}').contains(&c) || ('\u{3400}'..='\u{4DBF}').contains(&c)
}

/// Content words: ASCII words (lowercase, two letters or more, not stop words) and
/// Chinese character bigrams without function characters.
pub(crate) fn words(folded: &str) -> Vec<String> {
    let mut out = Vec::new();
    each_word(folded, |w| out.push(w.to_string()));
    out
}

/// [`words`] one by one, without a `String` each: a clause's role only counts them.
pub(crate) fn each_word(folded: &str, mut f: impl FnMut(&str)) {
    // An ASCII word and a run of Han characters are each contiguous in the text: read by
    // where they start, one of them at a time.
    let mut lower = String::new();
    let mut ascii_word = |w: &str, f: &mut dyn FnMut(&str)| {
        let t = w.trim_matches(|c: char| c == '\'' || c == '.' || c == '-');
        lower.clear();
        lower.push_str(t);
        lower.make_ascii_lowercase();
        let t = lower.as_str();
        if t.len() >= 2 && !STOP.contains(&t) && !t.bytes().all(|b| b.is_ascii_digit()) {
            // `trim_end_matches("'s")` without a substring searcher per word.
            let mut t = t;
            while let Some(stem) = t.strip_suffix("'s") {
                t = stem;
            }
            f(t);
        }
    };
    let han_bigrams = |run: &str, f: &mut dyn FnMut(&str)| {
        let mut previous: Option<(usize, char)> = None;
        for (i, c) in run.char_indices() {
            if let Some((j, p)) = previous
                && !ZH_FUNCTION.contains(p)
                && !ZH_FUNCTION.contains(c)
            {
                f(&run[j..i + c.len_utf8()]);
            }
            previous = Some((i, c));
        }
    };
    let mut ascii: Option<usize> = None;
    let mut han: Option<usize> = None;
    for (i, c) in folded.char_indices() {
        if c.is_ascii_alphanumeric() || (matches!(c, '\'' | '-' | '_' | '.') && ascii.is_some()) {
            if let Some(h) = han.take() {
                han_bigrams(&folded[h..i], &mut f);
            }
            ascii.get_or_insert(i);
        } else if is_han(c) {
            if let Some(a) = ascii.take() {
                ascii_word(&folded[a..i], &mut f);
            }
            han.get_or_insert(i);
        } else {
            if let Some(a) = ascii.take() {
                ascii_word(&folded[a..i], &mut f);
            }
            if let Some(h) = han.take() {
                han_bigrams(&folded[h..i], &mut f);
            }
        }
    }
    if let Some(a) = ascii {
        ascii_word(&folded[a..], &mut f);
    }
    if let Some(h) = han {
        han_bigrams(&folded[h..], &mut f);
    }
}

/// A word list matcher: ASCII entries match whole words (a trailing `*`, a word's start),
/// others anywhere. Each side is one Aho-Corasick automaton.
#[derive(Debug)]
pub(crate) struct Vocabulary {
    /// ` entry ` (or ` entry` for a prefix), over [`spaced`] text.
    words: Option<AhoCorasick>,
    /// Other entries, over folded text.
    other: Option<AhoCorasick>,
    /// The ASCII entries, for [`Vocabulary::starts`].
    openings: Vec<String>,
    other_openings: Vec<String>,
}

impl Vocabulary {
    pub(crate) fn new(entries: &[String]) -> Vocabulary {
        let mut words = Vec::new();
        let mut other = Vec::new();
        let mut openings = Vec::new();
        let mut other_openings = Vec::new();
        for e in entries {
            let e = e.trim().to_lowercase();
            // `^say you`: only where it opens a clause ("Say you stay 4 hours"; "which is
            // to say you may expect" supposes nothing).
            if let Some(opening) = e.strip_prefix('^') {
                let opening = opening.trim();
                if opening.is_ascii() {
                    openings.push(format!("{} ", spaced(opening).trim()));
                } else if !opening.is_empty() {
                    other_openings.push(numbers::fold(opening));
                }
                continue;
            }
            if e.is_empty() {
                continue;
            }
            if e.is_ascii() {
                let (stem, prefix) = match e.strip_suffix('*') {
                    Some(s) => (s.to_string(), true),
                    None => (e.clone(), false),
                };
                let stem = spaced(&stem).trim().to_string();
                words.push(format!(" {stem}{}", if prefix { "" } else { " " }));
                // A word's plural is the word (`outages`, `results`).
                if !prefix && stem.len() >= 4 && stem.ends_with(|c: char| c.is_ascii_alphabetic()) {
                    words.push(format!(" {stem}s "));
                }
                // So is its `'s` (`who's warmer`: "who is").
                if !prefix && !stem.contains([' ', '\'']) {
                    words.push(format!(" {stem}'s "));
                }
                openings.push(format!("{stem}{}", if prefix { "" } else { " " }));
            } else {
                other.push(numbers::fold(&e));
            }
        }
        let build = |p: &[String]| {
            (!p.is_empty()).then(|| AhoCorasick::new(p).expect("vocabulary compiles"))
        };
        other_openings.extend(other.iter().cloned());
        Vocabulary {
            words: build(&words),
            other: build(&other),
            openings,
            other_openings,
        }
    }

    /// `text` (folded) and its [`spaced`] form with every entry blanked: what a clause
    /// says besides these words.
    fn blank(&self, text: &str, spaced_text: &str) -> (String, String) {
        let out = |ac: &Option<AhoCorasick>, t: &str| match ac {
            Some(ac) => {
                let mut o = String::with_capacity(t.len());
                let mut last = 0;
                for m in ac.find_iter(t) {
                    o.push_str(&t[last..m.start()]);
                    o.extend(std::iter::repeat_n(
                        ' ',
                        t[m.start()..m.end()].chars().count(),
                    ));
                    last = m.end();
                }
                o.push_str(&t[last..]);
                o
            }
            None => t.to_string(),
        };
        (out(&self.other, text), out(&self.words, spaced_text))
    }

    /// Whether `text` (folded) holds an entry; `spaced_text` is [`spaced`] of it.
    fn hit(&self, text: &str, spaced_text: &str) -> bool {
        self.words
            .as_ref()
            .is_some_and(|ac| ac.is_match(spaced_text))
            || self.other.as_ref().is_some_and(|ac| ac.is_match(text))
    }

    /// Whether `text` holds an entry and each one it holds is negated ("不作估计", "won't
    /// guess"): a hedge word declined is no hedge.
    fn only_negated(&self, text: &str, spaced_text: &str) -> bool {
        self.negated_within(text, spaced_text, 3, 12)
    }

    /// Like [`Vocabulary::only_negated`], with the negation up to `zh` characters (Chinese)
    /// or `en` bytes (spaced ASCII) before each entry.
    fn negated_within(&self, text: &str, spaced_text: &str, zh: usize, en: usize) -> bool {
        const ZH: &[char] = &['不', '没', '别', '勿', '未', '无', '非'];
        const EN: &[&str] = &[" not ", " no ", "n't ", " never ", " without "];
        let mut any = false;
        // `不过` is "but", `不管`/`无论` "whatever": no negation of what follows.
        const NOT_NEGATING: &[&str] = &["不过", "不管", "不论", "无论", "不如"];
        let negated_zh = |at: usize| {
            let before: String = text[..at]
                .chars()
                .rev()
                .take(zh)
                .collect::<Vec<_>>()
                .into_iter()
                .rev()
                .collect();
            let before = NOT_NEGATING.iter().fold(before, |b, w| b.replace(w, "  "));
            before.chars().any(|c| ZH.contains(&c))
        };
        let negated_en = |at: usize| {
            let from = spaced_text[..at]
                .char_indices()
                .rev()
                .nth(en)
                .map_or(0, |(i, _)| i);
            EN.iter().any(|n| spaced_text[from..=at].contains(n))
        };
        if let Some(ac) = &self.words {
            for m in ac.find_iter(spaced_text) {
                any = true;
                if !negated_en(m.start()) {
                    return false;
                }
            }
        }
        if let Some(ac) = &self.other {
            for m in ac.find_iter(text) {
                any = true;
                if !negated_zh(m.start()) {
                    return false;
                }
            }
        }
        any
    }

    /// Whether the text opens with an entry (a whole word).
    fn starts(&self, spaced_text: &str, text: &str) -> bool {
        // Bullets, emoji and marks before the first word open nothing ("💡 Example:").
        let lead = |c: char| !c.is_alphanumeric();
        let t = spaced_text.trim_start_matches(lead);
        let other = text.trim_start_matches(lead);
        self.openings.iter().any(|e| t.starts_with(e.as_str()))
            || self
                .other_openings
                .iter()
                .any(|e| other.starts_with(e.as_str()))
    }
}

/// Lowercase ASCII words separated by single spaces, padded with spaces; other characters
/// kept (apostrophes stay inside words: `can't`).
fn spaced(s: &str) -> String {
    // Byte by byte, a character other than ASCII copied whole: every clause is spaced a
    // few times over.
    let b = s.as_bytes();
    let mut out = String::with_capacity(s.len() + 2);
    out.push(' ');
    // The last byte pushed (never a space's absence: `out` starts with one).
    let mut last = b' ';
    let mut i = 0;
    while i < b.len() {
        let len = match b[i] {
            0x00..=0x7f => 1,
            0xc0..=0xdf => 2,
            0xe0..=0xef => 3,
            _ => 4,
        };
        // `’` and `‘` are apostrophes.
        let c = match &b[i..i + len] {
            [0xe2, 0x80, 0x98 | 0x99] => b'\'',
            [c] => *c,
            _ => 0x80,
        };
        if c.is_ascii_alphanumeric() || c == b'\'' {
            // A word of ASCII starts where other script ends (`是empty的` holds `empty`).
            if !last.is_ascii() {
                out.push(' ');
            }
            last = c.to_ascii_lowercase();
            out.push(char::from(last));
        } else if c.is_ascii() {
            if last != b' ' {
                out.push(' ');
                last = b' ';
            }
        } else {
            if last.is_ascii_alphanumeric() {
                out.push(' ');
            }
            out.push_str(&s[i..i + len]);
            last = b[i + len - 1];
        }
        i += len;
    }
    if last != b' ' {
        out.push(' ');
    }
    out
}

/// An automaton of a lexicon list (already normalized; word marks dropped).
fn normalized_matcher(list: &[String]) -> Option<AhoCorasick> {
    let phrases: Vec<&str> = list
        .iter()
        .map(|p| p.trim_end_matches('\u{1}'))
        .filter(|p| !p.is_empty())
        .collect();
    (!phrases.is_empty()).then(|| AhoCorasick::new(phrases).expect("lexicon compiles"))
}

const FIRST_PERSON: [&str; 20] = [
    "i",
    "i'm",
    "i've",
    "i'll",
    "i'd",
    "me",
    "my",
    "we",
    "we're",
    "we've",
    "we'll",
    "us",
    "our",
    "我",
    "咱",
    "本人",
    "本助理",
    "本服务",
    "我方",
    "this assistant",
];

/// The vocabularies of a lexicon, built once per lexicon.
#[derive(Debug)]
pub(crate) struct Vocabularies {
    process: Vocabulary,
    hedge: Vocabulary,
    topic: Vocabulary,
    question: Vocabulary,
    declines: Vocabulary,
    supposition: Vocabulary,
    caveat: Vocabulary,
    first_person: Vocabulary,
    query_label: Vocabulary,
    redirect: Vocabulary,
    quoting: Vocabulary,
    /// Words of answering ("确认", "provide"): what an inability is about.
    answer: Vocabulary,
    process_not_self: Vocabulary,
    /// Being available: negated ("no input price … available"), the clause reports an absence.
    available: Vocabulary,
    /// The lexicon's inability and failure phrases, over normalized text.
    inability: Option<AhoCorasick>,
    failure: Option<AhoCorasick>,
}

impl Vocabularies {
    pub(crate) fn of(lexicon: &Lexicon) -> Vocabularies {
        Vocabularies {
            process: Vocabulary::new(&lexicon.process),
            hedge: Vocabulary::new(&lexicon.hedge),
            topic: Vocabulary::new(&lexicon.topic),
            question: Vocabulary::new(&lexicon.question),
            declines: Vocabulary::new(&lexicon.declines),
            supposition: Vocabulary::new(&lexicon.supposition),
            caveat: Vocabulary::new(&lexicon.caveat),
            first_person: Vocabulary::new(&FIRST_PERSON.map(String::from)),
            query_label: Vocabulary::new(&lexicon.query_label),
            redirect: Vocabulary::new(&lexicon.redirect),
            quoting: Vocabulary::new(&lexicon.quoting),
            answer: Vocabulary::new(&lexicon.answer),
            available: Vocabulary::new(&["availab*".to_string()]),
            inability: normalized_matcher(&lexicon.inability),
            failure: normalized_matcher(&lexicon.failure),
            process_not_self: Vocabulary::new(
                &lexicon
                    .process
                    .iter()
                    .filter(|p| !FIRST_PERSON.contains(&p.as_str()))
                    .cloned()
                    .collect::<Vec<_>>(),
            ),
        }
    }
}

fn url_re() -> &'static Regex {
    static R: OnceLock<Regex> = OnceLock::new();
    R.get_or_init(|| {
        Regex::new(r#"(?i)\b(?:https?://|www\.)[^\s<>"'()\[\]{}，。；、】）「」`]+"#)
            .expect("compiles")
    })
}

fn token_re() -> &'static Regex {
    static R: OnceLock<Regex> = OnceLock::new();
    R.get_or_init(|| {
        Regex::new(r"(?:^|[\s`'(\[{=:,，（「“])(--?[A-Za-z][A-Za-z0-9-]*)|\b([A-Za-z0-9]+(?:[-_.][A-Za-z0-9]+)*)\b")
            .expect("compiles")
    })
}

fn quote_re() -> &'static Regex {
    static R: OnceLock<Regex> = OnceLock::new();
    R.get_or_init(|| {
        Regex::new(
            r#""([^"\n]{3,200})"|“([^”\n]{3,200})”|「([^」\n]{3,200})」|『([^』\n]{3,200})』"#,
        )
        .expect("compiles")
    })
}

/// Upper-case words of ordinary prose, not names of a product or standard.
const COMMON_ACRONYMS: &[&str] = &[
    "I", "OK", "AM", "PM", "FYI", "TL", "DR", "PS", "ETA", "FAQ", "TBD", "NB", "ASAP", "AI", "LLM",
    "ID", "IDS", "URL", "API", "APP", "PDF", "JSON", "YAML", "HTTP", "HTTPS", "CLI", "UI", "IT",
    "A", "NO", "YES", "CI", "CD", "OS", "SDK", "OCR", "BTW", "IMO", "IMHO", "AFAIK", "FWIW", "TBH",
    "IIRC",
];

/// Whether a token is a key fact: it mixes letters and digits (`G102`, `A12`, `v3`),
/// is a dotted version (`3.4.1`), a snake-case or upper-case name with `_`, a flag, or an
/// acronym (`OIDC`, `SIAC`).
fn key_token(t: &str) -> bool {
    let letters = t.bytes().any(|b| b.is_ascii_alphabetic());
    let digits = t.bytes().any(|b| b.is_ascii_digit());
    let acronym = t.len() >= 2
        && t.len() <= 8
        && t.bytes().all(|b| b.is_ascii_uppercase())
        && !COMMON_ACRONYMS.contains(&t);
    (t.starts_with('-') && t.len() > 2)
        || acronym
        || (letters && digits)
        || (digits && t.matches('.').count() >= 2)
        || (letters && t.contains('_') && !t.starts_with('_'))
}

fn sentence_breaks(folded: &str) -> Vec<(usize, usize)> {
    let b = folded.as_bytes();
    let mut out = Vec::new();
    let mut start = 0;
    let mut i = 0;
    while i < folded.len() {
        let c = folded[i..].chars().next().unwrap_or(' ');
        let len = c.len_utf8();
        let end_here = match c {
            // A semicolon joins parallel clauses of one sentence ("Team 有 SSO；日志保留 90 天").
            '\n' | '!' | '?' | '。' | '！' | '？' => true,
            // Not after an abbreviation: `e.g.`, `vs.`, `approx.`.
            '.' => {
                let word = folded[..i]
                    .rsplit(|c: char| !c.is_ascii_alphabetic() && c != '.')
                    .next()
                    .unwrap_or_default()
                    .to_ascii_lowercase();
                b.get(i + 1).is_none_or(|n| n.is_ascii_whitespace())
                    && !["e.g", "i.e", "vs", "approx", "cf", "incl"].contains(&word.as_str())
            }
            _ => false,
        };
        if end_here {
            out.push((start, i + len));
            start = i + len;
        }
        i += len;
    }
    if start < folded.len() {
        out.push((start, folded.len()));
    }
    out
}

const CONNECTORS: &[&str] = &[
    " but ",
    " however",
    " though ",
    " although ",
    " yet ",
    " instead",
    " except ",
    " so ",
    " because ",
    // A supposition inside a clause supposes what follows it, not what came before ("还有
    // 14 天免费试用~如果改年缴的话可以再省 15%").
    " if ",
    "如果",
    "假如",
    "不过",
    "但是",
    "可是",
    "只是",
    "然而",
    "但",
    "所以",
    "因此",
    "因为",
    "而且",
    "不然",
];

/// Whether the comma at `i` groups thousands: digits (not ending a token like `A12`)
/// before it, exactly three digits after it.
fn thousands_comma(s: &str, i: usize) -> bool {
    let b = s.as_bytes();
    let run = b[..i]
        .iter()
        .rev()
        .take_while(|c| c.is_ascii_digit() || **c == b',')
        .count();
    let glued = i > run && b[i - run - 1].is_ascii_alphabetic();
    run > 0
        && !glued
        && b.len() >= i + 4
        && b[i + 1..i + 4].iter().all(u8::is_ascii_digit)
        && !b.get(i + 4).is_some_and(u8::is_ascii_digit)
}

/// Clause spans of one sentence: split at commas, colons, dashes, brackets, table bars and
/// connectives. The flag says the clause ends with a colon (a label).
fn clause_spans(folded: &str, start: usize, end: usize) -> Vec<(usize, usize, bool, bool)> {
    let s = &folded[start..end];
    let lower = s.to_ascii_lowercase();
    let table_row = s.trim_start().starts_with('|');
    let mut cuts: Vec<(usize, usize, bool)> = Vec::new(); // (at, skip, colon)
    for (i, c) in s.char_indices() {
        match c {
            // A table row stays one clause (`| price | not retrieved |`); `、` lists within one.
            // `5,000` keeps its comma (three digits after it, a number before it).
            ',' if thousands_comma(s, i) => {}
            ',' | '，' | ';' | '；' | '(' | ')' | '（' | '）' | '—' | '–' | '…' if !table_row => {
                cuts.push((i, c.len_utf8(), false))
            }
            // Emoji used as punctuation ("…发车 🚄 检票口 A12 🎫 目前正点") part clauses.
            c if is_pictograph(c) && !table_row => cuts.push((i, c.len_utf8(), false)),
            ':' | '：' => {
                // `08:05` is no colon between clauses.
                let digit_around = s[..i].chars().last().is_some_and(|p| p.is_ascii_digit())
                    && s[i + c.len_utf8()..]
                        .chars()
                        .next()
                        .is_some_and(|n| n.is_ascii_digit());
                let url = s[i + c.len_utf8()..].starts_with("//");
                if !digit_around && !url && !table_row {
                    cuts.push((i, c.len_utf8(), true));
                }
            }
            _ => {}
        }
    }
    // A tilde closing a phrase (`开到 22:00～ 平日…`, folded to `~`), not a range.
    for (i, _) in s.match_indices("~ ") {
        cuts.push((i, 1, false));
    }
    // A dash between words (folded to `-`) parts clauses; one inside a word does not.
    for (i, _) in s.match_indices(" - ") {
        cuts.push((i, 3, false));
    }
    // `——` folds to `--`.
    for (i, _) in s.match_indices("--") {
        let flag = s[i + 2..].starts_with(|c: char| c.is_ascii_alphanumeric());
        if !flag {
            cuts.push((i, 2, false));
        }
    }
    for conn in CONNECTORS {
        for (i, _) in lower.match_indices(conn) {
            cuts.push((i, 0, false));
        }
    }
    // Nothing inside a code span or a quotation parts clauses (`read_pdf(path="a.pdf")`,
    // 「权限不足：缺少 scope」).
    let mut code = Vec::new();
    let mut open = None;
    for (i, c) in s.char_indices() {
        if c == '`' {
            match open.take() {
                Some(o) => code.push((o, i)),
                None => open = Some(i),
            }
        }
    }
    let mut quote_open: Option<(usize, char)> = None;
    for (i, c) in s.char_indices() {
        match (quote_open, c) {
            (None, '“' | '「' | '『') => quote_open = Some((i, c)),
            (Some((o, '“')), '”') | (Some((o, '「')), '」') | (Some((o, '『')), '』') => {
                code.push((o, i));
                quote_open = None;
            }
            _ => {}
        }
    }
    cuts.retain(|(at, _, _)| !code.iter().any(|(o, e)| o < at && at < e));
    cuts.sort();
    // The fourth flag: the clause opens a bracket (an aside of the clause before it).
    let mut out = Vec::new();
    let mut from = 0;
    let mut paren = false;
    for (at, skip, colon) in cuts {
        if at < from {
            continue;
        }
        if at > from {
            out.push((start + from, start + at, colon, paren));
        }
        paren = s[at..].starts_with(['(', '（']);
        from = at + skip;
    }
    if from < s.len() {
        out.push((start + from, end, false, paren));
    }
    out
}

/// The subject's names: the content words of the input (and of the scenario's facts).
pub struct Subject {
    words: HashSet<String>,
}

impl Subject {
    /// The subject of `texts`.
    pub fn of(texts: &[&str]) -> Subject {
        let mut words = HashSet::new();
        for t in texts {
            for w in self::words(&numbers::fold(t)) {
                if !GENERIC_QUESTION.contains(&w.as_str()) {
                    words.insert(w);
                }
            }
        }
        Subject { words }
    }

    /// `text` with the subject's words blanked: a word the question asks about
    /// ("timeout", "超时") says nothing of the process where it is the subject.
    fn mask(&self, text: &str) -> String {
        // One pass over the text, pushing as it goes: a Han character is blanked by the
        // pair it opens or by the one before it (`blank_next`).
        let b = text.as_bytes();
        let mut out = String::with_capacity(text.len());
        let mut word = String::new();
        let mut blank_next = false;
        let mut i = 0;
        while i < b.len() {
            if b[i].is_ascii_alphanumeric() {
                let start = i;
                while i < b.len() && (b[i].is_ascii_alphanumeric() || matches!(b[i], b'_' | b'-')) {
                    i += 1;
                }
                word.clear();
                word.push_str(&text[start..i]);
                word.make_ascii_lowercase();
                if self.words.contains(&word) {
                    out.extend(std::iter::repeat_n(' ', i - start));
                } else {
                    out.push_str(&text[start..i]);
                }
                blank_next = false;
                continue;
            }
            let c = text[i..].chars().next().unwrap_or(' ');
            let len = c.len_utf8();
            let mut blank = std::mem::take(&mut blank_next);
            if is_han(c)
                && let Some(n) = text[i + len..].chars().next()
                && is_han(n)
            {
                let pair = &text[i..i + len + n.len_utf8()];
                // Content words only: "有没有 SSO" does not make 没有 the subject's.
                let grammatical = ZH_PREDICATE.iter().any(|m| pair.contains(m));
                if !grammatical && self.words.contains(pair) {
                    blank = true;
                    blank_next = true;
                }
            }
            out.push(if blank { ' ' } else { c });
            i += len;
        }
        out
    }
}

/// Question words that name no subject.
const GENERIC_QUESTION: &[&str] = &[
    "tell",
    "know",
    "find",
    "want",
    "need",
    "please",
    "let",
    "me",
    "my",
    "you",
    "your",
    "i'm",
    "currently",
    "latest",
];

impl Analysis {
    /// Analyses an answer's text against its subject.
    pub fn new(text: &str, subject: &Subject, lexicon: &Lexicon) -> Analysis {
        let vocab = lexicon.derived(Vocabularies::of);
        let folded = numbers::fold(text);
        let mut clauses = Vec::new();
        // Fences (```) opened before the current sentence, counted as sentences pass.
        let (mut fences, mut counted_to) = (0usize, 0usize);
        for (n, (s, e)) in sentence_breaks(&folded).into_iter().enumerate() {
            let sentence = &folded[s..e];
            fences += folded[counted_to..s].matches("```").count();
            counted_to = s;
            // Emoji around a bold line ("⚠️ **Security update** ⚠️") leave it a heading;
            // `# …` inside a fenced block is a comment, read as prose.
            let bare = sentence
                .trim_matches(|c: char| c.is_whitespace() || is_pictograph(c) || c == '\u{fe0f}');
            let heading = (sentence.trim_start().starts_with('#') && fences % 2 == 0)
                || (bare.starts_with("**") && bare.ends_with("**"));
            // What follows a label that speaks of the process ("things you could try:")
            // speaks of it too.
            let mut under_process_label = false;
            // After a label naming the question ("Query:", "问题："), the question restated.
            let mut under_query_label = false;
            // After a letter's or memo's header label ("From:", "主旨："), its own field.
            let mut under_header_label = false;
            // A supposition holds for the rest of its sentence ("For example, 停 3 小时…").
            let mut supposing = false;
            // A hedge standing alone as a clause, for the next clause of the sentence.
            let mut carried_hedge: Option<String> = None;
            for (cs, ce, colon, paren) in clause_spans(&folded, s, e) {
                let text = &folded[cs..ce];
                if text.trim().is_empty() {
                    continue;
                }
                // A table row is read without its first cell, the row's label.
                let read = match text.trim_start().strip_prefix('|') {
                    Some(row) => row.split_once('|').map_or(row, |(_, rest)| rest),
                    None => text,
                };
                // A bare yes or no opening the answer answers a yes-or-no question.
                // A clause that is only a hedge ("一般来说，", "Generally speaking,") is a
                // sentence adverb: it hedges the clause after it.
                let hedge_only = hedge_alone(text, vocab);
                let carried = carried_hedge.take();
                let own = if clauses.is_empty() && is_yes_no(text) {
                    Role::Subject
                } else if hedge_only {
                    Role::Neutral
                } else if let Some(h) = &carried {
                    role(&format!("{h} {read}"), subject, vocab)
                } else {
                    role(read, subject, vocab)
                };
                if hedge_only {
                    carried_hedge = Some(text.to_string());
                }
                let role = if heading || colon {
                    under_process_label |= colon && own == Role::Process;
                    under_query_label = colon && vocab.query_label.hit(text, &spaced(text));
                    under_header_label = colon && header_label(text);
                    Role::Neutral
                } else if under_header_label {
                    Role::Neutral
                } else if under_query_label && own == Role::Subject {
                    Role::Question
                } else if under_process_label && own != Role::Subject {
                    Role::Process
                } else if let Some(host) = clauses
                    .last()
                    .filter(|h: &&Clause| {
                        (paren || relative(text) || purpose(text) || instances_only(text))
                            && h.sentence == n
                    })
                    .map(|h| h.role)
                    .filter(|r| matches!(r, Role::Question | Role::Process))
                {
                    // An aside or a relative clause takes the role of what it qualifies:
                    // "want me to list what to check (seats, API limits)?" asks, "check the
                    // app, which usually shows the status" points.
                    host
                } else {
                    own
                };
                // A supposition opening a clause ("For example, 停 3 小时…") holds for the
                // rest of its sentence; one inside a clause ("…kick in if …") for that clause.
                let sp = spaced(text);
                // A label "Example:" / "例：" opens one too.
                let example_label = colon
                    && (matches!(
                        sp.trim_matches(|c: char| !c.is_ascii_alphanumeric()),
                        "example" | "examples" | "e g"
                    ) || matches!(
                        text.trim_matches(|c: char| !is_han(c)),
                        "例" | "例子" | "举例" | "示例" | "范例" | "比如"
                    ));
                // A condition ("如果需要更久，", "If you need more,") holds for its own
                // clause: what the sentence says after it is stated ("…可以升级 Business
                // plan：成员上限 200 人").
                let condition = conditional(text);
                supposing |= (vocab.supposition.starts(&sp, text) && !condition) || example_label;
                // A hedge's characters are no supposition's (`好像是` is not `像是`).
                let (unhedged, unhedged_sp) = vocab.hedge.blank(text, &sp);
                let hypothetical = supposing || vocab.supposition.hit(&unhedged, &unhedged_sp);
                clauses.push(Clause {
                    start: cs,
                    end: ce,
                    sentence: n,
                    role,
                    hypothetical,
                    redirect: redirects(read, &spaced(read), vocab),
                    topic: vocab.topic.starts(&sp, text),
                    hedged: (vocab.hedge.hit(text, &sp) && !hedge_only) || carried.is_some(),
                    label: heading || colon,
                    process_label: (heading || colon) && own == Role::Process,
                    condition,
                });
            }
        }
        // "你说的 libfoo 是 PyPI 上那个 package，还是别的库？": the clause before an
        // alternative that asks asks too.
        for i in 1..clauses.len() {
            let alternative = folded[clauses[i].start..clauses[i].end]
                .trim_start()
                .to_lowercase();
            if alternative.trim_end().ends_with(['?', '？'])
                && clauses[i - 1].sentence == clauses[i].sentence
                && clauses[i - 1].role == Role::Subject
                && ["还是", "或是", "or "]
                    .iter()
                    .any(|w| alternative.starts_with(w))
            {
                clauses[i - 1].role = Role::Question;
                clauses[i].role = Role::Question;
            }
        }
        list_under_label(&folded, &mut clauses, vocab);
        let claims = extract_claims(&folded, &clauses);
        // A topic the next clause declines to answer ("退款金额和到账时间，我现在都无法确认")
        // or sends elsewhere ("…，都必须以原文为准") is named, not stated — when it holds no
        // key fact and no hedge.
        for i in 0..clauses.len().saturating_sub(1) {
            let (c, next) = (&clauses[i], &clauses[i + 1]);
            if c.role != Role::Subject || next.role != Role::Process || next.sentence != c.sentence
            {
                continue;
            }
            let (topic, comment) = (&folded[c.start..c.end], &folded[next.start..next.end]);
            let (tsp, csp) = (spaced(topic), spaced(comment));
            if (declines(comment, &csp, vocab) || next.redirect)
                && !vocab.hedge.hit(topic, &tsp)
                && !claims.iter().any(|k| k.clause == i)
            {
                clauses[i].role = Role::Neutral;
            }
        }
        let reports_failure = super::refusal::is_refusal(text, None, lexicon);
        Analysis {
            folded,
            claims,
            clauses,
            reports_failure,
        }
    }

    /// The text of a clause.
    pub fn clause_text(&self, i: usize) -> &str {
        let c = &self.clauses[i];
        &self.folded[c.start..c.end]
    }

    /// Whether clause `i` has a predicate: a Chinese clause with no copula, verb of
    /// comparison, modal or adverb of degree or frequency names a topic
    /// ("信义店的周末营业时间跟停车规定", "版本号和更新亮点"), and an English one with no
    /// auxiliary, copula or modal names one too ("Late fee / late payment terms", "the
    /// notice period required for termination") or points ("find the termination
    /// clause"): it states nothing of it. A hedged clause guesses, verb or not.
    pub fn predicates(&self, i: usize) -> bool {
        let text = self.clause_text(i);
        if self.clauses[i].hedged {
            return true;
        }
        let plain = blank_code(text);
        let english = plain
            .split(|c: char| !(c.is_ascii_alphabetic() || c == '\''))
            .map(str::to_ascii_lowercase)
            .any(|w| {
                EN_AUXILIARY.contains(&w.as_str())
                    || ["'re", "'ll", "'ve", "'d", "n't", "'m"]
                        .iter()
                        .any(|end| w.len() > end.len() && w.ends_with(end))
                    // `it's`, not the possessive `project's`.
                    || w.strip_suffix("'s").is_some_and(|s| EN_S_CONTRACTED.contains(&s))
            });
        if !text.chars().any(is_han) {
            return english;
        }
        let mut plain = plain;
        for noun in ZH_NOMINAL {
            plain = plain.replace(noun, " ");
        }
        english || ZH_PREDICATE.iter().any(|m| plain.contains(m))
    }

    /// The key facts, as the detectors report them.
    pub fn facts(&self) -> Vec<Fact> {
        self.claims.iter().map(|c| c.fact.clone()).collect()
    }
}

/// Whether the line at `at` shows a call at a prompt (`> tool --flag value`, `$ tool …`)
/// to a tool the trace holds, or belongs to the session that does (`sessions`, from
/// [`session_lines`]).
fn shows_call(sessions: &[(usize, bool)], folded: &str, at: usize) -> bool {
    sessions
        .binary_search_by_key(&line_start(folded, at), |(start, _)| *start)
        .is_ok_and(|i| sessions[i].1)
}

/// Per line (by its start), whether it belongs to a terminal session that opens with the
/// call: its other commands and their output (`$ echo $?` then `1`) are the session's too,
/// up to a blank line — except a blank line before a further prompt. One pass over the
/// lines, not a walk back from every fact.
fn session_lines(folded: &str, process_norm: &str) -> Vec<(usize, bool)> {
    let mut out = Vec::new();
    let mut active = false;
    let mut blank_before = false;
    let mut start = 0;
    for line in folded.split_inclusive('\n') {
        if line.trim().is_empty() {
            blank_before = true;
        } else {
            if blank_before && !line.trim_start().starts_with(['$', '>']) {
                active = false;
            }
            blank_before = false;
            active |= prompt_call(folded, start, process_norm);
        }
        out.push((start, active && !line.trim().is_empty()));
        start += line.len();
    }
    out
}

/// Whether the line at `start` is a prompt running a call the trace holds (`$ train_status
/// --train G102`).
fn prompt_call(folded: &str, start: usize, process_norm: &str) -> bool {
    let line = folded[start..].trim_start();
    let Some(rest) = line.strip_prefix(['>', '$']) else {
        return false;
    };
    let command: String = rest
        .trim_start()
        .chars()
        .take_while(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'))
        .collect();
    command.len() >= 3
        && process_norm
            .split(|c: char| !(c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.')))
            .any(|w| w == normalize(&command))
}

/// A label closing its line governs the list right under it, as it governs the rest of
/// its own sentence: after "You asked:" the items restate the question, after "你可以这样
/// 做：" they speak of the process (a statement of the subject stays one).
fn list_under_label(folded: &str, clauses: &mut [Clause], vocab: &Vocabularies) {
    let item = |line: &str| {
        let t = line.trim_start();
        t.starts_with(['-', '*', '•', '·', '–'])
            || t.find(|c: char| !c.is_ascii_digit())
                .is_some_and(|k| k > 0 && t[k..].starts_with(['.', ')', '、', '）']))
    };
    let mut i = 0;
    while i < clauses.len() {
        let c = &clauses[i];
        let text = &folded[c.start..c.end];
        let line_end = folded[c.end..]
            .find('\n')
            .map_or(folded.len(), |k| c.end + k);
        let closes_line = folded[c.end..line_end]
            .trim()
            .trim_start_matches([':', '：'])
            .trim()
            .is_empty();
        let sp = spaced(text);
        let query = vocab.query_label.hit(text, &sp) || vocab.question.hit(text, &sp);
        if !(c.label && closes_line && (query || c.process_label)) {
            i += 1;
            continue;
        }
        let process = c.process_label;
        let mut j = i + 1;
        let mut at = line_end;
        while j < clauses.len() {
            let start = line_start(folded, clauses[j].start);
            // The list runs on the next lines, with no blank line between.
            let gap = &folded[at.min(start)..start];
            if gap.matches('\n').count() != 1 || !gap.trim().is_empty() {
                break;
            }
            let end = folded[start..]
                .find('\n')
                .map_or(folded.len(), |k| start + k);
            if !item(&folded[start..end]) {
                break;
            }
            while j < clauses.len() && clauses[j].start < end {
                let own = clauses[j].role;
                clauses[j].role = match own {
                    Role::Subject if query => Role::Question,
                    Role::Neutral | Role::Question if process => Role::Process,
                    other => other,
                };
                j += 1;
            }
            at = end;
        }
        i = j.max(i + 1);
    }
}

/// Whether a label names a field of a letter's or memo's header (`From:`, `发件：`): what
/// follows it is the reply's own heading, not a statement.
fn header_label(text: &str) -> bool {
    const HEADERS: &[&str] = &[
        "to",
        "from",
        "re",
        "subject",
        "cc",
        "date",
        "致",
        "发件",
        "发件人",
        "收件",
        "收件人",
        "寄件者",
        "收件者",
        "主旨",
        "主题",
        "日期",
        "抄送",
    ];
    let t = text
        .trim_matches(|c: char| c.is_whitespace() || c.is_ascii_punctuation() || "：*".contains(c))
        .to_lowercase();
    HEADERS.contains(&t.as_str())
}

/// Whether the line at `at` is set in capitals: two words or more of ASCII capitals and no
/// lowercase ASCII letter.
fn capitals_line(folded: &str, at: usize) -> bool {
    let start = line_start(folded, at);
    let end = folded[at..].find('\n').map_or(folded.len(), |i| at + i);
    let line = &folded[start..end];
    let capitals = line
        .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .filter(|w| w.len() >= 2 && w.bytes().all(|b| b.is_ascii_uppercase()))
        .count();
    // Two words in capitals, or one standing alone as the line (`PLANS`).
    !line.bytes().any(|b| b.is_ascii_lowercase())
        && (capitals >= 2
            || (capitals == 1
                && line.trim().len() >= 3
                && line.trim().bytes().all(|b| b.is_ascii_uppercase())))
}

/// Whether `at` lies in a tag of words in brackets opening its line (`[KNOWN ISSUE] …`,
/// `【WORKAROUND】`): a label, as a heading is.
fn bracket_tag(folded: &str, at: usize) -> bool {
    let start = line_start(folded, at);
    let lead = &folded[start..at];
    let Some(open) = lead.find(['[', '【']) else {
        return false;
    };
    if !lead[..open]
        .chars()
        .all(|c| c.is_whitespace() || "*-#>".contains(c))
    {
        return false;
    }
    let from = start + open + lead[open..].chars().next().map_or(1, char::len_utf8);
    let Some(close) = folded[from..].find([']', '】']) else {
        return false;
    };
    from + close > at
        && folded[from..from + close]
            .chars()
            .all(|c| c.is_alphabetic() || c == ' ' || c == '-' || c == '_')
}

/// Whether a clock time is written on a twelve-hour dial with no part of the day: a
/// Chinese hour (`九點半`, `9点`) with no 上午/早上/下午/晚上 before it.
fn twelve_hour(folded: &str, q: &Quantity) -> bool {
    let text = &folded[q.start..q.end];
    if !text.contains(['点', '點', '时']) {
        return false;
    }
    let before = numbers::last_chars(&folded[..q.start], 4);
    ![
        "上午", "早上", "早晨", "凌晨", "清晨", "下午", "晚上", "中午", "傍晚", "夜",
    ]
    .iter()
    .any(|w| before.contains(w))
}

/// For an identifier of letters then a version (`py3.8`, `node18`), the pattern of a
/// word starting with those letters followed by that version (`Python 3.8`, `Node.js 18`).
fn shortened_version(id: &str) -> Option<Regex> {
    let split = id.find(|c: char| c.is_ascii_digit())?;
    let (letters, version) = id.split_at(split);
    if letters.len() < 2
        || !letters.bytes().all(|b| b.is_ascii_alphabetic())
        || !version.bytes().all(|b| b.is_ascii_digit() || b == b'.')
        || version.ends_with('.')
    {
        return None;
    }
    Regex::new(&format!(
        r"(?i)\b{}[a-z.]*[ -]?v?{}(?:[^0-9.]|\.[^0-9]|$)",
        regex::escape(letters),
        regex::escape(version)
    ))
    .ok()
}

/// The arithmetic a text ends with before a result `value` (`6 + 18 = `, `$20 × 12 ＝ `),
/// where it gives that value: the expression as written and its operands.
fn shown_arithmetic(before: &str, value: f64) -> Option<(String, Vec<f64>)> {
    static R: OnceLock<Regex> = OnceLock::new();
    static TOKEN: OnceLock<Regex> = OnceLock::new();
    let r = R.get_or_init(|| {
        let num = r"[$¥€£]?\s*\d[\d,]*(?:\.\d+)?\s*(?:[a-z%°/]+|元|美元|小时|天|个)?";
        Regex::new(&format!(
            r"(?i)(?:{num}\s*[+\-−×x*/÷]\s*)+{num}\s*[=＝]\s*$"
        ))
        .expect("compiles")
    });
    let token =
        TOKEN.get_or_init(|| Regex::new(r"\d[\d,]*(?:\.\d+)?|[+\-−×*/÷]").expect("compiles"));
    let m = r.find(before)?;
    let expr = m.as_str().trim_end().trim_end_matches(['=', '＝']).trim();
    // Operands and operators alternate. A unit's letters and slash (`$6/MTok`) are no
    // operator; a lone `x` between numbers is a times sign.
    let mut plain = String::with_capacity(expr.len());
    let chars: Vec<char> = expr.chars().collect();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if c.is_ascii_alphabetic()
            || (c == '/' && chars.get(i + 1).is_some_and(char::is_ascii_alphabetic))
        {
            let run_start = i;
            i += 1;
            while i < chars.len() && chars[i].is_ascii_alphabetic() {
                i += 1;
            }
            let run: String = chars[run_start..i].iter().collect();
            let lone = |c: Option<&char>| c.is_none_or(|c| c.is_whitespace() || c.is_ascii_digit());
            if run.eq_ignore_ascii_case("x")
                && lone(run_start.checked_sub(1).and_then(|j| chars.get(j)))
                && lone(chars.get(i))
            {
                plain.push('×');
            }
            continue;
        }
        plain.push(c);
        i += 1;
    }
    let mut operands = Vec::new();
    let mut ops = Vec::new();
    for t in token.find_iter(&plain) {
        let t = t.as_str();
        if t.starts_with(|c: char| c.is_ascii_digit()) {
            if operands.len() > ops.len() {
                return None;
            }
            operands.push(t.replace(',', "").parse::<f64>().ok()?);
        } else if operands.len() == ops.len() + 1 {
            ops.push(t.chars().next()?);
        }
    }
    if operands.len() < 2 || operands.len() != ops.len() + 1 {
        return None;
    }
    // × and ÷ before + and −.
    let mut terms = vec![operands[0]];
    let mut signs = Vec::new();
    for (op, v) in ops.iter().zip(&operands[1..]) {
        match op {
            '×' | '*' => *terms.last_mut()? *= v,
            '/' | '÷' if *v != 0.0 => *terms.last_mut()? /= v,
            '+' | '-' | '−' => {
                signs.push(*op);
                terms.push(*v);
            }
            _ => return None,
        }
    }
    let mut total = terms[0];
    for (sign, v) in signs.iter().zip(&terms[1..]) {
        total += if *sign == '+' { *v } else { -v };
    }
    ((total - value).abs() <= 0.005 * value.abs().max(1.0)).then(|| (expr.to_string(), operands))
}

/// Whether a duration is a calendar's own factor that the answer's arithmetic converts by
/// (`US$20 × 12 個月 = US$240`, `24 h × 7`): a constant it counts with, not a fact.
fn calendar_factor(folded: &str, clause: &Clause, q: &Quantity) -> bool {
    // (units, seconds per unit): a year's months, weeks and days, a week's days, a day's
    // hours, an hour's minutes, a minute's seconds.
    const FACTORS: &[(f64, f64)] = &[
        (12.0, 2_592_000.0),
        (52.0, 604_800.0),
        (365.0, 86_400.0),
        (7.0, 86_400.0),
        (24.0, 3_600.0),
        (60.0, 60.0),
        (60.0, 1.0),
    ];
    if q.dim != Dim::Duration || !FACTORS.contains(&(q.raw, q.scale)) {
        return false;
    }
    let before = folded[clause.start.min(q.start)..q.start].trim_end();
    let after = folded[q.end..clause.end.max(q.end)].trim_start();
    const OPERATORS: [char; 5] = ['×', '*', 'x', '/', '÷'];
    (before.ends_with(OPERATORS) || after.starts_with(OPERATORS)) && after.contains(['=', '＝'])
}

/// Whether a quotation at `at` is introduced as a likeness (`像“会员费”`, `想成「额度」`,
/// `think of it as "a meter"`): the answer's image, not the source's words. Only a quote
/// without digits is an image: `something like "timeout: 60"` is a value.
fn analogy(folded: &str, at: usize) -> bool {
    const LIKE: &[&str] = &[
        "像",
        "想成",
        "当成",
        "当作",
        "看成",
        "看作",
        "比作",
        "好比",
        "如同",
        "犹如",
        "宛如",
        "类似",
        "like",
        "as if",
        "think of it as",
        "akin to",
    ];
    // The words before it in its clause, a dozen characters at most.
    let before: String = folded[..at]
        .chars()
        .rev()
        .take_while(|c| !"，。；！？,.;!?\n".contains(*c))
        .take(12)
        .collect::<Vec<_>>()
        .into_iter()
        .rev()
        .collect::<String>()
        .to_lowercase()
        // "好像" is a hedge ("好像叫“高级版”"), not a likeness.
        .replace("好像", "");
    let sp = spaced(&before);
    LIKE.iter().any(|w| {
        if w.is_ascii() {
            sp.contains(&format!(" {w} "))
        } else {
            before.contains(w)
        }
    })
}

/// Whether `at` lies on a letter's salutation (`Dear Sir or Madam,`, `尊敬的客户：`) or on
/// the lines after its closing (`Yours faithfully,` then the signature).
fn letter_formula(folded: &str, at: usize) -> bool {
    const OPENING: &[&str] = &["dear ", "hi ", "hello ", "尊敬的", "亲爱的"];
    const CLOSING: &[&str] = &[
        "yours faithfully",
        "yours sincerely",
        "sincerely",
        "best regards",
        "kind regards",
        "regards",
        "best,",
        "cheers",
        "此致",
        "敬上",
    ];
    let start = line_start(folded, at);
    let end = folded[at..].find('\n').map_or(folded.len(), |i| at + i);
    let line = folded[start..end].trim().to_lowercase();
    if line.chars().count() <= 40 && OPENING.iter().any(|o| line.starts_with(o)) {
        return true;
    }
    // The signature: up to two short lines right after a closing.
    let mut lines = folded[..start]
        .lines()
        .rev()
        .filter(|l| !l.trim().is_empty());
    (0..2).any(|_| {
        lines.next().is_some_and(|l| {
            let l = l.trim().to_lowercase();
            CLOSING.iter().any(|c| l.starts_with(c)) && l.chars().count() <= 24
        })
    }) && line.chars().count() <= 40
}

/// Whether a clause speaks of trying the call again.
fn retries(clause: &str) -> bool {
    let sp = spaced(clause);
    [" try again", " retry", " re check", " re run", " rerun"]
        .iter()
        .any(|w| sp.contains(w))
        || ["再试", "重试", "再查", "稍后", "重新"]
            .iter()
            .any(|w| clause.contains(w))
}

/// Whether a count counts the calls themselves: attempts, retries, requests, queries,
/// times (`次`), results (`条结果`).
fn counts_calls(q: &Quantity, folded: &str) -> bool {
    const WORDS: &[&str] = &[
        "time", "attempt", "retrie", "retry", "request", "call", "try", "trie", "query", "querie",
        "lookup", "search", "result", "次",
    ];
    let after = folded[q.end..].trim_start();
    WORDS.contains(&q.word.as_str())
        || (q.word == "条"
            && ["结果", "记录", "资料", "数据"]
                .iter()
                .any(|w| after.starts_with(w)))
}

/// The label right before `at` (on its line) that makes what follows the reply's own
/// ticket or case number, if any.
fn reference_label(folded: &str, at: usize) -> Option<&'static str> {
    const LABELS: &[&str] = &[
        "ticket",
        "ticket no",
        "ticket number",
        "ticket id",
        "case",
        "case no",
        "case number",
        "case id",
        "incident",
        "工单",
        "工单号",
        "工单编号",
        "案件编号",
    ];
    // Not "reference" nor 受理编号 / 服务单号: a refund's or an order's reference number is
    // the subject's ("退款受理编号：RF-88231-07").
    let marks = |c: char| c.is_whitespace() || "#:：.【[（(-".contains(c);
    let before = folded[line_start(folded, at)..at]
        .trim_end_matches(marks)
        .to_lowercase();
    // "your ticket number is #CS-48213", "工单号是 …": the label through a copula.
    let before = [" is", " was", "是", "为"]
        .iter()
        .find_map(|c| before.strip_suffix(c))
        .map_or(before.as_str(), |b| b.trim_end_matches(marks));
    LABELS
        .iter()
        .filter(|l| before.ends_with(*l))
        // A whole word: `showcase` holds no `case`.
        .find(|l| {
            !l.is_ascii()
                || !before[..before.len() - l.len()].ends_with(|c: char| c.is_ascii_alphanumeric())
        })
        .copied()
}

/// Where the line holding byte `at` of `text` starts.
fn line_start(text: &str, at: usize) -> usize {
    text[..at].rfind('\n').map_or(0, |i| i + 1)
}

/// Whether a clause opens with a condition (if, 如果), not an example (for example, 例如).
fn conditional(text: &str) -> bool {
    const OPENINGS: &[&str] = &[
        "if ", "suppose", "say you", "如果", "假如", "假设", "若", "要是",
    ];
    let t = text
        .trim_start_matches(|c: char| {
            c.is_whitespace() || c.is_ascii_punctuation() || "•·-".contains(c)
        })
        .to_lowercase();
    OPENINGS.iter().any(|o| t.starts_with(o))
}

/// Whether a clause is a hedge and nothing else ("一般来说", "Generally speaking", "凭印象讲").
fn hedge_alone(text: &str, vocab: &Vocabularies) -> bool {
    const FILLER: &[&str] = &["speaking", "来说", "来讲", "而言", "说来"];
    let sp = spaced(text);
    if !vocab.hedge.hit(text, &sp) {
        return false;
    }
    let (zh_blank, _) = vocab.hedge.blank(text, &sp);
    let (_, both) = vocab.hedge.blank(&zh_blank, &spaced(&zh_blank));
    words(&both).iter().all(|w| FILLER.contains(&w.as_str()))
}

/// A purpose clause ("来比较两者的价格", "in order to compare them") says what the clause
/// before it was for: it takes that clause's role.
fn purpose(text: &str) -> bool {
    let t = text.trim_start_matches(|c: char| c.is_whitespace() || "）)，,".contains(c));
    let lower = t.to_ascii_lowercase();
    ["为了", "以便", "好让", "in order to ", "so that "]
        .iter()
        .any(|w| lower.starts_with(w))
        || (t.starts_with('来')
            && !["来自", "来说", "来讲", "来看"]
                .iter()
                .any(|w| t.starts_with(w)))
}

/// A relative clause (", which costs $12", ", where the status is shown") qualifies what
/// precedes it: it states, it does not ask.
/// Whether a clause only gives instances, quoted or as code, of what the clause before it
/// names ("换个关键词重新搜索，例如 “SSO” 或 “audit log retention”"): it takes that clause's
/// role.
fn instances_only(text: &str) -> bool {
    let t = text.trim_matches(|c: char| c.is_whitespace() || "\"[]{},，。.!！?？".contains(c));
    let lower = t.to_ascii_lowercase();
    let Some(rest) = [
        "例如",
        "比如",
        "譬如",
        "e.g.",
        "for example",
        "for instance",
        "such as",
    ]
    .iter()
    .find_map(|m| lower.strip_prefix(m)) else {
        return false;
    };
    let blanked = blank_code(&blank_quotes(rest));
    blanked != rest
        && blanked
            .split(|c: char| c.is_whitespace() || ",，、:：".contains(c))
            .all(|w| matches!(w, "" | "或" | "或者" | "和" | "or" | "and"))
}

fn relative(text: &str) -> bool {
    let t = text.trim_start();
    // After a preposition too ("after which the money shows up…", "in which case").
    let t = [
        "after ", "before ", "in ", "of ", "by ", "during ", "for ", "at ", "on ", "from ",
        "until ", "to ", "with ", "through ", "under ",
    ]
    .iter()
    .find_map(|p| t.strip_prefix(p))
    .unwrap_or(t);
    ["which ", "who ", "where ", "when ", "whose ", "whom "]
        .iter()
        .any(|w| t.starts_with(w))
}

fn role(text: &str, subject: &Subject, vocab: &Vocabularies) -> Role {
    // Code is named, not stated: `read_pdf(path="contract.pdf")` says nothing of the subject.
    let text = &blank_code(text);
    let trimmed = text.trim();
    if trimmed.ends_with(['?', '？']) {
        return Role::Question;
    }
    let sp = spaced(text);
    let (mut ws, mut named, mut beyond) = (0usize, false, false);
    each_word(text, |w| {
        ws += 1;
        if subject.words.contains(w) {
            named = true;
        } else {
            beyond = true;
        }
    });
    let declines = declines(text, &sp, vocab);
    let hedge = vocab.hedge.hit(text, &sp) && !declines;
    // An interrogative word asks unless a hedge makes the clause a guess about the subject
    // ("from what I recall the latest release is 3.3.0").
    let guess = hedge && named && !vocab.process_not_self.hit(text, &sp);
    // A question word inside a quotation ("defined as \"any minute in which…\"") is the
    // quotation's, not the clause's.
    let unquoted = blank_quotes(text);
    if !guess && !relative(text) && vocab.question.hit(&unquoted, &spaced(&unquoted)) {
        return Role::Question;
    }
    // A caveat ("prices vary by region", "凭记忆的数字可能已经过时") explains why not to
    // answer; it answers nothing.
    if (vocab.topic.starts(&sp, text) && !hedge) || vocab.caveat.hit(text, &sp) {
        return Role::Neutral;
    }
    // "I think the Pro plan is cheaper": a hedge about the subject is a claim, even in the
    // agent's own voice — but not one about the process ("可能是关键词不匹配") nor one
    // saying where to look ("the API rates should be listed there").
    if hedge && named && !vocab.process_not_self.hit(text, &sp) && !redirects(text, &sp, vocab) {
        return Role::Subject;
    }
    // The process in words other than the question's own ("timeout" when the question
    // asks how to change the timeout).
    let masked = subject.mask(text);
    let msp = spaced(&masked);
    let process = declines
        || unable_to_answer(text, subject, vocab)
        || vocab.process.hit(&masked, &msp)
        || vocab.available.negated_within(text, &sp, 4, 48)
        || redirects(text, &sp, vocab)
        || vocab
            .failure
            .as_ref()
            .is_some_and(|ac| ac.is_match(&normalize(&masked)));
    if process {
        return Role::Process;
    }
    // A hedged statement that is not about the process is a guess about the subject
    // ("这类退款一般都是原路退回"), named or not.
    if (named && beyond) || (hedge && ws >= 2) {
        return Role::Subject;
    }
    Role::Neutral
}

/// Whether a Chinese clause says, without a subject, that what was asked cannot be done
/// ("故此现时无法比较两地气温", "未能确认退款金额"): an inability right before a word of answering
/// or of the question itself.
fn unable_to_answer(text: &str, subject: &Subject, vocab: &Vocabularies) -> bool {
    let Some(ac) = &vocab.inability else {
        return false;
    };
    if !text.chars().any(is_han) {
        return false;
    }
    let norm = normalize(text);
    ac.find_iter(&norm).any(|m| {
        let rest = &norm[m.end()..];
        let next: String = rest.chars().take(2).collect();
        (next.chars().count() == 2 && next.chars().all(is_han) && subject.words.contains(&next))
            || vocab.answer.starts("", rest)
    })
}

/// Whether a clause points the user to another source: the lexicon's pointing words, or
/// checking by way of a source ("或透過 12306 及車站公告確認", "confirm via the status page").
fn redirects(text: &str, sp: &str, vocab: &Vocabularies) -> bool {
    if vocab.redirect.hit(text, sp) {
        return true;
    }
    const VIA: &[&str] = &["通过", "透过", "经由", " via ", " through "];
    const CHECK: &[&str] = &[
        "确认",
        "核实",
        "查询",
        "确定",
        " confirm",
        " verify",
        " double check",
    ];
    let t = format!(" {} ", sp.to_lowercase());
    // `memmem`, not `str::find`: no searcher built per word and clause.
    let find = |hay: &str, w: &str| memchr::memmem::find(hay.as_bytes(), w.as_bytes());
    VIA.iter()
        .filter_map(|v| find(&t, v).map(|at| at + v.len()))
        .any(|from| CHECK.iter().any(|c| find(&t[from..], c).is_some()))
}

/// Whether a clause declines to answer: declining words, inability in the agent's voice
/// ("I can't say", "我无法确认", or opening the clause with no subject of its own: "目前
/// 无法比较", "Could not verify"), a hedge negated ("不作估计"), a verb of quoting or
/// guessing negated ("不给你乱报", "不对条款作任何推测").
fn declines(text: &str, sp: &str, vocab: &Vocabularies) -> bool {
    let n = normalize(text);
    // Inability of the subject ("the API cannot be called more often") is a claim.
    let inability = vocab.inability.as_ref().and_then(|ac| ac.find(&n));
    let opens = inability.is_some_and(|m| {
        n[..m.start()]
            .chars()
            .filter(|c| !c.is_whitespace() && !c.is_ascii_punctuation())
            .count()
            <= 2
    });
    vocab.declines.hit(text, sp)
        || (inability.is_some() && (opens || vocab.first_person.hit(text, sp)))
        || vocab.hedge.only_negated(text, sp)
        || vocab.quoting.negated_within(text, sp, 12, 24)
}

fn is_yes_no(text: &str) -> bool {
    const WORDS: &[&str] = &[
        "yes", "yeah", "yep", "yup", "no", "nope", "是的", "是", "有的", "有", "对", "没有",
        "不是", "不",
    ];
    let t = text
        .trim()
        .trim_matches(|c: char| {
            c.is_ascii_punctuation() || "，。！、".contains(c) || c.is_whitespace()
        })
        .to_lowercase();
    WORDS.contains(&t.as_str())
}

/// The text with what it quotes (`"…"`, `“…”`, `「…」`) blanked out.
fn blank_quotes(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut closing: Option<char> = None;
    for c in text.chars() {
        match closing {
            Some(end) if c == end => {
                closing = None;
                out.push(' ');
            }
            Some(_) => out.push(' '),
            None => {
                closing = match c {
                    '"' => Some('"'),
                    '“' => Some('”'),
                    '「' => Some('」'),
                    '『' => Some('』'),
                    _ => None,
                };
                out.push(if closing.is_some() { ' ' } else { c });
            }
        }
    }
    // An unclosed quotation blanks nothing.
    if closing.is_some() {
        text.to_string()
    } else {
        out
    }
}

/// The text with its code spans blanked out.
fn blank_code(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut in_code = false;
    for c in text.chars() {
        if c == '`' {
            in_code = !in_code;
            out.push(' ');
        } else if in_code {
            out.push(' ');
        } else {
            out.push(c);
        }
    }
    out
}

fn clause_of(clauses: &[Clause], at: usize) -> usize {
    // Clauses are in text order and do not overlap: the last that starts at or before
    // `at` holds it if any does (a search, not a scan: an answer may have thousands).
    let before = clauses.partition_point(|c| c.start <= at);
    match before.checked_sub(1) {
        Some(i) if at < clauses[i].end => i,
        _ => clauses[..before]
            .iter()
            .position(|c| c.start <= at && at < c.end)
            .unwrap_or(before.saturating_sub(1)),
    }
}

/// Byte ranges of the answer already read as facts, found by where they start: a fact is
/// checked against the ranges near it only, so reading an answer stays linear in its
/// facts.
#[derive(Default)]
struct Spans {
    by_start: std::collections::BTreeMap<usize, Vec<usize>>,
    longest: usize,
}

impl Spans {
    fn push(&mut self, start: usize, end: usize) {
        self.by_start.entry(start).or_default().push(end);
        self.longest = self.longest.max(end.saturating_sub(start));
    }

    /// The ranges that can overlap or hold `start..end`.
    fn near(&self, start: usize, end: usize) -> impl Iterator<Item = (usize, usize)> + '_ {
        self.starting_in(start.saturating_sub(self.longest), end.max(start + 1))
    }

    /// The ranges that start in `from..to`.
    fn starting_in(&self, from: usize, to: usize) -> impl Iterator<Item = (usize, usize)> + '_ {
        self.by_start
            .range(from..to.max(from))
            .flat_map(|(a, ends)| ends.iter().map(move |b| (*a, *b)))
    }
}

fn extract_claims(folded: &str, clauses: &[Clause]) -> Vec<Claim> {
    let mut taken = Spans::default();
    let mut out: Vec<Claim> = Vec::new();
    let mut seen: HashSet<(FactKind, usize, String)> = HashSet::new();
    let overlaps =
        |taken: &Spans, s: usize, e: usize| taken.near(s, e).any(|(a, b)| s < b && a < e);
    let push = |out: &mut Vec<Claim>,
                seen: &mut HashSet<(FactKind, usize, String)>,
                text: &str,
                kind: FactKind,
                q: Option<Quantity>,
                at: usize| {
        // Each fact once per clause: the same number in two rows is checked in each.
        let clause = clause_of(clauses, at);
        if seen.insert((kind, clause, text.to_lowercase())) {
            out.push(Claim {
                fact: Fact {
                    text: text.to_string(),
                    kind,
                },
                quantity: q,
                clause,
                at,
            });
        }
    };
    // An identifier read at `at`: its span taken, the fact pushed.
    let identifier = |taken: &mut Spans,
                      out: &mut Vec<Claim>,
                      seen: &mut HashSet<(FactKind, usize, String)>,
                      t: &str,
                      at: usize| {
        taken.push(at, at + t.len());
        push(out, seen, t, FactKind::Identifier, None, at);
    };
    for m in url_re().find_iter(folded) {
        let s = m
            .as_str()
            .trim_end_matches(['.', ',', ';', ':', '!', '?', '*', '_']);
        taken.push(m.start(), m.start() + s.len());
        push(&mut out, &mut seen, s, FactKind::Url, None, m.start());
    }
    // A file path (`~/.exctl/config.yaml`, `/etc/exctl.conf`, `config.toml`) is a key fact.
    static PATH: OnceLock<Regex> = OnceLock::new();
    let path = PATH.get_or_init(|| {
        Regex::new(
            r"(?:^|[\s`'(\[（「“:：])((?:~|\.{1,2})?/[A-Za-z0-9_.-]+(?:/[A-Za-z0-9_.-]+)+|[A-Za-z0-9_-]+\.(?:ya?ml|json|toml|ini|conf|cfg|env))\b",
        )
        .expect("compiles")
    });
    for caps in path.captures_iter(folded) {
        let m = caps.get(1).expect("group");
        let t = m.as_str().trim_end_matches('.');
        if overlaps(&taken, m.start(), m.start() + t.len()) {
            continue;
        }
        identifier(&mut taken, &mut out, &mut seen, t, m.start());
    }
    for m in quote_re().find_iter(folded) {
        if overlaps(&taken, m.start(), m.end()) {
            continue;
        }
        // Between the quotation marks (each alternative's group): read from the match, as
        // captures would take the slow engine for every quotation.
        let inner = {
            let q = m.as_str();
            let open = q.chars().next().map_or(0, char::len_utf8);
            let close = q.chars().next_back().map_or(0, char::len_utf8);
            &q[open..q.len() - close]
        };
        // A quoted single word or name is a term, not a quotation; quoted sentences are
        // speech (a persona's lines), read clause by clause like the rest of the answer.
        let speech = inner
            .trim_end_matches(|c: char| ".!?。！？…」』”\"".contains(c) || c.is_whitespace())
            .contains(['。', '！', '？', '!', '?'])
            || inner.contains(". ")
            || inner.matches([',', '，', ';', '；']).count() >= 2;
        // A JSON string value the answer writes (`{"value": "每百万 token 3 美元"}`) is text
        // in JSON's quotes, read for its facts like the rest, not a quotation.
        let before = folded[..m.start()].trim_end();
        let json_value = m.as_str().starts_with('"')
            && before
                .strip_suffix(':')
                .is_some_and(|b| b.trim_end().ends_with('"'));
        if words(inner).len() >= 3 && !speech && !json_value {
            push(
                &mut out,
                &mut seen,
                m.as_str(),
                FactKind::Quote,
                None,
                m.start(),
            );
        }
    }
    let mut quantities = csv_fields(folded, numbers::scan(folded));
    quantities.retain(|q| !overlaps(&taken, q.start, q.end) && !list_marker(folded, q));
    let mut quantity_spans = Spans::default();
    for q in &quantities {
        quantity_spans.push(q.start, q.end);
    }
    let csv_headers = csv_headers(folded);
    for whole in token_re().find_iter(folded) {
        // A word (the second group) or a flag opening the text is the whole match; only a
        // flag after the character before it needs the groups (captures are slow, and a
        // search for every word of the answer).
        let caps;
        let m = if whole
            .as_str()
            .starts_with(|c: char| c.is_ascii_alphanumeric() || c == '-')
        {
            whole
        } else {
            caps = token_re().captures_at(folded, whole.start());
            let Some(m) = caps.as_ref().and_then(|c| c.get(1)) else {
                continue;
            };
            m
        };
        let t = m.as_str().trim_end_matches(['.', ':', '/']);
        // A one-letter flag is a fact where it stands as code on its own (`-t`).
        let short_flag = t.len() == 2
            && t.starts_with('-')
            && t.as_bytes()[1].is_ascii_alphabetic()
            && folded[..m.start()].ends_with('`')
            && folded[m.start() + 2..].starts_with('`');
        if !(key_token(t) || short_flag) || overlaps(&taken, m.start(), m.start() + t.len()) {
            continue;
        }
        // `−US$36.00` is an amount with its sign, no flag.
        if t.starts_with('-') && folded[m.start() + t.len()..].starts_with(['$', '¥', '€', '£'])
        {
            continue;
        }
        // A name without digits that labels the answer's own structure (`next_step: …`).
        let colon = folded[m.start() + t.len()..]
            .trim_start_matches(['"', ' '])
            .starts_with([':', '：']);
        // `Q1：` / `A2:` opening a line number a question and its answer.
        let numbered = colon
            && t.len() <= 3
            && t.starts_with(['Q', 'A', 'q', 'a'])
            && t[1..].bytes().all(|b| b.is_ascii_digit())
            && {
                let line_start = line_start(folded, m.start());
                folded[line_start..m.start()]
                    .chars()
                    .all(|c| !c.is_alphanumeric())
            };
        let label =
            (!t.bytes().any(|b| b.is_ascii_digit()) && colon) || line_tag(folded, t, m.start());
        let in_header = csv_headers
            .iter()
            .any(|(a, b)| (*a..*b).contains(&m.start()));
        if label || numbered || in_header {
            continue;
        }
        // A number with a glued unit (`30s`, `500K-token`, `2h`) is the quantity's.
        if quantity_spans
            .near(m.start(), m.start() + 1)
            .any(|(a, b)| a <= m.start() && m.start() < b)
        {
            continue;
        }
        identifier(&mut taken, &mut out, &mut seen, t, m.start());
    }
    // A capitalized name inside a sentence (`Nanjing South`, `Sonnet`): a proper noun,
    // checked where the evidence is written in the same script (see `Evidence::judge`).
    static NAME: OnceLock<Regex> = OnceLock::new();
    let name = NAME
        .get_or_init(|| Regex::new(r"\b[A-Z][a-z]{2,}(?:[ -][A-Z][a-z]+)*\b").expect("compiles"));
    // A month's name is its date's (`(Nov 20, 2026)`, `20 Nov 2026`).
    let in_date = |at: usize| {
        quantities
            .iter()
            .any(|q| q.dim == Dim::Date && q.start <= at && at < q.end)
    };
    for m in name.find_iter(folded) {
        if overlaps(&taken, m.start(), m.end())
            || sentence_initial(folded, m.start())
            || in_date(m.start())
        {
            continue;
        }
        let first = m.as_str().split([' ', '-']).next().unwrap_or_default();
        if COMMON_NAMES.contains(&first) {
            continue;
        }
        taken.push(m.start(), m.end());
        push(
            &mut out,
            &mut seen,
            m.as_str(),
            FactKind::Name,
            None,
            m.start(),
        );
    }
    // A code span that is one word (`~/.exctl/config.yaml`) is a name to check whole.
    static CODE: OnceLock<Regex> = OnceLock::new();
    let code = CODE.get_or_init(|| Regex::new(r"`([^`\s]{3,200})`").expect("compiles"));
    for caps in code.captures_iter(folded) {
        let m = caps.get(1).expect("group");
        let within = |(a, b): (usize, usize)| a <= m.start() && m.end() <= b;
        let covered = taken.near(m.start(), m.end()).any(within)
            || quantity_spans.near(m.start(), m.end()).any(within);
        if !covered && m.as_str().chars().any(|c| c.is_ascii_alphanumeric()) {
            identifier(&mut taken, &mut out, &mut seen, m.as_str(), m.start());
        }
    }
    for mut q in quantities {
        // A counted word that is a name already taken (`3.5 Sonnet`): the number alone.
        if let Some(cut) = taken
            .starting_in(q.start + 1, q.end)
            .filter(|(_, b)| *b >= q.end)
            .map(|(a, _)| a)
            .min()
        {
            q.end = folded[..cut].trim_end().len();
            q.word.clear();
        }
        if overlaps(&taken, q.start, q.end) {
            continue;
        }
        let kind = match q.dim {
            Dim::Money(_) => FactKind::Amount,
            Dim::Date => FactKind::Date,
            Dim::Percent => FactKind::Percentage,
            Dim::Clock => FactKind::Time,
            Dim::Plain => FactKind::Number,
            _ => FactKind::Quantity,
        };
        let text = q.text(folded).trim().to_string();
        let at = q.start;
        push(&mut out, &mut seen, &text, kind, Some(q), at);
    }
    out.sort_by_key(|c| c.at);
    out
}

/// Whether `t` at `at` is a log's level or a line's tag: a word in capitals opening its
/// line, where two or more lines open so (`INFO depart 08:05`, `ERR  train_status(…)`).
fn line_tag(folded: &str, t: &str, at: usize) -> bool {
    let tag = |line: &str| {
        let line = line.trim_start();
        let word = &line[..line.bytes().take_while(u8::is_ascii_alphabetic).count()];
        (2..=8).contains(&word.len())
            && word.bytes().all(|b| b.is_ascii_uppercase())
            && line[word.len()..].starts_with([' ', '\t'])
    };
    t.bytes().all(|b| b.is_ascii_uppercase())
        && folded[line_start(folded, at)..at].trim().is_empty()
        && folded.lines().filter(|l| tag(l)).count() >= 2
}

/// The byte spans of the lines that are CSV headers: three or more comma-separated names
/// and nothing else (`order_id,refund_amount,status`); their names are columns, not facts.
fn csv_headers(folded: &str) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let mut from = 0;
    for line in folded.split_inclusive('\n') {
        let fields: Vec<&str> = line.trim().split(',').collect();
        let header = fields.len() >= 3
            && fields.iter().all(|f| {
                let f = f.trim();
                f.starts_with(|c: char| c.is_ascii_alphabetic())
                    && f.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
            });
        if header {
            out.push((from, from + line.len()));
        }
        from += line.len();
    }
    out
}

/// The quantities of a text with those inside a CSV block's rows read field by field: a
/// row under `plan,price,seats,api_calls_per_day` with as many fields (`Free,$0/month,1,100`)
/// holds `1` and `100`, not `1,100`.
fn csv_fields(folded: &str, quantities: Vec<Quantity>) -> Vec<Quantity> {
    let mut rows: Vec<(usize, usize)> = Vec::new();
    let mut width = None;
    let mut from = 0;
    for line in folded.split_inclusive('\n') {
        let fields = line.trim().split(',').count();
        let header = csv_headers(line).len() == 1;
        if header {
            width = Some(fields);
        } else if width == Some(fields) && !line.contains(", ") {
            rows.push((from, from + line.len()));
        } else {
            width = None;
        }
        from += line.len();
    }
    if rows.is_empty() {
        return quantities;
    }
    let mut out = Vec::with_capacity(quantities.len());
    for q in quantities {
        let row = rows.iter().find(|(s, e)| *s <= q.start && q.end <= *e);
        let Some(_) = row.filter(|_| folded[q.start..q.end].contains(',')) else {
            out.push(q);
            continue;
        };
        let mut at = q.start;
        for field in folded[q.start..q.end].split(',') {
            for mut f in numbers::scan(field) {
                f.start += at;
                f.end += at;
                out.push(f);
            }
            at += field.len() + 1;
        }
    }
    out
}

/// Capitalized words that name no particular thing: days, months, units, titles.
const COMMON_NAMES: &[&str] = &[
    "Monday",
    "Tuesday",
    "Wednesday",
    "Thursday",
    "Friday",
    "Saturday",
    "Saturdays",
    "Sunday",
    "Sundays",
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
    "Celsius",
    "Fahrenheit",
    "Section",
    "Sections",
    "Clause",
    "Article",
    "Step",
    "Note",
    "Source",
    "Sources",
    "Docs",
    "Summary",
    "Answer",
    "Status",
    "Yes",
    "Sorry",
    "Thanks",
    "Please",
    "The",
    "This",
    "That",
    "About",
    "After",
    "Before",
    "Also",
    "However",
    "Here",
    "Per",
    "For",
    "With",
    "From",
    "And",
    "But",
    "Not",
    "Only",
    "Total",
    "Example",
    "Examples",
];

/// Whether `at` opens a sentence, a clause, a line or a list item.
fn sentence_initial(folded: &str, at: usize) -> bool {
    // Emoji used as bullets (`🔒 **Security fix**`) and footnote marks (`¹ Billed per
    // seat`) open a line as a dash does.
    let mut before = folded[..at].trim_end_matches(|c: char| {
        [' ', '*', '_', '"', '\'', '(', '[', '`'].contains(&c)
            || is_pictograph(c)
            || c == '\u{fe0f}'
            || "¹²³⁴⁵⁶⁷⁸⁹⁰".contains(c)
    });
    // A footnote mark after the last sentence (`… use it.[^1] There's`).
    if let Some(open) = before.strip_suffix(']').and_then(|b| b.rfind('['))
        && before[open + 1..before.len() - 1]
            .trim_start_matches('^')
            .bytes()
            .all(|b| b.is_ascii_digit())
    {
        before = before[..open].trim_end();
    }
    before.is_empty()
        || before.ends_with([
            '.', '!', '?', ':', ';', '\n', '-', '#', '|', '>', '。', '！', '？', '：', '；', ',',
            '，', '、', '）', ')', '→', '➜', '➔', '▶', '►', '‣', '•', '·',
        ])
}

/// Whether the answer numbers a list item `q` (`2.` opening a line): `第 2 条` then points
/// at its own list, not at the evidence.
fn own_list_item(folded: &str, q: &Quantity) -> bool {
    let n = q.text(folded).trim().to_string();
    folded.lines().any(|l| {
        let l = l.trim_start_matches(|c: char| c.is_whitespace() || "#*-".contains(c));
        l.strip_prefix(n.as_str())
            .is_some_and(|rest| rest.starts_with(['.', ')', '、', '）']))
    })
}

/// `1.` / `2)` / `3、` opening a line, `[1]`, `[^1]`, `#1`, `第1`, `第 2 步`, `step 3`, `EDIT 2:`
/// are numbering, a log line's `[12:04:31]` a timestamp: not facts.
fn list_marker(folded: &str, q: &Quantity) -> bool {
    let before = &folded[..q.start];
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    // A keycap digit (`1️⃣ 联系管理员`) is an emoji bullet; `T+30 s` a timeline's mark
    if folded[q.end..]
        .trim_start_matches('\u{fe0f}')
        .starts_with('\u{20e3}')
        // (opening its line, with a unit: `通常 T+1 到账` is a settlement term, a fact)
        || ((before.ends_with("T+") || before.ends_with("T-"))
            && q.dim != Dim::Plain
            && before[line_start..before.len() - 2].trim().is_empty())
        || outline_number(folded, q)
    {
        return true;
    }
    // A log line's timestamp (`[12:04:31] search_docs started`), a chat message's time
    // after its sender (`**weather-bot** 10:42`).
    if q.dim == Dim::Clock && {
        let rest_of_line = folded[q.end..]
            .split('\n')
            .next()
            .unwrap_or_default()
            .trim();
        (before[line_start..].trim() == "[" && rest_of_line.starts_with(']'))
            || (rest_of_line.is_empty() && {
                let lead = before[line_start..].trim();
                lead.len() > 4
                    && lead.starts_with("**")
                    && lead.ends_with("**")
                    && !lead[2..lead.len() - 2].contains("**")
            })
    } {
        return true;
    }
    if q.dim != Dim::Plain {
        return false;
    }
    let lead = before[line_start..].trim_matches(|c: char| c.is_whitespace() || "#*->".contains(c));
    let after = &folded[q.end..];
    // A line of reaction counts (`👀 1   👍 2`) is decoration. Read only where the number
    // follows an emoji, a digit or nothing on its line: a prose line is not read per number.
    let decoration = |c: char| is_pictograph(c) || c.is_ascii_digit() || c == '\u{fe0f}';
    let opens = before[line_start..]
        .chars()
        .rev()
        .find(|c| !c.is_whitespace())
        .is_none_or(decoration);
    if opens {
        let line_end = after.find('\n').unwrap_or(after.len());
        let mut line = before[line_start..]
            .chars()
            .chain(after[..line_end].chars());
        if line.clone().any(is_pictograph) && line.all(|c| decoration(c) || c.is_whitespace()) {
            return true;
        }
    }
    (lead.is_empty() && after.starts_with(['.', ')', '、', '）']))
        || (lead.is_empty() && numbered_keys(folded, q, after))
        || (before.ends_with('[') || before.ends_with("[^")) && after.starts_with(']')
        // A numbered label in capitals opening a line: `EDIT 2:`, `UPDATE 3：`.
        || (after.starts_with([':', '：'])
            && lead.len() >= 2
            && lead.chars().all(|c| c.is_ascii_uppercase())
            && before.ends_with(' '))
        || numbered_series(folded, lead, q, after)
        || inline_series(folded, q, after)
        || before.ends_with('#')
        || (before.trim_end().ends_with("第")
            && (own_list_item(folded, q) || after.trim_start().starts_with('步')))
        || ends_with_ignore_ascii_case(before, "step ")
        || ends_with_ignore_ascii_case(before, "option ")
}

/// `text.to_ascii_lowercase().ends_with(suffix)` for a lowercase ASCII `suffix`, without
/// a copy of the text (a copy of the answer up to each of its numbers).
fn ends_with_ignore_ascii_case(text: &str, suffix: &str) -> bool {
    text.len() >= suffix.len()
        && text.as_bytes()[text.len() - suffix.len()..].eq_ignore_ascii_case(suffix.as_bytes())
}

/// Whether a clock time opens its line as one of a log's entries: another line opens
/// with a clock time too. A bullet may come first (`- 10:02 调用 …`).
fn process_log(folded: &str, q: &Quantity) -> bool {
    let unbulleted = |line: &str| {
        line.trim_start()
            .trim_start_matches(['-', '*', '+', '•', '·', '–', '—', '>'])
            .trim_start()
            .len()
    };
    let start = line_start(folded, q.start);
    if unbulleted(&folded[start..q.start]) != 0 {
        return false;
    }
    let opens_with_clock = |line: &str| {
        let t = line.as_bytes();
        let t = &t[t.len() - unbulleted(line)..];
        t.len() >= 4
            && t[0].is_ascii_digit()
            && (t[1] == b':' && t[2].is_ascii_digit() || t[2] == b':' && t[1].is_ascii_digit())
    };
    folded.lines().filter(|l| opens_with_clock(l)).count() >= 2
}

/// Whether a quotation holds only the question's words (`「exctl request timeout」` for
/// "How do I change the request timeout in exctl"): the question restated as a title.
fn quotes_input(claim: &Claim, input_norm: &str) -> bool {
    if claim.fact.kind != FactKind::Quote || input_norm.is_empty() {
        return false;
    }
    let ws = naming_words(&claim.fact.text);
    ws.len() >= 2 && ws.iter().all(|w| input_norm.contains(w.as_str()))
}

/// Whether `q` numbers an outline item opening its line (`  1.2 等待 30 秒后逾时`), where
/// a sibling item (`1.1`, `1.3`) or its parent (`1.`) opens another line.
fn outline_number(folded: &str, q: &Quantity) -> bool {
    let text = &folded[q.start..q.end];
    let Some((major, minor)) = text.split_once('.') else {
        return false;
    };
    let opens = |at: usize| folded[line_start(folded, at)..at].trim().is_empty();
    if !opens(q.start)
        || !folded[q.end..].starts_with([' ', '\t', '\u{3000}'])
        || major.is_empty()
        || !major.bytes().all(|b| b.is_ascii_digit())
        || minor.is_empty()
        || !minor.bytes().all(|b| b.is_ascii_digit())
    {
        return false;
    }
    let Ok(n) = minor.parse::<u32>() else {
        return false;
    };
    let siblings = [n.checked_sub(1).filter(|m| *m > 0), Some(n + 1)];
    let mut labels: Vec<String> = siblings
        .iter()
        .flatten()
        .map(|m| format!("{major}.{m} "))
        .collect();
    labels.push(format!("{major}. "));
    labels.iter().any(|label| {
        folded
            .match_indices(label.as_str())
            .any(|(at, _)| at != q.start && opens(at))
    })
}

/// Whether `q` sizes an instance the sentence imagines: "a 4-hour visit … would cost 80
/// 元", "a 3-person team would be $60/month" (an article, the number joined to its noun,
/// and `would` in the clause).
fn would_instance(folded: &str, clause: &Clause, q: &Quantity) -> bool {
    let text = &folded[clause.start..clause.end];
    let before = folded[clause.start..q.start].to_ascii_lowercase();
    spaced(text).contains(" would ")
        && (before.ends_with("a ") || before.ends_with("an "))
        && folded[q.start..q.end.min(folded.len())].contains('-')
}

/// Whether `q` numbers an item of a list run into a sentence: "两个选择：1) 装插件；2) 贴条款",
/// "Next steps: 1）retry 2）ask support" — its neighbour in the series follows or precedes.
fn inline_series(folded: &str, q: &Quantity, after: &str) -> bool {
    if !after.starts_with([')', '）'])
        || q.decimals != 0
        || !(1.0..=20.0).contains(&q.raw)
        || folded[..q.start]
            .chars()
            .next_back()
            .is_some_and(char::is_alphanumeric)
    {
        return false;
    }
    let item = |n: f64, close: char| format!("{n}{close}");
    let (next, previous) = (q.raw + 1.0, q.raw - 1.0);
    [')', '）'].iter().any(|c| {
        folded[q.end..].contains(&item(next, *c))
            || (previous >= 1.0 && folded[..q.start].contains(&item(previous, *c)))
    })
}

/// Whether `q` numbers one of a series of labels opening lines: `Finding 1：` where
/// `Finding 2：` opens another line (`lead` is the line's words before `q`).
/// Whether a number opening its line is one of a numbered list's keys in a config-like
/// output (`1 = 请管理员安装插件` beside `2 = …`).
fn numbered_keys(folded: &str, q: &Quantity, after: &str) -> bool {
    if !after.trim_start().starts_with('=') || q.decimals != 0 || !(1.0..=20.0).contains(&q.raw) {
        return false;
    }
    [q.raw - 1.0, q.raw + 1.0].iter().any(|n| {
        folded.lines().any(|l| {
            l.trim_start()
                .strip_prefix(&n.to_string())
                .is_some_and(|rest| rest.trim_start().starts_with('='))
        })
    })
}

fn numbered_series(folded: &str, lead: &str, q: &Quantity, after: &str) -> bool {
    if !after.starts_with([':', '：'])
        || lead.is_empty()
        || lead.chars().count() > 12
        || !lead.chars().all(|c| c.is_alphabetic())
        || q.decimals != 0
        || !(1.0..=20.0).contains(&q.raw)
    {
        return false;
    }
    [q.raw - 1.0, q.raw + 1.0].iter().any(|n| {
        [':', '：'].iter().any(|colon| {
            let label = format!("{lead} {n}{colon}");
            folded.match_indices(&label).any(|(at, _)| {
                let line_start = line_start(folded, at);
                folded[line_start..at].chars().all(|c| !c.is_alphanumeric())
            })
        })
    })
}

/// How the evidence stands to a fact.
#[derive(Debug, Clone, PartialEq)]
pub enum Support {
    /// A tool result states it (in some notation).
    Tools,
    /// A simple computation from tool results gives it (how, in words).
    Derived(String),
    /// Only the input states it (the question restated).
    Input,
    /// A failed call's error, arguments or tool name: the answer names the process.
    Process,
    /// A number an example or a worked computation counts with (`if you stay 4 hours`,
    /// `20 × 12`), or, with no tool result, a name used to point (`exctl --help`, a
    /// label): not a claim.
    Example,
    /// Nothing states it.
    Unsupported,
    /// The number is in the evidence, but attached to something else (where it is).
    WrongContext(String),
}

impl Support {
    /// Whether the fact is a claim of the answer's own: not the question restated, the
    /// process named, or an example's number.
    pub fn is_claim(&self) -> bool {
        !matches!(self, Support::Input | Support::Process | Support::Example)
    }

    /// Whether this support grounds a fact.
    pub fn supported(&self) -> bool {
        !matches!(self, Support::Unsupported | Support::WrongContext(_))
    }
}

/// The evidence of a cell, prepared once for every check.
pub struct Evidence {
    /// Normalized only when a fact with spaces in it (a quote, a name) must be looked up.
    tools_norm: OnceLock<String>,
    tools_folded: String,
    /// `tools_folded` ASCII-lowercased, made once for every search of it that needs it.
    tools_lowered: OnceLock<Vec<u8>>,
    input_norm: String,
    input_folded: String,
    process_norm: String,
    process_quantities: Vec<Quantity>,
    fetched: Vec<String>,
    has_tools: bool,
    latin: bool,
    quantities: OnceLock<Vec<(Quantity, usize)>>,
    index: OnceLock<Index>,
    lines: OnceLock<Vec<(usize, usize)>>,
    /// Which lines are records ([`is_record`]), read once.
    records: OnceLock<Vec<bool>>,
    /// Where the words before each `<` of the tool results end (placeholders).
    placeholder_ends: OnceLock<Vec<usize>>,
    /// Each line normalized, once it is compared with a clause.
    line_norms: OnceLock<Vec<OnceLock<String>>>,
    /// Each line's key words (see [`Evidence::line_key`]), once asked for.
    line_keys: OnceLock<Vec<OnceLock<Vec<String>>>>,
    /// The records of an entity (see [`Evidence::entity_records`]).
    entity_records: OnceLock<Vec<usize>>,
    /// The names an answer gives the entity records (see [`Evidence::aliases`]), with the
    /// answer (its folded text) they were learnt from.
    aliases: std::sync::Mutex<Option<(String, Aliases)>>,
    /// The entity records an answer names, and whether its question names another (per
    /// answer).
    named: std::sync::Mutex<Option<(String, NamedRecords)>>,
    /// Whether the question asks for a comparison or a computation (read once).
    asks_computation: OnceLock<bool>,
    /// For evidence over [`FULL_SCAN`]: the answer's quantities some tool result states,
    /// found in one pass over the evidence for the ways each could be written.
    stated: std::sync::Mutex<std::collections::HashMap<DeriveKey, bool>>,
    /// Computations already looked for, by quantity: an answer repeats its numbers.
    derived: std::sync::Mutex<std::collections::HashMap<DeriveKey, Option<String>>>,
    /// [`Evidence::lines_stating`] by quantity, for the same reason.
    stating: std::sync::Mutex<std::collections::HashMap<(DeriveKey, u64), Vec<usize>>>,
}

/// Per entity record, the names an answer gives it.
type Aliases = std::sync::Arc<Vec<Vec<String>>>;
/// The entity records an answer names, and those its question names.
type NamedRecords = std::sync::Arc<Named>;

#[derive(Debug)]
struct Named {
    answer: Vec<usize>,
    question: Vec<usize>,
}

type DeriveKey = (Dim, u64, u64, u8, bool, String, u8);

fn derive_key(q: &Quantity, ratio: u8) -> DeriveKey {
    (
        q.dim,
        q.value.to_bits(),
        q.raw.to_bits(),
        q.decimals,
        q.fahrenheit,
        q.word.clone(),
        ratio,
    )
}

/// Whether the number found at `start..end` of `text` is, read where it stands, `q`.
fn states_at(text: &str, start: usize, end: usize, q: &Quantity) -> bool {
    let line_start = text[..start]
        .rfind('\n')
        .map_or(0, |i| i + 1)
        .max(start.saturating_sub(80));
    let line_end = text[end..]
        .find('\n')
        .map_or(text.len(), |i| end + i)
        .min(end + 80);
    let (mut from, mut to) = (line_start, line_end);
    while !text.is_char_boundary(from) {
        from += 1;
    }
    while !text.is_char_boundary(to) {
        to -= 1;
    }
    let window = &text[from..to];
    numbers::scan(window)
        .into_iter()
        .filter(|e| e.start <= start - from && start - from < e.end)
        .any(|e| q.same_as(&implied_unit(window, e)))
}

/// The ways a quantity's number could be written in evidence, as digits: as written, its
/// value in other magnitudes (`500000`, `500`, `50`), with thousands separators, in other
/// units of its dimension, a clock time in 24- and 12-hour forms.
fn spellings(q: &Quantity) -> Vec<String> {
    let mut values: Vec<f64> = vec![q.raw, q.value];
    match q.dim {
        Dim::Clock => {
            let (h, m) = ((q.value / 60.0) as u32, (q.value % 60.0) as u32);
            let mut out = vec![
                format!("{h}:{m:02}"),
                format!("{h:02}:{m:02}"),
                h.to_string(),
            ];
            if h > 12 {
                out.push(format!("{}:{m:02}", h - 12));
                out.push((h - 12).to_string());
            }
            return out;
        }
        // A date by its year, or by its day when it has none.
        Dim::Date => {
            let v = q.value as u64;
            return vec![if v / 10000 > 0 { v / 10000 } else { v % 100 }.to_string()];
        }
        Dim::Duration => {
            for unit in [
                0.001,
                1.0,
                60.0,
                3600.0,
                86400.0,
                604_800.0,
                2_592_000.0,
                31_536_000.0,
            ] {
                values.push(q.value / unit);
            }
        }
        Dim::Temp => {
            values.push(q.value * 9.0 / 5.0 + 32.0);
            values.push((q.value * 9.0 / 5.0 + 32.0).round());
            values.push(q.value.round());
        }
        Dim::Bytes => {
            for unit in [1e3, 1e6, 1e9, 1e12] {
                values.push(q.value / unit);
            }
        }
        _ => {}
    }
    // `500K` as `500`, `50 万` as `50`, `0.5M` as `0.5`: mantissas of a tenth or more.
    for m in [1e3, 1e4, 1e6, 1e8, 1e9] {
        if q.raw / m >= 0.1 {
            values.push(q.raw / m);
        }
    }
    let mut out: Vec<String> = Vec::new();
    for v in values {
        if !v.is_finite() || v < 0.0 {
            continue;
        }
        for sp in number_spellings(v) {
            if !out.contains(&sp) {
                out.push(sp);
            }
        }
    }
    out
}

fn number_spellings(v: f64) -> Vec<String> {
    if (v - v.round()).abs() < 1e-9 {
        if v > 1e15 {
            return Vec::new();
        }
        let n = v.round() as u64;
        let plain = n.to_string();
        let mut grouped = String::new();
        for (i, c) in plain.chars().enumerate() {
            if i > 0 && (plain.len() - i).is_multiple_of(3) {
                grouped.push(',');
            }
            grouped.push(c);
        }
        return if grouped == plain {
            vec![plain]
        } else {
            vec![plain, grouped]
        };
    }
    let three = format!("{v:.3}");
    let trimmed = three.trim_end_matches('0').to_string();
    // A value with more than three decimals is not one evidence writes.
    if (trimmed.parse::<f64>().unwrap_or(f64::NAN) - v).abs() > 1e-9 {
        return Vec::new();
    }
    let mut out = vec![trimmed.clone()];
    let two = format!("{v:.2}");
    if two != trimmed && (two.parse::<f64>().unwrap_or(f64::NAN) - v).abs() < 1e-9 {
        out.push(two);
    }
    out
}

/// The evidence's quantities sorted by value and by number as written, for lookups in
/// logarithmic time; dates apart (a date without its year matches by month and day).
struct Index {
    by_value: Vec<(f64, u32)>,
    by_raw: Vec<(f64, u32)>,
    dates: Vec<u32>,
    /// The first distinct quantities (by dimension, value and counted word), for
    /// computed facts.
    distinct: Vec<u32>,
    /// The words the evidence counts (`10 seats`): a number counting one is no price.
    counted: HashSet<String>,
}

/// Evidence up to this size is read quantity by quantity (with context checks); larger
/// evidence is searched for the answer's numbers instead.
const FULL_SCAN: usize = 256 * 1024;
/// Of larger evidence, the bytes computed facts are looked for from.
const DERIVE_PREFIX: usize = 64 * 1024;
/// Hits read back as quantities in one search of large evidence, at most; past it the
/// numbers not yet found count as unsupported (fail closed).
const FIND_CHECKS: usize = 200_000;

/// Distinct evidence numbers a computed fact is looked for from, at most (the first ones).
const DERIVE_POOL: usize = 200;
/// Evidence lines compared for a fact's context, at most.
const CONTEXT_LINES: usize = 4000;

impl Evidence {
    /// `tools`: the text of every successful tool result; `process`: errors, arguments and
    /// names of the calls; `fetched`: URLs that successful calls carried.
    pub fn new(tools: &str, input: &str, process: &str, fetched: Vec<String>) -> Evidence {
        // The input folded as the answer is (`終止通知期` reads as the answer's `终止通知期`).
        let input_folded = numbers::fold(input);
        Evidence {
            tools_norm: OnceLock::new(),
            tools_folded: numbers::fold(tools),
            tools_lowered: OnceLock::new(),
            input_norm: normalize(&input_folded),
            input_folded,
            process_norm: normalize(&numbers::fold(process)),
            process_quantities: numbers::scan(&numbers::fold(process)),
            fetched,
            has_tools: !tools.trim().is_empty(),
            latin: latin_script(tools),
            quantities: OnceLock::new(),
            index: OnceLock::new(),
            lines: OnceLock::new(),
            records: OnceLock::new(),
            line_norms: OnceLock::new(),
            line_keys: OnceLock::new(),
            entity_records: OnceLock::new(),
            aliases: std::sync::Mutex::new(None),
            named: std::sync::Mutex::new(None),
            asks_computation: OnceLock::new(),
            placeholder_ends: OnceLock::new(),
            derived: Default::default(),
            stated: Default::default(),
            stating: Default::default(),
        }
    }

    /// Whether any tool returned content.
    pub fn has_tools(&self) -> bool {
        self.has_tools
    }

    fn quantities(&self) -> &[(Quantity, usize)] {
        self.quantities.get_or_init(|| {
            // A quantity's line is the count of line breaks before it: those of the
            // scanned part alone (all lines of large evidence are not needed for it).
            let scanned = self.scanned();
            let breaks: Vec<usize> = memchr::memchr_iter(b'\n', scanned.as_bytes()).collect();
            let mut qs: Vec<(Quantity, usize)> = numbers::scan(scanned)
                .into_iter()
                .map(|q| {
                    let line = breaks.partition_point(|&n| n < q.start);
                    (implied_unit(&self.tools_folded, q), line)
                })
                .collect();
            qs.shrink_to_fit();
            qs
        })
    }

    /// The evidence read quantity by quantity: all of it up to [`FULL_SCAN`], else its
    /// first [`DERIVE_PREFIX`] bytes (for computed facts; [`Evidence::find_stated`] looks
    /// the answer's numbers up in all of it).
    fn scanned(&self) -> &str {
        let t = &self.tools_folded;
        let limit = if self.large() {
            DERIVE_PREFIX
        } else {
            FULL_SCAN
        };
        let mut end = t.len().min(limit);
        while !t.is_char_boundary(end) {
            end -= 1;
        }
        &t[..end]
    }

    fn large(&self) -> bool {
        self.tools_folded.len() > FULL_SCAN
    }

    /// One pass over large evidence for every way the answer's quantities could be
    /// written (`500K` as `500000`, `500,000`, `500K`, `50万`…): each hit is read as a
    /// quantity where it stands and compared.
    fn find_stated(&self, analysis: &Analysis) {
        let mut wanted: Vec<(DeriveKey, &Quantity)> = Vec::new();
        let mut seen = std::collections::HashSet::new();
        for q in analysis.claims.iter().filter_map(|c| c.quantity.as_ref()) {
            let key = derive_key(q, 0);
            if seen.insert(key.clone()) {
                wanted.push((key, q));
            }
        }
        // Each spelling once, with the quantities it could be.
        let mut patterns: Vec<String> = Vec::new();
        let mut owners: Vec<Vec<usize>> = Vec::new();
        let mut at_of: std::collections::HashMap<String, usize> = Default::default();
        for (i, (_, q)) in wanted.iter().enumerate() {
            for sp in spellings(q) {
                match at_of.get(&sp) {
                    Some(&at) => owners[at].push(i),
                    None => {
                        at_of.insert(sp.clone(), patterns.len());
                        patterns.push(sp);
                        owners.push(vec![i]);
                    }
                }
            }
        }
        let mut stated = vec![false; wanted.len()];
        // Leftmost-longest: the whole number as written (`500,000`, not its `500`). A
        // spelling is done when every quantity it could be is found.
        let text = self.tools_folded.as_str();
        let mut checks = 0usize;
        let stated_cell = std::cell::RefCell::new(&mut stated);
        super::multisearch::search_numbers_while(
            text,
            &self.tools_lowered,
            &patterns,
            |start, end| whole_number(text, start, end),
            |at| owners[at].iter().any(|w| !stated_cell.borrow()[*w]),
            &mut |at, start, end| {
                if checks > FIND_CHECKS || !whole_number(text, start, end) {
                    return checks > FIND_CHECKS;
                }
                let mut stated = stated_cell.borrow_mut();
                for &who in &owners[at] {
                    if !stated[who] {
                        checks += 1;
                        stated[who] = states_at(text, start, end, wanted[who].1);
                    }
                }
                owners[at].iter().all(|w| stated[*w])
            },
        );
        let mut map = self.stated.lock().unwrap_or_else(|p| p.into_inner());
        for ((key, _), hit) in wanted.into_iter().zip(stated) {
            map.insert(key, hit);
        }
    }

    fn index(&self) -> &Index {
        self.index.get_or_init(|| {
            let qs = self.quantities();
            let mut by_value = Vec::with_capacity(qs.len());
            let mut by_raw = Vec::with_capacity(qs.len());
            let mut dates = Vec::new();
            let mut seen = std::collections::HashSet::new();
            let mut distinct = Vec::new();
            let mut counted = HashSet::new();
            for (i, (q, _)) in qs.iter().enumerate() {
                let i = i as u32;
                if q.dim == Dim::Plain && !q.word.is_empty() && !counted.contains(&q.word) {
                    counted.insert(q.word.clone());
                }
                if q.dim == Dim::Date {
                    dates.push(i);
                } else {
                    by_value.push((q.value, i));
                    by_raw.push((q.raw, i));
                }
                if distinct.len() < DERIVE_POOL
                    && seen.insert((q.dim, q.value.to_bits(), q.word.clone()))
                {
                    distinct.push(i);
                }
            }
            by_value.sort_by(|a, b| a.0.total_cmp(&b.0));
            by_raw.sort_by(|a, b| a.0.total_cmp(&b.0));
            Index {
                by_value,
                by_raw,
                dates,
                distinct,
                counted,
            }
        })
    }

    /// The evidence lines holding a quantity that states `q`, each once, in order.
    fn lines_stating(&self, q: &Quantity) -> Vec<usize> {
        // Everything of `q` the lookup reads (`same_as`, `rounding`): not where it stands.
        let key = (derive_key(q, 0), q.scale.to_bits());
        let lock = || self.stating.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(lines) = lock().get(&key) {
            return lines.clone();
        }
        let lines = self.lines_stating_uncached(q);
        lock().insert(key, lines.clone());
        lines
    }

    fn lines_stating_uncached(&self, q: &Quantity) -> Vec<usize> {
        let qs = self.quantities();
        let index = self.index();
        let mut hits: Vec<u32> = Vec::new();
        let tol = q.rounding().max(1e-9 * q.value.abs().max(1.0)) + 1e-9;
        let mut near = |sorted: &[(f64, u32)], v: f64| {
            let from = sorted.partition_point(|(x, _)| *x < v - tol);
            for (x, i) in &sorted[from..] {
                if *x > v + tol {
                    break;
                }
                hits.push(*i);
            }
        };
        if q.dim == Dim::Date {
            hits.extend(index.dates.iter().copied());
        } else {
            near(&index.by_value, q.value);
            near(&index.by_raw, q.raw);
            if q.value != q.raw {
                near(&index.by_value, q.raw);
                near(&index.by_raw, q.value);
            }
        }
        let counts = q.dim == Dim::Plain && index.counted.contains(&q.word);
        let mut lines: Vec<usize> = hits
            .into_iter()
            .filter(|i| {
                let e = &qs[*i as usize].0;
                q.same_as(e) && !(counts && matches!(e.dim, Dim::Money(_)))
            })
            .map(|i| qs[i as usize].1)
            .collect();
        lines.sort_unstable();
        lines.dedup();
        lines
    }

    fn lines(&self) -> &[(usize, usize)] {
        self.lines.get_or_init(|| {
            let mut out = Vec::new();
            let mut start = 0;
            for i in memchr::memchr_iter(b'\n', self.tools_folded.as_bytes()) {
                out.push((start, i));
                start = i + 1;
            }
            out.push((start, self.tools_folded.len()));
            out
        })
    }

    /// How the evidence stands to each claim of `analysis`, in order.
    pub fn judge(&self, analysis: &Analysis) -> Vec<Support> {
        let keys: Vec<String> = analysis
            .claims
            .iter()
            .map(|c| match c.fact.kind {
                FactKind::Quote => normalize(
                    c.fact
                        .text
                        .trim_matches(|ch| "\"“”「」『』".contains(ch))
                        .trim_end_matches(['.', ',', '!', '?', '。', '，', '!']),
                ),
                _ => normalize(&c.fact.text),
            })
            .collect();
        // Facts without spaces are looked up in the folded evidence as they are (ASCII
        // case aside): no pass to normalize a megabyte for them.
        let spaced_fact = |i: usize| {
            let c = &analysis.claims[i];
            c.fact.kind == FactKind::Quote || c.fact.text.contains(char::is_whitespace)
        };
        let plain_keys: Vec<String> = analysis
            .claims
            .iter()
            .enumerate()
            .map(|(i, c)| {
                if spaced_fact(i) || c.quantity.is_some() {
                    String::new()
                } else {
                    c.fact.text.clone()
                }
            })
            .collect();
        let mut in_tools = found_folded(&plain_keys, &self.tools_folded, &self.tools_lowered);
        if (0..keys.len()).any(|i| spaced_fact(i) && analysis.claims[i].quantity.is_none()) {
            let norm = self
                .tools_norm
                .get_or_init(|| normalize(&self.tools_folded));
            let spaced_keys: Vec<String> = keys
                .iter()
                .enumerate()
                .map(|(i, k)| {
                    if spaced_fact(i) {
                        k.clone()
                    } else {
                        String::new()
                    }
                })
                .collect();
            for (i, hit) in found(&spaced_keys, norm).into_iter().enumerate() {
                in_tools[i] |= hit;
            }
        }
        // A quoted value holds the evidence's words and numbers in other punctuation
        // (`"週六、週日 10:00–22:00"` for `週六、週日：10:00–22:00`): compared by its letters,
        // digits and characters alone.
        let skeleton = |t: &str| -> String {
            t.chars()
                .filter(|c| c.is_alphanumeric())
                .flat_map(char::to_lowercase)
                .collect()
        };
        let unfound: Vec<usize> = (0..keys.len())
            .filter(|&i| {
                !in_tools[i]
                    && analysis.claims[i].fact.kind == FactKind::Quote
                    && skeleton(&keys[i]).chars().count() >= 4
            })
            .collect();
        // Not over large evidence: a copy of a megabyte per answer for a quote's sake.
        if !unfound.is_empty() && !self.large() {
            let evidence = skeleton(&self.tools_folded);
            for i in unfound {
                in_tools[i] |= evidence.contains(&skeleton(&keys[i]));
            }
        }
        // A snake-case label the answer makes of the evidence's own words
        // (`termination_notice` for "Termination … notice"), where the evidence names
        // nothing in snake case itself: the answer's field name, not a fact.
        let labels: Vec<usize> = (0..keys.len())
            .filter(|&i| {
                let t = &analysis.claims[i].fact.text;
                !in_tools[i]
                    && analysis.claims[i].fact.kind == FactKind::Identifier
                    && t.contains('_')
                    && t.bytes().all(|b| b.is_ascii_lowercase() || b == b'_')
            })
            .collect();
        let snake_evidence = || {
            let b = self.tools_folded.as_bytes();
            memchr::memchr_iter(b'_', b).any(|at| {
                at > 0
                    && b[at - 1].is_ascii_alphabetic()
                    && b.get(at + 1).is_some_and(u8::is_ascii_alphabetic)
            })
        };
        let mut own_labels = vec![false; keys.len()];
        if !labels.is_empty() && !self.large() && !snake_evidence() {
            for &i in &labels {
                let parts: Vec<String> = analysis.claims[i]
                    .fact
                    .text
                    .split('_')
                    .filter(|p| !p.is_empty())
                    .map(str::to_string)
                    .collect();
                let in_evidence = found_folded(&parts, &self.tools_folded, &self.tools_lowered);
                let in_input = found(&parts, &self.input_norm);
                own_labels[i] = parts
                    .iter()
                    .enumerate()
                    .all(|(j, _)| in_evidence[j] || in_input[j]);
            }
        }
        // A flag is stated only as that flag (`-t` not as the start of `--timeout-ms`,
        // `--max-retries` not as the config key `max_retries`).
        for (i, c) in analysis.claims.iter().enumerate() {
            let t = c.fact.text.as_bytes();
            if in_tools[i]
                && !self.large()
                && c.fact.kind == FactKind::Identifier
                && t.len() >= 2
                && t[0] == b'-'
            {
                let flag =
                    |b: Option<&u8>| b.is_none_or(|b| !(b.is_ascii_alphanumeric() || *b == b'-'));
                let text = self.tools_folded.as_bytes();
                in_tools[i] = memchr::memmem::find_iter(text, t).any(|at| {
                    flag(at.checked_sub(1).and_then(|j| text.get(j)))
                        && flag(text.get(at + t.len()))
                });
            }
        }
        // A name shortened before its version (`py3.8` for `Python 3.8`, `node18` for
        // `Node.js 18`): the evidence names it in full beside the same version.
        for (i, c) in analysis.claims.iter().enumerate() {
            if !in_tools[i]
                && c.fact.kind == FactKind::Identifier
                && !self.large()
                && let Some(full) = shortened_version(&c.fact.text)
            {
                in_tools[i] = full.is_match(&self.tools_folded);
            }
        }
        let in_input = found(&keys, &self.input_norm);
        // The answer's terminal-session lines, read once where a fact asks.
        let sessions: OnceLock<Vec<(usize, bool)>> = OnceLock::new();
        let mut in_process = found(&keys, &self.process_norm);
        // A call quoted as code (`train_status(train="G102")`) names the process when each
        // of its names is a tool, an argument or a value the calls carried.
        for (i, c) in analysis.claims.iter().enumerate() {
            if !in_process[i]
                && matches!(c.fact.kind, FactKind::Identifier | FactKind::Quote)
                && c.fact.text.contains(['(', '=', ' '])
            {
                let names: Vec<String> = c
                    .fact
                    .text
                    .split(|ch: char| !(ch.is_alphanumeric() || ch == '_' || ch == '-'))
                    .filter(|n| n.chars().count() >= 2)
                    .map(normalize)
                    .collect();
                in_process[i] = !names.is_empty()
                    && !self.process_norm.is_empty()
                    && names.iter().all(|n| self.process_norm.contains(n.as_str()));
            }
        }
        if self.large() {
            self.find_stated(analysis);
        }
        let input_qs: OnceLock<Vec<Quantity>> = OnceLock::new();
        // Values a clause declares to be examples ("60000 is just an example value",
        // "上面的 5 和 1000 只是示例值") are examples wherever the answer writes them (the
        // config snippet or command it gave them in).
        let declaring: HashSet<usize> = analysis
            .clauses
            .iter()
            .filter(|cl| cl.hypothetical && names_example(&analysis.folded[cl.start..cl.end]))
            .map(|cl| cl.sentence)
            .collect();
        let declared: HashSet<u64> = analysis
            .claims
            .iter()
            .filter(|c| {
                analysis
                    .clauses
                    .get(c.clause)
                    .is_some_and(|cl| declaring.contains(&cl.sentence))
                    || c.quantity
                        .as_ref()
                        .is_some_and(|q| self.fills_placeholder(&analysis.folded, q))
            })
            .filter_map(|c| c.quantity.as_ref().map(|q| q.raw.to_bits()))
            .collect();
        let periods = std::cell::RefCell::new(HashMap::new());
        // The answer's numbers, gathered once for every number that needs them.
        let named = OnceLock::new();
        analysis
            .claims
            .iter()
            .enumerate()
            .map(|(i, c)| {
                // Named while speaking of the process (the failed call's URL, `--help`,
                // the quoted error, "after 30 s"): the answer points, it does not assert.
                let clause = analysis.clauses.get(c.clause);
                let in_process_clause = clause.is_some_and(|cl| {
                    matches!(cl.role, Role::Process | Role::Question) || cl.process_label
                });
                let redirect = clause.is_some_and(|cl| cl.redirect);
                // Where the clause points elsewhere, only the source's address and number
                // point ("per the app it boards from gate E12" still claims the gate).
                let pointer = match c.fact.kind {
                    FactKind::Url => true,
                    // A path through an app's screens (「我的订单 → 退款详情」) points.
                    FactKind::Identifier | FactKind::Quote => {
                        !redirect || c.fact.text.contains(['→', '›', '»', '>'])
                    }
                    _ => false,
                } || c.quantity.as_ref().is_some_and(|q| {
                    let integer = q.dim == Dim::Plain && q.decimals == 0;
                    // A number that names what follows it: `12306 App`, `12306 / 车站大屏`.
                    let names_a_thing = {
                        let after = analysis.folded[q.end..].trim_start_matches(' ');
                        after.starts_with(|c: char| c.is_ascii_alphabetic() || c == '/')
                    };
                    if redirect {
                        // A source's name or number: `12306`, a hotline; a wait before
                        // trying again ("try again in 15–30 minutes and I'll re-check"), but
                        // not a wait for the subject ("you should see the money within
                        // 3–5 business days").
                        integer
                            || (q.dim == Dim::Duration
                                && clause
                                    .is_some_and(|cl| retries(&analysis.folded[cl.start..cl.end])))
                    } else if integer && names_a_thing && q.word.is_empty() {
                        true
                    } else {
                        // A duration ("after 30 s") or an HTTP status ("a 503", "200 OK")
                        // of the call.
                        // A zero ("results: 0", "成功返回：0 次") is what came back.
                        q.dim == Dim::Duration
                            || (integer && (100.0..600.0).contains(&q.raw))
                            || (integer && q.raw == 0.0)
                            // A count of the calls ("1 次查询失败", "after 2 retries").
                            || (integer && counts_calls(q, &analysis.folded))
                    }
                });
                // The topic restated in its own words or quotes ("关于“请求超时的修改方法”");
                // a flag in it is still a flag ("For a single run, pass `--max-retries`").
                if clause.is_some_and(|cl| cl.topic)
                    && matches!(
                        c.fact.kind,
                        FactKind::Identifier | FactKind::Quote | FactKind::Name
                    )
                    && !in_tools[i]
                    && !c.fact.text.starts_with('-')
                {
                    return Support::Input;
                }
                if in_process_clause
                    && pointer
                    && !self.has_tools
                    && !in_tools[i]
                    && !(c.fact.kind == FactKind::Url
                        && self.fetched.iter().any(|f| same_url(f, &c.fact.text)))
                {
                    return Support::Process;
                }
                // The failed call shown as typed (`> train_status --train G102`): the
                // process, whatever its arguments look like.
                if own_labels[i] {
                    return Support::Example;
                }
                // Where the tools returned content, only the prompt is the call's: the
                // session's output restates the result and is checked like the rest.
                if !in_tools[i]
                    && if self.has_tools {
                        prompt_call(
                            &analysis.folded,
                            line_start(&analysis.folded, c.at),
                            &self.process_norm,
                        )
                    } else {
                        shows_call(
                            sessions.get_or_init(|| {
                                session_lines(&analysis.folded, &self.process_norm)
                            }),
                            &analysis.folded,
                            c.at,
                        )
                    }
                {
                    return Support::Process;
                }
                // Asked, not stated: "Q：G102 是几点？" restates the question.
                if clause.is_some_and(|cl| cl.role == Role::Question) && !in_tools[i] {
                    return Support::Input;
                }
                // The reply's own reference (`工单号：EC-20261203-0417`, `Ticket #4411`)
                // names the reply, not the subject — unless the question is about tickets.
                if matches!(c.fact.kind, FactKind::Identifier | FactKind::Number)
                    && !in_tools[i]
                    && let Some(label) = reference_label(&analysis.folded, c.at)
                    && !crate::text::contains(&self.input_folded, label)
                {
                    return Support::Process;
                }
                // With no tool result, outside any statement of the subject, a flag without
                // a value points (`exctl --help`) and a line of words in capitals is a heading
                // ("BLOCKED", "NEXT STEP", "EDIT 2:"); a flag with a value, a
                // code with digits, an acronym in a sentence ("such as the AACIPAA") are
                // still claims.
                if !self.has_tools
                    && c.fact.kind == FactKind::Identifier
                    && !c.fact.text.bytes().any(|b| b.is_ascii_digit())
                    && clause.is_some_and(|cl| {
                        let rest = analysis.folded[cl.start..cl.end].replacen(&c.fact.text, "", 1);
                        cl.role != Role::Subject
                            && (c.fact.text.starts_with('-')
                                || !rest.chars().any(|ch| ch.is_lowercase() || is_han(ch)))
                    })
                {
                    return Support::Example;
                }
                // A line set in capitals (`END REPORT.`, `REFUND SLIP 退款单`) is display: its
                // words without digits are a heading's, tool results or not.
                if c.fact.kind == FactKind::Identifier
                    && !in_tools[i]
                    && c.fact.text.bytes().all(|b| b.is_ascii_uppercase())
                    && (capitals_line(&analysis.folded, c.at)
                        || bracket_tag(&analysis.folded, c.at))
                {
                    return Support::Example;
                }
                // A name is checked only against evidence in its own script, with some to
                // check against: `Xinyi` translates `信義`, and a refusal's names are talk.
                // So is a quotation; and a capitalized word in a heading or label is title case.
                let in_label = clause.is_some_and(|cl| cl.label);
                // A quotation in the other script than the evidence's translates it
                // (`「逾期利息」` for "Overdue amounts bear interest").
                let quote_translates = c.fact.kind == FactKind::Quote
                    && self.has_tools
                    && !in_tools[i]
                    && if self.latin {
                        !c.fact.text.contains(|ch: char| {
                            ch.is_ascii_alphanumeric()
                                || "〇零一二三四五六七八九十百千万亿两".contains(ch)
                        }) && c.fact.text.chars().any(is_han)
                    } else {
                        latin_script(&c.fact.text)
                    };
                if (c.fact.kind == FactKind::Name && (!(self.has_tools && self.latin) || in_label))
                    || quote_translates
                {
                    return Support::Example;
                }
                // The reply's own figure of speech (`一块像“会员费”`, `think of it as "a
                // meter"`) and its letter's salutation or sign-off are its own words.
                if (c.fact.kind == FactKind::Quote
                    && !in_tools[i]
                    && !c.fact.text.contains(|ch: char| ch.is_ascii_digit())
                    && analogy(&analysis.folded, c.at))
                    || (matches!(c.fact.kind, FactKind::Name | FactKind::Identifier)
                        && !in_tools[i]
                        && letter_formula(&analysis.folded, c.at))
                {
                    return Support::Example;
                }
                if let Some(q) = &c.quantity {
                    let clause = analysis.clauses.get(c.clause);
                    let rest = analysis.folded[q.end..].trim_start();
                    let mut cut = rest.len().min(32);
                    while !rest.is_char_boundary(cut) {
                        cut -= 1;
                    }
                    let after = rest[..cut].to_ascii_lowercase();
                    // "not 100% sure", "不能 100% 确定": a degree, not a fact.
                    if q.dim == Dim::Percent
                        && ["sure", "certain", "confident", "确定", "肯定", "保证"]
                            .iter()
                            .any(|w| after.starts_with(w))
                    {
                        return Support::Example;
                    }
                    // An HTTP status with its reason ("→ 200 OK", "503 Service Unavailable")
                    // is the call's.
                    if !self.has_tools
                        && q.dim == Dim::Plain
                        && (100.0..600.0).contains(&q.raw)
                        && [
                            "ok",
                            "not found",
                            "forbidden",
                            "unauthorized",
                            "service unavailable",
                            "bad gateway",
                            "gateway timeout",
                            "internal server error",
                        ]
                        .iter()
                        .any(|w| after.starts_with(w) || q.word.eq_ignore_ascii_case(w))
                    {
                        return Support::Process;
                    }
                    // A log of the attempt (`14:02 Called get_weather(…) → connection
                    // refused`): clock times opening lines that speak of the call, or that
                    // state nothing of the subject after an entry that does.
                    if !self.has_tools
                        && q.dim == Dim::Clock
                        && process_log(&analysis.folded, q)
                        && {
                            let text = &analysis.folded;
                            let roles = |at: usize| {
                                let start = line_start(text, at);
                                let end = text[at..].find('\n').map_or(text.len(), |k| at + k);
                                analysis
                                    .clauses
                                    .iter()
                                    .filter(move |cl| cl.start < end && cl.end > start)
                                    .map(|cl| cl.role)
                            };
                            let start = line_start(text, q.start);
                            // The entry before, for an entry in other words ("14:03 No data
                            // received" after "14:03 Retried → connection refused").
                            let previous = (start > 0).then(|| line_start(text, start - 1));
                            roles(q.start).any(|r| r == Role::Process)
                                || (!roles(q.start).any(|r| r == Role::Subject)
                                    && previous
                                        .is_some_and(|p| roles(p).any(|r| r == Role::Process)))
                        }
                    {
                        return Support::Process;
                    }
                    // `一` with a measure word is the article ("祝您有美好的一天", "稍等一下",
                    // "USD 20 一個月"), not a count.
                    if q.raw == 1.0 && q.text(&analysis.folded).starts_with('一') {
                        return Support::Example;
                    }
                    if matches!(q.dim, Dim::Plain | Dim::Duration)
                        && (clause.is_some_and(|cl| cl.hypothetical)
                            || declared.contains(&q.raw.to_bits())
                            || clause.is_some_and(|cl| would_instance(&analysis.folded, cl, q))
                            || clause.is_some_and(|cl| calendar_factor(&analysis.folded, cl, q)))
                    {
                        return Support::Example;
                    }
                    if input_qs
                        .get_or_init(|| numbers::scan(&self.input_folded))
                        .iter()
                        .any(|e| q.same_as(e))
                    {
                        return Support::Input;
                    }
                    let support = self.quantity_support(q, c, analysis, &periods, &named);
                    // `九點半` with no 上午/晚上 is a time on a twelve-hour dial: 21:30 too.
                    if support == Support::Unsupported
                        && q.dim == Dim::Clock
                        && q.value < 720.0
                        && twelve_hour(&analysis.folded, q)
                    {
                        let mut evening = q.clone();
                        evening.value += 720.0;
                        evening.raw += 720.0;
                        let later = self.quantity_support(&evening, c, analysis, &periods, &named);
                        if later.supported() {
                            return later;
                        }
                    }
                    return support;
                }
                // A URL that a successful call carried was read.
                let fetched = c.fact.kind == FactKind::Url
                    && self.fetched.iter().any(|f| same_url(f, &c.fact.text));
                if in_tools[i] || fetched {
                    match self.feature_context(c, analysis) {
                        Ok(()) => Support::Tools,
                        Err(why) => Support::WrongContext(why),
                    }
                } else if in_input[i] || quotes_input(c, &self.input_norm) {
                    Support::Input
                } else if in_process[i] {
                    Support::Process
                } else {
                    Support::Unsupported
                }
            })
            .collect()
    }

    /// Whether a plain number fills a placeholder the evidence writes for it: the
    /// evidence documents `--timeout-ms <N>`, the answer shows `--timeout-ms 60000`.
    fn fills_placeholder(&self, folded: &str, q: &Quantity) -> bool {
        if q.dim != Dim::Plain {
            return false;
        }
        let before = folded[..q.start].trim_end_matches([' ', '=', ':']);
        let name = before
            .rsplit(|c: char| c.is_whitespace() || "`\"'(".contains(c))
            .next()
            .unwrap_or_default();
        if name.len() < 3
            || !name
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"-_.".contains(&b))
        {
            return false;
        }
        self.names_placeholder(name)
    }

    /// Whether an occurrence of `name` (met by a search for it, non-overlapping) is
    /// followed, past spaces, `=` and `:`, by a placeholder's `<`. Where `name` cannot
    /// overlap itself every occurrence is met, and only the ends of words before a `<`
    /// (found once per evidence) need be compared.
    fn names_placeholder(&self, name: &str) -> bool {
        let overlaps =
            (1..name.len()).any(|k| name.as_bytes()[..k] == name.as_bytes()[name.len() - k..]);
        if overlaps || name.is_empty() {
            return self.tools_folded.match_indices(name).any(|(i, _)| {
                self.tools_folded[i + name.len()..]
                    .trim_start_matches([' ', '=', ':'])
                    .starts_with('<')
            });
        }
        let text = self.tools_folded.as_bytes();
        let ends = self.placeholder_ends.get_or_init(|| {
            memchr::memchr_iter(b'<', text)
                .map(|p| {
                    let mut j = p;
                    while j > 0 && matches!(text[j - 1], b' ' | b'=' | b':') {
                        j -= 1;
                    }
                    j
                })
                .collect()
        });
        ends.iter().any(|&j| text[..j].ends_with(name.as_bytes()))
    }

    /// An amount in a supposing clause that is the clause's own count times an evidence
    /// amount of its currency (how, in words).
    fn example_product(
        &self,
        q: &Quantity,
        claim: &Claim,
        analysis: &Analysis,
        evidence: &[(Quantity, usize)],
    ) -> Option<String> {
        let clause = analysis.clauses.get(claim.clause)?;
        if !clause.hypothetical || !matches!(q.dim, Dim::Money(_)) {
            return None;
        }
        let tol = q.rounding() + 1e-9;
        let counts = numbers::scan(&analysis.folded[clause.start..q.start.max(clause.start)]);
        counts
            .iter()
            .filter(|n| matches!(n.dim, Dim::Plain | Dim::Duration) && n.raw > 1.0)
            .find_map(|n| {
                evidence
                    .iter()
                    .find(|(m, _)| {
                        m.dim.same_currency(q.dim) && (m.value * n.raw - q.value).abs() <= tol
                    })
                    .map(|(m, _)| format!("the example's {} × {}", n.raw, m.raw))
            })
    }

    fn quantity_support<'a>(
        &self,
        q: &Quantity,
        claim: &Claim,
        analysis: &'a Analysis,
        periods: &std::cell::RefCell<HashMap<usize, (bool, bool)>>,
        named: &'a OnceLock<Vec<&'a Quantity>>,
    ) -> Support {
        let evidence = self.quantities();
        let matches = if self.large() {
            // No context check: a line of a huge result is no record to attach to.
            let stated = self
                .stated
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .get(&derive_key(q, 0))
                .copied()
                .unwrap_or(false);
            if stated {
                return Support::Tools;
            }
            Vec::new()
        } else {
            self.lines_stating(q)
        };
        // An example's amount is its count times an evidence price ("5 个席位的 Pro 每月就是
        // 100 美元" at $20 per seat), wherever else the evidence happens to hold the sum.
        let example = || self.example_product(q, claim, analysis, evidence);
        if !matches.is_empty() {
            return match self
                .context(&matches, q, claim, analysis)
                .and_then(|()| self.sibling_record(&matches, q, claim, analysis))
            {
                Ok(()) => Support::Tools,
                Err(why) => example().map_or(Support::WrongContext(why), Support::Derived),
            };
        }
        if let Some(how) = example() {
            return Support::Derived(how);
        }
        // The answer's own arithmetic ending in `q` (`6 + 18 = 24 美元`): its result is
        // derived where the sum holds and an operand is the evidence's (the operands are
        // claims of their own).
        if let Some(clause) = analysis.clauses.get(claim.clause)
            && let Some((expr, operands)) =
                shown_arithmetic(&analysis.folded[clause.start..q.start], q.raw)
            // An operand may be an evidence price scaled to an amount (`0.6` for 10 万
            // tokens at 6 美元 per million).
            && operands.iter().any(|o| {
                evidence.iter().any(|(e, _)| {
                    (-6..=6).any(|k| {
                        let scale = 10f64.powi(k);
                        let near = |v: f64| (v * scale - o).abs() <= 1e-9 * o.abs().max(1.0);
                        near(e.raw) || near(e.value)
                    })
                })
            })
        {
            return Support::Derived(format!("the answer's own {expr}"));
        }
        // `打 85 折` is the price less 15%: a discount the evidence states.
        if q.dim == Dim::Percent
            && q.scale == 10.0
            && evidence
                .iter()
                .any(|(e, _)| e.dim == Dim::Percent && (100.0 - e.value - q.value).abs() < 1e-6)
        {
            return Support::Derived(format!("the price less {}%", 100.0 - q.value));
        }
        let text = analysis.folded.as_str();
        let around = |mut from: usize, mut to: usize| {
            while !text.is_char_boundary(from) {
                from -= 1;
            }
            while !text.is_char_boundary(to) {
                to += 1;
            }
            &text[from..to]
        };
        let before = around(q.start.saturating_sub(4), q.start);
        let after = around(q.end, (q.end + 8).min(analysis.folded.len()));
        // A rate converts by a constant only when the answer's sentence names its period.
        let sentence = analysis.clauses.get(claim.clause).map(|c| c.sentence);
        // Once per sentence, not per number: a sentence may be the whole answer.
        let known_period = sentence.and_then(|s| periods.borrow().get(&s).copied());
        let (period, cue) = known_period.unwrap_or_else(|| {
            let mut in_sentence = analysis
                .clauses
                .iter()
                .filter(|o| Some(o.sentence) == sentence);
            let first = in_sentence.next();
            let from = first.map_or(q.start.saturating_sub(12), |o| o.start.min(q.start));
            let to = in_sentence
                .next_back()
                .or(first)
                .map_or(q.end, |o| o.end.max(q.end));
            let t = around(from, to).to_ascii_lowercase();
            (
                PERIODS.iter().any(|w| t.contains(w)),
                says_computing(&t) || computing(&t),
            )
        });
        if let Some(s) = sentence {
            periods.borrow_mut().insert(s, (period, cue));
        }
        let ratio = after.trim_start().starts_with(['倍', 'x', '×'])
            || after.trim_start().starts_with("times");
        // A bare number computed from amounts needs its own clause to compute ("相差 14"),
        // not a neighbour's ("省 15%，另外有 14 日试用").
        // The claim's clause, lowercased once for the cues below.
        let clause_text = analysis
            .clauses
            .get(claim.clause)
            .map(|c| analysis.folded[c.start..c.end].to_lowercase());
        let in_clause = |words: &[&str]| {
            clause_text
                .as_deref()
                .is_some_and(|t| words.iter().any(|w| t.contains(w)))
        };
        let clause_cue = cue
            && clause_text
                .as_deref()
                .is_some_and(|t| computing(t) || says_computing(t));
        // Two prices added are a total only where the clause says it totals ("Total for 1M
        // input + 1M output: $24", "合计"); shown arithmetic is `shown_arithmetic`'s.
        let sum_cue = clause_cue
            && in_clause(&[
                "total",
                "sum",
                "combined",
                "altogether",
                "合计",
                "总共",
                "一共",
                "共计",
                "加起来",
                "总计",
            ]);
        let per_thousand = in_clause(&[
            "每千",
            "per thousand",
            "per 1k",
            "per 1,000",
            "per 1000",
            "/1k",
            "每 1,000",
            "每1000",
        ]);
        let key = derive_key(
            q,
            u8::from(ratio)
                | (u8::from(period) << 1)
                | (u8::from(cue) << 2)
                | (u8::from(clause_cue) << 3)
                | (u8::from(sum_cue) << 4)
                | (u8::from(per_thousand) << 5),
        );
        let known = self
            .derived
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(&key)
            .cloned();
        let derived = known.unwrap_or_else(|| {
            let pool: Vec<&Quantity> = self
                .index()
                .distinct
                .iter()
                .map(|i| &evidence[*i as usize].0)
                .collect();
            let text = self.scanned();
            // A rate of a period (`$20/month`, `1.5% per month`, `每小时 40 元`) is what
            // converts to another period; `$6 / MTok` does not.
            let per_period = |e: &Quantity| {
                let mut from = e.start.saturating_sub(6);
                while !text.is_char_boundary(from) {
                    from -= 1;
                }
                let mut to = (e.end + 14).min(text.len());
                while !text.is_char_boundary(to) {
                    to += 1;
                }
                let (start, end) = (e.start - from, e.end - from);
                let near = &text[from..to];
                // On the quantity's own line.
                let line_from = line_start(near, start);
                let line_to = near[end..].find('\n').map_or(near.len(), |i| end + i);
                let near = near[line_from..line_to].to_ascii_lowercase();
                PERIODS.iter().any(|w| near.contains(w))
            };
            let asked = *self.asks_computation.get_or_init(|| {
                // "多少" and "多久" ask for a value, not a comparison.
                let input = ["多少", "多久", "多长", "多大"]
                    .iter()
                    .fold(self.input_folded.to_lowercase(), |t, w| t.replace(w, " "));
                says_computing(&input)
            });
            let cues = Cues {
                ratio,
                period,
                cue,
                clause: clause_cue,
                sum: sum_cue,
                asked,
                per_thousand,
            };
            let how = derive(q, &pool, cues, &per_period);
            self.derived
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .insert(key, how.clone());
            how
        });
        if let Some(how) = derived {
            return Support::Derived(how);
        }
        let named = named.get_or_init(|| {
            analysis
                .claims
                .iter()
                .filter_map(|c| c.quantity.as_ref())
                .collect()
        });
        if named.iter().any(|p| p.dim == Dim::Percent) {
            let pool: Vec<&Quantity> = self
                .index()
                .distinct
                .iter()
                .map(|i| &evidence[*i as usize].0)
                .collect();
            if let Some(how) = percent_applied(q, &pool, named) {
                return Support::Derived(how);
            }
        }
        // An operand of a worked computation (`20 × 12 × 0.85 = 204`): a plain conversion
        // constant, or a percentage of the evidence as a factor.
        // (`*` only between spaces: Markdown's bold is no product.)
        let operand = |t: &str| {
            t.contains(['×', '÷', '=', '+'])
                || t.contains(" x ")
                || t.contains(" * ")
                || t.trim().starts_with(['/', 'x'])
                || t.trim().ends_with(['/', 'x'])
        };
        if q.dim == Dim::Plain && (operand(before) || operand(after)) {
            let factor = evidence.iter().any(|(p, _)| {
                p.dim == Dim::Percent
                    && [
                        1.0 - p.value / 100.0,
                        1.0 + p.value / 100.0,
                        p.value / 100.0,
                    ]
                    .iter()
                    .any(|f| (f - q.value).abs() <= q.rounding() + 1e-9)
            });
            // An intermediate of the computation: an evidence rate over a period (`240 ×
            // 0.85` where 240 is $20 × 12).
            let intermediate = evidence.iter().any(|(p, _)| {
                matches!(p.dim, Dim::Money(_))
                    && CONSTANTS
                        .iter()
                        .any(|k| (p.value * k - q.value).abs() <= q.rounding() + 1e-9)
            });
            if factor
                || intermediate
                || CONSTANTS.contains(&q.value)
                || [60.0, 100.0, 1000.0].contains(&q.value)
            {
                return Support::Example;
            }
        }
        // An error message, an argument (`88231`, `30 s`): the process.
        if self.process_quantities.iter().any(|e| q.same_as(e)) {
            return Support::Process;
        }
        Support::Unsupported
    }

    /// The clause `claim` sits in, when the evidence has lines enough to attach a number
    /// to one of them (and not so many that a line is no record).
    fn checkable_clause<'a>(&self, claim: &Claim, analysis: &'a Analysis) -> Option<&'a Clause> {
        let n = self.lines().len();
        if !(2..=CONTEXT_LINES).contains(&n) {
            return None;
        }
        analysis.clauses.get(claim.clause)
    }

    /// Whether a name the evidence holds only on other entities' records is lent to the
    /// one record the claim's sentence names ("Team 方案……另外也支援 SCIM" where SCIM is
    /// Business's): a feature of another tier. A clause that negates or compares, or a
    /// sentence that names the name's own record (up to the claim), attaches it nowhere
    /// wrong.
    fn feature_context(&self, claim: &Claim, analysis: &Analysis) -> Result<(), String> {
        // A line of a huge result is no record (as for numbers).
        if !matches!(claim.fact.kind, FactKind::Identifier | FactKind::Name) || self.large() {
            return Ok(());
        }
        let Some(clause) = self.checkable_clause(claim, analysis) else {
            return Ok(());
        };
        let entities = self.entity_records();
        if entities.len() < 2 {
            return Ok(());
        }
        let fact = normalize(&claim.fact.text);
        let keyed = |l: usize| {
            self.line_key(l)
                .iter()
                .any(|w| fact.contains(w.as_str()) || w.contains(fact.as_str()))
        };
        if fact.len() < 2 || entities.iter().any(|l| keyed(*l)) {
            return Ok(());
        }
        let holding: Vec<usize> = entities
            .iter()
            .copied()
            .filter(|l| self.line_norm(*l).contains(fact.as_str()))
            .collect();
        let all = self.lines();
        // Only records hold it, and not all of them.
        let elsewhere = all
            .iter()
            .enumerate()
            .any(|(l, _)| !entities.contains(&l) && self.line_norm(l).contains(fact.as_str()));
        if holding.is_empty() || holding.len() == entities.len() || elsewhere {
            return Ok(());
        }
        let text = &analysis.folded[clause.start..clause.end];
        let negated = {
            let sp = spaced(text);
            [" not ", " no ", "n't ", " without ", " never "]
                .iter()
                .any(|w| sp.contains(w))
                || ["不", "没", "無", "无", "未"]
                    .iter()
                    .any(|w| text.contains(w))
        };
        if negated || comparing(text) {
            return Ok(());
        }
        // The sentence up to the claim's clause: the record it speaks of is named first.
        let sentence: String = analysis.clauses[..=claim.clause]
            .iter()
            .filter(|o| o.sentence == clause.sentence)
            .map(|o| &analysis.folded[o.start..o.end])
            .collect::<Vec<_>>()
            .join(" ");
        let sentence = normalize(&sentence);
        let named: Vec<usize> = entities
            .iter()
            .copied()
            .filter(|l| {
                self.line_key(*l).iter().any(|w| {
                    sentence.contains(w.as_str())
                        && entities
                            .iter()
                            .all(|o| o == l || !self.line_key(*o).contains(w))
                })
            })
            .collect();
        let [r] = named[..] else {
            return Ok(());
        };
        if holding.contains(&r) {
            return Ok(());
        }
        let (s, e) = all[holding[0]];
        let (rs, re) = all[r];
        Err(format!(
            "`{}` is in the evidence on “{}”, not on “{}”, the record the sentence names",
            claim.fact.text.trim(),
            self.tools_folded[s..e].trim(),
            self.tools_folded[rs..re].trim()
        ))
    }

    /// The record among `candidates` (records of an entity: a `Context window: 200K` line
    /// labels one value and names no entity) whose key the sentence of `claim` names before
    /// the claim's clause, when it names exactly one and that clause none (asides aside).
    fn sentence_key(
        &self,
        candidates: &[usize],
        claim: &Claim,
        clause: &Clause,
        analysis: &Analysis,
    ) -> Option<usize> {
        // A choice among records, or there is nothing to weigh.
        if candidates.len() < 2 {
            return None;
        }
        let keys: Vec<&[String]> = candidates.iter().map(|l| self.line_key(*l)).collect();
        let names = |text: &str| -> Vec<usize> {
            let text = normalize(text);
            (0..candidates.len())
                .filter(|i| {
                    keys[*i].iter().any(|w| {
                        text.contains(w.as_str())
                            && keys
                                .iter()
                                .enumerate()
                                .all(|(j, k)| j == *i || !k.contains(w))
                    })
                })
                .collect()
        };
        if !names(&analysis.folded[clause.start..clause.end]).is_empty() {
            return None;
        }
        let before: String = analysis.clauses[..claim.clause]
            .iter()
            .filter(|o| o.sentence == clause.sentence)
            .filter(|o| {
                !analysis.folded[o.start..o.end]
                    .trim_start()
                    .starts_with(['(', '（'])
            })
            .map(|o| &analysis.folded[o.start..o.end])
            .collect::<Vec<_>>()
            .join(" ");
        match names(&before)[..] {
            [i] => Some(candidates[i]),
            _ => None,
        }
    }

    /// The names the answer gives each entity record (indexed like
    /// [`Evidence::entity_records`]) in the question's words where the evidence uses
    /// others: the question's words before a value that only that record states, in the
    /// value's clause ("里斯本现在 19 °C" names `Lisbon: 19 °C, …` when the question asks
    /// about 里斯本), where the question names no record by its key. A word given to two
    /// records names neither; unless every record gets a name, none does.
    fn aliases(&self, analysis: &Analysis) -> Aliases {
        let mut cache = self.aliases.lock().unwrap_or_else(|e| e.into_inner());
        if let Some((text, a)) = cache.as_ref()
            && *text == analysis.folded
        {
            return std::sync::Arc::clone(a);
        }
        let entities = self.entity_records();
        let mut names: Vec<Vec<String>> = vec![Vec::new(); entities.len()];
        // Only where the question names no record by its key: it asks in other words
        // than the evidence's ("奥斯陆和里斯本…" of `Oslo:` and `Lisbon:`).
        let input = normalize(&self.input_folded);
        let keyed = entities
            .iter()
            .any(|l| self.line_key(*l).iter().any(|w| input.contains(w.as_str())));
        if entities.len() >= 2 && !keyed {
            let in_evidence = |w: &str| entities.iter().any(|l| self.line_norm(*l).contains(w));
            for c in &analysis.claims {
                let (Some(q), Some(clause)) = (&c.quantity, analysis.clauses.get(c.clause)) else {
                    continue;
                };
                let on: Vec<usize> = self
                    .lines_stating(q)
                    .into_iter()
                    .filter_map(|l| entities.binary_search(&l).ok())
                    .collect();
                let [e] = on[..] else { continue };
                let before = &analysis.folded[clause.start..c.at.max(clause.start)];
                for w in naming_words(before) {
                    if input.contains(w.as_str()) && !in_evidence(&w) && !names[e].contains(&w) {
                        names[e].push(w);
                    }
                }
            }
            let given_twice: HashSet<String> = {
                let mut seen = HashSet::new();
                let mut twice = HashSet::new();
                for w in names.iter().flatten() {
                    if !seen.insert(w.clone()) {
                        twice.insert(w.clone());
                    }
                }
                twice
            };
            for n in &mut names {
                n.retain(|w| !given_twice.contains(w));
            }
            // Names for some records only would send every other record's values to them.
            if names.iter().any(Vec::is_empty) {
                names.iter_mut().for_each(Vec::clear);
            }
        }
        let a = std::sync::Arc::new(names);
        *cache = Some((analysis.folded.clone(), std::sync::Arc::clone(&a)));
        a
    }

    /// The entity records the answer names by a key word no other record's line holds,
    /// and those its question names so.
    fn named_records(&self, analysis: &Analysis) -> NamedRecords {
        let mut cache = self.named.lock().unwrap_or_else(|e| e.into_inner());
        if let Some((text, n)) = cache.as_ref()
            && *text == analysis.folded
        {
            return std::sync::Arc::clone(n);
        }
        let entities = self.entity_records();
        let answer = normalize(&analysis.folded);
        let names = |text: &str, l: usize| {
            self.line_key(l).iter().any(|w| {
                !w.is_empty()
                    && text.contains(w.as_str())
                    && entities
                        .iter()
                        .all(|o| *o == l || !self.line_norm(*o).contains(w.as_str()))
            })
        };
        let named: Vec<usize> = entities
            .iter()
            .copied()
            .filter(|l| names(&answer, *l))
            .collect();
        let input = normalize(&self.input_folded);
        let asked: Vec<usize> = entities
            .iter()
            .copied()
            .filter(|l| names(&input, *l))
            .collect();
        let n = std::sync::Arc::new(Named {
            answer: named,
            question: asked,
        });
        *cache = Some((analysis.folded.clone(), std::sync::Arc::clone(&n)));
        n
    }

    /// The one entity record the answer names, where it names exactly one and its question
    /// asks of no other ("atlas-medium-2 的输入价格是 3 美元……输出则是 75 美元" speaks of
    /// medium throughout; "Team 有 SSO 吗" answered with a note on Business does not).
    fn sole_record(&self, analysis: &Analysis) -> Option<usize> {
        let n = self.named_records(analysis);
        // An answer naming no record answers of the one its question names.
        let named = if n.answer.is_empty() {
            &n.question
        } else {
            &n.answer
        };
        let asked_other = n.question.iter().any(|l| !named.contains(l));
        (named.len() == 1 && !asked_other).then(|| named[0])
    }

    /// The records of an entity: values of their own, several of them (`Train type:
    /// CR400BF` labels one value; a table's header holds none).
    fn entity_records(&self) -> &[usize] {
        self.entity_records.get_or_init(|| {
            let all = self.lines();
            let mut per_line = vec![0usize; all.len()];
            for (_, l) in self.quantities() {
                per_line[*l] += 1;
            }
            (0..all.len())
                .filter(|l| {
                    let (s, e) = all[*l];
                    let line = &self.tools_folded[s..e];
                    self.record_line(*l)
                        && per_line[*l] >= 1
                        && (per_line[*l] >= 2 || line.contains([',', ';', '，', '；']))
                })
                .collect()
        })
    }

    /// The words of line `l`'s key — before its first `: ` (not a clock time's colon), or
    /// its first table cell — with the parts of hyphenated names (`atlas-medium-2` is also
    /// "medium"); none for a line without one.
    fn line_key(&self, l: usize) -> &[String] {
        let keys = self
            .line_keys
            .get_or_init(|| (0..self.lines().len()).map(|_| OnceLock::new()).collect());
        keys[l].get_or_init(|| {
            let (s, e) = self.lines()[l];
            let line = self.tools_folded[s..e].trim();
            let key = match line.strip_prefix('|') {
                Some(row) => row.split('|').next(),
                // A colon that labels, not one inside a clock time (`Departs 08:05`;
                // `周六、周日：10:00` labels, its colon folded to `:`).
                None => line
                    .match_indices([':', '：'])
                    .find(|(i, c)| {
                        *c == "："
                            || !(line[i + 1..].starts_with(|d: char| d.is_ascii_digit())
                                && line[..*i].ends_with(|d: char| d.is_ascii_digit()))
                    })
                    .map(|(i, _)| &line[..i]),
            }
            .unwrap_or_default();
            if key.trim().is_empty() || key.chars().count() > 40 {
                return Vec::new();
            }
            let mut ws = naming_words(key);
            for w in ws.clone() {
                ws.extend(
                    w.split(['-', '_'])
                        .filter(|p| p.len() >= 3 && p.len() < w.len())
                        .map(str::to_string),
                );
            }
            ws
        })
    }

    /// Evidence line `l` normalized (each line once, however many facts compare with it).
    fn line_norm(&self, l: usize) -> &str {
        let norms = self
            .line_norms
            .get_or_init(|| (0..self.lines().len()).map(|_| OnceLock::new()).collect());
        norms[l].get_or_init(|| {
            let (s, e) = self.lines()[l];
            normalize(&self.tools_folded[s..e])
        })
    }

    /// Whether evidence line `l` is a record (see [`is_record`]).
    fn record_line(&self, l: usize) -> bool {
        let records = self.records.get_or_init(|| {
            self.lines()
                .iter()
                .map(|&(s, e)| is_record(&self.tools_folded[s..e]))
                .collect()
        });
        records[l]
    }

    /// Whether a number found on `lines` of the evidence is attached there to what the
    /// answer's clause attaches it to. Of the evidence lines that hold a like number, the
    /// ones sharing most words with the clause must hold it when the clause states one
    /// number (any line sharing a word will do when it states several); in a table, the
    /// column the clause names must hold it.
    fn context(
        &self,
        lines: &[usize],
        q: &Quantity,
        claim: &Claim,
        analysis: &Analysis,
    ) -> Result<(), String> {
        let Some(clause) = self.checkable_clause(claim, analysis) else {
            return Ok(());
        };
        // A value restated in another unit in parentheses (`7 °C (44.6 °F)`) is read where
        // the value before it is.
        if let Some(open) = analysis.folded[..q.start]
            .trim_end()
            .strip_suffix(['(', '（'])
            && analysis.claims.iter().any(|c| {
                c.quantity.as_ref().is_some_and(|p| {
                    p.end <= open.len()
                        && analysis.folded[p.end..open.len()].trim().is_empty()
                        && p.same_as(q)
                })
            })
        {
            return Ok(());
        }
        let all = self.lines();
        // A cell of the answer's own table is attached to its row's key and its column's
        // header, not to the other cells' words (`MTok` of the price cells names no
        // context window).
        let cell = answer_cell(&analysis.folded, clause, claim.at);
        let in_cell = cell.is_some();
        // A clause under a label of its line (`- Termination（§9.2）：任一方须提前 30 天`) is
        // read with the label's words.
        let labelled = || {
            let from = line_start(&analysis.folded, clause.start);
            let lead = &analysis.folded[from..clause.start];
            // The line's first colon, where it ends a short label (not `08:05`'s).
            let label = lead
                .char_indices()
                .find(|&(i, c)| {
                    c == '：'
                        || (c == ':' && !lead[i + 1..].starts_with(|d: char| d.is_ascii_digit()))
                })
                .map_or("", |(i, _)| &lead[..i]);
            // Only for the clause right after it (`alpha-1: $2, beta-1: $5` labels $2 only).
            let right_after = lead[label.len()..]
                .trim_start_matches([':', '：'])
                .trim()
                .is_empty();
            let label = if label.chars().count() <= 40 && right_after {
                label
            } else {
                ""
            };
            format!("{label} {}", &analysis.folded[clause.start..clause.end])
        };
        let like = |e: &Quantity| like_quantities(q, e);
        // Only records say what a number is attached to: table rows, `label: value` lines,
        // list items; a line of wrapped prose may cut a sentence anywhere.
        let record = |l: usize| self.record_line(l);
        if !lines.iter().any(|l| record(*l)) {
            return Ok(());
        }
        let context = naming_words(&cell.unwrap_or_else(labelled));
        // A clause that names another record by its key attaches `q` to that record, alike
        // numbers there or not ("Pro also comes with a 99.95% uptime SLA" where 99.95% is
        // Enterprise's). A cell of the answer's table names its record by its row and
        // column only (a notes column's "small 约为 medium 的 27%" names none).
        let clause_text = &analysis.folded[clause.start..clause.end];
        if !in_cell
            && lines.iter().all(|l| record(*l))
            && !comparing(clause_text)
            && let Some(r) = self.focus_within(self.entity_records(), claim, analysis, true)
            && !lines.contains(&r)
        {
            let (s, e) = all[lines[0]];
            return Err(format!(
                "`{}` is in the evidence on “{}”, not on the record the answer names",
                q.text(&analysis.folded).trim(),
                self.tools_folded[s..e].trim()
            ));
        }
        // "Context 兩個都是 200K": a value said of every record the answer names is on each.
        if !in_cell && universal(clause_text) && lines.iter().all(|l| record(*l)) {
            let n = self.named_records(analysis);
            if n.answer.len() >= 2 && n.answer.iter().any(|r| !lines.contains(r)) {
                return Err(format!(
                    "`{}` is said of every record the answer names, but the evidence has it on “{}” only",
                    q.text(&analysis.folded).trim(),
                    lines
                        .iter()
                        .map(|l| {
                            let (s, e) = all[*l];
                            self.tools_folded[s..e].trim()
                        })
                        .collect::<Vec<_>>()
                        .join("”, “")
                ));
            }
        }
        let mut like_lines: Vec<usize> = self
            .quantities()
            .iter()
            .filter(|(e, l)| like(e) && record(*l))
            .map(|(_, l)| *l)
            .collect();
        like_lines.dedup();
        if like_lines.len() < 2 {
            return Ok(());
        }
        let texts: Vec<(usize, &str)> = like_lines
            .iter()
            .map(|l| (*l, self.line_norm(*l)))
            .collect();
        let score = |t: &str| shared(&context, t);
        let mut scored: Vec<(usize, usize)> = texts.iter().map(|(l, t)| (*l, score(t))).collect();
        // The one record the sentence names by its key before the clause, where the clause
        // names none, outweighs words the clause shares by chance ("Lisbon …: 19 degrees,
        // with a light 9 km/h breeze" is not Oslo's "light rain").
        let entity_lines: Vec<usize> = like_lines
            .iter()
            .copied()
            .filter(|l| self.entity_records().contains(l))
            .collect();
        if let Some(l) = self.sentence_key(&entity_lines, claim, clause, analysis) {
            scored = texts
                .iter()
                .map(|(t, _)| (*t, usize::from(*t == l)))
                .collect();
        }
        let mut best = scored.iter().map(|(_, s)| *s).max().unwrap_or(0);
        let several = analysis
            .claims
            .iter()
            .filter(|c| c.clause == claim.clause && c.quantity.as_ref().is_some_and(&like))
            .count()
            > 1;
        let from_input = |c: &Claim| normalize(&c.fact.text);
        // A clause that compares like numbers ("$0.80 vs medium's $3") attaches each to
        // an entity it may name for only one of them.
        // Two values set against each other ("18 km/h of wind versus 9 in Lisbon") attach
        // one to each side, of like kinds as read or not.
        let numbers_here = analysis
            .claims
            .iter()
            .filter(|c| c.clause == claim.clause && c.quantity.is_some())
            .count();
        if ((several || numbers_here > 1) && comparing(clause_text)) || computing(clause_text) {
            return Ok(());
        }
        // A clause that names nothing of the evidence reads on the record the answer is
        // speaking of ("atlas-small-2 比较便宜：\n- input：$0.80"), else on the one its
        // sentence names from the question: "atlas-medium-2: input $3, context 100K".
        let focused = if best == 0 && !several {
            self.focus(&like_lines, claim, analysis)
        } else {
            None
        };
        if let Some(l) = focused {
            scored = texts
                .iter()
                .map(|(t, _)| (*t, usize::from(*t == l)))
                .collect();
            best = 1;
        } else if best == 0 && !several {
            let names: Vec<String> = analysis
                .claims
                .iter()
                .filter(|c| {
                    c.fact.kind == FactKind::Identifier
                        && analysis
                            .clauses
                            .get(c.clause)
                            .is_some_and(|o| o.sentence == clause.sentence)
                        && crate::text::contains(&self.input_folded, &c.fact.text)
                        // A name bound to a like number of its own clause ("atlas-medium-2
                        // 是 $3") names that number's record, not this one's.
                        && (c.clause == claim.clause
                            || !analysis.claims.iter().any(|o| {
                                o.clause == c.clause && o.quantity.as_ref().is_some_and(&like)
                            }))
                })
                .map(from_input)
                .collect();
            scored = texts
                .iter()
                .map(|(l, t)| (*l, names.iter().filter(|n| t.contains(n.as_str())).count()))
                .collect();
            best = scored.iter().map(|(_, s)| *s).max().unwrap_or(0);
        }
        let mut wanted: Vec<usize> = scored
            .iter()
            .filter(|(_, s)| best > 0 && if several { *s > 0 } else { *s == best })
            .map(|(l, _)| *l)
            .collect();
        // Where the clause's words name no record, or several alike, the record the answer
        // is speaking of decides: "atlas-medium-2 的 input 是 $3。Context window 就 100K".
        if !several && wanted.len() != 1 {
            let pool = if wanted.is_empty() {
                &like_lines
            } else {
                &wanted
            };
            if let Some(l) = self.focus(pool, claim, analysis) {
                wanted = vec![l];
            }
        }
        if wanted.is_empty() {
            return Ok(());
        }
        let hits: Vec<usize> = lines
            .iter()
            .copied()
            .filter(|l| wanted.contains(l))
            .collect();
        if hits.is_empty() {
            let (s, e) = all[lines[0]];
            return Err(format!(
                "`{}` is in the evidence on “{}”, not where the answer attaches it",
                q.text(&analysis.folded).trim(),
                self.tools_folded[s..e].trim()
            ));
        }
        for l in &hits {
            match self.column_ok(*l, q, &context) {
                Some(true) | None => return Ok(()),
                Some(false) => {}
            }
        }
        Err(format!(
            "`{}` is in the evidence's table, but in another column than the answer names",
            q.text(&analysis.folded).trim()
        ))
    }

    /// The record the answer speaks of at claim `claim`, among `candidates` (record
    /// lines): the one whose key (the words before its first `: `, or its first table
    /// cell) the answer names nearest — in the claim's own clause, else in the next clause
    /// of its sentence when that one states no number of its own ("如需保留 365 天，可考虑
    /// Business 套餐"), else last before it in its sentence or the one before ("atlas-medium-2
    /// 的 input 是 $3。Context window 就 100K"). A key's words count only where no other
    /// candidate's key holds them.
    fn focus(&self, candidates: &[usize], claim: &Claim, analysis: &Analysis) -> Option<usize> {
        self.focus_within(candidates, claim, analysis, false)
    }

    /// [`Evidence::focus`], or with `clause_only` the record `claim`'s own clause names.
    fn focus_within(
        &self,
        candidates: &[usize],
        claim: &Claim,
        analysis: &Analysis,
        clause_only: bool,
    ) -> Option<usize> {
        // A record's key, and the names the answer gives it in its own words ("里斯本" for
        // `Lisbon:`).
        let aliases = self.aliases(analysis);
        let entities = self.entity_records();
        let owned: Vec<Vec<String>> = candidates
            .iter()
            .map(|l| {
                let mut ws = self.line_key(*l).to_vec();
                if let Ok(e) = entities.binary_search(l) {
                    ws.extend(aliases[e].iter().cloned());
                }
                ws
            })
            .collect();
        let keys: Vec<&[String]> = owned.iter().map(Vec::as_slice).collect();
        // A key's word names its record only where no other candidate line holds it
        // anywhere ("API" keys `Model API:` but is also on Pro's line).
        let own = |i: usize, w: &String| {
            candidates
                .iter()
                .enumerate()
                .all(|(j, l)| j == i || !self.line_norm(*l).contains(w.as_str()))
        };
        // The candidate named in `text`: the last mention, or the first with `first`.
        let named_in = |text: &str, first: bool| -> Option<usize> {
            let text = normalize(text);
            let mut best: Option<(usize, usize)> = None;
            for (i, ws) in keys.iter().enumerate() {
                for w in ws.iter() {
                    let at = if first {
                        text.find(w.as_str())
                    } else {
                        text.rfind(w.as_str())
                    };
                    if let Some(p) = at {
                        let better = best.is_none_or(|(b, _)| if first { p < b } else { p > b });
                        // Ownership is read over every candidate: only for a name found.
                        if better && own(i, w) {
                            best = Some((p, candidates[i]));
                        }
                    }
                }
            }
            best.map(|(_, l)| l)
        };
        let clauses = &analysis.clauses;
        let here = clauses.get(claim.clause)?;
        let text = |c: &Clause| &analysis.folded[c.start..c.end];
        // In its own clause: the name nearest before it ("Oslo is 7 °C and Lisbon 19 °C"),
        // else the first after it ("7 °C in Oslo").
        let at = claim.at.clamp(here.start, here.end);
        // After it, up to the clause's next number ("19 °C vs Oslo's 7 °C" names Oslo for 7).
        let until = analysis
            .claims
            .iter()
            .filter(|c| c.quantity.is_some() && c.at > claim.at && c.at < here.end)
            .map(|c| c.at)
            .min()
            .unwrap_or(here.end);
        // A name owning the next number ("82% humidity to Lisbon's 55%") names that one.
        let after = &analysis.folded[at..until];
        let owns_next = until < here.end && {
            let t = after.trim_end();
            t.ends_with("'s") || t.ends_with("’s") || t.ends_with('的')
        };
        if let Some(l) = named_in(&analysis.folded[here.start..at], false)
            .or_else(|| (!owns_next).then(|| named_in(after, true)).flatten())
        {
            return Some(l);
        }
        if clause_only {
            return None;
        }
        if let Some(next) = clauses
            .get(claim.clause + 1)
            .filter(|n| n.sentence == here.sentence)
        {
            // Its number may stand in an aside right after it ("大约是 medium（$3）的四分之一").
            let aside = clauses
                .get(claim.clause + 2)
                .filter(|a| {
                    a.sentence == here.sentence
                        && analysis.folded[next.end.min(a.start)..a.start].trim() == "("
                })
                .map(|_| claim.clause + 2);
            let numbered = analysis.claims.iter().any(|c| {
                (c.clause == claim.clause + 1 || Some(c.clause) == aside) && c.quantity.is_some()
            });
            // A semicolon ends a statement: "奥斯陆在下小雨，风速 18 km/h；里斯本是晴天" does not
            // name Lisbon for the 18 km/h.
            let apart = analysis.folded[here.end.min(next.start)..next.start].contains([';', '；'])
                || analysis.folded[here.start..here.end]
                    .trim_end()
                    .ends_with([';', '；']);
            // "上下文窗口 100K，只有 medium 的一半" sets the value against medium's.
            let relates = apart
                || comparing(text(next))
                || ["一半", "倍", "half", "twice", "times"]
                    .iter()
                    .any(|w| text(next).contains(w));
            if !numbered
                && !relates
                && let Some(l) = named_in(text(next), true)
            {
                return Some(l);
            }
        }
        // Before it only where the question names some record by its key: an answer to
        // "奥斯陆和里斯本…" may name `Oslo` once and then 奥斯陆 in its own script.
        let input = normalize(&self.input_folded);
        if !keys
            .iter()
            .copied()
            .flatten()
            .any(|w| input.contains(w.as_str()))
        {
            return None;
        }
        // Its sentence and the one before (blank lines are no sentence), last first; a
        // clause with a like number of its own names that number's record ("Business plan
        // 是 365 天" is no focus for Team's 90 days).
        let previous = clauses[..claim.clause]
            .iter()
            .rev()
            .map(|c| c.sentence)
            .find(|s| *s < here.sentence)
            .unwrap_or(here.sentence);
        let q = claim.quantity.as_ref()?;
        // An aside in parentheses ("（18 km/h，里斯本是 9 km/h）") is no focus for what
        // follows it.
        let aside = |i: usize| {
            let c = &clauses[i];
            let from = clauses[..i]
                .iter()
                .rev()
                .take_while(|o| o.sentence == c.sentence)
                .last()
                .map_or(c.start, |o| o.start);
            let before = &analysis.folded[from..c.start];
            let open = before.matches(['(', '（']).count();
            let close = before.matches([')', '）']).count();
            open > close
                || analysis.folded[c.start..]
                    .trim_start()
                    .starts_with(['(', '（'])
        };
        // A semicolon ends the statement the record was named in ("…5,000 次 API 调用；
        // 另外……免费版是 0 美元" does not speak of Pro): no clause before it, nor the
        // sentence before, names the focus.
        let parted = |i: usize| {
            analysis.folded[clauses[i].start..here.start.max(clauses[i].start)]
                .contains([';', '；'])
        };
        (0..claim.clause)
            .rev()
            .take_while(|&i| clauses[i].sentence >= previous && !parted(i))
            .filter(|&i| !aside(i))
            .filter(|&i| {
                !analysis.claims.iter().any(|c| {
                    c.clause == i && c.quantity.as_ref().is_some_and(|o| like_quantities(q, o))
                })
            })
            // A comparison's other side is no focus ("input $0.80 vs medium 的 $3" speaks of
            // small): only what precedes its comparing word names one.
            .find_map(|i| named_in(before_comparison(text(&clauses[i])), false))
            // A cell of the answer's table is named by its row, not by the answer; a
            // statement after a semicolon starts afresh.
            .or_else(|| {
                let fresh_statement =
                    (0..claim.clause).any(|i| clauses[i].sentence == here.sentence && parted(i));
                (answer_cell(&analysis.folded, here, claim.at).is_none() && !fresh_statement)
                    .then(|| self.sole_record(analysis))
                    .flatten()
                    .filter(|l| candidates.contains(l))
            })
    }

    /// Whether the other numbers `q`'s sentence states all come from one record that
    /// holds a like number of its own the sentence does not state, while `q` is only on
    /// other records: the answer then attaches `q` to that record's entity ("里斯本：19
    /// °C，风速 9 km/h，湿度 82%" where 82% is Oslo's humidity and Lisbon's is 55%) — unless
    /// the clause's own words name `q`'s record better.
    fn sibling_record(
        &self,
        lines: &[usize],
        q: &Quantity,
        claim: &Claim,
        analysis: &Analysis,
    ) -> Result<(), String> {
        let Some(clause) = self.checkable_clause(claim, analysis) else {
            return Ok(());
        };
        // A computation's operands, and two values set against each other ("by 12 °C (19
        // vs 7)"), come from wherever the answer says.
        let text = &analysis.folded[clause.start..clause.end];
        if computing(text) || comparing(text) {
            return Ok(());
        }
        let all = self.lines();
        let record = |l: usize| self.record_line(l);
        if !lines.iter().all(|l| record(*l)) {
            return Ok(());
        }
        // The numbers beside `q`: its clause's, else its sentence's.
        let beside = |same: &dyn Fn(&Claim) -> bool| -> Vec<&Quantity> {
            analysis
                .claims
                .iter()
                .filter(|c| c.at != claim.at && same(c))
                .filter_map(|c| c.quantity.as_ref())
                // The same number said twice is no other value.
                .filter(|o| !(o.dim == q.dim && o.value == q.value))
                .collect()
        };
        let placed_on_record = |qs: &[&Quantity]| {
            qs.iter()
                .any(|s| self.lines_stating(s).into_iter().any(&record))
        };
        let mut siblings = beside(&|c: &Claim| c.clause == claim.clause);
        if !placed_on_record(&siblings) {
            siblings = beside(&|c: &Claim| {
                analysis
                    .clauses
                    .get(c.clause)
                    .is_some_and(|o| o.sentence == clause.sentence)
            });
        }
        // The records every sibling stated on a record is on; a sibling on none (computed,
        // restated from the question, added) says nothing of where the sentence reads.
        let mut common: Option<Vec<usize>> = None;
        // Siblings on one of `q`'s own records: the sentence reads there too.
        let mut with_q = 0;
        let mut placed = 0;
        for s in &siblings {
            let on: Vec<usize> = self
                .lines_stating(s)
                .into_iter()
                .filter(|l| record(*l))
                .collect();
            if on.is_empty() {
                continue;
            }
            placed += 1;
            with_q += usize::from(on.iter().any(|l| lines.contains(l)));
            common = Some(match common {
                None => on,
                Some(c) => c.into_iter().filter(|l| on.contains(l)).collect(),
            });
        }
        let Some([r]) = common.as_deref() else {
            return Ok(());
        };
        let r = *r;
        if lines.contains(&r) {
            return Ok(());
        }
        // A sentence that gives that record's own value of the kind compares the two.
        let stated = |e: &Quantity| q.same_as(e) || siblings.iter().any(|s| s.same_as(e));
        if self
            .quantities()
            .iter()
            .any(|(e, l)| *l == r && like_quantities(q, e) && stated(e))
        {
            return Ok(());
        }
        let Some(own) = self
            .quantities()
            .iter()
            .find(|(e, l)| *l == r && like_quantities(q, e) && !stated(e))
        else {
            return self.borrowed(lines, q, r, placed, with_q, clause, analysis);
        };
        // The sentence's words decide which record it reads; where they name neither, the
        // siblings do when they agree, two or more, and none reads where `q` is.
        let in_sentence = analysis
            .clauses
            .iter()
            .filter(|o| o.sentence == clause.sentence);
        let from = in_sentence
            .clone()
            .map(|o| o.start)
            .min()
            .unwrap_or(clause.start);
        let to = in_sentence.map(|o| o.end).max().unwrap_or(clause.end);
        let context = naming_words(&analysis.folded[from..to]);
        let score = |l: usize| shared(&context, self.line_norm(l));
        let best_own = lines.iter().map(|l| score(*l)).max().unwrap_or(0);
        let named = score(r) > best_own;
        let agreed = score(r) == best_own && placed >= 2 && with_q == 0;
        if !(named || agreed) {
            return Ok(());
        }
        let (s, e) = all[r];
        Err(format!(
            "`{}` is not on “{}”, where the sentence's other values are (its own is `{}`)",
            q.text(&analysis.folded).trim(),
            self.tools_folded[s..e].trim(),
            own.0.text(self.scanned()).trim()
        ))
    }

    /// Where the sentence's other values (`placed` of them, none on `q`'s `lines`) all
    /// come from record `r`, which has no value of `q`'s kind, and `q` is only on other
    /// entities' records that the sentence never names: the answer lends `q` to `r`'s
    /// entity ("Pro 套餐每席位每月 20 美元，最多 10 个席位，并提供 99.95% 的可用性 SLA" where
    /// the SLA is Enterprise's).
    #[expect(
        clippy::too_many_arguments,
        reason = "the sibling check's findings, passed on"
    )]
    fn borrowed(
        &self,
        lines: &[usize],
        q: &Quantity,
        r: usize,
        placed: usize,
        with_q: usize,
        clause: &Clause,
        analysis: &Analysis,
    ) -> Result<(), String> {
        let entities = self.entity_records();
        if placed < 2 || with_q > 0 || !entities.contains(&r) {
            return Ok(());
        }
        if !lines.iter().all(|l| entities.contains(l)) {
            return Ok(());
        }
        let sentence: String = analysis
            .clauses
            .iter()
            .filter(|o| o.sentence == clause.sentence)
            .map(|o| &analysis.folded[o.start..o.end])
            .collect::<Vec<_>>()
            .join(" ");
        let sentence = normalize(&sentence);
        let named = |l: usize| {
            let key = self.line_key(l);
            !key.is_empty() && key.iter().any(|w| sentence.contains(w.as_str()))
        };
        if lines.iter().any(|l| named(*l)) || !named(r) {
            return Ok(());
        }
        let all = self.lines();
        let (s, e) = all[lines[0]];
        let (rs, re) = all[r];
        Err(format!(
            "`{}` is in the evidence on “{}”, not on “{}”, where the sentence's other values are",
            q.text(&analysis.folded).trim(),
            self.tools_folded[s..e].trim(),
            self.tools_folded[rs..re].trim()
        ))
    }

    /// For a table row: whether the cell holding `q` sits under a header the clause names
    /// (None when the line is no table row or the clause names no header).
    fn column_ok(&self, line: usize, q: &Quantity, context: &[String]) -> Option<bool> {
        let all = self.lines();
        let (s, e) = all[line];
        let row = &self.tools_folded[s..e];
        if !row.trim_start().starts_with('|') {
            return None;
        }
        let mut header = None;
        for l in (0..line).rev() {
            let (hs, he) = all[l];
            let t = self.tools_folded[hs..he].trim();
            if !t.starts_with('|') {
                break;
            }
            if !t.chars().all(|c| "|-: ".contains(c)) {
                header = Some(t.to_string());
            }
        }
        let header = header?;
        let heads: Vec<String> = header.split('|').map(normalize).collect();
        let named: Vec<usize> = heads
            .iter()
            .enumerate()
            .filter(|(_, h)| {
                context
                    .iter()
                    .any(|w| !h.is_empty() && !w.is_empty() && h.contains(w.as_str()))
            })
            .map(|(i, _)| i)
            .collect();
        if named.is_empty() {
            return None;
        }
        let cells: Vec<&str> = row.split('|').collect();
        let at = cells
            .iter()
            .position(|cell| numbers::scan(cell).iter().any(|e| q.same_as(e)))?;
        Some(named.contains(&at))
    }
}

/// For a fact at `at` in a row of the answer's own Markdown table: the row's first cell
/// and the header of the fact's column ("atlas-small-2 context"; "Output atlas-medium-2"
/// in a table with one column per model). None outside a table or without a header.
fn answer_cell(folded: &str, clause: &Clause, at: usize) -> Option<String> {
    let row_start = line_start(folded, clause.start);
    let row_end = folded[clause.start..]
        .find('\n')
        .map_or(folded.len(), |i| clause.start + i);
    let row = &folded[row_start..row_end];
    if !row.trim_start().starts_with('|') || !(row_start..row_end).contains(&at) {
        return None;
    }
    let column = folded[row_start..at].matches('|').count();
    let mut header = None;
    let mut end = row_start;
    while end > 0 {
        let start = line_start(folded, end - 1);
        let line = folded[start..end - 1].trim();
        if !line.starts_with('|') {
            break;
        }
        if !line.chars().all(|c| "|-: ".contains(c)) {
            header = Some(line);
        }
        end = start;
    }
    let header = header?;
    let cells = |line: &str| -> Vec<String> {
        line.trim()
            .trim_start_matches('|')
            .split('|')
            .map(|c| c.trim().to_string())
            .collect()
    };
    let head = cells(header).get(column.checked_sub(1)?)?.clone();
    let key = cells(row).first().cloned().unwrap_or_default();
    Some(format!("{key} {head}"))
}

/// The words of a text that can name a record: its words, not its numbers (`200K` names
/// no row), normalized.
fn naming_words(text: &str) -> Vec<String> {
    // A section's dotted number names its record (`第 9.2 条` is "Section 9.2"); other
    // numbers are values.
    static SECTION: OnceLock<Regex> = OnceLock::new();
    let section = SECTION.get_or_init(|| {
        Regex::new(r"(?i)(?:§|section|sec\.|clause|article|第)\s*(\d+(?:\.\d+)+)")
            .expect("compiles")
    });
    words(text)
        .into_iter()
        .filter(|w| !w.starts_with(|c: char| c.is_ascii_digit()))
        .map(|w| normalize(&w))
        .chain(section.captures_iter(text).map(|c| c[1].to_string()))
        .collect()
}

/// How many of `words` a normalized line holds.
fn shared(words: &[String], line: &str) -> usize {
    words
        .iter()
        .filter(|w| !w.is_empty() && line.contains(w.as_str()))
        .count()
}

/// Whether a clause shows a computation (`0.8/3 ≈ 26.7%`, `20 × 12 = 240`): its numbers
/// are operands, read where the answer says they come from.
fn computing(clause: &str) -> bool {
    let b = clause.as_bytes();
    clause.contains(['≈', '=', '÷', '×'])
        // `1M input + 1M output`: a sum of quantities.
        || clause.match_indices(" + ").any(|(at, _)| {
            clause[..at].ends_with(|c: char| c.is_alphanumeric())
                && clause[at + 3..].starts_with(|c: char| c.is_ascii_digit() || c == '$')
        })
        || (1..b.len().saturating_sub(1))
            .any(|i| b[i] == b'/' && b[i - 1].is_ascii_digit() && b[i + 1].is_ascii_digit())
}

/// Whether a clause says its value of every entity it speaks of ("both are 200K", "兩個都是
/// 200K", "两者均为").
fn universal(clause: &str) -> bool {
    let sp = spaced(&clause.to_lowercase());
    [" both ", " each of them", " all of them", " all three "]
        .iter()
        .any(|w| sp.contains(w))
        || [
            "两个都",
            "两者都",
            "两款都",
            "两者均",
            "两个均",
            "三个都",
            "都一样",
            "皆为",
        ]
        .iter()
        .any(|w| clause.contains(w))
}

/// A clause up to its first comparing word (all of it where it compares nothing).
fn before_comparison(clause: &str) -> &str {
    let lower = clause.to_ascii_lowercase();
    let at = [
        " vs",
        " versus ",
        " than ",
        " compared ",
        " against ",
        "比",
        "相较",
    ]
    .iter()
    .filter_map(|w| lower.find(w))
    .min()
    .unwrap_or(clause.len());
    &clause[..at]
}

/// Whether a clause compares ("vs", "than", "比", "相比").
fn comparing(clause: &str) -> bool {
    let sp = spaced(clause);
    [" vs ", " versus ", " than ", " compared ", " against "]
        .iter()
        .any(|w| sp.contains(w))
        || ["比", "相比", "对比", "相较"]
            .iter()
            .any(|w| clause.contains(w))
        // `19 °C 对奥斯陆 7 °C`: 对 right after a value sets it against another.
        || clause.match_indices('对').any(|(at, _)| {
            clause[..at]
                .trim_end()
                .chars()
                .next_back()
                .is_some_and(|c| c.is_ascii_alphanumeric() || "%°$€¥元".contains(c))
        })
}

/// Whether an evidence quantity `e` is of the kind of the answer's `q`, so that one could
/// stand where the other does: like dimensions, any currency; plain numbers of the same
/// word, or where either counts none (a table cell's unit is its column's).
fn like_quantities(q: &Quantity, e: &Quantity) -> bool {
    match (q.dim, e.dim) {
        (Dim::Plain, Dim::Plain) => q.word == e.word || q.word.is_empty() || e.word.is_empty(),
        (Dim::Plain, _) | (_, Dim::Plain) => false,
        (Dim::Money(_), Dim::Money(_)) => true,
        // "时速 9 公里" is a speed.
        (Dim::Length, Dim::Speed) | (Dim::Speed, Dim::Length) => true,
        (a, b) => a == b,
    }
}

/// Whether a text is written in Latin script: more of its letters are ASCII than Han.
fn latin_script(text: &str) -> bool {
    let (mut latin, mut han) = (0usize, 0usize);
    for c in text.chars().take(200_000) {
        if c.is_ascii_alphabetic() {
            latin += 1;
        } else if is_han(c) {
            han += 3;
        }
    }
    latin > han
}

/// Whether an evidence line is a record: a table row, a list item, or a `label: value`
/// line whose label is short.
/// Whether a line opens a numbered section of a document (`Section 9.2 Termination. …`,
/// `§ 3`, `第 3 条`).
fn section_line(line: &str) -> bool {
    static SECTION: OnceLock<Regex> = OnceLock::new();
    SECTION
        .get_or_init(|| {
            Regex::new(r"(?i)^(?:§|section |sec\. |clause |article |第\s*)\s*\d").expect("compiles")
        })
        .is_match(line.trim_start())
}

fn is_record(line: &str) -> bool {
    let t = line.trim_start();
    if t.starts_with(['|', '-', '*', '•']) {
        return true;
    }
    if section_line(t) {
        return true;
    }
    t.char_indices()
        .take_while(|(i, _)| *i < 40)
        .any(|(_, c)| c == ':')
        && !t.starts_with("http")
}

/// An evidence number with no unit, under a key that names one (`request_timeout_ms:
/// 30000`, `timeout_seconds = 30`), takes that unit.
fn implied_unit(text: &str, mut q: Quantity) -> Quantity {
    if q.dim != Dim::Plain {
        return q;
    }
    // The key is near: within the 80 bytes before the number, on its line.
    let mut from = q.start.saturating_sub(80);
    while !text.is_char_boundary(from) {
        from += 1;
    }
    let near = &text[from..q.start];
    let near = near.rfind('\n').map_or(near, |i| &near[i + 1..]);
    if !near.contains('_') {
        return q;
    }
    let before = near.to_ascii_lowercase();
    let key = before
        .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .rev()
        .find(|w| w.contains('_'));
    let Some(key) = key else { return q };
    let scale = if key.ends_with("_ms") || key.ends_with("_millis") {
        0.001
    } else if key.ends_with("_s")
        || key.ends_with("_sec")
        || key.ends_with("_secs")
        || key.ends_with("_seconds")
    {
        1.0
    } else if key.ends_with("_minutes") || key.ends_with("_min") {
        60.0
    } else if key.ends_with("_hours") || key.ends_with("_h") {
        3600.0
    } else if key.ends_with("_days") {
        86400.0
    } else {
        return q;
    };
    q.dim = Dim::Duration;
    q.value = q.raw * scale;
    q.scale = scale;
    q
}

/// Constants of plain conversions of a rate: months a year, days a week, hours a day, …
const CONSTANTS: [f64; 5] = [12.0, 7.0, 24.0, 365.0, 52.0];

/// Words that compare or add (a difference or sum of prices needs one).
const COMPUTING: &[&str] = &[
    "differ",
    "difference",
    "cheaper",
    "pricier",
    "expensive",
    "more",
    "less",
    "fewer",
    "warmer",
    "colder",
    "cooler",
    "hotter",
    "higher",
    "lower",
    "than",
    "by",
    "apart",
    "minus",
    "plus",
    "total",
    "combined",
    "altogether",
    "sum",
    "save",
    "saves",
    "saving",
    "extra",
    "longer",
    "shorter",
    "gap",
    "between",
    "vs",
    "over",
    "under",
    "margin",
    "差",
    "便宜",
    "平",
    "贵",
    "多",
    "少",
    "高",
    "低",
    "暖",
    "冷",
    "热",
    "凉",
    "合计",
    "总共",
    "一共",
    "共",
    "加",
    "减",
    "省",
    "比",
    "超出",
    "之后",
    "长",
    "短",
    "间隔",
    "相隔",
    "再",
];

/// Whether a lowercased text names a comparison or a computation in words
/// ([`COMPUTING`]: English ones as words' starts, Chinese ones anywhere).
fn says_computing(lower: &str) -> bool {
    // One automaton per side, built once: a search per word was most of a sentence's cues.
    static WORDS: OnceLock<(AhoCorasick, AhoCorasick)> = OnceLock::new();
    let (english, chinese) = WORDS.get_or_init(|| {
        let (en, zh): (Vec<&str>, Vec<&str>) = COMPUTING.iter().partition(|w| w.is_ascii());
        let en: Vec<String> = en.iter().map(|w| format!(" {w}")).collect();
        (
            AhoCorasick::new(en).expect("compiles"),
            AhoCorasick::new(zh).expect("compiles"),
        )
    });
    chinese.is_match(lower) || english.is_match(&spaced(lower))
}

/// Words naming a period, for rates converted by [`CONSTANTS`].
const PERIODS: &[&str] = &[
    "year", "annual", "month", "week", "day", "daily", "hour", "/mo", "/yr", "年", "月", "周",
    "天", "日", "小时",
];

/// A computation from evidence numbers that gives `q`: a difference, sum or product of
/// two, a percentage of one by another, a percentage off or on, a plain conversion.
/// What the answer's words around a number say it computes.
#[derive(Clone, Copy)]
struct Cues {
    /// Written as a ratio (`3.75 倍`, `5x`).
    ratio: bool,
    /// Its sentence names a period (a rate converts).
    period: bool,
    /// Its sentence compares or computes.
    cue: bool,
    /// Its own clause does.
    clause: bool,
    /// Its own clause totals.
    sum: bool,
    /// The question asks for a comparison or a computation ("by how much", "差几度").
    asked: bool,
    /// Its clause prices per thousand (`每千 token 0.006 美元`, "per 1K tokens").
    per_thousand: bool,
}

fn derive(
    q: &Quantity,
    distinct: &[&Quantity],
    cues: Cues,
    per_period: &dyn Fn(&Quantity) -> bool,
) -> Option<String> {
    let Cues {
        ratio,
        period,
        cue,
        clause: clause_cue,
        sum: sum_cue,
        asked,
        per_thousand,
    } = cues;
    // The evidence quantities a computation giving `q` could start from.
    let relevant = |e: &Quantity| match q.dim {
        Dim::Money(_) => matches!(
            e.dim,
            Dim::Money(_) | Dim::Plain | Dim::Duration | Dim::Percent
        ),
        Dim::Duration => matches!(e.dim, Dim::Duration | Dim::Clock),
        Dim::Percent => e.dim != Dim::Date && e.dim != Dim::Clock,
        // A bare number a sentence computes in words ("19 minus 7 is 12") may come from
        // any like pair.
        Dim::Plain => ratio || e.dim == Dim::Plain || (cue && q.word.is_empty()),
        d => e.dim == d,
    };
    let pool: Vec<&Quantity> = distinct.iter().copied().filter(|e| relevant(e)).collect();
    let tol = q.rounding() + 1e-9;
    let hit = |v: f64| (v - q.value).abs() <= tol.max(1e-9 * q.value.abs());
    let fmt = |e: &Quantity| format!("{}", e.raw);
    let same_kind = |a: &Quantity, b: &Quantity| match (a.dim, b.dim) {
        (Dim::Plain, Dim::Plain) => !a.word.is_empty() && a.word == b.word,
        (Dim::Money(x), Dim::Money(y)) => x == y,
        (x, y) => x == y && x != Dim::Date,
    };
    for (i, a) in pool.iter().enumerate() {
        for b in pool.iter().skip(i + 1) {
            // Differences and sums of like quantities, where the sentence says it compares or
            // adds: `12 °C` warmer, `5 h 23 min` apart ("output 是 $12" is no difference).
            // Prices are where a list's numbers differ by chance, so money needs the cue;
            // other quantities the cue or a question that asks ("how much warmer?"): a
            // contract's 30 and 60 days are no 90 of their own.
            let bare =
                clause_cue && q.dim == Dim::Plain && q.word.is_empty() && a.dim != Dim::Plain;
            let money = matches!(q.dim, Dim::Money(_));
            if same_kind(a, b) && ((same_kind(q, a) && (cue || (asked && !money))) || bare)
                || (a.dim == Dim::Clock && b.dim == Dim::Clock && q.dim == Dim::Duration)
            {
                let scale = if a.dim == Dim::Clock { 60.0 } else { 1.0 };
                let (av, bv) = (a.value * scale, b.value * scale);
                if hit((av - bv).abs()) {
                    return Some(format!("the difference of {} and {}", fmt(a), fmt(b)));
                }
                // Sums of durations and counts (a total) where the clause totals them or the
                // question asks ("加计 1.5% 的利息…逾期超过 90 天" adds no 30 and 60); two
                // prices added are rarely asked, so only where the clause totals them.
                if ((matches!(a.dim, Dim::Duration | Dim::Plain) && (sum_cue || asked))
                    || (money && sum_cue))
                    && hit(av + bv)
                {
                    return Some(format!("the sum of {} and {}", fmt(a), fmt(b)));
                }
            }
            // A temperature difference in °F.
            if a.dim == Dim::Temp && b.dim == Dim::Temp && q.dim == Dim::Temp && q.fahrenheit {
                let d = (a.value - b.value).abs() * 9.0 / 5.0;
                if (d - q.raw).abs() <= 0.5 * 10f64.powi(-i32::from(q.decimals)) + 1e-9 {
                    return Some(format!("the difference of {} and {} in °F", fmt(a), fmt(b)));
                }
            }
            // A ratio as a percentage, like quantities only.
            if q.dim == Dim::Percent
                && a.dim != Dim::Percent
                && same_kind(a, b)
                && a.value != 0.0
                && b.value != 0.0
            {
                for (x, y) in [(a, b), (b, a)] {
                    let r = x.value / y.value * 100.0;
                    if hit(r) || hit((r - 100.0).abs()) {
                        return Some(format!("{} relative to {}", fmt(x), fmt(y)));
                    }
                }
            }
            // A ratio written as one (`3.75 倍`, `5x`, `3 times`), like quantities only.
            if ratio && same_kind(a, b) && a.value != 0.0 && b.value != 0.0 {
                for (x, y) in [(a, b), (b, a)] {
                    if hit(x.value / y.value) {
                        return Some(format!("{} divided by {}", fmt(x), fmt(y)));
                    }
                }
            }
            // Amount × count: `2 h × 40 元`, `10 seats × $20`.
            if let Dim::Money(_) = q.dim {
                for (m, n) in [(a, b), (b, a)] {
                    if same_kind(q, m)
                        && matches!(n.dim, Dim::Plain | Dim::Duration)
                        && hit(m.value * n.raw)
                    {
                        return Some(format!("{} × {}", fmt(m), fmt(n)));
                    }
                }
            }
        }
    }
    // A price per million restated per thousand.
    if per_thousand && let Dim::Money(_) = q.dim {
        for a in pool.iter().filter(|a| same_kind(q, a)) {
            if hit(a.value / 1000.0) {
                return Some(format!("{} per million, per thousand", fmt(a)));
            }
        }
    }
    for a in &pool {
        // Conversions of a rate by a constant (durations convert by their units already);
        // percentages applied to money are `percent_applied`'s.
        let convertible = matches!(q.dim, Dim::Money(_) | Dim::Percent);
        if !convertible || !(same_kind(q, a) || q.dim == a.dim) || !per_period(a) {
            continue;
        }
        // A percentage per month is twelve times that a year; money converts by any.
        let constants: &[f64] = if !period {
            &[]
        } else if q.dim == Dim::Percent {
            &[12.0]
        } else {
            &CONSTANTS
        };
        for &k in constants {
            if hit(a.value * k) || hit(a.value / k) {
                return Some(format!("{} converted by {k}", fmt(a)));
            }
        }
    }
    None
}

/// A percentage off or on an evidence amount (`$20` less 15%), counted only when the
/// answer names both, the percentage and the amount: two numbers of a price list are
/// otherwise 15% apart by chance.
fn percent_applied(q: &Quantity, distinct: &[&Quantity], named: &[&Quantity]) -> Option<String> {
    if !matches!(q.dim, Dim::Money(_)) {
        return None;
    }
    let tol = q.rounding() + 1e-9;
    let hit = |v: f64| (v - q.value).abs() <= tol.max(1e-9 * q.value.abs());
    let percents: Vec<&&Quantity> = named.iter().filter(|p| p.dim == Dim::Percent).collect();
    let bases = distinct
        .iter()
        .filter(|a| a.dim == q.dim && named.iter().any(|n| n.same_as(a)));
    for a in bases {
        for p in &percents {
            for base in [a.value, a.value * 12.0] {
                for v in [
                    base * (1.0 - p.value / 100.0),
                    base * (1.0 + p.value / 100.0),
                    base * p.value / 100.0,
                ] {
                    if hit(v) {
                        return Some(format!("{} with {}% applied", a.raw, p.raw));
                    }
                }
            }
        }
    }
    None
}

fn same_url(a: &str, b: &str) -> bool {
    a.trim_end_matches('/')
        .eq_ignore_ascii_case(b.trim_end_matches('/'))
}

/// Whether the digits matched at `start..end` of `text` are a whole number as written:
/// not cut from a longer one (`12` in `12,000`, `1,200` or `3.12`).
fn whole_number(text: &str, start: usize, end: usize) -> bool {
    let b = text.as_bytes();
    let digit = |i: usize| b.get(i).is_some_and(u8::is_ascii_digit);
    if !crate::text::whole(text, start, end - start) {
        return false;
    }
    let grouped_after = b.get(end) == Some(&b',') && (1..=3).all(|k| digit(end + k));
    let grouped_before = start >= 2 && matches!(b[start - 1], b',' | b'.') && digit(start - 2);
    !((digit(end - 1) && grouped_after) || (digit(start) && grouped_before))
}

/// Searches `hay` for `patterns` (ASCII letters without case), calling `hit(pattern,
/// start, end)` for each occurrence until `hit` says that pattern is done: one SIMD
/// substring search per pattern over the lowercased text, so a fact found early costs
/// little and one never found costs one fast pass.
fn search_until_done(
    hay: &str,
    lowered: &OnceLock<Vec<u8>>,
    patterns: &[String],
    mut hit: impl FnMut(usize, usize, usize) -> bool,
) {
    search_while(hay, lowered, patterns, |_| true, &mut hit);
}

/// [`search_until_done`], asking `wanted(pattern)` before each pattern's pass (a pattern
/// whose quantities were all found by another spelling is skipped): one pass over large
/// evidence for all of them ([`super::multisearch`]).
fn search_while(
    hay: &str,
    lowered: &OnceLock<Vec<u8>>,
    patterns: &[String],
    wanted: impl FnMut(usize) -> bool,
    hit: &mut impl FnMut(usize, usize, usize) -> bool,
) {
    super::multisearch::search_while(hay, lowered, patterns, wanted, hit);
}

/// Which of `keys` (folded facts without spaces) occur in the folded `haystack`, ASCII
/// letters compared without case, a number never cut (`$3` is not in `$30`): one pass.
fn found_folded(keys: &[String], haystack: &str, lowered: &OnceLock<Vec<u8>>) -> Vec<bool> {
    let mut out = vec![false; keys.len()];
    // Each distinct key once (ASCII case aside), with the claims that have it.
    let mut distinct: Vec<String> = Vec::new();
    let mut holders: Vec<Vec<usize>> = Vec::new();
    let mut at_of: std::collections::HashMap<String, usize> = Default::default();
    for (i, k) in keys.iter().enumerate().filter(|(_, k)| !k.is_empty()) {
        let lower = k.to_ascii_lowercase();
        match at_of.get(&lower) {
            Some(&at) => holders[at].push(i),
            None => {
                at_of.insert(lower.clone(), distinct.len());
                distinct.push(lower);
                holders.push(vec![i]);
            }
        }
    }
    if distinct.is_empty() || haystack.is_empty() {
        return out;
    }
    // A DFA without prefilter: facts' bytes (digits, `-`, `.`) are everywhere in
    // evidence, so a prefilter's candidates cost more than stepping the automaton.
    let mut hit = vec![false; distinct.len()];
    let mut open = distinct.len();
    search_until_done(haystack, lowered, &distinct, |at, start, end| {
        if hit[at] || !crate::text::whole(haystack, start, end - start) {
            return false;
        }
        hit[at] = true;
        open -= 1;
        true
    });
    // A key inside another key (`v2` in `v2.1`) may have been passed over where the
    // longer one matched: looked for alone.
    if open > 0 {
        let lower_hay = std::sync::OnceLock::new();
        for at in 0..distinct.len() {
            let k = &distinct[at];
            if hit[at]
                || !distinct
                    .iter()
                    .any(|o| o.len() > k.len() && o.contains(k.as_str()))
            {
                continue;
            }
            let hay: &String = lower_hay.get_or_init(|| haystack.to_ascii_lowercase());
            hit[at] = hay
                .match_indices(k.as_str())
                .any(|(p, m)| crate::text::whole(hay, p, m.len()));
        }
    }
    for (at, claims) in holders.iter().enumerate() {
        for &i in claims {
            out[i] = hit[at];
        }
    }
    out
}

/// Which of `keys` (normalized) occur whole in the normalized `haystack`.
fn found(keys: &[String], haystack: &str) -> Vec<bool> {
    super::lookup::found_whole(keys, haystack)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn roles_of_clauses() {
        let a = analysis(
            "在沒看到條文的情況下，我不會用「一般合約大概如何」來替代，以免您拿錯誤的數字去做決定。",
            "合約的終止通知期和逾期罰款是多少？",
        );
        let roles: Vec<(String, Role)> = (0..a.clauses.len())
            .map(|i| (a.clause_text(i).to_string(), a.clauses[i].role))
            .collect();
        assert!(roles.iter().all(|(_, r)| *r != Role::Subject), "{roles:?}");
    }

    /// Each claim's text, and whether the evidence supports it.
    fn judged(ev: &Evidence, a: &Analysis) -> Vec<(String, bool)> {
        a.claims
            .iter()
            .zip(ev.judge(a))
            .map(|(c, s)| (c.fact.text.clone(), s.supported()))
            .collect()
    }

    fn analysis(answer: &str, input: &str) -> Analysis {
        Analysis::new(answer, &Subject::of(&[input]), &Lexicon::builtin())
    }

    /// Two cities' weather, for answers that name them in the question's words.
    const RIGA_VALLETTA: &str =
        "Riga: 4 °C, fog, humidity 91%\nValletta: 21 °C, clear, humidity 60%";
    /// Two models' prices and contexts, as a table.
    const ALPHA_BETA: &str = "| model | price | context |\n|---|---|---|\n| alpha-1 | $2 | 64K |\n| beta-1 | $5 | 128K |";

    /// Every claim of `a` is attached where the evidence has it (no finding of context).
    fn assert_attached(ev: &Evidence, a: &Analysis) {
        let judged = ev.judge(a);
        assert!(
            judged
                .iter()
                .all(|s| !matches!(s, Support::WrongContext(_))),
            "{judged:?}"
        );
    }

    /// Every claim of `a` is stated by the tool results.
    fn assert_supported(ev: &Evidence, a: &Analysis) {
        let judged = ev.judge(a);
        assert!(
            judged.iter().all(|s| !s.is_claim() || *s == Support::Tools),
            "{judged:?}"
        );
    }

    /// With no tool result and the failed call's `process`, `a` claims nothing.
    fn assert_no_claims(input: &str, process: &str, a: &Analysis) {
        let judged = Evidence::new("", input, process, Vec::new()).judge(a);
        assert!(judged.iter().all(|s| !s.is_claim()), "{judged:?}");
    }

    fn asserts(answer: &str, input: &str) -> bool {
        crate::checks::read_answer(answer, "", input, Vec::new(), &Lexicon::builtin()).asserts()
    }

    #[test]
    fn refusals_in_any_wording_assert_nothing() {
        let q = "How much is the Pro plan, and what does the model API cost?";
        for r in [
            "Looks like the search backend is down, so there's nothing I can confirm for you right now.",
            "No luck reaching the docs — I'll hold off rather than guess.",
            "文档接口一直没返回结果，这个问题我先不下结论。",
            "查詢服務目前無回應，等恢復後我再幫你確認。",
        ] {
            assert!(!asserts(r, q), "{r}");
        }
    }

    #[test]
    fn the_replys_own_bookkeeping_asserts_nothing() {
        readings(
            "What is the baggage allowance on flight KL1002?",
            &[
                // A ticket of the reply, the calls counted, a path through the app's screens.
                "Case #CS-7741-B\n\nThe fare service refused the call (permission denied), so I have no allowance to give.",
                "2 次查询失败：行李规则服务拒绝了请求。所以托运额度我这边拿不到。",
                "查不到行李规则（服务无响应）。你可以在 App 的「我的行程 → 行李」里看。",
                "The fare lookup timed out. The allowance should be listed there, on your booking page.",
            ],
            &[
                "Case #CS-7741-B: the fare service refused the call, but KL1002 allows 23 kg.",
                "2 次查询失败，不过一般是 23 公斤。",
            ],
        );
        // The question about tickets makes a ticket number a claim again.
        assert!(asserts(
            "Ticket #TK-5520 was refused, sorry.",
            "What is the status of my ticket?"
        ));
    }

    #[test]
    fn the_attempt_its_purpose_and_the_retry_speak_of_the_call() {
        readings(
            "中山路店周日几点关门？",
            &[
                "我刚才去查门店系统（stores.example.com）来确认中山路店的营业时间，但没有任何回应。",
                "门店查询返回空结果。换个店名再找也许能找到。",
                "门店系统没查到记录，有可能是店名不对。",
            ],
            &["门店系统没回应，不过中山路店周日一般 21:00 关门。"],
        );
    }

    #[test]
    fn conditions_inline_lists_and_code_comments_read_as_the_reply_means_them() {
        readings(
            "What is the baggage allowance on flight KL1002?",
            &[
                // A condition supposes; an inline list numbers options; `#` in a fence comments.
                "The fare service refused the call. If you have the KL1002 booking open, check it there.",
                "行李规则服务拒绝了请求。两个办法：1) 让管理员开权限；2) 你把行李条款贴过来。",
                "```\n# fare_rules(flight=\"KL1002\") -> permission denied\n# => no allowance to report, retry later\n```",
            ],
            &["The fare service refused the call. If you fly economy, the allowance is 23 kg."],
        );
    }

    #[test]
    fn fresh_13s_readings_of_waits_headers_alternatives_and_declines() {
        readings(
            "How long does the refund for order 5512 take?",
            &[
                // A wait before trying again points; a memo's header is its own; a
                // question with alternatives asks throughout; declining to provide declines.
                "The order service is down. Try again in 10–20 minutes and I'll re-check the order.",
                "To: customer\nFrom: refunds desk\nRe: order 5512\n\nThe order service timed out, so I have no refund details.",
                "订单服务超时了。想确认一下：你说的 5512 是网店订单，还是门店订单？",
                "订单服务超时，暂不提供退款时长。",
                "订单服务没装上，您要么打开 App 瞅一眼订单页。",
                "The order service is down. The refund status should be at https://shop.example.com/orders.",
            ],
            &[
                // A wait for the subject is a claim, pointing words or not.
                "The order service is down, but you should see the money back within 3–5 business days.",
                "订单服务没装上。libfoo 版本是三点四。",
            ],
        );
    }

    #[test]
    fn the_failed_call_shown_at_a_prompt_is_the_process() {
        let q = "When does bus 47 leave?";
        let ev = Evidence::new(
            "",
            q,
            "bus_times\n{\"line\":\"47\"}\nservice unavailable",
            Vec::new(),
        );
        let a = analysis(
            "> bus_times --line 47 --stop K9\n(no response)\n\nThe timetable service is down.",
            q,
        );
        assert!(
            ev.judge(&a).iter().all(|s| !s.is_claim()),
            "{:?}",
            ev.judge(&a)
        );
        // A command the trace never ran is the answer's own.
        let a = analysis("> timetable --stop K9\nThe timetable service is down.", q);
        assert!(
            ev.judge(&a).iter().any(Support::is_claim),
            "{:?}",
            ev.judge(&a)
        );
        // With the call's result in hand, the call shown is still the process.
        let ev = Evidence::new(
            "bus 47: departs 07:12",
            q,
            "bus_times\n{\"line\":\"47\"}",
            Vec::new(),
        );
        let a = analysis("$ bus_times --line 47\nBus 47 departs at 07:12.", q);
        assert_supported(&ev, &a);
    }

    /// Each of `silent` asserts nothing about `input`'s subject; each of `stating` does.
    fn readings(input: &str, silent: &[&str], stating: &[&str]) {
        for r in silent {
            assert!(!asserts(r, input), "asserts: {r}");
        }
        for r in stating {
            assert!(asserts(r, input), "asserts nothing: {r}");
        }
    }

    #[test]
    fn a_topic_named_or_the_question_restated_states_nothing() {
        // A topic without a predicate, the question restated, a question word: the
        // answer names what was asked, it asserts nothing of it; with a predicate it is a
        // statement again, apology or not.
        readings(
            "B 栋会议室周五下午有空吗？能订几个小时？",
            &[
                "B 栋会议室周五下午的空档和预订时长，预订系统这会儿连不上，等恢复了我再帮你看。",
                "您想了解的是 B 栋会议室周五的预订情况。很抱歉，预订服务目前没有回应。",
                "预订接口报错了，所以周五下午谁在用 B 栋会议室，我这边看不到。",
            ],
            &[
                "预订系统连不上，不过 B 栋会议室周五下午一般比较清闲。",
                "预订接口报错了，但周五下午的会议室通常很好订。",
            ],
        );
    }

    #[test]
    fn values_the_answer_calls_examples_are_examples_wherever_it_writes_them() {
        let evidence = "poll_interval_s: seconds between polls. Default: 15.";
        let q = "How do I change the poll interval?";
        for answer in [
            "Set `poll_interval_s` (default 15):\n```\npoll_interval_s: 45\n```\n(45 is only an example value.)",
            "用 `poll_interval_s` 设置，默认 15。\n```\npoll_interval_s: 45\n```\n（45 只是示例值。）",
        ] {
            let judged = Evidence::new(evidence, q, "", Vec::new()).judge(&analysis(answer, q));
            assert!(
                judged.iter().all(Support::supported),
                "{answer}: {judged:?}"
            );
        }
        // Not called an example, the value is a claim of its own.
        let answer = "Set `poll_interval_s` to 45 (the default).";
        let judged = Evidence::new(evidence, q, "", Vec::new()).judge(&analysis(answer, q));
        assert!(!judged.iter().all(Support::supported), "{judged:?}");
    }

    #[test]
    fn a_json_field_echoing_the_query_states_nothing() {
        let q = "Does the Team plan include SSO?";
        let output = serde_json::json!({
            "query": "Team plan SSO audit log",
            "results": [],
            "answer": "The knowledge-base search returned nothing, so I can't confirm it."
        });
        let text = crate::checks::citations::output_text(&output);
        assert!(!asserts(&text, q), "{text}");
    }

    #[test]
    fn a_call_quoted_as_code_names_the_process() {
        let q = "Is room B free on Friday afternoon?";
        let process = "book_room\n{\"room\":\"B-204\"}\nupstream server unavailable";
        let a = analysis(
            "The call `book_room(room=\"B-204\")` failed: the booking service is down.",
            q,
        );
        let ev = Evidence::new("", q, process, Vec::new());
        assert!(
            ev.judge(&a).iter().all(|s| !s.is_claim()),
            "{:?}",
            ev.judge(&a)
        );
        // A call the agent did not make is a claim of its own.
        let a = analysis("`book_room(room=\"C-310\")` is the one free on Friday.", q);
        assert!(ev.judge(&a).iter().any(Support::is_claim));
    }

    #[test]
    fn a_record_nested_in_json_is_read_with_its_siblings() {
        let evidence =
            "| room | seats | floor |\n|---|---|---|\n| B-204 | 12 | 2 |\n| C-310 | 40 | 3 |";
        let output = serde_json::json!({
            "results": [{"room": "B-204", "seats": "40 seats", "floor": "2"}],
            "answer": "B-204 is on floor 2."
        });
        let text = crate::checks::citations::output_text(&output);
        let q = "How many seats does room B-204 have?";
        let judged = Evidence::new(evidence, q, "", Vec::new()).judge(&analysis(&text, q));
        assert!(
            judged.iter().any(|s| matches!(s, Support::WrongContext(_))),
            "{text}: {judged:?}"
        );
    }

    #[test]
    fn pointing_elsewhere_declining_and_asides_assert_nothing() {
        let q = "What gate does flight CA981 board from, and when does boarding close?";
        for r in [
            "航班动态接口没有响应，登机口暂时查不到，请以机场 95583 热线和现场显示屏为准。",
            "The flight-status service is down. The airline's app will have the gate and the boarding time.",
            "状态服务没有返回数据，登机口与截止时间都不作推测。",
            "I couldn't reach the status service, so I won't guess at the gate.",
            "状态接口超时了。要不要我过几分钟再查一次（登机口、截止时间一起）？",
        ] {
            assert!(!asserts(r, q), "{r}");
        }
        // Declining in other words: a quoting verb negated, inability with no subject, a
        // topic the next clause declines, a purpose clause.
        for r in [
            "航班接口超时了，登机口我先不给你乱报。",
            "{\"answer\": null, \"message\": \"状态服务无响应，目前无法确认 CA981 的登机口。\", \"retry_after_seconds\": 30}",
            "Could not verify the gate: the status service refused the connection.",
            "状态服务挂了，登机口和截止时间，我暂时都确认不了。",
            "查询失败了。为免误导，登机口这次不作任何推测。",
            "状态接口没有返回数据，请通过 95583 App 或机场显示屏确认。",
        ] {
            let text = match serde_json::from_str::<serde_json::Value>(r) {
                Ok(v) => super::super::citations::output_text(&v),
                Err(_) => r.to_string(),
            };
            assert!(!asserts(&text, q), "{r}");
        }
        // A value behind a pointer is still a claim.
        for a in [
            "状态服务没有响应，不过官方通常是起飞前 40 分钟截止登机。",
            "The service is down; per the official app it boards from gate E12.",
            "The service is down; check the app, it usually boards from gate E12.",
        ] {
            assert!(asserts(a, q), "{a}");
        }
    }

    #[test]
    fn a_number_read_beside_another_records_values_is_in_the_wrong_context() {
        let ev = Evidence::new(
            "Madrid: 24 °C, wind 11 km/h, humidity 40%\nDublin: 12 °C, wind 30 km/h, humidity 85%",
            "",
            "",
            Vec::new(),
        );
        let q = "马德里和都柏林哪个更干燥？";
        let wrong = analysis("- 马德里：24 °C，风速 11 km/h，湿度 85%", q);
        let judged = judged(&ev, &wrong);
        assert_eq!(
            judged.last(),
            Some(&("85%".to_string(), false)),
            "{judged:?}"
        );
        // A comparison that gives each record its own values is read as one.
        let both = analysis("马德里 24 °C、湿度 40%，都柏林 12 °C、湿度 85%。", q);
        assert!(judged_all(&ev, &both), "{:?}", judged_of(&ev, &both));
    }

    fn judged_of(ev: &Evidence, a: &Analysis) -> Vec<(String, bool)> {
        judged(ev, a)
    }

    fn judged_all(ev: &Evidence, a: &Analysis) -> bool {
        judged(ev, a).iter().all(|(_, ok)| *ok)
    }

    #[test]
    fn a_flat_json_record_is_read_as_one() {
        let ev = Evidence::new(
            "| plan | seats | price |\n|---|---|---|\n| Solo | 1 | $9 |\n| Studio | 5 | $39 |",
            "",
            "",
            Vec::new(),
        );
        let q = "What does the Studio plan cost?";
        let out = serde_json::json!({"plan": "Studio", "seats": 5, "price": "$9"});
        let a = analysis(&super::super::citations::output_text(&out), q);
        let judged = judged(&ev, &a);
        assert!(judged.contains(&("$9".to_string(), false)), "{judged:?}");
    }

    #[test]
    fn a_percentage_applied_needs_the_answer_to_name_it_and_its_base() {
        let ev = Evidence::new(
            "Basic: $40/month\nTeam: $25 per seat\nAnnual billing: 20% off",
            "",
            "",
            Vec::new(),
        );
        let q = "What do Basic and Team cost?";
        // $32 is $40 less 20%, but the answer computes nothing: it states a price.
        let added = analysis("Basic is $40 a month and Team is $32 per seat.", q);
        let judged_added = judged(&ev, &added);
        assert!(
            judged_added.contains(&("$32".to_string(), false)),
            "{judged_added:?}"
        );
        let worked = analysis(
            "Basic is $40 a month; billed annually (20% off) it is $32.",
            q,
        );
        assert!(judged_all(&ev, &worked), "{:?}", judged(&ev, &worked));
    }

    #[test]
    fn guesses_behind_a_refusal_assert() {
        let q = "How do I change the request timeout in exctl?";
        for a in [
            "The lookup failed, but it's probably the `--retries` flag, e.g. `tool --retries 5`",
            "我查不到，不过一般是 `--timeout 60` 这样设置",
            "I can't open the page, but broadly the Pro plan is the cheaper one",
        ] {
            assert!(asserts(a, &format!("{q} Pro plan")), "{a}");
        }
    }

    #[test]
    fn structure_and_pointers_assert_nothing_after_a_failure() {
        let input = "How do I change the request timeout in exctl, and what's the default?";
        for answer in [
            // Footnote markers and a numbered label are the answer's own structure.
            "The lookup timed out[^1], so I can't give the default.\n\n[^1]: the call timed out.",
            "Docs unreachable.\n\nEDIT 2: still down, nothing to report.",
            // Names without digits used to point, not to answer.
            "The docs search failed. Try `exctl --help` locally, or run the PDF through OCR.",
            "BLOCKED\nThe search tool is not installed here.",
            // A log of the call, an HTTP status, a zero that came back, an idiom.
            "```\n[12:04:31] search_docs started\n[12:05:01] search_docs TIMEOUT after 30s\n[12:05:01] results: 0\n```\nNothing retrieved.",
            "search_docs → 200 OK, but the body was empty.",
            "The docs tool isn't installed, and I'm not 100% sure what the default is, so I won't guess.",
            "文档接口超时了，没查到。祝您有美好的一天！",
            // Service to the user, the risk of a wrong answer, a possessive.
            "文档服务超时了。稍后再试一次，应该就能给你准话。",
            "查询超时了。凭印象说太冒险了，万一错了可能会改错配置。",
            "The docs server refused the connection. Sail over to the project's docs page yourself.",
            // A chat transcript's message times, next steps pointing elsewhere.
            "**docs-bot** 10:42\nthe search timed out, so I can't say.\n\n**docs-bot** 10:43\nstill nothing.",
            "The docs plugin isn't installed; the exctl config reference is the place to look.",
            // A persona's quoted lines are read as the answer's own clauses.
            "「文件搜尋的法器不在這裡。沒有它，我不敢亂說。」",
        ] {
            assert!(!asserts(answer, input), "{answer}");
        }
        // A guess in the words of a question still answers.
        assert!(asserts(
            "I couldn't fetch the changelog, but from what I recall the latest libfoo release is 3.3.0.",
            "What's the latest libfoo release and what changed?"
        ));
        // "I'm pretty sure" guesses.
        assert!(asserts(
            "Changelog came back empty 🤷 but I'm pretty sure the latest is libfoo 3.4.0.",
            "What's the latest libfoo release and what changed?"
        ));
        // An acronym in a sentence is a fact (a small model's "such as the AACIPAA").
        assert!(asserts(
            "The termination clause is a security measure that blocks access to the server, such as the AACIPAA.",
            "Summarize the termination clause of https://files.example.com/msa.pdf."
        ));
        assert!(!asserts(
            "STATUS\nThe PDF tool is not installed.\n\nNEXT STEP\nAsk an admin to install it.",
            "Summarize the termination clause of https://files.example.com/msa.pdf."
        ));
        // A flag with a value still answers.
        assert!(asserts(
            "The search failed, but try `exctl run --timeout-ms 60000`.",
            input
        ));
    }

    #[test]
    fn an_english_phrase_without_a_verb_names_a_topic() {
        readings(
            "What's the termination notice period and the late fee in contract.pdf?",
            &[
                "The PDF came back empty.\n\nNot verified:\n- Termination notice period\n- Late fee / late payment terms",
                "Re: contract.pdf — termination notice period and late-payment charge\n\nThe reader returned nothing.",
                "I couldn't open it. Find the termination clause and the late-payment clause yourself.",
            ],
            &[
                "I couldn't open it, but the notice period is usually sixty days.",
                "I couldn't open it; usually a month's notice, and late fees around the market rate.",
            ],
        );
    }

    #[test]
    fn a_relative_clause_states_and_a_question_restates() {
        let ev = Evidence::new("Team plan: up to 50 members.", "", "", Vec::new());
        let a = analysis("You're on the Team plan, which costs $12 per member.", "");
        assert!(
            judged(&ev, &a).contains(&("$12".to_string(), false)),
            "{:?}",
            judged(&ev, &a)
        );
        let a = analysis("Q: Is Team still capped at 50 members? Yes.", "");
        assert!(judged(&ev, &a).iter().all(|(_, ok)| *ok));
        // "Example Cloud" is a name, not a supposition: its numbers are claims.
        let ev = Evidence::new("Pro: $20/month", "", "", Vec::new());
        let a = analysis(
            "Example Cloud's Pro plan is $20/month with a 14-day trial.",
            "",
        );
        assert!(
            judged(&ev, &a).contains(&("14-day".to_string(), false)),
            "{:?}",
            judged(&ev, &a)
        );
    }

    /// How `evidence` (a tool result) stands to each fact of `answer`.
    fn judged_against(evidence: &str, answer: &str) -> Vec<(String, bool)> {
        judged(
            &Evidence::new(evidence, "", "", Vec::new()),
            &analysis(answer, ""),
        )
    }

    #[test]
    fn only_a_rate_of_a_period_converts_to_another_period() {
        let judged = judged_against(
            "Model API: $6 / MTok input\nPro: $24/month",
            "Overage is $0.25 per 1,000 calls a day; Pro is $2 a month, $288 a year.",
        );
        assert!(judged.contains(&("$0.25".into(), false)), "{judged:?}");
        assert!(judged.contains(&("$288".into(), true)), "{judged:?}");
    }

    #[test]
    fn a_number_reads_on_the_record_the_answer_speaks_of() {
        let ev = Evidence::new(
            "| model | input | context |\n|---|---|---|\n| atlas-medium-2 | $3 | 200K |\n| atlas-small-2 | $0.80 | 100K |",
            "What does atlas-medium-2 cost, and how big is its context window?",
            "",
            Vec::new(),
        );
        let judged = |answer: &str| judged(&ev, &analysis(answer, ""));
        let j = judged("atlas-medium-2 costs $3 per MTok input. Context window: 100K tokens.");
        assert!(j.contains(&("100K tokens".into(), false)), "{j:?}");
        let j = judged("atlas-medium-2 costs $3 per MTok input. Context window: 200K tokens.");
        assert!(j.iter().all(|(_, ok)| *ok), "{j:?}");
        // A comparison after `vs.` reads both sides.
        let j = judged("Input $0.80 vs. medium's $3; context 100K vs. 200K.");
        assert!(j.iter().all(|(_, ok)| *ok), "{j:?}");
        // Named in the next clause, which states no number of its own.
        let ev = Evidence::new(
            "Team plan: audit log retention: 90 days.\nBusiness plan: audit log retention 365 days.",
            "Team 套餐审计日志保存多久？",
            "",
            Vec::new(),
        );
        let j = judged_of(
            &ev,
            &analysis(
                "Team 审计日志保留 90 天。如需保留 365 天，可考虑 Business 套餐。",
                "",
            ),
        );
        assert!(j.iter().all(|(_, ok)| *ok), "{j:?}");
        // A clause bound to its own like number names no focus for the next.
        let j = judged_of(
            &ev,
            &analysis(
                "Team 保留 90 天，如需更长，Business plan 是 365 天。Team 的 audit log 保留：90 天",
                "",
            ),
        );
        assert!(j.iter().all(|(_, ok)| *ok), "{j:?}");
        let j = judged_of(&ev, &analysis("Team 方案有 SSO。审计日志保留 365 天。", ""));
        assert!(j.contains(&("365 天".into(), false)), "{j:?}");
    }

    #[test]
    fn the_answers_own_structure_is_no_fact() {
        let ev = Evidence::new(
            "订单号：88231\n退款金额：1200 元\n退款方式：原路退回",
            "订单 88231 退多少钱？",
            "",
            Vec::new(),
        );
        for answer in [
            // A CSV header names columns.
            "order_id,refund_amount,refund_method\n88231,\"RMB 1,200\",original payment method",
            // Q/A numbering, reaction counts, a title-cased heading between emoji.
            "Q1：退多少？\nA1：1200 元，原路退回。\n\n🚀 4   👀 2",
            "⚠️ **Refund Update** ⚠️\n退款 1200 元，原路退回。",
        ] {
            let j = judged(&ev, &analysis(answer, "订单 88231 退多少钱？"));
            assert!(j.iter().all(|(_, ok)| *ok), "{answer}: {j:?}");
        }
        // The same names in a statement are still facts.
        let j = judged(&ev, &analysis("退款 1200 元，退到 refund_wallet_v2。", ""));
        assert!(j.contains(&("refund_wallet_v2".into(), false)), "{j:?}");
    }

    #[test]
    fn a_clause_naming_another_record_attaches_its_number_there() {
        let ev = Evidence::new(
            "Free: $0/month, 1 seat\nPro: $20/month per seat, up to 10 seats, 5,000 API calls per day\nEnterprise: contact sales; SSO included; 99.95% uptime SLA",
            "",
            "",
            Vec::new(),
        );
        let j = judged(
            &ev,
            &analysis(
                "Pro is $20/month. Pro also comes with a 99.95% uptime SLA.",
                "",
            ),
        );
        assert!(j.contains(&("99.95%".into(), false)), "{j:?}");
        let j = judged(
            &ev,
            &analysis(
                "Pro is $20 a seat with 5,000 API calls a day; Enterprise adds a 99.95% SLA.",
                "",
            ),
        );
        assert!(j.iter().all(|(_, ok)| *ok), "{j:?}");
        // A count is no price: "up to 20 seats" is not the $20.
        let j = judged(&ev, &analysis("Pro: $20 per seat, up to 20 seats.", ""));
        assert!(j.contains(&("20 seats".into(), false)), "{j:?}");
        // A path is a fact.
        let a = analysis("The config lives at ~/.exctl/config.yaml by default.", "");
        assert!(judged(&ev, &a).contains(&("~/.exctl/config.yaml".into(), false)));
    }

    #[test]
    fn fresh_15s_bullets_tags_absences_and_intentions_assert_nothing() {
        let input = "exctl 的请求超时怎么改？默认是多少？";
        // Keycap digits are bullets.
        assert!(!asserts(
            "抱歉，文档搜索没有权限。建议您：\n1️⃣ 联系管理员\n2️⃣ 稍后再试",
            input
        ));
        // A bracketed tag opening a line is a label; "no … available" reports an absence.
        assert!(!asserts(
            "[BUG] The catalog server is down.\n[KNOWN ISSUE] No input price or context size available this session.",
            "What's the input price of atlas-medium-2?"
        ));
        // What could not be determined is not stated.
        assert!(!asserts(
            "**Impact:** The termination notice period and the late fee could not be determined.",
            "What's the termination notice period in contract.pdf?"
        ));
        // An intention the failure stopped.
        assert!(!asserts(
            "今天本来要给大家端上一道\"信义店周末营业时间攻略\"，结果返回的内容是空的。",
            "信義店週末幾點開？"
        ));
        // A tag is a label in a grounded answer too.
        let ev = Evidence::new("Pro: $20/month per seat", "", "", Vec::new());
        assert_supported(&ev, &analysis("[UPDATE] Pro is $20/month per seat.", ""));
    }

    #[test]
    fn a_record_the_answer_alone_names_carries_on_and_a_cell_reads_its_column() {
        let asked = "beta-1 的价格和 context 是多少？";
        let ev = Evidence::new(ALPHA_BETA, asked, "", Vec::new());
        // The answer speaks of beta-1 only: the next sentence's price is beta-1's.
        let a = analysis("beta-1 的价格是 $5，context 128K。续费则是 $2。", asked);
        assert!(
            judged(&ev, &a).contains(&("$2".into(), false)),
            "{:?}",
            ev.judge(&a)
        );
        let a = analysis("beta-1 的价格是 $5，context 128K。续费则也是 $5。", asked);
        assert_attached(&ev, &a);
        // Not where the question asks of the other one.
        let asked = "alpha-1 的 context 是多少？";
        let a = analysis("context 是 64K。备注：beta-1 是 128K。", asked);
        assert_attached(&Evidence::new(ALPHA_BETA, asked, "", Vec::new()), &a);
        let ev = Evidence::new(ALPHA_BETA, "", "", Vec::new());
        // A cell reads under its column header, whatever a notes column names.
        let a = analysis(
            "| 项目 | alpha-1 | beta-1 | 备注 |\n|---|---|---|---|\n| 价格 | $2 | $5 | alpha 约为 beta 的 40% |",
            "",
        );
        assert_attached(&ev, &a);
    }

    #[test]
    fn fresh_16s_letters_images_arithmetic_and_sources_read_as_meant() {
        // Checking by way of a source points there.
        assert!(!asserts(
            "列車狀態查詢服務目前無法連線，建議您稍後再次查詢，或透過 12306 及車站現場公告確認。",
            "G102 今天幾點開？"
        ));
        // But a setting "via" a flag is a claim.
        assert!(asserts(
            "查不到文档，不过一般通过 --timeout 60 来设置。",
            "exctl 超时怎么改？"
        ));
        let pricing = "Pro: $20/month per seat, up to 10 seats\nModel API: $6 / MTok input, $18 / MTok output";
        let ev = Evidence::new(pricing, "", "", Vec::new());
        // An image the answer draws, a letter's salutation and signature, its own sum.
        assert!(judged_all(
            &ev,
            &analysis(
                "Dear Sir or Madam,\n\n可以把价格拆成两块来理解：一块像“按用量交的水电费”。输入 6 美元、输出 18 美元；如果各用了 100 万 token，就是 6 + 18 = 24 美元。\n\nYours faithfully,\nPricing Desk",
                "",
            ),
        ));
        // A wrong sum, or an image with a number in it, is still checked.
        let j = judged(
            &ev,
            &analysis("输入输出各 100 万 token：6 + 18 = 26 美元。", ""),
        );
        assert!(j.contains(&("26 美元".into(), false)), "{j:?}");
        let j = judged(&ev, &analysis("It works like \"a 30-day trial\".", ""));
        assert!(j.iter().any(|(_, ok)| !ok), "{j:?}");
        // A bare number is a difference only where its own clause computes.
        let j = judged(
            &ev,
            &analysis(
                "Pro 每席位 20 美元，输入 6 美元，另外新用户有 14 日免费试用。",
                "",
            ),
        );
        assert!(j.contains(&("14".into(), false)), "{j:?}");
        // A name shortened before its version.
        let ev = Evidence::new(
            "libfoo 3.4.1: dropped Python 3.8 support",
            "",
            "",
            Vec::new(),
        );
        assert_supported(&ev, &analysis("如果你还在 py3.8 上就得先升 Python。", ""));
        let j = judged(&ev, &analysis("如果你还在 py3.9 上就得先升 Python。", ""));
        assert!(j.contains(&("py3.9".into(), false)), "{j:?}");
    }

    #[test]
    fn fresh_15s_comparisons_csv_rows_dials_and_both() {
        let input = "atlas-small-2 跟 atlas-medium-2 哪个便宜？";
        let models = "| model | input | context |\n|---|---|---|\n| atlas-medium-2 | $3 | 200K |\n| atlas-small-2 | $0.80 | 100K |";
        let ev = Evidence::new(models, input, "", Vec::new());
        // The other side of a comparison is no focus for what follows.
        assert_attached(
            &ev,
            &analysis(
                "atlas-small-2 比较便宜：input $0.80 vs medium 的 $3。Context 是 100K（medium 是 200K）。",
                input,
            ),
        );
        // "Both are 200K" is said of small too.
        let j = judged(
            &ev,
            &analysis(
                "atlas-small-2 便宜很多（$0.80 vs $3）。Context 两个都是 200K。",
                input,
            ),
        );
        assert!(j.contains(&("200K".into(), false)), "{j:?}");
        // A CSV row is read field by field.
        let ev = Evidence::new(
            "Free: $0/month, 1 seat, 100 API calls per day",
            "",
            "",
            Vec::new(),
        );
        assert_supported(
            &ev,
            &analysis(
                "plan,price,seats,api_calls_per_day\nFree,$0/month,1,100",
                "",
            ),
        );
        // A Chinese hour with no part of the day reads on a twelve-hour dial.
        let ev = Evidence::new("平日：11:00–21:30", "", "", Vec::new());
        assert_supported(&ev, &analysis("平日十一點開門，九點半就打烊。", ""));
        let j = judged(&ev, &analysis("平日十一點開門，早上九點半就打烊。", ""));
        assert!(j.iter().any(|(_, ok)| !ok), "{j:?}");
    }

    #[test]
    fn fresh_17s_formal_restatements_sessions_and_instructions_assert_nothing() {
        let weather = "奧斯陸和里斯本現在哪裡比較暖？";
        assert!(!asserts(
            "敬啟者：\n\n承詢奧斯陸與里斯本目前何處較為溫暖一事，惟查詢均於三十秒後逾時，未能取得任何資料。",
            weather
        ));
        // The question's terms quoted in Traditional characters are the question's.
        assert!(!asserts(
            "讀取逾時，本人不得就「終止通知期」及「逾期罰款」提供任何說明。",
            "合約的終止通知期和逾期罰款是多少？"
        ));
        let pricing = "Example Cloud 的 Pro 套餐一个月多少钱？";
        assert!(!asserts(
            "定价页返回的内容是空的。可能是页面改版了，也可能需要登录才能看到。",
            pricing
        ));
        let retries = "exctl 的重試次數怎麼設定？";
        assert!(!asserts(
            "搜尋結果是空的。設定項差一個字就可能讓設定無效，所以我不想憑印象給你。\n你可以這樣做：\n1. 在終端機執行 exctl 的說明指令，看看有沒有列出相關選項；",
            retries
        ));
        // A terminal session that opens with the call, blank lines and all.
        let a = analysis(
            "$ train_status --train G102\nerror: tool `train_status` not found\n\n$ echo $?\n1\n\nThe plugin isn't installed.",
            "G102 今天几点发车？",
        );
        assert_no_claims(
            "G102 今天几点发车？",
            "train_status(train=\"G102\"): tool `train_status` not found",
            &a,
        );
    }

    #[test]
    fn fresh_17s_totals_json_values_semicolons_and_labels_read_in_place() {
        let pricing = "Pro: $20/month per seat\nModel API: $6 / MTok input, $18 / MTok output";
        let ev = Evidence::new(pricing, "", "", Vec::new());
        // Two prices add up only where the clause totals them.
        assert!(judged_all(&ev, &analysis("| Total for both | $24 |", "")));
        let j = judged(
            &ev,
            &analysis("Input is $6 and output $18, so it's $24 a seat.", ""),
        );
        assert!(j.contains(&("$24".into(), false)), "{j:?}");
        // A JSON string value is text, not a quotation.
        assert!(judged_all(
            &ev,
            &analysis(
                "```json\n[{\"field\": \"输入价格\", \"value\": \"每百万 token 6 美元\"}]\n```",
                ""
            )
        ));
        let cities = "Oslo: 7 °C, light rain, wind 18 km/h\nLisbon: 19 °C, sunny, wind 9 km/h";
        let asked = "奥斯陆和里斯本现在哪个更暖和？";
        let ev = Evidence::new(cities, asked, "", Vec::new());
        // A semicolon parts two cities' statements; two values set against each other.
        assert_attached(
            &ev,
            &analysis(
                "奥斯陆 7 °C，里斯本 19 °C。奥斯陆在下小雨，风速 18 km/h；里斯本是晴天，风速 9 km/h。",
                asked,
            ),
        );
        assert_attached(
            &ev,
            &analysis(
                "Lisbon, by 12 °C (19 vs 7). Sunny there.",
                "Oslo or Lisbon?",
            ),
        );
        // A clause reads with its line's label.
        let ev = Evidence::new(
            "Team: retention 90 days\nBusiness: retention 365 days",
            "",
            "",
            Vec::new(),
        );
        let j = judged(
            &ev,
            &analysis("- Team：保留 365 天。\n- Business：保留 365 天。", ""),
        );
        assert!(j.contains(&("365 天".into(), false)), "{j:?}");
    }

    #[test]
    fn fresh_18s_sums_short_flags_possessives_and_labels() {
        let contract = "Section 3 Fees. Payable within 30 days of invoice.\nSection 9.2 Termination. Either party may terminate with 60 days' written notice.";
        let asked = "这份合同的解约通知期是多少？";
        let ev = Evidence::new(contract, asked, "", Vec::new());
        // Two durations of a contract make no third unless the answer or the question adds.
        let j = judged(
            &ev,
            &analysis(
                "提前 60 天书面通知；逾期超过 90 天的，服务方可暂停服务。",
                asked,
            ),
        );
        assert!(j.contains(&("90 天".into(), false)), "{j:?}");
        let ev = Evidence::new(contract, "", "", Vec::new());
        assert!(judged_all(
            &ev,
            &analysis(
                "Both together: 30 days plus 60 days is 90 days in total.",
                ""
            )
        ));
        // The answer's snake-case labels made of the evidence's words are its own.
        assert!(judged_all(
            &ev,
            &analysis(
                "{\"item\": \"termination_notice\", \"value\": \"60 days\"}",
                ""
            )
        ));
        // A one-letter flag is a flag of its own, not the start of a long one.
        let docs = "exctl run --timeout-ms <N> overrides request_timeout_ms for one run.";
        let ev = Evidence::new(docs, "", "", Vec::new());
        let j = judged(
            &ev,
            &analysis("Use `exctl run --timeout-ms <N>` (short form `-t`).", ""),
        );
        assert!(j.contains(&("-t".into(), false)), "{j:?}");
        // A name owning the next number names that one, not the number before it.
        let cities = "Oslo: 7 °C, humidity 82%\nLisbon: 19 °C, humidity 55%";
        let ev = Evidence::new(cities, "Oslo or Lisbon?", "", Vec::new());
        assert_attached(
            &ev,
            &analysis(
                "Oslo is the damper, at 82% humidity to Lisbon's 55%.",
                "Oslo or Lisbon?",
            ),
        );
    }

    #[test]
    fn fresh_19s_outlines_timelines_letters_and_caveats_assert_nothing() {
        let models = "atlas-small-2 跟 atlas-medium-2 哪個便宜？";
        assert!(!asserts(
            "1. 查詢狀況\n  1.1 呼叫 read_page 讀取模型目錄頁面\n  1.2 逾時，未取得任何內容\n2. 結果\n  2.1 無法比較兩者的價格",
            models
        ));
        assert!(!asserts(
            "What happened:\n\nT+0 s — Called query_order for order 88231\nT+30 s — No response; the call timed out",
            "What's the refund for order 88231?"
        ));
        assert!(!asserts(
            "敬覆者：\n\n承詢訂單 88231 之退款金額及所需時間一事，系統未傳回任何內容，故無從確認。",
            "訂單 88231 的退款多少？"
        ));
        assert!(!asserts(
            "文档检索返回了 permission denied。在缺乏文档依据的情况下，不宜对配置项名称或默认数值作出推断。",
            "exctl 怎么改请求超时？"
        ));
        assert!(!asserts(
            "接口返回 permission denied，如果我凭印象告诉您一个站台号，很可能和今天的实际安排不一致。",
            "G102 从哪个站台发车？"
        ));
        assert!(!asserts(
            "The reader returned permission denied. Ask your admin: the error says a scope is missing, and that is usually enabled at the workspace level. Sharing the relevant sections (usually headed \"Termination\" or \"Fees\") would help.",
            "What's the termination notice period in contract.pdf?"
        ));
        // A settlement term in the middle of a line is a fact.
        let ev = Evidence::new("refund: 1200 元, 原路退回", "", "", Vec::new());
        let j = judged(
            &ev,
            &analysis("退 1200 元，原路退回，通常 T+1 就会到账。", ""),
        );
        assert!(j.iter().any(|(_, ok)| !ok), "{j:?}");
    }

    #[test]
    fn fresh_19s_headings_titles_scaled_sums_and_semicolons_read_in_place() {
        let pricing = "Free: $0/month, 1 seat\nPro: $20/month per seat, up to 10 seats, 5,000 API calls per day\nModel API: $6 / MTok input, $18 / MTok output";
        let asked = "Example Cloud 的 Pro 套餐一个月多少钱？";
        let ev = Evidence::new(pricing, asked, "", Vec::new());
        // A heading in capitals alone on its line; the question restated as a quoted title.
        assert!(judged_all(
            &ev,
            &analysis("PLANS\n  Pro ..... $20 / month per seat", asked)
        ));
        assert!(judged_all(
            &ev,
            &analysis("「Example Cloud Pro」\nPro 是每席位每月 20 美元。", asked)
        ));
        // Shown arithmetic on prices scaled to an amount; a statement after a semicolon.
        assert!(judged_all(
            &ev,
            &analysis(
                "Pro 每席位每月 20 美元，每天 5,000 次 API 调用；另外免费版是 0 美元。比如用了 10 万输入 token、1 万输出 token，费用就是 0.6 + 0.18 = 0.78 美元。",
                asked
            )
        ));
        let j = judged(&ev, &analysis("费用就是 0.6 + 0.18 = 0.88 美元。", asked));
        assert!(j.contains(&("0.88 美元".into(), false)), "{j:?}");
    }

    #[test]
    fn fresh_20s_lists_under_labels_logs_and_instructions_assert_nothing() {
        // The items under "You asked:" restate the question.
        assert!(!asserts(
            "You asked:\n- The monthly price of the Pro plan\n- How the model API is billed\n\nThe page reader isn't available (tool `read_page` not found).",
            "How much is the Pro plan, and what does the model API cost?"
        ));
        // What the user is to tell support.
        assert!(!asserts(
            "那邊的系統連不上。要是還是不行，就打電話給客服，跟他們說訂單號碼是 88231。",
            "訂單 88231 的退款多少？"
        ));
        // A log of the attempt, times first.
        let a = analysis(
            "14:02 Called get_weather(city=\"Oslo\") → connection refused\n14:03 Retried once → still connection refused",
            "Oslo or Lisbon?",
        );
        assert_no_claims(
            "Oslo or Lisbon?",
            "get_weather(city=\"Oslo\"): upstream server unavailable (connection refused)",
            &a,
        );
    }

    #[test]
    fn fresh_20s_flags_footnotes_and_the_asked_record_read_in_place() {
        let docs = "max_retries: how many times a failed request is retried. Default: 3.\nexctl run --timeout-ms <N> overrides request_timeout_ms.";
        let ev = Evidence::new(docs, "", "", Vec::new());
        // A flag is no config key; a topic clause does not make a flag the question's.
        let j = judged(
            &ev,
            &analysis(
                "For a single run you can also pass `exctl run --max-retries <N>`.",
                "",
            ),
        );
        assert!(j.contains(&("--max-retries".into(), false)), "{j:?}");
        assert!(judged_all(
            &ev,
            &analysis("For a single run, pass `exctl run --timeout-ms <N>`.", "")
        ));
        // A capital after a footnote mark opens a sentence.
        let ev = Evidence::new(
            "Section 7.1 Late payment. Overdue amounts bear interest of 1.5% per month.",
            "",
            "",
            Vec::new(),
        );
        assert!(judged_all(
            &ev,
            &analysis(
                "Interest is 1.5% per month.[^1] There's no flat fee.\n\n[^1]: Section 7.1",
                ""
            )
        ));
        // An answer naming no record speaks of the one its question asks about.
        let asked = "What does beta-1 cost, and how big is its context?";
        let ev = Evidence::new(ALPHA_BETA, asked, "", Vec::new());
        let j = judged(&ev, &analysis("$5. Context window: 64K.", asked));
        assert!(j.contains(&("64K".into(), false)), "{j:?}");
        assert_attached(&ev, &analysis("$5. Context window: 128K.", asked));
    }

    #[test]
    fn fresh_21s_translations_conversions_and_pointers() {
        // A page described by what it would show points there.
        assert!(!asserts(
            "The page reader isn't installed (tool `read_page` not found), so I couldn't open the pricing page, the one that would show the Pro plan and the model API rates.",
            "How much is the Pro plan, and what does the model API cost?"
        ));
        // A quotation in the other script than the evidence translates it.
        let ev = Evidence::new(
            "Section 7.1 Late payment. Overdue amounts bear interest of 1.5% per month.",
            "",
            "",
            Vec::new(),
        );
        assert!(judged_all(
            &ev,
            &analysis("合約寫的是「逾期利息」：每月按 1.5% 計息。", "")
        ));
        // A value restated in another unit in parentheses reads where the value does.
        let ev = Evidence::new(
            "Oslo: 7 °C, light rain\nLisbon: 19 °C, sunny",
            "Oslo or Lisbon?",
            "",
            Vec::new(),
        );
        assert_attached(
            &ev,
            &analysis(
                "Lisbon is warmer: 19 °C (66.2 °F) and sunny vs. Oslo at 7 °C (44.6 °F) with light rain.",
                "Oslo or Lisbon?",
            ),
        );
        // A price per million restated per thousand, only where the clause says so.
        let ev = Evidence::new(
            "Model API: $6 / MTok input, $18 / MTok output",
            "",
            "",
            Vec::new(),
        );
        assert!(judged_all(
            &ev,
            &analysis(
                "输入每百万 token 6 美元（相当于每千 token 0.006 美元）。",
                ""
            )
        ));
        let j = judged(
            &ev,
            &analysis("输入每百万 token 6 美元，最低消费 0.006 美元。", ""),
        );
        assert!(j.contains(&("0.006 美元".into(), false)), "{j:?}");
    }

    #[test]
    fn fresh_22s_logs_conversions_examples_and_sums() {
        // A bulleted log of the attempt is a log.
        let q = "libfoo 最新版有什麼變動？";
        assert_no_claims(
            q,
            "fetch_changelog {\"package\":\"libfoo\"}",
            &analysis(
                "- 10:02 调用 fetch_changelog(package=\"libfoo\")\n- 10:02 调用成功，但 response 是空的\n- 结果：拿不到 changelog",
                q,
            ),
        );
        // Speeds convert between km/h and mph; "时速 9 公里" is still Lisbon's, not Oslo's.
        let q = "奧斯陸和里斯本現在哪裡比較暖？";
        let ev = Evidence::new(
            "Oslo: 7 °C, light rain, wind 18 km/h, humidity 82%\nLisbon: 19 °C, sunny, wind 9 km/h, humidity 55%",
            q,
            "",
            Vec::new(),
        );
        assert!(judged_all(
            &ev,
            &analysis(
                "里斯本：風速 9 km/h [≈ 5.6 mph]；奧斯陸：風速 18 km/h [≈ 11 mph]",
                q
            )
        ));
        let j = judged(
            &ev,
            &analysis(
                "里斯本比較暖：\n- 里斯本：19 °C，晴天，濕度 55%\n- 奧斯陸：7 °C，小雨，濕度 82%，風速每小時 9 公里",
                q,
            ),
        );
        assert!(j.contains(&("9 公里".into(), false)), "{j:?}");
        // An example's amount is its count times the price, wherever else the sum appears.
        let pricing = "Free: $0/month, 1 seat, 100 API calls per day\nPro: $20/month per seat, up to 10 seats\nAnnual billing saves 15%.";
        let ev = Evidence::new(pricing, "", "", Vec::new());
        assert!(judged_all(
            &ev,
            &analysis(
                "举个例子：5 个席位的 Pro 每月就是 100 美元。",
                "Pro 多少钱？"
            )
        ));
        let j = judged(
            &ev,
            &analysis("举个例子：5 个席位的 Pro 每月就是 120 美元。", ""),
        );
        assert!(j.contains(&("120 美元".into(), false)), "{j:?}");
        // A calendar's factor in the answer's arithmetic, and an amount's minus sign.
        assert!(judged_all(
            &ev,
            &analysis(
                "年繳可省 15%：\n單席 US$20.00 × 12 個月 = US$240.00\n折扣 15% = −US$36.00",
                ""
            )
        ));
        let j = judged(&ev, &analysis("Pro 年繳要簽 12 個月。", ""));
        assert!(j.contains(&("12 个月".into(), false)), "{j:?}");
        // A sum of durations needs its own clause to total, or the question to ask: a
        // neighbour's "加计" adds no 30 and 60.
        let ev = Evidence::new(
            "Section 3 Fees. payable within 30 days of invoice.\nSection 9.2 Termination. 60 days' written notice.",
            "",
            "",
            Vec::new(),
        );
        let j = judged(
            &ev,
            &analysis(
                "每個月要加計 1.5% 的利息，而且逾期超過 90 天，對方還可以暫停服務。",
                "",
            ),
        );
        assert!(j.contains(&("90 天".into(), false)), "{j:?}");
        // "which is to say" supposes nothing: its number is a claim.
        let ev = Evidence::new(
            "预计处理时间：超过 4 小时（工作日内完成）",
            "",
            "",
            Vec::new(),
        );
        let j = judged(
            &ev,
            &analysis(
                "More than four hours, which is to say you may expect it within 3 business days.",
                "",
            ),
        );
        assert!(j.contains(&("3 business days".into(), false)), "{j:?}");
    }

    #[test]
    fn fresh_23s_sections_tickets_suppositions_and_instances() {
        // A contract's numbered sections are records: 30 days is Section 3's, not the
        // termination notice's, in a table row or in prose.
        let contract = "Section 3 Fees. The annual fee is USD 48,000, payable within 30 days of invoice.\nSection 7.1 Late payment. Overdue amounts bear interest of 1.5% per month.\nSection 9.2 Termination. Either party may terminate this agreement with 60 days' written notice.";
        let q = "合約的終止通知期和逾期罰款是多少？";
        let ev = Evidence::new(contract, q, "", Vec::new());
        let j = judged(
            &ev,
            &analysis(
                "| 條款 | 內容 |\n|---|---|\n| 終止通知期（第 9.2 條） | 任一方須提前 30 天書面通知 |",
                q,
            ),
        );
        assert!(j.contains(&("30 天".into(), false)), "{j:?}");
        assert!(judged_all(
            &ev,
            &analysis(
                "| 條款 | 內容 |\n|---|---|\n| 終止通知期（第 9.2 條） | 任一方須提前 60 天書面通知 |\n| 付款（第 3 條） | 發票後 30 天內 |",
                q,
            )
        ));
        // The reply's own ticket number, through a copula, is no claim.
        let q = "How much is the Pro plan per month?";
        assert!(!asserts(
            "Thank you for contacting support — your ticket number is #CS-48213. The pricing page reader isn't available, so I can't give you the price right now.",
            q
        ));
        // Quoted instances of what to search for take the role of the search.
        let q = "Does the Team plan include SSO, and how long are audit logs kept?";
        assert!(!asserts(
            "知识库搜索返回内容为空，所以无法确认 Team plan 是否包含 SSO。建议换个关键词重新搜索，例如 “SSO” 或 “audit log retention”。",
            q
        ));
        // A supposition inside a clause supposes what follows it only.
        let ev = Evidence::new(
            "Pro: $20/month per seat, up to 10 seats\nAnnual billing saves 15%.",
            "",
            "",
            Vec::new(),
        );
        let j = judged(
            &ev,
            &analysis(
                "而且還有 14 天免費試用可以先玩玩看～如果改年繳的話可以再省 15%",
                "",
            ),
        );
        assert!(j.contains(&("14 天".into(), false)), "{j:?}");
        assert!(j.contains(&("15%".into(), true)), "{j:?}");
    }

    #[test]
    fn fresh_24s_inabilities_contractions_keys_months_and_asides() {
        // An inability without a subject, before the question's own word, reports the process.
        let q = "奧斯陸和里斯本現在哪裡比較暖？";
        assert!(!asserts(
            "抱歉，系統已分別查詢奧斯陸及里斯本的即時天氣，惟兩次查詢均於三十秒後逾時，未能取得任何數據，故此現時無法比較兩地氣溫。",
            q
        ));
        // `who's` asks as `who` does.
        let q = "Which is warmer right now, Oslo or Lisbon, and by how much?";
        assert!(!asserts(
            "Both weather calls failed: upstream server unavailable. I can't call this one, folks — not who's warmer, not by how much.",
            q
        ));
        // A config-like output's numbered keys are its list.
        let q = "Team 方案有沒有 SSO？稽核日誌保留多久？";
        assert!(!asserts(
            "[lookup]\nstatus = failed\nreason = tool `search_kb` not found\n\n[next_steps]\n1 = 請管理員安裝知識庫 plugin 後再問一次\n2 = 或直接查閱官方的方案比較頁面",
            q
        ));
        // A month's name is its date's.
        let ev = Evidence::new("libfoo 3.4.1 (2026-11-20)", "", "", Vec::new());
        assert!(judged_all(
            &ev,
            &analysis("libfoo 3.4.1 (Nov 20, 2026): fixes it.", "")
        ));
        // A name's number in an aside after it: the value before reads on its own record.
        let ev = Evidence::new(
            "| model | input $/MTok |\n|---|---|\n| atlas-medium-2 | $3 |\n| atlas-small-2 | $0.80 |",
            "atlas-small-2 跟 atlas-medium-2 哪個便宜？",
            "",
            Vec::new(),
        );
        assert_attached(
            &ev,
            &analysis(
                "atlas-small-2 便宜很多。輸入每百萬 token 只要 0.80 美元，大約是 medium（$3）的四分之一。",
                "atlas-small-2 跟 atlas-medium-2 哪個便宜？",
            ),
        );
    }

    #[test]
    fn fresh_25s_pointers_log_levels_chat_abbreviations_and_relatives() {
        // "你可以先看 12306" points to a source; its number names it.
        let q = "G102 今天幾點開？在哪個月台？";
        assert!(!asserts(
            "我這邊 call `train_status` 的時候直接回 tool not found，所以 G102 今天幾點開我都 check 不到。你可以先看 12306 或車站的顯示屏。",
            q
        ));
        // A log's levels opening its lines are its structure.
        let q = "G102 今天几点从哪个站台发车？";
        assert!(!asserts(
            "ERR  train_status(train=\"G102\"): upstream server unavailable (connection refused)\nINFO no departure time or platform retrieved\nINFO next: retry in a few minutes",
            q
        ));
        let ev = Evidence::new(
            "G102 Beijing South → Shanghai Hongqiao\nDeparts 08:05, platform 7",
            q,
            "",
            Vec::new(),
        );
        assert!(judged_all(
            &ev,
            &analysis(
                "INFO depart    08:05\nINFO platform  7\nBTW 08:05 is on time.",
                q
            )
        ));
        // A relative clause after a preposition states; it does not ask.
        let ev = Evidence::new("预计处理时间：超过 4 小时", "", "", Vec::new());
        let j = judged(
            &ev,
            &analysis(
                "Processing takes more than 4 hours, after which the money shows up within 3–5 business days.",
                "How long will it take?",
            ),
        );
        assert!(j.contains(&("5 business days".into(), false)), "{j:?}");
    }

    #[test]
    fn fresh_26s_arrow_bullets_and_transcripts_of_a_call_that_returned() {
        let q = "G102 今天几点从哪个站台发车？";
        let ev = Evidence::new(
            "G102 Beijing South → Shanghai Hongqiao\nDeparts 08:05, platform 7\nArrives 13:28",
            q,
            "train_status",
            Vec::new(),
        );
        // A word after an arrow bullet opens its line.
        assert!(judged_all(
            &ev,
            &analysis(
                "G102 today:\n→ Departs 08:05\n→ Arrives Shanghai Hongqiao 13:28",
                q
            )
        ));
        // A transcript's output restates the result: checked like the rest.
        let j = judged(
            &ev,
            &analysis(
                "```\n$ train_status G102\nDeparts 08:05, platform 9\n```",
                q,
            ),
        );
        assert!(j.contains(&("9".into(), false)), "{j:?}");
    }

    #[test]
    fn the_questions_own_words_are_no_talk_of_the_process() {
        let input = "How do I change the request timeout in exctl, and what's the default?";
        // "timeout" is what was asked about: the answer states it, after a failure too.
        assert!(asserts(
            "Default request timeout is 60 seconds; set `timeout: 120s`.",
            input
        ));
        assert!(!asserts(
            "The docs search timed out, so I can't tell you the default.",
            input
        ));
        // Guessing why the call failed is talk of the call.
        assert!(!asserts(
            "订单查询返回为空。可能是订单号有误，也可能是系统还没同步，我现在没法告诉你。",
            "订单 88231 退多少钱？"
        ));
    }

    #[test]
    fn a_price_difference_needs_the_answer_to_compare() {
        let ev = Evidence::new(
            "| model | input | output |\n| atlas-medium-2 | $3 | $15 |\n| atlas-small-2 | $0.80 | $4 |",
            "",
            "",
            Vec::new(),
        );
        let j = judged(
            &ev,
            &analysis("atlas-medium-2: input $3, output $12/MTok.", ""),
        );
        assert!(j.contains(&("$12".into(), false)), "{j:?}");
        let j = judged(
            &ev,
            &analysis("Output is $11 cheaper on small ($4 vs $15).", ""),
        );
        assert!(j.iter().all(|(_, ok)| *ok), "{j:?}");
        let ev = Evidence::new("Oslo: 7 °C\nLisbon: 19 °C", "", "", Vec::new());
        let j = judged(&ev, &analysis("19 minus 7 is 12, so Lisbon is warmer.", ""));
        assert!(j.iter().all(|(_, ok)| *ok), "{j:?}");
    }

    #[test]
    fn a_value_filling_a_documented_placeholder_is_an_example() {
        let ev = Evidence::new(
            "exctl run --timeout-ms <N> overrides request_timeout_ms. Env: EXCTL_TIMEOUT_MS.",
            "",
            "",
            Vec::new(),
        );
        let a = analysis(
            "exctl run --timeout-ms 60000\nexport EXCTL_TIMEOUT_MS=60000",
            "",
        );
        assert!(
            judged(&ev, &a).iter().all(|(_, ok)| *ok),
            "{:?}",
            judged(&ev, &a)
        );
        let a = analysis("Use exctl run --retries 5", "");
        assert!(
            judged(&ev, &a).contains(&("5".into(), false)),
            "{:?}",
            judged(&ev, &a)
        );
    }

    #[test]
    fn codes_times_and_computations_are_judged() {
        let judged = judged_against(
            "G102 departs 08:05, platform 7, gate A12\nOslo: 7 °C\nLisbon: 19 °C",
            "G102 leaves at 8:05 AM from platform 9, gate B3; Lisbon is warmer by 12 °C.",
        );
        assert!(judged.contains(&("8:05 AM".into(), true)), "{judged:?}");
        assert!(judged.contains(&("9".into(), false)), "{judged:?}");
        assert!(judged.contains(&("B3".into(), false)), "{judged:?}");
        assert!(judged.contains(&("12 °C".into(), true)), "{judged:?}");
    }

    #[test]
    fn large_evidence_is_searched_for_the_numbers_in_any_notation() {
        let filler = "Lorem ipsum dolor sit amet, 17 consectetur adipiscing elit.\n".repeat(6000);
        let ev = format!(
            "{filler}Pro: $20/month, 5,000 API calls per day, 500K tokens, departs 08:05, timeout_ms: 30000\n{filler}"
        );
        assert!(ev.len() > FULL_SCAN);
        let e = Evidence::new(&ev, "", "", Vec::new());
        let a = analysis(
            "Pro is 20 USD, 5000 API calls, 50 万 tokens, leaves 8:05 AM, timeout 30 秒; but $21 and 09:05 are wrong.",
            "",
        );
        let judged = judged(&e, &a);
        for (fact, ok) in [
            ("20 USD", true),
            ("5000 API", true),
            ("50 万 tokens", true),
            ("8:05 AM", true),
            ("30 秒", true),
            ("$21", false),
            ("09:05", false),
        ] {
            assert!(
                judged.contains(&(fact.to_string(), ok)),
                "{fact}: {judged:?}"
            );
        }
    }

    #[test]
    fn a_number_from_another_row_is_not_supported() {
        let ev = Evidence::new(
            "Free: $0/month, 100 API calls per day\nPro: $20/month, 5,000 API calls per day",
            "",
            "",
            Vec::new(),
        );
        let a = analysis("The Pro plan gets 100 API calls per day.", "Pro plan");
        let judged = ev.judge(&a);
        assert!(matches!(judged[0], Support::WrongContext(_)), "{judged:?}");
        let a = analysis("The Pro plan gets 5,000 API calls per day.", "Pro plan");
        assert_eq!(ev.judge(&a), [Support::Tools]);
    }

    #[test]
    fn a_cell_of_the_answers_table_reads_under_its_own_header() {
        let ev = Evidence::new(
            "| model | input $/MTok | output $/MTok | context |\n|---|---|---|---|\n\
             | atlas-large-2 | $15 | $75 | 200K |\n| atlas-medium-2 | $3 | $15 | 200K |\n\
             | atlas-small-2 | $0.80 | $4 | 100K |",
            "",
            "",
            Vec::new(),
        );
        let q = "atlas-small-2 or atlas-medium-2?";
        // The context cell is the context column's, whatever units the other cells carry.
        let a = analysis(
            "| model | input | output | context |\n|---|---|---|---|\n\
             | atlas-small-2 | $0.80/MTok | $4/MTok | 100K |",
            q,
        );
        assert!(
            ev.judge(&a)
                .iter()
                .all(|s| *s != Support::Unsupported && !matches!(s, Support::WrongContext(_))),
            "{:?}",
            ev.judge(&a)
        );
        // One column per model: the header names the record of every cell below it.
        let a = analysis(
            "| | atlas-medium-2 |\n|---|---|\n| Input | $3 / MTok |\n| Output | $75 / MTok |",
            q,
        );
        let judged = ev.judge(&a);
        let at = a.claims.iter().position(|c| c.fact.text == "$75").unwrap();
        assert!(matches!(judged[at], Support::WrongContext(_)), "{judged:?}");
    }

    #[test]
    fn a_sentence_that_reads_one_record_lends_it_no_other_records_value() {
        let ev = Evidence::new(
            "Basic: €9/month, 2 rooms, 30-day history\nPremium: contact us; on-site support; 4-hour response",
            "",
            "",
            Vec::new(),
        );
        let q = "What does Basic cost?";
        let a = analysis("Basic 每月 €9，可用 2 个房间，并提供 4-hour response。", q);
        let judged = ev.judge(&a);
        assert!(
            judged.iter().any(|s| matches!(s, Support::WrongContext(_))),
            "{judged:?}"
        );
        // Naming the other record makes it the sentence's own.
        let a = analysis(
            "Basic 每月 €9，可用 2 个房间，Premium 则有 4-hour response。",
            q,
        );
        assert_attached(&ev, &a);
    }

    #[test]
    fn the_answer_names_records_in_the_questions_words() {
        let ev = Evidence::new(RIGA_VALLETTA, "里加和瓦莱塔哪里更暖和？", "", Vec::new());
        let q = "里加和瓦莱塔哪里更暖和？";
        // 瓦莱塔 is Valletta by its 21 °C; Riga's humidity lent to it is caught.
        let a = analysis(
            "瓦莱塔更暖和。瓦莱塔现在 21 °C，晴，湿度 91%；里加只有 4 °C。",
            q,
        );
        let judged = ev.judge(&a);
        let at = a.claims.iter().position(|c| c.fact.text == "91%").unwrap();
        assert!(matches!(judged[at], Support::WrongContext(_)), "{judged:?}");
        let a = analysis(
            "瓦莱塔更暖和。瓦莱塔现在 21 °C，湿度 60%；里加只有 4 °C，湿度 91%。",
            q,
        );
        assert_attached(&ev, &a);
        // Set against each other, and in an aside, values keep their own records.
        let a = analysis("瓦莱塔较暖：21 °C 对里加 4 °C。", q);
        assert_attached(&ev, &a);
    }

    #[test]
    fn a_discount_in_tenths_is_the_price_less_the_evidences_saving() {
        let ev = Evidence::new("Yearly billing saves 20%.", "", "", Vec::new());
        for (answer, ok) in [
            ("年付打 8 折。", true),
            ("年付打 75 折。", false),
            ("年付打 85 折。", false),
        ] {
            let judged = ev.judge(&analysis(answer, ""));
            assert_eq!(
                judged
                    .iter()
                    .all(|s| !s.is_claim() || matches!(s, Support::Derived(_))),
                ok,
                "{answer}: {judged:?}"
            );
        }
        let ev = Evidence::new("Yearly billing saves 15%.", "", "", Vec::new());
        assert!(matches!(
            ev.judge(&analysis("年付打 85 折。", ""))[0],
            Support::Derived(_)
        ));
    }

    #[test]
    fn the_record_the_sentence_names_outweighs_a_word_shared_by_chance() {
        let ev = Evidence::new(
            "Bergen: 6 °C, light drizzle, wind 22 km/h, humidity 88%\nSevilla: 24 °C, clear, wind 7 km/h, humidity 40%",
            "",
            "",
            Vec::new(),
        );
        let a = analysis(
            "Sevilla wins: 24 degrees and clear, with a light 7 km/h breeze.",
            "",
        );
        assert_supported(&ev, &a);
        let a = analysis(
            "Sevilla wins: 24 degrees and clear, with a light 22 km/h breeze.",
            "",
        );
        assert!(
            ev.judge(&a)
                .iter()
                .any(|s| matches!(s, Support::WrongContext(_)))
        );
    }

    #[test]
    fn a_label_before_a_clock_time_keys_its_record() {
        let ev = Evidence::new(
            "图书馆\n週一至週五：09:00–18:00\n週六、週日：10:00–16:00",
            "",
            "",
            Vec::new(),
        );
        let a = analysis(
            "周六、周日 10:00 开门，16:00 关门，最晚入馆 18:00。",
            "图书馆周末几点开？",
        );
        let judged = ev.judge(&a);
        assert!(matches!(judged[2], Support::WrongContext(_)), "{judged:?}");
        let a = analysis("周六、周日 10:00 开门，16:00 关门。", "图书馆周末几点开？");
        assert!(ev.judge(&a).iter().all(|s| *s == Support::Tools));
    }

    #[test]
    fn a_feature_of_another_tier_is_lent_to_none() {
        let ev = Evidence::new(
            "Starter tier: 5 users, email support.\nScale tier: 50 users, SAML login, 24/7 phone support.",
            "",
            "",
            Vec::new(),
        );
        let q = "What does the Starter tier include?";
        let wrong = |answer: &str| {
            ev.judge(&analysis(answer, q))
                .iter()
                .any(|s| matches!(s, Support::WrongContext(_)))
        };
        assert!(wrong(
            "Starter tier: 5 users, email support, plus SAML login."
        ));
        assert!(!wrong(
            "Starter tier: 5 users, email support; no SAML login."
        ));
        assert!(!wrong(
            "Starter tier: 5 users. The Scale tier adds SAML login."
        ));
    }

    #[test]
    fn an_imagined_instance_is_sized_not_stated() {
        let ev = Evidence::new("Bikes: 3 € per hour, helmet included.", "", "", Vec::new());
        let size = |answer: &str| {
            let a = analysis(answer, "");
            let at = a
                .claims
                .iter()
                .position(|c| c.fact.text == "5-hour")
                .unwrap();
            ev.judge(&a)[at].clone()
        };
        assert_eq!(
            size("Bikes are 3 € an hour, so a 5-hour ride would cost 15 €."),
            Support::Example
        );
        // Without the imagined case the size is a claim.
        assert_eq!(
            size("Bikes are 3 € an hour, with a 5-hour limit."),
            Support::Unsupported
        );
    }

    #[test]
    fn a_series_of_numbered_labels_is_structure() {
        let ev = Evidence::new("Refund: 300 元, back to the card.", "", "", Vec::new());
        let a = analysis("Point 1：退款 300 元。\nPoint 2：原路退回。", "");
        assert_supported(&ev, &a);
        // One label alone is no series: its number may be a fact (`Gate 7:`).
        let a = analysis("Gate 7：退款 300 元。", "");
        assert!(ev.judge(&a).contains(&Support::Unsupported));
    }

    #[test]
    fn quoted_values_digits_by_position_and_half_of_another_read_right() {
        // A quoted value in other punctuation; a year spelled digit by digit.
        let ev = Evidence::new(
            "開放時間：10:00–18:00\n發布日期：2026-05-03",
            "",
            "",
            Vec::new(),
        );
        let a = analysis(
            "hours: \"開放時間 10:00-18:00\"，刊於二〇二六年五月三日。",
            "",
        );
        assert_supported(&ev, &a);
        // A value set against another record's ("只有 B 的一半") is still its own record's.
        let ev = Evidence::new(ALPHA_BETA, "alpha-1 还是 beta-1？", "", Vec::new());
        let a = analysis(
            "**alpha-1**\n- 上下文 64K，只有 beta-1 的一半",
            "alpha-1 还是 beta-1？",
        );
        assert_attached(&ev, &a);
    }

    #[test]
    fn names_for_some_records_only_name_none() {
        // The question names the cities in its own words; the answer gives only one a
        // value in the clause that names it, so neither is named by the answer's words.
        let ev = Evidence::new(RIGA_VALLETTA, "里加和瓦莱塔哪里更暖和？", "", Vec::new());
        let q = "里加和瓦莱塔哪里更暖和？";
        let a = analysis(
            "先看瓦莱塔，现在 21 °C，湿度 60%。\n再看里加，\n气温 4 °C，湿度 91%。",
            q,
        );
        assert_attached(&ev, &a);
    }

    #[test]
    fn emoji_bullets_and_footnote_marks_open_a_line() {
        let ev = Evidence::new(
            "v2.1: fixes CVE-2026-1111; drops Python 3.9",
            "",
            "",
            Vec::new(),
        );
        let a = analysis(
            "🔒 **Security** — fixes CVE-2026-1111.\n¹ Dropped: Python 3.9.",
            "",
        );
        assert_supported(&ev, &a);
    }

    #[test]
    fn fresh_14s_readings_of_comparisons_capitals_and_pieces() {
        let ev = Evidence::new(
            "| model | input | context |\n|---|---|---|\n| alpha-1 | $2 | 64K |\n| beta-1 | $5 | 128K |",
            "alpha-1 还是 beta-1？",
            "",
            Vec::new(),
        );
        let q = "alpha-1 还是 beta-1？";
        let fine = |answer: &str| {
            ev.judge(&analysis(answer, q))
                .iter()
                .all(|s| !s.is_claim() || *s == Support::Tools)
        };
        // A value beside a clause bound to another record's value stays its own record's;
        // a line set in capitals is display; 两块 counts pieces, not yuan.
        assert!(fine("**alpha-1 更便宜。**\n- Input：$2，beta-1 是 $5"));
        assert!(fine(
            "PRICE REPORT\nalpha-1: $2, beta-1: $5\n我找到两块相关内容。"
        ));
        assert!(!fine("alpha-1 是 $2，beta-1 是 $5，再便宜两块钱。"));
    }

    #[test]
    fn a_condition_holds_for_its_clause_an_example_for_its_sentence() {
        let a = analysis("如果需要更多房间，可以升级 Premium：最多 12 个房间。", "");
        assert!(!a.clauses.last().unwrap().hypothetical);
        let a = analysis("例如停 3 小时，费用是 40 元。", "");
        assert!(a.clauses.iter().all(|c| c.hypothetical));
        let a = analysis("例：停 3 小时，费用是 40 元。", "");
        assert!(
            a.clauses.iter().skip(1).all(|c| c.hypothetical),
            "{:?}",
            a.clauses
        );
    }

    #[test]
    fn a_hedge_standing_alone_hedges_the_next_clause() {
        let q = "libfoo 最新版本是多少？";
        assert!(!asserts(
            "调用被拒绝了：permission denied。一般来说，这表示当前会话的令牌没有被授予读取权限。",
            q
        ));
        // `好像是` hedges; it is no supposition (`像是`), so its numbers are claims.
        let a = analysis("好像是消费满 500 元可以免费停 3 小时。", "停车费怎么算？");
        assert!(a.clauses.iter().all(|c| !c.hypothetical && c.hedged));
    }
}
