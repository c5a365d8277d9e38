//! sway's IPC: i3's framed JSON protocol over the Unix socket named by `$SWAYSOCK`.
//!
//! A frame is the magic `i3-ipc`, the payload's length and the message type (both `u32` in
//! the machine's byte order), then the JSON payload. Replies carry the request's type; events
//! on a subscribed connection carry their type with the high bit set. The reader keeps partial
//! frames across read timeouts, so a connection with a timeout can be polled between events.

use std::io::{ErrorKind, Read, Write};
use std::os::unix::net::UnixStream;
use std::path::Path;
use std::time::Duration;

use serde_json::Value;

const MAGIC: &[u8; 6] = b"i3-ipc";
const HEADER: usize = 14;
/// Larger frames are refused: no reply or event of sway's comes near it, and a wrong length
/// must not make us allocate without bound.
const MAX_PAYLOAD: usize = 64 << 20;
/// Marks an event (rather than a reply) in a frame's type.
const EVENT_BIT: u32 = 0x8000_0000;

/// The message types mcec uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u32)]
pub enum Message {
    RunCommand = 0,
    Subscribe = 2,
    GetOutputs = 3,
    GetTree = 4,
    GetBindingState = 12,
    GetInputs = 100,
}

/// The events mcec subscribes to (type numbers without the event bit).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EventKind {
    Mode,
    Binding,
    Input,
    Other(u32),
}

impl EventKind {
    fn from_type(t: u32) -> EventKind {
        match t & !EVENT_BIT {
            2 => EventKind::Mode,
            5 => EventKind::Binding,
            0x15 => EventKind::Input,
            other => EventKind::Other(other),
        }
    }
}

/// One frame read from the socket.
#[derive(Debug, Clone, PartialEq)]
pub enum Frame {
    Reply(Value),
    Event(EventKind, Value),
}

/// What went wrong talking to sway.
#[derive(Debug)]
pub enum IpcError {
    Io(std::io::Error),
    /// sway sent something that is not a frame of its protocol, or not JSON.
    Protocol(String),
}

impl std::fmt::Display for IpcError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            IpcError::Io(e) => write!(f, "sway IPC: {e}"),
            IpcError::Protocol(d) => write!(f, "sway IPC: {d}"),
        }
    }
}

impl std::error::Error for IpcError {}

impl From<std::io::Error> for IpcError {
    fn from(e: std::io::Error) -> Self {
        IpcError::Io(e)
    }
}

/// One connection to sway's IPC socket.
#[derive(Debug)]
pub struct Ipc {
    stream: UnixStream,
    buf: Vec<u8>,
}

impl Ipc {
    /// Connects to `socket` (sway's `$SWAYSOCK`).
    pub fn connect(socket: &Path) -> Result<Ipc, IpcError> {
        Ok(Ipc { stream: UnixStream::connect(socket)?, buf: Vec::new() })
    }

    /// Sends one request and returns its reply, skipping events that arrive before it (on a
    /// subscribed connection they are handed to `on_event`).
    pub fn request(&mut self, message: Message, payload: &str) -> Result<Value, IpcError> {
        self.request_with(message, payload, &mut |_, _| {})
    }

    /// [`Ipc::request`] that hands every event read meanwhile to `on_event`.
    pub fn request_with(
        &mut self,
        message: Message,
        payload: &str,
        on_event: &mut dyn FnMut(EventKind, Value),
    ) -> Result<Value, IpcError> {
        self.send(message, payload)?;
        loop {
            match self.read_frame(None)? {
                Some(Frame::Reply(v)) => return Ok(v),
                Some(Frame::Event(kind, v)) => on_event(kind, v),
                None => {}
            }
        }
    }

    /// Runs sway commands (`;`-separated) and returns each one's outcome: `Ok` or sway's error.
    pub fn run(&mut self, commands: &str) -> Result<Vec<Result<(), String>>, IpcError> {
        let reply = self.request(Message::RunCommand, commands)?;
        Ok(command_results(&reply))
    }

    fn send(&mut self, message: Message, payload: &str) -> Result<(), IpcError> {
        let len = u32::try_from(payload.len()).map_err(|_| IpcError::Protocol("payload too long".into()))?;
        let mut frame = Vec::with_capacity(HEADER + payload.len());
        frame.extend_from_slice(MAGIC);
        frame.extend_from_slice(&len.to_ne_bytes());
        frame.extend_from_slice(&(message as u32).to_ne_bytes());
        frame.extend_from_slice(payload.as_bytes());
        self.stream.write_all(&frame)?;
        Ok(())
    }

    /// Reads one frame. With `timeout`, returns `Ok(None)` when no whole frame arrived in time
    /// (what was read is kept for the next call).
    pub fn read_frame(&mut self, timeout: Option<Duration>) -> Result<Option<Frame>, IpcError> {
        self.stream.set_read_timeout(timeout)?;
        loop {
            if let Some(frame) = self.take_frame()? {
                return Ok(Some(frame));
            }
            let mut chunk = [0u8; 8192];
            match self.stream.read(&mut chunk) {
                Ok(0) => return Err(IpcError::Io(ErrorKind::UnexpectedEof.into())),
                Ok(n) => self.buf.extend_from_slice(&chunk[..n]),
                Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {
                    return Ok(None);
                }
                Err(e) if e.kind() == ErrorKind::Interrupted => {}
                Err(e) => return Err(e.into()),
            }
        }
    }

    fn take_frame(&mut self) -> Result<Option<Frame>, IpcError> {
        let Some((kind, len)) = parse_header(&self.buf)? else { return Ok(None) };
        if self.buf.len() < HEADER + len {
            return Ok(None);
        }
        let body: Vec<u8> = self.buf.drain(..HEADER + len).skip(HEADER).collect();
        let value: Value = serde_json::from_slice(&body)
            .map_err(|e| IpcError::Protocol(format!("a frame that is not JSON: {e}")))?;
        Ok(Some(if kind & EVENT_BIT != 0 {
            Frame::Event(EventKind::from_type(kind), value)
        } else {
            Frame::Reply(value)
        }))
    }
}

/// The type and payload length of the frame at the start of `buf`, once its header is there.
fn parse_header(buf: &[u8]) -> Result<Option<(u32, usize)>, IpcError> {
    if buf.len() < HEADER {
        return Ok(None);
    }
    if &buf[..6] != MAGIC {
        return Err(IpcError::Protocol("a frame without the i3-ipc magic".into()));
    }
    let word = |at: usize| u32::from_ne_bytes([buf[at], buf[at + 1], buf[at + 2], buf[at + 3]]);
    let len = usize::try_from(word(6)).unwrap_or(usize::MAX);
    if len > MAX_PAYLOAD {
        return Err(IpcError::Protocol(format!("a frame of {len} bytes")));
    }
    Ok(Some((word(10), len)))
}

/// Each command's outcome in a `RUN_COMMAND` reply (an array of `{success, error?}`).
pub fn command_results(reply: &Value) -> Vec<Result<(), String>> {
    let Some(items) = reply.as_array() else {
        return vec![Err(format!("unexpected reply: {reply}"))];
    };
    items
        .iter()
        .map(|r| {
            if r.get("success").and_then(Value::as_bool) == Some(true) {
                Ok(())
            } else {
                Err(r.get("error").and_then(Value::as_str).unwrap_or("failed").to_string())
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frame(kind: u32, payload: &str) -> Vec<u8> {
        let mut f = MAGIC.to_vec();
        f.extend_from_slice(&u32::try_from(payload.len()).unwrap_or(0).to_ne_bytes());
        f.extend_from_slice(&kind.to_ne_bytes());
        f.extend_from_slice(payload.as_bytes());
        f
    }

    #[test]
    fn headers_wait_for_the_whole_frame_and_refuse_garbage() {
        let f = frame(EVENT_BIT | 5, "{}");
        assert!(matches!(parse_header(&f[..10]), Ok(None)));
        assert!(matches!(parse_header(&f), Ok(Some((k, 2))) if k == EVENT_BIT | 5));
        assert!(parse_header(b"i4-ipc\0\0\0\0\0\0\0\0").is_err());
        let mut huge = MAGIC.to_vec();
        huge.extend_from_slice(&u32::MAX.to_ne_bytes());
        huge.extend_from_slice(&0u32.to_ne_bytes());
        assert!(parse_header(&huge).is_err());
    }

    #[test]
    fn frames_are_taken_across_partial_reads() {
        let (a, mut b) = UnixStream::pair().expect("socket pair");
        let mut ipc = Ipc { stream: a, buf: Vec::new() };
        let mut both = frame(EVENT_BIT | 5, r#"{"change":"run"}"#);
        both.extend(frame(0, r#"[{"success":true}]"#));
        b.write_all(&both[..9]).expect("write");
        assert!(matches!(ipc.read_frame(Some(Duration::from_millis(20))), Ok(None)));
        b.write_all(&both[9..]).expect("write");
        let first = ipc.read_frame(None).expect("first");
        assert!(matches!(first, Some(Frame::Event(EventKind::Binding, _))), "{first:?}");
        let second = ipc.read_frame(None).expect("second");
        assert_eq!(second, Some(Frame::Reply(serde_json::json!([{"success": true}]))));
    }

    #[test]
    fn command_results_name_each_failure() {
        let reply =
            serde_json::json!([{"success": true}, {"success": false, "error": "Could not find binding"}]);
        assert_eq!(command_results(&reply), vec![Ok(()), Err("Could not find binding".to_string())]);
        assert_eq!(command_results(&serde_json::json!({})).len(), 1);
    }
}
