//! Changing one key of `mcec.settings` without disturbing the rest of the file.
//!
//! The operator's settings file is theirs: comments, ordering, blank lines and keys this build
//! does not know must survive when the Agent tab flips `AllowSessionProvisioning`. So the edit
//! is textual: the key's own line is replaced (keeping any trailing comment), or the key is
//! appended to the top-level table; every other byte stays as it was. [`set_setting`] then
//! re-parses the result and refuses the edit unless exactly the one key changed, so a file
//! this simple editor cannot handle is never rewritten.

use std::fmt;

use super::{Settings, SettingsError, parse_settings};

/// Set `key` to `toml_value` (already TOML-encoded, e.g. `true` or `"text"`) in the top-level
/// table of `text`. Replaces the key's line when it is there, keeping the line's indentation,
/// any comment after the value and its line ending; otherwise inserts `key = value` before the
/// first `[table]` header, or at the end. Every other line is kept byte for byte.
pub fn set_key(text: &str, key: &str, toml_value: &str) -> String {
    let mut out = String::with_capacity(text.len() + key.len() + toml_value.len() + 4);
    let mut done = false;
    let mut in_top_table = true;
    for line in text.split_inclusive('\n') {
        let (body, ending) = split_ending(line);
        if !done && in_top_table && is_table_header(body) {
            in_top_table = false;
            out.push_str(&format!("{key} = {toml_value}\n"));
            done = true;
        }
        if !done
            && in_top_table
            && let Some(replaced) = replace_on_line(body, key, toml_value)
        {
            out.push_str(&replaced);
            out.push_str(ending);
            done = true;
            continue;
        }
        out.push_str(line);
    }
    if !done {
        if !out.is_empty() && !out.ends_with('\n') {
            out.push('\n');
        }
        out.push_str(&format!("{key} = {toml_value}\n"));
    }
    out
}

/// Why [`set_setting`] would not produce a new file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EditError {
    /// The current file does not parse; it is never rewritten (fail closed).
    Unparsable(SettingsError),
    /// The edited text did not come out as "the same settings with one key changed".
    Unexpected(String),
}

impl fmt::Display for EditError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            EditError::Unparsable(e) => write!(f, "{e}"),
            EditError::Unexpected(why) => write!(
                f,
                "the settings file is laid out in a way mcec cannot edit safely ({why}); edit it by hand"
            ),
        }
    }
}

impl std::error::Error for EditError {}

/// Set one boolean setting in the text of `mcec.settings` and check the result: the current
/// text must parse, and the new text must parse to the same settings with only `key` changed
/// (by way of `apply`, which sets the field `key` names). Returns the new text.
pub fn set_setting(
    text: &str,
    file: &str,
    key: &str,
    value: bool,
    apply: impl Fn(&mut Settings, bool),
) -> Result<String, EditError> {
    let before = parse_settings(text, file).map_err(EditError::Unparsable)?;
    let edited = set_key(text, key, if value { "true" } else { "false" });
    let after = parse_settings(&edited, file)
        .map_err(|e| EditError::Unexpected(format!("the edited file would not parse: {}", e.problem)))?;
    let mut expected = before.value;
    apply(&mut expected, value);
    if after.value != expected {
        return Err(EditError::Unexpected(format!("{key} did not come out as {value}")));
    }
    if after.warnings.len() != before.warnings.len() {
        return Err(EditError::Unexpected("other keys would change".into()));
    }
    Ok(edited)
}

fn split_ending(line: &str) -> (&str, &str) {
    if let Some(body) = line.strip_suffix("\r\n") {
        (body, "\r\n")
    } else if let Some(body) = line.strip_suffix('\n') {
        (body, "\n")
    } else {
        (line, "")
    }
}

fn is_table_header(body: &str) -> bool {
    body.trim_start().starts_with('[')
}

/// `body` with the value of `key` replaced, when `body` is `key = <value>` (bare or quoted
/// key); `None` for any other line.
fn replace_on_line(body: &str, key: &str, toml_value: &str) -> Option<String> {
    let indent_len = body.len() - body.trim_start().len();
    let (indent, rest) = body.split_at(indent_len);
    let quoted = format!("\"{key}\"");
    let after_key = rest
        .strip_prefix(key)
        .or_else(|| rest.strip_prefix(quoted.as_str()))
        .filter(|r| r.trim_start().starts_with('='))?;
    let eq = after_key.find('=')?;
    let key_part = &rest[..rest.len() - after_key.len() + eq + 1];
    let value_and_tail = &after_key[eq + 1..];
    let tail = &value_and_tail[value_len(value_and_tail)..];
    Some(format!("{indent}{key_part} {toml_value}{tail}"))
}

/// Length of the leading whitespace plus the single-line value at the start of `s`, so what
/// follows (spaces and a comment) can be kept.
fn value_len(s: &str) -> usize {
    let start = s.len() - s.trim_start().len();
    let v = &s[start..];
    let end = if let Some(inner) = v.strip_prefix('"') {
        let mut escaped = false;
        inner
            .char_indices()
            .find(|&(_, c)| {
                let close = c == '"' && !escaped;
                escaped = c == '\\' && !escaped;
                close
            })
            .map_or(v.len(), |(i, _)| i + 2)
    } else if let Some(inner) = v.strip_prefix('\'') {
        inner.find('\'').map_or(v.len(), |i| i + 2)
    } else {
        v.find(|c: char| c.is_whitespace() || c == '#').unwrap_or(v.len())
    };
    start + end
}

#[cfg(test)]
mod tests {
    use super::*;

    const KEY: &str = "AllowSessionProvisioning";

    fn set_allow(s: &mut Settings, v: bool) {
        s.allow_session_provisioning = v;
    }

    #[test]
    fn replaces_only_the_keys_line() {
        let text = "# my settings\nAgentCommandsEnabled = true\n\nAllowSessionProvisioning = false\nMcpHttpPort = 6000 # mine\n";
        let out = set_key(text, KEY, "true");
        assert_eq!(
            out,
            "# my settings\nAgentCommandsEnabled = true\n\nAllowSessionProvisioning = true\nMcpHttpPort = 6000 # mine\n"
        );
    }

    #[test]
    fn keeps_indent_comment_spacing_and_crlf() {
        let text = "A = 1\r\n  AllowSessionProvisioning   =   false   # operator said no\r\nB = 2";
        let out = set_key(text, KEY, "true");
        assert_eq!(out, "A = 1\r\n  AllowSessionProvisioning   = true   # operator said no\r\nB = 2");
    }

    #[test]
    fn appends_when_missing_with_and_without_final_newline() {
        assert_eq!(set_key("", KEY, "true"), "AllowSessionProvisioning = true\n");
        assert_eq!(set_key("A = 1", KEY, "true"), "A = 1\nAllowSessionProvisioning = true\n");
        assert_eq!(
            set_key("A = 1\n# end\n", KEY, "false"),
            "A = 1\n# end\nAllowSessionProvisioning = false\n"
        );
    }

    #[test]
    fn inserts_before_the_first_table_and_ignores_keys_inside_tables() {
        let text = "A = 1\n[extra]\nAllowSessionProvisioning = false\n";
        let out = set_key(text, KEY, "true");
        assert_eq!(
            out,
            "A = 1\nAllowSessionProvisioning = true\n[extra]\nAllowSessionProvisioning = false\n"
        );
    }

    #[test]
    fn does_not_touch_lookalike_keys_or_comments() {
        let text = "# AllowSessionProvisioning = true\nAllowSessionProvisioningX = 1\n";
        let out = set_key(text, KEY, "true");
        assert_eq!(out, format!("{text}AllowSessionProvisioning = true\n"));
    }

    #[test]
    fn quoted_key_and_string_values_with_hashes() {
        let text = "\"AllowSessionProvisioning\" = false\nMcpAuthToken = \"a#b\\\"c\" # t\n";
        assert_eq!(
            set_key(text, KEY, "true"),
            "\"AllowSessionProvisioning\" = true\nMcpAuthToken = \"a#b\\\"c\" # t\n"
        );
        assert_eq!(
            set_key(text, "McpAuthToken", "\"new\""),
            "\"AllowSessionProvisioning\" = false\nMcpAuthToken = \"new\" # t\n"
        );
    }

    #[test]
    fn set_setting_checks_the_result() {
        let text = "# keep me\nAgentCommandsEnabled = true\nColour = \"blue\"\n";
        let out = set_setting(text, "f", KEY, true, set_allow).unwrap();
        assert_eq!(out, format!("{text}AllowSessionProvisioning = true\n"));
        let back = set_setting(&out, "f", KEY, false, set_allow).unwrap();
        assert_eq!(back, format!("{text}AllowSessionProvisioning = false\n"));
    }

    #[test]
    fn set_setting_refuses_a_broken_file() {
        let text = "AgentCommandsEnabled = \"yes\"\n";
        match set_setting(text, "f", KEY, true, set_allow) {
            Err(EditError::Unparsable(e)) => assert_eq!(e.key.as_deref(), Some("AgentCommandsEnabled")),
            other => panic!("expected a parse refusal, got {other:?}"),
        }
        assert!(matches!(
            set_setting("this is not toml\n", "f", KEY, true, set_allow),
            Err(EditError::Unparsable(_))
        ));
    }

    #[test]
    fn set_setting_refuses_a_layout_it_cannot_edit() {
        // A multi-line value on the key's line: the one-line edit would leave garbage behind.
        let text = "AllowSessionProvisioning = [\n  false,\n]\n";
        assert!(set_setting(text, "f", KEY, true, set_allow).is_err());
        // A dotted/inline form the line editor does not recognise as the key.
        let text = "AllowSessionProvisioning.x = false\n";
        assert!(set_setting(text, "f", KEY, true, set_allow).is_err());
    }
}
