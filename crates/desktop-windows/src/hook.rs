//! The emergency stop's provenance monitor on Windows: low-level hooks on a thread of their own.
//!
//! [`start`] spawns one thread that installs `WH_KEYBOARD_LL` and `WH_MOUSE_LL` and runs the
//! message loop Windows needs to call them. The callbacks run on that thread and do only the
//! fast part: classify the event by its `INJECTED` flags ([`crate::provenance`]) and hand it to
//! mcec-desktop's platform-neutral [`Dispatcher`], the same one the X11 source feeds: it notes
//! the press in the ledger the re-arm path reads, feeds keys to the pure chord detector and,
//! when it fires, engages the latch (atomics). A callback never blocks, logs, allocates or
//! wakes another thread, because Windows silently unhooks a callback slower than
//! `LowLevelHooksTimeout`, and a wake can hand the CPU to the woken thread mid-callback.
//! The loop announces the trip, which wakes the stop worker, only after the callback has
//! answered: every hook call happens inside `PeekMessageW` (Windows calls a low-level hook by
//! sending the installing thread a message), so the loop peeks, announces, then sleeps in
//! `MsgWaitForMultipleObjectsEx` until the next message. The thread runs at
//! `THREAD_PRIORITY_TIME_CRITICAL`, as Windows advises for a low-level hook's thread.
//! Observers get [`HookEvent`]s through a bounded channel that never blocks the hook.
//!
//! A low-level hook cannot tell one keyboard from another, so every key counts as device 0:
//! a modifier held on one keyboard and the main key on another still make the chord.

#![allow(unsafe_code)]

use std::cell::RefCell;
use std::fmt;
use std::sync::mpsc::{self, SyncSender};
use std::thread::{self, JoinHandle};
use std::time::Instant;

use mcec_desktop::monitor::{ClassifiedEvent, Dispatcher, Input, MonitorSink, MonitorStats, StatsSnapshot};
use mcec_rules::chord::Key;
use windows_sys::Win32::Foundation::{GetLastError, LPARAM, LRESULT, WPARAM};
use windows_sys::Win32::System::LibraryLoader::GetModuleHandleW;
use windows_sys::Win32::System::Threading::{
    GetCurrentThread, GetCurrentThreadId, INFINITE, SetThreadPriority, THREAD_PRIORITY_TIME_CRITICAL,
};
use windows_sys::Win32::UI::WindowsAndMessaging::{
    CallNextHookEx, DispatchMessageW, HC_ACTION, HHOOK, KBDLLHOOKSTRUCT, MSG, MSLLHOOKSTRUCT,
    MWMO_INPUTAVAILABLE, MsgWaitForMultipleObjectsEx, PM_NOREMOVE, PM_REMOVE, PeekMessageW,
    PostThreadMessageW, QS_ALLINPUT, SetWindowsHookExW, TranslateMessage, UnhookWindowsHookEx,
    WH_KEYBOARD_LL, WH_MOUSE_LL, WM_KEYDOWN, WM_LBUTTONDOWN, WM_LBUTTONUP, WM_MBUTTONDOWN, WM_MBUTTONUP,
    WM_QUIT, WM_RBUTTONDOWN, WM_RBUTTONUP, WM_SYSKEYDOWN, WM_USER,
};

use crate::provenance::{self, Origin};
use crate::vk;

const _: () =
    assert!(provenance::LLKHF_INJECTED == windows_sys::Win32::UI::WindowsAndMessaging::LLKHF_INJECTED);
const _: () = assert!(
    provenance::LLKHF_LOWER_IL_INJECTED
        == windows_sys::Win32::UI::WindowsAndMessaging::LLKHF_LOWER_IL_INJECTED
);
const _: () =
    assert!(provenance::LLMHF_INJECTED == windows_sys::Win32::UI::WindowsAndMessaging::LLMHF_INJECTED);
const _: () = assert!(
    provenance::LLMHF_LOWER_IL_INJECTED
        == windows_sys::Win32::UI::WindowsAndMessaging::LLMHF_LOWER_IL_INJECTED
);

/// What the monitor needs: the sink (latch, chord, ledger, per-event timing) and an optional
/// observer of the hook's own view (flags, origin). Drain the observer with `try_recv` on a
/// timer: a receiver blocked in `recv` must be woken by the hook's send, inside the callback.
#[derive(Debug, Clone)]
pub struct HookConfig {
    pub sink: MonitorSink,
    pub events: Option<SyncSender<HookEvent>>,
}

/// A key (its virtual-key code and logical meaning) or a mouse button (1 left, 2 middle,
/// 3 right, as on X11).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HookInput {
    Key { vk: u32, key: Key },
    Button(u8),
}

/// One event as the hook classified it, for observers (tests, diagnostics). Never log the
/// key codes of a real operator's typing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HookEvent {
    pub input: HookInput,
    pub down: bool,
    pub origin: Origin,
    /// The raw `flags` of the hook structure.
    pub flags: u32,
    /// The hook structure's `time`: the event's time, as its window message carries it.
    pub time: u32,
    /// Time spent in the callback on classification, detector and latch, before the offer.
    pub work_nanos: u64,
    /// True when this very event engaged the latch (the worker is woken after the callback).
    pub tripped: bool,
}

/// Why the monitor could not start. The stop is not armed then: actuation must answer
/// `emergency-stop-unavailable`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HookError {
    Thread(String),
    Install(String),
}

impl fmt::Display for HookError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            HookError::Thread(d) => write!(f, "cannot start the input hook thread: {d}"),
            HookError::Install(d) => write!(f, "cannot install the low-level input hook: {d}"),
        }
    }
}

impl std::error::Error for HookError {}

/// The running monitor. Dropping it removes the hooks and ends the thread.
#[derive(Debug)]
pub struct HookMonitor {
    thread_id: u32,
    thread: Option<JoinHandle<()>>,
    stats: MonitorStats,
}

impl HookMonitor {
    /// Whole-callback time per event, up to the return of `CallNextHookEx` (under Wine that
    /// call is a round trip to wineserver).
    pub fn stats(&self) -> StatsSnapshot {
        self.stats.snapshot()
    }

    /// The hook thread and a way to end it, for [`mcec_desktop::monitor::MonitorHandle`].
    pub(crate) fn into_parts(mut self) -> (JoinHandle<()>, Box<dyn FnOnce() + Send>) {
        let thread_id = self.thread_id;
        let thread = self.thread.take().expect("a running monitor has its thread");
        (thread, Box::new(move || post_quit(thread_id)))
    }

    /// True while the hook thread runs its message loop.
    pub fn is_running(&self) -> bool {
        self.thread.as_ref().is_some_and(|t| !t.is_finished())
    }
}

fn post_quit(thread_id: u32) {
    // SAFETY: posting a message to a thread id has no memory effects on our side.
    unsafe { PostThreadMessageW(thread_id, WM_QUIT, 0, 0) };
}

impl Drop for HookMonitor {
    fn drop(&mut self) {
        if let Some(t) = self.thread.take() {
            post_quit(self.thread_id);
            let _ = t.join();
        }
    }
}

/// Starts the hook thread and returns once both hooks are installed, so `Ok` means armed.
pub fn start(cfg: HookConfig) -> Result<HookMonitor, HookError> {
    let (ready_tx, ready_rx) = mpsc::channel();
    let stats = cfg.sink.stats.clone();
    let thread = thread::Builder::new()
        .name("mcec-input-hook".into())
        .spawn(move || run(cfg, ready_tx))
        .map_err(|e| HookError::Thread(e.to_string()))?;
    match ready_rx.recv() {
        Ok(Ok(thread_id)) => Ok(HookMonitor { thread_id, thread: Some(thread), stats }),
        Ok(Err(e)) => {
            let _ = thread.join();
            Err(e)
        }
        Err(_) => Err(HookError::Thread("the hook thread ended before installing its hooks".into())),
    }
}

thread_local! {
    static STATE: RefCell<Option<HookState>> = const { RefCell::new(None) };
}

fn run(cfg: HookConfig, ready: mpsc::Sender<Result<u32, HookError>>) {
    // SAFETY: MSG is plain data; PeekMessageW only creates this thread's message queue here,
    // so the handle's WM_QUIT can never be lost.
    let mut msg: MSG = unsafe { std::mem::zeroed() };
    // SAFETY: as above: `msg` is a valid MSG to fill and nothing is removed from the queue.
    unsafe { PeekMessageW(&mut msg, std::ptr::null_mut(), WM_USER, WM_USER, PM_NOREMOVE) };
    STATE.with(|s| *s.borrow_mut() = Some(HookState::new(cfg)));
    let hooks = match install() {
        Ok(h) => h,
        Err(e) => {
            STATE.with(|s| s.borrow_mut().take());
            let _ = ready.send(Err(e));
            return;
        }
    };
    // SAFETY: a pseudo-handle for this thread; a refusal leaves the normal priority.
    if unsafe { SetThreadPriority(GetCurrentThread(), THREAD_PRIORITY_TIME_CRITICAL) } == 0 {
        // SAFETY: plain Win32 call with no arguments.
        let err = unsafe { GetLastError() };
        tracing::warn!("the input hook thread stays at normal priority (SetThreadPriority: error {err})");
    }
    // SAFETY: plain Win32 call with no arguments.
    let _ = ready.send(Ok(unsafe { GetCurrentThreadId() }));
    'pump: loop {
        // SAFETY: msg is a valid MSG to fill. The hook callbacks run inside this call.
        while unsafe { PeekMessageW(&mut msg, std::ptr::null_mut(), 0, 0, PM_REMOVE) } != 0 {
            if msg.message == WM_QUIT {
                break 'pump;
            }
            // SAFETY: `msg` was just filled by PeekMessageW on this thread.
            unsafe {
                TranslateMessage(&msg);
                DispatchMessageW(&msg);
            }
        }
        // Every callback of that batch has answered: now the trip may wake the worker.
        with_state(HookState::announce);
        // SAFETY: no handles; returns when any message (a hook call is a sent one) arrives.
        unsafe {
            MsgWaitForMultipleObjectsEx(0, std::ptr::null(), INFINITE, QS_ALLINPUT, MWMO_INPUTAVAILABLE)
        };
    }
    for h in hooks {
        // SAFETY: h came from SetWindowsHookExW on this thread and is removed once.
        unsafe { UnhookWindowsHookEx(h) };
    }
    STATE.with(|s| s.borrow_mut().take());
}

fn install() -> Result<[HHOOK; 2], HookError> {
    // SAFETY: a null name asks for this executable's module handle; the procs are
    // `extern "system"` functions with the HOOKPROC signature that live for the program.
    unsafe {
        let module = GetModuleHandleW(std::ptr::null());
        let kb = SetWindowsHookExW(WH_KEYBOARD_LL, Some(keyboard_proc), module, 0);
        if kb.is_null() {
            return Err(HookError::Install(format!("WH_KEYBOARD_LL: error {}", GetLastError())));
        }
        let mouse = SetWindowsHookExW(WH_MOUSE_LL, Some(mouse_proc), module, 0);
        if mouse.is_null() {
            let err = GetLastError();
            UnhookWindowsHookEx(kb);
            return Err(HookError::Install(format!("WH_MOUSE_LL: error {err}")));
        }
        Ok([kb, mouse])
    }
}

unsafe extern "system" fn keyboard_proc(code: i32, wparam: WPARAM, lparam: LPARAM) -> LRESULT {
    if code == HC_ACTION as i32 {
        let started = Instant::now();
        // SAFETY: for HC_ACTION, lparam points to a KBDLLHOOKSTRUCT valid during the call.
        let info = unsafe { &*(lparam as *const KBDLLHOOKSTRUCT) };
        let down = matches!(wparam as u32, WM_KEYDOWN | WM_SYSKEYDOWN);
        with_state(|s| s.key(info, down, started));
        // SAFETY: passing the call on unchanged; the hook handle argument is ignored.
        let next = unsafe { CallNextHookEx(std::ptr::null_mut(), code, wparam, lparam) };
        with_state(|s| s.dispatcher.account(started));
        return next;
    }
    // SAFETY: as above.
    unsafe { CallNextHookEx(std::ptr::null_mut(), code, wparam, lparam) }
}

unsafe extern "system" fn mouse_proc(code: i32, wparam: WPARAM, lparam: LPARAM) -> LRESULT {
    if code == HC_ACTION as i32
        && let Some((button, down)) = button_of(wparam as u32)
    {
        let started = Instant::now();
        // SAFETY: for HC_ACTION, lparam points to an MSLLHOOKSTRUCT valid during the call.
        let info = unsafe { &*(lparam as *const MSLLHOOKSTRUCT) };
        with_state(|s| s.button(info, button, down, started));
        // SAFETY: as in keyboard_proc.
        let next = unsafe { CallNextHookEx(std::ptr::null_mut(), code, wparam, lparam) };
        with_state(|s| s.dispatcher.account(started));
        return next;
    }
    // SAFETY: as in keyboard_proc.
    unsafe { CallNextHookEx(std::ptr::null_mut(), code, wparam, lparam) }
}

fn button_of(msg: u32) -> Option<(u8, bool)> {
    Some(match msg {
        WM_LBUTTONDOWN => (1, true),
        WM_LBUTTONUP => (1, false),
        WM_MBUTTONDOWN => (2, true),
        WM_MBUTTONUP => (2, false),
        WM_RBUTTONDOWN => (3, true),
        WM_RBUTTONUP => (3, false),
        _ => return None,
    })
}

fn with_state(f: impl FnOnce(&mut HookState)) {
    STATE.with(|s| {
        // A re-entered callback (nothing here pumps messages, but be safe) is passed on.
        if let Ok(mut guard) = s.try_borrow_mut()
            && let Some(state) = guard.as_mut()
        {
            f(state);
        }
    });
}

/// Lives in the hook thread's thread-local; owns the dispatcher (and so the chord detector).
struct HookState {
    dispatcher: Dispatcher,
    events: Option<SyncSender<HookEvent>>,
}

impl HookState {
    fn new(cfg: HookConfig) -> Self {
        HookState { dispatcher: Dispatcher::new(cfg.sink), events: cfg.events }
    }

    fn announce(&mut self) {
        self.dispatcher.announce();
    }

    fn key(&mut self, info: &KBDLLHOOKSTRUCT, down: bool, started: Instant) {
        let origin = provenance::classify_key(info.flags, info.dwExtraInfo);
        let key = vk::key_of(info.vkCode);
        let input = Input::Key { key, code: info.vkCode };
        let seen = HookInput::Key { vk: info.vkCode, key };
        self.dispatch(input, seen, down, origin, (info.flags, info.time), started);
    }

    fn button(&mut self, info: &MSLLHOOKSTRUCT, button: u8, down: bool, started: Instant) {
        let origin = provenance::classify_mouse(info.flags, info.dwExtraInfo);
        let input = Input::Button(u32::from(button));
        self.dispatch(input, HookInput::Button(button), down, origin, (info.flags, info.time), started);
    }

    fn dispatch(
        &mut self,
        input: Input,
        seen: HookInput,
        down: bool,
        origin: Origin,
        (flags, time): (u32, u32),
        started: Instant,
    ) {
        // A low-level hook cannot tell keyboards apart: every event is device 0. The hook's
        // `time` is the time the window message of this very event carries (GetMessageTime),
        // by which an operator window names the click or key that pressed a control.
        let ev = ClassifiedEvent {
            input,
            down,
            physical: origin.is_physical(),
            forged: false,
            source_device: 0,
            time,
            at: started,
        };
        let tripped = self.dispatcher.input(ev);
        if let Some(tx) = &self.events {
            let work_nanos = nanos_since(started);
            let _ = tx.try_send(HookEvent { input: seen, down, origin, flags, time, work_nanos, tripped });
        }
    }
}

fn nanos_since(t: Instant) -> u64 {
    u64::try_from(t.elapsed().as_nanos()).unwrap_or(u64::MAX)
}

#[cfg(test)]
mod tests {
    //! Run under Wine by `scripts/windows-build --test`. One test installs the hooks, so no
    //! other test's injected keys reach them (hooks are global); the other calls the callback
    //! itself.
    use super::*;
    use crate::inject::{self, Mark};
    use crate::vk::chord_strokes;
    use mcec_desktop::monitor::{InputEventId, LastPhysicalInput, Pressed, Provenance, Witness};
    use mcec_rules::StopFlag;
    use mcec_rules::hotkey::Hotkey;
    use mcec_rules::latch::Latch;
    use std::time::Duration;
    use windows_sys::Win32::UI::WindowsAndMessaging::WM_KEYUP;

    fn next(rx: &mpsc::Receiver<HookEvent>) -> HookEvent {
        // A hang guard, not a timed assertion.
        rx.recv_timeout(Duration::from_secs(30)).expect("the hook reported nothing")
    }

    /// Calls the keyboard callback directly on this thread, as Windows would, with a
    /// keyboard's (unflagged) chord: no hook is installed, so no other test's keys interfere.
    #[test]
    fn the_tripping_key_allocates_nothing_in_the_callback_and_the_loop_wakes_the_worker() {
        let latch = Latch::new(StopFlag::new());
        let sink = MonitorSink::new(latch.clone(), Hotkey::default(), LastPhysicalInput::new());
        STATE.with(|s| *s.borrow_mut() = Some(HookState::new(HookConfig { sink, events: None })));
        let strokes = chord_strokes(Hotkey::default());
        let press = |vk: u16, down: bool| {
            // SAFETY: KBDLLHOOKSTRUCT is plain data; zero flags is a keyboard's event.
            let mut info: KBDLLHOOKSTRUCT = unsafe { std::mem::zeroed() };
            info.vkCode = u32::from(vk);
            let wparam = if down { WM_KEYDOWN } else { WM_KEYUP };
            // SAFETY: lparam points to a KBDLLHOOKSTRUCT that outlives the call.
            unsafe { keyboard_proc(HC_ACTION as i32, wparam as WPARAM, &info as *const _ as LPARAM) };
        };
        for round in 0..3 {
            let in_callbacks = crate::alloc_count::allocations_in(|| {
                for (vk, down) in &strokes {
                    press(*vk, *down);
                }
            });
            assert!(latch.is_stopped(), "round {round}: the keyboard's chord engaged the latch");
            assert_eq!(in_callbacks, 0, "round {round}: the callbacks allocated");
            assert_eq!(
                latch.wait_for_trip_timeout(Duration::from_millis(1)),
                None,
                "round {round}: woken early"
            );
            let announcing = crate::alloc_count::allocations_in(|| with_state(HookState::announce));
            assert!(announcing > 0, "round {round}: the counter sees this thread's allocations");
            assert!(latch.wait_for_trip_timeout(Duration::from_secs(30)).is_some(), "round {round}: no wake");
        }
        STATE.with(|s| s.borrow_mut().take());
    }

    #[test]
    fn injected_chords_are_seen_flagged_and_never_trip() {
        let latch = Latch::new(StopFlag::new());
        let ledger = LastPhysicalInput::new();
        let (tx, rx) = mpsc::sync_channel(256);
        let sink = MonitorSink::new(latch.clone(), Hotkey::default(), ledger.clone());
        let cfg = HookConfig { sink: sink.clone(), events: Some(tx) };
        let monitor = start(cfg).expect("hook installs");
        assert!(monitor.is_running());

        let strokes = chord_strokes(Hotkey::default());
        for (mark, origin) in [(Mark::Foreign, Origin::Foreign), (Mark::Mcec, Origin::Mcec)] {
            inject::send_keys(&strokes, mark).expect("SendInput");
            for (vk, down) in &strokes {
                let ev = next(&rx);
                assert!(matches!(ev.input, HookInput::Key { vk: v, .. } if v == u32::from(*vk)), "{ev:?}");
                assert_eq!((ev.down, ev.origin, ev.tripped), (*down, origin, false), "{ev:?}");
                assert_ne!(ev.flags & provenance::LLKHF_INJECTED, 0);
            }
        }
        inject::click_left(Mark::Foreign).expect("SendInput click");
        let click = next(&rx);
        assert_eq!((click.input, click.down, click.origin), (HookInput::Button(1), true, Origin::Foreign));

        assert!(!latch.is_stopped());
        let seen = ledger.snapshot();
        assert_eq!((seen.last_physical_press, seen.last_physical_button), (None, None), "nothing physical");
        assert!(seen.last_injected_button.is_some(), "the ledger did see the injected presses");
        // The ring knows the injected press by the time its window message carries, so a
        // window that received that click is told it was synthetic.
        let press = InputEventId { time: click.time, what: Pressed::Button(1), down: true };
        assert_eq!(ledger.witness(&press), Witness { physical: None, synthetic: Some(Provenance::Injected) });
        assert_eq!(monitor.stats().events, 2 * strokes.len() as u64 + 2);
        drop(monitor);
        let again = start(HookConfig { sink, events: None });
        assert!(again.is_ok_and(|m| m.is_running()), "a stopped monitor leaves nothing behind");
    }
}
