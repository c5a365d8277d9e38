//! Which Wayland backend this process runs, decided once at start: sway (its IPC named in
//! `SWAYSOCK`), another wlroots-style compositor that offers a client the window list
//! (`zwlr_foreign_toplevel_manager_v1`) or the screen (`zwlr_screencopy_manager_v1`), or none
//! (the X11 path, on the session's XWayland when there is one).
//!
//! The second needs a look at the compositor's globals, so the answer is cached: every caller
//! in the binary (the backend, the stop record's scope, the stop gate) sees the same choice.
//! The compositor is named by the process at the other end of the socket (`SO_PEERCRED`, then
//! `/proc/<pid>/comm`): the protocols carry no name, and a refusal must say where it applies.

use std::path::PathBuf;
use std::sync::OnceLock;

use wayland_client::Connection;
use wayland_client::globals::{GlobalListContents, registry_queue_init};
use wayland_client::protocol::wl_registry;

/// A Wayland compositor without sway's IPC, and what mcec can use of it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Compositor {
    /// The compositor's process name (`labwc`, `sway`…), or `the Wayland compositor` when the
    /// peer of the socket cannot be read.
    pub name: String,
    /// The socket mcec connects to.
    pub socket: PathBuf,
    /// It offers `zwlr_foreign_toplevel_manager_v1` (the window list).
    pub toplevels: bool,
    /// It offers `zwlr_screencopy_manager_v1` (pixels).
    pub screencopy: bool,
}

impl Compositor {
    /// Why the stop cannot be armed there, naming the compositor: what the stop gate and the
    /// `emergency-stop-unavailable` refusals say.
    pub fn no_stop_reason(&self) -> String {
        format!(
            "the Wayland compositor `{}` has no sway IPC (SWAYSOCK is not set), and only sway's per-device key \
             bindings let mcec tell the operator's keyboard from injected keys: no physical-only stop can be armed here",
            self.name
        )
    }
}

/// The backend chosen for this process.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Choice {
    /// `WAYLAND_DISPLAY` and `SWAYSOCK` are both set: the sway backend, with its stop.
    Sway,
    /// A Wayland compositor without sway's IPC that offers the window list or the screen.
    Wlroots(Compositor),
    /// Neither: the X11 path.
    X11,
}

/// The choice for this process, made at the first call.
pub fn chosen() -> &'static Choice {
    static CHOICE: OnceLock<Choice> = OnceLock::new();
    CHOICE.get_or_init(|| {
        if crate::in_sway_session() {
            return Choice::Sway;
        }
        match wayland_socket() {
            Ok(socket) => probe(socket).map_or(Choice::X11, Choice::Wlroots),
            Err(_) => Choice::X11,
        }
    })
}

/// The socket of this process's `$WAYLAND_DISPLAY` ([`socket_of`]).
pub fn wayland_socket() -> Result<PathBuf, String> {
    let var = |name: &str| std::env::var(name).ok();
    socket_of(var("WAYLAND_DISPLAY").as_deref(), var("XDG_RUNTIME_DIR").as_deref())
}

/// The socket a `WAYLAND_DISPLAY` names: itself when absolute, else under the runtime
/// directory (where libwayland looks); why there is none otherwise (a variable unset, empty
/// or not UTF-8, or a runtime directory that is not absolute).
pub fn socket_of(wayland_display: Option<&str>, runtime_dir: Option<&str>) -> Result<PathBuf, String> {
    let display =
        wayland_display.map(str::trim).filter(|d| !d.is_empty()).ok_or("WAYLAND_DISPLAY is not set")?;
    if display.starts_with('/') {
        return Ok(PathBuf::from(display));
    }
    let dir =
        runtime_dir.filter(|d| d.starts_with('/')).ok_or("XDG_RUNTIME_DIR is not set to an absolute path")?;
    Ok(std::path::Path::new(dir).join(display))
}

/// The compositor at `socket` when it offers either protocol; `None` when it offers neither
/// (GNOME, KDE) or cannot be reached.
fn probe(socket: PathBuf) -> Option<Compositor> {
    let stream = std::os::unix::net::UnixStream::connect(&socket).ok()?;
    let name = peer_name(&stream).unwrap_or_else(|| "the Wayland compositor".into());
    let conn = Connection::from_socket(stream).ok()?;
    let (globals, _queue) = registry_queue_init::<Probe>(&conn).ok()?;
    let offered =
        |interface: &str| globals.contents().with_list(|l| l.iter().any(|g| g.interface == interface));
    let toplevels = offered("zwlr_foreign_toplevel_manager_v1");
    let screencopy = offered("zwlr_screencopy_manager_v1");
    (toplevels || screencopy).then_some(Compositor { name, socket, toplevels, screencopy })
}

/// The short name of the process serving the socket.
fn peer_name(stream: &std::os::unix::net::UnixStream) -> Option<String> {
    let cred = rustix::net::sockopt::socket_peercred(stream).ok()?;
    let comm = std::fs::read_to_string(format!("/proc/{}/comm", cred.pid.as_raw_nonzero())).ok()?;
    let name: String = comm.trim().chars().filter(|c| !c.is_control()).take(32).collect();
    (!name.is_empty()).then_some(name)
}

struct Probe;

impl wayland_client::Dispatch<wl_registry::WlRegistry, GlobalListContents> for Probe {
    fn event(
        _: &mut Probe,
        _: &wl_registry::WlRegistry,
        _: wl_registry::Event,
        _: &GlobalListContents,
        _: &Connection,
        _: &wayland_client::QueueHandle<Probe>,
    ) {
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_reason_names_the_compositor() {
        let c = Compositor { name: "labwc".into(), socket: "/x".into(), toplevels: true, screencopy: false };
        assert!(c.no_stop_reason().contains("`labwc`"), "{}", c.no_stop_reason());
    }
}
