//! The front door's connections: the accept loop, the per-connection timeouts and the cap on
//! open connections, so no client can hold the process's descriptors or slots for long.
//!
//! * **Header read timeout** ([`HEADER_READ_TIMEOUT`]): hyper's clock starts whenever a
//!   connection waits for a request head, on a new connection and between kept-alive
//!   requests alike, and is not reset by trickled bytes. It is therefore also the idle
//!   keep-alive timeout: a connection that sends no complete head in that time is closed.
//! * **Body read timeout** ([`BODY_READ_TIMEOUT`], applied by the gate in `http.rs`): an
//!   admitted request's whole body must arrive within it, or it is answered 408.
//! * **Connection cap** ([`MAX_CONNECTIONS`]): when a new connection would go over it, the
//!   oldest connection that has no request in progress (idle, or still sending its head) is
//!   closed to make room; a connection whose request passed the gate is never evicted. Only
//!   when every open connection has a request in progress (at most the gate's in-flight
//!   limit plus rejections being written) is the new connection closed at once. An attacker's
//!   idle sockets thus cost a legitimate client nothing but a slot it takes from them.
//!
//! Each connection registers a [`Conn`] handle; the request extension [`ConnHandle`] lets the
//! gate mark the connection busy for as long as it serves a request. Its bytes reach hyper
//! through [`crate::http_wire`], which gives each request the [`crate::http_wire::SentHead`]
//! the gate also judges.

use std::collections::BTreeMap;
use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicIsize, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::Router;
use axum::body::Body;
use axum::extract::ConnectInfo;
use hyper::body::Incoming;
use hyper_util::rt::{TokioIo, TokioTimer};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{Notify, watch};
use tower_service::Service;

use crate::http_wire::{SentHeads, Watched};

/// How long a connection may take to send a complete request head, counted from when it
/// starts waiting for one (so also the idle keep-alive timeout).
pub const HEADER_READ_TIMEOUT: Duration = Duration::from_secs(10);
/// How long an admitted request may take to send its whole body.
pub const BODY_READ_TIMEOUT: Duration = Duration::from_secs(20);
/// Most connections open at once (well under the default 1,024 descriptors).
pub const MAX_CONNECTIONS: usize = 256;
/// How long shutdown waits for requests in progress before it stops waiting.
const SHUTDOWN_GRACE: Duration = Duration::from_secs(10);

/// One open connection. `state` is the number of requests in progress, or `EVICTED`.
pub struct Conn {
    state: AtomicIsize,
    evict: Notify,
}

const EVICTED: isize = -1;

/// The connection a request arrived on, as a request extension.
#[derive(Clone)]
pub struct ConnHandle(Arc<Conn>);

/// Marks the connection busy until dropped.
pub struct Busy(Arc<Conn>);

impl ConnHandle {
    /// A connection in no registry, never evicted: for serving the router in-process.
    pub fn unregistered() -> ConnHandle {
        ConnHandle(Arc::new(Conn { state: AtomicIsize::new(0), evict: Notify::new() }))
    }

    /// Marks the connection busy so it is never evicted while the request is served.
    /// `None` when the connection is already being closed.
    pub fn busy(&self) -> Option<Busy> {
        self.0
            .state
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |s| (s >= 0).then_some(s + 1))
            .ok()
            .map(|_| Busy(self.0.clone()))
    }
}

impl Drop for Busy {
    fn drop(&mut self) {
        self.0.state.fetch_sub(1, Ordering::SeqCst);
    }
}

#[derive(Default)]
struct Registry {
    next_id: AtomicU64,
    open: Mutex<BTreeMap<u64, Arc<Conn>>>,
}

impl Registry {
    /// Registers a new connection, evicting the oldest idle one when at the cap. `None` when
    /// every open connection is busy: the caller closes the new connection at once.
    fn admit(&self) -> Option<(u64, Arc<Conn>)> {
        let mut open = self.open.lock().unwrap_or_else(|p| p.into_inner());
        if open.len() >= MAX_CONNECTIONS {
            let victim = open
                .iter()
                .find(|(_, c)| {
                    c.state.compare_exchange(0, EVICTED, Ordering::SeqCst, Ordering::SeqCst).is_ok()
                })
                .map(|(id, c)| (*id, c.clone()))?;
            open.remove(&victim.0);
            victim.1.evict.notify_one();
        }
        let id = self.next_id.fetch_add(1, Ordering::SeqCst);
        let conn = Arc::new(Conn { state: AtomicIsize::new(0), evict: Notify::new() });
        open.insert(id, conn.clone());
        Some((id, conn))
    }

    fn forget(&self, id: u64) {
        self.open.lock().unwrap_or_else(|p| p.into_inner()).remove(&id);
    }

    fn is_empty(&self) -> bool {
        self.open.lock().unwrap_or_else(|p| p.into_inner()).is_empty()
    }
}

/// Accepts connections on `listener` and serves `app` on each until `shutdown` resolves;
/// then stops accepting, lets requests in progress finish (up to a grace period) and returns.
pub async fn serve(listener: TcpListener, app: Router, shutdown: impl Future<Output = ()> + Send + 'static) {
    let registry = Arc::new(Registry::default());
    let (stop_tx, stop_rx) = watch::channel(false);
    let mut shutdown = std::pin::pin!(shutdown);
    let mut refused: u64 = 0;
    loop {
        let (stream, peer) = tokio::select! {
            () = &mut shutdown => break,
            accepted = listener.accept() => match accepted {
                Ok(pair) => pair,
                Err(e) => {
                    // Out of descriptors or similar: back off instead of spinning.
                    tracing::warn!("accepting an HTTP connection failed: {e}");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            },
        };
        let Some((id, conn)) = registry.admit() else {
            refused += 1;
            if refused.is_power_of_two() {
                tracing::warn!("HTTP: {refused} connection(s) closed at once: every open connection is busy");
            }
            drop(stream);
            continue;
        };
        let registry = registry.clone();
        let app = app.clone();
        let stop = stop_rx.clone();
        tokio::spawn(async move {
            serve_connection(stream, peer, app, conn, stop).await;
            registry.forget(id);
        });
    }
    let _ = stop_tx.send(true);
    let waited = tokio::time::timeout(SHUTDOWN_GRACE, async {
        while !registry.is_empty() {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    })
    .await;
    if waited.is_err() {
        tracing::warn!("HTTP: shutting down with requests still in progress after {SHUTDOWN_GRACE:?}");
    }
}

async fn serve_connection(
    stream: TcpStream,
    peer: SocketAddr,
    app: Router,
    conn: Arc<Conn>,
    mut stop: watch::Receiver<bool>,
) {
    let handle = ConnHandle(conn.clone());
    let heads = SentHeads::default();
    let stream = Watched::new(stream, heads.clone());
    let service = hyper::service::service_fn(move |request: hyper::Request<Incoming>| {
        let mut request = request.map(Body::new);
        request.extensions_mut().insert(ConnectInfo(peer));
        request.extensions_mut().insert(handle.clone());
        request.extensions_mut().insert(heads.next());
        let mut app = app.clone();
        async move { Ok::<_, Infallible>(app.call(request).await.unwrap_or_else(|never| match never {})) }
    });
    let mut builder = hyper::server::conn::http1::Builder::new();
    builder.timer(TokioTimer::new()).header_read_timeout(HEADER_READ_TIMEOUT);
    let connection = builder.serve_connection(TokioIo::new(stream), service);
    let mut connection = std::pin::pin!(connection);
    let stopping = async move {
        let _ = stop.wait_for(|stopping| *stopping).await;
    };
    tokio::select! {
        result = connection.as_mut() => {
            if let Err(e) = result {
                tracing::debug!("HTTP connection from {peer} ended: {e}");
            }
            return;
        }
        () = conn.evict.notified() => {
            tracing::debug!("HTTP connection from {peer} evicted: connection cap reached");
            return;
        }
        () = stopping => {}
    }
    connection.as_mut().graceful_shutdown();
    let _ = connection.await;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cap_evicts_the_oldest_idle_connection_and_never_a_busy_one() {
        let registry = Registry::default();
        let mut conns = Vec::new();
        for _ in 0..MAX_CONNECTIONS {
            conns.push(registry.admit().expect("under the cap"));
        }
        let busy_first = ConnHandle(conns[0].1.clone()).busy().expect("busy");
        let (_, newest) = registry.admit().expect("room made by evicting an idle one");
        assert_eq!(conns[0].1.state.load(Ordering::SeqCst), 1, "the busy oldest is kept");
        assert_eq!(conns[1].1.state.load(Ordering::SeqCst), EVICTED, "the oldest idle one goes");
        assert!(ConnHandle(conns[1].1.clone()).busy().is_none(), "an evicted connection takes no request");
        assert_eq!(registry.open.lock().expect("lock").len(), MAX_CONNECTIONS);
        drop(busy_first);
        drop(newest);

        let all_busy: Vec<Busy> = registry
            .open
            .lock()
            .expect("lock")
            .values()
            .map(|c| ConnHandle(c.clone()).busy().expect("busy"))
            .collect();
        assert!(registry.admit().is_none(), "every connection busy: the new one is refused");
        drop(all_busy);
        assert!(registry.admit().is_some(), "idle again: room is made");
    }
}
