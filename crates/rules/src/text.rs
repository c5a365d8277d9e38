//! The one way mcec shortens text it echoes (agent-supplied names, serde messages, narration):
//! cut at a character boundary and say so with an ellipsis.

/// `text` cut to its first `max_chars` characters, with `…` appended when anything was cut.
pub fn ellipsize(text: &str, max_chars: usize) -> String {
    match text.char_indices().nth(max_chars) {
        None => text.to_string(),
        Some((cut, _)) => format!("{}…", &text[..cut]),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cuts_at_characters_and_marks_the_cut() {
        assert_eq!(ellipsize("abc", 3), "abc");
        assert_eq!(ellipsize("abcd", 3), "abc…");
        assert_eq!(ellipsize("ééééé", 2), "éé…");
        assert_eq!(ellipsize("", 0), "");
    }
}
