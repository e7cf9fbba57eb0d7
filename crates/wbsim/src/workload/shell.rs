//! POSIX-shell word splitting for workload command lines: whitespace,
//! `'...'` and `"..."` quoting, `\` escapes and `$(( ))` integer arithmetic
//! (as in seed 003's `-s $((10 << 20))`). Shared by the dd and fs_mark
//! parsers.

/// Bound on `$(( ))` nesting so hostile input cannot exhaust the stack.
const MAX_EXPR_DEPTH: usize = 64;

/// Split a command line into words like a POSIX shell: whitespace separates
/// words, `'...'` and `"..."` quote, `\` escapes, and `$(( expr ))` is
/// replaced by its integer value.
pub fn split_words(command: &str) -> Result<Vec<String>, String> {
    let chars: Vec<char> = command.chars().collect();
    let mut words = Vec::new();
    let mut current = String::new();
    let mut in_word = false;
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        match c {
            c if c.is_whitespace() => {
                if in_word {
                    words.push(std::mem::take(&mut current));
                    in_word = false;
                }
                i += 1;
            }
            '\'' => {
                let close =
                    find_char(&chars, i + 1, '\'').ok_or("unterminated single quote in command")?;
                current.extend(&chars[i + 1..close]);
                in_word = true;
                i = close + 1;
            }
            '"' => {
                in_word = true;
                i += 1;
                loop {
                    match chars.get(i) {
                        None => return Err("unterminated double quote in command".to_string()),
                        Some('"') => {
                            i += 1;
                            break;
                        }
                        Some('\\') if matches!(chars.get(i + 1), Some('"' | '\\' | '$')) => {
                            current.push(chars[i + 1]);
                            i += 2;
                        }
                        Some('$') => i = expand_dollar(&chars, i, &mut current)?,
                        Some(&other) => {
                            current.push(other);
                            i += 1;
                        }
                    }
                }
            }
            '\\' => {
                let escaped = chars
                    .get(i + 1)
                    .ok_or("command ends with a lone backslash")?;
                current.push(*escaped);
                in_word = true;
                i += 2;
            }
            '$' => {
                i = expand_dollar(&chars, i, &mut current)?;
                in_word = true;
            }
            '|' | '&' | ';' | '<' | '>' | '(' | ')' | '`' => {
                return Err(format!(
                    "shell operator `{c}` is not supported; give a single dd command"
                ));
            }
            _ => {
                current.push(c);
                in_word = true;
                i += 1;
            }
        }
    }
    if in_word {
        words.push(current);
    }
    Ok(words)
}

fn find_char(chars: &[char], from: usize, wanted: char) -> Option<usize> {
    chars
        .get(from..)?
        .iter()
        .position(|&c| c == wanted)
        .map(|p| p + from)
}

/// Expand `$((expr))` starting at `chars[start] == '$'`; returns the index after `))`.
fn expand_dollar(chars: &[char], start: usize, out: &mut String) -> Result<usize, String> {
    if chars.get(start + 1) != Some(&'(') || chars.get(start + 2) != Some(&'(') {
        return Err("only $(( )) arithmetic is supported; shell variables and \
                    command substitution are not"
            .to_string());
    }
    // Find the `))` that closes the expansion, tracking inner parentheses.
    let mut depth = 0usize;
    let mut i = start + 3;
    loop {
        match chars.get(i) {
            None => return Err("unterminated $(( in command".to_string()),
            Some('(') => depth += 1,
            Some(')') if depth > 0 => depth -= 1,
            Some(')') => {
                if chars.get(i + 1) != Some(&')') {
                    return Err("unbalanced parentheses in $(( ))".to_string());
                }
                break;
            }
            Some(_) => {}
        }
        i += 1;
    }
    let expr: String = chars[start + 3..i].iter().collect();
    let value = eval_arith(&expr)?;
    out.push_str(&value.to_string());
    Ok(i + 2)
}

/// Evaluate a shell arithmetic expression over i64 with the usual precedence
/// (`|` < `^` < `&` < shifts < `+ -` < `* / %` < unary), rejecting overflow.
fn eval_arith(expr: &str) -> Result<i64, String> {
    let tokens = arith_tokens(expr)?;
    let mut parser = Arith {
        tokens: &tokens,
        pos: 0,
        depth: 0,
    };
    let value = parser.binary(0)?;
    if parser.pos != tokens.len() {
        return Err(format!("$(({expr})): unexpected trailing input"));
    }
    Ok(value)
}

#[derive(Debug, Clone, PartialEq)]
enum Tok {
    Num(i64),
    Op(&'static str),
}

fn arith_tokens(expr: &str) -> Result<Vec<Tok>, String> {
    const OPS: [&str; 12] = ["<<", ">>", "+", "-", "*", "/", "%", "&", "|", "^", "~", "("];
    let mut tokens = Vec::new();
    let mut rest = expr.trim_start();
    while !rest.is_empty() {
        if rest.starts_with(|c: char| c.is_ascii_digit()) {
            let end = rest
                .find(|c: char| !c.is_ascii_alphanumeric())
                .unwrap_or(rest.len());
            tokens.push(Tok::Num(parse_arith_number(&rest[..end])?));
            rest = &rest[end..];
        } else if let Some(rem) = rest.strip_prefix(')') {
            tokens.push(Tok::Op(")"));
            rest = rem;
        } else if let Some(op) = OPS.iter().find(|op| rest.starts_with(**op)) {
            tokens.push(Tok::Op(op));
            rest = &rest[op.len()..];
        } else {
            let bad = rest.chars().next().unwrap_or(' ');
            return Err(format!(
                "$(({expr})): unsupported character `{bad}`; only integers, \
                 parentheses and + - * / % << >> & | ^ ~ are supported"
            ));
        }
        rest = rest.trim_start();
    }
    Ok(tokens)
}

/// Bash integer constants: decimal, `0x` hex, leading-`0` octal.
fn parse_arith_number(text: &str) -> Result<i64, String> {
    let parsed = if let Some(hex) = text.strip_prefix("0x").or(text.strip_prefix("0X")) {
        i64::from_str_radix(hex, 16)
    } else if text.len() > 1 && text.starts_with('0') {
        i64::from_str_radix(&text[1..], 8)
    } else {
        text.parse()
    };
    parsed.map_err(|_| format!("$(( )): invalid or too large number `{text}`"))
}

struct Arith<'a> {
    tokens: &'a [Tok],
    pos: usize,
    depth: usize,
}

/// Binary operator levels, loosest first.
const LEVELS: [&[&str]; 6] = [
    &["|"],
    &["^"],
    &["&"],
    &["<<", ">>"],
    &["+", "-"],
    &["*", "/", "%"],
];

impl Arith<'_> {
    fn binary(&mut self, level: usize) -> Result<i64, String> {
        let Some(ops) = LEVELS.get(level) else {
            return self.unary();
        };
        let mut lhs = self.binary(level + 1)?;
        while let Some(Tok::Op(op)) = self.tokens.get(self.pos) {
            if !ops.contains(op) {
                break;
            }
            self.pos += 1;
            let rhs = self.binary(level + 1)?;
            lhs = apply(op, lhs, rhs)?;
        }
        Ok(lhs)
    }

    fn unary(&mut self) -> Result<i64, String> {
        self.depth += 1;
        if self.depth > MAX_EXPR_DEPTH {
            return Err("$(( )): expression nested too deeply".to_string());
        }
        let tok = self.tokens.get(self.pos).cloned();
        self.pos += 1;
        let value = match tok {
            Some(Tok::Num(n)) => Ok(n),
            Some(Tok::Op("-")) => self
                .unary()?
                .checked_neg()
                .ok_or_else(|| "$(( )): arithmetic overflow".to_string()),
            Some(Tok::Op("+")) => self.unary(),
            Some(Tok::Op("~")) => Ok(!self.unary()?),
            Some(Tok::Op("(")) => {
                let inner = self.binary(0)?;
                if self.tokens.get(self.pos) != Some(&Tok::Op(")")) {
                    return Err("$(( )): missing `)`".to_string());
                }
                self.pos += 1;
                Ok(inner)
            }
            Some(Tok::Op(op)) => Err(format!("$(( )): expected a number, found `{op}`")),
            None => Err("$(( )): expression ends where a number was expected".to_string()),
        };
        self.depth -= 1;
        value
    }
}

fn apply(op: &str, a: i64, b: i64) -> Result<i64, String> {
    let shift = |b: i64| {
        u32::try_from(b)
            .ok()
            .filter(|&s| s < 64)
            .ok_or_else(|| format!("$(( )): shift amount {b} must be between 0 and 63"))
    };
    let result = match op {
        "+" => a.checked_add(b),
        "-" => a.checked_sub(b),
        "*" => a.checked_mul(b),
        "/" | "%" if b == 0 => return Err("$(( )): division by zero".to_string()),
        "/" => a.checked_div(b),
        "%" => a.checked_rem(b),
        "<<" => {
            let s = shift(b)?;
            a.checked_shl(s).filter(|r| r >> s == a)
        }
        ">>" => a.checked_shr(shift(b)?),
        "&" => Some(a & b),
        "|" => Some(a | b),
        "^" => Some(a ^ b),
        _ => None,
    };
    result.ok_or_else(|| format!("$(( )): arithmetic overflow in {a} {op} {b}"))
}
