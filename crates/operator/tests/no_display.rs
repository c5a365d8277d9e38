//! Without a reachable display the UI returns an error instead of panicking or exiting, so
//! the binary can log it and serve headless.

use std::process::{Command, Stdio};

fn run_demo(display: Option<&str>) -> (Option<i32>, String) {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_mcec-operator-demo"));
    cmd.args(["overlay", "prompt"])
        .env_remove("WAYLAND_DISPLAY")
        .env_remove("WAYLAND_SOCKET")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    match display {
        Some(d) => cmd.env("DISPLAY", d),
        None => cmd.env_remove("DISPLAY"),
    };
    let out = cmd.output().expect("demo runs");
    (out.status.code(), String::from_utf8_lossy(&out.stdout).into_owned())
}

#[test]
fn unset_display_is_an_error_not_a_crash() {
    let (code, stdout) = run_demo(None);
    assert_eq!(code, Some(3), "{stdout}");
    assert!(stdout.contains("exit error: no X display"), "{stdout}");
}

#[test]
fn unreachable_display_is_an_error_not_a_crash() {
    // :89 is in this crate's range and no test starts a server on it.
    let (code, stdout) = run_demo(Some(":89"));
    assert_eq!(code, Some(3), "{stdout}");
    assert!(stdout.contains("exit error: could not start the window event loop"), "{stdout}");
}
