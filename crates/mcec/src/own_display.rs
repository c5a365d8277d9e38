//! A session copy's own X display (issue 26): started with the copy, ended with it.
//!
//! A session copy whose `mcec.settings` records `OwnDisplay = "WxH"` starts, before anything
//! else connects to a display: an X server of that size (Xephyr, a window titled with the
//! session id on the operator's display, when there is one; else a headless Xvfb), which picks
//! a free display number itself and reports it on a pipe (`-displayfd`: no lock-file race);
//! it is started with an authority file holding a fresh cookie (0600, in the session
//! directory), so nobody gets in before it is ready, and then lets this user in
//! (`mcec_desktop_x11::own_server`). Then its own D-Bus session bus (`dbus-daemon --session`,
//! which also starts the accessibility bus on demand), and openbox when installed.
//!
//! The server leads a new process group; the bus, the window manager and every program
//! `launch` starts there join it. Ending ([`Drop`]) sends the group SIGTERM, waits for the
//! server to go (it removes its socket), then SIGKILLs whatever is left of the group, removes
//! a lock file and socket the server could not, and the authority file. A copy killed before
//! its end (SIGKILL) takes the server, bus and window manager with it (parent-death signal).
//!
//! What the tools get is [`crate::tool_display::OwnDesk`]; the stop keeps watching the
//! operator's display (see `tool_display.rs`).

mod authority;
mod group;

use std::io::{BufRead, BufReader, Read};
use std::os::unix::process::CommandExt as _;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdout, Command, Stdio};
use std::sync::{Arc, mpsc};
use std::time::Duration;

use mcec_desktop::seams::SessionWindow;
use mcec_mcp::agent::Agent;
use mcec_mcp::audit::audit;
use mcec_rules::own_display::{OwnDisplaySize, Server};
use mcec_sessions::paths::McecPaths;

use crate::tool_display::{OwnDesk, ToolDisplay};

/// The authority file of the own display, in the session directory.
const AUTHORITY_FILE: &str = "own-display.xauth";
/// Where X servers put their sockets.
const SOCKET_DIR: &str = "/tmp/.X11-unix";
/// Longest wait for the server to report its display and for the bus to report its address.
const START_PATIENCE: Duration = Duration::from_secs(15);
/// How often the window's title is brought up to date with the agent's client.
const TITLE_LOOK: Duration = Duration::from_millis(500);
/// Longest wait for the server to exit on SIGTERM before the group is killed.
const END_PATIENCE: Duration = Duration::from_secs(5);

/// The running X server, bus and window manager of this session copy.
pub struct OwnDisplay {
    desk: OwnDesk,
    /// Its display number, once the server reported it (`:0` is a number like any other).
    number: Option<u32>,
    /// Its stdout (the `-displayfd` pipe) stays open in here as long as the server runs.
    server: Child,
    helpers: Vec<Child>,
    authority: PathBuf,
}

/// The display the tools of this process act on, and the own display to keep running (and
/// end) while it serves: only a session copy whose settings record `OwnDisplay` has one.
pub fn for_copy(paths: &McecPaths, size: Option<OwnDisplaySize>) -> (ToolDisplay, Option<OwnDisplay>) {
    let (Some(id), Some(size)) = (paths.session, size) else {
        if size.is_some() {
            tracing::warn!("OwnDisplay is ignored outside a session copy");
        }
        return (ToolDisplay::Operator, None);
    };
    let operator = match crate::desktop_find::desktop() {
        crate::desktop_find::Desktop::Found { display, .. } => Some(display),
        crate::desktop_find::Desktop::Missing(_) => None,
    };
    match OwnDisplay::start(&paths.exe_dir, size, id.as_str(), operator.as_deref()) {
        Ok(own) => {
            let desk = own.desk.clone();
            tracing::info!(
                "own display {} ({size}) for session {id}; the stop watches {}",
                desk.display,
                operator.as_deref().unwrap_or("no operator display (there is none)")
            );
            audit("own-display-started", &format!("session={id} display={} size={size}", desk.display));
            (ToolDisplay::Own(desk), Some(own))
        }
        Err(why) => {
            tracing::error!("the session's own display could not be started: {why}");
            audit("own-display-failed", &format!("session={id} cause={why}"));
            let detail = format!(
                "This session was to act on an X display of its own, which could not be started: {why}. \
                 It never acts on the operator's display instead."
            );
            (ToolDisplay::Failed(detail), None)
        }
    }
}

impl OwnDisplay {
    /// Start the server (Xephyr on `operator_display`, else Xvfb), let this user in, start the
    /// bus and the window manager. Everything started is ended again on failure.
    fn start(
        dir: &Path,
        size: OwnDisplaySize,
        session: &str,
        operator_display: Option<&str>,
    ) -> Result<OwnDisplay, String> {
        let server_kind = Server::choose(operator_display.is_some());
        let cookie = authority::cookie()?;
        let authority = dir.join(AUTHORITY_FILE);
        mcec_sessions::atomic::write_atomic(dir, AUTHORITY_FILE, &authority::file_bytes(&cookie))
            .map_err(|e| format!("cannot write the display's authority file: {e}"))?;
        let server = match spawn_server(server_kind, size, session, &authority) {
            Ok(server) => server,
            Err(e) => {
                let _ = std::fs::remove_file(&authority);
                return Err(e);
            }
        };
        let group = server.id();
        let mut own = OwnDisplay {
            desk: OwnDesk {
                display: String::new(),
                size,
                authority: authority.display().to_string(),
                bus: String::new(),
                process_group: group,
                window_title: (server_kind == Server::Xephyr).then(|| window_title(session, None)),
            },
            number: None,
            server,
            helpers: Vec::new(),
            authority,
        };
        // From here on, dropping `own` ends whatever was started.
        let number = first_line(own.server.stdout.as_ref(), server_kind.program())?
            .parse::<u32>()
            .map_err(|_| format!("{} reported no display number", server_kind.program()))?;
        own.number = Some(number);
        own.desk.display = format!(":{number}");
        crate::platform::let_user_in(Path::new(SOCKET_DIR), number, &cookie)?;
        own.start_bus()?;
        own.start_window_manager();
        Ok(own)
    }

    /// `dbus-daemon --session` in the group; its address from its stdout.
    fn start_bus(&mut self) -> Result<(), String> {
        let bus = self
            .helper("dbus-daemon")
            .args(["--session", "--nofork", "--nopidfile", "--print-address=1"])
            .stdout(Stdio::piped())
            .spawn()
            .map_err(|e| match e.kind() {
                std::io::ErrorKind::NotFound => {
                    "dbus-daemon is not installed (the operator installs it: `sudo apt-get install dbus`)"
                        .to_string()
                }
                _ => format!("cannot start dbus-daemon: {e}"),
            })?;
        self.helpers.push(bus);
        self.desk.bus = first_line(self.helpers.last().and_then(|bus| bus.stdout.as_ref()), "dbus-daemon")?;
        Ok(())
    }

    /// openbox in the group, when installed: dialogs and focus then behave as on a desktop.
    /// The copy serves once openbox runs its `--startup` command (it does so when it manages
    /// windows; a window mapped while it starts up can be left unmanaged and never shown),
    /// or after [`START_PATIENCE`] without it.
    fn start_window_manager(&mut self) {
        let spawned = self.helper("openbox").args(["--startup", "echo ready"]).stdout(Stdio::piped()).spawn();
        match spawned {
            Ok(wm) => {
                self.helpers.push(wm);
                let out = self.helpers.last().and_then(|wm| wm.stdout.as_ref());
                if let Err(e) = first_line(out, "openbox") {
                    tracing::warn!("the own display's window manager: {e}");
                }
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                tracing::info!("no window manager on the own display (openbox is not installed)");
            }
            Err(e) => tracing::warn!("cannot start openbox on the own display: {e}"),
        }
    }

    /// A program in the display's group with its environment (what `launch` gives too).
    fn helper(&self, program: &str) -> Command {
        let mut command = Command::new(program);
        command.stdin(Stdio::null()).stderr(Stdio::null()).process_group(self.desk.process_group as i32);
        group::end_with_parent(&mut command);
        for name in REMOVED_VARS {
            command.env_remove(name);
        }
        command.envs(program_env(&self.desk));
        command
    }
}

/// Variables that point a program at the operator's desktop, not the session's.
pub const REMOVED_VARS: &[&str] = &["AT_SPI_BUS_ADDRESS", "WAYLAND_DISPLAY"];

/// What a program started on the own display has in its environment besides `DISPLAY`.
pub fn program_env(desk: &OwnDesk) -> Vec<(String, String)> {
    let mut env =
        vec![("DISPLAY".to_string(), desk.display.clone()), ("XAUTHORITY".into(), desk.authority.clone())];
    if !desk.bus.is_empty() {
        env.push(("DBUS_SESSION_BUS_ADDRESS".into(), desk.bus.clone()));
    }
    env
}

/// The title of the session's window on the operator's desktop: its session id, and its
/// client's name and version once `initialize` gave them.
pub fn window_title(session: &str, client: Option<&(String, String)>) -> String {
    match client {
        Some((name, version)) if !version.is_empty() => format!("mcec session {session}: {name} {version}"),
        Some((name, _)) => format!("mcec session {session}: {name}"),
        None => format!("mcec session {session}"),
    }
}

/// Retitles the session's window on the operator's desktop with its client's name once
/// `initialize` has given it, and again whenever another client connects.
pub fn title_after_client(window: Arc<dyn SessionWindow>, session: String, agent: Arc<Agent>) {
    let spawned = std::thread::Builder::new().name("mcec-own-display-title".into()).spawn(move || {
        let mut named = None;
        loop {
            let client = agent.client();
            if client.is_some() && client != named {
                window.set_title(&window_title(&session, client.as_ref()));
                named = client;
            }
            std::thread::sleep(TITLE_LOOK);
        }
    });
    if let Err(e) = spawned {
        tracing::warn!("the own display's window keeps its first title: {e}");
    }
}

fn spawn_server(
    kind: Server,
    size: OwnDisplaySize,
    session: &str,
    authority: &Path,
) -> Result<Child, String> {
    let mut command = Command::new(kind.program());
    command.arg("-displayfd").arg("1");
    match kind {
        Server::Xephyr => {
            command
                .args(["-screen", &size.to_string(), "-title", &window_title(session, None)])
                .args(["-no-host-grab"]);
        }
        Server::Xvfb => {
            command.args(["-screen", "0", &format!("{size}x24")]);
        }
    }
    command
        .arg("-auth")
        .arg(authority)
        .args(["-nolisten", "tcp", "-noreset"])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .process_group(0);
    group::end_with_parent(&mut command);
    command.spawn().map_err(|e| match e.kind() {
        std::io::ErrorKind::NotFound => format!(
            "{} is not installed; the operator installs it with `{}`",
            kind.program(),
            kind.install_hint()
        ),
        _ => format!("cannot start {}: {e}", kind.program()),
    })
}

/// The first line `out` prints, within [`START_PATIENCE`]; the reader thread is left to end
/// with the pipe.
fn first_line(out: Option<&ChildStdout>, what: &str) -> Result<String, String> {
    let out = out.ok_or_else(|| format!("{what} has no stdout"))?;
    let pipe = std::os::fd::AsFd::as_fd(out)
        .try_clone_to_owned()
        .map(std::fs::File::from)
        .map_err(|e| format!("cannot read {what}'s pipe: {e}"))?;
    let (tx, rx) = mpsc::channel();
    std::thread::Builder::new()
        .name("mcec-own-display".into())
        .spawn(move || {
            let mut line = String::new();
            let read = BufReader::new(pipe.take(4096)).read_line(&mut line);
            let _ = tx.send(read.map(|_| line));
        })
        .map_err(|e| format!("cannot start a thread: {e}"))?;
    match rx.recv_timeout(START_PATIENCE) {
        Ok(Ok(line)) if !line.trim().is_empty() => Ok(line.trim().to_string()),
        Ok(_) => Err(format!("{what} exited before it was ready")),
        Err(_) => Err(format!("{what} was not ready within {} s", START_PATIENCE.as_secs())),
    }
}

impl Drop for OwnDisplay {
    fn drop(&mut self) {
        group::end(self.desk.process_group, &mut self.server, &mut self.helpers, END_PATIENCE);
        if let Some(number) = self.number {
            group::remove_leftovers(Path::new("/tmp"), Path::new(SOCKET_DIR), number, self.server.id());
        }
        let _ = std::fs::remove_file(&self.authority);
        if self.desk.headless() && self.number.is_some() {
            crate::headless_stop::forget(&self.desk.display);
        }
        tracing::info!("own display {} ended with its programs", self.desk.display);
        audit("own-display-ended", &format!("display={}", self.desk.display));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn programs_there_get_its_display_authority_and_bus_and_not_the_operators() {
        let mut desk = OwnDesk {
            display: ":7".into(),
            size: OwnDisplaySize::default(),
            authority: "/s/own-display.xauth".into(),
            bus: "unix:path=/tmp/dbus-x".into(),
            process_group: 42,
            window_title: None,
        };
        let env = program_env(&desk);
        assert_eq!(
            env,
            [
                ("DISPLAY".to_string(), ":7".to_string()),
                ("XAUTHORITY".into(), "/s/own-display.xauth".into()),
                ("DBUS_SESSION_BUS_ADDRESS".into(), "unix:path=/tmp/dbus-x".into()),
            ]
        );
        assert!(REMOVED_VARS.contains(&"AT_SPI_BUS_ADDRESS") && REMOVED_VARS.contains(&"WAYLAND_DISPLAY"));
        desk.bus.clear();
        assert!(
            !program_env(&desk).iter().any(|(k, _)| k == "DBUS_SESSION_BUS_ADDRESS"),
            "no bus yet: none named"
        );
    }
}
