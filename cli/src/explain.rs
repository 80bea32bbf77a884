//! Templates in words: `check --verbose` (delimiters, paths, automaton
//! sizes), `explain` (what the template does), and the problems the
//! reference only finds when a region is parsed.

use crate::json;
use retort::Template;
use retort::content::{PARSER_ARGS, PARSER_NAMES};
use retort::py::truthy;
use retort::template::describe::{
    AnchorSearch, DelimiterInfo, Description, FieldInfo, MatchPath, StateInfo,
};
use retort::value::Value;
use retort_engine::scan::delimiter::DelimiterSource;
use std::fmt::Write as _;

/// A delimiter as written: `"<think>"`, `["a", "b"]` or `/pattern/`.
fn shown(d: &DelimiterInfo) -> String {
    match &d.source {
        DelimiterSource::Literals(l) if l.len() == 1 => json(&Value::Str(l[0].clone())),
        DelimiterSource::Literals(l) => json(&Value::List(
            l.iter().map(|s| Value::Str(s.clone())).collect(),
        )),
        DelimiterSource::Pattern(p) => format!("/{p}/"),
    }
}

fn key(d: &DelimiterInfo, literal: &str, pattern: &str) -> String {
    match d.source {
        DelimiterSource::Literals(_) => literal.to_owned(),
        DelimiterSource::Pattern(_) => pattern.to_owned(),
    }
}

/// `1,234`: sizes read better grouped.
fn grouped(n: usize) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

fn plural(n: usize, one: &str, many: &str) -> String {
    format!("{} {}", grouped(n), if n == 1 { one } else { many })
}

/// The path and automaton sizes of one delimiter, on one line.
fn path_line(d: &DelimiterInfo) -> String {
    let states: usize = d.branches.iter().map(|b| b.table.states).sum();
    let bytes: usize = d.branches.iter().map(|b| b.table.bytes).sum();
    let sizes = if d.branches.len() == 1 {
        format!(
            "{}, {}",
            plural(states, "state", "states"),
            plural(bytes, "byte", "bytes")
        )
    } else {
        let each: Vec<String> = d
            .branches
            .iter()
            .map(|b| b.table.states.to_string())
            .collect();
        format!(
            "{} ({} states), {}",
            plural(d.branches.len(), "branch", "branches"),
            each.join("+"),
            plural(bytes, "byte", "bytes")
        )
    };
    let guards: Vec<String> = d
        .branches
        .iter()
        .filter_map(|b| b.guard.map(|g| format!("lookbehind tracker #{g}")))
        .collect();
    let guards = if guards.is_empty() {
        String::new()
    } else {
        format!("; guarded by {}", guards.join(", "))
    };
    match d.path {
        MatchPath::Literal => format!(
            "literal: compared where its first byte occurs (its automaton, {sizes}, is not run){guards}"
        ),
        MatchPath::Dfa => format!("DFA: {sizes}{guards}"),
        MatchPath::Backtrack => format!(
            "backtracking fallback: {} ({}); not linear-time",
            plural(d.program_size, "instruction", "instructions"),
            d.fallback_reason.as_deref().unwrap_or("no automaton")
        ),
    }
}

/// `check --verbose`: every delimiter with its JSON path, path and sizes.
pub fn delimiter_report(d: &Description, base: &str) -> String {
    let mut rows: Vec<(String, String, String)> = Vec::new();
    let a = &d.start_anchor;
    let how = match d.anchor_search {
        AnchorSearch::Memmem => "prompt only: found with memmem".to_owned(),
        AnchorSearch::Regex => format!(
            "prompt only: the regex ({})",
            plural(a.program_size, "instruction", "instructions")
        ),
    };
    rows.push((
        format!("{base}{}", key(a, "start_anchor", "start_anchor_pattern")),
        shown(a),
        how,
    ));
    for f in &d.fields {
        for (delim, lit, pat) in [
            (&f.open, "open", "open_pattern"),
            (&f.close, "close", "close_pattern"),
        ] {
            if let Some(x) = delim {
                rows.push((
                    format!("{base}fields.{}.{}", f.name, key(x, lit, pat)),
                    shown(x),
                    path_line(x),
                ));
            }
        }
    }
    let w0 = rows.iter().map(|r| r.0.chars().count()).max().unwrap_or(0);
    let w1 = rows
        .iter()
        .map(|r| r.1.chars().count())
        .max()
        .unwrap_or(0)
        .min(40);
    let mut out = String::from("delimiters:\n");
    for (path, delim, how) in &rows {
        let _ = writeln!(out, "  {path:<w0$}  {delim:<w1$}  {how}");
    }
    let mut tables = 0;
    let mut states = 0;
    let mut bytes = 0;
    for f in &d.fields {
        for x in [&f.open, &f.close].into_iter().flatten() {
            if x.path == MatchPath::Dfa {
                tables += x.branches.len();
                states += x.branches.iter().map(|b| b.table.states).sum::<usize>();
                bytes += x.branches.iter().map(|b| b.table.bytes).sum::<usize>();
            }
        }
    }
    if d.trackers.is_empty() {
        out.push_str("lookbehind trackers: none\n");
    } else {
        out.push_str("lookbehind trackers:\n");
        for (i, t) in d.trackers.iter().enumerate() {
            let _ = writeln!(
                out,
                "  #{i}: {}, {}",
                plural(t.states, "state", "states"),
                plural(t.bytes, "byte", "bytes")
            );
            tables += 1;
            states += t.states;
            bytes += t.bytes;
        }
    }
    let _ = writeln!(
        out,
        "automata the scanner runs: {}, {}, {}",
        plural(tables, "table", "tables"),
        plural(states, "state", "states"),
        plural(bytes, "byte", "bytes")
    );
    let literal_states = d.states.iter().filter(|s| s.literal).count();
    let _ = writeln!(
        out,
        "parser states comparing literals only: {} of {}",
        literal_states,
        d.states.len()
    );
    let _ = writeln!(
        out,
        "scanning: {}; {}",
        if d.linear {
            "linear time (every delimiter on automata or literals)"
        } else {
            "NOT linear time (some delimiter uses the backtracking fallback)"
        },
        if d.scan_in_place {
            "fed text is scanned in place and forgotten once decided"
        } else {
            "the parser keeps the text it has read (a delimiter looks behind its start)"
        }
    );
    out
}

/// Settings the reference accepts at load time but that fail (or do
/// nothing) when a region is parsed.
pub fn deferred_problems(d: &Description, base: &str) -> Vec<String> {
    let mut out = Vec::new();
    for f in &d.fields {
        let at = format!("{base}fields.{}.content_args", f.name);
        content_problems(&f.content, &f.content_args, &at, &mut out);
    }
    out
}

fn known_args(parser: &str) -> &'static [&'static str] {
    PARSER_ARGS
        .iter()
        .find(|(name, _)| *name == parser)
        .map_or(&[], |(_, keys)| *keys)
}

fn content_problems(parser: &str, args: &Value, at: &str, out: &mut Vec<String>) {
    let Value::Map(args) = args else {
        out.push(format!(
            "{at}: not an object ({}): every region of this field will fail to parse",
            args.type_name()
        ));
        return;
    };
    for k in args.keys() {
        if !known_args(parser).contains(&k.as_str()) {
            out.push(format!(
                "{at}.{k}: the `{parser}` parser does not read this argument (ignored)"
            ));
        }
    }
    if parser == "xml-inline" {
        match args.get("tag_pattern") {
            None | Some(Value::Null) => out.push(format!(
                "{at}: `xml-inline` needs `tag_pattern`: every region of this field will fail to parse"
            )),
            Some(Value::Str(p)) => {
                if let Err(e) = retort_engine::pyre::Regex::new(p) {
                    out.push(format!(
                        "{at}.tag_pattern: invalid regex ({e}): every region of this field will fail to parse"
                    ));
                }
            }
            Some(v) => out.push(format!(
                "{at}.tag_pattern: must be a string, not {}: every region of this field will fail to parse",
                v.type_name()
            )),
        }
    }
    if parser == "kv-lines"
        && let Some(sep @ Value::Str(s)) = args.get("line_sep")
        && s.is_empty()
    {
        out.push(format!(
            "{at}.line_sep: {} is an empty separator: every region of this field will fail to parse",
            json(sep)
        ));
    }
    if matches!(parser, "xml-inline" | "kv-lines")
        && let Some(vp) = args
            .get("value_parser")
            .filter(|v| !matches!(v, Value::Null))
    {
        let at = format!("{at}.value_parser");
        match vp {
            Value::Map(m) => match m.get("name") {
                Some(Value::Str(name)) if PARSER_NAMES.contains(&name.as_str()) => {
                    let empty = Value::Map(Default::default());
                    let args = m.get("args").unwrap_or(&empty);
                    content_problems(name, args, &format!("{at}.args"), out);
                }
                other => out.push(format!(
                    "{at}.name: {} is not a content parser: every value will fail to parse",
                    other.map_or_else(|| "missing".to_owned(), json)
                )),
            },
            v => out.push(format!(
                "{at}: must be an object, not {}: every value will fail to parse",
                v.type_name()
            )),
        }
    }
}

// ----- explain ---------------------------------------------------------------

/// `retort explain`: the template in words.
pub fn explain(display: &str, t: &Template) -> String {
    let d = t.describe();
    let mut out = String::new();
    let _ = writeln!(out, "Template {display}\n");

    out.push_str("The prompt\n");
    let a = &d.start_anchor;
    let anchor = match &a.source {
        DelimiterSource::Literals(l) if l.len() == 1 => format!("the literal {}", shown(a)),
        DelimiterSource::Literals(_) => format!("any of the literals {}", shown(a)),
        DelimiterSource::Pattern(_) => format!("the pattern {}", shown(a)),
    };
    let _ = writeln!(
        out,
        "  The prompt is cut after the last match of {anchor}{}.\n  \
         What follows it is parsed before the output, so a region the prompt opens\n  \
         (an open `<think>`, say) is already open when the output starts, and its\n  \
         events come first. If nothing matches, the whole prompt is parsed. The\n  \
         anchor is never looked for in the output.",
        match d.anchor_search {
            AnchorSearch::Memmem => "",
            AnchorSearch::Regex => " (Python regex semantics)",
        }
    );
    let defaults = t.defaults();
    out.push_str("\nThe message\n");
    if defaults.is_empty() {
        out.push_str("  Messages start empty (no defaults).\n");
    } else {
        let _ = writeln!(
            out,
            "  Every message starts with {}.",
            json(&Value::Map(defaults.clone()))
        );
    }
    out.push_str(
        "  A field's key is left out when its final value is null or empty (\"\", [], {})\n  \
         and the key is not in the defaults.\n",
    );

    out.push_str("\nFields, in template order\n");
    for (i, f) in d.fields.iter().enumerate() {
        explain_field(&mut out, &d, i, f, defaults.contains_key(&f.name));
    }

    out.push_str("\nOne region at a time\n");
    out.push_str(
        "  Outside explicit regions the parser looks for every field's open (and the\n  \
         implicit field's close); inside an explicit region, only that region's close.\n  \
         When several match, the leftmost wins; at the same place the longer; then an\n  \
         open before a close; then the field whose name sorts first. A region's text is\n  \
         streamed as region_chunk events, and its value comes with region_close.\n",
    );
    match d.implicit {
        Some(i) => {
            let f = &d.fields[i];
            let _ = writeln!(
                out,
                "  Text outside explicit regions belongs to `{}`, the implicit field: its region\n  \
                 opens on the first such text{}.",
                f.name,
                if f.close.is_some() {
                    ", and after its close, more such text opens it again"
                } else {
                    ""
                }
            );
        }
        None => out
            .push_str("  There is no implicit field: text outside explicit regions is dropped.\n"),
    }

    out.push_str("\nWhat a stream holds back at the end of a chunk\n");
    out.push_str(
        "  Text goes to the current region (as region_chunk) as soon as no watched\n  \
         delimiter can begin in it; a delimiter is committed only once no later text\n  \
         could change which match wins. The rest is held until the next chunk or the\n  \
         end of the output decides it:\n",
    );
    for s in &d.states {
        explain_state(&mut out, &d, s);
    }
    let unwatched: Vec<&str> = d
        .fields
        .iter()
        .filter(|f| f.open.is_some() && f.close.is_none())
        .map(|f| f.name.as_str())
        .collect();
    if !unwatched.is_empty() {
        let _ = writeln!(
            out,
            "  In the region of {}: nothing is watched (no close), so the region takes\n  \
             the rest of the output and nothing is held.",
            unwatched
                .iter()
                .map(|n| format!("`{n}`"))
                .collect::<Vec<_>>()
                .join(", ")
        );
    }
    if !d.linear {
        out.push_str(
            "  Some delimiter uses the backtracking fallback: undecided text is examined\n  \
             again when more arrives, so time is not linear in the worst case\n  \
             (`retort check --verbose` says which).\n",
        );
    }
    out
}

fn explain_field(out: &mut String, d: &Description, i: usize, f: &FieldInfo, defaulted: bool) {
    let implicit = d.implicit == Some(i);
    let _ = writeln!(
        out,
        "{}. {}{}",
        i + 1,
        f.name,
        if implicit {
            " (the implicit field)"
        } else {
            ""
        }
    );
    match &f.open {
        Some(o) => {
            let _ = writeln!(out, "   opens at:  {}", delimiter_words(o));
        }
        None => out.push_str("   opens:     implicitly, on text outside explicit regions\n"),
    }
    match &f.close {
        Some(c) => {
            let _ = writeln!(out, "   closes at: {}", delimiter_words(c));
        }
        None => out.push_str("   closes:    never; the region runs to the end of the output\n"),
    }
    let _ = writeln!(
        out,
        "   content:   {}",
        content_words(&f.content, &f.content_args)
    );
    if f.dirty {
        out.push_str(
            "              its chunks stream with dirty: true (raw text for the parser, not\n              \
             part of the value, which only region_close carries)\n",
        );
    }
    if let Some(t) = &f.transform {
        let _ = writeln!(out, "   transform: {}", json(&t.template));
        let mut captures: Vec<&str> = [&f.open, &f.close]
            .into_iter()
            .flatten()
            .flat_map(|x| x.captures.iter().map(String::as_str))
            .collect();
        captures.dedup();
        let mut scope = String::from("{content} is the parsed value");
        if !captures.is_empty() {
            let names: Vec<String> = captures.iter().map(|c| format!("{{{c}}}")).collect();
            let _ = write!(
                scope,
                ", {} the text captured by the delimiters' named groups",
                names.join(", ")
            );
        }
        if f.transform_each {
            scope = "applied to each element of the parsed list (which must hold dicts),\n              \
                     with the element's keys as placeholders"
                .to_owned();
        }
        let _ = writeln!(
            out,
            "              {scope}; a placeholder is replaced by the value itself (its type kept)"
        );
        if t.too_deep {
            out.push_str("              part of it is nested too deep: applying it fails\n");
        }
    }
    let store = match (&f.join, f.repeats) {
        (Some(sep), _) => format!(
            "each region's value (a string) is appended, joined with {}",
            json(&Value::Str(sep.clone()))
        ),
        (None, true) => "each region appends its value to a list".to_owned(),
        (None, false) => "a later region replaces the earlier value".to_owned(),
    };
    let _ = writeln!(out, "   value:     {store}");
    let presence = if !f.optional {
        "required: the parse fails at the end if no region wrote it"
    } else if defaulted {
        "optional; the default stays when no region writes it"
    } else {
        "optional"
    };
    let _ = writeln!(out, "              {presence}");
}

fn delimiter_words(x: &DelimiterInfo) -> String {
    let mut s = match &x.source {
        DelimiterSource::Literals(l) if l.len() == 1 => format!("the literal {}", shown(x)),
        DelimiterSource::Literals(_) => {
            format!("any of the literals {} (tried longest first)", shown(x))
        }
        DelimiterSource::Pattern(_) => format!("the pattern {}", shown(x)),
    };
    if !x.captures.is_empty() {
        let _ = write!(s, ", capturing {}", x.captures.join(", "));
    }
    if x.may_match_empty {
        s.push_str(" (it can match the empty string)");
    }
    s
}

fn content_words(parser: &str, args: &Value) -> String {
    let Value::Map(args) = args else {
        return format!("{parser}, but content_args is not an object: every region fails to parse");
    };
    let flag = |k: &str, default: bool| args.get(k).map_or(default, truthy);
    let strip = flag("strip", true);
    let stripped = if strip {
        "the text stripped of whitespace at both ends (Python's str.strip)"
    } else {
        "the text exactly as written"
    };
    match parser {
        "text" => format!("text: {stripped}"),
        "int" => format!("int: Python's int() of {stripped}; other text is an error"),
        "float" => format!("float: Python's float() of {stripped}; other text is an error"),
        "bool" => format!("bool: true when {stripped}, lowercased, is \"true\" or \"1\""),
        "json" => {
            let mut s = String::from("json: Python's json.loads of the text");
            if let Some(d) = args.get("string_delims").filter(|v| truthy(v)) {
                let _ = write!(
                    s,
                    "; text between the string_delims pairs {} is cut out first and put back as JSON strings",
                    json(d)
                );
            }
            if flag("unquoted_keys", false) {
                s.push_str("; bare word keys after `{` or `,` are quoted first");
            }
            if flag("allow_non_json", false) {
                let _ = write!(s, "; text that is not JSON becomes the value as {stripped}");
            } else {
                s.push_str("; text that is not JSON is an error");
            }
            s
        }
        "xml-inline" => {
            let pattern = match args.get("tag_pattern") {
                Some(Value::Str(p)) => format!("/{p}/"),
                _ => "(missing: every region fails)".to_owned(),
            };
            let mut s = format!(
                "xml-inline: each match of {pattern} gives an entry, key from the group `key`, \
                 value from the group `value`"
            );
            s.push_str(&value_parser_words(args.get("value_parser")));
            if flag("merge_duplicates", false) {
                s.push_str("; a repeated key collects its values into a list");
            } else {
                s.push_str("; a repeated key keeps its last value");
            }
            s
        }
        "kv-lines" => {
            let line_sep = match args.get("line_sep") {
                None => "\"\\n\"".to_owned(),
                Some(Value::Null) => "runs of whitespace".to_owned(),
                Some(v) => json(v),
            };
            let kv_sep = match args.get("kv_sep") {
                None => "\":\"".to_owned(),
                Some(v) => json(v),
            };
            let mut s = format!(
                "kv-lines: lines split at {line_sep}; lines without {kv_sep} are skipped; each \
                 other line is split at its first {kv_sep} into key and value{}",
                if strip { " (both stripped)" } else { "" }
            );
            s.push_str(&value_parser_words(args.get("value_parser")));
            s
        }
        other => other.to_owned(),
    }
}

fn value_parser_words(vp: Option<&Value>) -> String {
    match vp {
        None | Some(Value::Null) => "; values stay strings".to_owned(),
        Some(Value::Map(m)) => match m.get("name") {
            Some(Value::Str(name)) => {
                let empty = Value::Map(Default::default());
                let args = m.get("args").unwrap_or(&empty);
                format!("; each value is parsed as {}", content_words(name, args))
            }
            _ => "; value_parser has no valid name: every value fails".to_owned(),
        },
        Some(_) => "; value_parser is not an object: every value fails".to_owned(),
    }
}

fn explain_state(out: &mut String, d: &Description, s: &StateInfo) {
    let place = match s.region {
        Some(r) => format!("In the region of `{}`", d.fields[r].name),
        None => match d.implicit {
            Some(i) => format!("Outside explicit regions (in `{}`)", d.fields[i].name),
            None => "Outside explicit regions".to_owned(),
        },
    };
    if s.watched.is_empty() {
        let _ = writeln!(
            out,
            "  {place}: nothing is watched (no field has an open{}), so nothing is held.",
            if d.implicit.is_some() {
                " and the implicit field has no close"
            } else {
                ""
            }
        );
        return;
    }
    let how = if s.literal {
        "compared as literals"
    } else {
        "scanned with automata"
    };
    let _ = writeln!(
        out,
        "  {place} ({how}), the end of a chunk is held while it could be the start of:"
    );
    for w in &s.watched {
        let f = &d.fields[w.field];
        let Some(x) = (if w.opens { &f.open } else { &f.close }) else {
            continue;
        };
        let role = if w.opens { "opens" } else { "closes" };
        let _ = writeln!(
            out,
            "    - {} ({role} `{}`): {}",
            shown(x),
            f.name,
            hold_words(x)
        );
    }
}

/// What text at the end of a chunk this delimiter makes the scanner hold.
fn hold_words(x: &DelimiterInfo) -> String {
    let mut parts = Vec::new();
    match &x.source {
        DelimiterSource::Literals(l) => {
            let examples: Vec<String> = l
                .iter()
                .map(|lit| {
                    let chars: Vec<char> = lit.chars().collect();
                    match chars.len() {
                        1 => String::new(),
                        2 => json(&Value::Str(chars[..1].iter().collect())),
                        n => format!(
                            "{} … {}",
                            json(&Value::Str(chars[..1].iter().collect())),
                            json(&Value::Str(chars[..n - 1].iter().collect()))
                        ),
                    }
                })
                .filter(|e| !e.is_empty())
                .collect();
            if examples.is_empty() {
                parts.push("nothing: a single character matches or not at once".to_owned());
            } else {
                parts.push(format!("a proper prefix of it ({})", examples.join("; ")));
            }
        }
        DelimiterSource::Pattern(_) => {
            parts.push(format!(
                "text from where the pattern could still be matching (it can only begin at {})",
                byte_words(&x.first_bytes)
            ));
            if let Some(lead) = &x.lead_loop {
                parts.push(format!(
                    "so a trailing run of {} is held, as the start of a possible match",
                    byte_words(lead)
                ));
            }
        }
    }
    if x.extends {
        parts.push(
            "and a complete match at the very end, while more text could make it longer".to_owned(),
        );
    }
    parts.join(", ")
}

/// A set of bytes for people: printable ASCII as itself, the rest escaped,
/// UTF-8 lead bytes summarised.
fn byte_words(bytes: &[u8]) -> String {
    if bytes.len() == 256 {
        return "any byte".to_owned();
    }
    let mut shown: Vec<String> = Vec::new();
    let mut non_ascii = 0;
    for &b in bytes {
        match b {
            b' ' => shown.push("space".to_owned()),
            b'\n' => shown.push("\\n".to_owned()),
            b'\t' => shown.push("\\t".to_owned()),
            b'\r' => shown.push("\\r".to_owned()),
            0x21..=0x7e => shown.push(format!("`{}`", b as char)),
            0..=0x7f => shown.push(format!("\\x{b:02x}")),
            _ => non_ascii += 1,
        }
    }
    if non_ascii > 0 {
        shown.push(format!(
            "the first byte{} of {} non-ASCII character{}",
            if non_ascii == 1 { "" } else { "s" },
            if non_ascii == 1 { "a" } else { "some" },
            if non_ascii == 1 { "" } else { "s" }
        ));
    }
    if shown.len() > 12 {
        let n = shown.len();
        shown.truncate(10);
        shown.push(format!("and {} more", n - 10));
    }
    shown.join(" ")
}
