//! The MSAA backend through the accessibility tools, under Wine (`scripts/windows-build
//! --test`): `A11yTools` over `Msaa` reading `mcec-controls`, another process's standard
//! controls, which report what they are told. The tests take one lock and run one at a time
//! (invoke acts on the one desktop).

#![cfg(windows)]

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::{self, Receiver};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use mcec_a11y::A11yTools;
use mcec_a11y::msaa::Msaa;
use mcec_a11y::requests::{FindRequest, GetTextRequest, InvokeRequest, QueryRequest};
use mcec_desktop::api::{DesktopConfig, DesktopTools};
use mcec_desktop_windows::WindowsDesktop;
use mcec_desktop_windows::clipboard::WindowsClipboard;
use mcec_rules::{ErrorCode, StopFlag};
use serde_json::{Value, json};

static SERIAL: Mutex<()> = Mutex::new(());

fn serial() -> MutexGuard<'static, ()> {
    SERIAL.lock().unwrap_or_else(|p| p.into_inner())
}

/// A running `mcec-controls` and the lines it printed.
struct Controls {
    child: Child,
    lines: Receiver<String>,
    hwnd: u64,
}

impl Drop for Controls {
    fn drop(&mut self) {
        drop(self.child.stdin.take());
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The test program beside this test's `deps` directory (see desktop_wine.rs for why not
/// `CARGO_BIN_EXE_`).
fn exe() -> String {
    let me = std::env::current_exe().expect("the test's own path");
    let dir = me.parent().and_then(|deps| deps.parent()).expect("target/<profile>/deps");
    dir.join("mcec-controls.exe").to_string_lossy().into_owned()
}

impl Controls {
    fn open(title: &str) -> Controls {
        let mut child = Command::new(exe())
            .args([title, "60", "60"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .expect("start mcec-controls (scripts/windows-build builds it)");
        let out = child.stdout.take().expect("stdout");
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(out).lines().map_while(Result::ok) {
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        let mut c = Controls { child, lines: rx, hwnd: 0 };
        let ready = c.next();
        assert!(ready.starts_with("READY"), "{ready}");
        let hwnd = ready.split_whitespace().find_map(|w| w.strip_prefix("hwnd=0x")).expect("hwnd");
        c.hwnd = u64::from_str_radix(hwnd, 16).expect("hwnd");
        c
    }

    fn next(&self) -> String {
        // A hang guard, not a timed assertion.
        self.lines.recv_timeout(Duration::from_secs(30)).expect("mcec-controls said nothing")
    }

    /// The first line starting with `prefix` (earlier lines are skipped).
    fn until(&self, prefix: &str) -> String {
        loop {
            let line = self.next();
            if line.starts_with(prefix) {
                return line;
            }
        }
    }
}

fn tools() -> (A11yTools, tempfile::TempDir) {
    let dir = tempfile::tempdir().expect("tempdir");
    let backend = WindowsDesktop::connect().expect("the Wine desktop");
    let desktop = Arc::new(DesktopTools::new(
        Arc::new(backend),
        DesktopConfig { artifact_dir: dir.path().to_path_buf() },
    ));
    (A11yTools::new(Arc::new(Msaa::new()), Arc::new(WindowsClipboard), desktop), dir)
}

fn req<T: serde::de::DeserializeOwned>(v: Value) -> T {
    serde_json::from_value(v).expect("a valid request")
}

fn find(t: &A11yTools, c: &Controls, by: &str, value: &str) -> Value {
    let found = t
        .find(&req::<FindRequest>(json!({"handle": c.hwnd, "by": by, "value": value})), &StopFlag::new())
        .unwrap_or_else(|e| panic!("find {by}={value}: {e:?}"));
    serde_json::to_value(found).expect("json")["element"].clone()
}

fn window_rect(t: &A11yTools, c: &Controls) -> (i64, i64, i64, i64) {
    let q = t
        .query(&req::<QueryRequest>(json!({"handle": c.hwnd, "depth": 1})), &StopFlag::new())
        .expect("query");
    let q = serde_json::to_value(q).expect("json");
    let b = &q["elements"][0]["bounds"];
    let n = |k: &str| b[k].as_i64().unwrap_or_else(|| panic!("root bounds {b}"));
    (n("x"), n("y"), n("width"), n("height"))
}

#[test]
fn find_by_name_answers_the_button_with_its_role_and_bounds_inside_the_window() {
    let _g = serial();
    let c = Controls::open("mcec msaa find");
    let (t, _dir) = tools();
    let ok = find(&t, &c, "name", "OK");
    assert_eq!(ok["role"], "push-button", "{ok}");
    assert_eq!(ok["via"], "msaa", "{ok}");
    assert_eq!(ok["automationId"], "1", "{ok}");
    assert!(ok["states"].as_array().unwrap().contains(&json!("enabled")), "{ok}");
    let (wx, wy, ww, wh) = window_rect(&t, &c);
    let b = &ok["bounds"];
    let (x, y, w, h) = (
        b["x"].as_i64().unwrap(),
        b["y"].as_i64().unwrap(),
        b["width"].as_i64().unwrap(),
        b["height"].as_i64().unwrap(),
    );
    assert_eq!((w, h), (90, 28), "{ok}");
    assert!(x >= wx && y >= wy && x + w <= wx + ww && y + h <= wy + wh, "{ok} in {:?}", (wx, wy, ww, wh));
    let check = find(&t, &c, "name", "Remember me");
    assert_eq!(check["role"], "check-box", "{check}");
    // By role: the OK button and the check box are both of the Button class, but only one
    // is a push button.
    let by_role = t
        .find(
            &req::<FindRequest>(json!({"handle": c.hwnd, "by": "role", "value": "push-button"})),
            &StopFlag::new(),
        )
        .expect("find by role");
    assert_eq!(serde_json::to_value(by_role).unwrap()["element"]["name"], "OK");
    let none = t
        .find(
            &req::<FindRequest>(json!({"handle": c.hwnd, "by": "name", "value": "Cancel"})),
            &StopFlag::new(),
        )
        .unwrap_err();
    assert_eq!(none.code, ErrorCode::ElementNotFound, "{none:?}");
}

#[test]
fn query_lists_the_controls_and_get_text_reads_the_edit_box() {
    let _g = serial();
    let c = Controls::open("mcec msaa query");
    let (t, _dir) = tools();
    let q = t.query(&req::<QueryRequest>(json!({"handle": c.hwnd})), &StopFlag::new()).expect("query");
    let q = serde_json::to_value(q).expect("json");
    let roles: Vec<(String, String)> = q["elements"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| (e["role"].as_str().unwrap().to_string(), e["name"].as_str().unwrap().to_string()))
        .collect();
    for want in [("push-button", "OK"), ("check-box", "Remember me"), ("label", "Name:")] {
        assert!(roles.iter().any(|(r, n)| r == want.0 && n == want.1), "{want:?} not in {roles:?}");
    }
    assert!(roles.iter().any(|(r, _)| r == "text"), "no edit box in {roles:?}");
    let edit = t
        .get_text(
            &req::<GetTextRequest>(json!({"handle": c.hwnd, "by": "role", "value": "text"})),
            &StopFlag::new(),
        )
        .expect("get-text of the edit box");
    let edit = serde_json::to_value(edit).expect("json");
    assert_eq!(edit["text"], "hello msaa", "{edit}");
    assert_eq!(edit["source"], "accessibility", "{edit}");
    assert_eq!(edit["element"]["via"], "msaa", "{edit}");
}

#[test]
fn invoke_presses_the_button_toggles_the_check_box_and_sets_the_text() {
    let _g = serial();
    let c = Controls::open("mcec msaa invoke");
    let (t, _dir) = tools();
    let stop = StopFlag::new();
    let pressed = t
        .invoke(&req::<InvokeRequest>(json!({"handle": c.hwnd, "by": "name", "value": "OK"})), &stop)
        .expect("invoke the button");
    assert_eq!(serde_json::to_value(pressed).unwrap()["element"]["via"], "msaa");
    assert_eq!(c.until("CLICKED"), "CLICKED id=1");
    t.invoke(
        &req::<InvokeRequest>(
            json!({"handle": c.hwnd, "by": "name", "value": "Remember me", "action": "toggle"}),
        ),
        &stop,
    )
    .expect("toggle the check box");
    assert_eq!(c.until("CHECK"), "CHECK id=101 state=1");
    t.invoke(
        &req::<InvokeRequest>(
            json!({"handle": c.hwnd, "by": "role", "value": "text", "action": "setText", "text": "set by mcec"}),
        ),
        &stop,
    )
    .expect("set the edit box's text");
    assert_eq!(c.until("EDIT"), "EDIT text=set by mcec");
    // Refused while stopped, before anything is done.
    stop.set();
    let err = t
        .invoke(&req::<InvokeRequest>(json!({"handle": c.hwnd, "by": "name", "value": "OK"})), &stop)
        .unwrap_err();
    assert_eq!(err.code, ErrorCode::EmergencyStopped, "{err:?}");
}

#[test]
fn an_element_of_a_closed_window_is_stale() {
    let _g = serial();
    let c = Controls::open("mcec msaa stale");
    let (t, _dir) = tools();
    let id = find(&t, &c, "name", "OK")["elementId"].as_str().expect("id").to_string();
    drop(c);
    let err = t.invoke(&req::<InvokeRequest>(json!({"elementId": id})), &StopFlag::new()).unwrap_err();
    assert_eq!(err.code, ErrorCode::StaleElement, "{err:?}");
}
