//! The session token: the credential that opens a session's HTTP endpoint and authorises its
//! teardown.
//!
//! A token is 256 bits from the OS random source, written as 64 lowercase hex characters. It
//! never appears in `Debug` output or in a log line; the only ways to read it are
//! [`SessionToken::expose`] (for the handoff and the session's own settings file) and
//! serialisation of the handoff. Comparison is constant-time.

use std::fmt;

use subtle::ConstantTimeEq;

/// Random bytes in a fresh token (256 bits; the contract asks for at least 128).
pub const TOKEN_BYTES: usize = 32;

/// A session credential.
#[derive(Clone)]
pub struct SessionToken(String);

impl SessionToken {
    /// A fresh token from the OS random source.
    pub fn generate() -> Result<SessionToken, getrandom::Error> {
        let mut raw = [0u8; TOKEN_BYTES];
        getrandom::fill(&mut raw)?;
        Ok(SessionToken(hex::encode(raw)))
    }

    /// The token text. Only for writing the session's settings and the handoff; never log it.
    pub fn expose(&self) -> &str {
        &self.0
    }

    /// Whether `presented` equals this token, in time independent of where they differ.
    pub fn matches(&self, presented: &str) -> bool {
        tokens_equal(&self.0, presented)
    }
}

/// Constant-time equality of two token strings. Two empty strings never match: an empty
/// token means "no credential", and nothing may be authorised by it.
pub fn tokens_equal(expected: &str, presented: &str) -> bool {
    if expected.is_empty() || presented.is_empty() {
        return false;
    }
    bool::from(expected.as_bytes().ct_eq(presented.as_bytes()))
}

impl fmt::Debug for SessionToken {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("SessionToken(<redacted>)")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fresh_tokens_are_long_lowercase_hex_and_differ() {
        let a = SessionToken::generate().expect("random");
        let b = SessionToken::generate().expect("random");
        assert_eq!(a.expose().len(), TOKEN_BYTES * 2);
        assert!(a.expose().len() >= 32);
        assert!(a.expose().bytes().all(|c| matches!(c, b'0'..=b'9' | b'a'..=b'f')));
        assert_ne!(a.expose(), b.expose());
    }

    #[test]
    fn debug_never_shows_the_token() {
        let t = SessionToken::generate().expect("random");
        let shown = format!("{t:?} {t:#?}");
        assert!(!shown.contains(t.expose()));
        assert!(shown.contains("redacted"));
    }

    #[test]
    fn compare_is_exact() {
        let t = SessionToken::generate().expect("random");
        let text = t.expose().to_string();
        assert!(t.matches(&text));
        assert!(!t.matches(&text[..text.len() - 1]));
        assert!(!t.matches(&format!("{text}0")));
        assert!(!t.matches(&text.to_uppercase()));
        assert!(!t.matches(""));
        assert!(!tokens_equal("", ""));
        assert!(tokens_equal("abc", "abc"));
        assert!(!tokens_equal("abc", "abd"));
    }
}
