//! The MSAA calls themselves (`oleacc`: `AccessibleObjectFromWindow`, `AccessibleChildren`,
//! `IAccessible`), made on the worker thread ([`super::worker`]); nothing here outlives one
//! call. A path ([`Path`]) is resolved from its window handle every time, and a window that
//! is gone, or that is not under the path's top-level window, is [`Fail::Gone`].
//!
//! Where Wine's `oleacc` answers less than Windows' own proxies for the standard controls
//! (a bare "client" role, no default action), the window class and style fill in what those
//! proxies answer, and a button's default action is done as they do it (`BM_CLICK`).

#![allow(unsafe_code)]

use core::ffi::c_void;
use std::mem::ManuallyDrop;

use mcec_desktop::types::Rect;
use windows::Win32::Foundation::{HWND, LPARAM, WPARAM};
use windows::Win32::System::Com::{COINIT_MULTITHREADED, CoInitializeEx, IDispatch};
use windows::Win32::System::Variant::{VARIANT, VT_DISPATCH, VT_EMPTY, VT_I4, VariantClear};
use windows::Win32::UI::Accessibility::{
    AccessibleChildren, AccessibleObjectFromWindow, IAccessible, SELFLAG_TAKEFOCUS, SELFLAG_TAKESELECTION,
    WindowFromAccessibleObject,
};
use windows::Win32::UI::WindowsAndMessaging::{
    BM_CLICK, BM_GETCHECK, GA_ROOT, GWL_STYLE, GetAncestor, GetClassNameW, GetDlgCtrlID, GetWindowLongPtrW,
    IsWindow, OBJID_CLIENT, PostMessageW, SMTO_ABORTIFHUNG, SendMessageTimeoutW, WM_SETTEXT,
};
use windows::core::{BSTR, Interface};

use super::path::Path;
use super::vocab;
use crate::model::{Operation, RawElement, SHORT_TEXT};
use crate::seam::Want;

/// Why a call did not answer.
#[derive(Debug)]
pub enum Fail {
    /// The window or the object is gone.
    Gone,
    /// The window exposes no accessible object.
    NoTree(String),
    /// The application refused or failed the call.
    Refused(String),
}

impl From<windows::core::Error> for Fail {
    fn from(e: windows::core::Error) -> Fail {
        Fail::Refused(format!("{} ({:#010x})", e.message(), e.code().0))
    }
}

/// The worker thread's start: a multi-threaded COM apartment (calls to out-of-process
/// providers need no message loop on it).
pub fn init_thread() {
    // SAFETY: once per worker thread, before any COM call on it.
    let hr = unsafe { CoInitializeEx(None, COINIT_MULTITHREADED) };
    if hr.is_err() {
        tracing::warn!("CoInitializeEx failed on the MSAA thread: {hr:?}");
    }
}

fn hwnd(h: usize) -> HWND {
    HWND(h as *mut c_void)
}

fn is_window(h: usize) -> bool {
    // SAFETY: IsWindow accepts any value.
    unsafe { IsWindow(Some(hwnd(h))) }.as_bool()
}

/// `window` exists and is `top` or under it: a path cannot leave its top-level window.
fn within(top: usize, window: usize) -> bool {
    is_window(window) && (window == top || root_of(window) == top)
}

/// The top-level window `window` is under.
fn root_of(window: usize) -> usize {
    // SAFETY: a plain window query; any value is accepted.
    let root = unsafe { GetAncestor(hwnd(window), GA_ROOT) };
    root.0 as usize
}

fn class_of(window: usize) -> String {
    let mut buf = [0u16; 128];
    // SAFETY: the buffer is ours and sized.
    let n = unsafe { GetClassNameW(hwnd(window), &mut buf) };
    String::from_utf16_lossy(&buf[..usize::try_from(n).unwrap_or(0)])
}

fn style_of(window: usize) -> u32 {
    // SAFETY: a plain window query; the style is the low 32 bits.
    (unsafe { GetWindowLongPtrW(hwnd(window), GWL_STYLE) } as u32)
}

/// A `VT_I4` VARIANT: MSAA's child id (0 = the object itself).
fn child_var(id: i32) -> VARIANT {
    let mut v = VARIANT::default();
    // SAFETY: writing the discriminant and the matching member of a zeroed VARIANT.
    unsafe {
        (*v.Anonymous.Anonymous).vt = VT_I4;
        (*v.Anonymous.Anonymous).Anonymous.lVal = id;
    }
    v
}

/// An `i32` VARIANT's value, the VARIANT cleared either way.
fn take_i32(mut v: VARIANT) -> Option<i32> {
    // SAFETY: the member read matches the discriminant; VariantClear frees what it holds.
    unsafe {
        let out = ((*v.Anonymous.Anonymous).vt == VT_I4).then(|| (*v.Anonymous.Anonymous).Anonymous.lVal);
        let _ = VariantClear(&mut v);
        out
    }
}

/// The client-area object of `window`.
fn client_of(window: usize) -> Result<IAccessible, Fail> {
    let mut raw: *mut c_void = std::ptr::null_mut();
    // SAFETY: the out pointer receives an IAccessible reference we then own.
    let r = unsafe {
        AccessibleObjectFromWindow(hwnd(window), OBJID_CLIENT.0 as u32, &IAccessible::IID, &mut raw)
    };
    if !is_window(window) {
        return Err(Fail::Gone);
    }
    r.map_err(|e| Fail::NoTree(e.message().to_string()))?;
    if raw.is_null() {
        return Err(Fail::NoTree("no accessible object".into()));
    }
    // SAFETY: a non-null IAccessible the call handed over.
    Ok(unsafe { IAccessible::from_raw(raw) })
}

/// One entry of an object's children.
enum Kid {
    Simple(i32),
    Object(IAccessible),
    Other,
}

/// Most children read from one object.
const MAX_CHILDREN: i32 = 10_000;

fn kids(acc: &IAccessible) -> Result<Vec<Kid>, Fail> {
    // SAFETY: COM calls on an object this thread holds.
    let count = unsafe { acc.accChildCount() }?.clamp(0, MAX_CHILDREN);
    if count == 0 {
        return Ok(Vec::new());
    }
    let mut buf: Vec<VARIANT> = (0..count).map(|_| VARIANT::default()).collect();
    let mut got = 0i32;
    // SAFETY: the buffer holds `count` VARIANTs; `got` of them are filled.
    unsafe { AccessibleChildren(acc, 0, &mut buf, &mut got) }?;
    let got = usize::try_from(got).unwrap_or(0).min(buf.len());
    let mut out = Vec::with_capacity(got);
    for v in buf.iter_mut() {
        // SAFETY: each member read matches its discriminant; a taken IDispatch leaves an
        // empty VARIANT behind, and every VARIANT is cleared once.
        let kid = unsafe {
            let inner = &mut *v.Anonymous.Anonymous;
            let kid = if inner.vt == VT_I4 {
                Kid::Simple(inner.Anonymous.lVal)
            } else if inner.vt == VT_DISPATCH {
                let d: Option<IDispatch> = ManuallyDrop::take(&mut inner.Anonymous.pdispVal);
                inner.vt = VT_EMPTY;
                d.and_then(|d| d.cast::<IAccessible>().ok()).map_or(Kid::Other, Kid::Object)
            } else {
                Kid::Other
            };
            let _ = VariantClear(v);
            kid
        };
        out.push(kid);
    }
    out.truncate(got);
    Ok(out)
}

/// The object a path names and its child id (0: the object itself).
fn resolve(path: &Path) -> Result<(IAccessible, i32), Fail> {
    if !within(path.top, path.window) {
        return Err(Fail::Gone);
    }
    // Below the root, an object that can no longer be reached counts as gone, so one failing
    // control is left out of a walk instead of ending it; the root's own failure says why.
    let mut acc = match client_of(path.window) {
        Err(Fail::NoTree(_) | Fail::Refused(_)) if path.window != path.top => return Err(Fail::Gone),
        r => r?,
    };
    for &step in &path.steps {
        acc = match kids(&acc).ok().and_then(|k| k.into_iter().nth(step)) {
            Some(Kid::Object(o)) => o,
            _ => return Err(Fail::Gone),
        };
    }
    Ok((acc, path.child.unwrap_or(0)))
}

/// The root of `top`'s tree: its client-area object, which must exist.
pub fn root(top: usize) -> Result<Path, Fail> {
    client_of(top)?;
    Ok(Path::window(top, top))
}

/// Whether the path still resolves.
pub fn attached(path: &Path) -> Result<bool, Fail> {
    match resolve(path) {
        Ok(_) => Ok(true),
        Err(Fail::Gone) => Ok(false),
        Err(e) => Err(e),
    }
}

/// The children of a path, in order. A child that is another window's object (a standard
/// control is a window of its own) is named by that window, so its path stays short and
/// survives siblings coming and going; a child window outside the top-level one is left out.
pub fn children(path: &Path) -> Result<Vec<Path>, Fail> {
    if path.child.is_some() {
        return Ok(Vec::new());
    }
    let (acc, _) = resolve(path)?;
    let mut out = Vec::new();
    // An object whose children cannot be listed shows none (the walk goes on elsewhere).
    let listed = kids(&acc).unwrap_or_else(|e| {
        tracing::debug!("MSAA children of {:?} not listed: {e:?}", path.node());
        Vec::new()
    });
    for (i, kid) in listed.into_iter().enumerate() {
        match kid {
            Kid::Simple(id) => out.push(path.simple(id)),
            Kid::Object(o) => {
                let mut h = HWND::default();
                // SAFETY: the out pointer is ours.
                let window = unsafe { WindowFromAccessibleObject(&o, Some(&mut h as *mut HWND)) }
                    .ok()
                    .map(|()| h.0 as usize);
                match window {
                    Some(w) if w != 0 && w != path.window => {
                        if within(path.top, w) {
                            out.push(Path::window(path.top, w));
                        }
                    }
                    _ => out.push(path.step(i)),
                }
            }
            Kid::Other => {}
        }
    }
    Ok(out)
}

fn bstr(r: windows::core::Result<BSTR>) -> String {
    r.map(|b| b.to_string()).unwrap_or_default()
}

/// One element: an object and a child id (0: the object itself), with its `IAccessible`
/// calls, each made on the thread that holds the object.
struct Acc {
    acc: IAccessible,
    var: VARIANT,
}

impl Drop for Acc {
    fn drop(&mut self) {
        // SAFETY: an I4 VARIANT we made; clearing it frees nothing and is sound.
        let _ = unsafe { VariantClear(&mut self.var) };
    }
}

impl Acc {
    fn of(path: &Path) -> Result<Acc, Fail> {
        let (acc, child) = resolve(path)?;
        Ok(Acc { acc, var: child_var(child) })
    }

    fn name(&self) -> String {
        // SAFETY: a COM call on an object this thread holds.
        vocab::plain_name(&bstr(unsafe { self.acc.get_accName(&self.var) }))
    }

    fn description(&self) -> String {
        // SAFETY: as above.
        bstr(unsafe { self.acc.get_accDescription(&self.var) })
    }

    fn value(&self) -> String {
        // SAFETY: as above.
        bstr(unsafe { self.acc.get_accValue(&self.var) })
    }

    fn default_action(&self) -> String {
        // SAFETY: as above.
        vocab::plain_name(&bstr(unsafe { self.acc.get_accDefaultAction(&self.var) }))
    }

    fn child_count(&self) -> u32 {
        // SAFETY: as above.
        unsafe { self.acc.accChildCount() }.map_or(0, |n| u32::try_from(n).unwrap_or(0))
    }

    fn role_number(&self) -> Option<i32> {
        // SAFETY: as above.
        unsafe { self.acc.get_accRole(&self.var) }.ok().and_then(take_i32)
    }

    fn state_bits(&self) -> u32 {
        // SAFETY: as above.
        unsafe { self.acc.get_accState(&self.var) }.ok().and_then(take_i32).map_or(0, |b| b as u32)
    }

    fn location(&self) -> Option<Rect> {
        let (mut x, mut y, mut w, mut h) = (0, 0, 0, 0);
        // SAFETY: as above; the out pointers are locals.
        let ok = unsafe { self.acc.accLocation(&mut x, &mut y, &mut w, &mut h, &self.var) }.is_ok();
        (ok && w > 0 && h > 0).then(|| Rect::new(x, y, w.unsigned_abs(), h.unsigned_abs()))
    }

    fn do_default_action(&self) -> Result<(), Fail> {
        // SAFETY: as above.
        Ok(unsafe { self.acc.accDoDefaultAction(&self.var) }?)
    }

    fn select(&self, flags: i32) -> Result<(), Fail> {
        // SAFETY: as above.
        Ok(unsafe { self.acc.accSelect(flags, &self.var) }?)
    }

    fn put_value(&self, value: &str) -> windows::core::Result<()> {
        // SAFETY: as above.
        unsafe { self.acc.put_accValue(&self.var, &BSTR::from(value)) }
    }

    /// The role: MSAA's, refined from the window class where MSAA says only "client".
    fn role(&self, path: &Path) -> &'static str {
        match self.role_number() {
            Some(vocab::ROLE_CLIENT) | None if is_window_object(path) => {
                match vocab::class_role(&class_of(path.window), style_of(path.window)) {
                    Some(r) => r,
                    None if path.window == path.top => "frame",
                    None => vocab::role(vocab::ROLE_CLIENT),
                }
            }
            Some(n) => vocab::role(n),
            None => "unknown",
        }
    }

    /// The text: the value (an edit box's contents), or a label's name.
    fn text(&self, role: &str, name: &str) -> Option<String> {
        let value = self.value();
        if !value.is_empty() {
            return Some(value);
        }
        (role == "label" && !name.is_empty()).then(|| name.to_string())
    }
}

/// A path that is a window's own client-area object (no steps, no child id).
fn is_window_object(path: &Path) -> bool {
    path.steps.is_empty() && path.child.is_none()
}

/// The default action Windows' own button proxy offers where the application's MSAA offers
/// none: `Press`, `Check`, `Uncheck`.
fn class_action(role: &str, path: &Path, checked: bool) -> Option<&'static str> {
    if !is_window_object(path) || !class_of(path.window).eq_ignore_ascii_case("button") {
        return None;
    }
    match role {
        "push-button" => Some("Press"),
        "check-box" if checked => Some("Uncheck"),
        "check-box" | "radio-button" => Some("Check"),
        _ => None,
    }
}

/// The checked (`0x10`) or mixed (`0x20`) state bit of a `Button`-class check box or radio
/// button, asked of the control (`BM_GETCHECK`, bounded) as Windows' button proxy does:
/// Wine's `oleacc` leaves it out.
fn button_check(path: &Path) -> u32 {
    if !is_window_object(path) || !class_of(path.window).eq_ignore_ascii_case("button") {
        return 0;
    }
    let mut result = 0usize;
    // SAFETY: a message without pointers to a window under the path's top-level window.
    let sent = unsafe {
        SendMessageTimeoutW(
            hwnd(path.window),
            BM_GETCHECK,
            WPARAM(0),
            LPARAM(0),
            SMTO_ABORTIFHUNG,
            500,
            Some(&mut result as *mut usize),
        )
    };
    match (sent.0, result) {
        (0, _) => 0,
        (_, 1) => 0x10,
        (_, 2) => 0x20,
        _ => 0,
    }
}

fn cut(s: String, max: usize) -> String {
    if s.chars().count() > max { s.chars().take(max).collect() } else { s }
}

pub fn describe(path: &Path, want: Want) -> Result<RawElement, Fail> {
    let a = Acc::of(path)?;
    let mut e =
        RawElement { name: a.name(), description: a.description(), role: "unknown", ..RawElement::default() };
    if path.child.is_none() {
        e.child_count = a.child_count();
    }
    if is_window_object(path) && path.window != path.top {
        // SAFETY: a plain window query.
        let id = unsafe { GetDlgCtrlID(hwnd(path.window)) };
        if id != 0 {
            e.automation_id = id.to_string();
        }
    }
    if want.role || want.states || want.geometry || want.text {
        e.role = a.role(path);
    }
    let mut bits = if want.states || want.geometry { a.state_bits() } else { 0 };
    if (want.states || want.geometry) && matches!(e.role, "check-box" | "radio-button") {
        bits |= button_check(path);
    }
    if want.states {
        e.states = vocab::states(bits, e.role);
        e.can_focus = true;
        e.editable_text = matches!(e.role, "text" | "password-text");
    }
    if want.geometry {
        e.bounds = a.location();
        let action = a.default_action();
        if !action.is_empty() {
            e.actions.push(action);
        } else if let Some(name) = class_action(e.role, path, bits & 0x10 != 0) {
            e.actions.push(name.to_string());
        }
        if matches!(e.role, "slider" | "progress-bar" | "spin-button") {
            e.value = a.value().trim().trim_end_matches('%').parse().ok();
        }
    }
    if want.text && e.role != "password-text" {
        e.text = a.text(e.role, &e.name).map(|t| cut(t, SHORT_TEXT));
    }
    Ok(e)
}

pub fn text(path: &Path, max_chars: usize) -> Result<Option<String>, Fail> {
    let a = Acc::of(path)?;
    let role = a.role(path);
    if role == "password-text" {
        return Ok(None);
    }
    Ok(a.text(role, &a.name()).map(|t| cut(t, max_chars)))
}

/// Set an Edit control's text as Windows' own proxies do (`WM_SETTEXT`), bounded.
fn set_window_text(window: usize, text: &str) -> Result<(), Fail> {
    let wide: Vec<u16> = text.encode_utf16().chain(Some(0)).collect();
    let mut result = 0usize;
    // SAFETY: the string outlives the call (the system copies it across processes).
    let r = unsafe {
        SendMessageTimeoutW(
            hwnd(window),
            WM_SETTEXT,
            WPARAM(0),
            LPARAM(wide.as_ptr() as isize),
            SMTO_ABORTIFHUNG,
            1_000,
            Some(&mut result as *mut usize),
        )
    };
    if r.0 == 0 || result == 0 {
        return Err(Fail::Refused("the edit box did not take the text".into()));
    }
    Ok(())
}

pub fn perform(path: &Path, op: &Operation) -> Result<(), Fail> {
    let a = Acc::of(path)?;
    match op {
        Operation::Action { .. } => {
            if a.default_action().is_empty() && class_action(a.role(path), path, false).is_some() {
                // What Windows' button proxy does for its default action.
                // SAFETY: posting a message to a window under the path's top-level window.
                unsafe { PostMessageW(Some(hwnd(path.window)), BM_CLICK, WPARAM(0), LPARAM(0)) }?;
                return Ok(());
            }
            a.do_default_action()?;
        }
        Operation::Focus => a.select(SELFLAG_TAKEFOCUS as i32)?,
        Operation::Select => a.select(SELFLAG_TAKESELECTION as i32)?,
        Operation::SetValue(v) => a.put_value(&v.to_string())?,
        Operation::SetText(t) | Operation::AppendText(t) => {
            let full = match op {
                Operation::AppendText(_) => a.value() + t,
                _ => t.clone(),
            };
            if let Err(e) = a.put_value(&full) {
                if !(is_window_object(path) && class_of(path.window).eq_ignore_ascii_case("edit")) {
                    return Err(e.into());
                }
                set_window_text(path.window, &full)?;
            }
        }
    }
    Ok(())
}
