//! Text on the X11 CLIPBOARD and PRIMARY selections, over x11rb: [`X11Selections`], the X11
//! implementation of `mcec-desktop`'s clipboard seam, which the binary hands to the
//! `clipboard` tool and the Agent tab's Copy.
//!
//! X11 has no clipboard store: the text lives in whichever client owns the selection, which
//! must answer every paste. So `set` hands the text to an owner thread with its own
//! connection and window; it serves `SelectionRequest`s (TARGETS, UTF8_STRING, STRING, TEXT)
//! until another client takes the selection (`SelectionClear`), long after the call returned.
//! `get` asks the owner to convert the selection into a property of a window of its own and
//! reads it, bounded in time and asking the stop flag while it waits.

use std::time::{Duration, Instant};

use mcec_desktop::clipboard::{Clipboard, Selection};
use mcec_rules::{ErrorCode, StopFlag, ToolError};
use x11rb::connection::Connection;
use x11rb::protocol::Event;
use x11rb::protocol::xproto::{
    Atom, AtomEnum, ConnectionExt, CreateWindowAux, EventMask, PropMode, SELECTION_NOTIFY_EVENT,
    SelectionNotifyEvent, SelectionRequestEvent, Window, WindowClass,
};
use x11rb::rust_connection::RustConnection;
use x11rb::wrapper::ConnectionExt as _;
use x11rb::{COPY_DEPTH_FROM_PARENT, CURRENT_TIME, NONE};

/// The selections of one X display.
#[derive(Debug, Clone)]
pub struct X11Selections {
    display: String,
}

impl X11Selections {
    /// The selections of `display` (e.g. `:0`).
    pub fn new(display: impl Into<String>) -> X11Selections {
        X11Selections { display: display.into() }
    }

    /// The selections of this process's `DISPLAY`; `unavailable` when it is not set.
    pub fn of_environment() -> Result<X11Selections, ToolError> {
        match std::env::var_os("DISPLAY").and_then(|d| d.into_string().ok()) {
            Some(display) => Ok(X11Selections::new(display)),
            None => Err(ToolError::new(ErrorCode::Unavailable, "DISPLAY is not set.")),
        }
    }
}

impl Clipboard for X11Selections {
    fn set(&self, which: Selection, text: String) -> Result<(), ToolError> {
        set(&self.display, which, text)
    }

    fn get(&self, which: Selection, stop: &StopFlag) -> Result<Option<String>, ToolError> {
        get(&self.display, which, stop)
    }
}

/// How long `get` waits for the owner to answer.
const GET_TIMEOUT: Duration = Duration::from_secs(3);
const POLL: Duration = Duration::from_millis(2);

struct Atoms {
    selection: Atom,
    targets: Atom,
    utf8: Atom,
    text: Atom,
    property: Atom,
    incr: Atom,
}

fn x_error(e: impl std::fmt::Display) -> ToolError {
    ToolError::new(ErrorCode::Unavailable, format!("The X clipboard cannot be used: {e}"))
}

fn atom(c: &RustConnection, name: &str) -> Result<Atom, ToolError> {
    Ok(c.intern_atom(false, name.as_bytes()).map_err(x_error)?.reply().map_err(x_error)?.atom)
}

fn atoms(c: &RustConnection, which: Selection) -> Result<Atoms, ToolError> {
    Ok(Atoms {
        selection: match which {
            Selection::Clipboard => atom(c, "CLIPBOARD")?,
            Selection::Primary => AtomEnum::PRIMARY.into(),
        },
        targets: atom(c, "TARGETS")?,
        utf8: atom(c, "UTF8_STRING")?,
        text: atom(c, "TEXT")?,
        property: atom(c, "MCEC_SELECTION")?,
        incr: atom(c, "INCR")?,
    })
}

/// A connection and an unmapped 1x1 window of its own.
fn window(display: &str) -> Result<(RustConnection, Window), ToolError> {
    let (c, screen) = x11rb::connect(Some(display)).map_err(x_error)?;
    let root = c.setup().roots[screen].root;
    let w = c.generate_id().map_err(x_error)?;
    c.create_window(
        COPY_DEPTH_FROM_PARENT,
        w,
        root,
        0,
        0,
        1,
        1,
        0,
        WindowClass::INPUT_OUTPUT,
        0,
        &CreateWindowAux::new().event_mask(EventMask::PROPERTY_CHANGE),
    )
    .map_err(x_error)?;
    Ok((c, w))
}

/// Own `which` with `text` on `display`; a thread keeps serving it until someone else takes it.
fn set(display: &str, which: Selection, text: String) -> Result<(), ToolError> {
    let (c, w) = window(display)?;
    let a = atoms(&c, which)?;
    c.set_selection_owner(w, a.selection, CURRENT_TIME).map_err(x_error)?;
    let owner = c.get_selection_owner(a.selection).map_err(x_error)?.reply().map_err(x_error)?.owner;
    if owner != w {
        return Err(ToolError::new(ErrorCode::Unavailable, "The X server did not give mcec the selection."));
    }
    std::thread::Builder::new()
        .name("mcec-clipboard".into())
        .spawn(move || serve(c, w, a, text))
        .map_err(|e| ToolError::new(ErrorCode::Internal, format!("cannot start the clipboard owner: {e}")))?;
    Ok(())
}

fn serve(c: RustConnection, w: Window, a: Atoms, text: String) {
    loop {
        match c.wait_for_event() {
            Ok(Event::SelectionRequest(req)) => {
                if let Err(e) = answer(&c, &a, &req, text.as_bytes()) {
                    tracing::warn!("answering a paste request: {e}");
                }
            }
            Ok(Event::SelectionClear(ev)) if ev.selection == a.selection => break,
            Ok(_) => {}
            Err(e) => {
                tracing::info!("clipboard owner connection ended: {e}");
                return;
            }
        }
    }
    let _ = c.destroy_window(w);
    let _ = c.flush();
}

fn answer(c: &RustConnection, a: &Atoms, req: &SelectionRequestEvent, bytes: &[u8]) -> Result<(), ToolError> {
    let property = if req.property == NONE { req.target } else { req.property };
    let served = if req.target == a.targets {
        let list = [a.targets, a.utf8, AtomEnum::STRING.into(), a.text];
        c.change_property32(PropMode::REPLACE, req.requestor, property, AtomEnum::ATOM, &list)
            .map_err(x_error)?;
        true
    } else if req.target == a.utf8 || req.target == a.text || req.target == Atom::from(AtomEnum::STRING) {
        let kind =
            if req.target == a.utf8 || req.target == a.text { a.utf8 } else { AtomEnum::STRING.into() };
        c.change_property8(PropMode::REPLACE, req.requestor, property, kind, bytes).map_err(x_error)?;
        true
    } else {
        false
    };
    let notify = SelectionNotifyEvent {
        response_type: SELECTION_NOTIFY_EVENT,
        sequence: 0,
        time: req.time,
        requestor: req.requestor,
        selection: req.selection,
        target: req.target,
        property: if served { property } else { NONE },
    };
    c.send_event(false, req.requestor, EventMask::NO_EVENT, notify).map_err(x_error)?;
    c.flush().map_err(x_error)?;
    Ok(())
}

/// The text of `which` on `display`; `None` when no program owns it or it holds no text.
fn get(display: &str, which: Selection, stop: &StopFlag) -> Result<Option<String>, ToolError> {
    let (c, w) = window(display)?;
    let a = atoms(&c, which)?;
    let owner = c.get_selection_owner(a.selection).map_err(x_error)?.reply().map_err(x_error)?.owner;
    if owner == NONE {
        return Ok(None);
    }
    c.convert_selection(w, a.selection, a.utf8, a.property, CURRENT_TIME).map_err(x_error)?;
    c.flush().map_err(x_error)?;
    let started = Instant::now();
    let property = loop {
        if stop.is_set() {
            return Err(ToolError::emergency_stopped());
        }
        match c.poll_for_event().map_err(x_error)? {
            Some(Event::SelectionNotify(ev)) if ev.requestor == w => break ev.property,
            Some(_) => continue,
            None if started.elapsed() > GET_TIMEOUT => {
                return Err(ToolError::new(
                    ErrorCode::Timeout,
                    format!(
                        "The program that owns the selection did not answer within {} ms.",
                        GET_TIMEOUT.as_millis()
                    ),
                ));
            }
            None => std::thread::sleep(POLL),
        }
    };
    if property == NONE {
        return Ok(None);
    }
    let reply = c
        .get_property(true, w, property, AtomEnum::ANY, 0, u32::MAX / 4)
        .map_err(x_error)?
        .reply()
        .map_err(x_error)?;
    let _ = c.destroy_window(w);
    if reply.type_ == a.incr {
        return Err(ToolError::new(
            ErrorCode::Unavailable,
            "The selection is too large to read (an INCR transfer).",
        ));
    }
    Ok(Some(String::from_utf8_lossy(&reply.value).into_owned()))
}
