//! Test fixtures: a private Xvfb per test and the `mcec-testwin` window that reports what it
//! receives.
//!
//! Each Xvfb picks its own free display number (see `xserver`), and each server and window is
//! killed by PID when dropped.

#![allow(dead_code)]

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError, channel};
use std::time::{Duration, Instant};

use mcec_desktop::{DesktopConfig, DesktopTools};
use mcec_desktop_x11::X11Desktop;

/// A display number that never has a server (servers started here pick low free numbers).
pub const UNUSED_DISPLAY: &str = ":1999";

/// A private X server.
pub struct Xvfb {
    child: Option<Child>,
    wm: Option<Child>,
    pub display: String,
}

impl Xvfb {
    /// Start Xvfb 1280x800x24 on a display it picks itself and wait until it answers.
    pub fn start() -> Xvfb {
        let args = ["-screen", "0", "1280x800x24", "-nolisten", "tcp", "-noreset"];
        let (child, display) = crate::xserver::spawn_server("Xvfb", &args, &[]).expect("start Xvfb");
        let mut x = Xvfb { child: Some(child), wm: None, display };
        assert!(x.wait_ready(), "Xvfb on {} never answered", x.display);
        x
    }

    /// Start Xvfb with openbox managing it, and wait until openbox has taken over.
    pub fn start_with_wm() -> Xvfb {
        let mut x = Xvfb::start();
        let wm = Command::new("openbox")
            .arg("--sm-disable")
            .env("DISPLAY", &x.display)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("openbox must be installed");
        x.wm = Some(wm);
        let conn = x.raw();
        let deadline = Instant::now() + Duration::from_secs(15);
        while !wm_running(&conn) {
            assert!(Instant::now() < deadline, "openbox did not start");
            std::thread::sleep(Duration::from_millis(20));
        }
        // The check window comes early in openbox's start-up; it manages windows only later.
        // Map a probe window and wait until openbox has reparented it.
        // A map request sent while openbox is still starting can be dropped, so retry.
        let probe_args = ["--title", "probe", "--width", "10", "--height", "10"];
        while TestWin::try_open(&x.display, &probe_args, Duration::from_secs(2)).is_none() {
            assert!(Instant::now() < deadline, "openbox does not manage windows");
        }
        x
    }

    fn wait_ready(&mut self) -> bool {
        let deadline = Instant::now() + Duration::from_secs(15);
        while Instant::now() < deadline {
            if let Some(c) = self.child.as_mut()
                && let Ok(Some(_)) = c.try_wait()
            {
                return false;
            }
            if x11rb::rust_connection::RustConnection::connect(Some(&self.display)).is_ok() {
                return true;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        false
    }

    /// The desktop tools on this server, with artefacts under `dir`.
    pub fn tools(&self, dir: &std::path::Path) -> DesktopTools {
        DesktopTools::new(
            std::sync::Arc::new(self.backend()),
            DesktopConfig { artifact_dir: dir.to_path_buf() },
        )
    }

    pub fn backend(&self) -> X11Desktop {
        X11Desktop::connect(Some(&self.display)).expect("connect to the test Xvfb")
    }

    /// A raw connection for checks made behind mcec's back.
    pub fn raw(&self) -> x11rb::rust_connection::RustConnection {
        x11rb::rust_connection::RustConnection::connect(Some(&self.display)).expect("raw connection").0
    }
}

impl Drop for Xvfb {
    fn drop(&mut self) {
        if let Some(mut c) = self.wm.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
        if let Some(mut c) = self.child.take() {
            crate::xserver::stop_server(&mut c);
        }
    }
}

fn wm_running(conn: &x11rb::rust_connection::RustConnection) -> bool {
    use x11rb::protocol::xproto::{AtomEnum, ConnectionExt};
    let root = conn.setup().roots[0].root;
    let atom = conn.intern_atom(false, b"_NET_SUPPORTING_WM_CHECK").unwrap().reply().unwrap().atom;
    let reply = conn.get_property(false, root, atom, AtomEnum::WINDOW, 0, 1).unwrap().reply().unwrap();
    reply.value32().and_then(|mut v| v.next()).is_some()
}

/// The test window, with its event lines.
pub struct TestWin {
    child: Child,
    lines: Receiver<String>,
    pub id: u32,
    pub pid: u32,
}

pub fn testwin_path() -> &'static str {
    env!("CARGO_BIN_EXE_mcec-testwin")
}

impl TestWin {
    /// Open a window with `args` (see `mcec-testwin --help` in its source) and wait until it
    /// has drawn its pattern.
    pub fn open(display: &str, args: &[&str]) -> TestWin {
        TestWin::try_open(display, args, Duration::from_secs(10)).expect("test window ready")
    }

    /// Like [`TestWin::open`], but `None` when the window is not drawn within `bound`.
    pub fn try_open(display: &str, args: &[&str], bound: Duration) -> Option<TestWin> {
        let mut child = Command::new(testwin_path())
            .args(args)
            .env("DISPLAY", display)
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("start mcec-testwin");
        let pid = child.id();
        let stdout = child.stdout.take().expect("piped stdout");
        let (tx, rx) = channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        let mut w = TestWin { child, lines: rx, id: 0, pid };
        let ready = w.wait_bounded(|l| l.starts_with("ready "), bound)?;
        w.id = ready[6..].parse().expect("window id");
        Some(w)
    }

    /// The next line satisfying `pred` (skipping others), or `None` after a generous bound.
    pub fn wait_for(&self, pred: impl Fn(&str) -> bool) -> Option<String> {
        self.wait_bounded(pred, Duration::from_secs(10))
    }

    fn wait_bounded(&self, pred: impl Fn(&str) -> bool, bound: Duration) -> Option<String> {
        let deadline = Instant::now() + bound;
        loop {
            let left = deadline.checked_duration_since(Instant::now())?;
            match self.lines.recv_timeout(left) {
                Ok(l) if pred(&l) => return Some(l),
                Ok(_) => {}
                Err(RecvTimeoutError::Timeout | RecvTimeoutError::Disconnected) => return None,
            }
        }
    }

    /// Every line that arrives until `quiet` passes with none.
    pub fn drain(&self, quiet: Duration) -> Vec<String> {
        let mut out = Vec::new();
        while let Ok(l) = self.lines.recv_timeout(quiet) {
            out.push(l);
        }
        out
    }

    pub fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for TestWin {
    fn drop(&mut self) {
        self.kill();
    }
}

/// The characters the window decoded from its key presses until `count` arrived.
pub fn typed(win: &TestWin, count: usize) -> String {
    let mut out = String::new();
    while out.chars().count() < count {
        let Some(line) = win.wait_for(|l| l.starts_with("key ")) else { break };
        let hex = line.rsplit(' ').next().unwrap_or("-");
        if let Some(c) = u32::from_str_radix(hex, 16).ok().and_then(char::from_u32) {
            out.push(c);
        }
    }
    out
}

/// Keycodes the server reports down (QueryKeymap) that are bound to a modifier.
pub fn modifiers_down(conn: &x11rb::rust_connection::RustConnection) -> Vec<u8> {
    use x11rb::protocol::xproto::ConnectionExt;
    let keys = conn.query_keymap().unwrap().reply().unwrap().keys;
    let mods = conn.get_modifier_mapping().unwrap().reply().unwrap().keycodes;
    mods.into_iter().filter(|kc| *kc != 0 && keys[usize::from(kc / 8)] & (1 << (kc % 8)) != 0).collect()
}

/// The pointer's button mask bits for buttons 1-5.
pub fn buttons_down(conn: &x11rb::rust_connection::RustConnection) -> u16 {
    use x11rb::protocol::xproto::ConnectionExt;
    let root = conn.setup().roots[0].root;
    u16::from(conn.query_pointer(root).unwrap().reply().unwrap().mask) & 0x1f00
}

use x11rb::connection::Connection as _;
