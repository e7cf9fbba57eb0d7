//! A TOML document as a tree that remembers byte spans.
//!
//! `toml::Spanned` cannot be used directly for every key: keys introduced by
//! `[[a.b]]` headers and dotted keys carry no span, and `Spanned` then fails.
//! These types ask for spans the same way `Spanned` does and fall back to
//! "no span" instead of failing; callers use the nearest enclosing span.

use std::fmt;
use std::ops::Range;

use serde::de::{Deserialize, Deserializer, Error as _, IgnoredAny, MapAccess, SeqAccess, Visitor};

use super::error::{echo, Problem};
use super::ScenarioError;

// The protocol `toml::Spanned` uses to ask the deserializer for spans.
const SPANNED_NAME: &str = "$__serde_spanned_private_Spanned";
const SPANNED_START: &str = "$__serde_spanned_private_start";
const SPANNED_END: &str = "$__serde_spanned_private_end";
const SPANNED_VALUE: &str = "$__serde_spanned_private_value";
const SPANNED_FIELDS: &[&str] = &[SPANNED_START, SPANNED_END, SPANNED_VALUE];
// How toml hands datetimes to a visitor.
const DATETIME_FIELD: &str = "$__toml_private_datetime";

/// A value with its span, if the deserializer provided one.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Node {
    pub span: Option<Range<usize>>,
    pub value: Value,
}

#[derive(Debug, Clone, PartialEq)]
pub(super) enum Value {
    Int(i64),
    Float(f64),
    Bool(bool),
    Str(String),
    Datetime,
    Array(Vec<Node>),
    Table(Vec<Entry>),
}

/// A `key = value` pair of a table, in document order.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Entry {
    pub key: String,
    pub key_span: Option<Range<usize>>,
    pub value: Node,
}

impl Value {
    /// "an integer", "a table", ... for error messages.
    pub fn describe(&self) -> String {
        match self {
            Value::Int(n) => format!("an integer ({n})"),
            Value::Float(x) => format!("a float ({x})"),
            Value::Bool(b) => format!("a boolean ({b})"),
            Value::Str(s) => format!("a string ({:?})", echo(s)),
            Value::Datetime => "a date/time".to_string(),
            Value::Array(_) => "an array".to_string(),
            Value::Table(_) => "a table".to_string(),
        }
    }
}

/// Parse TOML text into a spanned tree; syntax errors point at their line.
pub(super) fn parse(text: &str, file: &str) -> Result<Node, ScenarioError> {
    let root: Result<Plain, toml::de::Error> = toml::from_str(text);
    match root {
        Ok(Plain(value)) => Ok(Node { span: None, value }),
        Err(e) => {
            let at = e.span().map(|s| line_col(text, s.start));
            Err(ScenarioError::new(vec![Problem {
                file: file.to_string(),
                line: at.map(|(l, _)| l),
                column: at.map(|(_, c)| c),
                key: None,
                message: format!("invalid TOML: {}", one_line(e.message())),
            }]))
        }
    }
}

/// Join a multi-line parser message into one line.
fn one_line(message: &str) -> String {
    let lines: Vec<&str> = message
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect();
    lines.join("; ")
}

/// 1-based line and column (in characters) of byte `offset`, clamped to
/// the text and moved back to a character boundary.
pub(super) fn line_col(text: &str, offset: usize) -> (usize, usize) {
    let mut end = offset.min(text.len());
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    let before = &text[..end];
    let line = 1 + before.bytes().filter(|&b| b == b'\n').count();
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    (line, 1 + before[line_start..].chars().count())
}

/// A value deserialized without asking for its span (also the root table).
struct Plain(Value);

impl<'de> Deserialize<'de> for Plain {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(NodeVisitor).map(|n| Plain(n.value))
    }
}

impl<'de> Deserialize<'de> for Node {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_struct(SPANNED_NAME, SPANNED_FIELDS, NodeVisitor)
    }
}

struct NodeVisitor;

fn plain(value: Value) -> Node {
    Node { span: None, value }
}

impl<'de> Visitor<'de> for NodeVisitor {
    type Value = Node;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a TOML value")
    }
    fn visit_bool<E>(self, v: bool) -> Result<Node, E> {
        Ok(plain(Value::Bool(v)))
    }
    fn visit_i64<E>(self, v: i64) -> Result<Node, E> {
        Ok(plain(Value::Int(v)))
    }
    fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<Node, E> {
        i64::try_from(v)
            .map(|v| plain(Value::Int(v)))
            .map_err(|_| E::custom("integer too large"))
    }
    fn visit_f64<E>(self, v: f64) -> Result<Node, E> {
        Ok(plain(Value::Float(v)))
    }
    fn visit_str<E>(self, v: &str) -> Result<Node, E> {
        Ok(plain(Value::Str(v.to_string())))
    }
    fn visit_string<E>(self, v: String) -> Result<Node, E> {
        Ok(plain(Value::Str(v)))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Node, A::Error> {
        let mut items = Vec::new();
        while let Some(item) = seq.next_element::<Node>()? {
            items.push(item);
        }
        Ok(plain(Value::Array(items)))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Node, A::Error> {
        let mut entries = Vec::new();
        while let Some(key) = map.next_key::<Key>()? {
            if entries.is_empty() && key.name == SPANNED_START {
                return spanned_value(map);
            }
            if entries.is_empty() && key.name == DATETIME_FIELD {
                map.next_value::<IgnoredAny>()?;
                return Ok(plain(Value::Datetime));
            }
            let value = map.next_value::<Node>()?;
            entries.push(Entry {
                key: key.name,
                key_span: key.span.clone(),
                value: Node {
                    span: value.span.or(key.span),
                    value: value.value,
                },
            });
        }
        Ok(plain(Value::Table(entries)))
    }
}

/// Read the rest of the spanned protocol map: start value, end, value.
fn spanned_value<'de, A: MapAccess<'de>>(mut map: A) -> Result<Node, A::Error> {
    let start: usize = map.next_value()?;
    expect_key(&mut map, SPANNED_END)?;
    let end: usize = map.next_value()?;
    expect_key(&mut map, SPANNED_VALUE)?;
    let Plain(value) = map.next_value()?;
    Ok(Node {
        span: Some(start..end),
        value,
    })
}

fn expect_key<'de, A: MapAccess<'de>>(map: &mut A, wanted: &str) -> Result<(), A::Error> {
    match map.next_key::<Key>()? {
        Some(k) if k.name == wanted => Ok(()),
        _ => Err(A::Error::custom("malformed spanned value")),
    }
}

/// A table key with its span, if the deserializer provided one.
struct Key {
    name: String,
    span: Option<Range<usize>>,
}

impl<'de> Deserialize<'de> for Key {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_struct(SPANNED_NAME, SPANNED_FIELDS, KeyVisitor)
    }
}

struct KeyVisitor;

impl<'de> Visitor<'de> for KeyVisitor {
    type Value = Key;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a table key")
    }
    fn visit_str<E>(self, v: &str) -> Result<Key, E> {
        Ok(Key {
            name: v.to_string(),
            span: None,
        })
    }
    fn visit_string<E>(self, v: String) -> Result<Key, E> {
        Ok(Key {
            name: v,
            span: None,
        })
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Key, A::Error> {
        expect_key(&mut map, SPANNED_START)?;
        let start: usize = map.next_value()?;
        expect_key(&mut map, SPANNED_END)?;
        let end: usize = map.next_value()?;
        expect_key(&mut map, SPANNED_VALUE)?;
        let name: String = map.next_value()?;
        Ok(Key {
            name,
            span: Some(start..end),
        })
    }
}
