//! The request heads as they were sent, before hyper normalises them.
//!
//! hyper merges a repeated `Content-Length` whose values agree into one header and drops a
//! request target's `#fragment`, so the gate in `http.rs` could never see either. The contract
//! refuses both (400). So every connection's bytes pass through [`Watched`] on their way to
//! hyper: it follows the request stream (each head, then its body by `Content-Length` or
//! chunked framing, as hyper frames it) and notes, for each head in order, the fault it found
//! ([`WireFault`]) or none. hyper asks the connection's service once per head, in the same
//! order, so [`SentHeads::next`] hands each request its own note. When the stream cannot be
//! followed (a head hyper would refuse anyway, a malformed chunk) every later request on the
//! connection is `Unreadable`: what cannot be vouched for is refused.

use std::collections::VecDeque;
use std::io;
use std::pin::Pin;
use std::sync::{Arc, Mutex, PoisonError};
use std::task::{Context, Poll};

use mcec_rules::http_gate::WireFault;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

/// Longest request head followed (hyper refuses far shorter ones than a real client sends).
const MAX_HEAD_BYTES: usize = 64 * 1024;
/// Longest chunk-size or trailer line followed.
const MAX_LINE_BYTES: usize = 4 * 1024;
/// Most headers in one head (hyper's own limit).
const MAX_HEADERS: usize = 100;

/// What one request's head looked like on the wire, as a request extension.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SentHead {
    pub fault: Option<WireFault>,
}

impl SentHead {
    /// A request built in-process, which never crossed a wire: nothing was hidden from the gate.
    pub fn in_process() -> SentHead {
        SentHead { fault: None }
    }
}

/// The notes of one connection, in the order its heads arrived.
#[derive(Clone, Default)]
pub struct SentHeads(Arc<Mutex<VecDeque<Option<WireFault>>>>);

impl SentHeads {
    /// The note for the next request hyper hands over; `Unreadable` when none was taken.
    pub fn next(&self) -> SentHead {
        let fault = self.0.lock().unwrap_or_else(PoisonError::into_inner).pop_front();
        SentHead { fault: fault.unwrap_or(Some(WireFault::Unreadable)) }
    }

    fn note(&self, fault: Option<WireFault>) {
        self.0.lock().unwrap_or_else(PoisonError::into_inner).push_back(fault);
    }
}

/// A connection whose incoming bytes are followed by a [`Scanner`]; writes pass untouched.
pub struct Watched<IO> {
    io: IO,
    scanner: Scanner,
}

impl<IO> Watched<IO> {
    pub fn new(io: IO, heads: SentHeads) -> Watched<IO> {
        Watched { io, scanner: Scanner::new(heads) }
    }
}

impl<IO: AsyncRead + Unpin> AsyncRead for Watched<IO> {
    fn poll_read(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        let before = buf.filled().len();
        let polled = Pin::new(&mut this.io).poll_read(cx, buf);
        if let Poll::Ready(Ok(())) = polled {
            this.scanner.feed(&buf.filled()[before..]);
        }
        polled
    }
}

impl<IO: AsyncWrite + Unpin> AsyncWrite for Watched<IO> {
    fn poll_write(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.get_mut().io).poll_write(cx, buf)
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.get_mut().io).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.io.is_write_vectored()
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().io).poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().io).poll_shutdown(cx)
    }
}

/// Where the scanner is in the request stream.
enum State {
    /// Collecting a head (the bytes so far are in `Scanner::pending`).
    Head,
    /// Skipping a body of this many bytes still to come.
    Body(u64),
    /// Reading a chunk-size line.
    ChunkSize,
    /// Skipping chunk data, then its line end.
    ChunkData(u64),
    ChunkEnd,
    /// Reading trailer lines until an empty one.
    Trailer,
    /// Lost: every later head is noted `Unreadable`.
    Lost,
}

/// Follows one connection's request stream and notes each head's fault.
pub struct Scanner {
    state: State,
    /// The head or line being collected.
    pending: Vec<u8>,
    heads: SentHeads,
}

impl Scanner {
    pub fn new(heads: SentHeads) -> Scanner {
        Scanner { state: State::Head, pending: Vec::new(), heads }
    }

    /// Follow `bytes`, the next bytes of the stream.
    pub fn feed(&mut self, bytes: &[u8]) {
        let mut after_head = self.step(bytes);
        while let Some(rest) = after_head {
            after_head = self.step(&rest);
        }
    }

    /// Follow `bytes` until they are used up, or until a head ends: then the bytes after it.
    fn step(&mut self, mut bytes: &[u8]) -> Option<Vec<u8>> {
        while !bytes.is_empty() {
            match self.state {
                State::Lost => return None,
                State::Body(left) => {
                    let take = bytes.len().min(usize::try_from(left).unwrap_or(usize::MAX));
                    bytes = &bytes[take..];
                    let left = left - take as u64;
                    self.state = if left == 0 { State::Head } else { State::Body(left) };
                }
                State::ChunkData(left) => {
                    let take = bytes.len().min(usize::try_from(left).unwrap_or(usize::MAX));
                    bytes = &bytes[take..];
                    let left = left - take as u64;
                    self.state = if left == 0 { State::ChunkEnd } else { State::ChunkData(left) };
                }
                State::ChunkSize | State::ChunkEnd | State::Trailer => {
                    let Some(line) = self.take_line(&mut bytes) else { continue };
                    self.state = match self.state {
                        State::ChunkSize => match chunk_size(&line) {
                            Some(0) => State::Trailer,
                            Some(n) => State::ChunkData(n),
                            None => {
                                self.lose();
                                return None;
                            }
                        },
                        State::ChunkEnd if line.is_empty() => State::ChunkSize,
                        State::Trailer if line.is_empty() => State::Head,
                        State::Trailer => State::Trailer,
                        _ => {
                            self.lose();
                            return None;
                        }
                    };
                }
                State::Head => {
                    let searched_from = self.pending.len().saturating_sub(3);
                    self.pending.extend_from_slice(bytes);
                    bytes = &[];
                    if !ends_a_head(&self.pending[searched_from..]) {
                        if self.pending.len() > MAX_HEAD_BYTES {
                            self.lose();
                        }
                        continue;
                    }
                    let mut headers = [httparse::EMPTY_HEADER; MAX_HEADERS];
                    let mut request = httparse::Request::new(&mut headers);
                    match request.parse(&self.pending) {
                        Ok(httparse::Status::Complete(len)) => {
                            let (fault, next) = judge(&request);
                            self.heads.note(fault);
                            let rest = self.pending.split_off(len);
                            self.pending.clear();
                            self.state = next;
                            return Some(rest);
                        }
                        Ok(httparse::Status::Partial) if self.pending.len() <= MAX_HEAD_BYTES => {}
                        Ok(httparse::Status::Partial) | Err(_) => self.lose(),
                    }
                }
            }
        }
        None
    }

    /// The next whole line (without its `\r\n` or `\n`), or `None` with `bytes` used up when
    /// the line goes on.
    fn take_line<'b>(&mut self, bytes: &mut &'b [u8]) -> Option<Vec<u8>> {
        let all: &'b [u8] = bytes;
        match all.iter().position(|&b| b == b'\n') {
            Some(at) => {
                self.pending.extend_from_slice(&all[..at]);
                *bytes = &all[at + 1..];
                let mut line = std::mem::take(&mut self.pending);
                if line.last() == Some(&b'\r') {
                    line.pop();
                }
                Some(line)
            }
            None => {
                self.pending.extend_from_slice(bytes);
                *bytes = &[];
                if self.pending.len() > MAX_LINE_BYTES {
                    self.lose();
                }
                None
            }
        }
    }

    /// Stop following: no later head gets a note, so each is refused as `Unreadable`.
    fn lose(&mut self) {
        self.pending = Vec::new();
        self.state = State::Lost;
    }
}

/// Whether `tail` holds the blank line that ends a head (`\n\r\n` or `\n\n`).
fn ends_a_head(tail: &[u8]) -> bool {
    tail.windows(2).any(|w| w == b"\n\n") || tail.windows(3).any(|w| w == b"\n\r\n")
}

/// The head's fault, and how its body is framed (as hyper frames it: chunked wins over a
/// length; framing hyper would refuse loses the stream).
fn judge(request: &httparse::Request<'_, '_>) -> (Option<WireFault>, State) {
    let named = |name: &'static str| {
        request.headers.iter().filter(move |h| h.name.eq_ignore_ascii_case(name)).map(|h| h.value)
    };
    let lengths: Vec<&[u8]> = named("content-length").collect();
    let fault = if request.path.is_some_and(|p| p.contains('#')) {
        Some(WireFault::Fragment)
    } else if lengths.len() > 1 || lengths.iter().any(|v| v.contains(&b',')) {
        Some(WireFault::RepeatedContentLength)
    } else {
        None
    };
    let codings: Vec<&[u8]> = named("transfer-encoding").collect();
    let next = if let Some(last) = codings.last() {
        let last_coding = last.rsplit(|&b| b == b',').next().map(trim).unwrap_or_default();
        if last_coding.eq_ignore_ascii_case(b"chunked") { State::ChunkSize } else { State::Lost }
    } else {
        match lengths.first() {
            None => State::Head,
            Some(value) => {
                let first = value.split(|&b| b == b',').next().map(trim).unwrap_or_default();
                match std::str::from_utf8(first).ok().and_then(|s| s.parse::<u64>().ok()) {
                    Some(0) => State::Head,
                    Some(n) => State::Body(n),
                    None => State::Lost,
                }
            }
        }
    };
    (fault, next)
}

/// A chunk-size line's size (hex, before any `;extension`).
fn chunk_size(line: &[u8]) -> Option<u64> {
    let size = line.split(|&b| b == b';').next().map(trim)?;
    u64::from_str_radix(std::str::from_utf8(size).ok()?, 16).ok()
}

fn trim(bytes: &[u8]) -> &[u8] {
    let start = bytes.iter().position(|b| !b.is_ascii_whitespace()).unwrap_or(bytes.len());
    let end = bytes.iter().rposition(|b| !b.is_ascii_whitespace()).map_or(start, |e| e + 1);
    &bytes[start..end]
}

#[cfg(test)]
mod tests {
    use super::*;

    const OK: &[u8] = b"POST /mcp HTTP/1.1\r\nHost: a\r\nContent-Length: 2\r\n\r\n{}";

    fn notes(stream: &[u8], step: usize) -> Vec<Option<WireFault>> {
        let heads = SentHeads::default();
        let mut scanner = Scanner::new(heads.clone());
        for piece in stream.chunks(step) {
            scanner.feed(piece);
        }
        heads.0.lock().unwrap().iter().copied().collect()
    }

    #[test]
    fn each_head_of_a_kept_alive_stream_gets_its_own_note_however_the_bytes_arrive() {
        let chunked = b"POST /mcp HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n\
                        2;x=y\r\n{}\r\n0\r\nTrailer: t\r\n\r\n";
        let twice = b"POST /mcp HTTP/1.1\r\nContent-Length: 2\r\ncontent-length: 2\r\n\r\n{}";
        let list = b"POST /mcp HTTP/1.1\r\nContent-Length: 2, 2\r\n\r\n{}";
        let fragment = b"POST /mcp#f HTTP/1.1\r\nContent-Length: 2\r\n\r\n{}";
        let query_fragment = b"POST /mcp?a=b#f HTTP/1.1\r\n\r\n";
        let stream = [OK, chunked, twice, OK, list, fragment, query_fragment, OK].concat();
        let want = vec![
            None,
            None,
            Some(WireFault::RepeatedContentLength),
            None,
            Some(WireFault::RepeatedContentLength),
            Some(WireFault::Fragment),
            Some(WireFault::Fragment),
            None,
        ];
        for step in [1, 2, 3, 7, 64, stream.len()] {
            assert_eq!(notes(&stream, step), want, "fed {step} byte(s) at a time");
        }
    }

    #[test]
    fn a_stream_that_cannot_be_followed_gives_no_more_notes_and_the_next_request_is_unreadable() {
        let bad_chunk = b"POST /mcp HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n";
        assert_eq!(notes(&[OK, bad_chunk, OK].concat(), 5), vec![None, None]);
        let not_http = b"\x00\x01 nonsense\r\n\r\n";
        assert_eq!(notes(&[not_http.as_slice(), OK].concat(), 4), vec![]);
        let endless = vec![b'a'; MAX_HEAD_BYTES + 10];
        assert_eq!(notes(&[endless.as_slice(), b"\r\n\r\n", OK].concat(), 1000), vec![]);
        let heads = SentHeads::default();
        assert_eq!(heads.next().fault, Some(WireFault::Unreadable), "no note taken: refused");
    }
}
