//! The placeholders a `command` target's argv may hold (`{input}`, `{mcp_url}`, …): how an
//! argument is cut into text and placeholders, checked by `check` and filled per cell by
//! the target. Never through a shell: each argument stays one argument.

/// The placeholders, in the order the docs list them.
pub const PLACEHOLDERS: [&str; 6] = [
    "input",
    "skill",
    "run_id",
    "tools_url",
    "mcp_url",
    "mcp_config",
];

/// A piece of an argument.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Piece<'a> {
    /// Text taken as written (an escaped `{{name}}` comes back as `{name}`).
    Text(&'a str),
    /// `{name}`, known or not.
    Placeholder(&'a str),
}

/// Whether `s` may name a placeholder: a lowercase letter or `_`, then lowercase letters,
/// digits and `_`. Other braces (`{}`, `{"a": 1}`, `{X}`) are text.
fn is_name(s: &str) -> bool {
    let mut chars = s.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_lowercase() || c == '_')
        && chars.all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
}

/// Cuts an argument into text and placeholders (known or not: `check` names the likely
/// typos, the others stay text when filled). `{{input}}` (any placeholder's name doubled)
/// is the text `{input}`; `${name}` is text (a shell's or `${VAR}` expansion).
pub fn pieces(arg: &str) -> Vec<Piece<'_>> {
    let mut out = Vec::new();
    let mut text_start = 0;
    let mut i = 0;
    let bytes = arg.as_bytes();
    while i < bytes.len() {
        if bytes[i] != b'{' {
            i += 1;
            continue;
        }
        // `{{name}}` of a placeholder's name: the literal `{name}`.
        if arg[i..].starts_with("{{")
            && let Some(end) = arg[i + 2..].find("}}")
            && PLACEHOLDERS.contains(&&arg[i + 2..i + 2 + end])
        {
            if text_start < i {
                out.push(Piece::Text(&arg[text_start..i]));
            }
            out.push(Piece::Text(&arg[i + 1..i + 3 + end]));
            i += end + 4;
            text_start = i;
            continue;
        }
        if let Some(end) = arg[i + 1..].find('}')
            && is_name(&arg[i + 1..i + 1 + end])
            && !(i > 0 && bytes[i - 1] == b'$')
        {
            if text_start < i {
                out.push(Piece::Text(&arg[text_start..i]));
            }
            out.push(Piece::Placeholder(&arg[i + 1..i + 1 + end]));
            i += end + 2;
            text_start = i;
            continue;
        }
        i += 1;
    }
    if text_start < arg.len() {
        out.push(Piece::Text(&arg[text_start..]));
    }
    out
}

/// Whether any argument uses the placeholder `name`.
pub fn uses(argv: &[String], name: &str) -> bool {
    argv.iter()
        .any(|a| pieces(a).contains(&Piece::Placeholder(name)))
}

/// Fills an argument's placeholders with `value(name)`; an unknown one (which `check`
/// rejects) stays as written.
pub fn fill(arg: &str, value: impl Fn(&str) -> Option<String>) -> String {
    let mut out = String::with_capacity(arg.len());
    for piece in pieces(arg) {
        match piece {
            Piece::Text(t) => out.push_str(t),
            Piece::Placeholder(name) => match value(name) {
                Some(v) => out.push_str(&v),
                None => {
                    out.push('{');
                    out.push_str(name);
                    out.push('}');
                }
            },
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arguments_are_cut_into_text_and_placeholders() {
        use Piece::*;
        assert_eq!(pieces("{input}"), [Placeholder("input")]);
        assert_eq!(
            pieces("--prompt={input}!"),
            [Text("--prompt="), Placeholder("input"), Text("!")]
        );
        assert_eq!(pieces("{{input}} x"), [Text("{input}"), Text(" x")]);
        assert_eq!(pieces("{{x}}"), [Text("{"), Placeholder("x"), Text("}")]);
        assert_eq!(pieces("${home}/{}"), [Text("${home}/{}")]);
        assert_eq!(pieces(r#"{"a": 1} {X}"#), [Text(r#"{"a": 1} {X}"#)]);
        assert_eq!(pieces("{a}{b}"), [Placeholder("a"), Placeholder("b")]);
        assert_eq!(pieces("{"), [Text("{")]);
        assert_eq!(
            pieces("é{skill}é"),
            [Text("é"), Placeholder("skill"), Text("é")]
        );
        let filled = fill("-c={mcp_url}/{inptu}", |n| {
            (n == "mcp_url").then(|| "U".into())
        });
        assert_eq!(filled, "-c=U/{inptu}");
        assert!(uses(&["a".into(), "x{mcp_config}".into()], "mcp_config"));
    }
}
