//! The MSAA backend through the accessibility tools, under Wine (`scripts/windows-build
//! --test`): `A11yTools` over `Msaa` reading `mcec-controls`, another process's standard
//! controls, which report what they are told, and (`mcec-controls ... own`) its panel that
//! serves its own `IAccessible` objects, with the default actions, `accSelect` and
//! `accFocus` that Wine's standard controls lack. The tests take one lock and run one at a
//! time (invoke acts on the one desktop).

#![cfg(windows)]

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::{self, Receiver};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use mcec_a11y::A11yTools;
use mcec_a11y::msaa::Msaa;
use mcec_a11y::requests::{FindRequest, GetTextRequest, InvokeRequest, QueryRequest, WaitForRequest};
use mcec_desktop::api::{DesktopConfig, DesktopTools};
use mcec_desktop::requests::{ClickRequest, ElementTarget, FocusRequest, WindowSelector};
use mcec_desktop_windows::WindowsDesktop;
use mcec_desktop_windows::clipboard::WindowsClipboard;
use mcec_rules::{ErrorCode, StopFlag, ToolError};
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
        Self::open_with(title, &[])
    }

    fn open_with(title: &str, more: &[&str]) -> Controls {
        let mut child = Command::new(exe())
            .args([title, "60", "60"])
            .args(more)
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

    /// Sends the program one line on stdin (`state`, `later MS`, `close`).
    fn tell(&mut self, line: &str) {
        let stdin = self.child.stdin.as_mut().expect("stdin");
        writeln!(stdin, "{line}").and_then(|()| stdin.flush()).expect("write to mcec-controls");
    }

    /// The own panel's state as the program holds it now (`STATE applied=...`); every `OWN`
    /// line printed before is skipped.
    fn own_state(&mut self) -> String {
        self.tell("state");
        self.until("STATE")
    }
}

fn tools() -> (A11yTools, tempfile::TempDir) {
    let (t, _, dir) = tools_and_desktop();
    (t, dir)
}

fn tools_and_desktop() -> (A11yTools, Arc<DesktopTools>, tempfile::TempDir) {
    let dir = tempfile::tempdir().expect("tempdir");
    let backend = WindowsDesktop::connect().expect("the Wine desktop");
    let desktop = Arc::new(DesktopTools::new(
        Arc::new(backend),
        DesktopConfig { artifact_dir: dir.path().to_path_buf() },
    ));
    (A11yTools::new(Arc::new(Msaa::new()), Arc::new(WindowsClipboard), Arc::clone(&desktop)), desktop, dir)
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

/// The error of a `find` that must not answer one element.
fn find_err(t: &A11yTools, c: &Controls, by: &str, value: &str) -> ToolError {
    t.find(&req::<FindRequest>(json!({"handle": c.hwnd, "by": by, "value": value})), &StopFlag::new())
        .map(|found| panic!("find {by}={value} answered {:?}", serde_json::to_value(found)))
        .unwrap_err()
}

/// The text `get-text` reads from the element `id`.
fn text_of(t: &A11yTools, id: &str) -> Result<Value, ToolError> {
    t.get_text(&req::<GetTextRequest>(json!({"elementId": id})), &StopFlag::new())
        .map(|r| serde_json::to_value(r).expect("json"))
}

fn id_of(e: &Value) -> String {
    e["elementId"].as_str().unwrap_or_else(|| panic!("no elementId in {e}")).to_string()
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
    // Never "the first": the label and the edit box are both named "Name:" (an edit takes
    // the label before it as its name); a role or state filter picks one.
    let both = t
        .find(
            &req::<FindRequest>(json!({"handle": c.hwnd, "by": "name", "value": "Name:"})),
            &StopFlag::new(),
        )
        .unwrap_err();
    assert_eq!(both.code, ErrorCode::AmbiguousSelector, "{both:?}");
    assert!(both.detail.contains("label") && both.detail.contains("text"), "{both:?}");
    let edit = t
        .find(
            &req::<FindRequest>(
                json!({"handle": c.hwnd, "by": "name", "value": "Name:", "states": ["editable"]}),
            ),
            &StopFlag::new(),
        )
        .expect("the editable one");
    assert_eq!(serde_json::to_value(edit).unwrap()["element"]["role"], "text");
    assert_eq!(find(&t, &c, "text", "hello msaa")["automationId"], "100");
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
fn the_element_endpoint_is_the_centre_of_the_button_and_a_click_there_presses_it() {
    let _g = serial();
    let c = Controls::open("mcec msaa endpoint");
    let (t, desktop, _dir) = tools_and_desktop();
    let ok = find(&t, &c, "name", "OK");
    let target = req::<ElementTarget>(json!({"elementId": ok["elementId"]}));
    let at = t.element_centre(&WindowSelector::default(), &target, &StopFlag::new()).expect("the centre");
    let b = &ok["bounds"];
    let (x, y) = (b["x"].as_i64().unwrap(), b["y"].as_i64().unwrap());
    assert_eq!(
        (i64::from(at.x), i64::from(at.y)),
        (x + b["width"].as_i64().unwrap() / 2, y + b["height"].as_i64().unwrap() / 2),
        "{ok}"
    );
    desktop
        .focus(&req::<FocusRequest>(json!({"handle": c.hwnd})), &StopFlag::new())
        .expect("focus the window");
    desktop
        .click(&req::<ClickRequest>(json!({"at": {"x": at.x, "y": at.y}})), &StopFlag::new())
        .expect("click the centre");
    assert_eq!(c.until("CLICKED"), "CLICKED id=1");
}

#[test]
fn a_hung_provider_costs_one_call_timeout_and_answers_unavailable() {
    let _g = serial();
    let c = Controls::open_with("mcec msaa hung", &["hang"]);
    let (t, _dir) = tools();
    let err = t
        .find(&req::<FindRequest>(json!({"handle": c.hwnd, "by": "name", "value": "OK"})), &StopFlag::new())
        .unwrap_err();
    assert_eq!(err.code, ErrorCode::Unavailable, "{err:?}");
    assert!(err.detail.contains("did not answer"), "{err:?}");
    assert_eq!(c.until("GETOBJECT"), "GETOBJECT hanging");
    // Another window still answers meanwhile: the stuck call's worker was abandoned.
    let other = Controls::open("mcec msaa after the hung one");
    assert_eq!(find(&t, &other, "name", "OK")["role"], "push-button");
}

#[test]
fn find_by_automation_id_answers_each_standard_control_by_its_control_id() {
    let _g = serial();
    let c = Controls::open("mcec msaa automationid");
    let (t, _dir) = tools();
    for (id, role, name) in [
        ("1", "push-button", "OK"),
        ("100", "text", "Name:"),
        ("101", "check-box", "Remember me"),
        ("102", "label", "Name:"),
    ] {
        let e = find(&t, &c, "automationid", id);
        assert_eq!(
            (e["role"].as_str(), e["name"].as_str(), e["automationId"].as_str(), e["via"].as_str()),
            (Some(role), Some(name), Some(id), Some("msaa")),
            "{e}"
        );
    }
    // The whole id, exactly: "10" is neither 100 nor 101, and no control has it.
    assert_eq!(find_err(&t, &c, "automationid", "10").code, ErrorCode::ElementNotFound);
    assert_eq!(find_err(&t, &c, "automationid", "OK").code, ErrorCode::ElementNotFound);
}

#[test]
fn set_text_is_read_back_by_get_text() {
    let _g = serial();
    let c = Controls::open("mcec msaa set text");
    let (t, _dir) = tools();
    let edit = id_of(&find(&t, &c, "automationid", "100"));
    assert_eq!(text_of(&t, &edit).expect("get-text before")["text"], "hello msaa");
    let set = t
        .invoke(
            &req::<InvokeRequest>(
                json!({"elementId": edit, "action": "setText", "text": "set by mcec, read back"}),
            ),
            &StopFlag::new(),
        )
        .expect("set the edit box's text");
    assert_eq!(serde_json::to_value(set).unwrap()["element"]["via"], "msaa");
    assert_eq!(c.until("EDIT"), "EDIT text=set by mcec, read back");
    let read = text_of(&t, &edit).expect("get-text after");
    assert_eq!(
        (read["text"].as_str(), read["source"].as_str()),
        (Some("set by mcec, read back"), Some("accessibility")),
        "{read}"
    );
    // Found by its new contents, no longer by the old.
    assert_eq!(id_of(&find(&t, &c, "text", "read back")), edit);
    assert_eq!(find_err(&t, &c, "text", "hello msaa").code, ErrorCode::ElementNotFound);
}

#[test]
fn wait_for_sees_a_control_made_later_and_two_of_one_name_are_ambiguous() {
    let _g = serial();
    let mut c = Controls::open("mcec msaa later");
    let (t, _dir) = tools();
    let stop = StopFlag::new();
    let later = json!({"handle": c.hwnd, "by": "name", "value": "Later", "timeoutMs": 20_000});
    // Not there before the program is asked to make it.
    assert_eq!(find_err(&t, &c, "name", "Later").code, ErrorCode::ElementNotFound);
    c.tell("later 1500");
    let waited = t.wait_for(&req::<WaitForRequest>(later.clone()), &stop).expect("wait-for appears");
    let first = serde_json::to_value(waited).expect("json")["element"].clone();
    assert_eq!(
        (first["role"].as_str(), first["automationId"].as_str(), first["via"].as_str()),
        (Some("push-button"), Some("103"), Some("msaa")),
        "{first}"
    );
    assert_eq!(c.until("LATER"), "LATER id=103");
    // A second control of the same name: never "the first", both listed.
    c.tell("later 0");
    assert_eq!(c.until("LATER"), "LATER id=104");
    let second = find(&t, &c, "automationid", "104");
    let listed = |err: &ToolError| {
        assert_eq!(err.code, ErrorCode::AmbiguousSelector, "{err:?}");
        assert!(err.detail.starts_with("2 elements match"), "{err:?}");
        for e in [&first, &second] {
            assert!(err.detail.contains(&format!("{} push-button \"Later\"", id_of(e))), "{e} in {err:?}");
        }
    };
    listed(&find_err(&t, &c, "name", "Later"));
    listed(&t.wait_for(&req::<WaitForRequest>(later), &stop).expect_err("wait-for of two"));
    let err = t
        .invoke(&req::<InvokeRequest>(json!({"handle": c.hwnd, "by": "name", "value": "Later"})), &stop)
        .expect_err("invoke of two");
    listed(&err);
    // The refused invoke pressed nothing: the next press the program reports is the one asked
    // for by id (posted to the same thread's queue, so a press before it would come first).
    t.invoke(&req::<InvokeRequest>(json!({"elementId": id_of(&second)})), &stop).expect("press the second");
    assert_eq!(c.until("CLICKED"), "CLICKED id=104");
}

#[test]
fn wait_for_sees_the_check_box_take_the_focus_when_clicked() {
    let _g = serial();
    let c = Controls::open("mcec msaa wait");
    let (t, desktop, _dir) = tools_and_desktop();
    let stop = StopFlag::new();
    let check = json!({"handle": c.hwnd, "by": "name", "value": "Remember me"});
    let before = find(&t, &c, "name", "Remember me");
    assert!(!before["states"].as_array().unwrap().contains(&json!("focused")), "{before}");
    // Wine's oleacc answers accSelect (invoke's `focus`) with E_NOTIMPL, so the focus moves
    // the way an operator moves it: a click on the control, at its element endpoint.
    let target = req::<ElementTarget>(json!({"elementId": before["elementId"]}));
    let at = t.element_centre(&WindowSelector::default(), &target, &stop).expect("the centre");
    desktop.focus(&req::<FocusRequest>(json!({"handle": c.hwnd})), &stop).expect("focus the window");
    desktop.click(&req::<ClickRequest>(json!({"at": {"x": at.x, "y": at.y}})), &stop).expect("click");
    let mut wait = check;
    wait["condition"] = json!("focused");
    wait["timeoutMs"] = json!(10_000);
    let waited = t.wait_for(&req::<WaitForRequest>(wait), &stop).expect("wait-for focused");
    let waited = serde_json::to_value(waited).expect("json");
    assert!(waited["element"]["states"].as_array().unwrap().contains(&json!("focused")), "{waited}");
    assert_eq!(waited["element"]["via"], "msaa", "{waited}");
    // The click also checked it, and the state and the offered action follow.
    assert_eq!(c.until("CHECK"), "CHECK id=101 state=1");
    let after = find(&t, &c, "name", "Remember me");
    assert!(after["states"].as_array().unwrap().contains(&json!("checked")), "{after}");
    assert_eq!(after["actions"], json!(["Uncheck"]), "{after}");
}

#[test]
fn an_element_of_a_closed_window_is_stale_and_never_the_next_windows() {
    let _g = serial();
    let mut c = Controls::open_with("mcec msaa stale", &["own"]);
    let (t, _dir) = tools();
    let ok = id_of(&find(&t, &c, "name", "OK"));
    let edit = id_of(&find(&t, &c, "automationid", "100"));
    let apply = id_of(&find(&t, &c, "name", "Apply"));
    // The window closes; its program goes on running.
    c.tell("close");
    assert_eq!(c.until("CLOSED"), "CLOSED");
    // A window like it in its place: the same title, the same controls.
    let mut next = Controls::open_with("mcec msaa stale", &["own"]);
    let stop = StopFlag::new();
    let set_text = json!({"elementId": edit, "action": "setText", "text": "stale"});
    for (id, ask) in
        [(&ok, json!({"elementId": ok})), (&edit, set_text), (&apply, json!({"elementId": apply}))]
    {
        let err = t.invoke(&req::<InvokeRequest>(ask), &stop).expect_err("an element of a closed window");
        assert_eq!(err.code, ErrorCode::StaleElement, "{id}: {err:?}");
        assert!(err.detail.contains("find it again"), "{err:?}");
        let err = text_of(&t, id).expect_err("get-text of a closed window's element");
        assert_eq!(err.code, ErrorCode::StaleElement, "{id}: {err:?}");
    }
    // The next window was not touched: its edit box and its panel are as they started, and
    // what is found in it now are its own elements.
    let next_edit = find(&t, &next, "automationid", "100");
    assert_ne!(id_of(&next_edit), edit, "{next_edit}");
    assert_eq!(text_of(&t, &id_of(&next_edit)).expect("get-text")["text"], "hello msaa");
    assert_eq!(next.own_state(), "STATE applied=0 bold=0 selected=- focus=-");
    assert_ne!(id_of(&find(&t, &next, "name", "Apply")), apply);
}

/// Wine's own `winecfg`, ended when dropped.
struct Winecfg(Child);

impl Drop for Winecfg {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[test]
fn winecfgs_dialog_is_read_by_name_and_role() {
    let _g = serial();
    let _w = Winecfg(Command::new("winecfg.exe").spawn().expect("start winecfg"));
    let (t, _dir) = tools();
    let window = json!({"window": "Wine configuration"});
    // The window appears after the program starts: polled, with a hang guard, not timed.
    let mut query = None;
    for _ in 0..150 {
        let q = req::<QueryRequest>(json!({"window": "Wine configuration", "depth": 4}));
        if let Ok(found) = t.query(&q, &StopFlag::new()) {
            query = Some(serde_json::to_value(found).expect("json"));
            break;
        }
        std::thread::sleep(Duration::from_millis(200));
    }
    let query = query.expect("winecfg's window within 30 s");
    let buttons: Vec<&str> = query["elements"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["role"] == "push-button" && e["depth"] == 1)
        .map(|e| e["name"].as_str().unwrap())
        .collect();
    for name in ["OK", "Cancel", "Apply"] {
        assert!(buttons.contains(&name), "{name} not among {buttons:?}");
    }
    let mut find = window.clone();
    find["by"] = json!("name");
    find["value"] = json!("Apply");
    let apply = t.find(&req::<FindRequest>(find), &StopFlag::new()).expect("find Apply");
    let apply = serde_json::to_value(apply).expect("json")["element"].clone();
    assert_eq!(apply["role"], "push-button", "{apply}");
    assert_eq!(apply["via"], "msaa", "{apply}");
    assert!(apply["bounds"]["width"].as_u64().unwrap_or(0) > 0, "{apply}");
    let mut label = window;
    label["by"] = json!("name");
    label["value"] = json!("Windows Version:");
    label["role"] = json!("label");
    let text = t.get_text(&req::<GetTextRequest>(label), &StopFlag::new()).expect("get-text of a label");
    let text = serde_json::to_value(text).expect("json");
    assert_eq!(text["text"], "Windows Version:", "{text}");
    assert_eq!(text["element"]["via"], "msaa", "{text}");
}

/// `invoke` on the own panel: `action` on the element `name`, answered with what was done.
fn invoke_own(
    t: &A11yTools,
    c: &Controls,
    name: &str,
    action: &str,
    stop: &StopFlag,
) -> Result<Value, ErrorCode> {
    t.invoke(
        &req::<InvokeRequest>(json!({"handle": c.hwnd, "by": "name", "value": name, "action": action})),
        stop,
    )
    .map(|r| serde_json::to_value(r).expect("json"))
    .map_err(|e| e.code)
}

fn states(e: &Value) -> Vec<&str> {
    e["states"]
        .as_array()
        .unwrap_or_else(|| panic!("no states in {e}"))
        .iter()
        .filter_map(Value::as_str)
        .collect()
}

#[test]
fn the_programs_own_accessible_objects_are_found_by_role_and_name() {
    let _g = serial();
    let c = Controls::open_with("mcec msaa own find", &["own"]);
    let (t, _dir) = tools();
    // The own objects, with the roles, names, actions and states they serve.
    let apply = find(&t, &c, "name", "Apply");
    assert_eq!(
        (apply["role"].as_str(), apply["via"].as_str()),
        (Some("push-button"), Some("msaa")),
        "{apply}"
    );
    assert_eq!(apply["actions"], json!(["Press"]), "{apply}");
    assert!(states(&apply).contains(&"focusable") && !states(&apply).contains(&"focused"), "{apply}");
    let bold = find(&t, &c, "name", "Bold");
    assert_eq!(bold["role"], "check-box", "{bold}");
    assert_eq!(bold["actions"], json!(["Check"]), "{bold}");
    let list = find(&t, &c, "role", "list");
    assert_eq!(list["name"], "Colours", "{list}");
    let green = find(&t, &c, "name", "Green");
    assert_eq!(green["role"], "list-item", "{green}");
    assert!(states(&green).contains(&"selectable") && !states(&green).contains(&"selected"), "{green}");
    // Bounds are the program's layout in desktop pixels: Apply at (10, 10) of the panel, the
    // list's items 22 px apart, all inside the window.
    let (wx, wy, ww, wh) = window_rect(&t, &c);
    let b = |e: &Value, k: &str| e["bounds"][k].as_i64().unwrap_or_else(|| panic!("bounds of {e}"));
    assert_eq!((b(&apply, "width"), b(&apply, "height")), (80, 26), "{apply}");
    let red = find(&t, &c, "name", "Red");
    assert_eq!(b(&green, "y") - b(&red, "y"), 22, "{red} {green}");
    assert_eq!(b(&green, "x"), b(&apply, "x") + 2, "{apply} {green}");
    for e in [&apply, &bold, &list, &green] {
        assert!(
            b(e, "x") >= wx
                && b(e, "y") >= wy
                && b(e, "x") + b(e, "width") <= wx + ww
                && b(e, "y") + b(e, "height") <= wy + wh,
            "{e} in {:?}",
            (wx, wy, ww, wh)
        );
    }
    // Never "the first": three list items, two check boxes (Wine's and the program's own).
    let items = t
        .find(
            &req::<FindRequest>(json!({"handle": c.hwnd, "by": "role", "value": "list-item"})),
            &StopFlag::new(),
        )
        .unwrap_err();
    assert_eq!(items.code, ErrorCode::AmbiguousSelector, "{items:?}");
    assert!(["Red", "Green", "Blue"].iter().all(|n| items.detail.contains(n)), "{items:?}");
    // The query walks from the window through Wine's objects into the program's.
    let q = t.query(&req::<QueryRequest>(json!({"handle": c.hwnd})), &StopFlag::new()).expect("query");
    let q = serde_json::to_value(q).expect("json");
    let seen: Vec<(&str, &str)> = q["elements"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| (e["role"].as_str().unwrap(), e["name"].as_str().unwrap()))
        .collect();
    for want in [("panel", "Own controls"), ("list", "Colours"), ("list-item", "Blue"), ("push-button", "OK")]
    {
        assert!(seen.contains(&want), "{want:?} not in {seen:?}");
    }
}

#[test]
fn invoke_does_the_own_elements_default_actions() {
    let _g = serial();
    let mut c = Controls::open_with("mcec msaa own invoke", &["own"]);
    let (t, _dir) = tools();
    let stop = StopFlag::new();
    let pressed = invoke_own(&t, &c, "Apply", "press", &stop).expect("press Apply");
    assert_eq!(pressed["done"], "Press", "{pressed}");
    assert_eq!(c.until("OWN"), "OWN press applied=1 bold=0 selected=- focus=-");
    let toggled = invoke_own(&t, &c, "Bold", "toggle", &stop).expect("toggle Bold");
    assert_eq!(toggled["done"], "Check", "{toggled}");
    assert_eq!(c.until("OWN"), "OWN toggle applied=1 bold=1 selected=- focus=-");
    // The answer's element is read again after the action: its state and action follow.
    assert!(states(&toggled["element"]).contains(&"checked"), "{toggled}");
    assert_eq!(toggled["element"]["actions"], json!(["Uncheck"]), "{toggled}");
    // A list item offers no default action: `press` is refused, naming what it does offer.
    let err = t
        .invoke(&req::<InvokeRequest>(json!({"handle": c.hwnd, "by": "name", "value": "Red"})), &stop)
        .unwrap_err();
    assert_eq!(err.code, ErrorCode::BadArguments, "{err:?}");
    assert!(err.detail.contains("select") && err.detail.contains("focus"), "{err:?}");
    assert_eq!(c.own_state(), "STATE applied=1 bold=1 selected=- focus=-");
}

#[test]
fn select_and_focus_move_the_own_lists_selection_and_focus() {
    let _g = serial();
    let mut c = Controls::open_with("mcec msaa own select", &["own"]);
    let (t, _dir) = tools();
    let stop = StopFlag::new();
    let selected = invoke_own(&t, &c, "Green", "select", &stop).expect("select Green");
    assert_eq!(selected["done"], "select", "{selected}");
    assert_eq!(c.until("OWN"), "OWN select applied=0 bold=0 selected=Green focus=-");
    assert!(states(&selected["element"]).contains(&"selected"), "{selected}");
    let focused = invoke_own(&t, &c, "Blue", "focus", &stop).expect("focus Blue");
    assert_eq!(focused["done"], "focus", "{focused}");
    assert_eq!(c.until("OWN"), "OWN focus applied=0 bold=0 selected=Green focus=Blue");
    assert!(states(&focused["element"]).contains(&"focused"), "{focused}");
    // The states mcec reads are the program's: Green still selected and not focused.
    let green = find(&t, &c, "name", "Green");
    assert!(states(&green).contains(&"selected") && !states(&green).contains(&"focused"), "{green}");
    // The own button takes the focus too (the list item loses it).
    invoke_own(&t, &c, "Apply", "focus", &stop).expect("focus Apply");
    assert_eq!(c.until("OWN"), "OWN focus applied=0 bold=0 selected=Green focus=Apply");
    assert!(!states(&find(&t, &c, "name", "Blue")).contains(&"focused"));
    // The button is not selectable: refused before anything is called.
    assert_eq!(invoke_own(&t, &c, "Apply", "select", &stop).unwrap_err(), ErrorCode::BadArguments);
    assert_eq!(c.own_state(), "STATE applied=0 bold=0 selected=Green focus=Apply");
}

#[test]
fn invoke_on_the_own_objects_is_refused_while_stopped_and_changes_nothing() {
    let _g = serial();
    let mut c = Controls::open_with("mcec msaa own stopped", &["own"]);
    let (t, _dir) = tools();
    let stop = StopFlag::new();
    // Before the stop: the same calls act (so the refusals below are the stop's).
    invoke_own(&t, &c, "Apply", "press", &stop).expect("press Apply");
    invoke_own(&t, &c, "Red", "select", &stop).expect("select Red");
    assert_eq!(c.own_state(), "STATE applied=1 bold=0 selected=Red focus=-");
    // By element id (found before the stop), so the one check left is invoke's own: the
    // desktop's input lock and stop gate around the call (a selector's walk would refuse
    // before that).
    let id = |name: &str| find(&t, &c, "name", name)["elementId"].as_str().expect("id").to_string();
    let ids = [("Apply", "press"), ("Bold", "toggle"), ("Green", "select"), ("Blue", "focus")]
        .map(|(n, a)| (id(n), a));
    stop.set();
    for (id, action) in &ids {
        let err = t
            .invoke(&req::<InvokeRequest>(json!({"elementId": id, "action": action})), &stop)
            .expect_err("refused while stopped");
        assert_eq!(err.code, ErrorCode::EmergencyStopped, "{id} {action}: {err:?}");
    }
    assert_eq!(invoke_own(&t, &c, "Apply", "press", &stop).unwrap_err(), ErrorCode::EmergencyStopped);
    assert_eq!(c.own_state(), "STATE applied=1 bold=0 selected=Red focus=-");
}
