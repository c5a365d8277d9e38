//! The emergency stop's provenance source on Windows, behind mcec-desktop's
//! [`ProvenanceMonitor`] seam: the caller arms it exactly as it arms the X11 source, with a
//! [`MonitorSink`] (latch, chord, ledger), and gets the same [`MonitorHandle`] back.
//!
//! The work is the low-level hook thread in [`crate::hook`]; this file only adapts it. A hook
//! sees every keyboard and mouse on the desktop and every `SendInput` caller flagged as
//! injected, so the coverage is full, within what Windows itself attributes (input from a
//! driver below the hook, e.g. a remote-desktop or KVM driver, looks physical).

use std::sync::Arc;
use std::sync::atomic::AtomicBool;

use mcec_desktop::monitor::{
    Coverage, MonitorError, MonitorHandle, MonitorSink, MonitorStatus, ProvenanceMonitor, StatusCell,
};

use crate::hook::{self, HookConfig, HookError};

/// The Windows source: `WH_KEYBOARD_LL` and `WH_MOUSE_LL` on a thread of their own.
#[derive(Debug, Clone, Default)]
pub struct WindowsMonitor(());

impl WindowsMonitor {
    /// A monitor for this session's desktop. Nothing can fail before `start` installs the
    /// hooks; the `Result` keeps the shape of the X11 source's constructor.
    pub fn new() -> Result<WindowsMonitor, MonitorError> {
        Ok(WindowsMonitor(()))
    }
}

impl ProvenanceMonitor for WindowsMonitor {
    /// Returns once both hooks are installed: `Ok` means the stop is armed. When a hook cannot
    /// be installed the caller gets `Setup` and must refuse actuation
    /// (`emergency-stop-unavailable`), as on X11.
    fn start(self, sink: MonitorSink) -> Result<MonitorHandle, MonitorError> {
        let stats = sink.stats.clone();
        let monitor = hook::start(HookConfig { sink, events: None }).map_err(|e| match e {
            HookError::Thread(d) => MonitorError::Thread(d),
            HookError::Install(d) => MonitorError::Setup(d),
        })?;
        let status = StatusCell::default();
        status.set(MonitorStatus::Running(Coverage::Full));
        let (thread, stopper) = monitor.into_parts();
        Ok(MonitorHandle::new(status, stats, Arc::new(AtomicBool::new(false)), stopper, vec![thread]))
    }
}
