//! The HTTP front door in-process: every rejection of the gate in front of `POST /mcp` (405,
//! 404, 400, 403 Host or absolute-form authority, 403 Origin, 401, 413 declared and chunked,
//! 503, 400 with a JSON-RPC error for a body that is not JSON-RPC), each audited, with a
//! request that passes all of them as the positive control. Requests go straight into
//! [`mcec_mcp::http::router`], with the extensions the connection layer would add; what
//! hyper would hide from the router (a repeated identical `Content-Length`, a fragment) is
//! sent as raw bytes over a real loopback socket to [`mcec_mcp::http::serve_http`].

mod common;

use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use axum::body::{Body, Bytes};
use axum::extract::ConnectInfo;
use axum::http::{Request, Response, StatusCode};
use http_body_util::BodyExt;
use hyper::body::Frame;
use mcec_mcp::http::{HttpConfig, router};
use mcec_mcp::http_conns::ConnHandle;
use mcec_mcp::http_wire::SentHead;
use mcec_mcp::tools::ToolServices;
use mcec_rules::gates::DesktopGate;
use mcec_rules::http_gate::{MAX_BODY_BYTES, MAX_IN_FLIGHT};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::sync::{mpsc, oneshot};
use tower_service::Service;

const PORT: u16 = 47123;
const TOKEN: &str = "a-test-token-that-is-long-enough-0123456789";
const INITIALIZE: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#;

fn app() -> axum::Router {
    let agent =
        Arc::new(common::agent(DesktopGate::NoDesktop { detail: "none".into() }, ToolServices::default()));
    router(agent, HttpConfig { port: PORT, token: Some(TOKEN.into()), allowed_hosts: Vec::new() })
}

/// A request that passes every check; `edit` spoils one thing.
fn request(
    edit: impl FnOnce(axum::http::request::Builder) -> axum::http::request::Builder,
    body: Body,
) -> Request<Body> {
    let builder = Request::builder()
        .method("POST")
        .uri("/mcp")
        .header("host", format!("127.0.0.1:{PORT}"))
        .header("authorization", format!("Bearer {TOKEN}"))
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream");
    let mut request = edit(builder).body(body).unwrap();
    request.extensions_mut().insert(ConnectInfo(SocketAddr::from(([127, 0, 0, 1], 40000))));
    request.extensions_mut().insert(ConnHandle::unregistered());
    request.extensions_mut().insert(SentHead::in_process());
    request
}

async fn send(app: &mut axum::Router, request: Request<Body>) -> Response<Body> {
    app.call(request).await.unwrap_or_else(|never| match never {})
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap()
}

#[test]
fn every_rejection_answers_its_status_before_rmcp_and_is_audited() {
    type Edit = Box<dyn FnOnce(axum::http::request::Builder) -> axum::http::request::Builder>;
    let over = (MAX_BODY_BYTES + 1).to_string();
    let cases: Vec<(&str, Edit, StatusCode)> = vec![
        ("GET", Box::new(|b| b.method("GET")), StatusCode::METHOD_NOT_ALLOWED),
        ("other path", Box::new(|b| b.uri("/other")), StatusCode::NOT_FOUND),
        ("repeated Host", Box::new(|b| b.header("host", "localhost")), StatusCode::BAD_REQUEST),
        ("foreign Host", Box::new(|b| replace(b, "host", "evil.example")), StatusCode::FORBIDDEN),
        ("Host with another port", Box::new(|b| replace(b, "host", "127.0.0.1:1")), StatusCode::FORBIDDEN),
        (
            "absolute-form target naming a foreign host",
            Box::new(|b| b.uri("http://evil.example/mcp")),
            StatusCode::FORBIDDEN,
        ),
        (
            "absolute-form target naming another port",
            Box::new(|b| b.uri("http://127.0.0.1:1/mcp")),
            StatusCode::FORBIDDEN,
        ),
        ("foreign Origin", Box::new(|b| b.header("origin", "https://evil.example")), StatusCode::FORBIDDEN),
        ("no token", Box::new(|b| replace(b, "authorization", "")), StatusCode::UNAUTHORIZED),
        ("wrong token", Box::new(|b| replace(b, "authorization", "Bearer nope")), StatusCode::UNAUTHORIZED),
        (
            "declared over 1 MiB",
            Box::new(move |b| b.header("content-length", over)),
            StatusCode::PAYLOAD_TOO_LARGE,
        ),
    ];
    let rt = runtime();
    for (what, edit, expected) in cases {
        let (response, audit) = common::audited(|| {
            rt.block_on(async {
                let mut app = app();
                send(&mut app, request(edit, Body::from(INITIALIZE))).await
            })
        });
        assert_eq!(response.status(), expected, "{what}");
        assert_eq!(audit.len(), 1, "{what}: {audit:?}");
        let line = &audit[0];
        assert!(
            line.starts_with(&format!("AGENT-AUDIT: http-rejected; status={}", expected.as_u16())),
            "{line}"
        );
        assert!(!line.contains(TOKEN), "the token is never audited: {line}");
        match expected {
            StatusCode::METHOD_NOT_ALLOWED => assert_eq!(response.headers()["allow"], "POST"),
            StatusCode::UNAUTHORIZED => assert_eq!(response.headers()["www-authenticate"], "Bearer"),
            _ => {}
        }
    }
    // Positive control: the same request unspoiled reaches rmcp and is answered, unaudited.
    let (response, audit) = common::audited(|| {
        rt.block_on(async {
            let mut app = app();
            let response = send(&mut app, request(|b| b, Body::from(INITIALIZE))).await;
            let status = response.status();
            (status, response.into_body().collect().await.unwrap().to_bytes())
        })
    });
    assert_eq!(response.0, StatusCode::OK, "{:?}", response.1);
    let answer: serde_json::Value = serde_json::from_slice(&response.1).unwrap();
    assert_eq!(answer["result"]["serverInfo"]["name"], "mcec", "{answer}");
    assert!(audit.is_empty(), "{audit:?}");
}

#[test]
fn an_absolute_form_target_naming_this_server_is_admitted() {
    let status = runtime().block_on(async {
        let mut app = app();
        let uri = format!("http://127.0.0.1:{PORT}/mcp");
        send(&mut app, request(|b| b.uri(uri), Body::from(INITIALIZE))).await.status()
    });
    assert_eq!(status, StatusCode::OK);
}

#[test]
fn a_body_that_is_not_one_json_rpc_message_gets_a_json_rpc_error_with_400() {
    let rt = runtime();
    let cases: [(&str, i64); 6] = [
        ("this is not json", -32700),
        ("{\"jsonrpc\":\"2.0\",", -32700),
        ("", -32700),
        ("{\"hello\":1}", -32600),
        ("[1,2]", -32600),
        ("42", -32600),
    ];
    for (body, code) in cases {
        let ((status, content_type, answer), audit) = common::audited(|| {
            rt.block_on(async {
                let mut app = app();
                let response = send(&mut app, request(|b| b, Body::from(body))).await;
                let status = response.status();
                let content_type = response.headers().get("content-type").cloned();
                (status, content_type, response.into_body().collect().await.unwrap().to_bytes())
            })
        });
        assert_eq!(status, StatusCode::BAD_REQUEST, "{body:?}: {answer:?}");
        assert_eq!(content_type.as_ref().and_then(|v| v.to_str().ok()), Some("application/json"), "{body:?}");
        let answer: serde_json::Value = serde_json::from_slice(&answer).expect("a JSON-RPC error");
        assert_eq!(answer["jsonrpc"], "2.0", "{answer}");
        assert_eq!(answer["error"]["code"], code, "{body:?}: {answer}");
        assert!(answer.get("id").is_none(), "no id could be read: {answer}");
        assert_eq!(audit.len(), 1, "{audit:?}");
        assert!(audit[0].starts_with("AGENT-AUDIT: http-rejected; status=400"), "{audit:?}");
    }
}

/// Serve the front door on a real loopback socket, send `raw` as the bytes of one or more
/// requests (the last one asking to close), and return everything the server answered.
fn over_tcp(raw: Vec<u8>) -> (String, Vec<String>) {
    let rt = runtime();
    common::audited(|| {
        rt.block_on(async {
            let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
            let port = listener.local_addr().unwrap().port();
            let agent = Arc::new(common::agent(
                DesktopGate::NoDesktop { detail: "none".into() },
                ToolServices::default(),
            ));
            let config = HttpConfig { port, token: None, allowed_hosts: Vec::new() };
            let (stop, stopped) = oneshot::channel::<()>();
            let server = tokio::spawn(mcec_mcp::http::serve_http(agent, listener, config, async {
                let _ = stopped.await;
            }));
            let raw = String::from_utf8(raw).unwrap().replace("{port}", &port.to_string());
            let mut socket = tokio::net::TcpStream::connect(("127.0.0.1", port)).await.unwrap();
            socket.write_all(raw.as_bytes()).await.unwrap();
            let mut answer = Vec::new();
            tokio::time::timeout(std::time::Duration::from_secs(30), socket.read_to_end(&mut answer))
                .await
                .expect("the server answers and closes")
                .unwrap();
            let _ = stop.send(());
            let _ = server.await;
            String::from_utf8_lossy(&answer).into_owned()
        })
    })
}

/// A raw POST of `INITIALIZE` to `target` with `extra` header lines.
fn raw_post(target: &str, extra: &str, close: bool) -> Vec<u8> {
    format!(
        "POST {target} HTTP/1.1\r\nHost: 127.0.0.1:{{port}}\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nContent-Length: {}\r\n{extra}{}\r\n{INITIALIZE}",
        INITIALIZE.len(),
        if close { "Connection: close\r\n" } else { "" },
    )
    .into_bytes()
}

fn statuses(answer: &str) -> Vec<&str> {
    answer.match_indices("HTTP/1.1 ").map(|(at, _)| &answer[at + 9..at + 12]).collect()
}

#[test]
fn what_hyper_would_hide_is_refused_on_the_wire() {
    let repeated = format!("Content-Length: {}\r\n", INITIALIZE.len());
    let cases: [(&str, Vec<u8>, &str); 3] = [
        (
            "two identical Content-Length headers",
            raw_post("/mcp", &repeated, true),
            "a Content-Length header is repeated",
        ),
        ("a fragment in the target", raw_post("/mcp#f", "", true), "the request target has a fragment"),
        ("a fragment after a query", raw_post("/mcp?x=1#f", "", true), "the request target has a fragment"),
    ];
    for (what, raw, reason) in cases {
        let (answer, audit) = over_tcp(raw);
        assert_eq!(statuses(&answer), ["400"], "{what}: {answer}");
        assert_eq!(audit.len(), 1, "{what}: {audit:?}");
        assert!(audit[0].contains("status=400") && audit[0].contains(reason), "{what}: {audit:?}");
    }
    // Positive control: the same request sent plainly is served.
    let (answer, audit) = over_tcp(raw_post("/mcp", "", true));
    assert_eq!(statuses(&answer), ["200"], "{answer}");
    assert!(answer.contains("\"serverInfo\""), "{answer}");
    assert!(audit.is_empty(), "{audit:?}");
}

#[test]
fn each_request_on_a_kept_alive_connection_is_judged_as_it_was_sent() {
    let repeated = format!("Content-Length: {}\r\n", INITIALIZE.len());
    let chunked = format!(
        "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{{port}}\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n{:x}\r\n{INITIALIZE}\r\n0\r\n\r\n",
        INITIALIZE.len()
    );
    let stream = [
        raw_post("/mcp", "", false),
        chunked.into_bytes(),
        raw_post("/mcp", "", false),
        raw_post("/mcp", &repeated, true),
    ]
    .concat();
    let (answer, audit) = over_tcp(stream);
    assert_eq!(statuses(&answer), ["200", "200", "200", "400"], "{answer}");
    assert_eq!(audit.len(), 1, "{audit:?}");
    assert!(audit[0].contains("a Content-Length header is repeated"), "{audit:?}");
}

/// `builder` with `name` set to `value` instead of its current value.
fn replace(
    mut builder: axum::http::request::Builder,
    name: &str,
    value: &str,
) -> axum::http::request::Builder {
    let headers = builder.headers_mut().unwrap();
    headers.remove(name);
    if !value.is_empty() {
        headers.insert(axum::http::HeaderName::from_bytes(name.as_bytes()).unwrap(), value.parse().unwrap());
    }
    builder
}

/// A chunked body fed by the test; tells `polled` the first time the server reads it (which
/// the gate does only after admitting the request).
struct Fed {
    chunks: mpsc::Receiver<Bytes>,
    polled: Option<oneshot::Sender<()>>,
}

impl hyper::body::Body for Fed {
    type Data = Bytes;
    type Error = std::io::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Self::Error>>> {
        if let Some(polled) = self.polled.take() {
            let _ = polled.send(());
        }
        self.chunks.poll_recv(cx).map(|chunk| chunk.map(|c| Ok(Frame::data(c))))
    }
}

fn fed() -> (Body, mpsc::Sender<Bytes>, oneshot::Receiver<()>) {
    let (tx, rx) = mpsc::channel(4);
    let (polled_tx, polled_rx) = oneshot::channel();
    (Body::new(Fed { chunks: rx, polled: Some(polled_tx) }), tx, polled_rx)
}

#[test]
fn a_chunked_body_over_1_mib_is_cut_off_with_413() {
    let rt = runtime();
    let (status, audit) = common::audited(|| {
        rt.block_on(async {
            let mut app = app();
            let (body, tx, _polled) = fed();
            let feeder = tokio::spawn(async move {
                let chunk = Bytes::from(vec![b' '; 64 * 1024]);
                for _ in 0..=(MAX_BODY_BYTES as usize / chunk.len()) {
                    if tx.send(chunk.clone()).await.is_err() {
                        break;
                    }
                }
            });
            let response = send(&mut app, request(|b| b, body)).await;
            feeder.abort();
            response.status()
        })
    });
    assert_eq!(status, StatusCode::PAYLOAD_TOO_LARGE);
    assert_eq!(audit.len(), 1, "{audit:?}");
    assert!(audit[0].starts_with("AGENT-AUDIT: http-rejected; status=413"), "{audit:?}");
    // Control: the same chunked framing under the limit is admitted and answered by rmcp.
    let status = rt.block_on(async {
        let mut app = app();
        let (body, tx, _polled) = fed();
        tx.send(Bytes::from(INITIALIZE)).await.unwrap();
        drop(tx);
        send(&mut app, request(|b| b, body)).await.status()
    });
    assert_eq!(status, StatusCode::OK);
}

#[test]
fn the_request_after_the_in_flight_limit_gets_503_until_one_finishes() {
    let rt = runtime();
    let (statuses, audit) = common::audited(|| {
        rt.block_on(async {
            let app = app();
            let mut held = Vec::new();
            for _ in 0..MAX_IN_FLIGHT {
                let (body, tx, polled) = fed();
                let mut app = app.clone();
                let pending =
                    tokio::spawn(async move { send(&mut app, request(|b| b, body)).await.status() });
                polled.await.expect("admitted: its body is being read");
                held.push((tx, pending));
            }
            let over = send(&mut app.clone(), request(|b| b, Body::from(INITIALIZE))).await.status();
            let (tx, pending) = held.pop().unwrap();
            tx.send(Bytes::from(INITIALIZE)).await.unwrap();
            drop(tx);
            let finished = pending.await.unwrap();
            let after = send(&mut app.clone(), request(|b| b, Body::from(INITIALIZE))).await.status();
            (over, finished, after)
        })
    });
    assert_eq!(statuses.0, StatusCode::SERVICE_UNAVAILABLE);
    assert_eq!(statuses.1, StatusCode::OK, "the held request completes");
    assert_eq!(statuses.2, StatusCode::OK, "one slot free again: admitted");
    let rejected: Vec<_> = audit.iter().filter(|l| l.contains("http-rejected")).collect();
    assert_eq!(rejected.len(), 1, "{audit:?}");
    assert!(rejected[0].contains("status=503"), "{rejected:?}");
}
