//! A History line's `id` and `skill` without reading the rest into values: what a shard
//! needs to know of every line to take only its own (`--shard K/N`), at a fraction of the
//! cost of parsing it. The line is still checked whole — every number, string and nesting
//! level as [`Conversation::parse`](super::Conversation::parse) checks it — so that a line
//! is a conversation here exactly when it is one there.

use std::fmt;

use serde::de::{self, DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};

/// The scalar visits of a visitor that accepts any JSON value, each giving `$value`.
macro_rules! scalars {
    ($value:expr) => {
        fn visit_bool<E: de::Error>(self, _: bool) -> Result<Self::Value, E> {
            Ok($value)
        }
        fn visit_i64<E: de::Error>(self, _: i64) -> Result<Self::Value, E> {
            Ok($value)
        }
        fn visit_u64<E: de::Error>(self, _: u64) -> Result<Self::Value, E> {
            Ok($value)
        }
        fn visit_f64<E: de::Error>(self, _: f64) -> Result<Self::Value, E> {
            Ok($value)
        }
        fn visit_str<E: de::Error>(self, _: &str) -> Result<Self::Value, E> {
            Ok($value)
        }
        fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
            Ok($value)
        }
    };
}

/// What a line is, as far as sharding is concerned.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Peek {
    /// A conversation: its id and Skill (`""` when it has none), as it would be read.
    Conversation {
        /// Its `id`.
        id: String,
        /// Its `skill`.
        skill: String,
    },
    /// An OTLP export request: its conversations are known only once it is read.
    Otlp,
    /// Not a conversation (not JSON, not an object, no `id`): an [`Item::Bad`](super::Item::Bad).
    Bad,
}

/// What the line `text` (trimmed, not blank) is.
pub fn peek(text: &str) -> Peek {
    if super::is_otlp(text) {
        return Peek::Otlp;
    }
    match serde_json::from_str::<Head>(text) {
        Ok(Head {
            object: true,
            id: Some(id),
            skill,
        }) => Peek::Conversation {
            id,
            skill: skill.unwrap_or_default(),
        },
        _ => Peek::Bad,
    }
}

/// The top of a line: whether it is an object, its last `id` and `skill` strings (a
/// repeated key takes its last value, as in a parsed value).
#[derive(Default)]
struct Head {
    object: bool,
    id: Option<String>,
    skill: Option<String>,
}

impl<'de> de::Deserialize<'de> for Head {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Head, D::Error> {
        d.deserialize_any(HeadVisitor)
    }
}

struct HeadVisitor;

impl<'de> Visitor<'de> for HeadVisitor {
    type Value = Head;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Head, A::Error> {
        let mut head = Head {
            object: true,
            ..Head::default()
        };
        while let Some(key) = map.next_key::<Key>()? {
            match key {
                Key::Id => head.id = map.next_value::<Text>()?.0,
                Key::Skill => head.skill = map.next_value::<Text>()?.0,
                Key::Other => map.next_value::<Valid>().map(drop)?,
            }
        }
        Ok(head)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Head, A::Error> {
        ValidVisitor.visit_seq(seq).map(|_| Head::default())
    }

    scalars!(Head::default());
}

/// A key of the top object.
enum Key {
    Id,
    Skill,
    Other,
}

impl<'de> de::Deserialize<'de> for Key {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Key, D::Error> {
        struct KeyVisitor;
        impl Visitor<'_> for KeyVisitor {
            type Value = Key;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a key")
            }
            fn visit_str<E: de::Error>(self, key: &str) -> Result<Key, E> {
                Ok(match key {
                    "id" => Key::Id,
                    "skill" => Key::Skill,
                    _ => Key::Other,
                })
            }
        }
        d.deserialize_str(KeyVisitor)
    }
}

/// A value that is kept when it is a string (`as_str`), checked and dropped otherwise.
struct Text(Option<String>);

impl<'de> de::Deserialize<'de> for Text {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Text, D::Error> {
        struct TextVisitor;
        impl<'de> Visitor<'de> for TextVisitor {
            type Value = Text;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a JSON value")
            }
            fn visit_str<E: de::Error>(self, s: &str) -> Result<Text, E> {
                Ok(Text(Some(s.to_string())))
            }
            fn visit_bool<E: de::Error>(self, _: bool) -> Result<Text, E> {
                Ok(Text(None))
            }
            fn visit_i64<E: de::Error>(self, _: i64) -> Result<Text, E> {
                Ok(Text(None))
            }
            fn visit_u64<E: de::Error>(self, _: u64) -> Result<Text, E> {
                Ok(Text(None))
            }
            fn visit_f64<E: de::Error>(self, _: f64) -> Result<Text, E> {
                Ok(Text(None))
            }
            fn visit_unit<E: de::Error>(self) -> Result<Text, E> {
                Ok(Text(None))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Text, A::Error> {
                ValidVisitor.visit_seq(seq).map(|_| Text(None))
            }
            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Text, A::Error> {
                ValidVisitor.visit_map(map).map(|_| Text(None))
            }
        }
        d.deserialize_any(TextVisitor)
    }
}

/// Any JSON value, checked as a parse into a value checks it (numbers in range, strings
/// decoded, nesting within the limit) and dropped — unlike [`IgnoredAny`], which skips
/// numbers without reading them.
struct Valid;

impl<'de> de::Deserialize<'de> for Valid {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Valid, D::Error> {
        d.deserialize_any(ValidVisitor)
    }
}

struct ValidVisitor;

impl<'de> Visitor<'de> for ValidVisitor {
    type Value = Valid;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Valid, A::Error> {
        while seq.next_element::<Valid>()?.is_some() {}
        Ok(Valid)
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Valid, A::Error> {
        while map.next_key::<KeyOnly>()?.is_some() {
            map.next_value::<Valid>()?;
        }
        Ok(Valid)
    }

    scalars!(Valid);
}

/// A key, read and dropped (keys are strings: nothing to check but the string).
struct KeyOnly;

impl<'de> de::Deserialize<'de> for KeyOnly {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<KeyOnly, D::Error> {
        d.deserialize_str(IgnoredAny).map(|_| KeyOnly)
    }
}

impl<'de> DeserializeSeed<'de> for Valid {
    type Value = Valid;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Valid, D::Error> {
        <Valid as de::Deserialize>::deserialize(d)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::history::Conversation;

    /// Peek and the whole parse agree on what is a conversation, and on its id and skill.
    #[test]
    fn peek_agrees_with_the_parse() {
        let lines = [
            r#"{"id": "c1", "skill": "s", "trace": [{"tool": "t", "arguments": {"x": [1, 2.5, null, true]}}]}"#,
            r#"{"id": "c\u00e9\n", "skill": 3}"#,
            r#"{"id": "a", "id": "b", "skill": "x", "skill": "y"}"#,
            r#"{"id": 1}"#,
            r#"{"skill": "s"}"#,
            r#"[{"id": "c1"}]"#,
            r#""c1""#,
            r#"{"id": "c1", "n": 1e999}"#,
            r#"{"id": "c1", "n": 18446744073709551616}"#,
            r#"{"id": "c1", "s": "\ud800"}"#,
            r#"{"id": "c1"} x"#,
            r#"{"id": "c1", "x": {"y": [}}"#,
            r#"{"id": "c1", "skill": {"deep": {"a": [1]}}}"#,
            "not json",
        ];
        let deep = format!(
            "{{\"id\": \"c\", \"x\": {}{}}}",
            "[".repeat(200),
            "]".repeat(200)
        );
        for line in lines.iter().copied().chain([deep.as_str()]) {
            let expected = match Conversation::parse(line) {
                Ok(c) => Peek::Conversation {
                    id: c.id,
                    skill: c.skill,
                },
                Err(_) => Peek::Bad,
            };
            assert_eq!(peek(line), expected, "{line}");
        }
        assert_eq!(peek(r#"{"resourceSpans": []}"#), Peek::Otlp);
    }
}
