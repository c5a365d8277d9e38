//! The Win32 surface of the CPU painter: the banner and the re-arm and consent prompts of
//! `mcec.exe mcp`, and the host window and its settings window (the Agent tab) of plain
//! `mcec.exe`, as plain Win32 windows showing the frames [`pass`] paints.
//!
//! The banner is a topmost popup that never takes focus and lets every click through
//! (`WS_EX_TRANSPARENT | WS_EX_LAYERED | WS_EX_NOACTIVATE | WS_EX_TOOLWINDOW`, and it answers
//! `HTTRANSPARENT` and `MA_NOACTIVATE`). The prompts are normal focused windows with a title
//! and a close button; the close button is a denial (a "leave stopped"), as on X11. Every window
//! asks to be left out of screen captures with `WDA_EXCLUDEFROMCAPTURE`; where the system
//! refuses (older Windows, Wine) the refusal is logged once and the window is shown anyway: the
//! operator seeing the stop matters more than the agent not seeing it. The host and settings
//! windows are ordinary top-level windows (title, close and minimise buttons); closing the host
//! window quits mcec, closing the settings window only closes it, as on X11.
//!
//! One thread (the caller's) owns the windows and their message loop. The window procedures
//! only note what happened; the loop turns that into egui events after `DispatchMessageW`
//! returns, so no egui state is touched from inside a window procedure. The state's repaint
//! hook, called from other threads, posts a message to a message-only window to wake the loop.
//!
//! The windows decide nothing: a control that only the operator may press (Re-arm, Allow, the
//! opt-in's Confirm) reports the events that pressed it, each named by its message time
//! (`GetMessageTime`, the very `time` the low-level hook saw for that event) and its button or
//! key, and the core asks the provenance monitor whether a device, not `SendInput`, made those
//! very events. A program can also hand a window a click with no input at all: a message sent
//! from another thread (`SendMessageW`: `InSendMessage`), a mouse message whose point is not
//! where the pointer was when the message was made (`PostMessageW`: the input queue stamps a
//! device's event with its own point, `GetMessagePos`), a key posted to a window that does not
//! have the keyboard, or `BM_CLICK`. Those are dropped before any widget sees them and
//! audited; a posted message that passes these checks still carries its posting time, at
//! which the hook saw no physical event, so the core refuses it.

#![allow(unsafe_code)]

use std::cell::RefCell;
use std::ptr::{null, null_mut};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use windows_sys::Win32::Foundation::{GetLastError, HWND, LPARAM, LRESULT, POINT, RECT, WPARAM};
use windows_sys::Win32::Graphics::Gdi::{
    BI_RGB, BITMAPINFO, BITMAPINFOHEADER, BeginPaint, ClientToScreen, DIB_RGB_COLORS, EndPaint, GetDC,
    PAINTSTRUCT, ReleaseDC, SetDIBitsToDevice,
};
use windows_sys::Win32::System::LibraryLoader::GetModuleHandleW;
use windows_sys::Win32::UI::Input::KeyboardAndMouse::{
    GetKeyState, ReleaseCapture, SetCapture, SetFocus, VK_CONTROL, VK_DOWN, VK_ESCAPE, VK_LEFT, VK_MENU,
    VK_RETURN, VK_RIGHT, VK_SHIFT, VK_SPACE, VK_TAB, VK_UP,
};
use windows_sys::Win32::UI::WindowsAndMessaging::{
    AdjustWindowRectEx, BM_CLICK, CreateWindowExW, DefWindowProcW, DestroyWindow, DispatchMessageW,
    GetForegroundWindow, GetMessagePos, GetMessageTime, GetSystemMetrics, HTTRANSPARENT, HWND_MESSAGE,
    InSendMessage, IsIconic, LWA_ALPHA, MA_NOACTIVATE, MSG, MWMO_INPUTAVAILABLE, MsgWaitForMultipleObjectsEx,
    PM_REMOVE, PeekMessageW, PostMessageW, QS_ALLINPUT, RegisterClassExW, SM_CXSCREEN, SM_CYSCREEN,
    SW_RESTORE, SW_SHOW, SW_SHOWNOACTIVATE, SWP_NOACTIVATE, SWP_NOZORDER, SetForegroundWindow,
    SetLayeredWindowAttributes, SetWindowDisplayAffinity, SetWindowPos, ShowWindow, WDA_EXCLUDEFROMCAPTURE,
    WM_APP, WM_CLOSE, WM_ERASEBKGND, WM_KEYDOWN, WM_KEYUP, WM_KILLFOCUS, WM_LBUTTONDOWN, WM_LBUTTONUP,
    WM_MBUTTONDOWN, WM_MBUTTONUP, WM_MOUSEACTIVATE, WM_MOUSEMOVE, WM_NCHITTEST, WM_PAINT, WM_QUIT,
    WM_RBUTTONDOWN, WM_RBUTTONUP, WM_SETFOCUS, WNDCLASSEXW, WNDPROC, WS_CAPTION, WS_EX_DLGMODALFRAME,
    WS_EX_LAYERED, WS_EX_NOACTIVATE, WS_EX_TOOLWINDOW, WS_EX_TOPMOST, WS_EX_TRANSPARENT, WS_MINIMIZEBOX,
    WS_OVERLAPPED, WS_POPUP, WS_SYSMENU,
};

use crate::soft::pass::{Layout, Role};
use crate::soft::raster::Canvas;
use crate::soft::surface::{self, Surface};
use crate::state::OperatorState;
use crate::{UiError, consent_prompt, host, overlay, prompt, settings_window};
use mcec_rules::activation::{InputEventId, Pressed};
use mcec_rules::own_windows::{HOST_CLASS, OVERLAY_CLASS, PROMPT_CLASS, SETTINGS_CLASS};

/// Posted to the message-only window by the state's repaint hook.
const WM_WAKE: u32 = WM_APP + 1;

/// `INFINITE` for `MsgWaitForMultipleObjectsEx` (named in a module this crate does not load).
pub(crate) const WAIT_FOREVER: u32 = u32::MAX;

/// Class of the message-only window that wakes the loop.
const WAKE_CLASS: &str = "mcec-operator-wake";

/// What the window procedures saw, handed to the loop once `DispatchMessageW` returns.
type Seen = surface::Seen<HWND>;

thread_local! {
    static SEEN: RefCell<Vec<Seen>> = const { RefCell::new(Vec::new()) };
}

fn note(seen: Seen) {
    SEEN.with(|s| s.borrow_mut().push(seen));
}

/// Logged once per process: whether the windows can be kept out of captures here.
static AFFINITY_LOGGED: AtomicBool = AtomicBool::new(false);

pub(crate) fn wide(s: &str) -> Vec<u16> {
    s.encode_utf16().chain(Some(0)).collect()
}

fn graphics(what: &str) -> UiError {
    // SAFETY: reads this thread's last-error value.
    let code = unsafe { GetLastError() };
    UiError::Graphics(format!("{what} failed (Win32 error {code})"))
}

/// The windows' classes registered, and the message-only window that wakes the loop.
pub(crate) struct Desktop {
    wake: HWND,
}

impl Desktop {
    /// Register the window classes and hook the state's repaints to the loop.
    pub(crate) fn open(state: &OperatorState) -> Result<Self, UiError> {
        register(OVERLAY_CLASS, Some(overlay_proc))?;
        register(PROMPT_CLASS, Some(prompt_proc))?;
        register(HOST_CLASS, Some(prompt_proc))?;
        register(SETTINGS_CLASS, Some(prompt_proc))?;
        register(WAKE_CLASS, Some(wake_proc))?;
        let wake = create(0, WAKE_CLASS, "mcec operator", 0, (0, 0, 0, 0), HWND_MESSAGE)?;
        // The HWND travels as an integer: a window handle is a plain id, valid from any thread.
        let wake_id = wake as isize;
        state.set_repaint_hook(move || {
            // SAFETY: posting to a window id has no memory effects here; a destroyed window only
            // makes the call fail.
            unsafe { PostMessageW(wake_id as HWND, WM_WAKE, 0, 0) };
        });
        Ok(Self { wake })
    }
}

impl Drop for Desktop {
    fn drop(&mut self) {
        // SAFETY: the message-only window was created on this thread and is destroyed once.
        unsafe { DestroyWindow(self.wake) };
    }
}

pub(crate) fn register(class: &str, proc_: WNDPROC) -> Result<(), UiError> {
    let name = wide(class);
    // SAFETY: a null name asks for this executable's module handle.
    let instance = unsafe { GetModuleHandleW(null()) };
    let wc = WNDCLASSEXW {
        cbSize: size_of::<WNDCLASSEXW>() as u32,
        lpfnWndProc: proc_,
        hInstance: instance,
        lpszClassName: name.as_ptr(),
        // SAFETY: WNDCLASSEXW is plain data; every other field may be zero.
        ..unsafe { std::mem::zeroed() }
    };
    // SAFETY: wc is filled and its class name outlives the call (Windows copies it).
    if unsafe { RegisterClassExW(&wc) } == 0 {
        return Err(graphics(&format!("RegisterClassExW({class})")));
    }
    Ok(())
}

pub(crate) fn create(
    ex: u32,
    class: &str,
    title: &str,
    style: u32,
    rect: (i32, i32, i32, i32),
    parent: HWND,
) -> Result<HWND, UiError> {
    let (class_w, title_w) = (wide(class), wide(title));
    let (x, y, w, h) = rect;
    // SAFETY: class and title are NUL-terminated and outlive the call; the class is registered.
    let hwnd = unsafe {
        CreateWindowExW(
            ex,
            class_w.as_ptr(),
            title_w.as_ptr(),
            style,
            x,
            y,
            w,
            h,
            parent,
            null_mut(),
            GetModuleHandleW(null()),
            null(),
        )
    };
    if hwnd.is_null() {
        return Err(graphics(&format!("CreateWindowExW({class})")));
    }
    Ok(hwnd)
}

/// The primary monitor's size, in the pixels windows are placed in.
fn monitor() -> egui::Vec2 {
    // SAFETY: plain metric queries.
    let (w, h) = unsafe { (GetSystemMetrics(SM_CXSCREEN), GetSystemMetrics(SM_CYSCREEN)) };
    egui::vec2(w as f32, h as f32)
}

const PROMPT_STYLE: u32 = WS_POPUP | WS_CAPTION | WS_SYSMENU;
const PROMPT_EX: u32 = WS_EX_TOPMOST | WS_EX_DLGMODALFRAME;
const OVERLAY_EX: u32 =
    WS_EX_TOPMOST | WS_EX_TRANSPARENT | WS_EX_LAYERED | WS_EX_NOACTIVATE | WS_EX_TOOLWINDOW;
/// The host and settings windows: ordinary, not topmost, fixed size.
const HOST_STYLE: u32 = WS_OVERLAPPED | WS_CAPTION | WS_SYSMENU | WS_MINIMIZEBOX;

/// A role's window: extended style, class, title, style.
fn kind(role: Role) -> (u32, &'static str, &'static str, u32) {
    match role {
        Role::Overlay => (OVERLAY_EX, OVERLAY_CLASS, overlay::OVERLAY_TITLE, WS_POPUP),
        Role::Prompt => (PROMPT_EX, PROMPT_CLASS, prompt::PROMPT_TITLE, PROMPT_STYLE),
        Role::Consent => (PROMPT_EX, PROMPT_CLASS, consent_prompt::CONSENT_TITLE, PROMPT_STYLE),
        Role::OptIn => (PROMPT_EX, PROMPT_CLASS, crate::opt_in_prompt::OPT_IN_TITLE, PROMPT_STYLE),
        Role::Reveal => (PROMPT_EX, PROMPT_CLASS, crate::reveal_prompt::REVEAL_TITLE, PROMPT_STYLE),
        Role::End => (PROMPT_EX, PROMPT_CLASS, crate::end_prompt::END_TITLE, PROMPT_STYLE),
        Role::Host => (0, HOST_CLASS, host::HOST_TITLE, HOST_STYLE),
        Role::Settings => (0, SETTINGS_CLASS, settings_window::SETTINGS_TITLE, HOST_STYLE),
    }
}

/// The outer rectangle (x, y, width, height) of a window whose client area is `layout`.
fn outer(role: Role, layout: &Layout) -> (i32, i32, i32, i32) {
    let (x, y) = (i32::from(layout.pos.0), i32::from(layout.pos.1));
    let mut r =
        RECT { left: x, top: y, right: x + i32::from(layout.size.0), bottom: y + i32::from(layout.size.1) };
    if role != Role::Overlay {
        let (ex, _, _, style) = kind(role);
        // SAFETY: r is a valid RECT to adjust.
        unsafe { AdjustWindowRectEx(&mut r, style, 0, ex) };
    }
    (r.left, r.top, r.right - r.left, r.bottom - r.top)
}

/// Ask Windows to leave `hwnd` out of every capture; log once whether it can.
fn exclude_from_capture(hwnd: HWND) {
    // SAFETY: hwnd is a live window of this thread.
    let ok = unsafe { SetWindowDisplayAffinity(hwnd, WDA_EXCLUDEFROMCAPTURE) } != 0;
    // SAFETY: reads this thread's last-error value.
    let code = unsafe { GetLastError() };
    if !AFFINITY_LOGGED.swap(true, Ordering::Relaxed) {
        if ok {
            tracing::info!("operator windows are excluded from screen captures (WDA_EXCLUDEFROMCAPTURE)");
        } else {
            tracing::warn!(
                "operator windows cannot be excluded from screen captures here \
                 (SetWindowDisplayAffinity refused, Win32 error {code}): agent captures may show the banner"
            );
        }
    }
}

impl Surface for Desktop {
    type Window = HWND;
    type Id = HWND;

    fn id(window: &HWND) -> HWND {
        *window
    }

    fn monitor(&self) -> egui::Vec2 {
        monitor()
    }

    fn create(&mut self, role: Role, layout: Layout) -> Result<HWND, UiError> {
        let (ex, class, title, style) = kind(role);
        let hwnd = create(ex, class, title, style, outer(role, &layout), null_mut())?;
        if role == Role::Overlay {
            // A layered window shows nothing until it has an opacity.
            // SAFETY: a live window of this thread.
            unsafe { SetLayeredWindowAttributes(hwnd, 0, 255, LWA_ALPHA) };
        }
        exclude_from_capture(hwnd);
        Ok(hwnd)
    }

    fn reveal(&mut self, role: Role, window: &HWND, canvas: &Canvas) -> Result<bool, UiError> {
        let hwnd = *window;
        // SAFETY: a live window of this thread.
        unsafe {
            if role == Role::Overlay {
                ShowWindow(hwnd, SW_SHOWNOACTIVATE);
            } else {
                ShowWindow(hwnd, SW_SHOW);
                SetForegroundWindow(hwnd);
                SetFocus(hwnd);
            }
        }
        show(hwnd, canvas);
        Ok(true)
    }

    fn reshape(&mut self, role: Role, window: &HWND, layout: Layout) -> Result<(), UiError> {
        let (x, y, w, h) = outer(role, &layout);
        // SAFETY: a live window of this thread.
        unsafe { SetWindowPos(*window, null_mut(), x, y, w, h, SWP_NOZORDER | SWP_NOACTIVATE) };
        Ok(())
    }

    fn show(&mut self, window: &HWND, canvas: &Canvas) -> Result<(), UiError> {
        show(*window, canvas);
        Ok(())
    }

    fn paint(&mut self, window: &mut HWND, canvas: &Canvas, _last: bool) -> Result<(), UiError> {
        show(*window, canvas);
        Ok(())
    }

    fn raise(&mut self, window: &HWND) -> Result<(), UiError> {
        // SAFETY: a live window of this thread.
        unsafe {
            ShowWindow(*window, if IsIconic(*window) != 0 { SW_RESTORE } else { SW_SHOW });
            SetForegroundWindow(*window);
        }
        Ok(())
    }

    fn destroy(&mut self, window: HWND) {
        // SAFETY: the window was created on this thread and is destroyed once.
        unsafe { DestroyWindow(window) };
    }

    fn wait(&mut self, until: Option<Instant>) -> Vec<Seen> {
        let timeout = match until {
            Some(at) => u32::try_from(at.saturating_duration_since(Instant::now()).as_millis())
                .unwrap_or(WAIT_FOREVER - 1),
            None => WAIT_FOREVER,
        };
        // SAFETY: no handles to wait on, only this thread's message queue.
        unsafe { MsgWaitForMultipleObjectsEx(0, null(), timeout, QS_ALLINPUT, MWMO_INPUTAVAILABLE) };
        // SAFETY: MSG is plain data for PeekMessageW to fill.
        let mut msg: MSG = unsafe { std::mem::zeroed() };
        // SAFETY: msg is valid; every message of this thread is taken and dispatched.
        while unsafe { PeekMessageW(&mut msg, null_mut(), 0, 0, PM_REMOVE) } != 0 {
            if msg.message == WM_QUIT {
                return vec![Seen::End(Ok(()))];
            }
            // SAFETY: msg came from PeekMessageW.
            unsafe { DispatchMessageW(&msg) };
        }
        SEEN.with(|s| std::mem::take(&mut *s.borrow_mut()))
    }
}

/// Copy a frame into its window.
fn show(hwnd: HWND, canvas: &Canvas) {
    let (w, h) = (canvas.width as i32, canvas.height as i32);
    let info = BITMAPINFO {
        bmiHeader: BITMAPINFOHEADER {
            biSize: size_of::<BITMAPINFOHEADER>() as u32,
            biWidth: w,
            // Negative: rows top to bottom, as the canvas holds them.
            biHeight: -h,
            biPlanes: 1,
            biBitCount: 32,
            biCompression: BI_RGB,
            // SAFETY: BITMAPINFOHEADER is plain data; the rest may be zero.
            ..unsafe { std::mem::zeroed() }
        },
        // SAFETY: plain data, unused for a 32-bit BI_RGB image.
        bmiColors: unsafe { std::mem::zeroed() },
    };
    // SAFETY: the canvas holds w*h 32-bit pixels (0x00RRGGBB, which is BI_RGB's byte order);
    // the DC is released before returning.
    unsafe {
        let dc = GetDC(hwnd);
        if dc.is_null() {
            return;
        }
        SetDIBitsToDevice(
            dc,
            0,
            0,
            w as u32,
            h as u32,
            0,
            0,
            0,
            h as u32,
            canvas.pixels.as_ptr().cast(),
            &info,
            DIB_RGB_COLORS,
        );
        ReleaseDC(hwnd, dc);
    }
}

/// The WM_PAINT every window answers: validate, and let the loop copy the frame.
fn on_paint(hwnd: HWND) -> LRESULT {
    // SAFETY: PAINTSTRUCT is plain data; Begin/EndPaint are paired on the same window.
    unsafe {
        let mut ps: PAINTSTRUCT = std::mem::zeroed();
        BeginPaint(hwnd, &mut ps);
        EndPaint(hwnd, &ps);
    }
    note(Seen::Paint { window: hwnd, last: true });
    0
}

unsafe extern "system" fn overlay_proc(hwnd: HWND, msg: u32, wparam: WPARAM, lparam: LPARAM) -> LRESULT {
    match msg {
        WM_PAINT => on_paint(hwnd),
        WM_ERASEBKGND => 1,
        // Clicks fall through to the window below; a click never activates the banner.
        WM_NCHITTEST => HTTRANSPARENT as LRESULT,
        WM_MOUSEACTIVATE => MA_NOACTIVATE as LRESULT,
        // SAFETY: the default handling of every other message.
        _ => unsafe { DefWindowProcW(hwnd, msg, wparam, lparam) },
    }
}

unsafe extern "system" fn prompt_proc(hwnd: HWND, msg: u32, wparam: WPARAM, lparam: LPARAM) -> LRESULT {
    let pos = || egui::pos2(f32::from(low(lparam)), f32::from(high(lparam)));
    let button = |button, code, pressed: bool| {
        if let Some(how) = click_not_from_input(hwnd, lparam) {
            // Only a press is audited: its release follows it the same way.
            return pressed.then_some(Seen::Dropped(hwnd, "click", how));
        }
        // SAFETY: capture keeps the release with the window that saw the press.
        unsafe {
            if pressed {
                SetCapture(hwnd);
            } else {
                ReleaseCapture();
            }
        }
        let event = egui::Event::PointerButton { pos: pos(), button, pressed, modifiers: modifiers() };
        Some(Seen::Named(hwnd, event, message_id(Pressed::Button(code), pressed)))
    };
    let seen = match msg {
        WM_PAINT => return on_paint(hwnd),
        WM_ERASEBKGND => return 1,
        // The close button: a denial, decided by the prompt's own code.
        WM_CLOSE => Seen::Close(hwnd),
        WM_SETFOCUS => Seen::Focus(hwnd, true),
        WM_KILLFOCUS => Seen::Focus(hwnd, false),
        WM_MOUSEMOVE => Seen::Input(hwnd, egui::Event::PointerMoved(pos())),
        WM_LBUTTONDOWN => return noted(button(egui::PointerButton::Primary, 1, true)),
        WM_LBUTTONUP => return noted(button(egui::PointerButton::Primary, 1, false)),
        WM_MBUTTONDOWN => return noted(button(egui::PointerButton::Middle, 2, true)),
        WM_MBUTTONUP => return noted(button(egui::PointerButton::Middle, 2, false)),
        WM_RBUTTONDOWN => return noted(button(egui::PointerButton::Secondary, 3, true)),
        WM_RBUTTONUP => return noted(button(egui::PointerButton::Secondary, 3, false)),
        // No operator window is a button control: only a program presses one this way.
        BM_CLICK => Seen::Dropped(hwnd, "BM_CLICK", "sent or posted to the window"),
        WM_KEYDOWN | WM_KEYUP => {
            let Some(key) = key(wparam) else { return 0 };
            let pressed = msg == WM_KEYDOWN;
            // SAFETY: a plain query of the message this thread is handling.
            if unsafe { InSendMessage() } != 0 {
                return noted(pressed.then_some(Seen::Dropped(hwnd, "key press", SENT)));
            }
            let event =
                egui::Event::Key { key, physical_key: None, pressed, repeat: false, modifiers: modifiers() };
            // A key posted to a window without the keyboard goes unnamed, so it can dismiss (a
            // denial) but never press a control the core judges: its time could be a key the
            // operator typed elsewhere.
            // SAFETY: a plain query.
            if unsafe { GetForegroundWindow() } != hwnd {
                Seen::Input(hwnd, event)
            } else {
                Seen::Named(hwnd, event, message_id(Pressed::Key(wparam as u32), pressed))
            }
        }
        // SAFETY: the default handling of every other message.
        _ => return unsafe { DefWindowProcW(hwnd, msg, wparam, lparam) },
    };
    note(seen);
    0
}

/// How a message another thread sent (`SendMessageW`) came, for the audit.
const SENT: &str = "sent straight to the window (SendMessage)";

fn noted(seen: Option<Seen>) -> LRESULT {
    if let Some(seen) = seen {
        note(seen);
    }
    0
}

fn low(l: LPARAM) -> i16 {
    l as u16 as i16
}

fn high(l: LPARAM) -> i16 {
    (l >> 16) as u16 as i16
}

/// The message being handled, named as the input event behind it: its time is the `time` the
/// low-level hook saw for that event (the same for a key's `vkCode` and a button's number).
fn message_id(what: Pressed, down: bool) -> InputEventId {
    // SAFETY: reads the time of the message this thread is handling.
    let time = unsafe { GetMessageTime() } as u32;
    InputEventId { time, what, down }
}

/// How a mouse button message came when no input device made it, or `None` when it came
/// through the input queue: sent by another thread, or posted with a point that is not the
/// point the message was made at (a device's message carries its own point in both).
fn click_not_from_input(hwnd: HWND, lparam: LPARAM) -> Option<&'static str> {
    // SAFETY: plain queries of the message this thread is handling.
    if unsafe { InSendMessage() } != 0 {
        return Some(SENT);
    }
    // SAFETY: as above.
    let made_at = unsafe { GetMessagePos() } as LPARAM;
    let mut point = POINT { x: i32::from(low(lparam)), y: i32::from(high(lparam)) };
    // SAFETY: a live window of this thread and a POINT to convert.
    unsafe { ClientToScreen(hwnd, &mut point) };
    let pointer = POINT { x: i32::from(low(made_at)), y: i32::from(high(made_at)) };
    (point.x != pointer.x || point.y != pointer.y).then_some("posted to the window away from the pointer")
}

unsafe extern "system" fn wake_proc(hwnd: HWND, msg: u32, wparam: WPARAM, lparam: LPARAM) -> LRESULT {
    if msg == WM_WAKE {
        note(Seen::Wake);
        return 0;
    }
    // SAFETY: the default handling of every other message.
    unsafe { DefWindowProcW(hwnd, msg, wparam, lparam) }
}

/// The few keys the prompts use (Enter, Esc, Tab, Space, the arrows); others are ignored.
fn key(vk: WPARAM) -> Option<egui::Key> {
    let vk = u16::try_from(vk).ok()?;
    Some(match vk {
        VK_RETURN => egui::Key::Enter,
        VK_ESCAPE => egui::Key::Escape,
        VK_TAB => egui::Key::Tab,
        VK_SPACE => egui::Key::Space,
        VK_LEFT => egui::Key::ArrowLeft,
        VK_UP => egui::Key::ArrowUp,
        VK_RIGHT => egui::Key::ArrowRight,
        VK_DOWN => egui::Key::ArrowDown,
        _ => return None,
    })
}

fn modifiers() -> egui::Modifiers {
    // SAFETY: plain key-state queries of this thread's input state.
    let down = |vk: u16| unsafe { GetKeyState(i32::from(vk)) } < 0;
    let ctrl = down(VK_CONTROL);
    egui::Modifiers { alt: down(VK_MENU), ctrl, shift: down(VK_SHIFT), mac_cmd: false, command: ctrl }
}
