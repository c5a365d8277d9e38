//! Logging: every line goes to stderr and, when it can be opened, to `mcec.log` beside the
//! settings. Nothing is ever written to stdout here: in `mcec mcp` stdout is the JSON-RPC
//! wire. Lines from crates that use the `log` facade are routed through `tracing` too.

use std::fs::{File, OpenOptions};
use std::io::IsTerminal;
use std::path::Path;
use std::sync::Mutex;

use tracing_subscriber::EnvFilter;
use tracing_subscriber::layer::SubscriberExt;
use tracing_subscriber::util::SubscriberInitExt;

const DEFAULT_FILTER: &str =
    "info,rmcp=warn,winit=warn,eframe=warn,egui_glow=warn,hyper=warn,tower_http=warn";

/// Install the global subscriber. Returns a warning when the log file could not be opened.
pub fn init(log_file: Option<&Path>) -> Option<String> {
    let _ = tracing_log::LogTracer::init();
    let filter = EnvFilter::try_from_env("MCEC_LOG").unwrap_or_else(|_| EnvFilter::new(DEFAULT_FILTER));
    let stderr = tracing_subscriber::fmt::layer()
        .with_writer(std::io::stderr)
        .with_ansi(std::io::stderr().is_terminal())
        .with_target(false);
    let (file, warning) = match log_file.map(open_log) {
        Some(Ok(file)) => (Some(file), None),
        Some(Err(warning)) => (None, Some(warning)),
        None => (None, None),
    };
    // A `File` is unbuffered: each event is one write(2), so a crash loses no line.
    let file_layer = file.map(|f| {
        tracing_subscriber::fmt::layer().with_writer(Mutex::new(f)).with_ansi(false).with_target(false)
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
