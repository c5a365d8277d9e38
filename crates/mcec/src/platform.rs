//! Which platform this build drives: the one place the binary names a platform backend crate.
//!
//! Everything above it (the tool layer, the gates, the stop worker) sees only
//! [`DesktopTools`] and a [`MonitorHandle`]. On Unix that is `mcec-desktop-x11` (`$DISPLAY`,
//! found by `desktop_find` when the client did not pass it, with [`probe_display`] asking
//! each X socket), except inside a sway session (`WAYLAND_DISPLAY` and `SWAYSOCK` both set),
//! where it is `mcec-desktop-wayland`: sway's IPC, the virtual keyboard and pointer, and the
//! stop as per-device sway bindings. A Wayland compositor without sway's IPC that offers
//! `wlr-foreign-toplevel-management` or `wlr-screencopy` (labwc, river, Hyprland, wayfire) gets
//! the same crate without IPC and without a stop: actuation refused, naming the compositor,
//! unless the operator's unsafe key allows it. Other Wayland compositors keep the X11 path,
//! whose XWayland check refuses actuation there. The choice is made once
//! (`mcec_desktop_wayland::choice::chosen`). On Windows it is `mcec-desktop-windows` (GDI,
//! `EnumWindows`, `SendInput`, and the low-level hooks as the provenance monitor). A backend
//! that cannot connect answers `no-desktop`; a monitor that cannot start leaves actuation at
//! `emergency-stop-unavailable`.

mod a11y;

pub use a11y::{a11y_tools, copy_for_operator};
use mcec_desktop::monitor::{MonitorError, MonitorHandle, MonitorSink};
use mcec_desktop::{DesktopConfig, DesktopTools};
use mcec_rules::ToolError;

use crate::tool_display::ToolDisplay;

/// Connects to the desktop the tools act on (`tools`: the operator's, or a session's own X
/// server); `no-desktop` (naming what was tried) when there is none.
#[cfg(unix)]
pub fn connect_desktop(config: DesktopConfig, tools: &ToolDisplay) -> Result<DesktopTools, ToolError> {
    use mcec_desktop_wayland::choice::{Choice, chosen};
    use mcec_desktop_x11::{ProgramSetup, X11Desktop};
    let no_desktop = |detail: &str| ToolError::new(mcec_rules::ErrorCode::NoDesktop, detail);
    if matches!(tools, ToolDisplay::Operator) {
        let backend = match chosen() {
            Choice::Sway => Some(mcec_desktop_wayland::WlrDesktop::connect()?),
            Choice::Wlroots(c) => {
                let desktop = mcec_desktop_wayland::WlrDesktop::connect_without_ipc(&c.socket, &c.name)?;
                Some(match xwayland_display() {
                    Some(display) => desktop.locate_own_windows_with(Box::new(move || {
                        mcec_desktop_x11::own_window_rects(&display)
                    })),
                    None => desktop,
                })
            }
            Choice::X11 => None,
        };
        if let Some(backend) = backend {
            return Ok(DesktopTools::new(std::sync::Arc::new(backend), config));
        }
    }
    let operator = crate::desktop_find::desktop();
    let backend = match (tools, &operator) {
        (ToolDisplay::Own(desk), _) => {
            X11Desktop::connect(Some(&desk.display))?.with_programs(ProgramSetup {
                set: crate::own_display::program_env(desk),
                remove: crate::own_display::REMOVED_VARS.iter().map(ToString::to_string).collect(),
                process_group: Some(desk.process_group),
            })
        }
        (ToolDisplay::Failed(detail), _) => return Err(no_desktop(detail)),
        (ToolDisplay::Operator, crate::desktop_find::Desktop::Found { .. }) => X11Desktop::connect(None)?,
        (ToolDisplay::Operator, crate::desktop_find::Desktop::Missing(detail)) => {
            return Err(no_desktop(detail));
        }
    };
    crate::panic_release::set_release(backend.last_resort_release());
    let mut desktop = DesktopTools::new(std::sync::Arc::new(backend), config);
    if let (ToolDisplay::Own(desk), crate::desktop_find::Desktop::Found { display: operator_display, .. }) =
        (tools, &operator)
        && let Some(title) = &desk.window_title
    {
        match mcec_desktop_x11::X11SessionWindow::watch(operator_display, title) {
            Ok(window) => {
                tracing::info!(
                    "the agent's input waits while the operator's hand is in \"{title}\" on {operator_display}"
                );
                desktop.set_session_window(std::sync::Arc::new(window));
            }
            Err(e) => {
                tracing::warn!("{e}; the agent's input will not wait for the operator's hand in its window");
                mcec_mcp::audit::audit("operator-hand-unwatched", &e);
            }
        }
    }
    Ok(desktop)
}

/// The X display of this process when its own server says it is XWayland (mcec's windows
/// are then in the Wayland layout at their X11 place), for a Wayland backend without
/// window geometry.
#[cfg(unix)]
fn xwayland_display() -> Option<String> {
    let crate::desktop_find::Desktop::Found { display, .. } = crate::desktop_find::desktop() else {
        return None;
    };
    let judged = mcec_desktop_x11::X11Monitor::new(Some(&display)).and_then(|m| m.wayland_session());
    matches!(judged, Ok(Some(_))).then_some(display)
}

/// Lets this user into a session's own X server, display `number`, with its `cookie`.
#[cfg(unix)]
pub fn let_user_in(socket_dir: &std::path::Path, number: u32, cookie: &[u8]) -> Result<(), String> {
    let uid = rustix::process::getuid().as_raw();
    mcec_desktop_x11::own_server::let_user_in(socket_dir, number, cookie, uid)
}

/// The display this process uses and how it was found (`session-status`), `None` without one.
#[cfg(unix)]
pub fn desktop_found() -> Option<(String, mcec_rules::desktop_choice::Source)> {
    match crate::desktop_find::desktop() {
        crate::desktop_find::Desktop::Found { display, source } => Some((display, source)),
        crate::desktop_find::Desktop::Missing(_) => None,
    }
}

/// Why this process has no display to act on (the display search's words), `None` with one
/// (on a Wayland backend, the Wayland display is the one).
#[cfg(unix)]
pub fn no_desktop() -> Option<String> {
    if wayland_backend() {
        return None;
    }
    match crate::desktop_find::desktop() {
        crate::desktop_find::Desktop::Found { .. } => None,
        crate::desktop_find::Desktop::Missing(detail) => Some(detail),
    }
}

/// How the X server at `display` answers a connection as this user, for the display search.
#[cfg(unix)]
pub fn probe_display(display: &str) -> mcec_rules::desktop_choice::SocketAnswer {
    mcec_desktop_x11::probe::answer(display)
}

/// Whether this process runs a Wayland backend (sway's, or a wlroots compositor's without
/// sway's IPC): its stop record is then the Wayland display's, and no X display is looked for.
#[cfg(unix)]
pub fn wayland_backend() -> bool {
    !matches!(mcec_desktop_wayland::choice::chosen(), mcec_desktop_wayland::choice::Choice::X11)
}

/// Says in the log which display this process uses and how it was found, or why none.
#[cfg(unix)]
pub fn log_desktop() {
    use mcec_desktop_wayland::choice::{Choice, chosen};
    let wayland = std::env::var("WAYLAND_DISPLAY").unwrap_or_default();
    match chosen() {
        Choice::Sway => {
            tracing::info!("desktop: sway, Wayland display `{wayland}` (the sway backend; SWAYSOCK is set)");
        }
        Choice::Wlroots(c) => tracing::info!(
            "desktop: `{}`, Wayland display `{wayland}` without sway's IPC (window list: {}, screencopy: {})",
            c.name,
            if c.toplevels { "wlr-foreign-toplevel-management" } else { "none" },
            if c.screencopy { "yes" } else { "no" },
        ),
        Choice::X11 => {}
    }
    match crate::desktop_find::desktop() {
        crate::desktop_find::Desktop::Found { display: name, source } => {
            tracing::info!("desktop: X display `{name}` (source: {source})");
        }
        crate::desktop_find::Desktop::Missing(detail) => tracing::warn!("desktop: {detail}"),
    }
}

#[cfg(windows)]
pub fn log_desktop() {}

/// Never a Wayland backend on Windows.
#[cfg(windows)]
pub fn wayland_backend() -> bool {
    false
}

/// Windows has one interactive desktop: never without one.
#[cfg(windows)]
pub fn no_desktop() -> Option<String> {
    None
}

/// Windows has one interactive desktop and no display to find.
#[cfg(windows)]
pub fn desktop_found() -> Option<(String, mcec_rules::desktop_choice::Source)> {
    None
}

/// Starts this platform's provenance monitor feeding `sink`; `Ok` means the stop is armed.
#[cfg(unix)]
pub fn start_provenance_monitor(sink: MonitorSink) -> Result<MonitorHandle, MonitorError> {
    use mcec_desktop::monitor::ProvenanceMonitor as _;
    use mcec_desktop_wayland::choice::{Choice, chosen};
    match chosen() {
        Choice::Sway => {
            return mcec_desktop_wayland::SwayMonitor::from_env().and_then(|monitor| monitor.start(sink));
        }
        // Not reached (`wayland_session` refuses first); fail closed if it ever is.
        Choice::Wlroots(c) => return Err(MonitorError::Unsupported(c.no_stop_reason())),
        Choice::X11 => {}
    }
    mcec_desktop_x11::X11Monitor::new(None).and_then(|monitor| monitor.start(sink))
}

/// Why the stop cannot be armed on this Wayland session: on a wlroots compositor without
/// sway's IPC (named), or on a Wayland session's X server (where the X11 stop cannot see the
/// operator's keyboard); `None` on a plain X server and in a sway session, where the sway
/// backend's own stop is armed instead.
#[cfg(unix)]
pub fn wayland_session() -> Result<Option<String>, MonitorError> {
    use mcec_desktop_wayland::choice::{Choice, chosen};
    match chosen() {
        Choice::Sway => return Ok(None),
        Choice::Wlroots(c) => return Ok(Some(c.no_stop_reason())),
        Choice::X11 => {}
    }
    let monitor = mcec_desktop_x11::X11Monitor::new(None)?;
    Ok(monitor.wayland_session()?.map(|session| session.to_string()))
}

/// Never a Wayland session on Windows.
#[cfg(windows)]
pub fn wayland_session() -> Result<Option<String>, MonitorError> {
    Ok(None)
}

/// Connects to this platform's desktop (the interactive Win32 desktop of this session; a
/// display of a session's own is X11's, and `ToolDisplay` is never `Own` here).
#[cfg(windows)]
pub fn connect_desktop(config: DesktopConfig, _tools: &ToolDisplay) -> Result<DesktopTools, ToolError> {
    let backend = mcec_desktop_windows::WindowsDesktop::connect()?;
    crate::panic_release::set_release(backend.last_resort_release());
    Ok(DesktopTools::new(std::sync::Arc::new(backend), config))
}

/// Starts this platform's provenance monitor (the low-level keyboard and mouse hooks' thread)
/// feeding `sink`; `Ok` means the stop is armed.
#[cfg(windows)]
pub fn start_provenance_monitor(sink: MonitorSink) -> Result<MonitorHandle, MonitorError> {
    use mcec_desktop::monitor::ProvenanceMonitor as _;
    mcec_desktop_windows::WindowsMonitor::new().and_then(|monitor| monitor.start(sink))
}
