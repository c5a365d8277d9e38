//! Element ids: the same element always gets the same id, for as long as this process runs,
//! and an id this process never issued is `element-not-found`. Ids are short opaque strings
//! (`e17`), never the platform's own handles, so an agent cannot forge one that points at an
//! element of a window it could not have targeted.

use std::collections::HashMap;
use std::sync::{Mutex, PoisonError};

use mcec_rules::{ErrorCode, ToolError};

use crate::seam::NodeRef;

/// How many ids one process keeps; past this the table starts over (older ids then answer
/// `element-not-found` and the agent finds the element again). Bounds memory against an
/// agent that walks huge trees for hours.
pub const MAX_IDS: usize = 200_000;

#[derive(Default)]
struct Table {
    by_node: HashMap<NodeRef, u64>,
    by_id: HashMap<u64, NodeRef>,
    next: u64,
}

/// The id table of one process.
#[derive(Default)]
pub struct Ids(Mutex<Table>);

impl Ids {
    /// The id of `node`, issuing one the first time.
    pub fn id_of(&self, node: &NodeRef) -> String {
        let mut t = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(n) = t.by_node.get(node) {
            return format!("e{n}");
        }
        if t.by_id.len() >= MAX_IDS {
            t.by_node.clear();
            t.by_id.clear();
        }
        t.next += 1;
        let n = t.next;
        t.by_node.insert(node.clone(), n);
        t.by_id.insert(n, node.clone());
        format!("e{n}")
    }

    /// The node an id stands for; `element-not-found` for an id never issued.
    pub fn node(&self, id: &str) -> Result<NodeRef, ToolError> {
        let t = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        id.strip_prefix('e')
            .and_then(|n| n.parse::<u64>().ok())
            .and_then(|n| t.by_id.get(&n).cloned())
            .ok_or_else(|| {
                ToolError::new(
                    ErrorCode::ElementNotFound,
                    format!(
                        "No element has the id {id:?}: ids come from `query`, `find` or `wait-for` answers."
                    ),
                )
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn node(path: &str) -> NodeRef {
        NodeRef { owner: ":1.5".into(), id: path.into() }
    }

    #[test]
    fn the_same_node_keeps_its_id_and_unknown_ids_are_not_found() {
        let ids = Ids::default();
        let a = ids.id_of(&node("/a"));
        let b = ids.id_of(&node("/b"));
        assert_ne!(a, b);
        assert_eq!(ids.id_of(&node("/a")), a);
        assert_eq!(ids.node(&b).unwrap(), node("/b"));
        for bad in ["e999", "x1", "", "e-1", "/org/a11y/atspi/accessible/1"] {
            assert_eq!(ids.node(bad).unwrap_err().code, ErrorCode::ElementNotFound, "{bad}");
        }
    }
}
