//! A POST body that is not one JSON-RPC message gets a JSON-RPC error, not rmcp's plain text.
//!
//! rmcp answers any body it cannot decode with a plain-text 415. The MCP Streamable HTTP
//! transport says a server that cannot accept the input answers an HTTP error status (400
//! Bad Request) whose body may be a JSON-RPC error response without an `id`, and JSON-RPC
//! names the two errors: `-32700` when the body is not JSON, `-32600` when it is JSON but
//! not a request, notification or response. The gate asks here once the body is read, with
//! the same decoding rmcp does, so a body that passes is one rmcp accepts.

use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use rmcp::model::{ClientJsonRpcMessage, ErrorData, JsonRpcError};

/// Why a body is refused, and the JSON-RPC error that says so.
pub struct Refusal {
    pub reason: &'static str,
    error: ErrorData,
}

impl Refusal {
    /// `400 Bad Request` carrying the JSON-RPC error (no `id`: none could be read).
    pub fn response(self) -> Response {
        let body = serde_json::to_vec(&JsonRpcError::new(None, self.error)).unwrap_or_default();
        let mut response = (StatusCode::BAD_REQUEST, body).into_response();
        response.headers_mut().insert(header::CONTENT_TYPE, HeaderValue::from_static("application/json"));
        response
    }
}

/// `None` when `body` is one JSON-RPC message rmcp can take.
pub fn refusal(body: &[u8]) -> Option<Refusal> {
    if serde_json::from_slice::<ClientJsonRpcMessage>(body).is_ok() {
        return None;
    }
    Some(if serde_json::from_slice::<serde::de::IgnoredAny>(body).is_err() {
        Refusal {
            reason: "the body is not JSON",
            error: ErrorData::parse_error("Parse error: the request body is not JSON", None),
        }
    } else {
        Refusal {
            reason: "the body is not a JSON-RPC request, notification or response",
            error: ErrorData::invalid_request(
                "Invalid Request: the body must be one JSON-RPC request, notification or response",
                None,
            ),
        }
    })
}
