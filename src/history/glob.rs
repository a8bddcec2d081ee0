//! `--history 'logs/*.jsonl'`: a pattern standing for the files it matches, for logs
//! rotated by hour — `*` (any run of characters but `/`), `?` (one character) and `[...]`
//! (one of a set or range, `[!...]` none of it) in any component of the path; a name
//! starting with `.` is matched only by a pattern starting with `.`. The matches come in
//! name order, so hourly files come in time order.

use std::path::{Component, Path, PathBuf};

/// Whether `path` is a pattern rather than a name.
pub(super) fn is_pattern(path: &Path) -> bool {
    path.to_string_lossy().contains(['*', '?', '['])
}

/// The regular files and links to them that `pattern` matches, in name order.
pub(super) fn expand(pattern: &Path) -> Vec<PathBuf> {
    let mut found = vec![PathBuf::new()];
    let parts: Vec<Component<'_>> = pattern.components().collect();
    for (i, part) in parts.iter().enumerate() {
        let last = i + 1 == parts.len();
        let text = part.as_os_str().to_string_lossy();
        if !matches!(part, Component::Normal(_)) || !is_pattern(Path::new(&*text)) {
            found.iter_mut().for_each(|p| p.push(part));
            continue;
        }
        let mut next = Vec::new();
        for dir in &found {
            let listed = if dir.as_os_str().is_empty() {
                Path::new(".")
            } else {
                dir.as_path()
            };
            let Ok(entries) = std::fs::read_dir(listed) else {
                continue;
            };
            let mut names: Vec<String> = entries
                .filter_map(|e| e.ok()?.file_name().into_string().ok())
                .filter(|name| matches(&text, name))
                .collect();
            names.sort();
            next.extend(names.into_iter().map(|n| dir.join(n)));
        }
        found = next;
        if !last {
            found.retain(|p| p.is_dir());
        }
    }
    found.retain(|p| p.is_file());
    found
}

/// Whether `name` matches the one-component `pattern`.
fn matches(pattern: &str, name: &str) -> bool {
    if name.starts_with('.') && !pattern.starts_with('.') {
        return false;
    }
    let (p, n): (Vec<char>, Vec<char>) = (pattern.chars().collect(), name.chars().collect());
    match_from(&p, &n)
}

fn match_from(p: &[char], n: &[char]) -> bool {
    match p.first() {
        None => n.is_empty(),
        Some('*') => (0..=n.len()).any(|skip| match_from(&p[1..], &n[skip..])),
        Some('?') => !n.is_empty() && match_from(&p[1..], &n[1..]),
        Some('[') => match (set(&p[1..]), n.first()) {
            (Some((hit, rest)), Some(c)) => hit(*c) && match_from(rest, &n[1..]),
            // An unclosed `[` is itself.
            (None, Some('[')) => match_from(&p[1..], &n[1..]),
            _ => false,
        },
        Some(c) => n.first() == Some(c) && match_from(&p[1..], &n[1..]),
    }
}

/// The set after a `[`: a test for one character, and the pattern after its `]`.
#[expect(clippy::type_complexity, reason = "a closure and a slice, used once")]
fn set(p: &[char]) -> Option<(Box<dyn Fn(char) -> bool + '_>, &[char])> {
    let negated = matches!(p.first(), Some('!' | '^'));
    let body = &p[usize::from(negated)..];
    // A `]` first is in the set.
    let end = body.iter().skip(1).position(|c| *c == ']')? + 1;
    let items = &body[..end];
    let hit = move |c: char| {
        let mut i = 0;
        let mut any = false;
        while i < items.len() {
            if i + 2 < items.len() && items[i + 1] == '-' {
                any |= (items[i]..=items[i + 2]).contains(&c);
                i += 3;
            } else {
                any |= items[i] == c;
                i += 1;
            }
        }
        any != negated
    };
    Some((Box::new(hit), &body[end + 1..]))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn patterns_match_one_component() {
        assert!(matches("*.jsonl", "2026-12-01T08.jsonl"));
        assert!(!matches("*.jsonl", ".hidden.jsonl"));
        assert!(matches("app-0?.jsonl", "app-07.jsonl") && !matches("app-0?.jsonl", "app-7.jsonl"));
        assert!(
            matches("h[0-2][0-9].jsonl", "h23.jsonl") && !matches("h[0-2][0-9].jsonl", "h33.jsonl")
        );
        assert!(matches("h[!a]", "hb") && !matches("h[!a]", "ha"));
        assert!(matches("a[b", "a[b"));
        assert!(is_pattern(Path::new("logs/*/x")) && !is_pattern(Path::new("logs/x")));
    }

    #[test]
    fn a_pattern_expands_to_the_files_in_name_order() {
        let dir = tempfile::tempdir().unwrap();
        for d in ["12-01", "12-02"] {
            std::fs::create_dir_all(dir.path().join(d)).unwrap();
            for h in ["09", "08"] {
                std::fs::write(dir.path().join(d).join(format!("h{h}.jsonl")), "").unwrap();
            }
        }
        std::fs::create_dir_all(dir.path().join("12-02/h10.jsonl")).unwrap();
        let found = expand(&dir.path().join("12-0*/h*.jsonl"));
        let names: Vec<String> = found
            .iter()
            .map(|p| p.strip_prefix(dir.path()).unwrap().display().to_string())
            .collect();
        assert_eq!(
            names,
            [
                "12-01/h08.jsonl",
                "12-01/h09.jsonl",
                "12-02/h08.jsonl",
                "12-02/h09.jsonl"
            ]
        );
        assert!(expand(&dir.path().join("*.yaml")).is_empty());
    }
}
