//! `AGENT-AUDIT:` lines: one for every tool call and one for every refusal, written
//! through `tracing` so they reach stderr and `mcec.log` like every other line. Details
//! are built by the callers from names, codes and numbers only; tokens never reach here.

/// Write `AGENT-AUDIT: <action>; <detail>`. Newlines are flattened so a line stays a line.
pub fn audit(action: &str, detail: &str) {
    let detail = detail.replace(['\n', '\r'], " ");
    tracing::info!(target: "mcec::audit", "AGENT-AUDIT: {action}; {detail}");
}
