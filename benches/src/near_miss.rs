//! Hostile model output: near misses of a template's delimiters.
//!
//! The text a model writes when it almost writes a delimiter: every proper
//! prefix of every literal run in the template's delimiters (`<`, `<t`, …
//! `<tool_call` for `\s*<tool_call>`). Each makes the scanner hold text
//! and decide it at the next byte, the parser's worst ordinary case. Used by
//! the `adversarial` benchmark and the work-counting test
//! (`tests/near_miss.rs`).

use retort::Template;

/// Maximal runs of literal characters in a delimiter pattern (escaped
/// punctuation unescaped): the text a model writes when it almost writes
/// the delimiter.
pub fn literal_runs(pattern: &str) -> Vec<String> {
    let mut runs = Vec::new();
    let mut run = String::new();
    let mut chars = pattern.chars().peekable();
    let end_run = |run: &mut String, runs: &mut Vec<String>| {
        if !run.is_empty() {
            runs.push(std::mem::take(run));
        }
    };
    while let Some(c) = chars.next() {
        match c {
            '\\' => match chars.next() {
                Some(e) if e.is_ascii_punctuation() => run.push(e),
                Some('n') => run.push('\n'),
                // A class (`\s`, `\w`, `\d`) or an anchor ends the run.
                _ => end_run(&mut run, &mut runs),
            },
            // A quantifier makes the last character optional or repeated:
            // the run ends before it.
            '*' | '?' | '{' => {
                run.pop();
                end_run(&mut run, &mut runs);
                if c == '{' {
                    for d in chars.by_ref() {
                        if d == '}' {
                            break;
                        }
                    }
                }
            }
            '+' => end_run(&mut run, &mut runs),
            '(' => {
                end_run(&mut run, &mut runs);
                // Skip a group's flags or name: `(?:`, `(?P<name>`, `(?=`.
                if chars.peek() == Some(&'?') {
                    chars.next();
                    match chars.next() {
                        Some('P') => {
                            for d in chars.by_ref() {
                                if d == '>' {
                                    break;
                                }
                            }
                        }
                        Some('<') => {
                            chars.next();
                        }
                        _ => {}
                    }
                }
            }
            '[' => {
                end_run(&mut run, &mut runs);
                let mut escaped = false;
                for d in chars.by_ref() {
                    if !escaped && d == ']' {
                        break;
                    }
                    escaped = !escaped && d == '\\';
                }
            }
            ')' | '|' | '.' | '^' | '$' => end_run(&mut run, &mut runs),
            c => run.push(c),
        }
    }
    end_run(&mut run, &mut runs);
    runs
}

/// Every proper prefix of every literal run of every delimiter of `t`.
pub fn near_misses(t: &Template) -> String {
    let d = t.describe();
    let mut delimiters = vec![d.start_anchor.pattern.clone()];
    for f in &d.fields {
        for x in [&f.open, &f.close].into_iter().flatten() {
            delimiters.push(x.pattern.clone());
        }
    }
    let mut out = String::new();
    for p in &delimiters {
        for run in literal_runs(p) {
            let ends: Vec<usize> = run.char_indices().map(|(i, _)| i).skip(1).collect();
            for end in ends {
                out.push_str(&run[..end]);
            }
        }
    }
    out
}

pub fn repeat_to(unit: &str, len: usize) -> String {
    let mut s = String::with_capacity(len + unit.len());
    while s.len() < len {
        s.push_str(unit);
    }
    let mut cut = len;
    while !s.is_char_boundary(cut) {
        cut -= 1;
    }
    s.truncate(cut);
    s
}

#[cfg(test)]
mod tests {
    use super::literal_runs;

    #[test]
    fn literal_runs_of_delimiter_patterns() {
        assert_eq!(literal_runs(r"\s*<tool_call>\s*"), ["<tool_call>"]);
        assert_eq!(
            literal_runs(r"<\|channel\|>commentary to=functions\.(?P<name>[\w.-]+)"),
            ["<|channel|>commentary to=functions."]
        );
        assert_eq!(literal_runs(r"<think>\n?"), ["<think>"]);
        assert_eq!(
            literal_runs(r"</think>|(?=<tool_call>)"),
            ["</think>", "<tool_call>"]
        );
    }
}
