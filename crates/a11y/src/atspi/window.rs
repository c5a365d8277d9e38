//! Which accessible frame is a given X11 window: the applications on the registry whose
//! process owns the window, then their top-level children by title and, among several, by
//! how close their extents are to the window's. mcec's own process is never considered.

use mcec_desktop::WindowInfo;
use mcec_desktop::types::Rect;
use mcec_rules::{ErrorCode, ToolError};
use zbus::blocking::Connection;

use super::bus::HOW_TO_ENABLE;
use super::calls::{self, Call};
use crate::seam::NodeRef;

fn registry_root() -> NodeRef {
    NodeRef { owner: "org.a11y.atspi.Registry".into(), id: "/org/a11y/atspi/accessible/root".into() }
}

fn pid_of(c: &Connection, bus_name: &str) -> Call<u32> {
    let dbus = NodeRef { owner: "org.freedesktop.DBus".into(), id: "/org/freedesktop/DBus".into() };
    calls::call(c, &dbus, "org.freedesktop.DBus", "GetConnectionUnixProcessID", &bus_name)
}

struct Candidate {
    node: NodeRef,
    bounds: Option<Rect>,
    title_matches: bool,
    distance: i64,
}

/// The frame of `window` and its extents as the application reports them.
pub fn frame_of(c: &Connection, window: &WindowInfo) -> Result<(NodeRef, Option<Rect>), ToolError> {
    let apps = calls::children(c, &registry_root()).map_err(|e| e.into_tool_error())?;
    let own = std::process::id();
    let mut candidates = Vec::new();
    for app in apps {
        let Ok(pid) = pid_of(c, &app.owner) else { continue };
        if pid == own || window.pid.is_some_and(|p| p != pid) {
            continue;
        }
        // An application that does not answer is skipped, not waited on twice.
        let Ok(frames) = calls::children(c, &app) else { continue };
        for frame in frames {
            let Ok(e) = calls::describe(c, &frame, crate::seam::Want::default()) else { continue };
            let bounds = calls::extents(c, &frame).ok().flatten();
            // Compared at the application's own scale, so a scaled toolkit's frame still wins.
            // A window without known geometry is matched by title alone.
            let distance = bounds.zip(window.bounds).map_or(i64::MAX, |(b, w)| {
                let s = super::scale::factor(w, b);
                let at = super::scale::to_desktop(b, s);
                (i64::from(at.x) - i64::from(w.x)).abs()
                    + (i64::from(at.y) - i64::from(w.y)).abs()
                    + (i64::from(at.width) - i64::from(w.width)).abs()
                    + (i64::from(at.height) - i64::from(w.height)).abs()
            });
            candidates.push(Candidate {
                node: frame,
                bounds,
                title_matches: e.name == window.title,
                distance,
            });
        }
    }
    let titled = candidates.iter().any(|c| c.title_matches);
    candidates
        .into_iter()
        .filter(|c| c.title_matches || !titled)
        .filter(|c| c.title_matches || c.distance < i64::MAX)
        .min_by_key(|c| c.distance)
        .map(|c| (c.node, c.bounds))
        .ok_or_else(|| {
            ToolError::new(
                ErrorCode::Unavailable,
                format!(
                    "The window {:?} (id {}) exposes no accessibility tree: its application is not on the accessibility bus. {HOW_TO_ENABLE}",
                    window.title, window.id
                ),
            )
        })
}
