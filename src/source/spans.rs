//! The span index: for every value of a YAML or JSON document, by JSON Pointer, the byte
//! range of its key and of the value — what lets a diagnostic put a caret under the
//! offending key. Built from the event stream of a YAML parser that reports positions, in
//! one pass, linear in the text; nesting deeper than [`MAX_NESTING`] stops it at once.

use std::collections::{HashMap, HashSet};
use std::ops::Range;

use saphyr_parser::{Event, Parser, Span};

use super::join;

/// The deepest nesting of lists and mappings a file may have (the top-level mapping is
/// level 1). Deeper is refused where it starts, before the file is parsed into a value:
/// the YAML parsers take time quadratic in the depth, so a few hundred kilobytes of `[`
/// would otherwise take minutes.
pub const MAX_NESTING: usize = 64;

/// A file nested deeper than [`MAX_NESTING`]: where the first list or mapping too deep
/// starts (for flow nesting past 255 levels, where the parser gave up).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TooDeep {
    /// The opening of the list or mapping at level `MAX_NESTING + 1`, or the place past
    /// it where the parser gave up.
    pub span: Range<usize>,
    /// Whether `span` is that opening (or only the place the parser gave up).
    pub exact: bool,
}

/// A key given twice in one mapping, and where the second one is.
pub type Duplicate = (String, Range<usize>);

/// Where one value sits in the text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    /// The mapping key that holds the value, if it is held by a mapping.
    pub key: Option<Range<usize>>,
    /// The value (for a collection, where it starts).
    pub value: Range<usize>,
}

/// Spans by JSON Pointer (`""` is the root, `/a/0/b` a nested value).
#[derive(Debug, Default)]
pub struct SpanIndex {
    entries: HashMap<String, Entry>,
}

enum Frame {
    Map {
        pointer: String,
        key: Option<(String, Range<usize>)>,
        seen: HashSet<String>,
    },
    Seq {
        pointer: String,
        next: usize,
    },
}

impl SpanIndex {
    /// Indexes a text. A text the parser rejects gives an index of what came before the
    /// error (the value parser reports the error itself). Also returns duplicate keys.
    /// Refuses a text nested deeper than [`MAX_NESTING`].
    pub fn build(text: &str) -> Result<(SpanIndex, Vec<Duplicate>), TooDeep> {
        let bytes = CharToByte::new(text);
        let mut index = SpanIndex::default();
        let mut duplicates = Vec::new();
        let mut stack: Vec<Frame> = Vec::new();
        // Depth inside a complex (non-scalar) mapping key, whose contents are not indexed.
        let mut skip = 0usize;
        // Open lists and mappings, complex keys included.
        let mut depth = 0usize;
        for item in Parser::new_from_str(text) {
            let (event, span) = match item {
                Ok(next) => next,
                // The scanner looks ahead to the end of a flow collection before the first
                // event inside it, and gives up at 255 flow levels: too deep, with no event
                // at level `MAX_NESTING + 1` to point at; the place it gave up is where
                // the nesting is known to be too deep.
                Err(e) if e.info() == "recursion limit exceeded" => {
                    let at = bytes.byte(e.marker().index());
                    return Err(TooDeep {
                        span: at..(at + 1).min(text.len()),
                        exact: false,
                    });
                }
                Err(_) => break,
            };
            let range = bytes.range(span);
            let opens = matches!(event, Event::MappingStart(..) | Event::SequenceStart(..));
            let closes = matches!(event, Event::MappingEnd | Event::SequenceEnd);
            if opens {
                depth += 1;
                if depth > MAX_NESTING {
                    return Err(TooDeep {
                        span: range.start..(range.start + 1).min(text.len()),
                        exact: true,
                    });
                }
            } else if closes {
                depth = depth.saturating_sub(1);
            }
            if skip > 0 {
                skip = skip + usize::from(opens) - usize::from(closes);
                if skip == 0 {
                    // The complex key is complete: its value comes next, unindexed.
                    if let Some(Frame::Map { key, .. }) = stack.last_mut() {
                        *key = Some(("?".into(), range));
                    }
                }
                continue;
            }
            if closes {
                stack.pop();
                continue;
            }
            if !matches!(
                event,
                Event::Scalar(..)
                    | Event::Alias(..)
                    | Event::MappingStart(..)
                    | Event::SequenceStart(..)
            ) {
                continue;
            }
            // A node: a mapping key, or a value at some pointer.
            let (pointer, key_span) = match stack.last_mut() {
                None => (String::new(), None),
                Some(Frame::Map { pointer, key, seen }) => match key.take() {
                    None => {
                        if let Event::Scalar(k, ..) = &event {
                            if !seen.insert(k.to_string()) {
                                duplicates.push((k.to_string(), range.clone()));
                            }
                            *key = Some((k.to_string(), range));
                        } else if opens {
                            skip = 1;
                        } else {
                            *key = Some(("?".into(), range));
                        }
                        continue;
                    }
                    Some((k, k_span)) => (join(pointer, k), Some(k_span)),
                },
                Some(Frame::Seq { pointer, next }) => {
                    *next += 1;
                    (join(pointer, *next - 1), None)
                }
            };
            index.entries.entry(pointer.clone()).or_insert(Entry {
                key: key_span,
                value: range,
            });
            match event {
                Event::MappingStart(..) => stack.push(Frame::Map {
                    pointer,
                    key: None,
                    seen: HashSet::new(),
                }),
                Event::SequenceStart(..) => stack.push(Frame::Seq { pointer, next: 0 }),
                _ => {}
            }
        }
        Ok((index, duplicates))
    }

    /// The entry at a pointer.
    pub fn get(&self, pointer: &str) -> Option<&Entry> {
        self.entries.get(pointer)
    }
}

/// The YAML parser counts characters; diagnostics need bytes. For a text that is not all
/// ASCII, the byte offset of every [`STRIDE`]th character is kept, so a lookup walks at
/// most `STRIDE` characters (walking from the start each time made a large file with one
/// `é` take seconds).
struct CharToByte<'a> {
    text: &'a str,
    /// Byte offset of character `i * STRIDE`; empty for an ASCII text.
    marks: Vec<usize>,
}

const STRIDE: usize = 64;

impl CharToByte<'_> {
    fn new(text: &str) -> CharToByte<'_> {
        let marks = if text.is_ascii() {
            Vec::new()
        } else {
            text.char_indices()
                .step_by(STRIDE)
                .map(|(b, _)| b)
                .collect()
        };
        CharToByte { text, marks }
    }

    fn byte(&self, chars: usize) -> usize {
        if self.marks.is_empty() {
            return chars.min(self.text.len());
        }
        let Some(&from) = self.marks.get(chars / STRIDE) else {
            return self.text.len();
        };
        self.text[from..]
            .char_indices()
            .nth(chars % STRIDE)
            .map_or(self.text.len(), |(b, _)| from + b)
    }

    fn range(&self, span: Span) -> Range<usize> {
        let (start, end) = (span.start.index(), span.end.index().max(span.start.index()));
        self.byte(start)..self.byte(end)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn slice<'a>(text: &'a str, idx: &SpanIndex, p: &str) -> (&'a str, &'a str) {
        let e = idx.get(p).unwrap_or_else(|| panic!("no entry for {p}"));
        let key = e.key.clone().map_or("", |k| &text[k]);
        (key, &text[e.value.clone()])
    }

    #[test]
    fn indexes_block_yaml_keys_and_values() {
        let text = "skill: x\npre:\n  tools: [a, \"b\"]\n  n: 3\nlist:\n  - k: v\n";
        let (idx, dups) = SpanIndex::build(text).unwrap();
        assert!(dups.is_empty());
        assert_eq!(slice(text, &idx, "/skill"), ("skill", "x"));
        assert_eq!(slice(text, &idx, "/pre/tools/1"), ("", "\"b\""));
        assert_eq!(slice(text, &idx, "/pre/n"), ("n", "3"));
        assert_eq!(slice(text, &idx, "/list/0/k"), ("k", "v"));
    }

    #[test]
    fn indexes_json_and_non_ascii_text() {
        let text = "{\"模型\": \"检索\", \"a\": {\"b/c\": [1, 2]}}";
        let (idx, _) = SpanIndex::build(text).unwrap();
        assert_eq!(slice(text, &idx, "/模型"), ("\"模型\"", "\"检索\""));
        assert_eq!(slice(text, &idx, "/a/b~1c/1"), ("", "2"));
    }

    #[test]
    fn reports_duplicate_keys() {
        let (_, dups) = SpanIndex::build("a: 1\nb: 2\na: 3\n").unwrap();
        assert_eq!(dups.len(), 1);
        assert_eq!(dups[0].0, "a");
        assert_eq!(dups[0].1, 10..11);
    }

    #[test]
    fn maps_characters_to_bytes_past_many_strides() {
        let key = format!("{}x", "é".repeat(300));
        let text = format!("{key}: [a, b]\nz: 检索\n");
        let (idx, _) = SpanIndex::build(&text).unwrap();
        assert_eq!(slice(&text, &idx, &format!("/{key}")), (key.as_str(), "["));
        assert_eq!(slice(&text, &idx, &format!("/{key}/1")), ("", "b"));
        assert_eq!(slice(&text, &idx, "/z"), ("z", "检索"));
    }

    #[test]
    fn refuses_nesting_past_the_limit_where_it_starts() {
        let ok = format!(
            "a: {}{}\n",
            "[".repeat(MAX_NESTING - 1),
            "]".repeat(MAX_NESTING - 1)
        );
        assert!(SpanIndex::build(&ok).is_ok());
        let deep = format!("a: {}{}\n", "[".repeat(100_000), "]".repeat(100_000));
        let err = SpanIndex::build(&deep).unwrap_err();
        assert!(
            !err.exact && err.span.start > 3 + MAX_NESTING - 1,
            "{err:?}"
        );
        assert!(err.span.start < 3 + 1000, "{err:?}");
        let block: String = (0..=MAX_NESTING)
            .map(|i| format!("{}k:\n", " ".repeat(i)))
            .collect();
        let err = SpanIndex::build(&(block + &" ".repeat(MAX_NESTING + 1) + "v\n")).unwrap_err();
        assert!(err.exact);
        assert_eq!(err.span.start, block_start(MAX_NESTING));
    }

    /// Where line `i` of the block test (`i` spaces, `k:`) starts: its mapping opens there.
    fn block_start(i: usize) -> usize {
        (0..i).map(|j| j + 3).sum::<usize>() + i
    }
}
