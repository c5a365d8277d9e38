//! The AT-SPI2 backend: the accessibility tree of X11 applications, read over the
//! accessibility D-Bus bus with a blocking `zbus` connection.
//!
//! Blocking, not async: every tool call already runs on its own blocking thread, and a walk is
//! a sequence of round trips that each depend on the last; the connection carries a method
//! timeout, so an application that never answers costs one timeout per call, and the walk's own
//! deadline ([`crate::walk`]) bounds the whole.
//!
//! - `bus.rs`: finding and connecting to the accessibility bus (and the errors that say how to
//!   turn accessibility on).
//! - `calls.rs`: one function per AT-SPI2 method the tools use, and the mapping of D-Bus
//!   errors to tool errors (`stale-element` for an object or application that is gone).
//! - `window.rs`: which application frame is a given X11 window.
//! - `scale.rs`: a toolkit's scale factor, so extents answer desktop pixels.

mod bus;
mod calls;
mod scale;
mod window;

use std::collections::HashMap;
use std::sync::{Mutex, PoisonError};
use std::time::Duration;

use mcec_desktop::WindowInfo;
use mcec_rules::ToolError;
use zbus::blocking::Connection;

use crate::model::{Operation, RawElement};
use crate::model::{ROLES, STATES};
use crate::seam::{AccessibilityBackend, Filter, Key, NodeRef, Want};

/// How long one AT-SPI2 call may take before the application counts as not answering.
pub const CALL_TIMEOUT: Duration = Duration::from_millis(1_500);

/// The AT-SPI2 backend. Connects on first use and again after the bus went away.
#[derive(Default)]
pub struct Atspi {
    conn: Mutex<Option<Connection>>,
    /// Each application's scale factor (by bus name), learnt when one of its windows was
    /// found; an application not in here reports desktop pixels.
    scales: Mutex<HashMap<String, f64>>,
    /// The D-Bus session bus whose accessibility bus is read (a session's own display);
    /// `None`: the environment's.
    session_bus: Option<String>,
}

impl Atspi {
    pub fn new() -> Atspi {
        Atspi::default()
    }

    /// The backend for the programs on the session bus at `address` (a session's own display).
    pub fn on_session_bus(address: String) -> Atspi {
        Atspi { session_bus: Some(address), ..Atspi::default() }
    }

    /// The live connection, connecting first if needed.
    fn conn(&self) -> Result<Connection, ToolError> {
        let mut slot = self.conn.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(c) = &*slot {
            return Ok(c.clone());
        }
        let c = bus::connect(self.session_bus.as_deref())?;
        *slot = Some(c.clone());
        Ok(c)
    }

    /// Run `f` on the connection; a broken connection is dropped so the next call reconnects.
    fn with<T>(&self, f: impl FnOnce(&Connection) -> Result<T, calls::CallError>) -> Result<T, ToolError> {
        let c = self.conn()?;
        f(&c).map_err(|e| {
            if e.broken_connection() {
                *self.conn.lock().unwrap_or_else(PoisonError::into_inner) = None;
            }
            e.into_tool_error()
        })
    }
}

impl AccessibilityBackend for Atspi {
    fn window_root(&self, window: &WindowInfo) -> Result<NodeRef, ToolError> {
        let c = self.conn()?;
        let (frame, extents) = window::frame_of(&c, window)?;
        let factor = extents.zip(window.bounds).map_or(1.0, |(e, w)| scale::factor(w, e));
        let mut scales = self.scales.lock().unwrap_or_else(PoisonError::into_inner);
        if factor == 1.0 {
            scales.remove(&frame.owner);
        } else {
            scales.insert(frame.owner.clone(), factor);
        }
        Ok(frame)
    }

    fn children(&self, node: &NodeRef) -> Result<Vec<NodeRef>, ToolError> {
        self.with(|c| calls::children(c, node))
    }

    fn describe(&self, node: &NodeRef, want: Want) -> Result<RawElement, ToolError> {
        let mut e = self.with(|c| calls::describe(c, node, want))?;
        let factor = self.scales.lock().unwrap_or_else(PoisonError::into_inner).get(&node.owner).copied();
        if let (Some(f), Some(b)) = (factor, e.bounds) {
            e.bounds = Some(scale::to_desktop(b, f));
        }
        Ok(e)
    }

    fn text(&self, node: &NodeRef, max_chars: usize) -> Result<Option<String>, ToolError> {
        self.with(|c| calls::text(c, node, max_chars))
    }

    fn attached(&self, node: &NodeRef) -> Result<bool, ToolError> {
        self.with(|c| calls::attached(c, node))
    }

    /// `Collection.GetMatches` with the role and states as its match rule, then the key
    /// property of every match with calls in flight together. An application without
    /// `Collection`, or whose `GetMatches` fails, is walked instead (`None`).
    fn matching(
        &self,
        root: &NodeRef,
        filter: &Filter,
        limit: usize,
    ) -> Result<Option<Vec<(NodeRef, String)>>, ToolError> {
        let number = |table: &[&str], name: &str| table.iter().position(|n| *n == name);
        let roles: Vec<usize> = filter.role.and_then(|r| number(ROLES, r)).into_iter().collect();
        let states: Vec<usize> = filter.states.iter().filter_map(|s| number(STATES, s)).collect();
        if roles.len() != usize::from(filter.role.is_some()) || states.len() != filter.states.len() {
            return Ok(None);
        }
        let c = self.conn()?;
        let nodes = match calls::get_matches(&c, root, &roles, &states, limit) {
            Ok(nodes) => nodes,
            Err(e) => {
                tracing::debug!("Collection.GetMatches failed, walking instead: {e:?}");
                return Ok(None);
            }
        };
        let property = match filter.key {
            Key::Nothing => return Ok(Some(nodes.into_iter().map(|n| (n, String::new())).collect())),
            Key::Name => "Name",
            Key::AutomationId => "AccessibleId",
        };
        let values = calls::strings(&c, &nodes, property);
        let mut out = Vec::with_capacity(nodes.len());
        for (node, value) in nodes.into_iter().zip(values) {
            match value {
                Ok(v) => out.push((node, v)),
                Err(e) if e.gone() => {}
                Err(e) => return Err(e.into_tool_error()),
            }
        }
        Ok(Some(out))
    }

    fn perform(&self, node: &NodeRef, op: &Operation) -> Result<(), ToolError> {
        self.with(|c| calls::perform(c, node, op))
    }
}
