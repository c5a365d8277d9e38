//! The Windows backend over MSAA (`oleacc`'s `IAccessible`): the names, roles, states and
//! screen positions of another process's controls, and their default actions.
//!
//! MSAA first because it is what runs under Wine 8.0 (which cannot create the UI Automation
//! object) and what every Win32 control answers on Windows; a UI Automation backend is the
//! next implementation of the same seam. Every answer says `via: "msaa"`.
//!
//! - `vocab.rs`: MSAA roles and states in mcec's (AT-SPI2's) vocabulary; pure.
//! - `path.rs`: how an element is named in a [`NodeRef`](crate::seam::NodeRef): a path from a window handle,
//!   resolved again on every call, never a COM pointer; pure.
//! - `worker.rs`: the one thread the COM calls run on, and the bound on each call (a hung
//!   provider costs [`CALL_TIMEOUT`], never a tool call); pure.
//! - `com.rs` (Windows): the `oleacc` calls.
//!
//! mcec's own windows are refused above this backend (the tools resolve windows through
//! `mcec-desktop`, which never lists them), and a path cannot leave the top-level window it
//! was issued under.

mod path;
mod vocab;
mod worker;

#[cfg(windows)]
mod com;

pub use path::Path;
pub use vocab::{ROLE_CLIENT, class_role, plain_name, role, states};
pub use worker::Worker;

use std::time::Duration;

/// How long one MSAA call may take before the application counts as not answering (as
/// AT-SPI2's calls on Linux).
pub const CALL_TIMEOUT: Duration = Duration::from_millis(1_500);

#[cfg(windows)]
pub use backend::Msaa;

#[cfg(windows)]
mod backend {
    use mcec_desktop::WindowInfo;
    use mcec_rules::{ErrorCode, ToolError};

    use super::com::{self, Fail};
    use super::{CALL_TIMEOUT, Path, Worker};
    use crate::model::{Operation, RawElement};
    use crate::seam::{AccessibilityBackend, NodeRef, Want};

    /// The MSAA backend.
    pub struct Msaa {
        worker: Worker,
    }

    impl Default for Msaa {
        fn default() -> Self {
            Msaa { worker: Worker::new("mcec-msaa", com::init_thread) }
        }
    }

    fn stale() -> ToolError {
        ToolError::new(ErrorCode::StaleElement, "The element is gone; find it again.")
    }

    fn tool_error(f: Fail) -> ToolError {
        match f {
            Fail::Gone => stale(),
            Fail::NoTree(why) => ToolError::new(
                ErrorCode::Unavailable,
                format!(
                    "The window exposes no accessibility tree (MSAA: {why}). Use capture and the window tools, \
                     or `get-text` with `source: ocr`."
                ),
            ),
            Fail::Refused(why) => ToolError::new(
                ErrorCode::BadArguments,
                format!("The application refused the accessibility call: {why}."),
            ),
        }
    }

    impl Msaa {
        pub fn new() -> Msaa {
            Msaa::default()
        }

        /// Run `f` on the worker with `node`'s path, bounded by [`CALL_TIMEOUT`].
        fn on<T: Send + 'static>(
            &self,
            node: &NodeRef,
            f: impl FnOnce(&Path) -> Result<T, Fail> + Send + 'static,
        ) -> Result<T, ToolError> {
            let path = Path::parse(node).ok_or_else(stale)?;
            self.worker.run(CALL_TIMEOUT, move || f(&path))?.map_err(tool_error)
        }
    }

    impl AccessibilityBackend for Msaa {
        fn via(&self) -> Option<&'static str> {
            Some("msaa")
        }

        fn window_root(&self, window: &WindowInfo) -> Result<NodeRef, ToolError> {
            let top = usize::try_from(window.id).map_err(|_| stale())?;
            let root = self.worker.run(CALL_TIMEOUT, move || com::root(top))?;
            match root {
                Ok(p) => Ok(p.node()),
                Err(Fail::Gone) => Err(ToolError::new(ErrorCode::WindowNotFound, "The window is gone.")),
                Err(e) => Err(tool_error(e)),
            }
        }

        fn children(&self, node: &NodeRef) -> Result<Vec<NodeRef>, ToolError> {
            self.on(node, |p| com::children(p).map(|c| c.iter().map(Path::node).collect()))
        }

        fn describe(&self, node: &NodeRef, want: Want) -> Result<RawElement, ToolError> {
            self.on(node, move |p| com::describe(p, want))
        }

        fn text(&self, node: &NodeRef, max_chars: usize) -> Result<Option<String>, ToolError> {
            self.on(node, move |p| com::text(p, max_chars))
        }

        fn attached(&self, node: &NodeRef) -> Result<bool, ToolError> {
            self.on(node, com::attached)
        }

        fn perform(&self, node: &NodeRef, op: &Operation) -> Result<(), ToolError> {
            let op = op.clone();
            self.on(node, move |p| com::perform(p, &op))
        }
    }
}
