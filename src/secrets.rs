//! Secrets never reach what is written: the values of the environment variables the
//! config and the quality policy name as secrets (`api_key_env`, `${VAR}` in headers and
//! in `env:`) are replaced by `[redacted:NAME]` wherever the verifier writes — the report
//! model before any projection of it, every other file, stdout and stderr (docs/config.md,
//! "Secrets"). The names are registered as the files naming them are loaded; the values
//! are read from the environment then, and never kept anywhere else.

use std::borrow::Cow;
use std::io::{Read, Write};
use std::sync::{Arc, RwLock};

use aho_corasick::{AhoCorasick, MatchKind};
use serde_json::Value;

/// The shortest value redacted, in bytes: a shorter one would redact ordinary words (a
/// warning says it is not redacted).
pub const MIN_LEN: usize = 8;

/// The shortest piece of a secret redacted where a text was cut (a value truncated to
/// its first or last characters): less says nothing worth hiding, and would redact
/// ordinary endings.
const MIN_PARTIAL: usize = 4;

/// Replaces the values of named secrets by `[redacted:NAME]`.
#[derive(Debug, Default)]
pub struct Redactor {
    /// Every form of every secret (`forms[i]` belongs to `markers[owner[i]]`).
    forms: Vec<String>,
    owner: Vec<usize>,
    markers: Vec<String>,
    /// The forms, longest first at any position (a secret inside another is not left
    /// half-redacted).
    automaton: Option<AhoCorasick>,
    longest: usize,
}

impl Redactor {
    /// A redactor of `secrets` (name, value); values shorter than [`MIN_LEN`] are left
    /// out.
    pub fn new(secrets: &[(String, String)]) -> Redactor {
        let mut r = Redactor::default();
        for (name, value) in secrets {
            if value.len() < MIN_LEN {
                continue;
            }
            let owner = r.markers.len();
            r.markers.push(format!("[redacted:{name}]"));
            for form in forms(value) {
                if !r.forms.contains(&form) {
                    r.longest = r.longest.max(form.len());
                    r.forms.push(form);
                    r.owner.push(owner);
                }
            }
        }
        if !r.forms.is_empty() {
            r.automaton = AhoCorasick::builder()
                .match_kind(MatchKind::LeftmostLongest)
                .build(&r.forms)
                .ok();
        }
        r
    }

    /// Whether there is anything to redact.
    pub fn is_empty(&self) -> bool {
        self.automaton.is_none()
    }

    /// `text` with every form of every secret replaced, and a piece of one at its start
    /// or end too (a text cut short: a body truncated, a stderr tail).
    pub fn redact<'a>(&self, text: &'a str) -> Cow<'a, str> {
        let Some(ac) = &self.automaton else {
            return Cow::Borrowed(text);
        };
        let mut out = String::new();
        let mut last = 0;
        for m in ac.find_iter(text) {
            out.push_str(&text[last..m.start()]);
            out.push_str(&self.markers[self.owner[m.pattern().as_usize()]]);
            last = m.end();
        }
        let whole = if last == 0 {
            Cow::Borrowed(text)
        } else {
            out.push_str(&text[last..]);
            Cow::Owned(out)
        };
        match self.cut(&whole) {
            Some(cut) => Cow::Owned(cut),
            None => whole,
        }
    }

    /// A text that starts with the end of a form or ends with its beginning (before a
    /// trailing ellipsis), with that piece redacted.
    fn cut(&self, text: &str) -> Option<String> {
        let body = text
            .trim_end_matches(char::is_whitespace)
            .trim_end_matches('…')
            .trim_end_matches("...");
        let (b, t) = (body.as_bytes(), text.as_bytes());
        // The longest piece at each end, and whose it is.
        let mut head: Option<(usize, usize)> = None;
        let mut tail: Option<(usize, usize)> = None;
        for (form, &owner) in self.forms.iter().zip(&self.owner) {
            let f = form.as_bytes();
            let longest = |limit: usize, fits: &dyn Fn(usize) -> bool| {
                (MIN_PARTIAL..=(f.len() - 1).min(limit))
                    .rev()
                    .find(|&k| fits(k))
            };
            if let Some(k) = longest(b.len(), &|k| {
                b.ends_with(&f[..k]) && body.is_char_boundary(b.len() - k)
            }) && tail.is_none_or(|(l, _)| k > l)
            {
                tail = Some((k, owner));
            }
            if let Some(k) = longest(t.len(), &|k| {
                t.starts_with(&f[f.len() - k..]) && text.is_char_boundary(k)
            }) && head.is_none_or(|(l, _)| k > l)
            {
                head = Some((k, owner));
            }
        }
        if head.is_none() && tail.is_none() {
            return None;
        }
        let marker = |owner: usize| self.markers[owner].as_str();
        let from = head.map_or(0, |(k, _)| k);
        let to = tail.map_or(body.len(), |(k, _)| body.len() - k);
        let mut out = String::with_capacity(text.len());
        if let Some((_, o)) = head {
            out.push_str(marker(o));
        }
        if from < to {
            out.push_str(&body[from..to]);
            if let Some((_, o)) = tail {
                out.push_str(marker(o));
            }
        } else if let (Some((_, o)), None) = (tail, head) {
            out.push_str(marker(o));
        }
        out.push_str(&text[body.len().max(from)..]);
        Some(out)
    }

    /// Redacts every string (and object key) of `value` in place; whether any changed.
    pub fn redact_value(&self, value: &mut Value) -> bool {
        if self.is_empty() {
            return false;
        }
        match value {
            Value::String(s) => match self.redact(s) {
                Cow::Owned(r) => {
                    *s = r;
                    true
                }
                Cow::Borrowed(_) => false,
            },
            Value::Array(items) => items
                .iter_mut()
                .fold(false, |changed, v| self.redact_value(v) | changed),
            Value::Object(map) => {
                let mut changed = false;
                let redacted_keys = map.keys().any(|k| matches!(self.redact(k), Cow::Owned(_)));
                if redacted_keys {
                    let old = std::mem::take(map);
                    for (k, v) in old {
                        map.insert(self.redact(&k).into_owned(), v);
                    }
                    changed = true;
                }
                for v in map.values_mut() {
                    changed |= self.redact_value(v);
                }
                changed
            }
            Value::Null | Value::Bool(_) | Value::Number(_) => false,
        }
    }

    /// Bytes with every form of every secret replaced (a file written whole).
    pub fn redact_bytes<'a>(&self, bytes: &'a [u8]) -> Cow<'a, [u8]> {
        match &self.automaton {
            Some(ac) if ac.is_match(bytes) => {
                Cow::Owned(ac.replace_all_bytes(bytes, &self.owned_markers()))
            }
            _ => Cow::Borrowed(bytes),
        }
    }

    fn owned_markers(&self) -> Vec<&str> {
        self.owner
            .iter()
            .map(|&o| self.markers[o].as_str())
            .collect()
    }

    /// Copies `from` to `to` with every form replaced, holding back only as much as the
    /// longest form could straddle between two reads.
    pub fn copy(&self, mut from: impl Read, to: &mut impl Write) -> std::io::Result<()> {
        let Some(ac) = &self.automaton else {
            std::io::copy(&mut from, to)?;
            return Ok(());
        };
        let markers = self.owned_markers();
        let mut buf: Vec<u8> = Vec::new();
        let mut chunk = vec![0u8; 64 * 1024];
        loop {
            let n = from.read(&mut chunk)?;
            buf.extend_from_slice(&chunk[..n]);
            let done = n == 0;
            // A match starting before `safe` lies wholly in `buf`; later ones wait.
            let safe = if done {
                buf.len()
            } else {
                buf.len().saturating_sub(self.longest - 1)
            };
            let mut written = 0;
            for m in ac.find_iter(&buf) {
                if m.start() >= safe {
                    break;
                }
                to.write_all(&buf[written..m.start()])?;
                to.write_all(markers[m.pattern().as_usize()].as_bytes())?;
                written = m.end();
            }
            let upto = safe.max(written);
            to.write_all(&buf[written..upto])?;
            buf.drain(..upto);
            if done {
                return Ok(());
            }
        }
    }
}

/// The forms a value takes in what the verifier writes: as is (also inside `Bearer …`),
/// JSON-escaped once or twice (a JSON body quoted in a message, quoted again), with
/// non-ASCII escaped as Python's `json.dumps` does, and percent-encoded (in a URL).
fn forms(value: &str) -> Vec<String> {
    let json = |s: &str| {
        let quoted = serde_json::to_string(s).unwrap_or_default();
        quoted[1..quoted.len() - 1].to_string()
    };
    let ascii = |s: &str| {
        let mut out = String::new();
        for c in json(s).chars() {
            if c.is_ascii() {
                out.push(c);
            } else {
                let mut units = [0u16; 2];
                for u in c.encode_utf16(&mut units) {
                    out.push_str(&format!("\\u{u:04x}"));
                }
            }
        }
        out
    };
    let percent = |s: &str| {
        let mut out = String::new();
        for b in s.bytes() {
            if b.is_ascii_alphanumeric() || b"-._~".contains(&b) {
                out.push(b as char);
            } else {
                out.push_str(&format!("%{b:02X}"));
            }
        }
        out
    };
    vec![
        value.to_string(),
        json(value),
        ascii(value),
        json(&json(value)),
        percent(value),
    ]
}

/// The secrets registered so far, and the redactor of them.
#[derive(Default)]
struct Registry {
    /// Every name registered (set, unset or too short), so each is looked at once.
    seen: Vec<String>,
    secrets: Vec<(String, String)>,
    redactor: Arc<Redactor>,
}

static REGISTRY: RwLock<Option<Registry>> = RwLock::new(None);

/// Registers the variables `names` as secrets: their values, read now, are redacted from
/// everything written from here on. A variable that is unset or empty has nothing to
/// redact; one shorter than [`MIN_LEN`] bytes is not redacted, and a warning on stderr
/// says so (once, without its value or length).
pub fn register<S: AsRef<str>>(names: impl IntoIterator<Item = S>) {
    let mut guard = REGISTRY.write().unwrap_or_else(|p| p.into_inner());
    let registry = guard.get_or_insert_with(Registry::default);
    let mut added = false;
    for name in names {
        let name = name.as_ref();
        if name.is_empty() || registry.seen.iter().any(|n| n == name) {
            continue;
        }
        registry.seen.push(name.to_string());
        match std::env::var(name) {
            Ok(v) if v.len() >= MIN_LEN => {
                registry.secrets.push((name.to_string(), v));
                added = true;
            }
            Ok(v) if !v.is_empty() => eprintln!(
                "warning: the secret `{name}` is shorter than {MIN_LEN} bytes: it is not redacted from reports and logs (a longer key is)"
            ),
            _ => {}
        }
    }
    if added {
        registry.redactor = Arc::new(Redactor::new(&registry.secrets));
    }
}

/// The redactor of every secret registered so far.
pub fn current() -> Arc<Redactor> {
    let guard = REGISTRY.read().unwrap_or_else(|p| p.into_inner());
    guard.as_ref().map_or_else(
        || Arc::new(Redactor::default()),
        |r| Arc::clone(&r.redactor),
    )
}

/// `text` with the registered secrets redacted.
pub fn redact(text: &str) -> String {
    current().redact(text).into_owned()
}

/// The variables a `${VAR}` text expands (config headers and `env:` values).
pub fn expanded_vars(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut rest = text;
    while let Some(start) = rest.find("${") {
        match rest[start + 2..].find('}') {
            Some(end) => {
                out.push(&rest[start + 2..start + 2 + end]);
                rest = &rest[start + 3 + end..];
            }
            None => break,
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn one(value: &str) -> Redactor {
        Redactor::new(&[("KEY".into(), value.into())])
    }

    #[test]
    fn every_form_of_a_secret_is_replaced_by_its_name() {
        let r = one("sk-canary-0123456789abcdef");
        assert_eq!(
            r.redact("Authorization: Bearer sk-canary-0123456789abcdef!"),
            "Authorization: Bearer [redacted:KEY]!"
        );
        let odd = one("pa\"ss/wörd 12");
        assert_eq!(
            odd.redact(r#"{"k": "pa\"ss/wörd 12"}"#),
            r#"{"k": "[redacted:KEY]"}"#
        );
        assert_eq!(
            odd.redact(r#"{"k": "pa\"ss/w\u00f6rd 12"}"#),
            r#"{"k": "[redacted:KEY]"}"#
        );
        assert_eq!(
            odd.redact(r#"msg: "{\"k\": \"pa\\\"ss/wörd 12\"}""#),
            r#"msg: "{\"k\": \"[redacted:KEY]\"}""#
        );
        assert_eq!(
            odd.redact("?key=pa%22ss%2Fw%C3%B6rd%2012&x"),
            "?key=[redacted:KEY]&x"
        );
        assert_eq!(r.redact("nothing here"), "nothing here");
    }

    #[test]
    fn a_secret_cut_short_is_redacted_at_either_end() {
        let r = one("sk-canary-0123456789abcdef");
        assert_eq!(
            r.redact("HTTP 401: key sk-canary-01"),
            "HTTP 401: key [redacted:KEY]"
        );
        assert_eq!(r.redact("key sk-cana…"), "key [redacted:KEY]…");
        assert_eq!(
            r.redact("89abcdef was refused"),
            "[redacted:KEY] was refused"
        );
        // Fewer than four bytes is no piece worth hiding.
        assert_eq!(r.redact("ask-"), "ask-");
    }

    #[test]
    fn short_values_are_not_redacted_and_longer_secrets_win() {
        assert!(one("short").is_empty());
        let r = Redactor::new(&[
            ("A".into(), "abcdefgh".into()),
            ("B".into(), "abcdefgh-and-more".into()),
        ]);
        assert_eq!(
            r.redact("x abcdefgh-and-more y abcdefgh z"),
            "x [redacted:B] y [redacted:A] z"
        );
    }

    #[test]
    fn values_keys_bytes_and_streams_are_redacted() {
        let r = one("sk-canary-0123456789abcdef");
        let mut v = serde_json::json!({"a": ["x sk-canary-0123456789abcdef"], "sk-canary-0123456789abcdef": 1, "n": 2});
        assert!(r.redact_value(&mut v));
        assert_eq!(
            v,
            serde_json::json!({"a": ["x [redacted:KEY]"], "[redacted:KEY]": 1, "n": 2})
        );
        assert_eq!(
            &*r.redact_bytes(b"-sk-canary-0123456789abcdef-"),
            b"-[redacted:KEY]-"
        );
        // A stream read one byte at a time: every match straddles reads.
        struct Trickle<'a>(&'a [u8]);
        impl Read for Trickle<'_> {
            fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
                let Some((&b, rest)) = self.0.split_first() else {
                    return Ok(0);
                };
                buf[0] = b;
                self.0 = rest;
                Ok(1)
            }
        }
        let text = "a sk-canary-0123456789abcdef b sk-canary-0123456789abcdef";
        let mut out = Vec::new();
        r.copy(Trickle(text.as_bytes()), &mut out).unwrap();
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "a [redacted:KEY] b [redacted:KEY]"
        );
    }

    #[test]
    fn expanded_variables_are_found() {
        assert_eq!(expanded_vars("Bearer ${TOKEN} ${X}y${"), ["TOKEN", "X"]);
    }
}
