//! How an MSAA element is named in a [`NodeRef`]: not a COM pointer (those live on one
//! thread, and a hung application may cost that thread) but a path that is resolved again
//! from a window handle on every call. Pure, so it is tested on every platform.
//!
//! The owner is the top-level window (`0x` hex handle), the id is
//! `<window>[/<index>]*[:<child>]`: the client-area object of `window` (any window under the
//! top-level one: a standard control is its own window), then the object at `index` among
//! each object's children, then optionally a simple child element (MSAA's child id, which is
//! no object of its own).

use crate::seam::NodeRef;

/// A parsed element path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Path {
    /// The top-level window the element belongs to.
    pub top: usize,
    /// The window whose client-area object the path starts at.
    pub window: usize,
    /// Indices into each object's children, from the window's object down.
    pub steps: Vec<usize>,
    /// A simple child element of the last object, by MSAA child id.
    pub child: Option<i32>,
}

impl Path {
    /// The client-area object of `window`, under the top-level window `top`.
    pub fn window(top: usize, window: usize) -> Path {
        Path { top, window, steps: Vec::new(), child: None }
    }

    /// The object at `index` among this object's children.
    pub fn step(&self, index: usize) -> Path {
        Path { steps: [self.steps.as_slice(), &[index]].concat(), ..self.clone() }
    }

    /// The simple child element `child` of this object.
    pub fn simple(&self, child: i32) -> Path {
        Path { child: Some(child), ..self.clone() }
    }

    pub fn node(&self) -> NodeRef {
        let mut id = format!("{:#x}", self.window);
        for s in &self.steps {
            id.push_str(&format!("/{s}"));
        }
        if let Some(c) = self.child {
            id.push_str(&format!(":{c}"));
        }
        NodeRef { owner: format!("{:#x}", self.top), id }
    }

    /// The path a node names; `None` for a node this backend never issued.
    pub fn parse(node: &NodeRef) -> Option<Path> {
        let hex = |s: &str| s.strip_prefix("0x").and_then(|h| usize::from_str_radix(h, 16).ok());
        let top = hex(&node.owner)?;
        let (objects, child) = match node.id.split_once(':') {
            Some((o, c)) => (o, Some(c.parse().ok()?)),
            None => (node.id.as_str(), None),
        };
        let mut parts = objects.split('/');
        let window = hex(parts.next()?)?;
        let steps = parts.map(|p| p.parse().ok()).collect::<Option<Vec<usize>>>()?;
        Some(Path { top, window, steps, child })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_round_trip() {
        let p = Path::window(0x10020, 0x30044).step(2).step(0).simple(5);
        let node = p.node();
        assert_eq!(node.owner, "0x10020");
        assert_eq!(node.id, "0x30044/2/0:5");
        assert_eq!(Path::parse(&node), Some(p));
        let w = Path::window(0x10020, 0x10020);
        assert_eq!(Path::parse(&w.node()), Some(w));
    }

    #[test]
    fn foreign_nodes_are_refused() {
        let bad = |owner: &str, id: &str| Path::parse(&NodeRef { owner: owner.into(), id: id.into() });
        assert_eq!(bad(":1.42", "/org/a11y/atspi/accessible/root"), None);
        assert_eq!(bad("0x10", "0x20/x"), None);
        assert_eq!(bad("0x10", "0x20:y"), None);
    }
}
