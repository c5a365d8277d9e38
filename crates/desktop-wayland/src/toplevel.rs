//! Windows through `wlr-foreign-toplevel-management` (`zwlr_foreign_toplevel_manager_v1`):
//! the window list a wlroots compositor without sway's IPC (labwc, river, Hyprland, wayfire…)
//! gives any client, and the one sway 1.7 gives too, which is where it is tested.
//!
//! The protocol is a task bar's: per toplevel a title, an app id, the outputs it is on and
//! its states (activated, maximized, minimized, fullscreen), and requests to activate it
//! (with a seat), to (un)maximize, (un)minimize, (un)set fullscreen and close it. It has no
//! positions and no sizes, and no way to move or resize: those answer `unavailable` naming
//! the protocol, never a number made up. It gives no process id either, so mcec's own
//! surfaces are told by their app id (`mcec_rules::own_windows`), as sway's lister tells them
//! by class.
//!
//! The backend's window seam without sway's IPC (`desktop/toplevels.rs`) answers through it,
//! with `WindowInfo.bounds` absent and this protocol's limit as the reason
//! (`docs/decisions.md`, sway section).
//!
//! The protocol gives a toplevel no id of its own; the id here is this connection's count of
//! the toplevels it has been told of, never reused while the lister lives. Like `wl/`, the
//! connection has no thread: every call first waits for a round trip, which delivers what the
//! compositor announced since.

use wayland_client::globals::{GlobalListContents, registry_queue_init};
use wayland_client::protocol::{wl_output, wl_registry, wl_seat};
use wayland_client::{
    Connection, Dispatch, EventQueue, Proxy as _, QueueHandle, delegate_noop, event_created_child,
};
use wayland_protocols_wlr::foreign_toplevel::v1::client::{
    zwlr_foreign_toplevel_handle_v1::{self, ZwlrForeignToplevelHandleV1},
    zwlr_foreign_toplevel_manager_v1::{self, ZwlrForeignToplevelManagerV1},
};

use mcec_desktop::seams::WindowOp;
use mcec_rules::{ErrorCode, ToolError};

/// What the protocol cannot say or do, in every refusal of geometry.
pub const NO_GEOMETRY: &str = "wlr-foreign-toplevel-management gives clients no window positions or sizes \
     and no way to move or resize a window";

/// One toplevel as the compositor last described it (after its `done`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Toplevel {
    /// This lister's id for it (see the module docs).
    pub id: u64,
    pub title: String,
    pub app_id: String,
    pub activated: bool,
    pub maximized: bool,
    pub minimized: bool,
    pub fullscreen: bool,
    /// The outputs it is on, by name where the compositor names its outputs (`wl_output`
    /// version 4); `None` for an output it does not name (wlroots 0.15, sway 1.7).
    pub outputs: Vec<Option<String>>,
}

impl Toplevel {
    /// Whether this is one of mcec's own surfaces (banner, prompts), which no tool lists.
    pub fn is_mcecs_own(&self) -> bool {
        mcec_rules::own_windows::is_own_window(&self.app_id, &self.app_id, None, None)
    }
}

#[derive(Debug)]
struct Entry {
    handle: ZwlrForeignToplevelHandleV1,
    /// What `done` last confirmed; `None` before the first `done`.
    current: Option<Toplevel>,
    pending: Toplevel,
    outputs: Vec<wl_output::WlOutput>,
}

/// What the event queue fills in.
#[derive(Debug, Default)]
pub struct State {
    outputs: crate::wl::NamedOutputs,
    entries: Vec<Entry>,
    next_id: u64,
    /// The compositor stopped sending toplevels (`finished`).
    finished: bool,
}

/// A connection of its own to the compositor, bound to its foreign-toplevel manager.
pub struct ForeignToplevels {
    queue: EventQueue<State>,
    state: State,
    seat: wl_seat::WlSeat,
    // Kept so the compositor goes on sending toplevels.
    _manager: ZwlrForeignToplevelManagerV1,
}

impl std::fmt::Debug for ForeignToplevels {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ForeignToplevels")
            .field("toplevels", &self.state.entries.len())
            .finish_non_exhaustive()
    }
}

impl ForeignToplevels {
    /// Connects to the Wayland socket at `socket`; `unavailable` when the compositor does not
    /// offer the protocol (GNOME, KDE) or a seat, `no-desktop` when there is no compositor.
    pub fn connect(socket: &std::path::Path) -> Result<ForeignToplevels, ToolError> {
        let no_desktop = |detail: String| ToolError::new(ErrorCode::NoDesktop, detail);
        let stream = std::os::unix::net::UnixStream::connect(socket).map_err(|e| {
            no_desktop(format!("cannot connect to the Wayland display {}: {e}", socket.display()))
        })?;
        let conn =
            Connection::from_socket(stream).map_err(|e| no_desktop(format!("the Wayland display: {e}")))?;
        let (globals, queue) = registry_queue_init::<State>(&conn)
            .map_err(|e| no_desktop(format!("the Wayland registry: {e}")))?;
        let qh = queue.handle();
        let missing = |what: &str, e: &dyn std::fmt::Display| {
            ToolError::new(ErrorCode::Unavailable, format!("the compositor offers no {what}: {e}"))
        };
        let seat: wl_seat::WlSeat = globals.bind(&qh, 1..=1, ()).map_err(|e| missing("seat", &e))?;
        let manager: ZwlrForeignToplevelManagerV1 = globals
            .bind(&qh, 1..=3, ())
            .map_err(|e| missing("window list (zwlr_foreign_toplevel_manager_v1)", &e))?;
        let mut state = State::default();
        for global in globals.contents().clone_list() {
            if global.interface == "wl_output" {
                let output = globals.registry().bind::<wl_output::WlOutput, _, _>(
                    global.name,
                    global.version.clamp(1, 4),
                    &qh,
                    (),
                );
                state.outputs.push((output, None));
            }
        }
        let mut lister = ForeignToplevels { queue, state, seat, _manager: manager };
        lister.sync()?;
        Ok(lister)
    }

    /// Handles everything the compositor has sent, up to a round trip.
    fn sync(&mut self) -> Result<(), ToolError> {
        self.queue
            .roundtrip(&mut self.state)
            .map(|_| ())
            .map_err(|e| ToolError::new(ErrorCode::NoDesktop, format!("Wayland connection: {e}")))?;
        if self.state.finished {
            return Err(ToolError::new(
                ErrorCode::Unavailable,
                "the compositor stopped sending its window list",
            ));
        }
        Ok(())
    }

    /// Every toplevel the compositor has described, in the order it announced them, mcec's
    /// own surfaces left out.
    pub fn toplevels(&mut self) -> Result<Vec<Toplevel>, ToolError> {
        Ok(self.all()?.into_iter().filter(|t| !t.is_mcecs_own()).collect())
    }

    /// mcec's own toplevels (banner, prompts): what a capture must not show.
    pub fn own(&mut self) -> Result<Vec<Toplevel>, ToolError> {
        Ok(self.all()?.into_iter().filter(Toplevel::is_mcecs_own).collect())
    }

    /// Every described toplevel, mcec's own included.
    fn all(&mut self) -> Result<Vec<Toplevel>, ToolError> {
        self.sync()?;
        Ok(self.state.entries.iter().filter_map(|e| e.current.clone()).collect())
    }

    /// One toplevel, fresh; `window-closed` when it is gone, `window-not-found` for one of
    /// mcec's own (as on X11 and sway).
    pub fn toplevel(&mut self, id: u64) -> Result<Toplevel, ToolError> {
        let top = self.all()?.into_iter().find(|t| t.id == id).ok_or_else(|| {
            ToolError::new(ErrorCode::WindowClosed, format!("window {id} no longer exists"))
        })?;
        if top.is_mcecs_own() {
            return Err(ToolError::new(
                ErrorCode::WindowNotFound,
                format!("Window {id} is one of mcec's own windows, which no tool can target."),
            ));
        }
        Ok(top)
    }

    /// Asks the compositor for `op` on toplevel `id` and waits until it has handled the
    /// request. Move and resize answer `unavailable`: the protocol has neither.
    pub fn window_op(&mut self, id: u64, op: WindowOp) -> Result<(), ToolError> {
        let top = self.toplevel(id)?;
        let handle = match self.state.entries.iter().find(|e| e.pending.id == id) {
            Some(e) => e.handle.clone(),
            None => {
                return Err(ToolError::new(ErrorCode::WindowClosed, format!("window {id} no longer exists")));
            }
        };
        let fullscreen_known = handle.version() >= 2;
        match op {
            WindowOp::Foreground => {
                if top.minimized {
                    handle.unset_minimized();
                }
                handle.activate(&self.seat);
            }
            WindowOp::Minimize => handle.set_minimized(),
            WindowOp::Maximize => handle.set_maximized(),
            WindowOp::Restore => {
                if top.minimized {
                    handle.unset_minimized();
                } else if top.fullscreen && fullscreen_known {
                    handle.unset_fullscreen();
                } else {
                    handle.unset_maximized();
                }
            }
            WindowOp::Move(_) | WindowOp::Resize { .. } => {
                return Err(ToolError::new(ErrorCode::Unavailable, NO_GEOMETRY));
            }
        }
        self.sync()
    }
}

/// The states in a `state` event: an array of native-endian `u32`s.
fn apply_states(top: &mut Toplevel, raw: &[u8]) {
    use zwlr_foreign_toplevel_handle_v1::State as S;
    top.activated = false;
    top.maximized = false;
    top.minimized = false;
    top.fullscreen = false;
    for chunk in raw.chunks_exact(4) {
        let value = u32::from_ne_bytes([chunk[0], chunk[1], chunk[2], chunk[3]]);
        match S::try_from(value) {
            Ok(S::Activated) => top.activated = true,
            Ok(S::Maximized) => top.maximized = true,
            Ok(S::Minimized) => top.minimized = true,
            Ok(S::Fullscreen) => top.fullscreen = true,
            _ => {}
        }
    }
}

impl Dispatch<ZwlrForeignToplevelManagerV1, ()> for State {
    fn event(
        state: &mut State,
        _: &ZwlrForeignToplevelManagerV1,
        event: zwlr_foreign_toplevel_manager_v1::Event,
        _: &(),
        _: &Connection,
        _: &QueueHandle<State>,
    ) {
        match event {
            zwlr_foreign_toplevel_manager_v1::Event::Toplevel { toplevel } => {
                state.next_id += 1;
                let pending = Toplevel { id: state.next_id, ..Toplevel::default() };
                state.entries.push(Entry { handle: toplevel, current: None, pending, outputs: Vec::new() });
            }
            zwlr_foreign_toplevel_manager_v1::Event::Finished => state.finished = true,
            _ => {}
        }
    }

    event_created_child!(State, ZwlrForeignToplevelManagerV1, [
        zwlr_foreign_toplevel_manager_v1::EVT_TOPLEVEL_OPCODE => (ZwlrForeignToplevelHandleV1, ()),
    ]);
}

impl Dispatch<ZwlrForeignToplevelHandleV1, ()> for State {
    fn event(
        state: &mut State,
        handle: &ZwlrForeignToplevelHandleV1,
        event: zwlr_foreign_toplevel_handle_v1::Event,
        _: &(),
        _: &Connection,
        _: &QueueHandle<State>,
    ) {
        use zwlr_foreign_toplevel_handle_v1::Event as E;
        let Some(index) = state.entries.iter().position(|e| &e.handle == handle) else { return };
        if let E::Closed = event {
            state.entries.remove(index).handle.destroy();
            return;
        }
        let names = &state.outputs;
        let entry = &mut state.entries[index];
        match event {
            E::Title { title } => entry.pending.title = title,
            E::AppId { app_id } => entry.pending.app_id = app_id,
            E::OutputEnter { output } => entry.outputs.push(output),
            E::OutputLeave { output } => entry.outputs.retain(|o| o != &output),
            E::State { state: raw } => apply_states(&mut entry.pending, &raw),
            E::Done => {
                entry.pending.outputs = entry
                    .outputs
                    .iter()
                    .map(|o| names.iter().find(|(n, _)| n == o).and_then(|(_, name)| name.clone()))
                    .collect();
                entry.current = Some(entry.pending.clone());
            }
            _ => {}
        }
    }
}

impl Dispatch<wl_output::WlOutput, ()> for State {
    fn event(
        state: &mut State,
        output: &wl_output::WlOutput,
        event: wl_output::Event,
        _: &(),
        _: &Connection,
        _: &QueueHandle<State>,
    ) {
        crate::wl::note_output_name(&mut state.outputs, output, event);
    }
}

impl Dispatch<wl_registry::WlRegistry, GlobalListContents> for State {
    fn event(
        _: &mut State,
        _: &wl_registry::WlRegistry,
        _: wl_registry::Event,
        _: &GlobalListContents,
        _: &Connection,
        _: &QueueHandle<State>,
    ) {
        // Outputs added later are not named; a toplevel on one lists it as unnamed.
    }
}

delegate_noop!(State: ignore wl_seat::WlSeat);

#[cfg(test)]
mod tests {
    use super::*;

    fn raw(states: &[u32]) -> Vec<u8> {
        states.iter().flat_map(|s| s.to_ne_bytes()).collect()
    }

    #[test]
    fn states_are_read_and_a_new_state_event_replaces_the_old() {
        let mut t = Toplevel::default();
        apply_states(&mut t, &raw(&[2, 0, 99]));
        assert!(t.activated && t.maximized && !t.minimized && !t.fullscreen);
        apply_states(&mut t, &raw(&[1, 3]));
        assert!(!t.activated && !t.maximized && t.minimized && t.fullscreen);
        apply_states(&mut t, &[]);
        assert_eq!(t, Toplevel::default());
    }

    #[test]
    fn mcecs_own_surfaces_are_told_by_their_app_id() {
        let own = Toplevel { app_id: "mcec-prompt".into(), ..Toplevel::default() };
        let other = Toplevel { app_id: "foot".into(), ..Toplevel::default() };
        assert!(own.is_mcecs_own() && !other.is_mcecs_own());
    }
}
