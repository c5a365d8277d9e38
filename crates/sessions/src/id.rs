//! The session id: twelve lowercase hex characters, and nothing else.
//!
//! An id arrives from an agent (`end-session`), from the operator (`mcec sessions rm`) or from a
//! directory name, and it ends up joined onto the sessions root. Parsing it once into
//! [`SessionId`] means a path separator, `..`, an empty string or anything exotic can never reach
//! a path join: a `SessionId` that exists is always safe to use as one path component.

use std::fmt;

use serde::{Serialize, Serializer};

/// Number of hex characters in a session id (48 bits).
pub const SESSION_ID_LEN: usize = 12;

/// A session id: exactly [`SESSION_ID_LEN`] characters from `0-9a-f`.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct SessionId([u8; SESSION_ID_LEN]);

/// Why a string is not a session id.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum IdError {
    /// The string is empty (or only whitespace).
    Empty,
    /// The string has the wrong number of characters.
    WrongLength(usize),
    /// The string holds a character outside `0-9a-f` (uppercase, `/`, `.`, …).
    BadCharacter,
}

impl fmt::Display for IdError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            IdError::Empty => write!(f, "is empty; expected {SESSION_ID_LEN} lowercase hex characters"),
            IdError::WrongLength(n) => {
                write!(f, "has {n} characters; expected exactly {SESSION_ID_LEN} lowercase hex characters")
            }
            IdError::BadCharacter => {
                write!(f, "may hold only the characters 0-9 and a-f ({SESSION_ID_LEN} of them)")
            }
        }
    }
}

impl std::error::Error for IdError {}

impl SessionId {
    /// Parses `s` strictly: no trimming, no case folding.
    pub fn parse(s: &str) -> Result<SessionId, IdError> {
        if s.trim().is_empty() {
            return Err(IdError::Empty);
        }
        let bytes = s.as_bytes();
        if !bytes.iter().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f')) {
            return Err(IdError::BadCharacter);
        }
        let arr: [u8; SESSION_ID_LEN] =
            bytes.try_into().map_err(|_| IdError::WrongLength(s.chars().count()))?;
        Ok(SessionId(arr))
    }

    /// A fresh random id from the OS random source.
    pub fn generate() -> Result<SessionId, getrandom::Error> {
        let mut raw = [0u8; SESSION_ID_LEN / 2];
        getrandom::fill(&mut raw)?;
        const DIGITS: &[u8; 16] = b"0123456789abcdef";
        let mut out = [0u8; SESSION_ID_LEN];
        for (i, byte) in raw.iter().enumerate() {
            out[2 * i] = DIGITS[usize::from(byte >> 4)];
            out[2 * i + 1] = DIGITS[usize::from(byte & 0x0f)];
        }
        Ok(SessionId(out))
    }

    /// The id as text; always valid as a single path component.
    pub fn as_str(&self) -> &str {
        // The constructor admits only ASCII hex digits, so this never fails.
        std::str::from_utf8(&self.0).unwrap_or("000000000000")
    }
}

impl fmt::Display for SessionId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl fmt::Debug for SessionId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "SessionId({})", self.as_str())
    }
}

impl std::str::FromStr for SessionId {
    type Err = IdError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        SessionId::parse(s)
    }
}

impl Serialize for SessionId {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accepts_twelve_lowercase_hex() {
        let id = SessionId::parse("0123456789ab").expect("valid id");
        assert_eq!(id.as_str(), "0123456789ab");
        assert_eq!(id.to_string(), "0123456789ab");
    }

    #[test]
    fn rejects_everything_else() {
        let bad = [
            ("", IdError::Empty),
            ("   ", IdError::Empty),
            ("..", IdError::BadCharacter),
            ("../x", IdError::BadCharacter),
            ("../0123456789", IdError::BadCharacter),
            ("0123456789AB", IdError::BadCharacter),
            ("/tmp/abcdef01", IdError::BadCharacter),
            ("abc/def01234", IdError::BadCharacter),
            (" 0123456789ab", IdError::BadCharacter),
            ("0123456789ab\n", IdError::BadCharacter),
            ("0123456789abc", IdError::WrongLength(13)),
            ("0123456789a", IdError::WrongLength(11)),
            ("g123456789ab", IdError::BadCharacter),
            ("０123456789ab", IdError::BadCharacter),
        ];
        for (input, want) in bad {
            assert_eq!(SessionId::parse(input), Err(want), "input {input:?}");
        }
    }

    #[test]
    fn generated_ids_parse_and_differ() {
        let a = SessionId::generate().expect("random");
        let b = SessionId::generate().expect("random");
        assert_eq!(SessionId::parse(a.as_str()), Ok(a));
        assert_ne!(a, b);
    }

    #[test]
    fn serializes_as_plain_string() {
        let id = SessionId::parse("00000000beef").expect("valid id");
        assert_eq!(serde_json::to_string(&id).expect("json"), "\"00000000beef\"");
    }
}
