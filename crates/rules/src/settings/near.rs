//! "Did you mean": a settings key that differs from a known one only in case or by a letter
//! or two is almost certainly a typo, and silently ignoring it can turn a safety setting off
//! (`McpAuthtoken` would leave HTTP without a token). Such keys fail closed.

/// The known key `key` probably meant: equal ignoring case, or within edit distance 2.
pub(super) fn near_miss<'k>(key: &str, known: &[&'k str]) -> Option<&'k str> {
    let lower = key.to_ascii_lowercase();
    known
        .iter()
        .copied()
        .find(|k| k.to_ascii_lowercase() == lower)
        .or_else(|| known.iter().copied().find(|k| edit_distance(&lower, &k.to_ascii_lowercase()) <= 2))
}

/// Levenshtein distance over characters.
fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut diagonal = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let above = row[j + 1];
            row[j + 1] = (diagonal + usize::from(ca != *cb)).min(above + 1).min(row[j] + 1);
            diagonal = above;
        }
    }
    row[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn distances() {
        assert_eq!(edit_distance("kitten", "sitting"), 3);
        assert_eq!(edit_distance("abc", "abc"), 0);
        assert_eq!(edit_distance("", "ab"), 2);
        assert_eq!(near_miss("Colour", &["McpAuthToken"]), None);
        assert_eq!(near_miss("MCPAUTHTOKEN", &["McpAuthToken"]), Some("McpAuthToken"));
    }
}
