//! The seam between the accessibility tools and a platform's accessibility API. It names
//! no D-Bus or COM type: AT-SPI2 implements it on Linux, MSAA on Windows, and UI Automation
//! would implement the same four calls (a window's root, children, a description, an
//! operation).

use mcec_desktop::WindowInfo;
use mcec_rules::ToolError;

use crate::model::{Operation, RawElement};

/// One node of a platform's accessibility tree: who owns it and its id there (on AT-SPI2 the
/// application's bus name and the object path; on UI Automation a runtime id).
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct NodeRef {
    pub owner: String,
    pub id: String,
}

/// What an element description should include beyond the cheap fields (name, description,
/// accessible id, child count). A walk that only matches names asks for nothing more, which
/// keeps it to one call per element.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Want {
    /// The text of a Text element (up to [`crate::model::SHORT_TEXT`] characters).
    pub text: bool,
    /// Bounds and offered actions.
    pub geometry: bool,
    /// The role (otherwise `unknown`).
    pub role: bool,
    /// The states and what the element supports (text, value, focus).
    pub states: bool,
}

impl Want {
    /// Everything.
    pub const FULL: Want = Want { text: true, geometry: true, role: true, states: true };
    /// Everything but the text.
    pub const DETAILS: Want = Want { text: false, ..Want::FULL };
}

/// Which property of each candidate [`AccessibilityBackend::matching`] reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Key {
    /// Nothing: the role and states filter decide alone.
    Nothing,
    /// The accessible name.
    Name,
    /// The toolkit's accessible id.
    AutomationId,
}

/// What an application can filter by itself before answering: every element with this role
/// (when given) and all these states, and the one property of each the caller compares.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Filter {
    pub role: Option<&'static str>,
    pub states: Vec<&'static str>,
    pub key: Key,
}

/// A platform's accessibility tree. Every call is bounded in time by the backend (an
/// application that never answers costs at most its call timeout).
pub trait AccessibilityBackend: Send + Sync {
    /// The platform API the answers come from, when the backend names it (`msaa` on
    /// Windows): every element it describes carries it as `via`. The default names none
    /// (AT-SPI2 answers on Linux keep their shape).
    fn via(&self) -> Option<&'static str> {
        None
    }

    /// The root element of `window`'s tree. `unavailable` when there is no accessibility bus
    /// or the application exposes nothing for this window, saying how to turn it on.
    fn window_root(&self, window: &WindowInfo) -> Result<NodeRef, ToolError>;

    /// The children of `node`, in order.
    fn children(&self, node: &NodeRef) -> Result<Vec<NodeRef>, ToolError>;

    /// What `node` is. `stale-element` when it no longer exists.
    fn describe(&self, node: &NodeRef, want: Want) -> Result<RawElement, ToolError>;

    /// The whole text of a Text element (`None` when it has no Text interface), at most
    /// `max_chars` characters.
    fn text(&self, node: &NodeRef, max_chars: usize) -> Result<Option<String>, ToolError>;

    /// Whether `node` is still part of its application's tree (its parents lead up to the
    /// application). A toolkit may keep an object answering after its window closed.
    fn attached(&self, node: &NodeRef) -> Result<bool, ToolError>;

    /// The descendants of `root` (not `root` itself) that pass `filter`, in tree order, at
    /// most `limit`, each with its `filter.key` property (empty for [`Key::Nothing`]), the
    /// filtering done by the application in one request where the platform offers that
    /// (AT-SPI2's `Collection`). `None` when this application cannot be asked so: the caller
    /// walks the tree instead. Elements that vanish meanwhile are left out.
    /// The default: a platform without such a request.
    fn matching(
        &self,
        _root: &NodeRef,
        _filter: &Filter,
        _limit: usize,
    ) -> Result<Option<Vec<(NodeRef, String)>>, ToolError> {
        Ok(None)
    }

    /// Do `op` on `node`. The caller has checked the element is there, enabled and offers
    /// the operation; the backend answers `bad-arguments` if the platform refuses it.
    fn perform(&self, node: &NodeRef, op: &Operation) -> Result<(), ToolError>;
}
