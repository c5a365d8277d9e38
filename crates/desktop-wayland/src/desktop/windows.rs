//! Windows from sway's `GET_TREE`: every view (a container with a client behind it), with
//! sway's container id as the window id. Operations are sway commands on `[con_id=N]`:
//! focus, fullscreen, the scratchpad as "minimized", and move/resize where sway lets a
//! window have a position of its own (floating windows; a tiled one is placed by its layout).
//! Without sway's IPC the seam is answered by `toplevels.rs`; the choice is made here.

use mcec_desktop::seams::{WindowManager, WindowOp};
use mcec_desktop::types::WindowInfo;
use mcec_rules::{ErrorCode, ToolError};
use serde_json::Value;

use super::screens::rect_of;
use super::{Source, WlrDesktop};
use crate::ipc::Message;

/// One view with what the operations need to know.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct View {
    pub info: WindowInfo,
    pub floating: bool,
    pub fullscreen: bool,
    /// Shown on an output now (sway's `visible`).
    pub visible: bool,
}

/// Every view in a `GET_TREE` reply, in tree order.
pub(crate) fn views(tree: &Value) -> Vec<View> {
    let mut out = Vec::new();
    walk(tree, false, false, &mut out);
    out
}

fn walk(node: &Value, floating: bool, scratch: bool, out: &mut Vec<View>) {
    let scratch = scratch || node.get("name").and_then(Value::as_str) == Some("__i3_scratch");
    if let Some(view) = view_of(node, floating, scratch) {
        out.push(view);
    }
    for (key, float) in [("nodes", floating), ("floating_nodes", true)] {
        for child in node.get(key).and_then(Value::as_array).into_iter().flatten() {
            walk(child, float, scratch, out);
        }
    }
}

fn view_of(node: &Value, floating: bool, scratch: bool) -> Option<View> {
    let pid = node.get("pid").and_then(Value::as_u64).and_then(|p| u32::try_from(p).ok());
    let app_id = node.get("app_id").and_then(Value::as_str);
    let props = node.get("window_properties");
    if pid.is_none() && app_id.is_none() && props.is_none() {
        return None;
    }
    let prop = |k: &str| props.and_then(|p| p.get(k)).and_then(Value::as_str);
    let class_name = app_id.or_else(|| prop("class")).unwrap_or("").to_string();
    let instance = app_id.or_else(|| prop("instance")).unwrap_or("").to_string();
    let process = pid
        .and_then(|p| std::fs::read_to_string(format!("/proc/{p}/comm")).ok())
        .map(|s| s.trim().to_string());
    Some(View {
        info: WindowInfo {
            id: node.get("id")?.as_u64()?,
            title: node.get("name").and_then(Value::as_str).unwrap_or("").to_string(),
            class_name,
            instance,
            pid,
            process,
            bounds: Some(rect_of(node.get("rect")?)?),
            bounds_unavailable: None,
            foreground: node.get("focused").and_then(Value::as_bool) == Some(true),
            minimized: scratch,
        },
        floating: floating || node.get("type").and_then(Value::as_str) == Some("floating_con"),
        fullscreen: node.get("fullscreen_mode").and_then(Value::as_u64).is_some_and(|m| m != 0),
        visible: node.get("visible").and_then(Value::as_bool) == Some(true),
    })
}

/// The sway command for `op` on a view, or why sway cannot do it.
pub(crate) fn command(view: &View, op: WindowOp) -> Result<String, String> {
    let id = view.info.id;
    Ok(match op {
        WindowOp::Foreground if view.info.minimized => format!("[con_id={id}] scratchpad show, focus"),
        WindowOp::Foreground => format!("[con_id={id}] focus"),
        WindowOp::Minimize => format!("[con_id={id}] move scratchpad"),
        WindowOp::Maximize => format!("[con_id={id}] fullscreen enable"),
        WindowOp::Restore if view.info.minimized => {
            format!("[con_id={id}] scratchpad show, floating disable")
        }
        WindowOp::Restore => format!("[con_id={id}] fullscreen disable"),
        WindowOp::Move(p) if view.floating => format!("[con_id={id}] move absolute position {} {}", p.x, p.y),
        WindowOp::Resize { width, height } if view.floating => {
            format!("[con_id={id}] resize set width {width} px height {height} px")
        }
        WindowOp::Move(_) | WindowOp::Resize { .. } => {
            return Err(
                "sway tiles this window: its layout sets its place and size (only floating windows move)"
                    .into(),
            );
        }
    })
}

impl WlrDesktop {
    /// Where mcec's own windows (banner, prompts) are shown now: captures leave them out.
    pub(crate) fn own_window_areas(&self) -> Result<Vec<mcec_desktop::types::Rect>, ToolError> {
        if let Source::Protocols { toplevels, locator, .. } = &self.source {
            return self.own_toplevel_areas(toplevels, locator.as_ref());
        }
        Ok(self
            .views()?
            .into_iter()
            .filter(|v| v.visible && v.info.is_mcecs_own())
            .filter_map(|v| v.info.bounds)
            .collect())
    }

    fn views(&self) -> Result<Vec<View>, ToolError> {
        Ok(views(&self.request(Message::GetTree, "")?))
    }

    /// One view by id; `window-not-found` for one of mcec's own, which no tool targets.
    fn view(&self, id: u64) -> Result<View, ToolError> {
        let view = self.views()?.into_iter().find(|v| v.info.id == id).ok_or_else(|| {
            ToolError::new(ErrorCode::WindowClosed, format!("window {id} no longer exists"))
        })?;
        if view.info.is_mcecs_own() {
            return Err(ToolError::new(
                ErrorCode::WindowNotFound,
                format!("Window {id} is one of mcec's own windows, which no tool can target."),
            ));
        }
        Ok(view)
    }
}

impl WindowManager for WlrDesktop {
    /// Every view but mcec's own (banner, prompts), as on X11.
    fn list_windows(&self) -> Result<Vec<WindowInfo>, ToolError> {
        if let Source::Protocols { toplevels, .. } = &self.source {
            return super::toplevels::list(toplevels);
        }
        Ok(self.views()?.into_iter().map(|v| v.info).filter(|w| !w.is_mcecs_own()).collect())
    }

    fn window_info(&self, id: u64) -> Result<WindowInfo, ToolError> {
        if let Source::Protocols { toplevels, .. } = &self.source {
            return super::toplevels::info(toplevels, id);
        }
        Ok(self.view(id)?.info)
    }

    fn window_op(&self, id: u64, op: WindowOp) -> Result<(), ToolError> {
        if let Source::Protocols { toplevels, .. } = &self.source {
            return super::toplevels::op(toplevels, id, op);
        }
        let view = self.view(id)?;
        let cmd = command(&view, op).map_err(|why| ToolError::new(ErrorCode::Unavailable, why))?;
        let results =
            self.ipc()?.run(&cmd).map_err(|e| ToolError::new(ErrorCode::NoDesktop, e.to_string()))?;
        match results.into_iter().find_map(Result::err) {
            None => Ok(()),
            Some(e) => Err(ToolError::new(ErrorCode::Unavailable, format!("sway refused: {e}"))),
        }
    }

    fn parent_process(&self, pid: u32) -> Option<u32> {
        mcec_desktop::proc_stat::parent_in_stat(&std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use mcec_desktop::types::Point;
    use serde_json::json;

    fn tree() -> Value {
        json!({"id": 1, "type": "root", "name": "root", "nodes": [
            {"id": 2, "type": "output", "name": "X11-1", "nodes": [
                {"id": 4, "type": "workspace", "name": "1", "nodes": [
                    {"id": 7, "type": "con", "name": "foot", "app_id": "foot", "pid": 1, "focused": true,
                     "fullscreen_mode": 0, "rect": {"x": 0, "y": 0, "width": 1024, "height": 768}}
                ], "floating_nodes": [
                    {"id": 9, "type": "floating_con", "name": "xterm", "app_id": null, "pid": 1,
                     "window_properties": {"class": "XTerm", "instance": "xterm"},
                     "rect": {"x": 10, "y": 20, "width": 300, "height": 200}}
                ]}
            ]},
            {"id": 3, "type": "output", "name": "__i3", "nodes": [
                {"id": 5, "type": "workspace", "name": "__i3_scratch", "nodes": [], "floating_nodes": [
                    {"id": 11, "type": "floating_con", "name": "hidden", "app_id": "x", "pid": 1,
                     "rect": {"x": 0, "y": 0, "width": 10, "height": 10}}
                ]}
            ]}
        ]})
    }

    #[test]
    fn views_are_listed_with_class_focus_floating_and_the_scratchpad_as_minimized() {
        let v = views(&tree());
        let ids: Vec<u64> = v.iter().map(|v| v.info.id).collect();
        assert_eq!(ids, [7, 9, 11]);
        assert!(v[0].info.foreground && !v[0].floating && v[0].info.class_name == "foot");
        assert!(v[1].floating && v[1].info.class_name == "XTerm" && v[1].info.instance == "xterm");
        assert!(v[2].info.minimized && !v[0].info.minimized);
    }

    #[test]
    fn tiled_windows_do_not_move_and_floating_ones_do() {
        let v = views(&tree());
        assert!(command(&v[0], WindowOp::Move(Point::new(1, 2))).is_err());
        assert_eq!(
            command(&v[1], WindowOp::Move(Point::new(1, 2))),
            Ok("[con_id=9] move absolute position 1 2".into())
        );
        assert_eq!(command(&v[0], WindowOp::Foreground), Ok("[con_id=7] focus".into()));
        assert_eq!(command(&v[2], WindowOp::Foreground), Ok("[con_id=11] scratchpad show, focus".into()));
    }
}
