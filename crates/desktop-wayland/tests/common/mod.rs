//! A real sway for tests: a private Xvfb, and sway 1.7 on it with `WLR_BACKENDS=x11`, so
//! sway takes the Xvfb's XTEST keyboard for a real keyboard. `xdotool` on that Xvfb is then
//! the operator's hand on a physical keyboard, and a Wayland client with the virtual-keyboard
//! protocol (`wtype`, mcec's own injector) is an injecting program.
//!
//! sway refuses to run as root, so as root it runs as the unprivileged `mcec-wayland` user
//! (made when missing, as `tests/e2e/waydesk.py` does) in a runtime directory of its own;
//! root's processes still reach its sockets. The Xvfb picks its display number (`-displayfd`)
//! and runs without access control (`-ac`, local sockets only) so sway's user may connect.
//! Everything is stopped by PID on drop.

#![allow(dead_code)]

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use mcec_desktop_wayland::ipc::{Ipc, Message};

/// The user sway runs as when the tests run as root.
const USER: &str = "mcec-wayland";
/// Upper bound for sway to come up: a hang guard, not a measured time.
const START_GUARD: Duration = Duration::from_secs(30);
/// A hang guard for what sway should do soon, not a measured time.
pub const GUARD: Duration = Duration::from_secs(20);

/// A running Xvfb with sway on it.
pub struct Sway {
    xvfb: Child,
    sway: Option<Child>,
    pub display: String,
    pub runtime_dir: PathBuf,
    /// Removes the runtime directory on drop.
    _runtime: tempfile::TempDir,
    pub swaysock: PathBuf,
    pub wayland_display: String,
    as_user: Vec<String>,
}

impl Sway {
    pub fn start() -> Sway {
        let (xvfb, display) = start_xvfb();
        let runtime = tempfile::Builder::new().prefix("mcec-sway-").tempdir().expect("runtime dir");
        let runtime_dir = runtime.path().to_path_buf();
        let as_user = if is_root() { drop_to(&ensure_user(), &runtime_dir) } else { Vec::new() };
        let config = runtime_dir.join("config");
        // No bar, no default bindings: only what the test adds, and one binding mode to enter.
        std::fs::write(&config, "default_border none\nfocus_follows_mouse no\nmode \"other\" {\n  bindsym Escape mode default\n}\n").expect("sway config");
        let log = std::fs::File::create(runtime_dir.join("sway.log")).expect("sway log");
        let mut command = Command::new(as_user.first().map_or("sway", String::as_str));
        command
            .args(as_user.iter().skip(1))
            .args(if as_user.is_empty() { vec![] } else { vec!["sway".to_string()] })
            .arg("--config")
            .arg(&config)
            .env_clear()
            .env("PATH", std::env::var("PATH").unwrap_or_else(|_| "/usr/bin:/bin".into()))
            .env("HOME", &runtime_dir)
            .env("XDG_RUNTIME_DIR", &runtime_dir)
            .env("DISPLAY", &display)
            .env("WLR_BACKENDS", "x11")
            .env("WLR_LIBINPUT_NO_DEVICES", "1")
            .env("WLR_RENDERER", "pixman")
            .env("LANG", "C.UTF-8")
            .stdin(Stdio::null())
            .stdout(log.try_clone().expect("log"))
            .stderr(log);
        let sway = command.spawn().expect("start sway (is it installed? scripts/test installs it)");
        let mut s = Sway {
            xvfb,
            sway: Some(sway),
            display,
            swaysock: PathBuf::new(),
            wayland_display: String::new(),
            runtime_dir,
            _runtime: runtime,
            as_user,
        };
        s.wait_ready();
        s
    }

    fn wait_ready(&mut self) {
        let deadline = Instant::now() + START_GUARD;
        loop {
            if let Some(sway) = self.sway.as_mut()
                && let Ok(Some(status)) = sway.try_wait()
            {
                panic!("sway exited ({status}):\n{}", self.log());
            }
            assert!(Instant::now() < deadline, "sway did not come up:\n{}", self.log());
            let names: Vec<String> = std::fs::read_dir(&self.runtime_dir)
                .map(|d| d.flatten().map(|e| e.file_name().to_string_lossy().into_owned()).collect())
                .unwrap_or_default();
            let sock = names.iter().find(|n| n.starts_with("sway-ipc.") && n.ends_with(".sock"));
            let wl = names.iter().find(|n| n.starts_with("wayland-") && !n.ends_with(".lock"));
            if let (Some(sock), Some(wl)) = (sock, wl) {
                self.swaysock = self.runtime_dir.join(sock);
                self.wayland_display = wl.clone();
                if self
                    .swaymsg(&["-t", "get_inputs", "-r"])
                    .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).contains("\"type\": \"keyboard\""))
                {
                    return;
                }
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// The environment a client of this sway needs.
    pub fn env(&self) -> Vec<(String, String)> {
        vec![
            ("SWAYSOCK".into(), self.swaysock.display().to_string()),
            ("WAYLAND_DISPLAY".into(), self.wayland_display.clone()),
            ("XDG_RUNTIME_DIR".into(), self.runtime_dir.display().to_string()),
        ]
    }

    /// `swaymsg` against this sway (another process, as a tampering program would be).
    pub fn swaymsg(&self, args: &[&str]) -> std::io::Result<Output> {
        Command::new("swaymsg").arg("-s").arg(&self.swaysock).args(args).output()
    }

    /// Keys on the Xvfb's XTEST keyboard: under sway, the operator's physical keyboard.
    pub fn physical_key(&self, keys: &str) {
        let out = Command::new("xdotool")
            .args(["key", keys])
            .env("DISPLAY", &self.display)
            .output()
            .expect("xdotool");
        assert!(out.status.success(), "xdotool: {}", String::from_utf8_lossy(&out.stderr));
    }

    /// Runs a Wayland client of this session as sway's user (e.g. `wtype`), to its end.
    pub fn client(&self, argv: &[&str]) -> Output {
        self.client_command(argv).output().expect("start the Wayland client")
    }

    /// A Wayland client of this session as sway's user, not yet started.
    pub fn client_command(&self, argv: &[&str]) -> Command {
        let mut all: Vec<String> = self.as_user.clone();
        all.extend(argv.iter().map(|s| s.to_string()));
        let mut c = Command::new(&all[0]);
        c.args(&all[1..])
            .env_clear()
            .env("PATH", std::env::var("PATH").unwrap_or_else(|_| "/usr/bin:/bin".into()))
            .env("HOME", &self.runtime_dir)
            .env("WAYLAND_DISPLAY", &self.wayland_display)
            .env("XDG_RUNTIME_DIR", &self.runtime_dir)
            .env("LANG", "C.UTF-8");
        c
    }

    /// A connection of its own to sway's IPC, subscribed to `binding` events (each fired
    /// binding's command, whichever client bound it).
    pub fn binding_events(&self) -> Ipc {
        let mut events = Ipc::connect(&self.swaysock).expect("ipc");
        let subscribed = events.request(Message::Subscribe, r#"["binding"]"#).expect("subscribe");
        assert_eq!(subscribed["success"], true);
        events
    }

    /// sway's own record (from `GET_TREE`) of the window with `app_id`, when it has one: the
    /// witness the listers are checked against.
    pub fn view(&self, app_id: &str) -> Option<serde_json::Value> {
        fn find(node: &serde_json::Value, app_id: &str) -> Option<serde_json::Value> {
            if node.get("app_id").and_then(serde_json::Value::as_str) == Some(app_id) {
                return Some(node.clone());
            }
            ["nodes", "floating_nodes"]
                .iter()
                .filter_map(|k| node.get(*k).and_then(serde_json::Value::as_array))
                .flatten()
                .find_map(|child| find(child, app_id))
        }
        let mut ipc = Ipc::connect(&self.swaysock).expect("ipc");
        find(&ipc.request(Message::GetTree, "").expect("get_tree"), app_id)
    }

    /// Ends sway (by PID), leaving the Xvfb.
    pub fn stop_sway(&mut self) {
        if let Some(mut sway) = self.sway.take() {
            stop(&mut sway);
        }
    }

    pub fn log(&self) -> String {
        std::fs::read_to_string(self.runtime_dir.join("sway.log")).unwrap_or_default()
    }
}

impl Drop for Sway {
    fn drop(&mut self) {
        if let Some(mut sway) = self.sway.take() {
            stop(&mut sway);
        }
        stop(&mut self.xvfb);
    }
}

/// SIGTERM by PID, SIGKILL if it has not gone within a few seconds.
fn stop(child: &mut Child) {
    if let Ok(None) = child.try_wait() {
        let _ = Command::new("kill").args(["-TERM", &child.id().to_string()]).status();
        let deadline = Instant::now() + Duration::from_secs(5);
        while Instant::now() < deadline {
            if let Ok(Some(_)) = child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }
    let _ = child.kill();
    let _ = child.wait();
}

fn start_xvfb() -> (Child, String) {
    let (reader, writer) = std::io::pipe().expect("pipe");
    let child = Command::new("Xvfb")
        .args(["-screen", "0", "1280x800x24", "-nolisten", "tcp", "-ac", "-displayfd", "1"])
        .stdin(Stdio::null())
        .stdout(writer)
        .stderr(Stdio::null())
        .spawn()
        .expect("start Xvfb");
    let mut line = String::new();
    let _ = BufReader::new(reader).read_line(&mut line);
    let number = line.trim().to_string();
    assert!(!number.is_empty() && number.bytes().all(|b| b.is_ascii_digit()), "Xvfb gave no display number");
    (child, format!(":{number}"))
}

fn is_root() -> bool {
    Command::new("id").arg("-u").output().is_ok_and(|o| o.stdout.trim_ascii() == b"0")
}

/// `(uid, gid)` of the test user, made when missing.
fn ensure_user() -> (String, String) {
    let id = |flag: &str| {
        Command::new("id")
            .args([flag, USER])
            .output()
            .ok()
            .filter(|o| o.status.success())
            .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
    };
    if id("-u").is_none() {
        let _ = Command::new("useradd")
            .args([
                "--system",
                "--no-create-home",
                "--home-dir",
                "/nonexistent",
                "--shell",
                "/usr/sbin/nologin",
                USER,
            ])
            .status();
    }
    (id("-u").expect("the test user"), id("-g").expect("the test user's group"))
}

/// The `setpriv` prefix that runs a command as the user, who is given `runtime_dir`.
fn drop_to((uid, gid): &(String, String), runtime_dir: &Path) -> Vec<String> {
    let status = Command::new("chown").arg(format!("{uid}:{gid}")).arg(runtime_dir).status().expect("chown");
    assert!(status.success());
    vec!["setpriv".into(), format!("--reuid={uid}"), format!("--regid={gid}"), "--clear-groups".into()]
}

/// Waits (bounded) until `f` gives `Some`.
pub fn until<T>(what: &str, mut f: impl FnMut() -> Option<T>) -> T {
    let deadline = Instant::now() + GUARD;
    loop {
        if let Some(v) = f() {
            return v;
        }
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(50));
    }
}
