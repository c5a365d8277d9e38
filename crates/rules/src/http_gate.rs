//! The HTTP front door's gate as one pure decision over the request head, taken before
//! the body is read: 405 → 404 → 403 (Host) → 403 (Origin) → 401 (bearer) → 413 (declared
//! size) → 503 (too many in flight). The axum layer only gathers the head and applies the
//! verdict; chunked bodies are capped again by a streaming limit there.

use subtle::ConstantTimeEq;

/// Largest request body accepted.
pub const MAX_BODY_BYTES: u64 = 1024 * 1024;
/// Most requests served at once; the next one gets 503, never a queue.
pub const MAX_IN_FLIGHT: usize = 16;

/// What the gate looks at. Header values that are not valid UTF-8 arrive as `Some("")`
/// (never as `None`), so a garbage header can't pass as an absent one.
#[derive(Debug, Clone, Copy, Default)]
pub struct RequestHead<'a> {
    pub method: &'a str,
    pub path: &'a str,
    pub host: Option<&'a str>,
    pub origin: Option<&'a str>,
    pub authorization: Option<&'a str>,
    pub content_length: Option<u64>,
}

#[derive(Clone, Copy)]
pub struct GateConfig<'a> {
    pub port: u16,
    pub token: Option<&'a str>,
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
    if !head.host.is_some_and(|h| is_loopback_authority(h, config.port, false)) {
        return reject(403, "Host is not a loopback authority for this port");
    }
    if let Some(origin) = head.origin
        && !origin_is_loopback(origin, config.port)
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

/// `localhost`, `127.x.y.z` or `[::1]`, with `:port` allowed only if it is ours.
/// With `require_port`, the port must be present (used for Origin).
fn is_loopback_authority(authority: &str, port: u16, require_port: bool) -> bool {
    let (host, given_port) = split_authority(authority);
    let port_ok = match given_port {
        Some(p) => p.parse::<u16>().is_ok_and(|p| p == port),
        None => !require_port,
    };
    port_ok && is_loopback_host(host)
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

/// An Origin must be `http(s)://<loopback>:<our port>`; `null` and anything else fail.
fn origin_is_loopback(origin: &str, port: u16) -> bool {
    let Some(authority) = origin.strip_prefix("http://").or_else(|| origin.strip_prefix("https://")) else {
        return false;
    };
    !authority.contains('/') && is_loopback_authority(authority, port, true)
}

/// Exactly `Bearer <token>` (scheme case-insensitive, one space, nothing else), compared
/// in constant time.
fn bearer_matches(header: Option<&str>, token: &str) -> bool {
    let Some(header) = header else { return false };
    let Some((scheme, presented)) = header.split_once(' ') else { return false };
    scheme.eq_ignore_ascii_case("Bearer") && bool::from(presented.as_bytes().ct_eq(token.as_bytes()))
}

#[cfg(test)]
mod tests {
    use super::*;

    const PORT: u16 = 5151;

    fn head() -> RequestHead<'static> {
        RequestHead { method: "POST", path: "/mcp", host: Some("127.0.0.1:5151"), ..Default::default() }
    }

    fn check(h: RequestHead<'_>, token: Option<&str>) -> u16 {
        match decide(&h, &GateConfig { port: PORT, token }, 0) {
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
        let cfg = GateConfig { port: PORT, token: None };
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
        let cfg = GateConfig { port: PORT, token: t };
        let ok = RequestHead { authorization: Some("Bearer tok"), content_length: Some(10), ..good_origin };
        assert!(matches!(decide(&ok, &cfg, 99), Decision::Reject { status: 503, .. }));
    }
}
