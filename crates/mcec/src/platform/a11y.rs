//! Which accessibility backend and clipboard this build uses, beside the desktop's choice in
//! `platform.rs`: together the one place the binary names a platform's backends.
//!
//! The tool layers above (`mcec-a11y`'s tools, the MCP bindings, the Agent tab) see only an
//! [`AccessibilityBackend`] and a [`Clipboard`]. On Unix they are AT-SPI2 and the X11
//! selections (both in `mcec-a11y`); on Windows MSAA (`mcec-a11y`'s `msaa`, every answer
//! saying `via: "msaa"`) and the Win32 clipboard of `mcec-desktop-windows`.

use std::sync::Arc;

use mcec_a11y::A11yTools;
use mcec_a11y::seam::AccessibilityBackend;
use mcec_desktop::DesktopTools;
use mcec_desktop::clipboard::{Clipboard, Selection};
use mcec_rules::ToolError;

use crate::tool_display::ToolDisplay;

/// The accessibility tools over `desktop`, with this platform's backend and the clipboard of
/// the same desktop (`tools` names it: a session's own display has its own bus).
pub fn a11y_tools(desktop: Arc<DesktopTools>, tools: &ToolDisplay) -> A11yTools {
    let (backend, clipboard) = chosen::for_desktop(&desktop, tools);
    A11yTools::new(backend, clipboard, desktop)
}

/// The operator's Copy (the Agent tab): `text` on the clipboard of this process's desktop.
pub fn copy_for_operator(text: String) -> Result<(), ToolError> {
    chosen::operator_clipboard()?.set(Selection::Clipboard, text)
}

#[cfg(unix)]
mod chosen {
    use super::*;
    use mcec_a11y::atspi::Atspi;
    use mcec_a11y::x11_clipboard::X11Selections;

    /// AT-SPI2 (on the own display's bus when the tools act there), and the selections of
    /// the display the desktop tools drive.
    pub(super) fn for_desktop(
        desktop: &DesktopTools,
        tools: &ToolDisplay,
    ) -> (Arc<dyn AccessibilityBackend>, Arc<dyn Clipboard>) {
        let selections = X11Selections::new(desktop.backend().display_name());
        let atspi = match tools {
            ToolDisplay::Own(desk) => Atspi::on_session_bus(desk.bus.clone()),
            ToolDisplay::Operator | ToolDisplay::Failed(_) => Atspi::new(),
        };
        (Arc::new(atspi), Arc::new(selections))
    }

    /// The selections of this process's `DISPLAY`.
    pub(super) fn operator_clipboard() -> Result<Box<dyn Clipboard>, ToolError> {
        Ok(Box::new(X11Selections::of_environment()?))
    }
}

#[cfg(windows)]
mod chosen {
    use super::*;
    use mcec_a11y::msaa::Msaa;
    use mcec_desktop_windows::clipboard::WindowsClipboard;

    /// MSAA, and the one Windows clipboard.
    pub(super) fn for_desktop(
        _desktop: &DesktopTools,
        _tools: &ToolDisplay,
    ) -> (Arc<dyn AccessibilityBackend>, Arc<dyn Clipboard>) {
        (Arc::new(Msaa::new()), Arc::new(WindowsClipboard))
    }

    /// The one Windows clipboard.
    pub(super) fn operator_clipboard() -> Result<Box<dyn Clipboard>, ToolError> {
        Ok(Box::new(WindowsClipboard))
    }
}
