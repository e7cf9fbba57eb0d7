//! The problem collector and the schema-driven table checks the section
//! validators share: every key of a table is checked against its
//! [`Section`] (unknown keys, types, ranges, required keys, keys that apply
//! to one model only) and every problem is recorded; the accessors then
//! hand out only valid values, or the schema's default.

use std::cell::RefCell;
use std::ops::Range;

use crate::scenario::error::{echo, Problem};
use crate::scenario::schema::{self, Default, IntRule, Key, Kind, Section, Type};
use crate::scenario::tree::{line_col, Entry, Node, Value};

/// Where problems are reported, and the problems so far.
pub(super) struct Cx<'a> {
    text: &'a str,
    file: &'a str,
    problems: RefCell<Vec<Problem>>,
}

impl<'a> Cx<'a> {
    pub(super) fn new(text: &'a str, file: &'a str) -> Self {
        Cx {
            text,
            file,
            problems: RefCell::new(Vec::new()),
        }
    }

    /// Record a problem at `span` (key or value) about `key`.
    pub(super) fn report(&self, span: Option<&Range<usize>>, key: &str, message: String) {
        let at = span.map(|s| line_col(self.text, s.start));
        self.problems.borrow_mut().push(Problem {
            file: self.file.to_string(),
            line: at.map(|(l, _)| l),
            column: at.map(|(_, c)| c),
            key: (!key.is_empty()).then(|| key.to_string()),
            message,
        });
    }

    pub(super) fn into_problems(self) -> Vec<Problem> {
        self.problems.into_inner()
    }
}

/// A table with its dotted path (empty for the document root), checked
/// against its section.
pub(super) struct Table<'a> {
    pub(super) path: String,
    pub(super) span: Option<&'a Range<usize>>,
    pub(super) entries: &'a [Entry],
    section: &'static Section,
    /// Per entry: its value passed the schema's checks.
    valid: Vec<bool>,
}

/// A key's value, with the span to report problems at.
pub(super) struct Field<'a> {
    pub(super) key: String,
    pub(super) span: Option<&'a Range<usize>>,
    pub(super) value: &'a Value,
}

impl<'a> Table<'a> {
    /// Check `node` against the section at `section_path` (which must exist
    /// in the schema); `None`, reported, when it is not a table.
    pub(super) fn new(cx: &Cx, node: &'a Node, path: String, section_path: &str) -> Option<Self> {
        let Value::Table(entries) = &node.value else {
            cx.report(
                node.span.as_ref(),
                &path,
                format!(
                    "expected a table, found {}; allowed: a table of keys",
                    node.value.describe()
                ),
            );
            return None;
        };
        let section = schema::section(section_path)?;
        let mut t = Table {
            path,
            span: node.span.as_ref(),
            entries,
            section,
            valid: vec![false; entries.len()],
        };
        t.check(cx);
        Some(t)
    }

    pub(super) fn key(&self, name: &str) -> String {
        if self.path.is_empty() {
            name.to_string()
        } else {
            format!("{}.{name}", self.path)
        }
    }

    fn check(&mut self, cx: &Cx) {
        let children: Vec<&str> = self.section.children().collect();
        for (i, e) in self.entries.iter().enumerate() {
            let span = e.key_span.as_ref().or(e.value.span.as_ref()).or(self.span);
            let Some(def) = self.section.key(&e.key) else {
                if children.contains(&e.key.as_str()) {
                    self.valid[i] = true;
                    continue;
                }
                cx.report(
                    span,
                    &self.key(&echo(&e.key)),
                    format!(
                        "unknown key `{}`; allowed keys here: {}",
                        echo(&e.key),
                        self.section.allowed_names().join(", ")
                    ),
                );
                continue;
            };
            if let Some((disc, values)) = def.only {
                if let Some(d) = self.discriminant(disc) {
                    if !values.contains(&d) {
                        let only: Vec<String> =
                            values.iter().map(|v| format!("{disc} = \"{v}\"")).collect();
                        cx.report(
                            span,
                            &self.key(&e.key),
                            format!(
                                "does not apply to {disc} = \"{d}\"; allowed: only with {}",
                                only.join(" or ")
                            ),
                        );
                        continue;
                    }
                }
            }
            match check_value(&def, &e.value.value) {
                Ok(()) => self.valid[i] = true,
                Err(message) => cx.report(span, &self.key(&e.key), message),
            }
        }
        for def in self.section.keys {
            if def.default != Default::Required || self.entry(def.name).is_some() {
                continue;
            }
            let applies = match def.only {
                None => true,
                Some((disc, values)) => {
                    self.discriminant(disc).is_some_and(|d| values.contains(&d))
                }
            };
            if applies {
                cx.report(
                    self.span,
                    &self.key(def.name),
                    format!(
                        "missing required key `{}`; allowed: {}, e.g. {}",
                        def.name,
                        def.allowed(),
                        def.example
                    ),
                );
            }
        }
    }

    /// The value of string key `name` when it is one of its allowed values.
    fn discriminant(&self, name: &str) -> Option<&'a str> {
        let def = self.section.key(name)?;
        match (&self.entry(name)?.value.value, def.ty) {
            (Value::Str(s), Type::Enum(values)) if values.contains(&s.as_str()) => Some(s),
            _ => None,
        }
    }

    fn entry(&self, name: &str) -> Option<&'a Entry> {
        self.entries.iter().find(|e| e.key == name)
    }

    /// Key `name`, valid or not.
    pub(super) fn field(&self, name: &str) -> Option<Field<'a>> {
        let entry = self.entry(name)?;
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

    /// The value of key `name` if present and valid.
    fn valid_value(&self, name: &str) -> Option<&'a Value> {
        let i = self.entries.iter().position(|e| e.key == name)?;
        self.valid[i].then_some(&self.entries[i].value.value)
    }

    /// Whether key `name` is absent or valid.
    pub(super) fn ok(&self, name: &str) -> bool {
        self.entry(name).is_none() || self.valid_value(name).is_some()
    }

    fn default_of(&self, name: &str) -> Default {
        self.section
            .key(name)
            .map_or(Default::Absent(""), |k| k.default)
    }

    /// A valid integer.
    pub(super) fn int(&self, name: &str) -> Option<i64> {
        match self.valid_value(name)? {
            Value::Int(n) => Some(*n),
            _ => None,
        }
    }

    /// A valid integer, or the schema's default (0 when it has none).
    pub(super) fn int_or_default(&self, name: &str) -> i64 {
        self.int(name).unwrap_or(match self.default_of(name) {
            Default::Int(n) => n,
            _ => 0,
        })
    }

    /// A valid number, or the schema's default (0 when it has none).
    pub(super) fn float_or_default(&self, name: &str) -> f64 {
        match self.valid_value(name) {
            Some(Value::Float(x)) => *x,
            Some(Value::Int(n)) => *n as f64,
            _ => match self.default_of(name) {
                Default::Float(x) => x,
                _ => 0.0,
            },
        }
    }

    /// A valid boolean, or the schema's default.
    pub(super) fn bool_or_default(&self, name: &str) -> bool {
        match self.valid_value(name) {
            Some(Value::Bool(b)) => *b,
            _ => matches!(self.default_of(name), Default::Bool(true)),
        }
    }

    /// A valid string with its field.
    pub(super) fn str(&self, name: &str) -> Option<(&'a str, Field<'a>)> {
        match self.valid_value(name)? {
            Value::Str(s) => Some((s.as_str(), self.field(name)?)),
            _ => None,
        }
    }

    /// A valid string, or the schema's default.
    pub(super) fn str_or_default(&self, name: &str) -> Option<&'a str> {
        match self.str(name) {
            Some((s, _)) => Some(s),
            None if self.entry(name).is_some() => None,
            None => match self.default_of(name) {
                Default::Str(s) => Some(s),
                _ => None,
            },
        }
    }

    /// A valid array of names with its field.
    pub(super) fn names(&self, name: &str) -> Option<(Vec<&'a str>, Field<'a>)> {
        let Value::Array(items) = self.valid_value(name)? else {
            return None;
        };
        let names = items
            .iter()
            .filter_map(|n| match &n.value {
                Value::Str(s) => Some(s.as_str()),
                _ => None,
            })
            .collect();
        Some((names, self.field(name)?))
    }

    /// Report a problem about key `name`, at its line if present, else at
    /// the table header.
    pub(super) fn report(&self, cx: &Cx, name: &str, message: String) {
        let span = self.field(name).and_then(|f| f.span).or(self.span);
        cx.report(span, &self.key(name), message);
    }

    /// Sub-table `[name]`, if present and a table.
    pub(super) fn table(&self, cx: &Cx, name: &str) -> Option<Table<'a>> {
        let sub = self.sub_section(name)?;
        match self.entry(name) {
            None => {
                if sub.required {
                    cx.report(
                        self.span,
                        &self.key(name),
                        format!("missing required table; allowed: a [{}] table", sub.path),
                    );
                }
                None
            }
            Some(e) => Table::new(cx, &e.value, self.key(name), sub.path),
        }
    }

    fn sub_section(&self, name: &str) -> Option<&'static Section> {
        if self.section.path.is_empty() {
            schema::section(name)
        } else {
            schema::section(&format!("{}.{name}", self.section.path))
        }
    }

    /// `[[name]]` tables; at least one when the section is required.
    pub(super) fn array_of_tables(&self, cx: &Cx, name: &str) -> Vec<Table<'a>> {
        let Some(sub) = self.sub_section(name) else {
            return Vec::new();
        };
        debug_assert_eq!(sub.kind, Kind::ArrayOfTables);
        let key = self.key(name);
        let at_least_one = format!(
            "missing required table; allowed: one or more [[{}]] tables",
            sub.path
        );
        let Some(entry) = self.entry(name) else {
            if sub.required {
                cx.report(self.span, &key, at_least_one);
            }
            return Vec::new();
        };
        let Value::Array(items) = &entry.value.value else {
            cx.report(
                entry.key_span.as_ref().or(entry.value.span.as_ref()),
                &key,
                format!(
                    "expected an array of tables, found {}; allowed: tables written as [[{}]]",
                    entry.value.value.describe(),
                    sub.path
                ),
            );
            return Vec::new();
        };
        if items.is_empty() && sub.required {
            cx.report(entry.key_span.as_ref(), &key, at_least_one);
        }
        items
            .iter()
            .enumerate()
            .filter_map(|(i, item)| Table::new(cx, item, format!("{key}[{i}]"), sub.path))
            .collect()
    }
}

/// Check a value against its key's type and range.
fn check_value(def: &Key, value: &Value) -> Result<(), String> {
    let allowed = || def.allowed();
    match (def.ty, value) {
        (Type::Int { min, max, rule }, Value::Int(n)) => {
            let n = *n;
            if n < min || n > max {
                return Err(format!("{n} is out of range; allowed: {}", allowed()));
            }
            match rule {
                IntRule::MultipleOf(m) if n % m != 0 => Err(format!(
                    "{n} is not a multiple of {m}; allowed: {}",
                    allowed()
                )),
                IntRule::PowerOfTwo if !(n as u64).is_power_of_two() => {
                    Err(format!("{n} is not a power of two; allowed: {}", allowed()))
                }
                _ => Ok(()),
            }
        }
        (Type::IntOf(values), Value::Int(n)) if !values.contains(n) => {
            Err(format!("{n} is not allowed; allowed: {}", allowed()))
        }
        (Type::IntOf(_), Value::Int(_)) | (Type::Bool, Value::Bool(_)) => Ok(()),
        (
            Type::Float {
                min,
                min_inclusive,
                max,
            },
            Value::Float(_) | Value::Int(_),
        ) => {
            let x = match value {
                Value::Float(x) => *x,
                Value::Int(n) => *n as f64,
                _ => f64::NAN,
            };
            let above = x > min || (min_inclusive && x == min);
            if x.is_finite() && above && x <= max {
                Ok(())
            } else {
                Err(format!("{x} is out of range; allowed: {}", allowed()))
            }
        }
        (Type::Str, Value::Str(s)) if s.trim().is_empty() => {
            Err(format!("must not be empty; allowed: {}", allowed()))
        }
        (Type::Str, Value::Str(_)) => Ok(()),
        (Type::Enum(values), Value::Str(s)) if !values.contains(&s.as_str()) => Err(format!(
            "unknown value \"{}\"; allowed: {}",
            echo(s),
            allowed()
        )),
        (Type::Enum(_), Value::Str(_)) => Ok(()),
        (Type::KernelPreset, Value::Str(s)) => {
            if crate::kernel::preset_names().contains(&s.as_str()) {
                Ok(())
            } else {
                Err(format!(
                    "unknown kernel preset \"{}\"; allowed: {}",
                    echo(s),
                    allowed()
                ))
            }
        }
        (Type::Names { min, max }, Value::Array(items)) => {
            if let Some(bad) = items
                .iter()
                .find(|n| !matches!(&n.value, Value::Str(s) if !s.trim().is_empty()))
            {
                return Err(format!(
                    "expected names, found {} in the array; allowed: {}",
                    bad.value.describe(),
                    allowed()
                ));
            }
            if (min..=max).contains(&items.len()) {
                Ok(())
            } else {
                Err(format!("{} names; allowed: {}", items.len(), allowed()))
            }
        }
        (ty, other) => Err(format!(
            "expected {}, found {}; allowed: {}",
            ty.name(),
            other.describe(),
            allowed()
        )),
    }
}
