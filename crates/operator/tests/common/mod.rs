//! Test harness: a private Xvfb, the demo core as a child process, xdotool and screenshots.
//!
//! Each test owns one display (the server picks a free number itself, `-displayfd`) and one
//! demo process, because the operator UI runs once per process and the display comes from
//! `DISPLAY`.

#![allow(dead_code)]

#[path = "../../../desktop-x11/tests/xserver/mod.rs"]
mod xserver;

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::thread;
use std::time::{Duration, Instant};

/// Generous bound for anything the UI should do "soon"; only there so a broken UI fails the
/// test instead of hanging it.
pub const PATIENCE: Duration = Duration::from_secs(30);

pub struct Xvfb {
    child: Child,
    pub display: String,
}

impl Xvfb {
    /// Start Xvfb 1280x800x24 on a display number it picks itself, and wait until it answers.
    ///
    /// `-noreset`: without it the server resets whenever its last client disconnects, and a
    /// client connecting during the reset (the demo, right after the readiness probe below
    /// closed; any client between two xdotool runs) has its connection reset. The reset takes
    /// longer the busier the machine, so the demo then failed to start only under load.
    pub fn start() -> Self {
        let args = ["-screen", "0", "1280x800x24", "-nolisten", "tcp", "-noreset"];
        let (child, display) = xserver::spawn_server("Xvfb", &args, &[]).expect("Xvfb starts");
        let mut server = Self { child, display };
        let deadline = Instant::now() + PATIENCE;
        while x11rb::connect(Some(&server.display)).is_err() {
            if let Ok(Some(status)) = server.child.try_wait() {
                panic!("Xvfb {} exited early: {status}", server.display);
            }
            assert!(Instant::now() < deadline, "Xvfb never came up");
            thread::sleep(Duration::from_millis(50));
        }
        server
    }
}

impl Drop for Xvfb {
    /// SIGTERM first, so the server removes its lock file and socket; SIGKILL if it lingers.
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            let _ = Command::new("kill").args(["-TERM", &self.child.id().to_string()]).status();
            let deadline = Instant::now() + Duration::from_secs(5);
            while Instant::now() < deadline && matches!(self.child.try_wait(), Ok(None)) {
                thread::sleep(Duration::from_millis(10));
            }
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The demo core (`mcec-operator-demo`) running on a display.
pub struct Demo {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: Receiver<String>,
    pub display: String,
}

impl Demo {
    pub fn start(display: &str, args: &[&str]) -> Self {
        Self::start_with_env(display, args, &[])
    }

    pub fn start_with_env(display: &str, args: &[&str], env: &[(&str, &str)]) -> Self {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_mcec-operator-demo"));
        cmd.args(args)
            .env("DISPLAY", display)
            .env("WINIT_X11_SCALE_FACTOR", "1")
            .env_remove("WAYLAND_DISPLAY")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit());
        for (k, v) in env {
            cmd.env(k, v);
        }
        let mut child = cmd.spawn().expect("demo starts");
        let stdout = child.stdout.take().expect("piped stdout");
        let stdin = child.stdin.take();
        let (tx, lines) = mpsc::channel();
        thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                eprintln!("demo: {line}");
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        Self { child, stdin, lines, display: display.to_owned() }
    }

    /// Send one command and wait for its `ok` acknowledgement.
    pub fn send(&mut self, command: &str) {
        let stdin = self.stdin.as_mut().expect("stdin open");
        writeln!(stdin, "{command}").expect("write to demo");
        stdin.flush().expect("flush demo stdin");
        let verb = command.split(' ').next().unwrap_or(command);
        if verb != "quit" {
            self.expect(&format!("ok {verb}"));
        }
    }

    /// Close stdin: the demo then asks the UI to quit.
    pub fn close_stdin(&mut self) {
        self.stdin = None;
    }

    /// Wait for the next line starting with `prefix`, skipping `ok …` acknowledgements.
    /// Any other line in between fails the test.
    pub fn expect(&self, prefix: &str) -> String {
        let deadline = Instant::now() + PATIENCE;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.lines.recv_timeout(left) {
                Ok(line) if line.starts_with(prefix) => return line,
                Ok(line) if line.starts_with("ok ") => continue,
                Ok(line) => panic!("expected `{prefix}…`, demo said `{line}`"),
                Err(RecvTimeoutError::Timeout) => panic!("demo never said `{prefix}…`"),
                Err(RecvTimeoutError::Disconnected) => panic!("demo ended before `{prefix}…`"),
            }
        }
    }

    /// Like [`Demo::expect`], but gives up after `within` and returns `None`.
    pub fn expect_within(&self, prefix: &str, within: Duration) -> Option<String> {
        let deadline = Instant::now() + within;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.lines.recv_timeout(left) {
                Ok(line) if line.starts_with(prefix) => return Some(line),
                Ok(line) if line.starts_with("ok ") => continue,
                Ok(line) => panic!("expected `{prefix}…`, demo said `{line}`"),
                Err(RecvTimeoutError::Timeout) => return None,
                Err(RecvTimeoutError::Disconnected) => panic!("demo ended before `{prefix}…`"),
            }
        }
    }

    /// Lines the demo printed so far (without waiting).
    pub fn drain(&self) -> Vec<String> {
        self.lines.try_iter().collect()
    }

    /// Wait for the process to end and return its exit code.
    pub fn wait(mut self) -> Option<i32> {
        let deadline = Instant::now() + PATIENCE;
        loop {
            if let Ok(Some(status)) = self.child.try_wait() {
                return status.code();
            }
            assert!(Instant::now() < deadline, "demo did not exit");
            thread::sleep(Duration::from_millis(50));
        }
    }
}

impl Drop for Demo {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Run xdotool; any failure fails the test. Returns its stdout.
pub fn xdotool(display: &str, args: &[&str]) -> String {
    xdotool_allowing(display, args, &[0])
}

fn xdotool_allowing(display: &str, args: &[&str], ok: &[i32]) -> String {
    let out = Command::new("xdotool").args(args).env("DISPLAY", display).output().expect("xdotool runs");
    let code = out.status.code().unwrap_or(-1);
    assert!(ok.contains(&code), "xdotool {args:?} exited {code}: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Ids of visible windows whose name matches `name` (a regex for xdotool).
pub fn visible_windows(display: &str, name: &str) -> Vec<u32> {
    // `xdotool search` exits 1 when nothing matches: an answer, not a failure.
    xdotool_allowing(display, &["search", "--onlyvisible", "--name", name], &[0, 1])
        .lines()
        .filter_map(|l| l.trim().parse().ok())
        .collect()
}

/// Wait until a visible window named `name` exists and return its id.
pub fn wait_for_window(display: &str, name: &str) -> u32 {
    let deadline = Instant::now() + PATIENCE;
    loop {
        if let Some(id) = visible_windows(display, name).first() {
            return *id;
        }
        if Instant::now() >= deadline {
            panic!("no visible window named {name}; the display's windows:\n{}", window_tree(display));
        }
        thread::sleep(Duration::from_millis(100));
    }
}

/// Every window on the display with its name and map state (`xwininfo -root -tree`), and
/// what `xdotool search` says on stderr, for a failure message.
pub fn window_tree(display: &str) -> String {
    let run = |program: &str, args: &[&str]| match Command::new(program)
        .args(args)
        .env("DISPLAY", display)
        .output()
    {
        Ok(out) => format!(
            "$ {program} {}\n{}{}",
            args.join(" "),
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        ),
        Err(e) => format!("{program} did not run: {e}\n"),
    };
    run("xwininfo", &["-root", "-tree"]) + &run("xdotool", &["search", "--onlyvisible", "--name", "."])
}

/// Wait until no visible window named `name` is left.
pub fn wait_until_gone(display: &str, name: &str) {
    let deadline = Instant::now() + PATIENCE;
    while !visible_windows(display, name).is_empty() {
        assert!(Instant::now() < deadline, "window {name} is still visible");
        thread::sleep(Duration::from_millis(100));
    }
}

/// The window holding the input focus (`PointerRoot` is 1, none is 0).
pub fn focused_window(display: &str) -> u32 {
    use x11rb::protocol::xproto::ConnectionExt as _;
    let (conn, _) = x11rb::connect(Some(display)).expect("connect");
    conn.get_input_focus().expect("request").reply().expect("reply").focus
}

/// Wait until `window` holds the input focus.
pub fn wait_for_focus(display: &str, window: u32) {
    let deadline = Instant::now() + PATIENCE;
    while focused_window(display) != window {
        assert!(Instant::now() < deadline, "window {window} never got the focus");
        thread::sleep(Duration::from_millis(20));
    }
}

/// Ask `window` to close, as a window manager's close button does (`WM_DELETE_WINDOW`).
pub fn send_delete_window(display: &str, window: u32) {
    use x11rb::protocol::xproto::{ClientMessageEvent, ConnectionExt as _, EventMask};
    let (conn, _) = x11rb::connect(Some(display)).expect("connect");
    let atom =
        |name: &str| conn.intern_atom(false, name.as_bytes()).expect("intern").reply().expect("atom").atom;
    let protocols = atom("WM_PROTOCOLS");
    let delete = atom("WM_DELETE_WINDOW");
    let event = ClientMessageEvent::new(32, window, protocols, [delete, 0, 0, 0, 0]);
    conn.send_event(false, window, EventMask::NO_EVENT, event).expect("send");
    // A round trip: the server has taken the event before this returns.
    conn.get_input_focus().expect("request").reply().expect("reply");
}

#[derive(Debug, Clone, Copy)]
pub struct Rect {
    pub x: i32,
    pub y: i32,
    pub w: i32,
    pub h: i32,
}

pub fn geometry(display: &str, id: u32) -> Rect {
    let text = xdotool(display, &["getwindowgeometry", "--shell", &id.to_string()]);
    let field = |key: &str| -> i32 {
        text.lines()
            .find_map(|l| l.strip_prefix(key))
            .and_then(|v| v.trim().parse().ok())
            .unwrap_or_else(|| panic!("no {key} in `{text}`"))
    };
    Rect { x: field("X="), y: field("Y="), w: field("WIDTH="), h: field("HEIGHT=") }
}

pub fn xprop(display: &str, id: u32, property: &str) -> String {
    let out = Command::new("xprop")
        .args(["-id", &id.to_string(), property])
        .env("DISPLAY", display)
        .output()
        .expect("xprop runs");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Where screenshots are kept: `target/test-artifacts/operator`, beside the end-to-end tests'
/// (untracked, so a test run leaves the tree as it was).
pub fn artifacts_dir() -> PathBuf {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target/test-artifacts/operator");
    std::fs::create_dir_all(&dir).expect("artifacts dir");
    dir
}

/// Take screenshots (kept as `name`) until `painted` holds for one and return it; when
/// [`PATIENCE`] runs out, fail saying that `what` was never painted. For a paint the UI makes
/// on its own time (a window's first frame, a state change), instead of a fixed sleep that a
/// loaded machine overruns. `painted` says that the paint is there, not that it is right: the
/// test asserts on the returned shot.
pub fn wait_for_shot(display: &str, name: &str, what: &str, painted: impl Fn(&Shot) -> bool) -> Shot {
    let deadline = Instant::now() + PATIENCE;
    loop {
        let shot = Shot::take(display, name);
        if painted(&shot) {
            return shot;
        }
        if Instant::now() >= deadline {
            panic!(
                "{what} never painted within {PATIENCE:?} (last screenshot: {})",
                artifacts_dir().join(name).display()
            );
        }
        thread::sleep(Duration::from_millis(100));
    }
}

/// Click at `at` (from `window`'s top-left corner) and wait until `area` no longer looks as
/// in `before`: the UI has painted its answer (a menu opened, a choice shown). Returns the
/// screenshot, kept as `name`.
pub fn click_until_changed(
    display: &str,
    window: Rect,
    at: (i32, i32),
    before: &Shot,
    area: Rect,
    name: &str,
) -> Shot {
    click(display, window, at);
    let what = format!("an answer to the click at {at:?} in {area:?}");
    wait_for_shot(display, name, &what, |shot| shot.count_changed(before, area) > 100)
}

/// Move the pointer to `at` (from `window`'s top-left corner), let the UI see it hover, and
/// click the left button.
pub fn click(display: &str, window: Rect, at: (i32, i32)) {
    let (x, y) = (window.x + at.0, window.y + at.1);
    xdotool(display, &["mousemove", &x.to_string(), &y.to_string()]);
    thread::sleep(Duration::from_millis(200));
    xdotool(display, &["click", "1"]);
}

/// An RGB screenshot of the whole screen.
pub struct Shot {
    pub width: u32,
    pub height: u32,
    pub rgb: Vec<u8>,
}

impl Shot {
    /// Grab the root window with ImageMagick's `import`, keep it as `name` in the artifacts
    /// directory and decode it.
    pub fn take(display: &str, name: &str) -> Self {
        let path = artifacts_dir().join(name);
        let status = Command::new("import")
            .args(["-display", display, "-window", "root"])
            .arg(&path)
            .status()
            .expect("import runs");
        assert!(status.success(), "import failed");
        Self::load(&path)
    }

    pub fn load(path: &Path) -> Self {
        let file = std::fs::File::open(path).expect("screenshot exists");
        let mut decoder = png::Decoder::new(std::io::BufReader::new(file));
        decoder.set_transformations(png::Transformations::EXPAND | png::Transformations::STRIP_16);
        let mut reader = decoder.read_info().expect("png header");
        let size = reader.output_buffer_size().expect("png size");
        let mut buf = vec![0; size];
        let info = reader.next_frame(&mut buf).expect("png frame");
        let channels = info.color_type.samples();
        let rgb = buf[..info.buffer_size()]
            .chunks(channels)
            .flat_map(|px| if channels >= 3 { [px[0], px[1], px[2]] } else { [px[0], px[0], px[0]] })
            .collect();
        Self { width: info.width, height: info.height, rgb }
    }

    pub fn pixel(&self, x: i32, y: i32) -> [u8; 3] {
        let x = x.clamp(0, self.width as i32 - 1) as usize;
        let y = y.clamp(0, self.height as i32 - 1) as usize;
        let i = (y * self.width as usize + x) * 3;
        [self.rgb[i], self.rgb[i + 1], self.rgb[i + 2]]
    }

    /// How many pixels in `area` are within `tolerance` of `color` on every channel.
    pub fn count_near(&self, area: Rect, color: [u8; 3], tolerance: u8) -> usize {
        let mut n = 0;
        for y in area.y..area.y + area.h {
            for x in area.x..area.x + area.w {
                let p = self.pixel(x, y);
                if p.iter().zip(color).all(|(a, b)| a.abs_diff(b) <= tolerance) {
                    n += 1;
                }
            }
        }
        n
    }

    /// How many pixels in `area` differ from `other` (by more than a little on any channel).
    pub fn count_changed(&self, other: &Shot, area: Rect) -> usize {
        let mut n = 0;
        for y in area.y..area.y + area.h {
            for x in area.x..area.x + area.w {
                if self.pixel(x, y).iter().zip(other.pixel(x, y)).any(|(a, b)| a.abs_diff(b) > 8) {
                    n += 1;
                }
            }
        }
        n
    }

    /// Horizontal runs (start x, length) of pixels near `color` on row `y` inside `area`.
    pub fn runs(&self, area: Rect, y: i32, color: [u8; 3], tolerance: u8) -> Vec<(i32, i32)> {
        let mut runs = Vec::new();
        let mut start = None;
        for x in area.x..=area.x + area.w {
            let p = self.pixel(x, y);
            let near = x < area.x + area.w && p.iter().zip(color).all(|(a, b)| a.abs_diff(b) <= tolerance);
            match (near, start) {
                (true, None) => start = Some(x),
                (false, Some(s)) => {
                    runs.push((s, x - s));
                    start = None;
                }
                _ => {}
            }
        }
        runs
    }
}
