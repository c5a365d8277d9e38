//! `mcec mcp`'s line framing over an in-memory duplex: what is not UTF-8 JSON gets a parse
//! error, a line over 16 MiB an invalid-request error, a notification before `initialize` is
//! dropped, and after each of them the next good line is still served (the positive control).

mod common;

use std::sync::Arc;

use mcec_mcp::stdio::{MAX_LINE_BYTES, serve_streams};
use mcec_mcp::tools::ToolServices;
use mcec_rules::gates::DesktopGate;
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, DuplexStream};

const INITIALIZE: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#;

struct Client {
    to_server: DuplexStream,
    from_server: BufReader<DuplexStream>,
}

impl Client {
    async fn send(&mut self, line: &[u8]) {
        self.to_server.write_all(line).await.unwrap();
        self.to_server.write_all(b"\n").await.unwrap();
    }

    async fn answer(&mut self) -> Value {
        let mut line = String::new();
        self.from_server.read_line(&mut line).await.unwrap();
        serde_json::from_str(&line).unwrap_or_else(|e| panic!("not JSON ({e}): {line:?}"))
    }
}

fn start() -> Client {
    let agent =
        Arc::new(common::agent(DesktopGate::NoDesktop { detail: "none".into() }, ToolServices::default()));
    let (to_server, server_in) = tokio::io::duplex(1 << 20);
    let (server_out, from_server) = tokio::io::duplex(1 << 20);
    tokio::spawn(serve_streams(agent, server_in, server_out));
    Client { to_server, from_server: BufReader::new(from_server) }
}

fn assert_error(answer: &Value, code: i64) {
    assert_eq!(answer["error"]["code"], json!(code), "{answer}");
    assert_eq!(answer["id"], Value::Null, "{answer}");
}

#[tokio::test]
async fn lines_that_are_not_utf8_json_get_a_parse_error_and_the_session_goes_on() {
    let mut client = start();
    let deep = format!("{}{}", "[".repeat(200), "]".repeat(200));
    let lone_surrogate = br#"{"jsonrpc":"2.0","id":7,"method":"ping","params":{"s":"\ud800"}}"#;
    for bad in [&b"\xff\xfe{}"[..], b"not json", deep.as_bytes(), lone_surrogate] {
        client.send(bad).await;
        assert_error(&client.answer().await, -32700);
    }
    // A notification before initialize is dropped without an answer: the next answer is
    // initialize's own.
    client.send(br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#).await;
    client.send(INITIALIZE.as_bytes()).await;
    let answer = client.answer().await;
    assert_eq!(answer["id"], json!(1), "{answer}");
    assert_eq!(answer["result"]["serverInfo"]["name"], json!("mcec"), "{answer}");
    client.send(br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#).await;
    client.send(b"\xc3\x28").await;
    assert_error(&client.answer().await, -32700);
    client.send(br#"{"jsonrpc":"2.0","id":2,"method":"ping"}"#).await;
    assert_eq!(client.answer().await["id"], json!(2));
}

/// A line of exactly `len` bytes with its newline: a JSON request with id 3, padded.
fn request_of_len(len: usize) -> Vec<u8> {
    let head = br#"{"jsonrpc":"2.0","id":3,"method":"ping","params":{"pad":""#;
    let tail = br#""}}"#;
    let mut line = head.to_vec();
    line.resize(len - tail.len() - 1, b'x');
    line.extend_from_slice(tail);
    line
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_line_over_16_mib_is_refused_and_one_at_the_limit_is_served() {
    let mut client = start();
    client.send(INITIALIZE.as_bytes()).await;
    assert_eq!(client.answer().await["id"], json!(1));
    client.send(br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#).await;

    client.send(&request_of_len(MAX_LINE_BYTES + 1)).await;
    assert_error(&client.answer().await, -32600);
    // The limit itself (newline included) passes the filter: rmcp answers id 3.
    client.send(&request_of_len(MAX_LINE_BYTES)).await;
    let answer = client.answer().await;
    assert_eq!(answer["id"], json!(3), "{}", &answer.to_string()[..200.min(answer.to_string().len())]);
}
