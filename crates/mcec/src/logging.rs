//! Logging: every line goes to stderr and, when it can be opened, to `mcec.log` beside the
//! settings. Nothing is ever written to stdout here: in `mcec mcp` stdout is the JSON-RPC
//! wire. Lines from crates that use the `log` facade are routed through `tracing` too.
//!
//! Both writers redact the secrets registered with [`never_log`] (the configured bearer
//! token) from every line, wherever it came from: an agent that sends the token as a tool
//! name or a field name still cannot get it into a log.

use std::fs::{File, OpenOptions};
use std::io::{self, IsTerminal, Write};
use std::path::Path;
use std::sync::{PoisonError, RwLock};

use tracing_subscriber::EnvFilter;
use tracing_subscriber::fmt::MakeWriter;
use tracing_subscriber::layer::SubscriberExt;
use tracing_subscriber::util::SubscriberInitExt;

const DEFAULT_FILTER: &str =
    "info,rmcp=warn,winit=warn,eframe=warn,egui_glow=warn,hyper=warn,tower_http=warn";
/// Shorter strings are too likely to occur by chance to be worth replacing.
const MIN_SECRET_LEN: usize = 8;

static SECRETS: RwLock<Vec<String>> = RwLock::new(Vec::new());

/// Register a secret that must never appear in any log line.
pub fn never_log(secret: &str) {
    if secret.len() >= MIN_SECRET_LEN {
        SECRETS.write().unwrap_or_else(PoisonError::into_inner).push(secret.to_string());
    }
}

fn redact(line: &[u8]) -> Vec<u8> {
    let secrets = SECRETS.read().unwrap_or_else(PoisonError::into_inner);
    match std::str::from_utf8(line) {
        Ok(text) if secrets.iter().any(|s| text.contains(s.as_str())) => {
            let mut text = text.to_string();
            for secret in secrets.iter() {
                text = text.replace(secret.as_str(), "<redacted>");
            }
            text.into_bytes()
        }
        _ => line.to_vec(),
    }
}

/// Writes each formatted event (tracing hands over one whole event per write) redacted.
struct Redacting<W: Write>(W);

impl<W: Write> Write for Redacting<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.0.write_all(&redact(buf))?;
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        self.0.flush()
    }
}

struct Stderr;

impl<'a> MakeWriter<'a> for Stderr {
    type Writer = Redacting<io::Stderr>;
    fn make_writer(&'a self) -> Self::Writer {
        Redacting(io::stderr())
    }
}

/// Opened with `O_APPEND` and unbuffered: each event is one atomic write(2), so lines from
/// different threads never interleave and a crash loses no line.
struct LogFile(File);

impl<'a> MakeWriter<'a> for LogFile {
    type Writer = Redacting<&'a File>;
    fn make_writer(&'a self) -> Self::Writer {
        Redacting(&self.0)
    }
}

/// Install the global subscriber. Returns a warning when the log file could not be opened.
pub fn init(log_file: Option<&Path>) -> Option<String> {
    let _ = tracing_log::LogTracer::init();
    let filter = EnvFilter::try_from_env("MCEC_LOG").unwrap_or_else(|_| EnvFilter::new(DEFAULT_FILTER));
    let stderr = tracing_subscriber::fmt::layer()
        .with_writer(Stderr)
        .with_ansi(io::stderr().is_terminal())
        .with_target(false);
    let (file, warning) = match log_file.map(open_log) {
        Some(Ok(file)) => (Some(file), None),
        Some(Err(warning)) => (None, Some(warning)),
        None => (None, None),
    };
    let file_layer = file.map(|f| {
        tracing_subscriber::fmt::layer().with_writer(LogFile(f)).with_ansi(false).with_target(false)
    });
    let _ = tracing_subscriber::registry().with(filter).with(stderr).with(file_layer).try_init();
    warning
}

fn open_log(path: &Path) -> Result<File, String> {
    if let Some(dir) = path.parent() {
        let _ = std::fs::create_dir_all(dir);
    }
    OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .map_err(|e| format!("cannot open log file {}: {e}; logging to stderr only", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn registered_secrets_are_redacted_and_short_ones_ignored() {
        never_log("0123456789abcdef");
        never_log("abc");
        let out = redact(b"AGENT-AUDIT: refused; tool=0123456789abcdef x abc\n");
        assert_eq!(String::from_utf8(out).unwrap(), "AGENT-AUDIT: refused; tool=<redacted> x abc\n");
    }

    #[test]
    fn writer_reports_the_original_length() {
        never_log("secret-token-value");
        let mut sink = Redacting(Vec::new());
        let line = b"token secret-token-value here\n";
        assert_eq!(sink.write(line).unwrap(), line.len());
        assert_eq!(sink.0, b"token <redacted> here\n");
    }
}
