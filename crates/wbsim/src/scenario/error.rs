//! The error type for scenario files: every problem of a file at once.

use std::fmt;

/// Longest value echoed back in a message, in characters.
pub const MAX_ECHO_CHARS: usize = 80;

/// One problem, pointing at the file, line, column and key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Problem {
    /// The scenario file as given by the caller.
    pub file: String,
    /// 1-based line of the offending key or value, when known.
    pub line: Option<usize>,
    /// 1-based column, in characters, of the key (or value), when known.
    pub column: Option<usize>,
    /// Dotted key path with array indexes, e.g. `machine.zone[1].size_mib`.
    pub key: Option<String>,
    /// What is wrong and what is allowed.
    pub message: String,
}

/// All problems of a scenario file, sorted by line then column (problems
/// of the whole file first). Never empty.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScenarioError {
    pub problems: Vec<Problem>,
}

impl ScenarioError {
    /// An error of one problem not tied to a line or key (e.g. the file
    /// cannot be read).
    pub fn whole_file(file: impl Into<String>, message: impl Into<String>) -> Self {
        ScenarioError::new(vec![Problem {
            file: file.into(),
            line: None,
            column: None,
            key: None,
            message: message.into(),
        }])
    }

    /// An error of these problems, sorted by line, then column.
    pub fn new(mut problems: Vec<Problem>) -> Self {
        problems.sort_by_key(|p| (p.line, p.column));
        ScenarioError { problems }
    }

    /// The first problem (by line).
    pub fn first(&self) -> Option<&Problem> {
        self.problems.first()
    }
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.file)?;
        if let Some(line) = self.line {
            write!(f, ":{line}")?;
            if let Some(column) = self.column {
                write!(f, ":{column}")?;
            }
        }
        write!(f, ": ")?;
        if let Some(key) = &self.key {
            write!(f, "{key}: ")?;
        }
        write!(f, "{}", self.message)
    }
}

impl fmt::Display for ScenarioError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, p) in self.problems.iter().enumerate() {
            if i > 0 {
                writeln!(f)?;
            }
            write!(f, "{p}")?;
        }
        Ok(())
    }
}

impl std::error::Error for ScenarioError {}

/// `s` cut to [`MAX_ECHO_CHARS`] characters, with `…` when cut.
pub fn echo(s: &str) -> String {
    match s.char_indices().nth(MAX_ECHO_CHARS) {
        None => s.to_string(),
        Some((i, _)) => format!("{}…", &s[..i]),
    }
}

/// `message` with every word longer than [`MAX_ECHO_CHARS`] cut by [`echo`]
/// (for messages of other parsers that quote what they were given).
pub fn echo_words(message: &str) -> String {
    if message.chars().count() <= MAX_ECHO_CHARS {
        return message.to_string();
    }
    let words: Vec<String> = message.split(' ').map(echo).collect();
    words.join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn problem(line: Option<usize>, column: Option<usize>, key: Option<&str>) -> Problem {
        Problem {
            file: "a.toml".into(),
            line,
            column,
            key: key.map(String::from),
            message: "wrong".into(),
        }
    }

    #[test]
    fn display_with_all_parts() {
        let e = ScenarioError::new(vec![Problem {
            message: "-5 is out of range; allowed: 1 to 65536 MiB".into(),
            ..problem(Some(7), Some(12), Some("machine.zone[1].size_mib"))
        }]);
        assert_eq!(
            e.to_string(),
            "a.toml:7:12: machine.zone[1].size_mib: -5 is out of range; allowed: 1 to 65536 MiB"
        );
    }

    #[test]
    fn display_without_line_or_key() {
        let e = ScenarioError::whole_file("b.toml", "cannot read file: gone");
        assert_eq!(e.to_string(), "b.toml: cannot read file: gone");
        let p = Problem {
            line: Some(3),
            ..e.problems[0].clone()
        };
        assert_eq!(p.to_string(), "b.toml:3: cannot read file: gone");
    }

    #[test]
    fn problems_print_one_per_line_sorted_by_line_then_column() {
        let e = ScenarioError::new(vec![
            problem(Some(9), Some(1), Some("c")),
            problem(Some(2), Some(5), Some("b")),
            problem(None, None, Some("kernel")),
            problem(Some(2), Some(1), Some("a")),
        ]);
        assert_eq!(
            e.to_string(),
            "a.toml: kernel: wrong\na.toml:2:1: a: wrong\na.toml:2:5: b: wrong\na.toml:9:1: c: wrong"
        );
    }

    #[test]
    fn echo_cuts_long_values_at_80_characters() {
        assert_eq!(echo("short"), "short");
        let long = "é".repeat(100);
        let cut = echo(&long);
        assert_eq!(cut.chars().count(), 81);
        assert!(cut.ends_with('…'));
        assert_eq!(echo(&"x".repeat(80)), "x".repeat(80));
    }
}
