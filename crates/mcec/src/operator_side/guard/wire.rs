//! The guard socket's plumbing: who is at the other end (the kernel's peer credentials: a
//! connection from another user is refused whatever the directory's mode), one message per
//! line with a bounded length, and writes that cannot hang on a peer that stopped reading.

use std::io::{BufRead, BufReader, Read, Write};
use std::os::unix::net::UnixStream;
use std::time::Duration;

use mcec_rules::guard::MAX_LINE;

/// How long a write may wait for a peer that does not read.
const WRITE_TIMEOUT: Duration = Duration::from_millis(500);

/// The peer's process id, when it is this user; why not otherwise.
pub fn same_user_peer(stream: &UnixStream) -> Result<u32, String> {
    let cred =
        rustix::net::sockopt::socket_peercred(stream).map_err(|e| format!("no peer credentials: {e}"))?;
    let ours = rustix::process::getuid();
    if cred.uid != ours {
        return Err(format!("peer uid {} is not this user's ({})", cred.uid.as_raw(), ours.as_raw()));
    }
    Ok(cred.pid.as_raw_nonzero().get().unsigned_abs())
}

/// Lines from a stream, each at most [`MAX_LINE`] bytes.
pub struct Lines {
    reader: BufReader<UnixStream>,
}

impl Lines {
    pub fn new(stream: UnixStream) -> Lines {
        Lines { reader: BufReader::new(stream) }
    }

    /// Wait at most `limit` for each read from now on (`None`: for ever).
    pub fn set_patience(&self, limit: Option<Duration>) {
        let _ = self.reader.get_ref().set_read_timeout(limit);
    }

    /// The next line without its newline; `None` at the end, on an error or on a line too long.
    pub fn next_line(&mut self) -> Option<String> {
        let mut line = String::new();
        let read = (&mut self.reader).take(MAX_LINE as u64).read_line(&mut line).ok()?;
        if read == 0 || !line.ends_with('\n') {
            return None;
        }
        line.pop();
        Some(line)
    }
}

/// The writing half: one message per call, a bounded wait.
pub struct Sender {
    stream: UnixStream,
}

impl Sender {
    pub fn new(stream: &UnixStream) -> std::io::Result<Sender> {
        let stream = stream.try_clone()?;
        stream.set_write_timeout(Some(WRITE_TIMEOUT))?;
        Ok(Sender { stream })
    }

    /// Send one line made by `mcec_rules::guard::encode`.
    pub fn send(&mut self, line: &str) -> std::io::Result<()> {
        self.stream.write_all(line.as_bytes())
    }

    /// End the connection both ways (the peer's reader sees the end).
    pub fn close(&self) {
        let _ = self.stream.shutdown(std::net::Shutdown::Both);
    }
}
