//! Top-level windows on X11: listing from EWMH, operations through EWMH client messages.
//!
//! Without a window manager (plain Xvfb) there is no `_NET_CLIENT_LIST` and nobody answers
//! client messages, so the list falls back to mapped children of the root that carry a
//! `WM_CLASS` or a name, and operations fall back to `ConfigureWindow`, `MapWindow`/
//! `UnmapWindow` and `SetInputFocus`. Every per-window request is sent before any reply is
//! read, so listing N windows costs about one round trip, not N.

use std::collections::{HashMap, HashSet};

use mcec_rules::ToolError;
use x11rb::connection::Connection;
use x11rb::cookie::Cookie;
use x11rb::protocol::xproto::{
    AtomEnum, ClientMessageEvent, ConfigureWindowAux, ConnectionExt as _, EventMask, GetGeometryReply,
    GetPropertyReply, GetWindowAttributesReply, InputFocus, MapState, StackMode, TranslateCoordinatesReply,
    Window,
};
use x11rb::rust_connection::RustConnection;

use super::{X11Desktop, conn_err, lock, reply_err, window_err};
use mcec_desktop::seams::{Screens, WindowManager, WindowOp};
use mcec_desktop::types::{Rect, WindowInfo};

/// What the backend changed itself when no window manager was there to do it.
#[derive(Debug, Default)]
pub(crate) struct NoWmState {
    /// Windows we unmapped for `minimize`.
    minimized: HashSet<Window>,
    /// Geometry before our `maximize`, for `restore`.
    saved: HashMap<Window, Rect>,
}

type Conn = std::sync::Arc<RustConnection>;
type PropCookie<'c> = Cookie<'c, Conn, GetPropertyReply>;

/// Replies still to be read for one window.
struct Pending<'c> {
    id: Window,
    class: PropCookie<'c>,
    net_name: PropCookie<'c>,
    name: PropCookie<'c>,
    pid: PropCookie<'c>,
    state: PropCookie<'c>,
    wm_state: PropCookie<'c>,
    extents: PropCookie<'c>,
    attrs: Cookie<'c, Conn, GetWindowAttributesReply>,
    geom: Cookie<'c, Conn, GetGeometryReply>,
    origin: Cookie<'c, Conn, TranslateCoordinatesReply>,
}

/// One window's facts before the list rules are applied.
struct Fetched {
    info: WindowInfo,
    mapped: bool,
    override_redirect: bool,
}

const ICONIC_STATE: u32 = 3;

impl X11Desktop {
    fn prop<'c>(
        &'c self,
        id: Window,
        prop: impl Into<u32>,
        ty: impl Into<u32>,
    ) -> Result<PropCookie<'c>, ToolError> {
        self.conn.get_property(false, id, prop.into(), ty.into(), 0, 4096).map_err(conn_err)
    }

    fn request(&self, id: Window) -> Result<Pending<'_>, ToolError> {
        let a = &self.atoms;
        Ok(Pending {
            id,
            class: self.prop(id, AtomEnum::WM_CLASS, AtomEnum::STRING)?,
            net_name: self.prop(id, a._NET_WM_NAME, a.UTF8_STRING)?,
            name: self.prop(id, AtomEnum::WM_NAME, AtomEnum::ANY)?,
            pid: self.prop(id, a._NET_WM_PID, AtomEnum::CARDINAL)?,
            state: self.prop(id, a._NET_WM_STATE, AtomEnum::ATOM)?,
            wm_state: self.prop(id, a.WM_STATE, a.WM_STATE)?,
            extents: self.prop(id, a._NET_FRAME_EXTENTS, AtomEnum::CARDINAL)?,
            attrs: self.conn.get_window_attributes(id).map_err(conn_err)?,
            geom: self.conn.get_geometry(id).map_err(conn_err)?,
            origin: self.conn.translate_coordinates(id, self.root, 0, 0).map_err(conn_err)?,
        })
    }

    /// Read one window's replies; `window-closed` when it vanished meanwhile.
    fn collect(&self, p: Pending<'_>, foreground: Option<Window>) -> Result<Fetched, ToolError> {
        let id = p.id;
        let class = p.class.reply().map_err(|e| window_err(id, e))?;
        let net_name = p.net_name.reply().map_err(|e| window_err(id, e))?;
        let name = p.name.reply().map_err(|e| window_err(id, e))?;
        let pid = p.pid.reply().map_err(|e| window_err(id, e))?;
        let state = p.state.reply().map_err(|e| window_err(id, e))?;
        let wm_state = p.wm_state.reply().map_err(|e| window_err(id, e))?;
        let extents = p.extents.reply().map_err(|e| window_err(id, e))?;
        let attrs = p.attrs.reply().map_err(|e| window_err(id, e))?;
        let geom = p.geom.reply().map_err(|e| window_err(id, e))?;
        let origin = p.origin.reply().map_err(|e| window_err(id, e))?;

        let mut class_parts = class.value.split(|b| *b == 0).map(latin1);
        let instance = class_parts.next().unwrap_or_default();
        let class_name = class_parts.next().unwrap_or_default();
        let title = if net_name.value.is_empty() {
            latin1(&name.value)
        } else {
            String::from_utf8_lossy(&net_name.value).into_owned()
        };
        let pid = pid.value32().and_then(|mut v| v.next()).filter(|p| *p > 0);
        let hidden = state.value32().is_some_and(|mut v| v.any(|a| a == self.atoms._NET_WM_STATE_HIDDEN));
        let iconic = wm_state.value32().and_then(|mut v| v.next()) == Some(ICONIC_STATE);
        let minimized_by_us = lock(&self.no_wm).minimized.contains(&id);
        let info = WindowInfo {
            id: u64::from(id),
            title,
            class_name,
            instance,
            pid,
            process: pid.and_then(process_name),
            bounds: Some(outer_bounds(
                Rect::new(
                    i32::from(origin.dst_x),
                    i32::from(origin.dst_y),
                    u32::from(geom.width),
                    u32::from(geom.height),
                ),
                frame_extents(&extents),
            )),
            bounds_unavailable: None,
            foreground: foreground == Some(id),
            minimized: hidden || iconic || minimized_by_us,
        };
        Ok(Fetched {
            info,
            mapped: attrs.map_state == MapState::VIEWABLE,
            override_redirect: attrs.override_redirect,
        })
    }

    /// A window manager is running when `_NET_SUPPORTING_WM_CHECK` names a live window
    /// that names itself.
    pub(crate) fn wm_present(&self) -> bool {
        let check = self.atoms._NET_SUPPORTING_WM_CHECK;
        let first = self.window_prop32(self.root, check, AtomEnum::WINDOW.into());
        match first.and_then(|v| v.first().copied()) {
            Some(w) if w != 0 => {
                self.window_prop32(w, check, AtomEnum::WINDOW.into()).and_then(|v| v.first().copied())
                    == Some(w)
            }
            _ => false,
        }
    }

    fn window_prop32(&self, id: Window, prop: u32, ty: u32) -> Option<Vec<u32>> {
        let reply = self.conn.get_property(false, id, prop, ty, 0, 1 << 16).ok()?.reply().ok()?;
        Some(reply.value32()?.collect())
    }

    /// The top-level window holding the keyboard focus, if any.
    pub(crate) fn foreground_window(&self, wm: bool) -> Result<Option<Window>, ToolError> {
        if wm {
            let active =
                self.window_prop32(self.root, self.atoms._NET_ACTIVE_WINDOW, AtomEnum::WINDOW.into());
            return Ok(active.and_then(|v| v.first().copied()).filter(|w| *w != 0));
        }
        let focus = self.conn.get_input_focus().map_err(conn_err)?.reply().map_err(reply_err)?.focus;
        // 0 is None and 1 is PointerRoot: no particular window has the focus.
        if focus <= 1 || focus == self.root {
            return Ok(None);
        }
        let mut w = focus;
        loop {
            let Ok(tree) = self.conn.query_tree(w).map_err(conn_err)?.reply() else {
                return Ok(None);
            };
            if tree.parent == self.root || tree.parent == 0 {
                return Ok(Some(w));
            }
            w = tree.parent;
        }
    }

    fn fetch_all(&self, ids: &[Window], wm: bool) -> Result<Vec<Fetched>, ToolError> {
        let fg = self.foreground_window(wm)?;
        let pending = ids.iter().map(|id| self.request(*id)).collect::<Result<Vec<_>, _>>()?;
        let mut out = Vec::with_capacity(pending.len());
        for p in pending {
            match self.collect(p, fg) {
                Ok(f) => out.push(f),
                // Closed between listing and asking: it is simply not in the list.
                Err(e) if e.code == mcec_rules::ErrorCode::WindowClosed => {}
                Err(e) => return Err(e),
            }
        }
        Ok(out)
    }

    fn send_client_message(&self, window: Window, ty: u32, data: [u32; 5]) -> Result<(), ToolError> {
        let event = ClientMessageEvent::new(32, window, ty, data);
        self.conn
            .send_event(
                false,
                self.root,
                EventMask::SUBSTRUCTURE_REDIRECT | EventMask::SUBSTRUCTURE_NOTIFY,
                event,
            )
            .map_err(conn_err)?;
        Ok(())
    }

    fn configure(&self, id: Window, aux: &ConfigureWindowAux) -> Result<(), ToolError> {
        self.conn.configure_window(id, aux).map_err(conn_err)?.check().map_err(|e| window_err(id, e))
    }

    fn op_without_wm(&self, id: Window, op: WindowOp) -> Result<(), ToolError> {
        match op {
            WindowOp::Minimize => {
                self.conn.unmap_window(id).map_err(conn_err)?.check().map_err(|e| window_err(id, e))?;
                lock(&self.no_wm).minimized.insert(id);
            }
            WindowOp::Maximize => {
                let bounds = self.window_info(u64::from(id))?.geometry()?;
                let displays = self.displays()?;
                let center = bounds.center();
                let target = displays
                    .iter()
                    .find(|d| d.bounds.contains(center))
                    .or(displays.first())
                    .map(|d| d.bounds)
                    .unwrap_or(bounds);
                lock(&self.no_wm).saved.entry(id).or_insert(bounds);
                self.configure(id, &rect_aux(target))?;
            }
            WindowOp::Restore => {
                let was_min = lock(&self.no_wm).minimized.remove(&id);
                if was_min {
                    self.conn.map_window(id).map_err(conn_err)?.check().map_err(|e| window_err(id, e))?;
                }
                let saved = lock(&self.no_wm).saved.remove(&id);
                if let Some(r) = saved {
                    self.configure(id, &rect_aux(r))?;
                }
            }
            WindowOp::Foreground => {
                if lock(&self.no_wm).minimized.remove(&id) {
                    self.conn.map_window(id).map_err(conn_err)?;
                }
                self.configure(id, &ConfigureWindowAux::new().stack_mode(StackMode::ABOVE))?;
                self.conn
                    .set_input_focus(InputFocus::PARENT, id, x11rb::CURRENT_TIME)
                    .map_err(conn_err)?
                    .check()
                    .map_err(|e| window_err(id, e))?;
            }
            WindowOp::Move(_) | WindowOp::Resize { .. } => unreachable_op(),
        }
        Ok(())
    }

    fn op_with_wm(&self, id: Window, op: WindowOp) -> Result<(), ToolError> {
        let a = &self.atoms;
        // Source indication 2: a pager or other direct user tool, which WMs obey.
        match op {
            WindowOp::Minimize => {
                self.send_client_message(id, a.WM_CHANGE_STATE, [ICONIC_STATE, 0, 0, 0, 0])?
            }
            WindowOp::Maximize => self.send_client_message(
                id,
                a._NET_WM_STATE,
                [1, a._NET_WM_STATE_MAXIMIZED_VERT, a._NET_WM_STATE_MAXIMIZED_HORZ, 2, 0],
            )?,
            WindowOp::Restore => {
                self.send_client_message(
                    id,
                    a._NET_WM_STATE,
                    [0, a._NET_WM_STATE_MAXIMIZED_VERT, a._NET_WM_STATE_MAXIMIZED_HORZ, 2, 0],
                )?;
                // EWMH's way out of iconic state is activation. A bare MapWindow would race
                // with a window manager still busy iconifying (and be a no-op meanwhile).
                if self.window_info(u64::from(id))?.minimized {
                    self.send_client_message(id, a._NET_ACTIVE_WINDOW, [2, 0, 0, 0, 0])?;
                }
            }
            WindowOp::Foreground => self.send_client_message(id, a._NET_ACTIVE_WINDOW, [2, 0, 0, 0, 0])?,
            WindowOp::Move(_) | WindowOp::Resize { .. } => unreachable_op(),
        }
        Ok(())
    }
}

/// Move and resize are handled before the WM split; reaching here is a bug, reported as
/// nothing done rather than a panic.
fn unreachable_op() {
    tracing::error!("move/resize reached the EWMH/no-WM branch");
}

/// `_NET_FRAME_EXTENTS` as (left, right, top, bottom); zeros without a window manager.
fn frame_extents(reply: &GetPropertyReply) -> [u32; 4] {
    let mut out = [0u32; 4];
    if let Some(values) = reply.value32() {
        for (slot, v) in out.iter_mut().zip(values) {
            *slot = v.min(1024);
        }
    }
    out
}

/// The client rectangle grown by the frame the window manager drew around it: what the
/// user sees, what a window capture shows, and what window-relative points refer to.
fn outer_bounds(client: Rect, [left, right, top, bottom]: [u32; 4]) -> Rect {
    Rect::new(
        client.x - left as i32,
        client.y - top as i32,
        client.width + left + right,
        client.height + top + bottom,
    )
}

fn rect_aux(r: Rect) -> ConfigureWindowAux {
    ConfigureWindowAux::new().x(r.x).y(r.y).width(r.width).height(r.height)
}

fn latin1(bytes: &[u8]) -> String {
    match std::str::from_utf8(bytes) {
        Ok(s) => s.to_string(),
        Err(_) => bytes.iter().map(|b| char::from(*b)).collect(),
    }
}

/// `/proc/<pid>/comm`, the kernel's short name of the process.
fn process_name(pid: u32) -> Option<String> {
    let comm = std::fs::read_to_string(format!("/proc/{pid}/comm")).ok()?;
    let comm = comm.trim_end_matches('\n');
    (!comm.is_empty()).then(|| comm.to_string())
}

fn to_window(id: u64) -> Result<Window, ToolError> {
    Window::try_from(id).map_err(|_| {
        ToolError::new(mcec_rules::ErrorCode::WindowNotFound, format!("There is no window with handle {id}."))
    })
}

impl WindowManager for X11Desktop {
    fn parent_process(&self, pid: u32) -> Option<u32> {
        super::process::proc_parent(pid)
    }

    fn list_windows(&self) -> Result<Vec<WindowInfo>, ToolError> {
        let wm = self.wm_present();
        let clients = if wm {
            self.window_prop32(self.root, self.atoms._NET_CLIENT_LIST, AtomEnum::WINDOW.into())
                .unwrap_or_default()
        } else {
            Vec::new()
        };
        if wm && !clients.is_empty() {
            return Ok(self
                .fetch_all(&clients, wm)?
                .into_iter()
                .map(|f| f.info)
                .filter(|w| !w.is_mcecs_own())
                .collect());
        }
        let tree = self.conn.query_tree(self.root).map_err(conn_err)?.reply().map_err(reply_err)?;
        let ours = lock(&self.no_wm).minimized.clone();
        Ok(self
            .fetch_all(&tree.children, wm)?
            .into_iter()
            .filter(|f| {
                let id = f.info.id as Window;
                let named =
                    !f.info.class_name.is_empty() || !f.info.instance.is_empty() || !f.info.title.is_empty();
                ours.contains(&id) || (f.mapped && !f.override_redirect && named)
            })
            .map(|f| f.info)
            .filter(|w| !w.is_mcecs_own())
            .collect())
    }

    fn window_info(&self, id: u64) -> Result<WindowInfo, ToolError> {
        let win = to_window(id)?;
        let wm = self.wm_present();
        let fg = self.foreground_window(wm)?;
        let pending = self.request(win)?;
        let info = self.collect(pending, fg)?.info;
        if info.is_mcecs_own() {
            return Err(ToolError::new(
                mcec_rules::ErrorCode::WindowNotFound,
                format!("Window {id} is one of mcec's own windows, which no tool can target."),
            ));
        }
        Ok(info)
    }

    fn window_op(&self, id: u64, op: WindowOp) -> Result<(), ToolError> {
        let win = to_window(id)?;
        match op {
            WindowOp::Move(p) => self.configure(win, &ConfigureWindowAux::new().x(p.x).y(p.y))?,
            WindowOp::Resize { width, height } => {
                let extents = self
                    .prop(win, self.atoms._NET_FRAME_EXTENTS, AtomEnum::CARDINAL)?
                    .reply()
                    .map_err(|e| window_err(win, e))?;
                let [l, r, t, b] = frame_extents(&extents);
                let aux = ConfigureWindowAux::new()
                    .width(width.saturating_sub(l + r).max(1))
                    .height(height.saturating_sub(t + b).max(1));
                self.configure(win, &aux)?
            }
            other if self.wm_present() => self.op_with_wm(win, other)?,
            other => self.op_without_wm(win, other)?,
        }
        self.conn.flush().map_err(conn_err)?;
        super::round_trip(&self.conn)
    }
}
