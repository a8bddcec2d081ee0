//! The rule language of `output_assertions`: `len OP N`, `matches REGEX`, `== VALUE`,
//! `!= VALUE`, `OP N` on numbers, `exists`, `not_empty` (docs/contract.md, "Output assertions").
//! A rule applies to the list of values a JSONPath selects.

use std::fmt;

use regex::Regex;
use serde_json::Value;

/// A comparison operator.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CmpOp {
    /// `==`
    Eq,
    /// `!=`
    Ne,
    /// `<`
    Lt,
    /// `<=`
    Le,
    /// `>`
    Gt,
    /// `>=`
    Ge,
}

impl CmpOp {
    /// Longest first, so `<=` is not read as `<`.
    const TOKENS: [(&'static str, CmpOp); 6] = [
        ("==", CmpOp::Eq),
        ("!=", CmpOp::Ne),
        ("<=", CmpOp::Le),
        (">=", CmpOp::Ge),
        ("<", CmpOp::Lt),
        (">", CmpOp::Gt),
    ];

    fn split(s: &str) -> Option<(CmpOp, &str)> {
        Self::TOKENS
            .iter()
            .find_map(|(tok, op)| s.strip_prefix(tok).map(|rest| (*op, rest.trim())))
    }

    /// Applies the operator.
    pub fn holds<T: PartialOrd>(self, a: T, b: T) -> bool {
        match self {
            CmpOp::Eq => a == b,
            CmpOp::Ne => a != b,
            CmpOp::Lt => a < b,
            CmpOp::Le => a <= b,
            CmpOp::Gt => a > b,
            CmpOp::Ge => a >= b,
        }
    }
}

/// A parsed rule.
#[derive(Debug, Clone)]
pub enum Rule {
    /// `len OP N`: on a singular path (`$.results`), the length of the selected array,
    /// string or object; on a path that can select several nodes (`$.results[*]`, filters,
    /// slices, `..`), the number of nodes selected.
    Len(CmpOp, u64),
    /// `matches REGEX`: every selected value is a string matching the regex.
    Matches(Regex),
    /// `== VALUE`: every selected value equals VALUE.
    Equals(Value),
    /// `!= VALUE`: no selected value equals VALUE.
    NotEquals(Value),
    /// `< N`, `<= N`, `> N`, `>= N`: every selected value is a number that compares so.
    Compare(CmpOp, f64),
    /// `exists`: the path selects at least one value.
    Exists,
    /// `not_empty`: the path selects at least one value, and none is null, `""`, `[]` or `{}`.
    NotEmpty,
}

/// Why a rule does not parse, with a hint.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RuleError {
    /// What is wrong.
    pub message: String,
    /// What to write instead.
    pub help: String,
}

impl fmt::Display for RuleError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

const GRAMMAR: &str = "rules are `len OP N`, `matches REGEX`, `== VALUE`, `!= VALUE`, `OP N`, `exists` or `not_empty`, with OP one of == != < <= > >=";

impl Rule {
    /// Parses a rule.
    pub fn parse(text: &str) -> Result<Rule, RuleError> {
        let s = text.trim();
        let err = |message: String| RuleError {
            message,
            help: GRAMMAR.to_string(),
        };
        match s {
            "exists" => return Ok(Rule::Exists),
            "not_empty" => return Ok(Rule::NotEmpty),
            _ => {}
        }
        if let Some(rest) = s
            .strip_prefix("len")
            .filter(|r| r.starts_with([' ', '=', '!', '<', '>']))
        {
            let (op, n) = CmpOp::split(rest.trim())
                .ok_or_else(|| err(format!("`len` needs an operator in `{s}`")))?;
            let n = n
                .parse::<u64>()
                .map_err(|_| err(format!("`len` compares with a whole number, found `{n}`")))?;
            return Ok(Rule::Len(op, n));
        }
        if let Some(rest) = s.strip_prefix("matches ") {
            return Regex::new(rest.trim())
                .map(Rule::Matches)
                .map_err(|e| RuleError {
                    message: format!("invalid regex in rule: {}", first_line(&e.to_string())),
                    help: "write a regex in Rust `regex` syntax (no look-around or backreferences)"
                        .into(),
                });
        }
        if let Some((op, operand)) = CmpOp::split(s) {
            if operand.is_empty() {
                return Err(err(format!("`{s}` has no operand")));
            }
            return match op {
                CmpOp::Eq => Ok(Rule::Equals(parse_value(operand))),
                CmpOp::Ne => Ok(Rule::NotEquals(parse_value(operand))),
                _ => operand
                    .parse::<f64>()
                    .ok()
                    .filter(|n| n.is_finite())
                    .map(|n| Rule::Compare(op, n))
                    .ok_or_else(|| err(format!("`{s}` compares with a number, found `{operand}`"))),
            };
        }
        let word = s.split_whitespace().next().unwrap_or("");
        let hint = crate::diag::did_you_mean(word, ["len", "matches", "exists", "not_empty"]);
        Err(RuleError {
            message: format!("unknown rule `{s}`"),
            help: match hint {
                Some(h) => format!("did you mean `{h}`? {GRAMMAR}"),
                None => GRAMMAR.to_string(),
            },
        })
    }

    /// Checks the rule against the nodes a JSONPath selected (`singular`: see
    /// [`is_singular`]). `Err` says why it failed. Every rule but `len` fails when the
    /// path selects nothing: an empty selection is never a vacuous pass.
    pub fn check(&self, nodes: &[&Value], singular: bool) -> Result<(), String> {
        let each = |ok: &dyn Fn(&Value) -> bool, what: &str| match nodes.iter().find(|v| !ok(v)) {
            Some(bad) => Err(format!("{bad} {what}")),
            None if nodes.is_empty() => Err("the path selects nothing".to_string()),
            None => Ok(()),
        };
        match self {
            Rule::Exists => match nodes.is_empty() {
                true => Err("the path selects nothing".into()),
                false => Ok(()),
            },
            Rule::NotEmpty => each(&|v| !is_empty(v), "is empty"),
            Rule::Len(op, n) => {
                let len = if singular {
                    match nodes {
                        [one] => length(one).ok_or_else(|| format!("{one} has no length"))?,
                        _ => return Err("the path selects nothing".to_string()),
                    }
                } else {
                    nodes.len() as u64
                };
                match op.holds(len, *n) {
                    true => Ok(()),
                    false => Err(format!("length {len} is not {} {n}", op_str(*op))),
                }
            }
            Rule::Matches(re) => each(
                &|v| v.as_str().is_some_and(|s| re.is_match(s)),
                &format!("does not match `{re}`"),
            ),
            Rule::Equals(want) => each(&|v| values_equal(v, want), &format!("is not {want}")),
            Rule::NotEquals(want) => each(&|v| !values_equal(v, want), &format!("equals {want}")),
            Rule::Compare(op, n) => each(
                &|v| v.as_f64().is_some_and(|x| op.holds(x, *n)),
                &format!("is not a number {} {n}", op_str(*op)),
            ),
        }
    }
}

/// Whether a JSONPath is singular (RFC 9535 §2.3.5.1): names and indices only, so it
/// selects at most one node. Wildcards, descendants, filters, slices and unions are not.
pub fn is_singular(path: &str) -> bool {
    let mut in_quote: Option<char> = None;
    let mut depth = 0usize;
    let mut prev = '\0';
    for c in path.chars() {
        match in_quote {
            Some(q) => {
                if c == q && prev != '\\' {
                    in_quote = None;
                }
            }
            None => match c {
                '\'' | '"' => in_quote = Some(c),
                '[' => depth += 1,
                ']' => depth = depth.saturating_sub(1),
                '*' | '?' => return false,
                '.' if prev == '.' => return false,
                ',' | ':' if depth > 0 => return false,
                _ => {}
            },
        }
        prev = c;
    }
    true
}

fn op_str(op: CmpOp) -> &'static str {
    CmpOp::TOKENS
        .iter()
        .find(|(_, o)| *o == op)
        .map_or("?", |(t, _)| t)
}

/// `== 3` is a number, `== "x"` and `== x` are strings, `== true` a boolean.
fn parse_value(s: &str) -> Value {
    serde_json::from_str(s).unwrap_or_else(|_| Value::String(s.to_string()))
}

fn values_equal(a: &Value, b: &Value) -> bool {
    match (a.as_f64(), b.as_f64()) {
        (Some(x), Some(y)) => x == y,
        _ => a == b,
    }
}

fn length(v: &Value) -> Option<u64> {
    match v {
        Value::Array(a) => Some(a.len() as u64),
        Value::String(s) => Some(s.chars().count() as u64),
        Value::Object(o) => Some(o.len() as u64),
        _ => None,
    }
}

fn is_empty(v: &Value) -> bool {
    v.is_null() || length(v) == Some(0)
}

fn first_line(s: &str) -> String {
    s.lines()
        .rev()
        .find(|l| l.starts_with("error:"))
        .unwrap_or(s)
        .trim_start_matches("error: ")
        .to_string()
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn check(rule: &str, nodes: &[Value]) -> Result<(), String> {
        let refs: Vec<&Value> = nodes.iter().collect();
        Rule::parse(rule).unwrap().check(&refs, nodes.len() <= 1)
    }

    #[test]
    fn singular_paths() {
        assert!(is_singular("$.results"));
        assert!(is_singular("$.a[0]['b.c']"));
        assert!(is_singular("$['a*b']"));
        assert!(!is_singular("$.results[*]"));
        assert!(!is_singular("$..url"));
        assert!(!is_singular("$.a[?@.x > 1]"));
        assert!(!is_singular("$.a[0:2]"));
        assert!(!is_singular("$.a[0,1]"));
    }

    #[test]
    fn len_counts_nodes_on_a_wildcard_path_even_when_one_is_selected() {
        let obj = json!({"url": "a", "title": "b"});
        assert!(
            Rule::parse("len == 1")
                .unwrap()
                .check(&[&obj], false)
                .is_ok()
        );
        assert!(
            Rule::parse("len == 2")
                .unwrap()
                .check(&[&obj], true)
                .is_ok()
        );
    }

    #[test]
    fn parses_every_form_of_the_grammar() {
        assert!(matches!(
            Rule::parse("len >= 1"),
            Ok(Rule::Len(CmpOp::Ge, 1))
        ));
        assert!(matches!(Rule::parse("len==0"), Ok(Rule::Len(CmpOp::Eq, 0))));
        assert!(matches!(
            Rule::parse("matches ^https?://"),
            Ok(Rule::Matches(_))
        ));
        assert!(matches!(Rule::parse("== \"x\""), Ok(Rule::Equals(Value::String(s))) if s == "x"));
        assert!(matches!(Rule::parse("== ok"), Ok(Rule::Equals(Value::String(s))) if s == "ok"));
        assert!(matches!(Rule::parse("!= 3"), Ok(Rule::NotEquals(v)) if v == json!(3)));
        assert!(matches!(Rule::parse("> 0.5"), Ok(Rule::Compare(CmpOp::Gt, x)) if x == 0.5));
        assert!(matches!(Rule::parse("<= -2"), Ok(Rule::Compare(CmpOp::Le, x)) if x == -2.0));
        assert!(matches!(Rule::parse(" exists "), Ok(Rule::Exists)));
        assert!(matches!(Rule::parse("not_empty"), Ok(Rule::NotEmpty)));
    }

    #[test]
    fn rejects_malformed_rules_with_a_hint() {
        let e = Rule::parse("length >= 1").unwrap_err();
        assert_eq!(e.message, "unknown rule `length >= 1`");
        assert!(e.help.starts_with("did you mean `len`?"), "{}", e.help);
        assert!(Rule::parse("len >= x").is_err());
        assert!(Rule::parse("len 3").is_err());
        assert!(Rule::parse("> many").is_err());
        assert!(Rule::parse("==").is_err());
        assert!(
            Rule::parse("matches ^(https")
                .unwrap_err()
                .message
                .starts_with("invalid regex")
        );
    }

    #[test]
    fn checks_selected_values() {
        assert!(check("len >= 1", &[json!([1])]).is_ok());
        assert!(check("len >= 1", &[json!([])]).is_err());
        assert!(check("len == 2", &[json!("a"), json!("b")]).is_ok());
        assert!(
            check(
                "matches ^https?://",
                &[json!("https://a"), json!("http://b")]
            )
            .is_ok()
        );
        assert!(check("matches ^https?://", &[json!("ftp://a")]).is_err());
        assert!(
            check("matches x", &[]).is_err(),
            "nothing selected is a failure, not a vacuous pass"
        );
        assert!(check("== 3", &[json!(3.0)]).is_ok());
        assert!(check("!= 3", &[json!(4), json!(3)]).is_err());
        assert!(
            check("!= 3", &[]).is_err(),
            "nothing selected fails every rule but len"
        );
        assert!(check("> 0.5", &[json!(0.7)]).is_ok());
        assert!(check("> 0.5", &[json!("0.7")]).is_err());
        assert!(check("exists", &[json!(null)]).is_ok());
        assert!(check("not_empty", &[json!(null)]).is_err());
        assert!(check("not_empty", &[json!({"a": 1})]).is_ok());
    }
}
