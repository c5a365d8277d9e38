//! Keeps the process alive when the operator windows lose their X display.
//!
//! winit talks to X through Xlib, whose default I/O-error handler *exits the process* when the
//! connection breaks (the display went away). mcec must outlive its display: the stop, the
//! protocol and the log keep going, and desktop tools answer `no-desktop`. So before the UI
//! starts, a handler is installed that logs the loss and parks the UI thread for good
//! (Xlib requires that the handler never return; returning would exit the process anyway).
//! Only the UI thread ever blocks here: mcec's own X connections use x11rb, not Xlib.

use std::os::raw::c_int;
use std::sync::Once;
use std::sync::atomic::{AtomicBool, Ordering};

use x11_dl::xlib::{Display, Xlib};

static INSTALLED: Once = Once::new();
static LOST: AtomicBool = AtomicBool::new(false);

/// True once the UI thread has lost its display and is parked for good: it will never
/// return from the event loop, and it holds that display's Xlib lock (Xlib calls the handler
/// with it held), so nothing may take the lock again, `exit`'s destructors included.
pub fn display_lost() -> bool {
    LOST.load(Ordering::SeqCst)
}

/// Install the handler once; a missing libX11 just means there is nothing to guard.
pub fn survive_display_loss() {
    INSTALLED.call_once(|| {
        let Ok(xlib) = Xlib::open() else { return };
        #[allow(unsafe_code, reason = "Xlib's C API: installing a process-wide I/O-error handler")]
        // SAFETY: `on_io_error` has the signature Xlib expects and never returns.
        unsafe {
            (xlib.XSetIOErrorHandler)(Some(on_io_error));
        }
        // x11-dl never unloads the library (no `Drop`), so the handler stays installed for
        // the process's life.
    });
}

#[allow(unsafe_code, reason = "called by Xlib through a C function pointer")]
unsafe extern "C" fn on_io_error(_display: *mut Display) -> c_int {
    tracing::error!("the operator windows lost their X display; they are gone, mcec carries on without them");
    LOST.store(true, Ordering::SeqCst);
    loop {
        std::thread::park();
    }
}
