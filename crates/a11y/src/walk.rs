//! The one tree walk every tool uses: breadth first from a window's root, bounded in depth,
//! nodes and time, asking the stop flag before every node, never visiting a node twice (a
//! hostile or buggy application can report cycles). What it found is answered with a `cut`
//! reason when a bound ended it early.

use std::collections::{HashSet, VecDeque};
use std::time::{Duration, Instant};

use mcec_rules::{ErrorCode, StopFlag, ToolError};
use serde::Serialize;

use crate::model::RawElement;
use crate::seam::{AccessibilityBackend, NodeRef, Want};

/// The bounds of one walk.
#[derive(Debug, Clone, Copy)]
pub struct Bounds {
    /// Levels below the root to visit (the root is depth 0).
    pub depth: u32,
    /// Elements to describe at most.
    pub nodes: usize,
    /// Wall-clock time for the whole walk.
    pub time: Duration,
    pub want: Want,
}

/// Why a walk ended before it had seen everything.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum Cut {
    /// Deeper elements exist than `depth` allowed.
    Depth,
    /// `maxElements` was reached.
    MaxElements,
    /// The time bound ran out (a slow or unresponsive application).
    Time,
}

/// One element the walk saw.
#[derive(Debug, Clone)]
pub struct Visited {
    pub node: NodeRef,
    pub parent: Option<usize>,
    pub depth: u32,
    pub element: RawElement,
}

#[derive(Debug, Default)]
pub struct Walk {
    pub visited: Vec<Visited>,
    pub cut: Option<Cut>,
}

/// Walk from `root`. Elements that vanish mid-walk are skipped; a stop ends it with
/// `emergency-stopped`; the root itself failing is that error.
pub fn walk(
    backend: &dyn AccessibilityBackend,
    root: &NodeRef,
    bounds: Bounds,
    stop: &StopFlag,
) -> Result<Walk, ToolError> {
    let deadline = Instant::now() + bounds.time;
    let mut out = Walk::default();
    let mut seen = HashSet::new();
    let mut queue = VecDeque::from([(root.clone(), None::<usize>, 0u32)]);
    seen.insert(root.clone());
    while let Some((node, parent, depth)) = queue.pop_front() {
        if stop.is_set() {
            return Err(ToolError::emergency_stopped());
        }
        if out.visited.len() >= bounds.nodes {
            out.cut = Some(Cut::MaxElements);
            break;
        }
        if Instant::now() >= deadline {
            out.cut = Some(Cut::Time);
            break;
        }
        let element = match backend.describe(&node, bounds.want) {
            Ok(e) => e,
            Err(e) if parent.is_none() => return Err(e),
            Err(e) if e.code == ErrorCode::StaleElement => continue,
            Err(e) if e.code == ErrorCode::Unavailable => {
                out.cut = Some(Cut::Time);
                break;
            }
            Err(e) => return Err(e),
        };
        let index = out.visited.len();
        let has_children = element.child_count > 0;
        out.visited.push(Visited { node: node.clone(), parent, depth, element });
        if !has_children {
            continue;
        }
        if depth >= bounds.depth {
            out.cut.get_or_insert(Cut::Depth);
            continue;
        }
        match backend.children(&node) {
            Ok(children) => {
                for child in children {
                    if seen.insert(child.clone()) {
                        queue.push_back((child, Some(index), depth + 1));
                    }
                }
            }
            Err(e) if e.code == ErrorCode::StaleElement => {}
            Err(e) if e.code == ErrorCode::Unavailable => {
                out.cut = Some(Cut::Time);
                break;
            }
            Err(e) => return Err(e),
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Operation;
    use mcec_desktop::WindowInfo;

    /// A tree where node n has children 2n+1 and 2n+2 below `size`, plus a cycle back to 0.
    struct Binary {
        size: usize,
    }

    fn n(i: usize) -> NodeRef {
        NodeRef { owner: "t".into(), id: i.to_string() }
    }

    impl AccessibilityBackend for Binary {
        fn window_root(&self, _: &WindowInfo) -> Result<NodeRef, ToolError> {
            Ok(n(0))
        }
        fn children(&self, node: &NodeRef) -> Result<Vec<NodeRef>, ToolError> {
            let i: usize = node.id.parse().unwrap();
            let mut out: Vec<_> =
                [2 * i + 1, 2 * i + 2].into_iter().filter(|c| *c < self.size).map(n).collect();
            out.push(n(0));
            Ok(out)
        }
        fn describe(&self, _: &NodeRef, _: Want) -> Result<RawElement, ToolError> {
            Ok(RawElement { child_count: 3, ..RawElement::default() })
        }
        fn text(&self, _: &NodeRef, _: usize) -> Result<Option<String>, ToolError> {
            Ok(None)
        }
        fn attached(&self, _: &NodeRef) -> Result<bool, ToolError> {
            Ok(true)
        }
        fn perform(&self, _: &NodeRef, _: &Operation) -> Result<(), ToolError> {
            Ok(())
        }
    }

    fn bounds(depth: u32, nodes: usize) -> Bounds {
        Bounds { depth, nodes, time: Duration::from_secs(10), want: Want::default() }
    }

    #[test]
    fn cycles_are_visited_once_and_bounds_cut() {
        let stop = StopFlag::new();
        let all = walk(&Binary { size: 15 }, &n(0), bounds(10, 100), &stop).unwrap();
        assert_eq!(all.visited.len(), 15);
        assert_eq!(all.cut, None);
        let few = walk(&Binary { size: 100_000 }, &n(0), bounds(64, 50), &stop).unwrap();
        assert_eq!(few.visited.len(), 50);
        assert_eq!(few.cut, Some(Cut::MaxElements));
        let shallow = walk(&Binary { size: 100 }, &n(0), bounds(1, 100), &stop).unwrap();
        assert_eq!(shallow.visited.len(), 3);
        assert_eq!(shallow.cut, Some(Cut::Depth));
    }

    #[test]
    fn a_stop_ends_the_walk() {
        let stop = StopFlag::new();
        stop.set();
        let err = walk(&Binary { size: 15 }, &n(0), bounds(10, 100), &stop).unwrap_err();
        assert_eq!(err.code, ErrorCode::EmergencyStopped);
    }
}
