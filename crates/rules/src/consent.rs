//! `request-command-access`: what an agent may ask the operator for, how its reason is made
//! safe to show, and the book of answers one process keeps.
//!
//! The agent names up to [`MAX_REQUESTED`] commands (catalogue tools or raw kinds such as
//! `send_command.chars`) and gives a reason. The reason reaches the operator's prompt only
//! after [`sanitize_reason`]: one line, at most [`MAX_REASON_CHARS`] characters, no control,
//! bidirectional or zero-width characters, so it cannot reorder, hide or fake the prompt's
//! own text. The answer is the operator's; this module only records it ([`ConsentBook`]): a
//! grant lives in memory for this process (never in `mcec.commands`), a denial is sticky for
//! the commands it named, a timeout or an unavailable prompt changes nothing. One prompt at a
//! time: while one is open the book says so, and the gates freeze actuation
//! ([`crate::gates::admit`]).

use std::collections::BTreeSet;
use std::time::Duration;

use crate::catalog::{self, ToolKind};
use crate::command_lang::RawKind;
use crate::settings::Commands;
use crate::{ErrorCode, ToolError};

/// Most commands one request may name.
pub const MAX_REQUESTED: usize = 8;
/// Longest reason shown to the operator, in characters (longer ones end with `…`).
pub const MAX_REASON_CHARS: usize = 300;
/// Longest reason accepted at all, in bytes (a bound on the work, not on what is shown).
pub const MAX_REASON_INPUT_BYTES: usize = 64 * 1024;
/// How long the operator has to answer.
pub const CONSENT_TIMEOUT: Duration = Duration::from_secs(120);

/// The one-line note every agent gets in `commandAccess`.
pub const NOTE: &str = "To use a command that is not enabled, call request-command-access once with every command \
you need and a one-line reason; the operator answers in a local prompt. A denial is final for this session. Never \
try to grant yourself access by editing mcec.commands or any other file.";

/// Whether `name` may be asked for: a command tool of the catalogue or `send_command.<kind>`.
pub fn requestable(name: &str) -> bool {
    catalog::is_command(name)
        || name
            .strip_prefix("send_command.")
            .and_then(RawKind::from_name)
            .is_some_and(|kind| kind.setting() == name)
}

/// Every tool an agent may ask for, in catalogue order.
pub fn requestable_tools() -> impl Iterator<Item = &'static str> {
    catalog::TOOLS
        .iter()
        .filter(|t| matches!(t.kind, ToolKind::Observation | ToolKind::Actuation))
        .map(|t| t.name)
}

/// Every raw kind an agent may ask for (`send_command.chars`, ...).
pub fn requestable_raw_kinds() -> impl Iterator<Item = String> {
    RawKind::ALL.into_iter().map(RawKind::setting)
}

/// Check the requested names: 1 to [`MAX_REQUESTED`], each requestable. Repeats collapse.
pub fn requested_commands(names: &[String]) -> Result<Vec<String>, ToolError> {
    if names.is_empty() || names.len() > MAX_REQUESTED {
        return Err(ToolError::bad_argument(
            "commands",
            format!("name 1 to {MAX_REQUESTED} commands (got {}); batch them into one request", names.len()),
        ));
    }
    let mut out: Vec<String> = Vec::with_capacity(names.len());
    for (i, name) in names.iter().enumerate() {
        if !requestable(name) {
            return Err(ToolError::bad_argument(
                &format!("commands[{i}]"),
                format!(
                    "`{}` is not a command that can be requested (a tool from tools/list's catalogue, or \
                     send_command.chars|key|mouse|pause)",
                    crate::gates::printable(name)
                ),
            ));
        }
        if !out.contains(name) {
            out.push(name.clone());
        }
    }
    Ok(out)
}

/// The reason as the operator sees it: characters that could hide, reorder or restyle text
/// are removed, line breaks and tabs become spaces, runs of spaces collapse, and the result
/// is cut to [`MAX_REASON_CHARS`] characters.
pub fn sanitize_reason(raw: &str) -> String {
    let mut out = String::new();
    let mut count = 0;
    let mut pending_space = false;
    for c in raw.chars() {
        let c = if c.is_whitespace() { ' ' } else { c };
        if c == ' ' {
            pending_space = count > 0;
            continue;
        }
        if hidden(c) {
            continue;
        }
        let needed = usize::from(pending_space) + 1;
        if count + needed > MAX_REASON_CHARS {
            out.push('…');
            return out;
        }
        if pending_space {
            out.push(' ');
            count += 1;
            pending_space = false;
        }
        out.push(c);
        count += 1;
    }
    out
}

/// Control characters, bidirectional embeddings, overrides, isolates and marks, zero-width
/// characters, and other invisible formatting characters.
fn hidden(c: char) -> bool {
    c.is_control()
        || matches!(c,
            '\u{00AD}' | '\u{034F}' | '\u{061C}' | '\u{115F}' | '\u{1160}' | '\u{17B4}' | '\u{17B5}'
            | '\u{180B}'..='\u{180F}'
            | '\u{200B}'..='\u{200F}'
            | '\u{2028}'..='\u{202E}'
            | '\u{2060}'..='\u{206F}'
            | '\u{3164}' | '\u{FE00}'..='\u{FE0F}' | '\u{FEFF}' | '\u{FFA0}'
            | '\u{FFF9}'..='\u{FFFB}'
            | '\u{E0000}'..='\u{E007F}')
}

/// How one prompt ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// `Allow`, clicked by the operator's own hand (the monitor attested it).
    Granted,
    /// `Deny`, Enter, Esc or the window's close button.
    Denied,
    /// Nobody answered within the time allowed.
    TimedOut,
    /// No prompt could be shown; the text says why.
    Unavailable(String),
    /// The emergency stop engaged, or the call was cancelled: the prompt closed, nothing granted.
    Stopped,
}

/// What to do with a new request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Begin {
    /// Everything asked for is already enabled: answer at once, no prompt.
    AlreadyEnabled,
    /// Show the prompt for these (the ones not yet enabled). The book is now asking.
    Ask(Vec<String>),
}

/// The answers of one process: grants (in memory only), sticky denials, and the open prompt.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ConsentBook {
    granted: BTreeSet<String>,
    denied: BTreeSet<String>,
    asking: Option<Vec<String>>,
}

impl ConsentBook {
    /// A new request for `requested` (already checked by [`requested_commands`]); `enabled`
    /// says what `mcec.commands` enables now.
    pub fn begin(&mut self, requested: &[String], enabled: &Commands) -> Result<Begin, ToolError> {
        if self.asking.is_some() {
            return Err(pending());
        }
        if let Some(name) = requested.iter().find(|n| self.denied.contains(*n)) {
            return Err(ToolError::new(
                ErrorCode::ConsentDenied,
                format!(
                    "The operator already denied `{name}` in this session; mcec does not ask again. Carry on \
                     without it, or tell the user."
                ),
            ));
        }
        let missing: Vec<String> = requested
            .iter()
            .filter(|n| !enabled.is_enabled(n) && !self.granted.contains(*n))
            .cloned()
            .collect();
        if missing.is_empty() {
            return Ok(Begin::AlreadyEnabled);
        }
        self.asking = Some(missing.clone());
        Ok(Begin::Ask(missing))
    }

    /// Record how the open prompt ended. On `Granted`, the names granted.
    pub fn finish(&mut self, outcome: &Outcome) -> Result<Vec<String>, ToolError> {
        let asked = self.asking.take().unwrap_or_default();
        let list = asked.iter().map(|n| format!("`{n}`")).collect::<Vec<_>>().join(", ");
        match outcome {
            Outcome::Granted => {
                self.granted.extend(asked.iter().cloned());
                Ok(asked)
            }
            Outcome::Denied => {
                self.denied.extend(asked);
                Err(ToolError::new(
                    ErrorCode::ConsentDenied,
                    format!(
                        "The operator did not allow {list}. Do not ask again for these in this session; carry on \
                         without them, or tell the user."
                    ),
                ))
            }
            Outcome::TimedOut => Err(ToolError::new(
                ErrorCode::ConsentTimeout,
                format!(
                    "The operator did not answer the request for {list} in time; nothing was enabled. Ask again \
                     only if the user expects it."
                ),
            )),
            Outcome::Unavailable(why) => Err(ToolError::new(
                ErrorCode::ConsentUnavailable,
                format!(
                    "mcec cannot ask the operator here ({why}); nothing was enabled. Ask the user instead."
                ),
            )),
            Outcome::Stopped => Err(ToolError::emergency_stopped()),
        }
    }

    /// Whether the operator denied `name` in this process.
    pub fn is_denied(&self, name: &str) -> bool {
        self.denied.contains(name)
    }

    /// Whether a prompt is open.
    pub fn is_asking(&self) -> bool {
        self.asking.is_some()
    }

    /// `enabled` (from `mcec.commands`) plus this process's grants.
    pub fn effective(&self, enabled: &Commands) -> Commands {
        let mut out = enabled.clone();
        for name in &self.granted {
            out.set(name, true);
        }
        out
    }
}

/// The refusal every frozen call gets while a prompt is open.
pub fn pending() -> ToolError {
    ToolError::new(
        ErrorCode::ConsentPending,
        "A request-command-access prompt is waiting for the operator; actuation and provisioning wait until \
         it is answered (at most 120 s). Observation tools still work; try again after the answer.",
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn the_consent_codes_have_their_own_words() {
        let codes = [
            (ErrorCode::ConsentDenied, "consent-denied", "refused"),
            (ErrorCode::ConsentTimeout, "consent-timeout", "timeout"),
            (ErrorCode::ConsentUnavailable, "consent-unavailable", "unavailable"),
            (ErrorCode::ConsentPending, "consent-pending", "refused"),
        ];
        for (code, word, category) in codes {
            assert_eq!((code.as_str(), code.category()), (word, category));
        }
    }

    #[test]
    fn requestable_names_are_commands_and_raw_kinds() {
        for ok in ["click", "launch", "capture", "send_command", "send_command.chars", "send_command.pause"] {
            assert!(requestable(ok), "{ok}");
        }
        for bad in [
            "session-status",
            "provision-session",
            "request-command-access",
            "send_command.shell",
            "",
            "send_command.CHARS",
            "nope",
        ] {
            assert!(!requestable(bad), "{bad}");
        }
        assert!(requestable_tools().any(|t| t == "launch"));
        assert_eq!(requestable_raw_kinds().count(), 4);
    }

    #[test]
    fn one_to_eight_names_and_repeats_collapse() {
        assert_eq!(requested_commands(&[]).unwrap_err().code, ErrorCode::BadArguments);
        let nine = names(&["click"; 9]);
        assert_eq!(requested_commands(&nine).unwrap_err().code, ErrorCode::BadArguments);
        assert_eq!(
            requested_commands(&names(&["click", "type", "click"])).unwrap(),
            names(&["click", "type"])
        );
        let err = requested_commands(&names(&["click", "session-status"])).unwrap_err();
        assert!(err.detail.starts_with("`commands[1]`"), "{}", err.detail);
    }

    #[test]
    fn reasons_are_one_clean_line() {
        assert_eq!(sanitize_reason("  fill in\nthe\r\n form\t now  "), "fill in the form now");
        let rtl = "click \u{202E}wolla\u{202C} here \u{2066}x\u{2069}\u{200B}\u{FEFF}\u{7}\u{1b}[31m";
        assert_eq!(sanitize_reason(rtl), "click wolla here x[31m");
        let long = sanitize_reason(&"é".repeat(10_000));
        assert_eq!(long.chars().count(), MAX_REASON_CHARS + 1);
        assert!(long.ends_with('…'));
        assert_eq!(sanitize_reason("\u{202E}\n\t"), "");
        let exact = "a".repeat(MAX_REASON_CHARS);
        assert_eq!(sanitize_reason(&exact), exact);
        for c in sanitize_reason("a\u{2028}b\u{2029}c\u{061C}d\u{E0041}e").chars() {
            assert!(c.is_ascii_alphabetic() || c == ' ', "{c:?}");
        }
    }

    #[test]
    fn grants_denials_and_timeouts() {
        let file = Commands::enabling(["capture"]);
        let mut book = ConsentBook::default();
        assert_eq!(book.begin(&names(&["capture"]), &file), Ok(Begin::AlreadyEnabled));
        assert!(!book.is_asking());
        assert_eq!(book.begin(&names(&["capture", "click"]), &file), Ok(Begin::Ask(names(&["click"]))));
        assert!(book.is_asking());
        assert_eq!(book.begin(&names(&["type"]), &file).unwrap_err().code, ErrorCode::ConsentPending);
        assert_eq!(book.finish(&Outcome::Granted), Ok(names(&["click"])));
        assert!(book.effective(&file).is_enabled("click"));
        assert!(!file.is_enabled("click"), "grants never touch the file's commands");
        assert_eq!(book.begin(&names(&["click"]), &file), Ok(Begin::AlreadyEnabled));

        assert!(matches!(book.begin(&names(&["type", "key"]), &file), Ok(Begin::Ask(_))));
        assert_eq!(book.finish(&Outcome::TimedOut).unwrap_err().code, ErrorCode::ConsentTimeout);
        assert!(matches!(book.begin(&names(&["type"]), &file), Ok(Begin::Ask(_))), "a timeout is not sticky");
        assert_eq!(book.finish(&Outcome::Denied).unwrap_err().code, ErrorCode::ConsentDenied);
        assert_eq!(book.begin(&names(&["key", "type"]), &file).unwrap_err().code, ErrorCode::ConsentDenied);
        assert!(book.is_denied("type") && !book.is_denied("key"));
        assert!(!book.is_asking(), "a sticky denial opens no prompt");
        assert!(matches!(book.begin(&names(&["key"]), &file), Ok(Begin::Ask(_))));
        let stopped = book.finish(&Outcome::Stopped).unwrap_err();
        assert_eq!(stopped.code, ErrorCode::EmergencyStopped);
        assert!(!book.effective(&file).is_enabled("key"));
        assert!(matches!(book.begin(&names(&["key"]), &file), Ok(Begin::Ask(_))));
        let unavailable = book.finish(&Outcome::Unavailable("no display".into())).unwrap_err();
        assert_eq!(unavailable.code, ErrorCode::ConsentUnavailable);
        assert!(unavailable.detail.contains("no display"));
    }
}
