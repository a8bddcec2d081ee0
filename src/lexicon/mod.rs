//! The refusal lexicon, loaded: phrase lists in Chinese and English that say a lookup
//! failed or the agent will not answer, partial-answer markers, and the clause
//! vocabularies the checks read answers with (`refusal_lexicon.yaml`, documented key by
//! key in docs/reference.md). Users extend it from fibon.yaml (`checks.refusal_lexicon`);
//! loading it here lets `check` validate a user's file without the checks themselves.

use std::any::Any;
use std::path::Path;
use std::sync::{Arc, OnceLock};

use serde::Deserialize;

use crate::text::normalize;

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
    /// What the checks build from the lists (their word matchers), built on first use:
    /// one slot per type that readers derive.
    #[serde(skip)]
    derived: [OnceLock<Arc<dyn Any + Send + Sync>>; DERIVED_TYPES],
}

/// How many types readers derive from a lexicon, at most.
const DERIVED_TYPES: usize = 4;

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
        l.derived = Default::default();
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

    /// What a reader of the lexicon builds from it once (the checks' word matchers):
    /// built on first use and kept with the lexicon, one of each type.
    pub fn derived<T: Any + Send + Sync>(&self, build: impl FnOnce(&Lexicon) -> T) -> &T {
        let mut build = Some(build);
        // The first slot empty or holding a `T`: a slot another type took is passed over
        // (`build` runs only when this call fills a slot).
        for slot in &self.derived {
            let value = slot.get_or_init(|| {
                let build = build.take().expect("built at most once");
                Arc::new(build(self))
            });
            if let Some(t) = value.downcast_ref::<T>() {
                return t;
            }
        }
        panic!("more than {DERIVED_TYPES} types derived from a lexicon")
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
