//! Splitting a generation into the pieces a model server would send.
//!
//! A real server sends one token (or a few) per message. The demo has no
//! tokenizer, so it imitates one: whole special tokens (`<|im_end|>`,
//! `<think>`, `[TOOL_CALLS]`), words with their leading space, short
//! subwords for long words, digits in threes, runs of newlines, and single
//! punctuation marks. The pieces always concatenate back to the text.

/// Longest run of letters kept as one piece; longer words are cut into
/// subwords of this size, as BPE vocabularies do for rare words.
const MAX_WORD: usize = 10;
/// Digits per piece (many tokenizers split numbers in threes).
const MAX_DIGITS: usize = 3;
/// Longest special token recognised, in bytes.
const MAX_SPECIAL: usize = 64;

/// Token-like pieces of `text`, in order; they concatenate to `text`.
pub fn token_like(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut start = 0;
    while start < text.len() {
        let end = start + piece_len(&text[start..]);
        out.push(&text[start..end]);
        start = end;
    }
    out
}

/// Pieces of `n` characters each (the last may be shorter); `n` must be at
/// least 1.
pub fn by_chars(text: &str, n: usize) -> Vec<&str> {
    let n = n.max(1);
    let mut out = Vec::new();
    let mut start = 0;
    let mut count = 0;
    for (i, _) in text.char_indices() {
        if count == n {
            out.push(&text[start..i]);
            start = i;
            count = 0;
        }
        count += 1;
    }
    if start < text.len() {
        out.push(&text[start..]);
    }
    out
}

/// Length in bytes of the piece at the start of `rest` (never 0 for a
/// non-empty `rest`).
fn piece_len(rest: &str) -> usize {
    if let Some(n) = special_len(rest) {
        return n;
    }
    let mut chars = rest.chars();
    let Some(first) = chars.next() else {
        return 0;
    };
    if first == '\n' {
        return rest.len() - rest.trim_start_matches('\n').len();
    }
    if first == ' ' {
        let spaces = rest.len() - rest.trim_start_matches(' ').len();
        // A run of spaces keeps its last one for the word that follows
        // (" word" is one token); a lone space before a newline or a
        // special token stands alone.
        if spaces > 1 {
            return spaces - 1;
        }
        return match rest[1..].chars().next() {
            Some(c) if c.is_alphanumeric() => 1 + word_len(&rest[1..]),
            Some(c) if !c.is_whitespace() && special_len(&rest[1..]).is_none() => 1 + c.len_utf8(),
            _ => 1,
        };
    }
    if first.is_alphanumeric() {
        return word_len(rest);
    }
    first.len_utf8()
}

/// Length of the word (or digit group) at the start of `rest`.
fn word_len(rest: &str) -> usize {
    let digits = rest.starts_with(|c: char| c.is_ascii_digit());
    let (keep, max): (fn(char) -> bool, usize) = if digits {
        (|c| c.is_ascii_digit(), MAX_DIGITS)
    } else {
        (|c| c.is_alphanumeric() && !c.is_ascii_digit(), MAX_WORD)
    };
    rest.char_indices()
        .take_while(|&(_, c)| keep(c))
        .take(max)
        .last()
        .map_or(0, |(i, c)| i + c.len_utf8())
}

/// Length of a special token at the start of `rest`: `<...>` or `[...]`
/// with no whitespace or nested bracket inside (`<|im_end|>`, `</think>`,
/// `<function=get_weather>`, `<｜tool▁sep｜>`, `[TOOL_CALLS]`).
fn special_len(rest: &str) -> Option<usize> {
    let close = match rest.as_bytes().first()? {
        b'<' => '>',
        b'[' => ']',
        _ => return None,
    };
    let open = rest.chars().next()?;
    for (i, c) in rest.char_indices().skip(1) {
        if i > MAX_SPECIAL || c.is_whitespace() || c == open {
            return None;
        }
        if c == close {
            // `[x]` and `<>` are ordinary text, not special tokens.
            let inner = &rest[1..i];
            let special = if open == '[' {
                inner.len() > 1
                    && inner
                        .chars()
                        .all(|c| c.is_uppercase() || c == '_' || c == '/')
            } else {
                !inner.is_empty()
            };
            return special.then_some(i + 1);
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn special_tokens_stay_whole_and_words_keep_their_space() {
        let text = "<think>The user wants Lisbon.</think>Sure!\n\n<|tool_call_begin|>functions.get_weather:0";
        assert_eq!(
            token_like(text),
            [
                "<think>",
                "The",
                " user",
                " wants",
                " Lisbon",
                ".",
                "</think>",
                "Sure",
                "!",
                "\n\n",
                "<|tool_call_begin|>",
                "functions",
                ".",
                "get",
                "_",
                "weather",
                ":",
                "0"
            ]
        );
    }

    #[test]
    fn long_words_and_numbers_are_cut() {
        assert_eq!(
            token_like("internationalisation 2026-11-25"),
            [
                "internatio",
                "nalisation",
                " 202",
                "6",
                "-",
                "11",
                "-",
                "25"
            ]
        );
        assert_eq!(
            token_like("[TOOL_CALLS]get [x] a  b <>"),
            [
                "[TOOL_CALLS]",
                "get",
                " [",
                "x",
                "]",
                " a",
                " ",
                " b",
                " <",
                ">"
            ]
        );
    }

    #[test]
    fn chunks_of_n_characters() {
        assert_eq!(by_chars("añb<|x|>", 3), ["añb", "<|x", "|>"]);
        assert_eq!(by_chars("", 3), Vec::<&str>::new());
        assert_eq!(by_chars("ab", 0), ["a", "b"]);
    }

    proptest! {
        #[test]
        fn pieces_concatenate_to_the_text(text in "(<\\|?[a-z_|]{0,6}>?|\\[[A-Z_]{0,4}\\]?| {0,3}|\n{0,2}|[a-zñ0-9]{0,12}|[.,:{}\"'é])*") {
            let pieces = token_like(&text);
            prop_assert!(pieces.iter().all(|p| !p.is_empty()));
            prop_assert_eq!(pieces.concat(), text.clone());
            for n in 1..4 {
                let chunks = by_chars(&text, n);
                prop_assert!(chunks.iter().all(|p| p.chars().count() <= n && !p.is_empty()));
                prop_assert_eq!(chunks.concat(), text.clone());
            }
        }
    }
}
