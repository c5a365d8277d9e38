//! `end-session {sessionId, token}`: delete a session, but only for whoever holds its token.
//!
//! Teardown is not behind the provisioning opt-in (it must always be possible), so the token is
//! what stops any MCP caller from deleting any session it can name. The expected token is read
//! from the session's own `mcec.settings`; if that file is missing, unreadable or garbage the
//! token cannot be verified and teardown is refused (fail closed). The age-based reaper still
//! collects such a directory later.
//!
//! Order of answers (first match): malformed id or blank token → `bad-arguments`; no such
//! session → `{removed:true, alreadyGone:true}`; unverifiable or wrong token →
//! `session-token-invalid`; lock held → `session-running`; otherwise the directory goes.
//!
//! The token is read (through [`crate::safe_open`]) before the deleters' lock is taken: no
//! lock is ever held while a file the agent can replace is read, and a refused call writes
//! nothing at all.

use std::fmt;
use std::io::ErrorKind;
use std::path::Path;

use mcec_rules::audit::audit;
use mcec_rules::{ErrorCode, ToolError};
use serde::Serialize;

use crate::id::SessionId;
use crate::paths::{SETTINGS_FILE, session_id_of_dir};
use crate::remove::{DeletionGuard, Removal, RemoveError, resolve_root};
use crate::token::tokens_equal;

/// Largest settings file teardown will read.
const MAX_SETTINGS_BYTES: u64 = 64 * 1024;

/// The answer of a successful `end-session`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct EndOutcome {
    pub session_id: SessionId,
    /// Always true: after a successful call the session does not exist.
    pub removed: bool,
    /// True when there was nothing to remove.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub already_gone: bool,
}

/// Why `end-session` refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TeardownError {
    /// A malformed id or a missing/blank token; `field` is the argument's wire name.
    BadArguments { field: &'static str, problem: String },
    /// The token is wrong, or the session's config cannot be read to check it. `reason` is for
    /// the log; it never holds token material.
    TokenInvalid { id: SessionId, reason: String },
    /// The session's instance holds its lock.
    Running(SessionId),
    /// The file system failed (or the session resolved outside the root).
    Internal { id: SessionId, cause: String },
    /// The sessions root itself is not a usable directory (e.g. a file sits there).
    BadRoot(String),
}

impl TeardownError {
    /// The error an agent sees.
    pub fn to_tool_error(&self) -> ToolError {
        match self {
            TeardownError::BadArguments { field, problem } => ToolError::bad_argument(field, problem),
            TeardownError::TokenInvalid { id, .. } => ToolError::new(
                ErrorCode::SessionTokenInvalid,
                format!(
                    "The token does not match session {id}, or the session's config cannot be \
                     read to check it. Nothing was deleted; pass the token from the handoff."
                ),
            ),
            TeardownError::Running(id) => ToolError::new(
                ErrorCode::SessionRunning,
                format!(
                    "Session {id} is still running. Stop its mcec process first, then call \
                     end-session again."
                ),
            ),
            TeardownError::Internal { id, .. } => ToolError::new(
                ErrorCode::Internal,
                format!(
                    "Session {id} could not be removed completely; the operator can remove it \
                     with `mcec sessions rm {id}`, and the reaper retries later."
                ),
            ),
            TeardownError::BadRoot(cause) => ToolError::new(
                ErrorCode::Internal,
                format!(
                    "No session could be ended: the sessions root is not a usable directory ({cause}). \
                     Nothing was deleted; tell the operator."
                ),
            ),
        }
    }
}

impl fmt::Display for TeardownError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TeardownError::BadArguments { field, problem } => write!(f, "`{field}`: {problem}"),
            TeardownError::TokenInvalid { id, reason } => {
                write!(f, "token for session {id} not accepted: {reason}")
            }
            TeardownError::Running(id) => write!(f, "session {id} is running"),
            TeardownError::Internal { id, cause } => write!(f, "removing session {id}: {cause}"),
            TeardownError::BadRoot(cause) => write!(f, "the sessions root is unusable: {cause}"),
        }
    }
}

impl std::error::Error for TeardownError {}

/// Ends session `id` in `sessions_root` if `token` is its token (see the module doc).
pub fn end_session(sessions_root: &Path, id: &str, token: &str) -> Result<EndOutcome, TeardownError> {
    let id = SessionId::parse(id)
        .map_err(|e| TeardownError::BadArguments { field: "sessionId", problem: e.to_string() })?;
    if token.trim().is_empty() {
        return Err(TeardownError::BadArguments {
            field: "token",
            problem: "is missing or blank; pass the token from the handoff".into(),
        });
    }
    let gone = EndOutcome { session_id: id, removed: true, already_gone: true };
    let internal = |cause: String| TeardownError::Internal { id, cause };
    let bad_root = |e: RemoveError| match e {
        RemoveError::BadRoot(cause) => TeardownError::BadRoot(cause),
        other => internal(other.to_string()),
    };
    let Some(root) = resolve_root(sessions_root).map_err(bad_root)? else {
        return Ok(gone);
    };
    let dir = root.join(id.as_str());
    match std::fs::symlink_metadata(&dir) {
        Ok(_) => {}
        Err(e) if e.kind() == ErrorKind::NotFound => return Ok(gone),
        Err(e) => return Err(internal(e.to_string())),
    }
    let token_invalid = |reason: String| {
        audit("end-session-refused", &format!("session={id} reason={reason}"));
        TeardownError::TokenInvalid { id, reason }
    };
    let checked = if session_id_of_dir(&dir) != Some(id) {
        Err("not a session directory".to_string())
    } else {
        read_session_token(&dir)
            .and_then(|expected| tokens_equal(&expected, token).then_some(()).ok_or("wrong token".into()))
    };
    if let Err(reason) = checked {
        // A concurrent deletion may have taken the directory while it was being read.
        return if dir.symlink_metadata().is_err() { Ok(gone) } else { Err(token_invalid(reason)) };
    }
    let guard = match DeletionGuard::lock(sessions_root).map_err(bad_root)? {
        Some(g) => g,
        None => return Ok(gone),
    };
    match guard.remove(&id) {
        Ok(Removal::Removed) => {
            audit("session-ended", &format!("session={id} removed=true"));
            Ok(EndOutcome { session_id: id, removed: true, already_gone: false })
        }
        Ok(Removal::AlreadyGone) => Ok(gone),
        Err(RemoveError::Running(id)) => {
            audit("end-session-refused", &format!("session={id} reason=running"));
            Err(TeardownError::Running(id))
        }
        Err(RemoveError::NotASession(_)) => Err(token_invalid("not a session directory".into())),
        Err(e) => {
            audit("end-session-failed", &format!("session={id} cause={e}"));
            Err(internal(e.to_string()))
        }
    }
}

/// The `McpAuthToken` of the session in `dir`, read from its co-located settings without
/// following a symlink. The error is a log-safe reason; it never quotes the file.
pub fn read_session_token(dir: &Path) -> Result<String, String> {
    let bytes = match crate::safe_open::read_regular(&dir.join(SETTINGS_FILE), MAX_SETTINGS_BYTES) {
        Ok(Some(bytes)) => bytes,
        Ok(None) => return Err(format!("{SETTINGS_FILE} is missing")),
        Err(e) if crate::safe_open::is_not_regular(&e) => {
            return Err(format!("{SETTINGS_FILE} is not a regular file"));
        }
        Err(e) => return Err(format!("cannot read {SETTINGS_FILE}: {}", e.kind())),
    };
    let text = String::from_utf8(bytes).map_err(|_| format!("{SETTINGS_FILE} is not UTF-8"))?;
    let table: toml::Table =
        toml::from_str(&text).map_err(|_| format!("{SETTINGS_FILE} does not parse as TOML"))?;
    match table.get("McpAuthToken") {
        Some(toml::Value::String(t)) if !t.trim().is_empty() => Ok(t.clone()),
        Some(toml::Value::String(_)) => Err("McpAuthToken is empty".into()),
        Some(_) => Err("McpAuthToken is not a string".into()),
        None => Err("McpAuthToken is missing".into()),
    }
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    #[test]
    fn bad_arguments_come_first() {
        let root = tempfile::tempdir().expect("tempdir");
        for bad in ["", "..", "../x", "0123456789AB", "/etc/passwd", "0123456789abc"] {
            let e = end_session(root.path(), bad, "tok").expect_err("refused");
            assert!(matches!(e, TeardownError::BadArguments { field: "sessionId", .. }), "{bad}: {e:?}");
            assert_eq!(e.to_tool_error().code, ErrorCode::BadArguments);
        }
        for blank in ["", "   ", "\t\n"] {
            let e = end_session(root.path(), "0123456789ab", blank).expect_err("refused");
            assert!(matches!(e, TeardownError::BadArguments { field: "token", .. }));
        }
    }

    #[test]
    fn absent_session_is_already_gone() {
        let root = tempfile::tempdir().expect("tempdir");
        let out = end_session(root.path(), "0123456789ab", "tok").expect("gone");
        assert!(out.removed && out.already_gone);
        let json = serde_json::to_value(&out).expect("json");
        assert_eq!(
            json,
            serde_json::json!({"sessionId": "0123456789ab", "removed": true, "alreadyGone": true})
        );
        let missing_root = root.path().join("missing");
        assert!(end_session(&missing_root, "0123456789ab", "tok").expect("gone").already_gone);
    }

    #[test]
    fn token_reading_fails_closed() {
        let dir = tempfile::tempdir().expect("tempdir");
        assert!(read_session_token(dir.path()).is_err());
        let cases: [(&str, &str); 5] = [
            ("McpAuthToken = 5\n", "not a string"),
            ("McpAuthToken = \"\"\n", "empty"),
            ("Other = 1\n", "missing"),
            ("McpAuthToken = \"abc\nbroken", "does not parse"),
            ("\u{0}\u{1}garbage = = =", "does not parse"),
        ];
        for (text, want) in cases {
            std::fs::write(dir.path().join(SETTINGS_FILE), text).expect("write");
            let why = read_session_token(dir.path()).expect_err(text);
            assert!(why.contains(want), "{text:?} -> {why}");
            assert!(!why.contains("abc"), "reason quotes the file: {why}");
        }
        std::fs::write(dir.path().join(SETTINGS_FILE), "McpAuthToken = \"abcd\"\n").expect("write");
        assert_eq!(read_session_token(dir.path()).as_deref(), Ok("abcd"));
    }

    #[test]
    fn tool_error_codes() {
        let id = SessionId::parse("0123456789ab").expect("id");
        let t = TeardownError::TokenInvalid { id, reason: "x".into() }.to_tool_error();
        assert_eq!(t.code, ErrorCode::SessionTokenInvalid);
        assert_eq!(TeardownError::Running(id).to_tool_error().code, ErrorCode::SessionRunning);
        let i = TeardownError::Internal { id, cause: "/secret/path".into() }.to_tool_error();
        assert_eq!(i.code, ErrorCode::Internal);
        assert!(!i.detail.contains("/secret/path"));
    }
}
