//! The tool layer of the accessibility tools: a typed request in, a JSON-able result out.
//!
//! [`A11yTools`] resolves windows through `mcec-desktop` (the same selectors, the same
//! refusal of mcec's own windows, which no list there shows), walks with [`crate::walk`],
//! matches with [`crate::selector`], and never picks "the first" of several matches. `invoke`
//! is actuation: it runs under the desktop's input lock and stop gate
//! ([`DesktopTools::actuate`]), checks the element again right before it acts, and acts
//! only through the platform's accessibility API.

mod clipboard;
mod invoke;
mod query;
mod text;
mod wait;

use std::sync::Arc;
use std::time::Duration;

use mcec_desktop::clipboard::Clipboard;
use mcec_desktop::requests::{ElementTarget, WindowSelector};
use mcec_desktop::types::Point;
use mcec_desktop::{DesktopTools, WindowInfo};
use mcec_rules::{ErrorCode, StopFlag, ToolError};
use serde::Serialize;

use crate::ids::Ids;
use crate::model::{Element, RawElement};
use crate::seam::{AccessibilityBackend, NodeRef, Want};
use crate::selector::Selector;
use crate::walk::{self, Bounds, Cut, Visited};

pub use clipboard::ClipboardResult;
pub use invoke::InvokeResult;
pub use query::{FindResult, QueryResult};
pub use text::GetTextResult;
pub use wait::WaitForResult;

/// How much a `find` (and each `wait-for` poll, and a selector in `invoke`) may walk.
pub const FIND_BOUNDS: Bounds = Bounds {
    depth: 64,
    nodes: 20_000,
    time: Duration::from_secs(5),
    want: Want { text: false, geometry: false, role: false, states: false },
};

/// The elements a selector matched, with their nodes.
type Matches = Vec<(NodeRef, Element)>;

/// The candidates a selector matched before they are described in full, and why the search
/// did not see the whole tree, if it did not.
type Candidates = (Vec<(NodeRef, RawElement)>, Option<Cut>);

/// Candidates listed in an `ambiguous-selector` error.
const MAX_LISTED: usize = 20;

/// The window an answer is about.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct WindowRef {
    pub id: u64,
    pub title: String,
}

impl From<&WindowInfo> for WindowRef {
    fn from(w: &WindowInfo) -> Self {
        WindowRef { id: w.id, title: w.title.clone() }
    }
}

/// The accessibility tools over one backend, the clipboard of the same desktop, and the
/// desktop they target windows on.
pub struct A11yTools {
    backend: Arc<dyn AccessibilityBackend>,
    clipboard: Arc<dyn Clipboard>,
    desktop: Arc<DesktopTools>,
    ids: Ids,
}

impl A11yTools {
    pub fn new(
        backend: Arc<dyn AccessibilityBackend>,
        clipboard: Arc<dyn Clipboard>,
        desktop: Arc<DesktopTools>,
    ) -> A11yTools {
        A11yTools { backend, clipboard, desktop, ids: Ids::default() }
    }

    /// The window `sel` names and the root of its tree.
    fn window_root(&self, sel: &WindowSelector) -> Result<(WindowInfo, NodeRef), ToolError> {
        let window = self.target_window(sel)?;
        let root = self.backend.window_root(&window)?;
        Ok((window, root))
    }

    /// The window `sel` names, never one of mcec's own.
    fn target_window(&self, sel: &WindowSelector) -> Result<WindowInfo, ToolError> {
        if sel.is_empty() {
            return Err(ToolError::new(
                ErrorCode::WindowNotFound,
                "Name the window: `window` (title), `process`, `className`, `pid`, `handle` or `foreground`.",
            ));
        }
        let window = self.desktop.resolve(sel)?;
        if is_mcec_window(&window) {
            return Err(ToolError::new(
                ErrorCode::WindowNotFound,
                "That is one of mcec's own windows (overlay, prompt, host, settings); they cannot be targeted.",
            ));
        }
        Ok(window)
    }

    /// An element as the agent sees it, with its id.
    fn element(&self, node: &NodeRef, raw: crate::model::RawElement) -> Element {
        Element { via: self.backend.via(), ..Element::new(self.ids.id_of(node), raw) }
    }

    /// Every element under `root` that `selector` matches, described with geometry: asked of
    /// the application in one filtered request where it can answer one, walked otherwise.
    /// Either way every match is enumerated (within [`FIND_BOUNDS`]), never only the first.
    fn matches(
        &self,
        root: &NodeRef,
        selector: &Selector,
        stop: &StopFlag,
    ) -> Result<(Matches, Option<Cut>), ToolError> {
        let (candidates, cut) = match self.filtered(root, selector)? {
            Some(found) => found,
            None => self.walked(root, selector, stop)?,
        };
        let mut out = Vec::new();
        for (node, element) in candidates {
            if stop.is_set() {
                return Err(ToolError::emergency_stopped());
            }
            let full = match self.backend.describe(&node, Want::FULL) {
                Ok(e) => e,
                Err(e) if e.code == ErrorCode::StaleElement => continue,
                Err(_) => element,
            };
            out.push((node.clone(), self.element(&node, full)));
        }
        Ok((out, cut))
    }

    /// The matches the application filtered itself, and the root checked here (the
    /// application answers only descendants); `None` when it cannot filter.
    fn filtered(&self, root: &NodeRef, selector: &Selector) -> Result<Option<Candidates>, ToolError> {
        let Some(filter) = selector.filter() else { return Ok(None) };
        let Some(found) = self.backend.matching(root, &filter, FIND_BOUNDS.nodes)? else {
            return Ok(None);
        };
        let cut = (found.len() >= FIND_BOUNDS.nodes).then_some(Cut::MaxElements);
        let want = Want { role: filter.role.is_some(), states: !filter.states.is_empty(), ..Want::default() };
        let top = self.backend.describe(root, want)?;
        let mut out: Vec<(NodeRef, RawElement)> =
            selector.matches(&top).then(|| (root.clone(), top)).into_iter().collect();
        out.extend(
            found
                .into_iter()
                .map(|(node, key)| (node, selector.filtered(&filter, key)))
                .filter(|(_, e)| selector.matches(e)),
        );
        Ok(Some((out, cut)))
    }

    /// The matches a bounded walk finds.
    fn walked(&self, root: &NodeRef, selector: &Selector, stop: &StopFlag) -> Result<Candidates, ToolError> {
        let want = Want {
            text: selector.needs_text(),
            role: selector.needs_role(),
            states: selector.needs_states(),
            geometry: false,
        };
        let bounds = Bounds { want, ..FIND_BOUNDS };
        let found = walk::walk(self.backend.as_ref(), root, bounds, stop)?;
        let hits = found
            .visited
            .into_iter()
            .filter(|v| selector.matches(&v.element))
            .map(|Visited { node, element, .. }| (node, element))
            .collect();
        Ok((hits, found.cut))
    }

    /// The one node `target` names: an issued element id (which takes no window selector), or
    /// the one match of its selector under `window`. Every tool that acts on or reads one
    /// element resolves it here.
    pub(crate) fn resolve(
        &self,
        window: &WindowSelector,
        target: &ElementTarget,
        stop: &StopFlag,
    ) -> Result<NodeRef, ToolError> {
        match (&target.element_id, &target.value) {
            (Some(_), Some(_)) => {
                Err(ToolError::bad_argument("elementId", "give an element id or a selector, not both"))
            }
            (Some(_), None) if !window.is_empty() => {
                Err(ToolError::bad_argument("elementId", "an element id needs no window selector"))
            }
            (Some(_), None) if target.by.is_some() || target.role.is_some() || !target.states.is_empty() => {
                Err(ToolError::bad_argument(
                    "elementId",
                    "`by`, `role` and `states` go with `value`, not with an id",
                ))
            }
            (Some(id), None) => self.ids.node(id),
            (None, Some(value)) => {
                let selector = Selector::new(target.by, value, target.role.as_deref(), &target.states)?;
                Ok(self.find_one(window, &selector, stop)?.1)
            }
            (None, None) => {
                Err(ToolError::bad_argument("elementId", "give an element id, or `value` with a window"))
            }
        }
    }

    /// The centre of the element `target` names, in desktop pixels: where `click`, `drag`
    /// and `focus` act for an element endpoint. `window` is the request's window selector
    /// (it scopes a selector; an element id stands alone). The element must be there and
    /// showing, with bounds.
    pub fn element_centre(
        &self,
        window: &WindowSelector,
        target: &ElementTarget,
        stop: &StopFlag,
    ) -> Result<Point, ToolError> {
        let scope = if target.element_id.is_some() { WindowSelector::default() } else { window.clone() };
        let node = self.resolve(&scope, target, stop)?;
        let e = self.backend.describe(&node, Want::DETAILS)?;
        if e.has("defunct") || (target.element_id.is_some() && !self.backend.attached(&node)?) {
            return Err(ToolError::new(
                ErrorCode::StaleElement,
                "The element is gone (defunct); find it again.",
            ));
        }
        let Some(b) = e.bounds.filter(|_| e.has("showing")) else {
            return Err(ToolError::new(
                ErrorCode::NoTarget,
                format!(
                    "The {} {:?} is not showing on screen, so it has no point to act at; nothing was done.",
                    e.role, e.name
                ),
            ));
        };
        let half = |n: u32| i32::try_from(n / 2).unwrap_or(i32::MAX);
        Ok(Point::new(b.x.saturating_add(half(b.width)), b.y.saturating_add(half(b.height))))
    }

    /// The one element `selector` matches under the window; never the first of several.
    fn find_one(
        &self,
        sel: &WindowSelector,
        selector: &Selector,
        stop: &StopFlag,
    ) -> Result<(WindowInfo, NodeRef, Element), ToolError> {
        let (window, root) = self.window_root(sel)?;
        let (mut found, cut) = self.matches(&root, selector, stop)?;
        match found.len() {
            0 => Err(not_found(selector, &window, cut)),
            1 if cut.is_none() || cut == Some(Cut::Depth) => {
                let (node, e) = found.remove(0);
                Ok((window, node, e))
            }
            _ => Err(ambiguous(selector, &found.into_iter().map(|(_, e)| e).collect::<Vec<_>>(), cut)),
        }
    }
}

/// mcec's own windows. The desktop selector already never resolves to one; asked again here
/// so a backend that forgot cannot hand one to an accessibility walk.
fn is_mcec_window(w: &WindowInfo) -> bool {
    w.is_mcecs_own()
}

fn cut_note(cut: Option<Cut>) -> &'static str {
    match cut {
        Some(Cut::Time) => " The walk ran out of time before it saw the whole tree.",
        Some(Cut::MaxElements) => " The walk stopped at its element limit before it saw the whole tree.",
        _ => "",
    }
}

pub(crate) fn not_found(selector: &Selector, window: &WindowInfo, cut: Option<Cut>) -> ToolError {
    ToolError::new(
        ErrorCode::ElementNotFound,
        format!(
            "No element with {} under the window {:?} (id {}).{} Use `query` to see what is there.",
            selector.describe(),
            window.title,
            window.id,
            cut_note(cut)
        ),
    )
}

pub(crate) fn ambiguous(selector: &Selector, candidates: &[Element], cut: Option<Cut>) -> ToolError {
    let listed: Vec<String> = candidates
        .iter()
        .take(MAX_LISTED)
        .map(|e| {
            let at = e
                .bounds
                .map(|b| format!(" at ({}, {}) {}x{}", b.x, b.y, b.width, b.height))
                .unwrap_or_default();
            format!("{} {} {:?}{at}", e.element_id, e.role, e.name)
        })
        .collect();
    let more = candidates.len().saturating_sub(MAX_LISTED);
    let more = if more > 0 { format!(" and {more} more") } else { String::new() };
    let head = if candidates.len() == 1 {
        format!(
            "One element with {} was found, but the walk was cut, so others may match.",
            selector.describe()
        )
    } else {
        format!("{} elements match {}.", candidates.len(), selector.describe())
    };
    ToolError::new(
        ErrorCode::AmbiguousSelector,
        format!(
            "{head}{} Candidates: {}{more}. Narrow it with `role` or `states`, or use one `elementId`.",
            cut_note(cut),
            listed.join("; ")
        ),
    )
}
