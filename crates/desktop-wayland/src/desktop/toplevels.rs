//! The window seam without sway's IPC: `wlr-foreign-toplevel-management` through
//! [`ForeignToplevels`]. Its windows have no position or size, so each `WindowInfo` carries
//! `bounds: None` with the protocol's limit as the reason (the tool layer answers window
//! capture and window-relative points `unavailable` with it), and move and resize answer
//! `unavailable` (the lister's own refusal). A compositor that does not offer the protocol
//! answers every window call `unavailable` saying so.
//!
//! mcec's own windows are told by their app id. Where they are the protocol does not say.
//! When the platform layer gave a locator (their X11 geometry on the compositor's XWayland,
//! which wlroots maps one to one onto the layout) and it finds at least as many of them as
//! the list shows, a capture blanks just those rectangles; otherwise it blanks every output
//! one of them is on, and every output when the compositor does not name its outputs: never
//! a pixel of theirs shown.

use std::sync::{Mutex, PoisonError};

use mcec_desktop::seams::WindowOp;
use mcec_desktop::types::{Rect, WindowInfo};
use mcec_rules::ToolError;

use super::{OwnWindowLocator, WlrDesktop};
use crate::toplevel::{ForeignToplevels, NO_GEOMETRY, Toplevel};

/// The lister, or why there is none.
pub(super) type Lister = Result<Mutex<ForeignToplevels>, ToolError>;

fn with<T>(
    lister: &Lister,
    f: impl FnOnce(&mut ForeignToplevels) -> Result<T, ToolError>,
) -> Result<T, ToolError> {
    let lister = lister.as_ref().map_err(Clone::clone)?;
    f(&mut lister.lock().unwrap_or_else(PoisonError::into_inner))
}

/// The seam's view of a toplevel: no geometry, no process.
fn info_of(t: Toplevel) -> WindowInfo {
    WindowInfo {
        id: t.id,
        title: t.title,
        class_name: t.app_id.clone(),
        instance: t.app_id,
        pid: None,
        process: None,
        bounds: None,
        bounds_unavailable: Some(NO_GEOMETRY.to_string()),
        foreground: t.activated,
        minimized: t.minimized,
    }
}

/// Every toplevel but mcec's own.
pub(super) fn list(lister: &Lister) -> Result<Vec<WindowInfo>, ToolError> {
    with(lister, |l| Ok(l.toplevels()?.into_iter().map(info_of).collect()))
}

/// One toplevel, fresh.
pub(super) fn info(lister: &Lister, id: u64) -> Result<WindowInfo, ToolError> {
    with(lister, |l| l.toplevel(id).map(info_of))
}

/// `op` on a toplevel.
pub(super) fn op(lister: &Lister, id: u64, op: WindowOp) -> Result<(), ToolError> {
    with(lister, |l| l.window_op(id, op))
}

/// The layout rectangles to blank for `own` windows (mcec's, not minimized) among `outputs`
/// (name and rectangle): the outputs each is on, or all of them for one on an output the
/// compositor does not name.
fn own_areas(own: &[Toplevel], outputs: &[(String, Rect)]) -> Vec<Rect> {
    let mut areas: Vec<Rect> = Vec::new();
    for on in own.iter().flat_map(|t| &t.outputs) {
        let found = on.as_deref().and_then(|name| outputs.iter().find(|(n, _)| n == name));
        let rects: Vec<Rect> = match found {
            Some((_, r)) => vec![*r],
            None => outputs.iter().map(|(_, r)| *r).collect(),
        };
        for r in rects {
            if !areas.contains(&r) {
                areas.push(r);
            }
        }
    }
    areas
}

impl WlrDesktop {
    /// Where mcec's own windows may be shown now (see the module docs). Without the window
    /// list there is no telling: the whole layout.
    pub(super) fn own_toplevel_areas(
        &self,
        lister: &Lister,
        locator: Option<&OwnWindowLocator>,
    ) -> Result<Vec<Rect>, ToolError> {
        let outputs: Vec<(String, Rect)> = self.outputs()?.into_iter().map(|o| (o.name, o.rect)).collect();
        let own = match lister {
            Ok(_) => with(lister, ForeignToplevels::own)?,
            Err(_) => return Ok(outputs.into_iter().map(|(_, r)| r).collect()),
        };
        let shown: Vec<Toplevel> = own.into_iter().filter(|t| !t.minimized).collect();
        let located = match locator.map(|locate| locate()) {
            Some(Ok(rects)) => rects,
            Some(Err(e)) => {
                tracing::warn!("cannot locate mcec's own windows ({e}); blanking their outputs whole");
                Vec::new()
            }
            None => Vec::new(),
        };
        Ok(blanked(located, &shown, &outputs))
    }
}

/// What a capture blanks: every `located` own window (even one the window list does not
/// recognise), and, when the list shows more own windows than were located, every output
/// those are on.
fn blanked(located: Vec<Rect>, shown: &[Toplevel], outputs: &[(String, Rect)]) -> Vec<Rect> {
    if shown.len() <= located.len() {
        return located;
    }
    let mut areas = located;
    areas.extend(own_areas(shown, outputs));
    areas
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_own_window_blanks_its_named_output_or_every_output() {
        let outputs =
            [("A".to_string(), Rect::new(0, 0, 10, 10)), ("B".to_string(), Rect::new(10, 0, 10, 10))];
        let named = Toplevel { outputs: vec![Some("B".into())], ..Toplevel::default() };
        assert_eq!(own_areas(std::slice::from_ref(&named), &outputs), [Rect::new(10, 0, 10, 10)]);
        let unnamed = Toplevel { outputs: vec![None], ..Toplevel::default() };
        assert_eq!(
            own_areas(&[named, unnamed], &outputs),
            [Rect::new(10, 0, 10, 10), Rect::new(0, 0, 10, 10)]
        );
        assert!(own_areas(&[Toplevel::default()], &outputs).is_empty(), "on no output: nothing shown");
    }

    #[test]
    fn located_windows_are_blanked_alone_only_when_they_account_for_every_shown_one() {
        let outputs = [("A".to_string(), Rect::new(0, 0, 10, 10))];
        let shown = [Toplevel { outputs: vec![Some("A".into())], ..Toplevel::default() }];
        let strip = Rect::new(2, 0, 4, 1);
        assert_eq!(blanked(vec![strip], &shown, &outputs), [strip]);
        assert_eq!(blanked(vec![], &shown, &outputs), [Rect::new(0, 0, 10, 10)], "not located: the output");
        assert_eq!(blanked(vec![strip], &[], &outputs), [strip], "located though not listed as ours");
    }

    #[test]
    fn a_toplevel_has_no_bounds_and_says_why() {
        let w = info_of(Toplevel { id: 3, app_id: "foot".into(), ..Toplevel::default() });
        assert_eq!((w.bounds, w.class_name.as_str()), (None, "foot"));
        let e = w.geometry().expect_err("no geometry");
        assert!(e.detail.contains("wlr-foreign-toplevel-management"), "{}", e.detail);
    }
}
