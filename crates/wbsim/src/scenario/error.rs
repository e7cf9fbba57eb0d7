//! The error type for scenario files.

use std::fmt;

/// A scenario problem, pointing at the file, line and key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScenarioError {
    /// The scenario file as given by the caller.
    pub file: String,
    /// 1-based line of the offending key or value, when known.
    pub line: Option<usize>,
    /// Dotted key path with array indexes, e.g. `machine.zone[1].size_mib`.
    pub key: Option<String>,
    /// What was wrong and what is allowed.
    pub message: String,
}

impl ScenarioError {
    /// An error that is not tied to a line or key (e.g. the file cannot be read).
    pub fn whole_file(file: impl Into<String>, message: impl Into<String>) -> Self {
        ScenarioError {
            file: file.into(),
            line: None,
            key: None,
            message: message.into(),
        }
    }
}

impl fmt::Display for ScenarioError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.file)?;
        if let Some(line) = self.line {
            write!(f, ":{line}")?;
        }
        write!(f, ": ")?;
        if let Some(key) = &self.key {
            write!(f, "key `{key}`: ")?;
        }
        write!(f, "{}", self.message)
    }
}

impl std::error::Error for ScenarioError {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn display_with_all_parts() {
        let e = ScenarioError {
            file: "a.toml".into(),
            line: Some(7),
            key: Some("machine.zone[1].size_mib".into()),
            message: "must be greater than 0 (got -5)".into(),
        };
        assert_eq!(
            e.to_string(),
            "a.toml:7: key `machine.zone[1].size_mib`: must be greater than 0 (got -5)"
        );
    }

    #[test]
    fn display_without_line_or_key() {
        let e = ScenarioError::whole_file("b.toml", "cannot read file: gone");
        assert_eq!(e.to_string(), "b.toml: cannot read file: gone");
        let e = ScenarioError { line: Some(3), ..e };
        assert_eq!(e.to_string(), "b.toml:3: cannot read file: gone");
    }
}
