//! The one tree walk every tool uses: breadth first from a window's root, bounded in depth,
//! nodes and time, asking the stop flag before every node, never visiting a node twice (a
//! hostile or buggy application can report cycles). What it found is answered with a `cut`
//! reason when a bound ended it early.

use std::collections::HashSet;
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

/// Elements described at once, each on its own thread: an application answers one call at a
/// time, but the round trips through the bus overlap, which is most of a walk's cost.
const PARALLEL: usize = 8;

/// One element's description, and its children when the walk goes below it.
type Looked = Result<Option<(RawElement, Vec<NodeRef>)>, ToolError>;

fn look(
    backend: &dyn AccessibilityBackend,
    node: &NodeRef,
    want: Want,
    expand: bool,
    deadline: Instant,
) -> Looked {
    if Instant::now() >= deadline {
        return Err(ToolError::new(ErrorCode::Unavailable, "the walk ran out of time"));
    }
    let element = match backend.describe(node, want) {
        Ok(e) => e,
        Err(e) if e.code == ErrorCode::StaleElement => return Ok(None),
        Err(e) => return Err(e),
    };
    let children = if expand && element.child_count > 0 {
        match backend.children(node) {
            Ok(c) => c,
            Err(e) if e.code == ErrorCode::StaleElement => Vec::new(),
            Err(e) => return Err(e),
        }
    } else {
        Vec::new()
    };
    Ok(Some((element, children)))
}

/// [`look`] at every node of one level, in order, on up to [`PARALLEL`] threads; a stop ends
/// each thread before its next node.
fn look_all(
    backend: &dyn AccessibilityBackend,
    nodes: &[&NodeRef],
    want: Want,
    expand: bool,
    deadline: Instant,
    stop: &StopFlag,
) -> Vec<Looked> {
    let threads = PARALLEL.min(nodes.len()).max(1);
    let stopped = || Err(ToolError::emergency_stopped());
    if threads == 1 {
        return nodes
            .iter()
            .map(|n| if stop.is_set() { stopped() } else { look(backend, n, want, expand, deadline) })
            .collect();
    }
    let mut slots: Vec<Option<Looked>> = (0..nodes.len()).map(|_| None).collect();
    std::thread::scope(|scope| {
        let handles: Vec<_> = (0..threads)
            .map(|t| {
                scope.spawn(move || {
                    (t..nodes.len())
                        .step_by(threads)
                        .map(|i| {
                            let r = if stop.is_set() {
                                stopped()
                            } else {
                                look(backend, nodes[i], want, expand, deadline)
                            };
                            (i, r)
                        })
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        for h in handles {
            match h.join() {
                Ok(done) => done.into_iter().for_each(|(i, r)| slots[i] = Some(r)),
                Err(_) => tracing::error!("an accessibility walk thread panicked"),
            }
        }
    });
    slots
        .into_iter()
        .map(|r| r.unwrap_or_else(|| Err(ToolError::new(ErrorCode::Internal, "a walk thread failed"))))
        .collect()
}

/// Walk from `root`, level by level. Elements that vanish mid-walk are skipped; a stop ends it
/// with `emergency-stopped`; the root itself failing is that error.
pub fn walk(
    backend: &dyn AccessibilityBackend,
    root: &NodeRef,
    bounds: Bounds,
    stop: &StopFlag,
) -> Result<Walk, ToolError> {
    let deadline = Instant::now() + bounds.time;
    let mut out = Walk::default();
    let mut seen = HashSet::from([root.clone()]);
    let mut level: Vec<(NodeRef, Option<usize>)> = vec![(root.clone(), None)];
    let mut depth = 0u32;
    while !level.is_empty() {
        if stop.is_set() {
            return Err(ToolError::emergency_stopped());
        }
        let room = bounds.nodes.saturating_sub(out.visited.len());
        if room == 0 {
            out.cut = Some(Cut::MaxElements);
            break;
        }
        let full = level.len() > room;
        level.truncate(room);
        let expand = depth < bounds.depth;
        let nodes: Vec<&NodeRef> = level.iter().map(|(n, _)| n).collect();
        let looked = look_all(backend, &nodes, bounds.want, expand, deadline, stop);
        let mut next = Vec::new();
        let mut timed_out = false;
        for ((node, parent), r) in level.into_iter().zip(looked) {
            let (element, children) = match r {
                Ok(Some(found)) => found,
                Ok(None) if parent.is_some() => continue,
                Ok(None) => {
                    return Err(ToolError::new(
                        ErrorCode::StaleElement,
                        "The element is gone; find it again.",
                    ));
                }
                Err(e) if parent.is_none() || e.code == ErrorCode::EmergencyStopped => return Err(e),
                Err(e) if e.code == ErrorCode::Unavailable => {
                    timed_out = true;
                    continue;
                }
                Err(e) => return Err(e),
            };
            if element.child_count > 0 && !expand {
                out.cut.get_or_insert(Cut::Depth);
            }
            let index = out.visited.len();
            out.visited.push(Visited { node, parent, depth, element });
            next.extend(children.into_iter().filter(|c| seen.insert(c.clone())).map(|c| (c, Some(index))));
        }
        if timed_out {
            out.cut = Some(Cut::Time);
            break;
        }
        if full {
            out.cut = Some(Cut::MaxElements);
            break;
        }
        level = next;
        depth += 1;
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
