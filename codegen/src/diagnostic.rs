//! Template errors as compiler-style diagnostics.

use retort::TemplateError;
use std::fmt::Write as _;

/// Renders a template error with the file, line and column, a snippet of
/// the offending line, the JSON path and the rule:
///
/// ```text
/// template error [empty-literal]: Field 'x': 'open' literals cannot be empty strings
///   --> templates/bad.json:3:22
///    |
///  3 |     "x": {"open": ""}
///    |                   ^
///    = at: fields.x.open
///    = rule: literals cannot be empty
/// ```
pub fn render(e: &TemplateError, source: &str, file: &str) -> String {
    let mut out = format!("template error [{}]: {}\n", e.rule.name(), e.message);
    match &e.location {
        Some(loc) => {
            let _ = writeln!(out, "  --> {file}:{}:{}", loc.line, loc.column);
            let line = source.lines().nth(loc.line.saturating_sub(1)).unwrap_or("");
            // Long lines (minified JSON) are cut around the column.
            let chars: Vec<char> = line.chars().collect();
            let col = loc.column.saturating_sub(1).min(chars.len());
            let from = col.saturating_sub(60);
            let to = (col + 40).min(chars.len());
            let shown: String = chars[from..to].iter().collect();
            let lead = if from > 0 { "…" } else { "" };
            let width = loc.line.to_string().len();
            let pad = " ".repeat(width);
            let _ = writeln!(out, " {pad} |");
            let _ = writeln!(out, " {} | {lead}{shown}", loc.line);
            let caret_at = col - from + lead.chars().count();
            let _ = writeln!(out, " {pad} | {}^", " ".repeat(caret_at));
            if !e.path.is_empty() {
                let _ = writeln!(out, " {pad} = at: {}", e.path);
            }
            let _ = write!(out, " {pad} = rule: {}", e.rule.describe());
        }
        None => {
            let _ = writeln!(out, "  --> {file}");
            if !e.path.is_empty() {
                let _ = writeln!(out, "   = at: {}", e.path);
            }
            let _ = write!(out, "   = rule: {}", e.rule.describe());
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use retort::Template;

    #[test]
    fn points_at_the_value_with_path_and_rule() {
        let src = "{\n  \"start_anchor\": \"a\",\n  \"fields\": {\"x\": {\"open\": \"\"}}\n}";
        let e = Template::from_json(src).unwrap_err();
        let text = render(&e, src, "t.json");
        assert_eq!(
            text,
            "template error [empty-literal]: Field 'x': 'open' literals cannot be empty strings\n  \
             --> t.json:3:28\n   |\n 3 |   \"fields\": {\"x\": {\"open\": \"\"}}\n   |                            ^\n   \
             = at: fields.x.open\n   = rule: literals cannot be empty"
        );
    }
}
