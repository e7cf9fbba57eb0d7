//! The error context and the table and field accessors the section
//! validators share: typed reads with ranges, key checks, and errors that
//! name the file, line and key.

use std::ops::Range;

use super::Result;
use crate::scenario::tree::{line_of, Entry, Node, Value};
use crate::scenario::ScenarioError;

/// Where errors are reported.
pub(super) struct Cx<'a> {
    pub(super) text: &'a str,
    pub(super) file: &'a str,
}

impl Cx<'_> {
    pub(super) fn err(
        &self,
        span: Option<&Range<usize>>,
        key: &str,
        message: String,
    ) -> ScenarioError {
        ScenarioError {
            file: self.file.to_string(),
            line: span.map(|s| line_of(self.text, s.start)),
            key: (!key.is_empty()).then(|| key.to_string()),
            message,
        }
    }
}

/// A table together with its dotted path (empty for the document root).
pub(super) struct Table<'a> {
    pub(super) path: String,
    pub(super) span: Option<&'a Range<usize>>,
    pub(super) entries: &'a [Entry],
}

/// A key's value, with the span to report problems at.
pub(super) struct Field<'a> {
    pub(super) key: String,
    pub(super) span: Option<&'a Range<usize>>,
    pub(super) value: &'a Value,
}

impl<'a> Table<'a> {
    pub(super) fn new(cx: &Cx, node: &'a Node, path: String) -> Result<Self> {
        match &node.value {
            Value::Table(entries) => Ok(Table {
                path,
                span: node.span.as_ref(),
                entries,
            }),
            other => Err(cx.err(
                node.span.as_ref(),
                &path,
                format!("expected a table, found {}", other.describe()),
            )),
        }
    }

    pub(super) fn key(&self, name: &str) -> String {
        if self.path.is_empty() {
            name.to_string()
        } else {
            format!("{}.{name}", self.path)
        }
    }

    pub(super) fn check_keys(&self, cx: &Cx, allowed: &[&str]) -> Result<()> {
        match self
            .entries
            .iter()
            .find(|e| !allowed.contains(&e.key.as_str()))
        {
            None => Ok(()),
            Some(e) => Err(cx.err(
                e.key_span.as_ref().or(self.span),
                &self.key(&e.key),
                format!(
                    "unknown key `{}`; allowed keys here: {}",
                    e.key,
                    allowed.join(", ")
                ),
            )),
        }
    }

    pub(super) fn field(&self, name: &str) -> Option<Field<'a>> {
        let entry = self.entries.iter().find(|e| e.key == name)?;
        Some(Field {
            key: self.key(name),
            span: entry
                .key_span
                .as_ref()
                .or(entry.value.span.as_ref())
                .or(self.span),
            value: &entry.value.value,
        })
    }

    /// Error for `key name`, at its line if present, else at the table header.
    pub(super) fn err_at(&self, cx: &Cx, name: &str, message: String) -> ScenarioError {
        let span = self.field(name).and_then(|f| f.span).or(self.span);
        cx.err(span, &self.key(name), message)
    }

    pub(super) fn missing(&self, cx: &Cx, name: &str, what: &str) -> ScenarioError {
        self.err_at(cx, name, format!("missing required key `{name}` ({what})"))
    }

    /// A sub-table `[name]`, if present.
    pub(super) fn table(&self, cx: &Cx, name: &str) -> Result<Option<Table<'a>>> {
        match self.entries.iter().find(|e| e.key == name) {
            None => Ok(None),
            Some(e) => Table::new(cx, &e.value, self.key(name)).map(Some),
        }
    }

    /// A required integer that must be greater than 0.
    pub(super) fn positive(&self, cx: &Cx, name: &str, what: &str) -> Result<u64> {
        self.int(cx, name, 1, i64::MAX)?
            .map(|n| n as u64)
            .ok_or_else(|| self.missing(cx, name, what))
    }

    /// An optional integer in `lo..=hi`.
    pub(super) fn int(&self, cx: &Cx, name: &str, lo: i64, hi: i64) -> Result<Option<i64>> {
        let Some(f) = self.field(name) else {
            return Ok(None);
        };
        let n = match f.value {
            Value::Int(n) => *n,
            other => return Err(f.wrong_type(cx, "an integer", other)),
        };
        if (lo..=hi).contains(&n) {
            return Ok(Some(n));
        }
        let allowed = match (lo, hi) {
            (1, i64::MAX) => "must be greater than 0".to_string(),
            (_, i64::MAX) => format!("must be at least {lo}"),
            _ => format!("must be between {lo} and {hi}"),
        };
        Err(cx.err(f.span, &f.key, format!("{allowed} (got {n})")))
    }

    /// An optional finite float (integers are accepted) that is `> 0` or `>= 0`.
    pub(super) fn float(&self, cx: &Cx, name: &str, zero_ok: bool) -> Result<Option<f64>> {
        let Some(f) = self.field(name) else {
            return Ok(None);
        };
        let x = match f.value {
            Value::Float(x) => *x,
            Value::Int(n) => *n as f64,
            other => return Err(f.wrong_type(cx, "a number", other)),
        };
        let ok = x.is_finite() && (x > 0.0 || (zero_ok && x == 0.0));
        if ok {
            return Ok(Some(x));
        }
        let allowed = if zero_ok {
            "must be a finite number >= 0"
        } else {
            "must be a finite number greater than 0"
        };
        Err(cx.err(f.span, &f.key, format!("{allowed} (got {x})")))
    }

    pub(super) fn string(&self, cx: &Cx, name: &str) -> Result<Option<(String, Field<'a>)>> {
        let Some(f) = self.field(name) else {
            return Ok(None);
        };
        match f.value {
            Value::Str(s) if s.trim().is_empty() => {
                Err(cx.err(f.span, &f.key, "must not be empty".to_string()))
            }
            Value::Str(s) => Ok(Some((s.clone(), f))),
            other => Err(f.wrong_type(cx, "a string", other)),
        }
    }

    pub(super) fn bool(&self, cx: &Cx, name: &str) -> Result<Option<bool>> {
        match self.field(name) {
            None => Ok(None),
            Some(Field {
                value: Value::Bool(b),
                ..
            }) => Ok(Some(*b)),
            Some(f) => Err(f.wrong_type(cx, "true or false", f.value)),
        }
    }

    /// `[[name]]` tables, at least one.
    pub(super) fn array_of_tables(&self, cx: &Cx, name: &str) -> Result<Vec<Table<'a>>> {
        let key = self.key(name);
        let at_least_one = format!("at least one [[{key}]] table is required");
        let Some(entry) = self.entries.iter().find(|e| e.key == name) else {
            return Err(cx.err(self.span, &key, at_least_one));
        };
        let Value::Array(items) = &entry.value.value else {
            return Err(cx.err(
                entry.key_span.as_ref().or(entry.value.span.as_ref()),
                &key,
                format!(
                    "expected an array of tables written as [[{key}]], found {}",
                    entry.value.value.describe()
                ),
            ));
        };
        if items.is_empty() {
            return Err(cx.err(entry.key_span.as_ref(), &key, at_least_one));
        }
        items
            .iter()
            .enumerate()
            .map(|(i, item)| Table::new(cx, item, format!("{key}[{i}]")))
            .collect()
    }
}

impl Field<'_> {
    pub(super) fn wrong_type(&self, cx: &Cx, expected: &str, found: &Value) -> ScenarioError {
        cx.err(
            self.span,
            &self.key,
            format!("expected {expected}, found {}", found.describe()),
        )
    }

    /// Error for a string that is not one of `allowed`.
    pub(super) fn not_one_of(
        &self,
        cx: &Cx,
        what: &str,
        got: &str,
        allowed: &[&str],
    ) -> ScenarioError {
        cx.err(
            self.span,
            &self.key,
            format!("unknown {what} `{got}`; allowed: {}", allowed.join(", ")),
        )
    }
}
