//! Redaction of every log line, by value and by shape.
//!
//! By value: the secrets registered at start-up (the configured `McpAuthToken`).
//! By shape, for secrets this process cannot know in advance (a session token an agent
//! echoes, a wrong token it tries, the bearer of an HTTP client):
//! - every run of 32 or more hex digits (session tokens are 64; ids and hashes mcec logs are
//!   shorter, so nothing useful is lost),
//! - the word after `Bearer`,
//! - the value after a key ending in `token` or named `authorization` (`token=…`,
//!   `"token": "…"`, `McpAuthToken = "…"`, `authorization: …`).

/// What replaces a secret.
pub const MARK: &str = "<redacted>";
/// Shortest hex run taken for a token.
pub const MIN_HEX_RUN: usize = 32;

/// `line` with every registered secret and every token-shaped value replaced.
pub fn redact(line: &str, secrets: &[String]) -> String {
    let mut text = line.to_string();
    for secret in secrets {
        if text.contains(secret.as_str()) {
            text = text.replace(secret.as_str(), MARK);
        }
    }
    let text = after_keys(&text);
    hex_runs(&text)
}

fn hex_runs(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    while i < bytes.len() {
        let run = bytes[i..].iter().take_while(|b| b.is_ascii_hexdigit()).count();
        if run >= MIN_HEX_RUN {
            out.push_str(MARK);
            i += run;
        } else if run > 0 {
            out.push_str(&text[i..i + run]);
            i += run;
        } else {
            let ch = text[i..].chars().next().unwrap_or('\u{fffd}');
            out.push(ch);
            i += ch.len_utf8().max(1);
        }
    }
    out
}

/// Redacts the value that follows `bearer`, `…token` + `:`/`=`, or `authorization` + `:`/`=`.
fn after_keys(text: &str) -> String {
    let lower = text.to_ascii_lowercase();
    let mut out = String::with_capacity(text.len());
    let mut copied = 0;
    let mut search = 0;
    while let Some((key_end, key)) = next_key(&lower, search) {
        search = key_end;
        let Some((start, end)) = value_after(text, key_end, key) else { continue };
        if start < copied {
            continue;
        }
        out.push_str(&text[copied..start]);
        out.push_str(MARK);
        copied = end;
        search = end;
    }
    out.push_str(&text[copied..]);
    out
}

const KEYS: [&str; 3] = ["bearer", "token", "authorization"];

/// The end of the next key at or after `from`, and which key it is.
fn next_key(lower: &str, from: usize) -> Option<(usize, &'static str)> {
    KEYS.iter()
        .filter_map(|key| lower.get(from..)?.find(key).map(|at| (from + at + key.len(), *key)))
        .min_by_key(|(end, _)| *end)
}

/// The byte range of the value after `key` ending at `at`, if one follows. `bearer` needs
/// only a space before its value, the others a `:` or `=`; an `authorization` value is the
/// whole header value (scheme and credentials).
fn value_after(text: &str, at: usize, key: &str) -> Option<(usize, usize)> {
    let needs_separator = key != "bearer";
    let bytes = text.as_bytes();
    let mut i = at;
    let mut separator = false;
    let mut quoted = false;
    while let Some(&b) = bytes.get(i) {
        match b {
            b':' | b'=' => (separator, quoted) = (true, false),
            b'\\' | b' ' | b'\t' => {}
            b'"' => quoted = true,
            _ => break,
        }
        i += 1;
    }
    // `bearer` needs at least one space or separator before its value; nothing glued on.
    if (needs_separator && !separator) || i == at {
        return None;
    }
    let start = i;
    while let Some(&b) = bytes.get(i) {
        // A quoted value runs to its closing quote, spaces included.
        let ends: &[u8] = if quoted || key == "authorization" { b"\"\\\n\r" } else { b"\"\\ \t,})';\n\r" };
        if ends.contains(&b) {
            break;
        }
        i += 1;
    }
    (i > start).then_some((start, i))
}

#[cfg(test)]
mod tests {
    use super::*;

    const HEX64: &str = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";

    #[test]
    fn registered_secrets_go_wherever_they_appear() {
        let line = redact("tool=s3cr3t-value-x and xs3cr3t-value-xx", &["s3cr3t-value-x".into()]);
        assert!(!line.contains("s3cr3t-value-x"), "{line}");
    }

    #[test]
    fn token_shapes_are_redacted() {
        for (line, gone) in [
            (format!("AGENT-AUDIT: refused; tool={HEX64} ok=false"), HEX64),
            (format!("unknown tool {}", &HEX64[..32]), &HEX64[..32]),
            ("authorization: Bearer hunter2-not-hex".to_string(), "hunter2-not-hex"),
            ("headers {\"authorization\": \"Basic dXNlcjpwdw==\"}".to_string(), "dXNlcjpwdw=="),
            (
                "{\"name\":\"end-session\",\"arguments\":{\"token\":\"wrong token!\"}}".to_string(),
                "wrong token",
            ),
            ("{\\\"token\\\":\\\"wr0ng\\\"}".to_string(), "wr0ng"),
            ("McpAuthToken = \"short\"".to_string(), "short"),
            ("sessionToken=abc.def".to_string(), "abc.def"),
        ] {
            let out = redact(&line, &[]);
            assert!(!out.contains(gone), "{line} -> {out}");
            assert!(out.contains(MARK), "{line} -> {out}");
        }
    }

    #[test]
    fn ordinary_lines_are_left_alone() {
        for line in [
            "AGENT-AUDIT: session-provisioned; session=0a1b2c3d4e5f by=agent mcpServer=true",
            "AGENT-AUDIT: refused; tool=end-session ok=false code=session-token-invalid ms=0.3",
            "MCP over HTTP on http://127.0.0.1:5151/mcp (every request needs the McpAuthToken as its bearer)",
            "a token is required",
            "window 0x1e00007 at 12,34 — ünïcode ok",
        ] {
            assert_eq!(redact(line, &[]), line);
        }
        let short_hex = &HEX64[..MIN_HEX_RUN - 1];
        assert_eq!(redact(short_hex, &[]), short_hex);
    }
}
