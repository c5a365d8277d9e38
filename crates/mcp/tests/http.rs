//! The HTTP front door in-process: every rejection of the gate in front of `POST /mcp` (405,
//! 404, 400, 403 Host, 403 Origin, 401, 413 declared and chunked, 503), each audited, with a
//! request that passes all of them as the positive control. Requests go straight into
//! [`mcec_mcp::http::router`], with the extensions the connection layer would add.

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
use mcec_mcp::tools::ToolServices;
use mcec_rules::gates::DesktopGate;
use mcec_rules::http_gate::{MAX_BODY_BYTES, MAX_IN_FLIGHT};
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
