//! The tray icon on Windows: an icon in the notification area (`Shell_NotifyIconW`), owned by
//! a hidden window on a thread of its own (`mcec-tray`), as the StatusNotifierItem has one on
//! Unix.
//!
//! Why a thread of its own and not the painter's loop: the icon's menu is `TrackPopupMenu`,
//! whose modal loop runs until an item is picked or the menu dismissed; on the painter's
//! thread the banner and the host window would not repaint meanwhile, so a stop made while
//! the menu is open would not show.
//!
//! The window is a hidden top-level window, not a message-only one: Explorer broadcasts
//! `TaskbarCreated` when it (re)starts, and only top-level windows get broadcasts; on it the
//! icon is added again. Explorer's notifications about the icon (its callback message) are
//! sent, so handled inside `GetMessageW`; the window procedure only posts the loop what
//! happened, and the loop acts on it. The state's repaint hook wakes the loop, which changes
//! the icon and its tooltip only when their look changed. The menu is built from the state
//! when it opens ([`items`]); choosing calls [`choose`], exactly as the Unix tray does.
//! Where the notification area refuses the icon (no Explorer) one info line says so, and the
//! icon comes with the next `TaskbarCreated`. The icon is deleted (`NIM_DELETE`) as soon as
//! the host asks its windows to quit, and at the latest when they end ([`Shown`]'s drop): a
//! process that just ends leaves its icon in the notification area until the pointer passes
//! over it.

#![allow(unsafe_code)]

use std::os::windows::io::AsRawHandle as _;
use std::ptr::{null, null_mut};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::mpsc::{self, Sender};
use std::thread::JoinHandle;

use windows_sys::Win32::Foundation::{HWND, LPARAM, LRESULT, POINT, WAIT_OBJECT_0, WPARAM};
use windows_sys::Win32::System::LibraryLoader::GetModuleHandleW;
use windows_sys::Win32::UI::Shell::{
    NIF_ICON, NIF_MESSAGE, NIF_TIP, NIM_ADD, NIM_DELETE, NIM_MODIFY, NOTIFY_ICON_DATA_FLAGS,
    NOTIFY_ICON_MESSAGE, NOTIFYICONDATAW, Shell_NotifyIconW,
};
use windows_sys::Win32::UI::WindowsAndMessaging::{
    AppendMenuW, CreateIcon, CreatePopupMenu, DefWindowProcW, DestroyIcon, DestroyMenu, DestroyWindow,
    DispatchMessageW, EndMenu, GetCursorPos, GetMessageW, HICON, MF_ENABLED, MF_GRAYED, MF_STRING, MSG,
    MsgWaitForMultipleObjectsEx, PM_NOREMOVE, PM_QS_SENDMESSAGE, PeekMessageW, PostMessageW, PostQuitMessage,
    QS_SENDMESSAGE, RegisterWindowMessageW, SetForegroundWindow, TPM_NONOTIFY, TPM_RETURNCMD,
    TPM_RIGHTBUTTON, TrackPopupMenu, WM_APP, WM_CONTEXTMENU, WM_LBUTTONUP, WM_NULL, WM_RBUTTONUP, WS_POPUP,
};

use super::bits::icon_bits;
use super::{ICON_SIZE, Item, Look, choose, items};
use crate::soft::win32::{WAIT_FOREVER, create, register, wide};
use crate::state::{OperatorEvent, OperatorState};

/// What Explorer sends the window about the icon (a click: the mouse message in `lparam`).
const WM_TRAY_CALLBACK: u32 = WM_APP + 20;
/// Posted by the state's repaint hook.
const WM_TRAY_WAKE: u32 = WM_APP + 21;
/// Posted by the window procedure: open the menu.
const WM_TRAY_MENU: u32 = WM_APP + 22;
/// Posted by the window procedure on `TaskbarCreated`: add the icon again.
const WM_TRAY_ADD: u32 = WM_APP + 23;
/// Posted by [`Shown`]'s drop: delete the icon and end the thread.
const WM_TRAY_END: u32 = WM_APP + 24;

/// The icon's id among the window's icons (it has one).
const ICON_ID: u32 = 1;
const CLASS: &str = "mcec-tray";

/// The message id of Explorer's `TaskbarCreated` broadcast (0 until registered).
static TASKBAR_CREATED: AtomicU32 = AtomicU32::new(0);

/// The icon while the host's windows run: dropping it deletes the icon and ends its thread.
pub(crate) struct Shown {
    window: isize,
    thread: Option<JoinHandle<()>>,
}

impl Drop for Shown {
    fn drop(&mut self) {
        // SAFETY: posting to a window id has no memory effects; a gone window makes it fail.
        unsafe { PostMessageW(self.window as HWND, WM_TRAY_END, 0, 0) };
        if let Some(thread) = self.thread.take() {
            end(thread);
        }
    }
}

/// Wait for the icon's thread to end, answering the messages other threads send this one
/// meanwhile. The icon's thread may be waiting on Explorer (deleting the icon is a message
/// Explorer answers), and a message sent to this thread's windows meanwhile (its IME window
/// is one) would never be answered by a plain join: each thread would wait on the other.
fn end(thread: JoinHandle<()>) {
    let handle = thread.as_raw_handle();
    loop {
        // SAFETY: the thread's handle stays open while `thread` lives.
        let woke = unsafe { MsgWaitForMultipleObjectsEx(1, &handle, WAIT_FOREVER, QS_SENDMESSAGE, 0) };
        if woke != WAIT_OBJECT_0 + 1 {
            break;
        }
        // SAFETY: MSG is plain data; peeking answers the messages sent to this thread.
        unsafe {
            let mut msg: MSG = std::mem::zeroed();
            PeekMessageW(&mut msg, null_mut(), 0, 0, PM_NOREMOVE | PM_QS_SENDMESSAGE);
        }
    }
    let _ = thread.join();
}

/// Start the icon's thread; `None` (and one info line) when it has no window to own the icon.
pub(super) fn start(state: OperatorState, events: Sender<OperatorEvent>) -> Option<Shown> {
    let (ready, window) = mpsc::sync_channel(1);
    let spawned = std::thread::Builder::new().name("mcec-tray".into()).spawn(move || match open() {
        Ok(hwnd) => {
            let _ = ready.send(Some(hwnd as isize));
            run(hwnd, &state, &events);
        }
        Err(e) => {
            tracing::info!("no tray icon: {e}");
            let _ = ready.send(None);
        }
    });
    let thread = match spawned {
        Ok(thread) => thread,
        Err(e) => {
            tracing::info!("no tray icon: its thread could not start: {e}");
            return None;
        }
    };
    match window.recv() {
        Ok(Some(window)) => Some(Shown { window, thread: Some(thread) }),
        _ => None,
    }
}

/// The hidden window that owns the icon, and `TaskbarCreated`'s id.
fn open() -> Result<HWND, crate::UiError> {
    let name = wide("TaskbarCreated");
    // SAFETY: a NUL-terminated name that outlives the call.
    TASKBAR_CREATED.store(unsafe { RegisterWindowMessageW(name.as_ptr()) }, Ordering::Relaxed);
    register(CLASS, Some(tray_proc))?;
    create(0, CLASS, "mcec tray", WS_POPUP, (0, 0, 0, 0), null_mut())
}

fn run(hwnd: HWND, state: &OperatorState, events: &Sender<OperatorEvent>) {
    let id = hwnd as isize;
    state.set_repaint_hook(move || {
        // SAFETY: as in `Shown::drop`.
        unsafe { PostMessageW(id as HWND, WM_TRAY_WAKE, 0, 0) };
    });
    let mut icon = NotifyIcon::new(hwnd, Look::of(&state.snapshot()));
    icon.add(false);
    // SAFETY: MSG is plain data for GetMessageW to fill.
    let mut msg: MSG = unsafe { std::mem::zeroed() };
    // SAFETY: msg is valid; the loop ends on WM_QUIT (0) or an error (-1).
    while unsafe { GetMessageW(&mut msg, null_mut(), 0, 0) } > 0 {
        match msg.message {
            WM_TRAY_WAKE => {
                let snap = state.snapshot();
                // The host is quitting: the icon goes now, while the windows close.
                if snap.quit_requested {
                    break;
                }
                icon.set(Look::of(&snap));
            }
            WM_TRAY_ADD => icon.add(true),
            WM_TRAY_MENU => {
                if let Some(item) = menu(hwnd, state) {
                    choose(item, state, events);
                }
            }
            // SAFETY: msg came from GetMessageW.
            _ => unsafe {
                DispatchMessageW(&msg);
            },
        }
    }
    icon.delete();
    // SAFETY: the window was created on this thread and is destroyed once.
    unsafe { DestroyWindow(hwnd) };
}

/// Show the menu at the pointer until an item is picked or it is dismissed; the item picked.
fn menu(hwnd: HWND, state: &OperatorState) -> Option<Item> {
    let offered = items(&state.snapshot());
    // SAFETY: a new menu, destroyed below.
    let menu = unsafe { CreatePopupMenu() };
    if menu.is_null() {
        tracing::warn!("the tray's menu could not be made");
        return None;
    }
    for (i, (item, enabled)) in offered.iter().enumerate() {
        let label = wide(item.label());
        let flags = MF_STRING | if *enabled { MF_ENABLED } else { MF_GRAYED };
        // SAFETY: a live menu and a NUL-terminated label that outlives the call (Windows copies it).
        unsafe { AppendMenuW(menu, flags, i + 1, label.as_ptr()) };
    }
    let mut at = POINT { x: 0, y: 0 };
    // SAFETY: a POINT to fill; the window and menu are live and this thread's. The window goes
    // to the foreground first and is posted a null message after, or the menu would not close
    // when the operator clicks elsewhere (Shell_NotifyIcon's documented pattern).
    let picked = unsafe {
        GetCursorPos(&mut at);
        SetForegroundWindow(hwnd);
        tracing::info!("the tray's menu is open");
        let picked =
            TrackPopupMenu(menu, TPM_RETURNCMD | TPM_NONOTIFY | TPM_RIGHTBUTTON, at.x, at.y, 0, hwnd, null());
        PostMessageW(hwnd, WM_NULL, 0, 0);
        DestroyMenu(menu);
        picked
    };
    let index = usize::try_from(picked).ok()?.checked_sub(1)?;
    offered.get(index).filter(|(_, enabled)| *enabled).map(|&(item, _)| item)
}

unsafe extern "system" fn tray_proc(hwnd: HWND, msg: u32, wparam: WPARAM, lparam: LPARAM) -> LRESULT {
    let post = |what: u32| {
        // SAFETY: posting to this thread's own live window.
        unsafe { PostMessageW(hwnd, what, 0, 0) };
        0
    };
    match msg {
        // A click on the icon, right or left, opens the menu (the mouse message is lparam's low word).
        WM_TRAY_CALLBACK => match (lparam & 0xFFFF) as u32 {
            WM_LBUTTONUP | WM_RBUTTONUP | WM_CONTEXTMENU => post(WM_TRAY_MENU),
            _ => 0,
        },
        // Inside the menu's modal loop too: close the menu, then the loop ends on WM_QUIT.
        WM_TRAY_END => {
            // SAFETY: ends this thread's menu, if one is open, and posts WM_QUIT to this thread.
            unsafe {
                EndMenu();
                PostQuitMessage(0);
            }
            0
        }
        _ if msg != 0 && msg == TASKBAR_CREATED.load(Ordering::Relaxed) => post(WM_TRAY_ADD),
        // SAFETY: the default handling of every other message.
        _ => unsafe { DefWindowProcW(hwnd, msg, wparam, lparam) },
    }
}

/// The icon as the notification area knows it: its window, look, image and whether it is there.
struct NotifyIcon {
    hwnd: HWND,
    look: Look,
    image: HICON,
    added: bool,
}

impl NotifyIcon {
    fn new(hwnd: HWND, look: Look) -> Self {
        Self { hwnd, look, image: image(look), added: false }
    }

    fn data(&self, flags: NOTIFY_ICON_DATA_FLAGS) -> NOTIFYICONDATAW {
        let mut tip = [0u16; 128];
        let words: Vec<u16> = format!("mcec: {}", self.look.words()).encode_utf16().collect();
        let len = words.len().min(tip.len() - 1);
        tip[..len].copy_from_slice(&words[..len]);
        NOTIFYICONDATAW {
            cbSize: size_of::<NOTIFYICONDATAW>() as u32,
            hWnd: self.hwnd,
            uID: ICON_ID,
            uFlags: flags,
            uCallbackMessage: WM_TRAY_CALLBACK,
            hIcon: self.image,
            szTip: tip,
            // SAFETY: NOTIFYICONDATAW is plain data; the other fields may be zero.
            ..unsafe { std::mem::zeroed() }
        }
    }

    fn notify(&self, message: NOTIFY_ICON_MESSAGE, flags: NOTIFY_ICON_DATA_FLAGS) -> bool {
        // SAFETY: the data is filled and lives through the call.
        unsafe { Shell_NotifyIconW(message, &self.data(flags)) != 0 }
    }

    /// Put the icon in the notification area (again, after `TaskbarCreated`).
    fn add(&mut self, again: bool) {
        if again && self.added {
            // A taskbar that still holds the icon (a `TaskbarCreated` without a restart) would
            // refuse a second add; after a restart this finds nothing to delete.
            self.notify(NIM_DELETE, 0);
        }
        self.added = self.notify(NIM_ADD, NIF_MESSAGE | NIF_ICON | NIF_TIP);
        match (self.added, again) {
            (true, false) => tracing::info!("tray icon shown (notification area)"),
            (true, true) => tracing::info!("tray icon shown again (the taskbar was created anew)"),
            (false, _) => tracing::info!(
                "no tray icon: the notification area refused it (Shell_NotifyIconW); \
                 it is added when a taskbar starts"
            ),
        }
    }

    /// Show `look`, when it is not what the icon shows.
    fn set(&mut self, look: Look) {
        if look == self.look {
            return;
        }
        let old = std::mem::replace(&mut self.image, image(look));
        self.look = look;
        if self.added {
            self.notify(NIM_MODIFY, NIF_ICON | NIF_TIP);
        }
        destroy(old);
    }

    fn delete(&mut self) {
        if std::mem::take(&mut self.added) {
            self.notify(NIM_DELETE, 0);
            tracing::info!("tray icon removed");
        }
    }
}

impl Drop for NotifyIcon {
    fn drop(&mut self) {
        destroy(self.image);
    }
}

/// The icon's image for `look` (null, and the notification area shows a blank, if refused).
fn image(look: Look) -> HICON {
    let (mask, bgra) = icon_bits(look);
    let side = ICON_SIZE as i32;
    // SAFETY: both buffers hold a whole `side`x`side` image in the layout CreateIcon reads
    // (bits.rs) and outlive the call, which copies them.
    let image =
        unsafe { CreateIcon(GetModuleHandleW(null()), side, side, 1, 32, mask.as_ptr(), bgra.as_ptr()) };
    if image.is_null() {
        tracing::warn!("the tray icon's image could not be made (CreateIcon)");
    }
    image
}

fn destroy(image: HICON) {
    if !image.is_null() {
        // SAFETY: an icon this module made, destroyed once.
        unsafe { DestroyIcon(image) };
    }
}
