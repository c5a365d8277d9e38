//! `mcec mcp`: MCP over stdin/stdout. Stdout carries JSON-RPC only; every log line goes to
//! stderr and the log file (the binary sets that up before calling here).

use std::sync::Arc;

use rmcp::ServiceExt;

use crate::agent::Agent;
use crate::audit::audit;
use crate::server::McecServer;

/// Serve one client on stdio until it disconnects.
pub async fn serve_stdio(agent: Arc<Agent>) -> Result<(), rmcp::service::ServerInitializeError> {
    let service = McecServer::new(agent).serve(rmcp::transport::stdio()).await?;
    let reason = service.waiting().await;
    audit("stdio-closed", &format!("reason={reason:?}"));
    Ok(())
}
