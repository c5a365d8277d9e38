//! Logging: every line goes to stderr and, when it can be opened, to `mcec.log` beside the
//! settings. Nothing is ever written to stdout here: in `mcec mcp` stdout is the JSON-RPC
//! wire. Lines from crates that use the `log` facade are routed through `tracing` too.
//!
//! No token reaches a log, at any level:
//! - The wire crates (rmcp, hyper, h2, axum, tower-http) are capped at `info` whatever
//!   `MCEC_LOG` asks: at `debug`/`trace` rmcp logs whole requests and responses (session
//!   tokens in handoffs, `end-session` tokens right or wrong), which no redaction by shape can
//!   catch in general.
//! - Both writers redact every line ([`redact`]): the secrets registered with [`never_log`]
//!   (the configured bearer token) and anything shaped like a token (long hex runs, the word
//!   after `Bearer`, the value of a `…token` or `authorization` key), so an agent that echoes
//!   a token in a tool name or an argument still cannot get it into a log.
//!
//! `mcec.log` is private and bounded ([`file`](mod@file)).

mod file;
mod redact;

use std::io::{self, IsTerminal, Write};
use std::path::Path;
use std::sync::{PoisonError, RwLock};

use tracing::Level;
use tracing_subscriber::filter::{Targets, filter_fn};
use tracing_subscriber::fmt::MakeWriter;
use tracing_subscriber::layer::SubscriberExt;
use tracing_subscriber::util::SubscriberInitExt;

use file::LogFile;

const DEFAULT_FILTER: &str = "info,rmcp=warn,hyper=warn,tower_http=warn";
/// Crates whose debug output can carry request bodies or headers: never below `info`.
const WIRE_CRATES: [&str; 6] = ["rmcp", "hyper", "hyper_util", "h2", "axum", "tower_http"];
/// Shorter strings are too likely to occur by chance to be worth replacing.
const MIN_SECRET_LEN: usize = 8;

static SECRETS: RwLock<Vec<String>> = RwLock::new(Vec::new());

/// Register a secret that must never appear in any log line.
pub fn never_log(secret: &str) {
    if secret.len() >= MIN_SECRET_LEN {
        SECRETS.write().unwrap_or_else(PoisonError::into_inner).push(secret.to_string());
    }
}

/// `text` as a log writer would print it, for the few messages printed outside tracing.
pub fn redacted_text(text: &str) -> String {
    let secrets = SECRETS.read().unwrap_or_else(PoisonError::into_inner);
    redact::redact(text, &secrets)
}

fn redacted(line: &[u8]) -> Vec<u8> {
    let secrets = SECRETS.read().unwrap_or_else(PoisonError::into_inner);
    redact::redact(&String::from_utf8_lossy(line), &secrets).into_bytes()
}

/// Whether an event or span of `target` at `level` may be logged at all.
fn allowed(target: &str, level: &Level) -> bool {
    let wire = WIRE_CRATES
        .iter()
        .any(|c| target == *c || target.strip_prefix(c).is_some_and(|r| r.starts_with("::")));
    !wire || *level <= Level::INFO
}

/// Writes each formatted event (tracing hands over one whole event per write) redacted.
struct Redacting<W: Write>(W);

impl<W: Write> Write for Redacting<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.0.write_all(&redacted(buf))?;
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

/// One event, handed to [`LogFile::append`] as a single write.
struct FileEvent<'a>(&'a LogFile);

impl Write for FileEvent<'_> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.0.append(buf)?;
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

impl<'a> MakeWriter<'a> for LogFile {
    type Writer = Redacting<FileEvent<'a>>;
    fn make_writer(&'a self) -> Self::Writer {
        Redacting(FileEvent(self))
    }
}

/// The levels `MCEC_LOG` asks for: `level` or `target=level`, comma-separated (what
/// `tracing`'s `Targets` reads; the `env-filter` syntax for spans and fields, which needs the
/// regex engine in the binary, is not read). Unset, empty or unreadable: [`DEFAULT_FILTER`].
fn filter_from(spec: Option<&str>) -> Targets {
    spec.filter(|s| !s.trim().is_empty())
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| DEFAULT_FILTER.parse().expect("the default filter parses"))
}

/// Install the global subscriber. Returns a warning when the log file could not be opened.
pub fn init(log_file: Option<&Path>) -> Option<String> {
    let _ = tracing_log::LogTracer::init();
    let filter = filter_from(std::env::var("MCEC_LOG").ok().as_deref());
    let stderr = tracing_subscriber::fmt::layer()
        .with_writer(Stderr)
        .with_ansi(io::stderr().is_terminal())
        .with_target(false);
    let (file, warning) = match log_file.map(LogFile::open) {
        Some(Ok(file)) => (Some(file), None),
        Some(Err(e)) => (None, Some(format!("{e}; logging to stderr only"))),
        None => (None, None),
    };
    let file_layer =
        file.map(|f| tracing_subscriber::fmt::layer().with_writer(f).with_ansi(false).with_target(false));
    let _ = tracing_subscriber::registry()
        .with(filter_fn(|meta| allowed(meta.target(), meta.level())))
        .with(filter)
        .with(stderr)
        .with(file_layer)
        .try_init();
    warning
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mcec_log_reads_levels_per_target_and_falls_back_to_the_default() {
        let default = filter_from(None);
        assert!(default.would_enable("mcec", &Level::INFO));
        assert!(!default.would_enable("mcec", &Level::DEBUG));
        assert!(!default.would_enable("rmcp", &Level::INFO));
        for unusable in ["", "  ", "mcec=loud", "a=b=c"] {
            let filter = filter_from(Some(unusable));
            assert!(filter.would_enable("mcec", &Level::INFO), "{unusable:?}");
            assert!(!filter.would_enable("rmcp", &Level::INFO), "{unusable:?}");
        }
        let asked = filter_from(Some("warn,mcec_desktop=trace"));
        assert!(asked.would_enable("mcec_desktop::api", &Level::TRACE));
        assert!(!asked.would_enable("mcec", &Level::INFO));
        assert!(filter_from(Some("TRACE")).would_enable("anything", &Level::TRACE));
    }

    #[test]
    fn registered_secrets_are_redacted_and_short_ones_ignored() {
        never_log("0123456789-secret");
        never_log("abc");
        let out = redacted(b"AGENT-AUDIT: refused; tool=0123456789-secret x abc\n");
        assert_eq!(String::from_utf8(out).unwrap(), "AGENT-AUDIT: refused; tool=<redacted> x abc\n");
    }

    #[test]
    fn writer_reports_the_original_length() {
        never_log("secret-token-value");
        let mut sink = Redacting(Vec::new());
        let line = b"got secret-token-value here\n";
        assert_eq!(sink.write(line).unwrap(), line.len());
        assert_eq!(sink.0, b"got <redacted> here\n");
    }

    #[test]
    fn wire_crates_never_log_below_info() {
        for target in ["rmcp", "rmcp::service", "hyper::proto::h1", "h2::codec", "tower_http::trace"] {
            assert!(!allowed(target, &Level::DEBUG), "{target}");
            assert!(!allowed(target, &Level::TRACE), "{target}");
            assert!(allowed(target, &Level::INFO), "{target}");
        }
        assert!(allowed("mcec::audit", &Level::TRACE));
        assert!(allowed("rmcpx", &Level::DEBUG));
    }
}
