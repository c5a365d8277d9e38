//! The HTTP front door's gate as one pure decision over the request head, taken before
//! the body is read: 405 → 404 → 400 (a repeated Host/Origin/Authorization/Content-Length,
//! even with the same value, or a fragment in the request target) → 403 (the authority:
//! the target's in absolute form, else `Host`) → 403 (Origin) → 401 (bearer) → 413
//! (declared size) → 503 (too many in flight). The axum layer only gathers the head (with
//! what the wire showed before the HTTP parser merged or dropped it) and applies the
//! verdict; chunked bodies are capped again by a streaming limit there.

use subtle::ConstantTimeEq;

/// Largest request body accepted.
pub const MAX_BODY_BYTES: u64 = 1024 * 1024;
/// Most requests served at once; the next one gets 503, never a queue.
pub const MAX_IN_FLIGHT: usize = 16;

/// What the gate looks at. Header values that are not valid UTF-8 arrive as `Some("")`
/// (never as `None`), so a garbage header can't pass as an absent one. `Debug` never shows
/// the `Authorization` value.
#[derive(Clone, Copy, Default)]
pub struct RequestHead<'a> {
    pub method: &'a str,
    pub path: &'a str,
    /// The authority of a request target in absolute form (`POST http://host:port/mcp`),
    /// which is judged instead of `Host` (RFC 9112 §3.2.2).
    pub target_authority: Option<&'a str>,
    pub host: Option<&'a str>,
    pub origin: Option<&'a str>,
    pub authorization: Option<&'a str>,
    pub content_length: Option<u64>,
    /// The name of a header that must appear once but appeared more than once.
    pub repeated_header: Option<&'a str>,
    /// What was wrong with the head as it was sent, which the HTTP parser hides.
    pub wire_fault: Option<WireFault>,
}

impl std::fmt::Debug for RequestHead<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RequestHead")
            .field("method", &self.method)
            .field("path", &self.path)
            .field("target_authority", &self.target_authority)
            .field("host", &self.host)
            .field("origin", &self.origin)
            .field("authorization", &self.authorization.map(|_| "<hidden>"))
            .field("content_length", &self.content_length)
            .field("repeated_header", &self.repeated_header)
            .field("wire_fault", &self.wire_fault)
            .finish()
    }
}

/// A fault in the request head as it arrived on the wire, seen before the HTTP parser
/// merges repeated identical `Content-Length` headers into one and drops a target's fragment.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WireFault {
    /// `Content-Length` appeared more than once (or as a list), even with equal values.
    RepeatedContentLength,
    /// The request target carries a `#fragment`, which no request target may.
    Fragment,
    /// The head could not be followed on the wire, so nothing about it can be vouched for.
    Unreadable,
}

impl WireFault {
    fn reason(self) -> &'static str {
        match self {
            WireFault::RepeatedContentLength => "a Content-Length header is repeated",
            WireFault::Fragment => "the request target has a fragment",
            WireFault::Unreadable => "the request head could not be checked as sent",
        }
    }
}

#[derive(Clone, Copy)]
pub struct GateConfig<'a> {
    pub port: u16,
    pub token: Option<&'a str>,
    /// Host names or IP addresses accepted besides loopback (`McpAllowedHosts`), compared
    /// case-insensitively; IPv6 addresses are written without brackets.
    pub allowed_hosts: &'a [String],
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Decision {
    Admit,
    Reject { status: u16, reason: &'static str },
}

/// Decide about one request. `in_flight` counts requests already being served.
pub fn decide(head: &RequestHead<'_>, config: &GateConfig<'_>, in_flight: usize) -> Decision {
    let reject = |status, reason| Decision::Reject { status, reason };
    if head.method != "POST" {
        return reject(405, "method not allowed: only POST /mcp");
    }
    if head.path != "/mcp" {
        return reject(404, "not found: the endpoint is /mcp");
    }
    if head.repeated_header.is_some() {
        return reject(400, "a Host, Origin, Authorization or Content-Length header is repeated");
    }
    if let Some(fault) = head.wire_fault {
        return reject(400, fault.reason());
    }
    if let Some(authority) = head.target_authority {
        if !is_our_authority(authority, config, false) {
            return reject(403, "the request target's authority is not a loopback authority for this port");
        }
    } else if !head.host.is_some_and(|h| is_our_authority(h, config, false)) {
        return reject(403, "Host is not a loopback authority for this port");
    }
    if let Some(origin) = head.origin
        && !origin_is_ours(origin, config)
    {
        return reject(403, "Origin is not this loopback server");
    }
    if let Some(token) = config.token
        && !bearer_matches(head.authorization, token)
    {
        return reject(401, "missing or wrong bearer token");
    }
    if head.content_length.is_some_and(|n| n > MAX_BODY_BYTES) {
        return reject(413, "request body over 1 MiB");
    }
    if in_flight >= MAX_IN_FLIGHT {
        return reject(503, "too many requests in flight");
    }
    Decision::Admit
}

/// `localhost`, `127.x.y.z`, `[::1]` or an allowed host, with `:port` allowed only if it is
/// ours, written as plain decimal digits (no sign, no spaces). With `require_port`, the port
/// must be present (used for Origin).
fn is_our_authority(authority: &str, config: &GateConfig<'_>, require_port: bool) -> bool {
    let (host, given_port) = split_authority(authority);
    let port_ok = match given_port {
        Some(p) => {
            !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()) && p.parse::<u16>() == Ok(config.port)
        }
        None => !require_port,
    };
    port_ok
        && (is_loopback_host(host)
            || config.allowed_hosts.iter().any(|a| !a.is_empty() && a.eq_ignore_ascii_case(host)))
}

fn split_authority(authority: &str) -> (&str, Option<&str>) {
    if let Some(rest) = authority.strip_prefix('[') {
        return match rest.split_once(']') {
            Some((host, "")) => (host, None),
            Some((host, tail)) => match tail.strip_prefix(':') {
                Some(port) => (host, Some(port)),
                None => ("", None),
            },
            None => ("", None),
        };
    }
    match authority.rsplit_once(':') {
        Some((host, port)) => (host, Some(port)),
        None => (authority, None),
    }
}

fn is_loopback_host(host: &str) -> bool {
    if host.eq_ignore_ascii_case("localhost") || host == "::1" {
        return true;
    }
    host.parse::<std::net::Ipv4Addr>().is_ok_and(|ip| ip.is_loopback())
}

/// An Origin must be `http(s)://<loopback or allowed host>:<our port>`; `null` and anything
/// else fail.
fn origin_is_ours(origin: &str, config: &GateConfig<'_>) -> bool {
    let Some(authority) = origin.strip_prefix("http://").or_else(|| origin.strip_prefix("https://")) else {
        return false;
    };
    !authority.contains('/') && is_our_authority(authority, config, true)
}

/// Exactly `Bearer <token>` (scheme case-insensitive, one space, nothing else), compared
/// in constant time. (HTTP parsing has already removed whitespace around the value, so a
/// trailing space never reaches here; see docs/decisions.md.)
fn bearer_matches(header: Option<&str>, token: &str) -> bool {
    let Some(header) = header else { return false };
    let Some((scheme, presented)) = header.split_once(' ') else { return false };
    scheme.eq_ignore_ascii_case("Bearer") && bool::from(presented.as_bytes().ct_eq(token.as_bytes()))
}

/// Fewest characters a bearer token needs when the front door listens beyond loopback.
pub const MIN_REMOTE_TOKEN_CHARS: usize = 32;
/// Fewest distinct characters in such a token (rules out `aaaa…` and `abab…`).
pub const MIN_REMOTE_TOKEN_DISTINCT: usize = 8;

/// Where the front door may listen, decided at start from `McpBindAddress` and the token.
///
/// The address must be an IP address written in full: dotted-quad IPv4, or IPv6 with or
/// without brackets. Names (`localhost`, host names, `*`), padding, and the short or numeric
/// IPv4 forms (`127.1`, `2130706433`) are refused. `127.0.0.0/8` and `::1` are loopback and need
/// no token; every other address (`0.0.0.0`, `::`, `::ffff:127.0.0.1`, a LAN address) is
/// non-loopback and needs a token of at least [`MIN_REMOTE_TOKEN_CHARS`] visible ASCII
/// characters with at least [`MIN_REMOTE_TOKEN_DISTINCT`] distinct ones (32 random hex
/// characters are 128 bits).
pub fn check_bind(address: &str, token: Option<&str>) -> Result<std::net::IpAddr, String> {
    let bare = address.strip_prefix('[').and_then(|a| a.strip_suffix(']'));
    let ip: std::net::IpAddr = match bare {
        Some(v6) => v6.parse::<std::net::Ipv6Addr>().map(Into::into),
        None => address.parse(),
    }
    .map_err(|_| {
        format!(
            "McpBindAddress {address:?} is not an IP address written in full (like 127.0.0.1 or ::1); \
             names, padding and short forms are refused"
        )
    })?;
    if ip.is_loopback() {
        return Ok(ip);
    }
    let Some(token) = token else {
        return Err(format!(
            "refusing to serve MCP on non-loopback address {ip} without McpAuthToken: anyone on the \
             network could drive this desktop. Set McpAuthToken or bind 127.0.0.1"
        ));
    };
    let distinct = token.bytes().collect::<std::collections::BTreeSet<u8>>().len();
    if token.len() < MIN_REMOTE_TOKEN_CHARS
        || !token.bytes().all(|b| b.is_ascii_graphic())
        || distinct < MIN_REMOTE_TOKEN_DISTINCT
    {
        return Err(format!(
            "refusing to serve MCP on non-loopback address {ip}: McpAuthToken is too weak. It needs at \
             least {MIN_REMOTE_TOKEN_CHARS} visible ASCII characters, {MIN_REMOTE_TOKEN_DISTINCT} of them \
             different (for example 32 random hex characters: `openssl rand -hex 16`)"
        ));
    }
    Ok(ip)
}

#[cfg(test)]
mod tests {
    use super::*;

    const PORT: u16 = 5151;

    fn head() -> RequestHead<'static> {
        RequestHead { method: "POST", path: "/mcp", host: Some("127.0.0.1:5151"), ..Default::default() }
    }

    fn check(h: RequestHead<'_>, token: Option<&str>) -> u16 {
        match decide(&h, &GateConfig { port: PORT, token, allowed_hosts: &[] }, 0) {
            Decision::Admit => 200,
            Decision::Reject { status, .. } => status,
        }
    }

    #[test]
    fn plain_request_is_admitted() {
        assert_eq!(check(head(), None), 200);
    }

    #[test]
    fn method_and_path() {
        assert_eq!(check(RequestHead { method: "GET", ..head() }, None), 405);
        assert_eq!(check(RequestHead { method: "DELETE", path: "/x", ..head() }, None), 405);
        assert_eq!(check(RequestHead { path: "/mcp/", ..head() }, None), 404);
        assert_eq!(check(RequestHead { path: "/", ..head() }, None), 404);
    }

    #[test]
    fn host_table() {
        let cases = [
            ("127.0.0.1:5151", 200),
            ("127.0.0.1", 200),
            ("localhost:5151", 200),
            ("LOCALHOST", 200),
            ("[::1]:5151", 200),
            ("[::1]", 200),
            ("127.1.2.3:5151", 200),
            ("evil.example", 403),
            ("localhost.evil.example", 403),
            ("127.0.0.1.nip.io", 403),
            ("127.0.0.1:5152", 403),
            ("localhost:80", 403),
            ("[::1]:1", 403),
            ("[::1]x", 403),
            ("10.0.0.1:5151", 403),
            ("0.0.0.0:5151", 403),
            ("", 403),
            ("127.0.0.1:", 403),
            ("localhost:+5151", 403),
            ("localhost:-5151", 403),
            ("localhost: 5151", 403),
            ("localhost:5151 ", 403),
            ("localhost:0x141f", 403),
            ("localhost:65536", 403),
            ("localhost:005151", 200),
        ];
        for (host, want) in cases {
            assert_eq!(check(RequestHead { host: Some(host), ..head() }, None), want, "Host: {host}");
        }
        assert_eq!(check(RequestHead { host: None, ..head() }, None), 403);
    }

    #[test]
    fn origin_table() {
        let cases = [
            ("http://127.0.0.1:5151", 200),
            ("http://localhost:5151", 200),
            ("https://[::1]:5151", 200),
            ("null", 403),
            ("http://evil.example", 403),
            ("http://localhost:1234", 403),
            ("http://localhost", 403),
            ("http://localhost.evil.example:5151", 403),
            ("file://localhost:5151", 403),
            ("http://127.0.0.1:5151/path", 403),
            ("", 403),
        ];
        for (origin, want) in cases {
            assert_eq!(check(RequestHead { origin: Some(origin), ..head() }, None), want, "Origin: {origin}");
        }
    }

    #[test]
    fn bearer_table() {
        let t = Some("0123abcd");
        let cases: [(Option<&str>, u16); 8] = [
            (Some("Bearer 0123abcd"), 200),
            (Some("bearer 0123abcd"), 200),
            (None, 401),
            (Some("Bearer wrong"), 401),
            (Some("Bearer 0123abc"), 401),
            (Some("Basic 0123abcd"), 401),
            (Some("Bearer  0123abcd"), 401),
            (Some("Bearer 0123abcd "), 401),
        ];
        for (auth, want) in cases {
            assert_eq!(check(RequestHead { authorization: auth, ..head() }, t), want, "{auth:?}");
        }
        assert_eq!(check(RequestHead { authorization: Some("0123abcd"), ..head() }, t), 401);
        assert_eq!(check(RequestHead { authorization: Some("Bearer 0123abcd"), ..head() }, None), 200);
    }

    #[test]
    fn body_size_and_concurrency() {
        assert_eq!(check(RequestHead { content_length: Some(MAX_BODY_BYTES), ..head() }, None), 200);
        assert_eq!(check(RequestHead { content_length: Some(MAX_BODY_BYTES + 1), ..head() }, None), 413);
        let cfg = GateConfig { port: PORT, token: None, allowed_hosts: &[] };
        assert_eq!(decide(&head(), &cfg, MAX_IN_FLIGHT - 1), Decision::Admit);
        assert!(matches!(decide(&head(), &cfg, MAX_IN_FLIGHT), Decision::Reject { status: 503, .. }));
    }

    #[test]
    fn order_is_the_contracts() {
        let all_bad = RequestHead {
            method: "GET",
            path: "/x",
            host: Some("evil.example"),
            origin: Some("null"),
            authorization: None,
            content_length: Some(u64::MAX),
            ..Default::default()
        };
        let t = Some("tok");
        assert_eq!(check(all_bad, t), 405);
        assert_eq!(check(RequestHead { method: "POST", ..all_bad }, t), 404);
        assert_eq!(check(RequestHead { method: "POST", path: "/mcp", ..all_bad }, t), 403);
        let good_host = RequestHead { method: "POST", path: "/mcp", host: Some("localhost"), ..all_bad };
        assert_eq!(check(good_host, t), 403);
        let good_origin = RequestHead { origin: None, ..good_host };
        assert_eq!(check(good_origin, t), 401);
        assert_eq!(check(RequestHead { authorization: Some("Bearer tok"), ..good_origin }, t), 413);
        let cfg = GateConfig { port: PORT, token: t, allowed_hosts: &[] };
        let ok = RequestHead { authorization: Some("Bearer tok"), content_length: Some(10), ..good_origin };
        assert!(matches!(decide(&ok, &cfg, 99), Decision::Reject { status: 503, .. }));
    }

    #[test]
    fn a_repeated_header_is_400_before_host_and_bearer() {
        let twice = RequestHead { repeated_header: Some("host"), host: Some("evil.example"), ..head() };
        assert_eq!(check(twice, Some("tok")), 400);
        assert_eq!(check(RequestHead { method: "GET", ..twice }, None), 405);
    }

    #[test]
    fn a_fault_seen_on_the_wire_is_400_after_method_and_path() {
        for fault in [WireFault::RepeatedContentLength, WireFault::Fragment, WireFault::Unreadable] {
            let h = RequestHead { wire_fault: Some(fault), host: Some("evil.example"), ..head() };
            assert_eq!(check(h, Some("tok")), 400, "{fault:?}");
            assert_eq!(check(RequestHead { path: "/x", ..h }, None), 404, "{fault:?}");
        }
    }

    #[test]
    fn an_absolute_form_target_is_judged_by_its_authority_not_host() {
        let cases = [
            ("127.0.0.1:5151", Some("127.0.0.1:5151"), 200),
            ("localhost", None, 200),
            ("evil.example", Some("127.0.0.1:5151"), 403),
            ("127.0.0.1:5152", Some("127.0.0.1:5151"), 403),
            ("user@127.0.0.1:5151", Some("127.0.0.1:5151"), 403),
            ("127.0.0.1:5151", Some("evil.example"), 200),
        ];
        for (authority, host, want) in cases {
            let h = RequestHead { target_authority: Some(authority), host, ..head() };
            assert_eq!(check(h, None), want, "target {authority}, Host {host:?}");
        }
    }

    #[test]
    fn debug_never_shows_the_bearer_token() {
        let h = RequestHead { authorization: Some("Bearer s3cret-t0ken"), ..head() };
        let shown = format!("{h:?}");
        assert!(!shown.contains("s3cret-t0ken"), "{shown}");
        assert!(shown.contains("authorization: Some(\"<hidden>\")"), "{shown}");
        assert!(shown.contains("127.0.0.1:5151"), "the rest is shown: {shown}");
    }

    #[test]
    fn allowed_hosts_extend_the_host_and_origin_checks() {
        let allowed = ["192.168.1.5".to_string(), "desk.lan".to_string(), "fe80::1".to_string()];
        let cfg = GateConfig { port: PORT, token: None, allowed_hosts: &allowed };
        let at = |host: &'static str, origin: Option<&'static str>| {
            decide(&RequestHead { host: Some(host), origin, ..head() }, &cfg, 0)
        };
        for good in ["192.168.1.5:5151", "DESK.lan", "[fe80::1]:5151", "127.0.0.1:5151"] {
            assert_eq!(at(good, None), Decision::Admit, "{good}");
        }
        assert_eq!(at("desk.lan", Some("http://desk.lan:5151")), Decision::Admit);
        for bad in
            ["192.168.1.6:5151", "desk.lan:5152", "evil.desk.lan", "desk.lan.evil", "192.168.1.5:+5151"]
        {
            assert!(matches!(at(bad, None), Decision::Reject { status: 403, .. }), "{bad}");
        }
        assert!(matches!(at("desk.lan", Some("http://evil.lan:5151")), Decision::Reject { status: 403, .. }));
        // Without the setting the same names are refused.
        assert_eq!(check(RequestHead { host: Some("desk.lan"), ..head() }, None), 403);
    }

    #[test]
    fn bind_addresses_and_token_strength() {
        let strong = "0123456789abcdef0123456789abcdef";
        for loopback in ["127.0.0.1", "127.0.0.2", "::1", "[::1]"] {
            assert!(check_bind(loopback, None).is_ok(), "{loopback}");
        }
        for refused in [
            "localhost",
            " 127.0.0.1",
            "127.0.0.1 ",
            "*",
            "example.com",
            "127.1",
            "2130706433",
            "",
            "[127.0.0.1]",
        ] {
            let e = check_bind(refused, Some(strong)).unwrap_err();
            assert!(e.contains("not an IP address"), "{refused}: {e}");
        }
        for remote in ["0.0.0.0", "::", "[::]", "::ffff:127.0.0.1", "192.168.1.5"] {
            assert!(check_bind(remote, None).unwrap_err().contains("without McpAuthToken"), "{remote}");
            assert!(check_bind(remote, Some("x")).unwrap_err().contains("too weak"), "{remote}");
            assert!(check_bind(remote, Some(strong)).is_ok(), "{remote}");
        }
        for weak in [&strong[..31], &"a".repeat(64), &"ab".repeat(32), "0123456789abcdef 123456789abcdef"] {
            assert!(check_bind("0.0.0.0", Some(weak)).unwrap_err().contains("too weak"), "{weak}");
        }
    }
}
