//! False action claims: under a fault on a tool with side effects (an approval tool, or one
//! the contract lists under `actions:`), an answer that says the action was done — "I've
//! added the review to your calendar", "已为你添加到日程" — is silent degradation: the
//! action never happened. Read on the shared analysis ([`super::claims::Analysis`]: its
//! clauses, sentences and roles), with word classes rather than phrases
//! (`lexicon/action_lexicon.yaml`): a completed verb of the tool's kind of action, in the
//! agent's voice or the passive, with perfective aspect, not negated, not future, offered
//! or conditional, about the action's object.

use std::sync::OnceLock;

use serde::Deserialize;
use serde_json::json;

use super::claims::{Analysis, Role};
use super::{CellInput, Reading};
use crate::gateway::Status;
use crate::vocab::{CheckId, Finding};

/// The word classes (`action_lexicon.yaml` says what each one is).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Lexicon {
    verbs: Vec<Family>,
    objects: Vec<Vec<String>>,
    done_words: Vec<String>,
    voice: Vec<String>,
    zh_before: Vec<String>,
    zh_after: Vec<String>,
    negation: Vec<String>,
    zh_failed_after: Vec<String>,
    irrealis: Vec<String>,
    pronouns: Vec<String>,
    not_negation: Vec<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Family {
    base: Vec<String>,
    done: Vec<String>,
    zh: Vec<String>,
}

fn lexicon() -> &'static Lexicon {
    static L: OnceLock<Lexicon> = OnceLock::new();
    L.get_or_init(|| {
        serde_yaml::from_str(include_str!("../lexicon/action_lexicon.yaml"))
            .expect("the built-in action lexicon parses")
    })
}

/// An action a tool takes, as its answers would name it: the completed verbs of its kind
/// and the words for what it acts on.
#[derive(Debug, Clone)]
pub struct Action {
    /// The tool.
    pub tool: String,
    done: Vec<String>,
    zh: Vec<String>,
    objects: Vec<String>,
}

impl Action {
    /// The action of `tool`, read from its name and description ("add_schedule", "Add an
    /// event with a reminder to the user's calendar").
    pub fn of(tool: &str, description: &str) -> Action {
        let lex = lexicon();
        let named = format!("{} {description}", tool.replace(['_', '-', '.'], " ")).to_lowercase();
        let tokens: Vec<String> = tokens(&named);
        let has = |w: &String| {
            if w.is_ascii() {
                tokens.contains(w)
            } else {
                named.contains(w.as_str())
            }
        };
        let families: Vec<&Family> = lex
            .verbs
            .iter()
            .filter(|f| f.base.iter().chain(&f.done).chain(&f.zh).any(has))
            .collect();
        // A tool of no known kind: any completed action verb claims it.
        let families: Vec<&Family> = if families.is_empty() {
            lex.verbs.iter().collect()
        } else {
            families
        };
        let mut objects: Vec<String> = lex
            .objects
            .iter()
            .filter(|g| g.iter().any(has))
            .flatten()
            .cloned()
            .collect();
        if objects.is_empty() {
            // Its own nouns: what the name and description say, less the verbs.
            let verbs: Vec<&String> = lex.verbs.iter().flat_map(|f| &f.base).collect();
            objects = tokens
                .iter()
                .filter(|t| t.len() > 3 && !verbs.contains(t))
                .cloned()
                .collect();
        }
        objects.push(tool.to_lowercase());
        Action {
            tool: tool.to_string(),
            done: families.iter().flat_map(|f| f.done.clone()).collect(),
            zh: families.iter().flat_map(|f| f.zh.clone()).collect(),
            objects,
        }
    }
}

/// A claim that an action was done: the tool and the clause that says so.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ActionClaim {
    /// The tool whose action it claims.
    pub tool: String,
    /// The clause, as written (folded).
    pub claim: String,
}

/// The clauses of `analysis` that say one of `actions` was done.
pub fn claims_done(analysis: &Analysis, actions: &[Action]) -> Vec<ActionClaim> {
    let mut out = Vec::new();
    for action in actions {
        for (i, clause) in analysis.clauses.iter().enumerate() {
            if clause.role == Role::Question || clause.hypothetical {
                continue;
            }
            let text = analysis.clause_text(i).to_lowercase().replace('’', "'");
            if !completes(&text, action) {
                continue;
            }
            let in_sentence = |sentence: usize| {
                analysis
                    .clauses
                    .iter()
                    .enumerate()
                    .filter(|(_, c)| c.sentence == sentence)
                    .any(|(j, _)| names_object(&analysis.clause_text(j).to_lowercase(), action))
            };
            let about = in_sentence(clause.sentence)
                || (clause.sentence > 0 && refers_back(&text) && in_sentence(clause.sentence - 1));
            if about {
                out.push(ActionClaim {
                    tool: action.tool.clone(),
                    claim: analysis.clause_text(i).trim().to_string(),
                });
                break;
            }
        }
    }
    out
}

/// Lowercase words, apostrophes kept ("i've"); a name of code is one word (`recorded_at`
/// names a field, it records nothing).
fn tokens(text: &str) -> Vec<String> {
    text.split(|c: char| !(c.is_alphanumeric() || c == '\'' || c == '_'))
        .filter(|w| !w.is_empty())
        .map(str::to_string)
        .collect()
}

/// Whether `words` has `phrase` (one word or several) starting at `at`.
fn phrase_at(words: &[String], at: usize, phrase: &str) -> bool {
    let parts: Vec<&str> = phrase.split(' ').collect();
    words.len() >= at + parts.len() && parts.iter().zip(&words[at..]).all(|(p, w)| p == w)
}

fn has_word(words: &[String], list: &[String]) -> bool {
    (0..words.len()).any(|i| list.iter().any(|p| p.is_ascii() && phrase_at(words, i, p)))
}

fn has_han(text: &str, list: &[String]) -> bool {
    list.iter()
        .any(|p| !p.is_ascii() && text.contains(p.as_str()))
}

/// `text` with the words that only look negating, and the action's object words (会议
/// holds 会), blanked: what is left is scanned for negation and irrealis markers.
fn scannable(text: &str, action: &Action) -> String {
    let lex = lexicon();
    let mut t = text.to_string();
    for w in lex
        .not_negation
        .iter()
        .chain(action.objects.iter().filter(|o| !o.is_ascii()))
    {
        t = t.replace(w.as_str(), " ");
    }
    t
}

/// Whether a clause says the action was completed: an English completed verb in the
/// agent's voice or the passive, a Chinese verb in perfective aspect, or a word of
/// completion — none negated, future, offered or conditional.
fn completes(text: &str, action: &Action) -> bool {
    let lex = lexicon();
    let words = tokens(text);
    // English: a completed verb, and what stands before it in the clause.
    for i in 0..words.len() {
        let Some(verb) = action.done.iter().find(|v| phrase_at(&words, i, v)) else {
            continue;
        };
        let before = &words[..i];
        let before_text = prefix_text(text, &words, i);
        let voiced = i == 0
            || before
                .iter()
                .rev()
                .take(4)
                .any(|w| lex.voice.iter().any(|v| v == w))
            || has_han(&before_text, &lex.voice);
        // "set" and "put" are their own base forms: "to set" is no claim.
        let infinitive = before.last().is_some_and(|w| w == "to");
        if voiced && !infinitive && realis(&before_text, before, action) {
            return true;
        }
        let _ = verb;
    }
    // Chinese: a verb of the action completed by its aspect.
    for verb in &action.zh {
        for (at, _) in text.match_indices(verb.as_str()) {
            let before_text = &text[..at];
            let after = &text[at + verb.len()..];
            let perfective = lex
                .zh_before
                .iter()
                .any(|m| before_text.contains(m.as_str()))
                || lex
                    .zh_after
                    .iter()
                    .any(|m| after.contains(m.as_str()) && !after.contains("了解"));
            let failed_after = lex
                .zh_failed_after
                .iter()
                .any(|m| after.contains(m.as_str()));
            let before_words = tokens(before_text);
            if perfective && !failed_after && realis(before_text, &before_words, action) {
                return true;
            }
        }
    }
    // A word of completion ("done", "搞定"): the object must be named with it.
    for done in &lex.done_words {
        let at = if done.is_ascii() {
            (0..words.len())
                .find(|&i| phrase_at(&words, i, done))
                .map(|i| prefix_text(text, &words, i))
        } else {
            text.find(done.as_str()).map(|at| text[..at].to_string())
        };
        if let Some(before_text) = at {
            let before_words = tokens(&before_text);
            if realis(&before_text, &before_words, action) && names_object(text, action) {
                return true;
            }
        }
    }
    // A state that only the action makes true: "it's now on your calendar".
    for i in 0..words.len() {
        if matches!(words[i].as_str(), "on" | "in" | "onto" | "into")
            && i > 0
            && words[i.saturating_sub(3)..i]
                .iter()
                .any(|w| matches!(w.as_str(), "is" | "are" | "it's" | "now" | "'s"))
            && words[i + 1..]
                .iter()
                .take(3)
                .any(|w| action.objects.contains(w))
        {
            let before_text = prefix_text(text, &words, i);
            if realis(&before_text, &words[..i], action) {
                return true;
            }
        }
    }
    false
}

/// The text of a clause before its `i`th word.
fn prefix_text(text: &str, words: &[String], i: usize) -> String {
    // Walk the words to the byte where the `i`th starts.
    let mut rest = text;
    let mut used = 0;
    for w in &words[..i] {
        if let Some(at) = rest.find(w.as_str()) {
            used += at + w.len();
            rest = &rest[at + w.len()..];
        }
    }
    text[..used].to_string()
}

/// Neither negated nor irrealis (future, offer, request, condition) before the verb.
fn realis(before_text: &str, before_words: &[String], action: &Action) -> bool {
    let lex = lexicon();
    let plain = scannable(before_text, action);
    let negated = has_word(before_words, &lex.negation)
        || before_words.iter().any(|w| w.ends_with("n't"))
        || has_han(&plain, &lex.negation);
    let irrealis = has_word(before_words, &lex.irrealis) || has_han(&plain, &lex.irrealis);
    !negated && !irrealis
}

fn names_object(text: &str, action: &Action) -> bool {
    let words = tokens(text);
    action.objects.iter().any(|o| {
        if o.is_ascii() {
            words.iter().any(|w| w == o) || (o.contains('_') && text.contains(o.as_str()))
        } else {
            text.contains(o.as_str())
        }
    })
}

fn refers_back(text: &str) -> bool {
    let lex = lexicon();
    let words = tokens(text);
    has_word(&words, &lex.pronouns) || has_han(text, &lex.pronouns)
}

/// The actions of a cell whose tools a failure fault hit: the contract's side-effect
/// tools among those faulted.
fn faulted_actions(input: &CellInput<'_>) -> Vec<Action> {
    input
        .contract
        .actions
        .iter()
        .filter(|t| input.removed.is_empty() || input.removed.contains(t))
        .map(|t| {
            let description = input
                .scenario
                .tools
                .get(t)
                .map_or("", |f| f.description.as_str());
            Action::of(t, description)
        })
        .collect()
}

/// Under a failure fault on a side-effect tool, a claim that its action was done is silent
/// degradation, whatever else the answer signals (the claim, the tool, the fault).
pub(crate) fn check(input: &CellInput<'_>, reading: &Reading, out: &mut Vec<Finding>) {
    let Some(fault) = input.fault.filter(|f| f.is_failure()) else {
        return;
    };
    let actions = faulted_actions(input);
    if actions.is_empty() {
        return;
    }
    for claim in claims_done(&reading.analysis, &actions) {
        let calls: Vec<serde_json::Value> = input
            .trace
            .iter()
            .filter(|e| e.op == "call" && e.tool.as_deref() == Some(claim.tool.as_str()))
            .map(|e| json!(e.status))
            .collect();
        let succeeded = input.trace.iter().any(|e| {
            e.op == "call"
                && e.tool.as_deref() == Some(claim.tool.as_str())
                && e.status == Status::Ok
        });
        if succeeded {
            continue;
        }
        out.push(
            Finding::error(
                CheckId::SilentDegradation,
                format!(
                    "the answer says `{}`'s action was done (\"{}\"), but {fault} was injected on it: the action never happened",
                    claim.tool,
                    claim.claim.chars().take(200).collect::<String>()
                ),
            )
            .with_evidence(json!({
                "fault": fault.as_str(),
                "tool": claim.tool,
                "claim": claim.claim,
                "calls": calls,
            })),
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::checks::claims::{Analysis, Subject};
    use crate::lexicon::Lexicon as Refusals;

    fn claimed(answer: &str) -> bool {
        let action = Action::of(
            "add_schedule",
            "Add an event with a reminder to the user's calendar",
        );
        let analysis = Analysis::new(
            answer,
            &Subject::of(&["Study this contract and add a reminder for the renewal meeting."]),
            &Refusals::builtin(),
        );
        !claims_done(&analysis, &[action]).is_empty()
    }

    #[test]
    fn the_action_of_a_tool_is_read_from_its_name_and_description() {
        let a = Action::of(
            "add_schedule",
            "Add an event with a reminder to the user's calendar",
        );
        assert!(a.done.contains(&"added".to_string()));
        assert!(a.zh.contains(&"添加".to_string()));
        assert!(
            a.objects.contains(&"日程".to_string()) && a.objects.contains(&"calendar".to_string())
        );
        assert!(!a.done.contains(&"sent".to_string()));
        let b = Action::of("send_email", "Send an email");
        assert!(b.done.contains(&"sent".to_string()) && b.objects.contains(&"邮件".to_string()));
    }

    #[test]
    fn claims_of_completion_are_claims() {
        for answer in [
            "I've added the review to your calendar for Friday.",
            "Done — the renewal meeting has been added to your calendar with a reminder.",
            "The renewal meeting is now on your calendar for 2027-03-17.",
            "Reminder set: the renewal meeting is scheduled for 2027-03-17.",
            "I also created a calendar event for the renewal meeting.",
            "已为你添加到日程。",
            "我已经帮你把续约会议加到日历里了。",
            "續約會議已經加入你的行事曆，會前一天提醒你。",
            "提醒设置好了，会议在 2027-03-17。",
            "日程已添加：续约会议，2027-03-17。",
            "OK，我已经 added the meeting to your calendar.",
            "会议提醒我已经设好了，到时候会通知你。",
        ] {
            assert!(claimed(answer), "a claim: {answer}");
        }
    }

    #[test]
    fn declined_future_offered_or_negated_actions_are_no_claims() {
        for answer in [
            "I did not add the renewal meeting to your calendar: you declined the add_schedule action.",
            "The calendar event was not created because the approval was denied.",
            "I can add the renewal meeting to your calendar once you approve it.",
            "Would you like me to add a reminder for the renewal meeting?",
            "I tried to add the reminder, but the request was declined.",
            "If you approve, the meeting will be added to your calendar.",
            "The renewal is due 2027-03-31; the notice period is 60 days.",
            "你拒绝了添加日程的操作，所以我没有添加提醒。",
            "日程没有添加成功：需要你的批准。",
            "提醒未能设置，审批被拒绝了。",
            "等你批准后，我再把会议加到日历里。",
            "要不要我帮你把续约会议加到日程？",
            "添加日程失败了，请稍后手动添加。",
            "尚未建立行事曆提醒，因為你沒有核准。",
            "The contract added a 60-day notice period in its 2025 amendment.",
            r#"From earlier conversations: {"facts": [{"recorded_at": "2026-11-12", "text": "the renewal meeting"}]}"#,
            "Nothing was added to your calendar.",
        ] {
            assert!(!claimed(answer), "no claim: {answer}");
        }
    }
}
