//! A desktop connection made on first use and remade after it is lost, so the MCP layer can
//! start without a display, answer `no-desktop` (naming the display) while there is none,
//! and pick the display up once it appears.

use std::sync::{Arc, Mutex};

use mcec_rules::{ErrorCode, StopFlag, ToolError};

use super::{DesktopConfig, DesktopTools, ToolOutput, ToolRequest};

/// The desktop tools for one display, connected lazily.
pub struct DesktopHandle {
    display: Option<String>,
    config: DesktopConfig,
    current: Mutex<Option<Arc<DesktopTools>>>,
}

impl DesktopHandle {
    /// `display` `None` means `$DISPLAY` at connect time.
    pub fn new(display: Option<String>, config: DesktopConfig) -> DesktopHandle {
        DesktopHandle { display, config, current: Mutex::new(None) }
    }

    fn slot(&self) -> std::sync::MutexGuard<'_, Option<Arc<DesktopTools>>> {
        self.current.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The connected tools, connecting now if needed; `no-desktop` naming the display.
    pub fn get(&self) -> Result<Arc<DesktopTools>, ToolError> {
        let mut slot = self.slot();
        if let Some(t) = slot.as_ref() {
            return Ok(Arc::clone(t));
        }
        let tools = Arc::new(DesktopTools::connect_x11(self.display.as_deref(), self.config.clone())?);
        *slot = Some(Arc::clone(&tools));
        Ok(tools)
    }

    /// The tools if connected, without trying to connect.
    pub fn connected(&self) -> Option<Arc<DesktopTools>> {
        self.slot().clone()
    }

    /// Run a parsed call; a lost connection is dropped so the next call reconnects.
    pub fn run(&self, req: &ToolRequest, stop: &StopFlag) -> Result<ToolOutput, ToolError> {
        let tools = self.get()?;
        let result = tools.run(req, stop);
        if let Err(e) = &result
            && e.code == ErrorCode::NoDesktop
        {
            let mut slot = self.slot();
            if slot.as_ref().is_some_and(|t| Arc::ptr_eq(t, &tools)) {
                *slot = None;
            }
        }
        result
    }

    /// The emergency-stop path: release input and end recordings if connected.
    pub fn emergency_release(&self) -> Result<(), ToolError> {
        match self.connected() {
            Some(t) => t.emergency_release(),
            None => Ok(()),
        }
    }
}
