//! Focusing the prompts the moment they are mapped.
//!
//! The re-arm prompt must own the keyboard so that Enter and Esc reach it: a window sees
//! keys only while it holds the X input focus, and a window manager may refuse to focus a
//! window that opens while another application is in front. So the prompt asks the window
//! manager (`_NET_ACTIVE_WINDOW`, as a user action) and sets the input focus itself, the
//! moment its window is mapped: a key pressed while the prompt is on screen without the focus
//! goes to another window, and the operator's first Esc is lost. So the search polls every
//! [`POLL`] (a few milliseconds) and the focus is set the moment the window is found; it is
//! confirmed once more after [`SETTLE`], in case a window manager moved it.
//!
//! Everything here runs on short-lived threads; failures are logged and ignored.

use std::thread;
use std::time::{Duration, Instant};

use x11rb::connection::Connection;
use x11rb::protocol::xproto::{
    AtomEnum, ClientMessageEvent, ConnectionExt as _, EventMask, InputFocus, MapState, Window,
};
use x11rb::rust_connection::RustConnection;

use crate::prompt::PROMPT_TITLE;

/// How long to look for the window before giving up.
const PATIENCE: Duration = Duration::from_secs(3);
/// Pause between searches.
const POLL: Duration = Duration::from_millis(5);
/// When the prompt's focus is checked again after it was set.
const SETTLE: Duration = Duration::from_millis(100);
const SEARCH_DEPTH: u32 = 3;

/// Give the prompt the keyboard focus once it is mapped.
pub(crate) fn focus_prompt_soon() {
    on_own_window_soon("mcec-prompt-focus", PROMPT_TITLE, focus);
}

/// Give the consent prompt the keyboard focus once it is mapped (so Enter and Esc deny).
pub(crate) fn focus_consent_soon() {
    on_own_window_soon("mcec-consent-focus", crate::consent_prompt::CONSENT_TITLE, focus);
}

/// Give the opt-in's confirmation prompt the keyboard focus once it is mapped.
pub(crate) fn focus_opt_in_soon() {
    on_own_window_soon("mcec-opt-in-focus", crate::opt_in_prompt::OPT_IN_TITLE, focus);
}

/// Give the token reveal's confirmation prompt the keyboard focus once it is mapped.
pub(crate) fn focus_reveal_soon() {
    on_own_window_soon("mcec-reveal-focus", crate::reveal_prompt::REVEAL_TITLE, focus);
}

/// Give the console's End prompt the keyboard focus once it is mapped.
pub(crate) fn focus_end_soon() {
    on_own_window_soon("mcec-end-focus", crate::end_prompt::END_TITLE, focus);
}

type TagResult<T> = Result<T, Box<dyn std::error::Error>>;
/// Returns whether the window is done with; `false` means try again shortly.
type Action = fn(&RustConnection, &Atoms, Window, Window) -> TagResult<bool>;

fn on_own_window_soon(thread_name: &str, title: &'static str, action: Action) {
    let spawned =
        thread::Builder::new().name(thread_name.into()).spawn(move || match on_own_window(title, action) {
            Ok(true) => tracing::debug!("X11 setup done for window `{title}`"),
            Ok(false) => tracing::warn!("window `{title}` not found on X11; left as it is"),
            Err(err) => tracing::warn!("X11 setup of window `{title}` failed: {err}"),
        });
    if let Err(err) = spawned {
        tracing::warn!("could not start {thread_name}: {err}");
    }
}

/// Wait (bounded) for this process's viewable window titled `title`, then run `action` on
/// it until it reports done. Returns whether that happened in time.
fn on_own_window(title: &str, action: Action) -> TagResult<bool> {
    let (conn, screen) = x11rb::connect(None)?;
    let root = conn.setup().roots[screen].root;
    let atoms = Atoms::new(&conn)?;
    let pid = std::process::id();
    let deadline = Instant::now() + PATIENCE;
    while Instant::now() < deadline {
        let mut found = Vec::new();
        find(&conn, &atoms, root, pid, title, SEARCH_DEPTH, &mut found)?;
        let mut done = !found.is_empty();
        for window in found {
            // A window can be unmapped again between the search and the action; then the
            // action fails: retry.
            done &= action(&conn, &atoms, root, window).unwrap_or(false);
        }
        conn.flush()?;
        if done {
            return Ok(true);
        }
        thread::sleep(POLL);
    }
    Ok(false)
}

struct Atoms {
    net_wm_name: u32,
    net_wm_pid: u32,
    utf8_string: u32,
    net_active_window: u32,
}

impl Atoms {
    fn new(conn: &RustConnection) -> TagResult<Self> {
        let intern =
            |name: &str| -> TagResult<u32> { Ok(conn.intern_atom(false, name.as_bytes())?.reply()?.atom) };
        Ok(Self {
            net_wm_name: intern("_NET_WM_NAME")?,
            net_wm_pid: intern("_NET_WM_PID")?,
            utf8_string: intern("UTF8_STRING")?,
            net_active_window: intern("_NET_ACTIVE_WINDOW")?,
        })
    }
}

/// Collect viewable windows under `parent` (window managers reparent, so look a few levels
/// down) owned by `pid` and titled `title`.
fn find(
    conn: &RustConnection,
    atoms: &Atoms,
    parent: Window,
    pid: u32,
    title: &str,
    depth: u32,
    found: &mut Vec<Window>,
) -> TagResult<()> {
    let Ok(cookie) = conn.query_tree(parent) else {
        return Ok(());
    };
    // A window can vanish between listing and reading; skip it rather than fail.
    let Ok(tree) = cookie.reply() else {
        return Ok(());
    };
    for child in tree.children {
        if is_own(conn, atoms, child, pid, title).unwrap_or(false) {
            found.push(child);
        } else if depth > 1 {
            find(conn, atoms, child, pid, title, depth - 1, found)?;
        }
    }
    Ok(())
}

fn is_own(conn: &RustConnection, atoms: &Atoms, window: Window, pid: u32, title: &str) -> TagResult<bool> {
    let attributes = conn.get_window_attributes(window)?.reply()?;
    if attributes.map_state != MapState::VIEWABLE {
        return Ok(false);
    }
    let owner = conn.get_property(false, window, atoms.net_wm_pid, AtomEnum::CARDINAL, 0, 1)?.reply()?;
    if owner.value32().and_then(|mut v| v.next()) != Some(pid) {
        return Ok(false);
    }
    let name = conn.get_property(false, window, atoms.net_wm_name, atoms.utf8_string, 0, 64)?.reply()?;
    Ok(name.value == title.as_bytes())
}

/// Ask for the focus and set it at once; report whether the window still holds it a moment
/// later (a window manager may hand it elsewhere; then the caller tries again).
fn focus(conn: &RustConnection, atoms: &Atoms, root: Window, window: Window) -> TagResult<bool> {
    // Source 2: the request stands for a user action (the operator's own chord).
    let source = 2;
    let event =
        ClientMessageEvent::new(32, window, atoms.net_active_window, [source, x11rb::CURRENT_TIME, 0, 0, 0]);
    conn.send_event(false, root, EventMask::SUBSTRUCTURE_REDIRECT | EventMask::SUBSTRUCTURE_NOTIFY, event)?;
    // `check` waits for the server: the focus is set (or the request failed) when it returns.
    conn.set_input_focus(InputFocus::PARENT, window, x11rb::CURRENT_TIME)?.check()?;
    thread::sleep(SETTLE);
    Ok(conn.get_input_focus()?.reply()?.focus == window)
}
