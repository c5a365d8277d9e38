//! `mcec mcp`: MCP over stdin/stdout.
//!
//! A small line filter sits between the real streams and rmcp. Each stdin line that is not
//! UTF-8 JSON (including JSON nested deeper than serde_json's 128 levels, and strings holding
//! a lone surrogate such as `\ud800`, which rmcp would drop without a word) gets JSON-RPC's
//! parse error (`-32700`, `id: null`) instead of silent loss; a line over [`MAX_LINE_BYTES`]
//! is discarded with an invalid-request error. Until the client's `initialize` request has
//! gone through, notifications and responses are dropped with a log line (rmcp would end the
//! session on them). Everything else goes to rmcp untouched. One writer task owns stdout, so rmcp's answers and the filter's
//! errors never interleave within a line. Stdout carries JSON-RPC only; logs go to stderr.

use std::sync::Arc;

use rmcp::ServiceExt;
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::sync::mpsc;

use crate::agent::Agent;
use crate::audit::audit;
use crate::server::McecServer;

/// Longest JSON-RPC line accepted on stdin.
pub const MAX_LINE_BYTES: usize = 16 * 1024 * 1024;
const PIPE_BYTES: usize = 256 * 1024;

/// Serve one client on the process's stdin/stdout until it disconnects.
pub async fn serve_stdio(agent: Arc<Agent>) -> Result<(), rmcp::service::ServerInitializeError> {
    serve_streams(agent, tokio::io::stdin(), tokio::io::stdout()).await
}

/// Serve one client over any pair of byte streams (stdin and stdout in `mcec mcp`).
pub async fn serve_streams(
    agent: Arc<Agent>,
    input: impl AsyncRead + Unpin + Send + 'static,
    output: impl AsyncWrite + Unpin + Send + 'static,
) -> Result<(), rmcp::service::ServerInitializeError> {
    let (rmcp_in, feed) = tokio::io::duplex(PIPE_BYTES);
    let (rmcp_out, drain) = tokio::io::duplex(PIPE_BYTES);
    let (errors_tx, errors_rx) = mpsc::channel::<String>(64);
    // End of input means the client is gone: stop the hands of calls still in flight.
    let gone = agent.clone();
    tokio::spawn(async move {
        filter_input(input, feed, errors_tx).await;
        gone.shut_down();
    });
    let writer = tokio::spawn(write_output(drain, errors_rx, output));
    let service = McecServer::new(agent).serve((rmcp_in, rmcp_out)).await?;
    let reason = service.waiting().await;
    audit("stdio-closed", &format!("reason={reason:?}"));
    let _ = writer.await;
    Ok(())
}

async fn filter_input(
    input: impl AsyncRead + Unpin,
    mut feed: impl AsyncWrite + Unpin,
    errors: mpsc::Sender<String>,
) {
    let mut reader = BufReader::with_capacity(PIPE_BYTES, input);
    let mut line = Vec::new();
    let mut initialize_sent = false;
    loop {
        line.clear();
        match read_line_capped(&mut reader, &mut line).await {
            Ok(Line::Eof) => break,
            Ok(Line::TooLong) => {
                tracing::warn!("stdin: discarded a JSON-RPC line over {MAX_LINE_BYTES} bytes");
                let _ = errors.send(error_line(-32600, "Invalid request: line too long")).await;
            }
            Ok(Line::Complete) => {
                if line.iter().all(u8::is_ascii_whitespace) {
                    continue;
                }
                let value = match std::str::from_utf8(&line) {
                    Err(_) => Err("not UTF-8"),
                    Ok(text) => serde_json::from_str::<serde_json::Value>(text).map_err(|_| "not JSON"),
                };
                let value = match value {
                    Ok(value) => value,
                    Err(why) => {
                        tracing::warn!("stdin: answered a line that is {why} with a parse error");
                        let _ = errors.send(error_line(-32700, "Parse error")).await;
                        continue;
                    }
                };
                if !initialize_sent {
                    let is_request = value.get("method").is_some() && value.get("id").is_some();
                    if value.is_object() && !is_request {
                        tracing::warn!("stdin: ignored a notification or response sent before initialize");
                        continue;
                    }
                    initialize_sent = value.get("method").and_then(|m| m.as_str()) == Some("initialize");
                }
                if !line.ends_with(b"\n") {
                    line.push(b'\n');
                }
                if feed.write_all(&line).await.is_err() {
                    break;
                }
            }
            Err(e) => {
                tracing::warn!("stdin closed with an error: {e}");
                break;
            }
        }
    }
    let _ = feed.shutdown().await;
}

enum Line {
    Complete,
    TooLong,
    Eof,
}

/// Read up to and including `\n`, keeping at most [`MAX_LINE_BYTES`] in memory.
async fn read_line_capped(
    reader: &mut (impl AsyncBufReadExt + Unpin),
    line: &mut Vec<u8>,
) -> std::io::Result<Line> {
    let mut too_long = false;
    loop {
        let buf = reader.fill_buf().await?;
        if buf.is_empty() {
            return Ok(match (too_long, line.is_empty()) {
                (true, _) => Line::TooLong,
                (false, true) => Line::Eof,
                (false, false) => Line::Complete,
            });
        }
        let (chunk, done) = match buf.iter().position(|b| *b == b'\n') {
            Some(i) => (&buf[..=i], true),
            None => (buf, false),
        };
        let used = chunk.len();
        if !too_long && line.len() + used <= MAX_LINE_BYTES {
            line.extend_from_slice(chunk);
        } else {
            too_long = true;
            line.clear();
        }
        reader.consume(used);
        if done {
            return Ok(if too_long { Line::TooLong } else { Line::Complete });
        }
    }
}

fn error_line(code: i32, message: &str) -> String {
    serde_json::json!({"jsonrpc": "2.0", "id": null, "error": {"code": code, "message": message}}).to_string()
}

async fn write_output(
    drain: impl AsyncRead + Unpin,
    mut errors: mpsc::Receiver<String>,
    mut output: impl AsyncWrite + Unpin,
) {
    let mut answers = BufReader::with_capacity(PIPE_BYTES, drain);
    let mut line = Vec::new();
    let mut errors_open = true;
    loop {
        line.clear();
        tokio::select! {
            read = answers.read_until(b'\n', &mut line) => match read {
                Ok(0) | Err(_) => break,
                Ok(_) => {}
            },
            error = errors.recv(), if errors_open => match error {
                Some(error) => line.extend_from_slice(format!("{error}\n").as_bytes()),
                None => {
                    errors_open = false;
                    continue;
                }
            },
        }
        if output.write_all(&line).await.is_err() || output.flush().await.is_err() {
            break;
        }
    }
}
