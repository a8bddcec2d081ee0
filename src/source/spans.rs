//! The span index: for every value of a YAML or JSON document, by JSON Pointer, the byte
//! range of its key and of the value — what lets a diagnostic put a caret under the
//! offending key. Built from the event stream of a YAML parser that reports positions.

use std::collections::{HashMap, HashSet};
use std::ops::Range;

use saphyr_parser::{Event, Parser, Span};

use super::join;

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
    pub fn build(text: &str) -> (SpanIndex, Vec<(String, Range<usize>)>) {
        let bytes = CharToByte::new(text);
        let mut index = SpanIndex::default();
        let mut duplicates = Vec::new();
        let mut stack: Vec<Frame> = Vec::new();
        // Depth inside a complex (non-scalar) mapping key, whose contents are not indexed.
        let mut skip = 0usize;
        for item in Parser::new_from_str(text) {
            let Ok((event, span)) = item else { break };
            let range = bytes.range(span);
            let opens = matches!(event, Event::MappingStart(..) | Event::SequenceStart(..));
            let closes = matches!(event, Event::MappingEnd | Event::SequenceEnd);
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
        (index, duplicates)
    }

    /// The entry at a pointer.
    pub fn get(&self, pointer: &str) -> Option<&Entry> {
        self.entries.get(pointer)
    }
}

/// The YAML parser counts characters; diagnostics need bytes.
struct CharToByte<'a> {
    text: &'a str,
    ascii: bool,
}

impl CharToByte<'_> {
    fn new(text: &str) -> CharToByte<'_> {
        CharToByte {
            text,
            ascii: text.is_ascii(),
        }
    }

    fn range(&self, span: Span) -> Range<usize> {
        let (start, end) = (span.start.index(), span.end.index().max(span.start.index()));
        if self.ascii {
            return start.min(self.text.len())..end.min(self.text.len());
        }
        let mut iter = self
            .text
            .char_indices()
            .map(|(b, _)| b)
            .chain([self.text.len()]);
        let s = iter.nth(start).unwrap_or(self.text.len());
        let e = if end > start {
            iter.nth(end - start - 1).unwrap_or(self.text.len())
        } else {
            s
        };
        s..e
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
        let (idx, dups) = SpanIndex::build(text);
        assert!(dups.is_empty());
        assert_eq!(slice(text, &idx, "/skill"), ("skill", "x"));
        assert_eq!(slice(text, &idx, "/pre/tools/1"), ("", "\"b\""));
        assert_eq!(slice(text, &idx, "/pre/n"), ("n", "3"));
        assert_eq!(slice(text, &idx, "/list/0/k"), ("k", "v"));
    }

    #[test]
    fn indexes_json_and_non_ascii_text() {
        let text = "{\"模型\": \"检索\", \"a\": {\"b/c\": [1, 2]}}";
        let (idx, _) = SpanIndex::build(text);
        assert_eq!(slice(text, &idx, "/模型"), ("\"模型\"", "\"检索\""));
        assert_eq!(slice(text, &idx, "/a/b~1c/1"), ("", "2"));
    }

    #[test]
    fn reports_duplicate_keys() {
        let (_, dups) = SpanIndex::build("a: 1\nb: 2\na: 3\n");
        assert_eq!(dups.len(), 1);
        assert_eq!(dups[0].0, "a");
        assert_eq!(dups[0].1, 10..11);
    }
}
