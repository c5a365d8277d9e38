//! `AGENT-AUDIT:` lines: the one function lives in `mcec-rules` so every crate writes them the
//! same way; it is re-exported here, where the front door's callers have always found it.

pub use mcec_rules::audit::audit;
