//! `query` (the tree under a window, bounded) and `find` (the one element a selector names).

use std::time::Duration;

use mcec_rules::{StopFlag, ToolError};
use serde::Serialize;

use super::{A11yTools, WindowRef, not_found};
use crate::model::Element;
use crate::requests::{FindRequest, QueryRequest};
use crate::seam::Want;
use crate::selector::Selector;
use crate::walk::{self, Bounds, Cut};

const DEFAULT_DEPTH: u32 = 8;
const MAX_DEPTH: u32 = 64;
const DEFAULT_ELEMENTS: usize = 300;
const MAX_ELEMENTS: usize = 5_000;
/// The longest a `query` walks.
const QUERY_TIME: Duration = Duration::from_secs(10);
/// Matches listed by `find` with `all`.
const MAX_ALL: usize = 50;

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct QueryResult {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub window: Option<WindowRef>,
    pub elements: Vec<Element>,
    pub count: usize,
    /// Why the answer is not the whole tree, when it is not.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cut: Option<Cut>,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct FindResult {
    pub window: WindowRef,
    /// The one match (without `all`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub element: Option<Element>,
    /// Every match (with `all`), at most 50.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub elements: Option<Vec<Element>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cut: Option<Cut>,
}

fn bounded(value: Option<u64>, default: u64, max: u64, field: &str) -> Result<u64, ToolError> {
    match value.unwrap_or(default) {
        0 => Err(ToolError::bad_argument(field, format!("must be 1 to {max}"))),
        v if v > max => Err(ToolError::bad_argument(field, format!("must be 1 to {max}"))),
        v => Ok(v),
    }
}

impl A11yTools {
    pub fn query(&self, req: &QueryRequest, stop: &StopFlag) -> Result<QueryResult, ToolError> {
        let depth =
            bounded(req.depth.map(u64::from), u64::from(DEFAULT_DEPTH), u64::from(MAX_DEPTH), "depth")?;
        let nodes = bounded(
            req.max_elements.map(|n| n as u64),
            DEFAULT_ELEMENTS as u64,
            MAX_ELEMENTS as u64,
            "maxElements",
        )?;
        let sel = req.selector();
        let (window, root) = match &req.element_id {
            Some(id) if sel.is_empty() => (None, self.ids.node(id)?),
            Some(_) => {
                return Err(ToolError::bad_argument("elementId", "give an element id or a window, not both"));
            }
            None => {
                let (w, root) = self.window_root(&sel)?;
                (Some(WindowRef::from(&w)), root)
            }
        };
        let bounds = Bounds {
            depth: u32::try_from(depth).unwrap_or(MAX_DEPTH),
            nodes: usize::try_from(nodes).unwrap_or(MAX_ELEMENTS),
            time: QUERY_TIME,
            want: Want::FULL,
        };
        let found = walk::walk(self.backend.as_ref(), &root, bounds, stop)?;
        let ids: Vec<String> = found.visited.iter().map(|v| self.ids.id_of(&v.node)).collect();
        let elements: Vec<Element> = found
            .visited
            .into_iter()
            .zip(&ids)
            .map(|(v, id)| {
                let mut e = Element::new(id.clone(), v.element);
                e.parent_id = v.parent.and_then(|p| ids.get(p).cloned());
                e.depth = Some(v.depth);
                e.via = self.backend.via();
                e
            })
            .collect();
        Ok(QueryResult { window, count: elements.len(), elements, cut: found.cut })
    }

    pub fn find(&self, req: &FindRequest, stop: &StopFlag) -> Result<FindResult, ToolError> {
        let selector = Selector::of(&req.target())?;
        if req.all == Some(true) {
            let (window, root) = self.window_root(&req.selector())?;
            let (found, cut) = self.matches(&root, &selector, stop)?;
            if found.is_empty() {
                return Err(not_found(&selector, &window, cut));
            }
            let elements = found.into_iter().take(MAX_ALL).map(|(_, e)| e).collect();
            return Ok(FindResult {
                window: WindowRef::from(&window),
                element: None,
                elements: Some(elements),
                cut,
            });
        }
        let (window, _, element) = self.find_one(&req.selector(), &selector, stop)?;
        Ok(FindResult { window: WindowRef::from(&window), element: Some(element), elements: None, cut: None })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{Value, json};

    fn properties<T: schemars::JsonSchema>() -> Value {
        serde_json::to_value(schemars::schema_for!(T)).unwrap()["properties"].clone()
    }

    /// The limits the input schemas state are the ones these tools enforce (the schema
    /// attributes are literals, so this is what keeps the two together).
    #[test]
    fn the_schemas_state_the_limits_the_tools_enforce() {
        let query = properties::<QueryRequest>();
        let elements = (DEFAULT_ELEMENTS as u64, MAX_ELEMENTS as u64);
        for (field, (default, max)) in
            [("depth", (u64::from(DEFAULT_DEPTH), u64::from(MAX_DEPTH))), ("maxElements", elements)]
        {
            let f = &query[field];
            assert_eq!(
                (&f["minimum"], &f["maximum"], &f["default"]),
                (&json!(1), &json!(max), &json!(default))
            );
        }
        let wait = properties::<crate::requests::WaitForRequest>();
        assert_eq!(wait["timeoutMs"]["maximum"], json!(super::super::wait::MAX_TIMEOUT_MS));
        let invoke = properties::<crate::requests::InvokeRequest>();
        assert_eq!(invoke["text"]["maxLength"], json!(super::super::invoke::MAX_TEXT_CHARS));
    }
}
