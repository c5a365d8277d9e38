//! A headless desk for the provenance tests: an outer Xvfb (the operator's screen) with an
//! inner Xephyr window on it (the session under test). Keys XTEST-injected on the outer
//! display reach the inner one through Xephyr's own keyboard, so the inner server sees them
//! as physical; keys injected on the inner display come from its XTEST device.
//!
//! Each server picks its own free display number (`-displayfd`, see `xserver`), so parallel
//! test processes never collide; the servers are stopped by PID on drop.

#![allow(dead_code, reason = "each test binary uses a different part of the harness")]

use std::process::{Child, Command, Stdio};
use std::sync::{Mutex, MutexGuard, PoisonError};
use std::thread::sleep;

use crate::xserver::{spawn_server, stop_server};
use std::time::{Duration, Instant};

static SERIAL: Mutex<()> = Mutex::new(());

/// Tests that press keys on a shared desk run one at a time.
pub fn serial() -> MutexGuard<'static, ()> {
    SERIAL.lock().unwrap_or_else(PoisonError::into_inner)
}

pub struct Harness {
    pub outer: String,
    pub inner: String,
    outer_srv: Option<Child>,
    inner_srv: Option<Child>,
    pub xephyr_window: String,
}

fn answers(display: &str) -> bool {
    Command::new("xdpyinfo")
        .args(["-display", display])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

fn wait_for_display(display: &str) -> Result<(), String> {
    let deadline = Instant::now() + Duration::from_secs(15);
    while Instant::now() < deadline {
        if answers(display) {
            return Ok(());
        }
        sleep(Duration::from_millis(50));
    }
    Err(format!("display {display} never answered"))
}

fn stop(child: &mut Option<Child>) {
    if let Some(mut c) = child.take() {
        stop_server(&mut c);
    }
}

/// Runs a command with `DISPLAY` set; returns stdout.
pub fn run_on(display: &str, program: &str, args: &[&str]) -> Result<String, String> {
    let out = Command::new(program)
        .args(args)
        .env("DISPLAY", display)
        .stderr(Stdio::piped())
        .output()
        .map_err(|e| format!("{program}: {e}"))?;
    if !out.status.success() {
        return Err(format!("{program} {args:?} on {display}: {}", String::from_utf8_lossy(&out.stderr)));
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

impl Harness {
    pub fn start() -> Result<Harness, String> {
        let outer_args = ["-screen", "0", "1280x1024x24", "-nolisten", "tcp", "-noreset"];
        let (outer_srv, outer) = spawn_server("Xvfb", &outer_args, &[])?;
        let mut h = Harness {
            outer: outer.clone(),
            inner: String::new(),
            outer_srv: Some(outer_srv),
            inner_srv: None,
            xephyr_window: String::new(),
        };
        wait_for_display(&h.outer)?;
        run_on(&h.outer, "xset", &["r", "off"])?;
        let inner_args = ["-screen", "1024x768", "-ac", "-noreset", "-nolisten", "tcp", "-no-host-grab"];
        let (inner_srv, inner) = spawn_server("Xephyr", &inner_args, &[("DISPLAY", outer.as_str())])?;
        h.inner = inner;
        h.inner_srv = Some(inner_srv);
        wait_for_display(&h.inner)?;
        run_on(&h.inner, "xset", &["r", "off"])?;
        let w = run_on(&h.outer, "xdotool", &["search", "--sync", "--class", "Xephyr"])?;
        h.xephyr_window = w.lines().next().unwrap_or_default().trim().to_owned();
        run_on(&h.outer, "xdotool", &["windowfocus", "--sync", &h.xephyr_window])?;
        run_on(&h.outer, "xdotool", &["mousemove", "--window", &h.xephyr_window, "200", "200"])?;
        Ok(h)
    }

    /// One plain Xvfb with extra server arguments (no inner session).
    pub fn lone(extra: &[&str]) -> Result<Harness, String> {
        let mut args = vec!["-screen", "0", "640x480x24", "-nolisten", "tcp", "-noreset"];
        args.extend_from_slice(extra);
        let (srv, display) = spawn_server("Xvfb", &args, &[])?;
        let h = Harness {
            outer: display.clone(),
            inner: display,
            outer_srv: Some(srv),
            inner_srv: None,
            xephyr_window: String::new(),
        };
        wait_for_display(&h.outer)?;
        Ok(h)
    }

    /// Presses keys as the operator (XTEST on the outer display).
    pub fn physical_key(&self, keys: &[&str]) -> Result<(), String> {
        let mut args = vec!["key"];
        args.extend_from_slice(keys);
        run_on(&self.outer, "xdotool", &args).map(|_| ())
    }

    /// Presses keys as an agent would (XTEST on the inner display).
    pub fn injected_key(&self, keys: &[&str]) -> Result<(), String> {
        let mut args = vec!["key", "--delay", "0"];
        args.extend_from_slice(keys);
        run_on(&self.inner, "xdotool", &args).map(|_| ())
    }

    pub fn physical_click(&self) -> Result<(), String> {
        run_on(
            &self.outer,
            "xdotool",
            &["mousemove", "--window", &self.xephyr_window, "300", "300", "click", "1"],
        )
        .map(|_| ())
    }

    pub fn injected_click(&self) -> Result<(), String> {
        run_on(&self.inner, "xdotool", &["click", "1"]).map(|_| ())
    }

    /// Stops the inner server (the session's display goes away).
    pub fn kill_inner(&mut self) {
        stop(&mut self.inner_srv);
    }
}

impl Drop for Harness {
    fn drop(&mut self) {
        stop(&mut self.inner_srv);
        stop(&mut self.outer_srv);
    }
}
