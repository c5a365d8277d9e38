//! Finding the operator's X display when the MCP client started mcec without `DISPLAY`.
//!
//! The official MCP SDKs (and Codex) start a stdio server with a filtered environment, so
//! `DISPLAY` and `XAUTHORITY` often never arrive. This is the probing half: it asks
//! systemd-logind over D-Bus for this user's sessions, connects to the X server sockets, and
//! looks for the session's authority file; `mcec_rules::desktop_choice` decides from what it
//! saw. A display found this way becomes *the* `DISPLAY`: the process executes itself again
//! with `DISPLAY` (and a found `XAUTHORITY`) in its environment, before any thread starts, so
//! every part that reads the display (the desktop connection, the stop's monitor, the operator
//! windows, the stop record's scope, `launch`'s children) reads the same one, and the new
//! process is told how it was found through [`FOUND_VAR`]. A `DISPLAY` that is set is used as
//! it is, even when nothing answers there. In a sway session (the sway backend) an unset
//! `DISPLAY` is not searched for: it means the session has no XWayland.
//!
//! Two variables exist for tests only: `MCEC_X11_SOCKET_DIR` names the directory whose `X<n>`
//! entries are considered instead of `/tmp/.X11-unix` (a test makes one holding its own
//! servers' sockets, as other X servers run on a shared machine), and `MCEC_LOGIND_BUS` is the
//! D-Bus address asked for `org.freedesktop.login1` instead of the system bus.

use std::collections::HashMap;
use std::os::unix::process::CommandExt as _;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::time::Duration;

use mcec_rules::desktop_choice::{
    self, Found, LogindLook, LogindSession, LogindVerdict, SocketAnswer, SocketSeen, Source,
};
use zbus::blocking::Connection;
use zbus::blocking::connection::Builder;
use zbus::zvariant::{OwnedObjectPath, OwnedValue};

/// Carries `<source> <display>` into the process this one executes.
const FOUND_VAR: &str = "MCEC_FOUND_DISPLAY";
const SOCKET_DIR_VAR: &str = "MCEC_X11_SOCKET_DIR";
const LOGIND_BUS_VAR: &str = "MCEC_LOGIND_BUS";
const SOCKET_DIR: &str = "/tmp/.X11-unix";
/// Longest wait for logind's answers and for one X server's connection setup.
const PROBE_TIMEOUT: Duration = Duration::from_secs(3);

/// What this process knows about its desktop.
#[derive(Debug, Clone)]
pub enum Desktop {
    Found {
        display: String,
        source: Source,
    },
    /// No display to use: the detail an agent sees with `no-desktop`.
    Missing(String),
}

static DESKTOP: OnceLock<Desktop> = OnceLock::new();

/// The `Leader` process of each logind session seen, by the session's display: where the
/// session's own `XAUTHORITY` can be read (when the leader runs as this user).
static LEADERS: OnceLock<Vec<(String, u32)>> = OnceLock::new();

/// The desktop this process settled on; [`settle`] must have run.
pub fn desktop() -> Desktop {
    DESKTOP.get().cloned().unwrap_or_else(|| Desktop::Missing("No X display: DISPLAY is not set.".into()))
}

/// Settle which display this process uses. Returns only when the environment already names
/// it or none could be found; otherwise the process is replaced by itself with `DISPLAY` set.
pub fn settle() {
    let desktop = match non_empty("DISPLAY") {
        Some(display) => {
            let source = match non_empty(FOUND_VAR) {
                Some(marker) => match marker.split_once(' ') {
                    Some((word, shown)) if shown == display => {
                        Source::parse(word).unwrap_or(Source::Environment)
                    }
                    _ => Source::Environment,
                },
                None => Source::Environment,
            };
            Desktop::Found { display, source }
        }
        // A Wayland backend (sway's, or a wlroots compositor's without sway's IPC) needs no X
        // display; one the search found need not be the session's (no XWayland: the
        // operator's windows are not shown).
        None if crate::platform::wayland_backend() => Desktop::Missing(
            "No X display: DISPLAY is not set, and on a Wayland backend (sway, or a wlroots compositor \
             without sway's IPC) mcec does not look for one (the backend acts on the Wayland display; \
             its stop record is that display's)."
                .into(),
        ),
        None => match find() {
            Ok(found) => re_exec(&found),
            Err(detail) => Desktop::Missing(detail),
        },
    };
    let _ = DESKTOP.set(desktop);
}

/// Execute this binary again with the found display in its environment.
fn re_exec(found: &Found) -> Desktop {
    let mut command = match std::env::current_exe() {
        Ok(exe) => std::process::Command::new(exe),
        Err(e) => {
            return Desktop::Missing(format!(
                "found the X display `{}` but cannot restart mcec: {e}",
                found.display
            ));
        }
    };
    let mut args = std::env::args_os();
    if let Some(arg0) = args.next() {
        command.arg0(arg0);
    }
    command
        .args(args)
        .env("DISPLAY", &found.display)
        .env(FOUND_VAR, format!("{} {}", found.source, found.display));
    if non_empty("XAUTHORITY").is_none()
        && let Some(file) = session_authority(&found.display).or_else(authority_file)
    {
        command.env("XAUTHORITY", file);
    }
    if found.wayland && non_empty("XDG_SESSION_TYPE").is_none() {
        // What logind said of the session: the Wayland rules then judge this X server as theirs.
        command.env("XDG_SESSION_TYPE", "wayland");
    }
    let e = command.exec();
    Desktop::Missing(format!("found the X display `{}` but cannot restart mcec with it: {e}", found.display))
}

/// `DISPLAY` and `XAUTHORITY` to write into a client's entry (`mcec config --pin-display`):
/// the environment's when set, else found as [`settle`] finds them.
pub fn pinned() -> Result<Vec<(String, String)>, String> {
    let display = match non_empty("DISPLAY") {
        Some(display) => display,
        None => find()?.display,
    };
    let mut env = vec![("DISPLAY".to_string(), display)];
    let authority = non_empty("XAUTHORITY")
        .map(PathBuf::from)
        .or_else(authority_file)
        .or_else(|| mcec_sessions::paths::home_dir().map(|h| h.join(".Xauthority")).filter(|p| p.exists()));
    if let Some(file) = authority {
        env.push(("XAUTHORITY".to_string(), file.display().to_string()));
    }
    Ok(env)
}

fn non_empty(var: &str) -> Option<String> {
    std::env::var(var).ok().filter(|v| !v.is_empty())
}

/// logind first, then the sockets.
fn find() -> Result<Found, String> {
    let (note, wayland) = match desktop_choice::from_logind(&ask_logind()) {
        LogindVerdict::Use(found) => return Ok(found),
        LogindVerdict::Several(detail) => {
            return Err(format!("No X display chosen: DISPLAY is not set and {detail}."));
        }
        LogindVerdict::LookFurther { note, wayland } => (note, wayland),
    };
    let dir = non_empty(SOCKET_DIR_VAR).map_or_else(|| PathBuf::from(SOCKET_DIR), PathBuf::from);
    desktop_choice::from_sockets(&dir.display().to_string(), &probe_sockets(&dir), &note, wayland)
}

fn ask_logind() -> LogindLook {
    match logind_sessions() {
        Ok(sessions) => LogindLook::Sessions(sessions),
        Err(why) => LogindLook::Unreachable(why),
    }
}

const LOGIND: &str = "org.freedesktop.login1";

fn logind_sessions() -> Result<Vec<LogindSession>, String> {
    let builder = match non_empty(LOGIND_BUS_VAR) {
        Some(address) => Builder::address(address.as_str()),
        None => Builder::system(),
    };
    let bus: Connection = builder
        .and_then(|b| b.method_timeout(PROBE_TIMEOUT).build())
        .map_err(|e| format!("cannot connect to the bus: {e}"))?;
    let reply = bus
        .call_method(
            Some(LOGIND),
            "/org/freedesktop/login1",
            Some("org.freedesktop.login1.Manager"),
            "ListSessions",
            &(),
        )
        .map_err(|e| format!("ListSessions: {e}"))?;
    let listed: Vec<(String, u32, String, String, OwnedObjectPath)> =
        reply.body().deserialize().map_err(|e| format!("ListSessions answered oddly: {e}"))?;
    let uid = rustix::process::getuid().as_raw();
    let mut sessions = Vec::new();
    let mut leaders = Vec::new();
    for (id, _uid, _user, _seat, path) in listed.into_iter().filter(|s| s.1 == uid) {
        let reply = bus
            .call_method(
                Some(LOGIND),
                path.as_str(),
                Some("org.freedesktop.DBus.Properties"),
                "GetAll",
                &("org.freedesktop.login1.Session",),
            )
            .map_err(|e| format!("session {id}: {e}"))?;
        let props: HashMap<String, OwnedValue> =
            reply.body().deserialize().map_err(|e| format!("session {id} answered oddly: {e}"))?;
        let text = |k: &str| props.get(k).and_then(|v| String::try_from(v.clone()).ok()).unwrap_or_default();
        let active = props.get("Active").and_then(|v| bool::try_from(v).ok()).unwrap_or(false);
        if let Some(leader) = props.get("Leader").and_then(|v| u32::try_from(v).ok()) {
            leaders.push((text("Display"), leader));
        }
        sessions.push(LogindSession { id, kind: text("Type"), display: text("Display"), active });
    }
    let _ = LEADERS.set(leaders);
    Ok(sessions)
}

/// Connect to every `X<n>` in `dir` as this user, each on its own thread, none waited on
/// longer than [`PROBE_TIMEOUT`].
fn probe_sockets(dir: &Path) -> Vec<SocketSeen> {
    let Ok(entries) = std::fs::read_dir(dir) else { return Vec::new() };
    let mut numbers: Vec<u32> =
        entries.filter_map(|e| e.ok()?.file_name().to_str()?.strip_prefix('X')?.parse().ok()).collect();
    numbers.sort_unstable();
    let pending: Vec<_> = numbers
        .into_iter()
        .map(|n| {
            let display = format!(":{n}");
            let (tx, rx) = std::sync::mpsc::channel();
            let probe = display.clone();
            let _ = std::thread::Builder::new().name("mcec-x-probe".into()).spawn(move || {
                let _ = tx.send(crate::platform::probe_display(&probe));
            });
            (display, rx)
        })
        .collect();
    pending
        .into_iter()
        .map(|(display, rx)| {
            let answer = rx
                .recv_timeout(PROBE_TIMEOUT)
                .unwrap_or_else(|_| SocketAnswer::Silent("no answer to the connection setup".into()));
            SocketSeen { display, answer }
        })
        .collect()
}

/// The `XAUTHORITY` in the environment of the logind session's leader, when this user may
/// read it and the file is there.
fn session_authority(display: &str) -> Option<PathBuf> {
    let (_, leader) = LEADERS.get()?.iter().find(|(d, _)| d == display)?;
    let environ = std::fs::read(format!("/proc/{leader}/environ")).ok()?;
    environ
        .split(|b| *b == 0)
        .find_map(|var| var.strip_prefix(b"XAUTHORITY="))
        .map(|path| PathBuf::from(String::from_utf8_lossy(path).into_owned()))
        .filter(|path| path.is_file())
}

/// The session's X authority file when `XAUTHORITY` is not set and `~/.Xauthority` (what
/// X clients read then) does not exist: where the usual display managers keep it.
fn authority_file() -> Option<PathBuf> {
    let home = mcec_sessions::paths::home_dir().map(|h| h.join(".Xauthority"));
    if home.as_deref().is_some_and(Path::exists) {
        return None;
    }
    let runtime = non_empty("XDG_RUNTIME_DIR").map_or_else(
        || PathBuf::from(format!("/run/user/{}", rustix::process::getuid().as_raw())),
        PathBuf::from,
    );
    let gdm = runtime.join("gdm/Xauthority");
    if gdm.exists() {
        return Some(gdm);
    }
    // sddm's `xauth_*`, mutter's XWayland `.mutter-Xwaylandauth.*`: the newest one.
    let entries = std::fs::read_dir(&runtime).ok()?;
    entries
        .filter_map(Result::ok)
        .filter(|e| {
            e.file_name()
                .to_str()
                .is_some_and(|n| n.starts_with("xauth_") || n.starts_with(".mutter-Xwaylandauth."))
        })
        .filter_map(|e| Some((e.metadata().ok()?.modified().ok()?, e.path())))
        .max()
        .map(|(_, path)| path)
}
