//! The `wlr-foreign-toplevel-management` lister against a real sway 1.7, which implements the
//! protocol beside its IPC: the IPC's `GET_TREE` is the independent witness of what the
//! lister reports and does. The test windows are `foot` (Wayland-native) with an app id and
//! title of the test's choosing.

mod common;

use std::process::Child;

use common::{Sway, until};
use mcec_desktop::seams::{WindowManager, WindowOp};
use mcec_desktop::types::Point;
use mcec_desktop_wayland::WlrDesktop;
use mcec_desktop_wayland::toplevel::{ForeignToplevels, NO_GEOMETRY, Toplevel};
use mcec_rules::ErrorCode;

fn lister(sway: &Sway) -> ForeignToplevels {
    ForeignToplevels::connect(&sway.runtime_dir.join(&sway.wayland_display))
        .expect("the foreign-toplevel lister")
}

/// Starts `foot` with `app_id` and `title`, idle.
fn foot(sway: &Sway, app_id: &str, title: &str) -> Child {
    sway.client_command(&["foot", "--app-id", app_id, "--title", title, "sh", "-c", "sleep 600"])
        .spawn()
        .expect("foot")
}

fn end(mut child: Child) {
    let _ = child.kill();
    let _ = child.wait();
}

/// The toplevel with `app_id` in the lister's list, once there.
fn seen(l: &mut ForeignToplevels, app_id: &str) -> Toplevel {
    until(&format!("{app_id} in the foreign-toplevel list"), || {
        l.toplevels().expect("toplevels").into_iter().find(|t| t.app_id == app_id)
    })
}

fn focused_in_sway(sway: &Sway, app_id: &str) -> bool {
    sway.view(app_id).and_then(|v| v.get("focused").and_then(serde_json::Value::as_bool)) == Some(true)
}

#[test]
fn a_window_appears_with_its_title_app_id_states_and_output_and_disappears() {
    let sway = Sway::start();
    let mut l = lister(&sway);
    assert!(l.toplevels().expect("toplevels").is_empty(), "a fresh sway has no windows");
    let child = foot(&sway, "mcec-test-a", "Toplevel A");
    let t = seen(&mut l, "mcec-test-a");
    assert_eq!(t.title, "Toplevel A");
    // Announced when the client makes it; on an output and activated once sway maps it.
    let t = until("the new window activated on sway's one output", || {
        l.toplevel(t.id).ok().filter(|t| t.activated && t.outputs.len() == 1)
    });
    assert!(!t.minimized && !t.fullscreen, "{t:?}");
    let outputs = sway.swaymsg(&["-t", "get_outputs", "-r"]).expect("get_outputs").stdout;
    let outputs: serde_json::Value = serde_json::from_slice(&outputs).expect("outputs");
    let name = outputs[0]["name"].as_str().expect("sway's output name");
    assert_eq!(t.outputs, [Some(name.to_string())], "named as sway names it");
    end(child);
    until("the window gone from the list", || {
        (!l.toplevels().expect("toplevels").iter().any(|x| x.app_id == "mcec-test-a")).then_some(())
    });
    let gone = l.toplevel(t.id).expect_err("a closed window");
    assert_eq!(gone.code, ErrorCode::WindowClosed);
}

#[test]
fn activating_a_window_focuses_it_in_sway() {
    let sway = Sway::start();
    let mut l = lister(&sway);
    let a = foot(&sway, "mcec-test-a", "A");
    let first = seen(&mut l, "mcec-test-a");
    let b = foot(&sway, "mcec-test-b", "B");
    seen(&mut l, "mcec-test-b");
    // sway focuses the newest window: A is not focused before the lister acts.
    until("B focused in sway", || focused_in_sway(&sway, "mcec-test-b").then_some(()));
    assert!(!focused_in_sway(&sway, "mcec-test-a"));
    l.window_op(first.id, WindowOp::Foreground).expect("activate");
    until("A focused in sway", || focused_in_sway(&sway, "mcec-test-a").then_some(()));
    let a_now = until("A activated in the list", || l.toplevel(first.id).ok().filter(|t| t.activated));
    assert_eq!(a_now.app_id, "mcec-test-a");
    end(a);
    end(b);
}

#[test]
fn mcecs_own_surfaces_are_absent_on_both_listers() {
    let sway = Sway::start();
    let mut l = lister(&sway);
    let own = foot(&sway, "mcec-prompt", "mcec prompt");
    let other = foot(&sway, "mcec-test-b", "B");
    // Both are windows to sway; the other one shows the lister is up to date.
    until("mcec's surface in sway's tree", || sway.view("mcec-prompt"));
    seen(&mut l, "mcec-test-b");
    let listed = l.toplevels().expect("toplevels");
    assert!(!listed.iter().any(|t| t.app_id == "mcec-prompt"), "{listed:?}");
    // The sway (GET_TREE) lister leaves it out as well, and refuses it as a target.
    let d =
        WlrDesktop::connect_to(&sway.swaysock, &sway.runtime_dir.join(&sway.wayland_display)).expect("sway");
    let windows = d.list_windows().expect("list");
    assert!(windows.iter().any(|w| w.class_name == "mcec-test-b"), "{windows:?}");
    assert!(!windows.iter().any(|w| w.class_name == "mcec-prompt"), "{windows:?}");
    let id = sway.view("mcec-prompt").and_then(|v| v["id"].as_u64()).expect("its con id");
    assert_eq!(d.window_info(id).expect_err("own").code, ErrorCode::WindowNotFound);
    assert_eq!(d.window_op(id, WindowOp::Foreground).expect_err("own").code, ErrorCode::WindowNotFound);
    end(own);
    end(other);
}

#[test]
fn geometry_is_unavailable_and_names_the_protocol() {
    let sway = Sway::start();
    let mut l = lister(&sway);
    let child = foot(&sway, "mcec-test-a", "A");
    let t = seen(&mut l, "mcec-test-a");
    for op in [WindowOp::Move(Point::new(5, 5)), WindowOp::Resize { width: 300, height: 200 }] {
        let e = l.window_op(t.id, op).expect_err("no geometry in the protocol");
        assert_eq!(e.code, ErrorCode::Unavailable);
        assert_eq!(e.detail, NO_GEOMETRY);
    }
    end(child);
}

#[test]
fn a_fullscreen_window_is_seen_so_and_restored() {
    let sway = Sway::start();
    let mut l = lister(&sway);
    let child = foot(&sway, "mcec-test-a", "A");
    let t = seen(&mut l, "mcec-test-a");
    let fullscreen_in_sway =
        || sway.view("mcec-test-a").and_then(|v| v["fullscreen_mode"].as_u64()).unwrap_or(0) != 0;
    let id = sway.view("mcec-test-a").and_then(|v| v["id"].as_u64()).expect("con id");
    assert!(sway.swaymsg(&[&format!("[con_id={id}] fullscreen enable")]).expect("swaymsg").status.success());
    until("the fullscreen state in the list", || l.toplevel(t.id).ok().filter(|t| t.fullscreen));
    l.window_op(t.id, WindowOp::Restore).expect("restore");
    until("fullscreen off in sway", || (!fullscreen_in_sway()).then_some(()));
    until("fullscreen off in the list", || l.toplevel(t.id).ok().filter(|t| !t.fullscreen));
    end(child);
}
