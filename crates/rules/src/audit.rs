//! `AGENT-AUDIT:` lines, the one way every crate writes them: one for every tool call, every
//! refusal and every change to a session copy. They go through the `tracing` facade (target
//! `mcec::audit`), so this crate still does no I/O: the binary's subscriber writes them to
//! stderr and `mcec.log` like every other line. Details are built by the callers from names,
//! codes and numbers only; tokens never reach here.

/// Write `AGENT-AUDIT: <action>; <detail>`. Newlines are flattened so a line stays a line.
pub fn audit(action: &str, detail: &str) {
    let detail = detail.replace(['\n', '\r'], " ");
    tracing::info!(target: "mcec::audit", "AGENT-AUDIT: {action}; {detail}");
}
