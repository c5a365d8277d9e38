//! The host's HTTP front door: Streamable HTTP at `POST /mcp`, behind the contract's gate.
//!
//! One `middleware::from_fn` layer on the whole router gathers the request head, asks the
//! pure [`mcec_rules::http_gate::decide`], audits and answers any rejection before the
//! body is read. Only then is the body read, under a 1 MiB limit that also holds for
//! chunked bodies and must arrive within [`BODY_READ_TIMEOUT`], checked to be one JSON-RPC
//! message ([`crate::http_body`]), and handed to rmcp complete.
//! rmcp's own Host check is turned off: our gate is the one authority. Connections (accept
//! loop, header timeout, connection cap) are [`crate::http_conns`].

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use axum::Router;
use axum::body::Body;
use axum::extract::{ConnectInfo, Extension, Request, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use http_body_util::{BodyExt, LengthLimitError, Limited};
use mcec_rules::gates::printable;
use mcec_rules::http_gate::{self, Decision, GateConfig, MAX_BODY_BYTES, RequestHead};
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use tokio::net::TcpListener;

use crate::agent::Agent;
use crate::audit::audit;
use crate::http_body;
use crate::http_conns::{self, BODY_READ_TIMEOUT, ConnHandle};
use crate::http_wire::SentHead;
use crate::server::McecServer;

/// How the front door is configured. The token is only ever compared, never logged.
#[derive(Clone)]
pub struct HttpConfig {
    pub port: u16,
    pub token: Option<String>,
    /// Extra host names or addresses the `Host`/`Origin` check accepts (`McpAllowedHosts`).
    pub allowed_hosts: Vec<String>,
}

struct GateState {
    config: HttpConfig,
    in_flight: AtomicUsize,
}

/// Decrements the in-flight count however the request ends.
struct InFlight<'a>(&'a AtomicUsize);

impl Drop for InFlight<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

/// Serve until `shutdown` resolves.
pub async fn serve_http(
    agent: Arc<Agent>,
    listener: TcpListener,
    config: HttpConfig,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    http_conns::serve(listener, router(agent, config), shutdown).await;
    Ok(())
}

/// The front door as a router: the gate in front of rmcp's Streamable HTTP service at `/mcp`.
/// Each request must carry the extensions [`http_conns`] gives it: the peer's
/// `ConnectInfo<SocketAddr>`, its [`ConnHandle`] and its [`SentHead`].
pub fn router(agent: Arc<Agent>, config: HttpConfig) -> Router {
    let mcp_config = StreamableHttpServerConfig::default()
        .disable_allowed_hosts()
        .with_legacy_session_mode(false)
        .with_json_response(true)
        .with_max_request_body_bytes(MAX_BODY_BYTES as usize);
    let mcp = StreamableHttpService::new(
        move || Ok(McecServer::new(agent.clone())),
        Arc::new(LocalSessionManager::default()),
        mcp_config,
    );
    let state = Arc::new(GateState { config, in_flight: AtomicUsize::new(0) });
    Router::new().nest_service("/mcp", mcp).layer(middleware::from_fn_with_state(state, gate))
}

async fn gate(
    State(state): State<Arc<GateState>>,
    ConnectInfo(peer): ConnectInfo<SocketAddr>,
    Extension(conn): Extension<ConnHandle>,
    Extension(sent): Extension<SentHead>,
    request: Request,
    next: Next,
) -> Response {
    // Busy from here until the answer is built: the connection cap never evicts it.
    let Some(_busy) = conn.busy() else {
        return StatusCode::SERVICE_UNAVAILABLE.into_response();
    };
    let headers = request.headers();
    let repeated = [header::HOST, header::ORIGIN, header::AUTHORIZATION, header::CONTENT_LENGTH]
        .into_iter()
        .find(|name| headers.get_all(name).iter().nth(1).is_some());
    let head = RequestHead {
        method: request.method().as_str(),
        path: request.uri().path(),
        target_authority: request.uri().authority().map(|a| a.as_str()),
        host: header_str(headers, header::HOST),
        origin: header_str(headers, header::ORIGIN),
        authorization: header_str(headers, header::AUTHORIZATION),
        content_length: header_str(headers, header::CONTENT_LENGTH).map(|v| v.parse().unwrap_or(u64::MAX)),
        repeated_header: repeated.as_ref().map(header::HeaderName::as_str),
        wire_fault: sent.fault,
    };
    let config = GateConfig {
        port: state.config.port,
        token: state.config.token.as_deref(),
        allowed_hosts: &state.config.allowed_hosts,
    };
    let prior = state.in_flight.fetch_add(1, Ordering::SeqCst);
    let _in_flight = InFlight(&state.in_flight);
    let decision = http_gate::decide(&head, &config, prior);
    let who = format!(
        "method={} path={} host={} origin={} peer={peer}",
        printable(head.method),
        printable(head.path),
        head.host.map(printable).unwrap_or_else(|| "-".into()),
        head.origin.map(printable).unwrap_or_else(|| "-".into()),
    );
    if let Decision::Reject { status, reason } = decision {
        return reject(status, reason, &who);
    }
    // The head passed: now read the body, capped, whatever its framing (a chunked body
    // declares no length), so rmcp only ever sees a complete body of at most 1 MiB.
    // A body that trickles in is cut off after BODY_READ_TIMEOUT.
    let (parts, body) = request.into_parts();
    let read = tokio::time::timeout(BODY_READ_TIMEOUT, Limited::new(body, MAX_BODY_BYTES as usize).collect());
    match read.await {
        Ok(Ok(collected)) => {
            let body = collected.to_bytes();
            if let Some(refusal) = http_body::refusal(&body) {
                audit("http-rejected", &format!("status=400 reason={} {who}", refusal.reason));
                return refusal.response();
            }
            next.run(Request::from_parts(parts, Body::from(body))).await
        }
        Ok(Err(e)) if e.is::<LengthLimitError>() => reject(413, "request body over 1 MiB", &who),
        Ok(Err(_)) => reject(400, "the request body could not be read", &who),
        Err(_) => reject(408, "the request body did not arrive in time", &who),
    }
}

fn reject(status: u16, reason: &str, who: &str) -> Response {
    audit("http-rejected", &format!("status={status} reason={reason} {who}"));
    let status = StatusCode::from_u16(status).unwrap_or(StatusCode::FORBIDDEN);
    let mut response = (status, format!("{reason}\n")).into_response();
    if status == StatusCode::REQUEST_TIMEOUT || status == StatusCode::BAD_REQUEST {
        // The rest of the request may still be on the wire: never read it as a new request.
        response.headers_mut().insert(header::CONNECTION, header::HeaderValue::from_static("close"));
    }
    if status == StatusCode::UNAUTHORIZED {
        response.headers_mut().insert(header::WWW_AUTHENTICATE, header::HeaderValue::from_static("Bearer"));
    }
    if status == StatusCode::METHOD_NOT_ALLOWED {
        response.headers_mut().insert(header::ALLOW, header::HeaderValue::from_static("POST"));
    }
    response
}

/// A header's value; present-but-not-UTF-8 becomes `""`, which no check accepts.
fn header_str(headers: &HeaderMap, name: header::HeaderName) -> Option<&str> {
    headers.get(name).map(|v| v.to_str().unwrap_or(""))
}
