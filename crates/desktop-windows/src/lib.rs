//! mcec's Windows desktop backend: the desktop seams on Win32 and the emergency stop's
//! provenance monitor.
//!
//! [`WindowsDesktop`] implements mcec-desktop's `Backend` (GDI capture, `EnumWindows`,
//! `SendInput`), so `DesktopTools::new(Arc::new(WindowsDesktop::connect()?), config)` serves
//! the same tools, envelope and error codes as on X11. [`WindowsMonitor`] implements
//! `ProvenanceMonitor`: on Windows a low-level keyboard hook (`WH_KEYBOARD_LL`) sees, on every
//! key event, whether software sent it (`LLKHF_INJECTED`, set by `SendInput`) or a keyboard did,
//! which is the Windows answer to "who pressed that key" that the X11 source answers with
//! XInput2 device ids. [`hook`] owns the hooks on a dedicated thread and feeds the same
//! dispatcher, chord detector and latch as X11; [`inject`] sends input with `SendInput` and
//! marks mcec's own events in `dwExtraInfo`.
//!
//! [`clipboard`] is the Win32 clipboard (`CF_UNICODETEXT`), shared by the `clipboard` tool and
//! the Agent tab's Copy buttons.
//!
//! [`provenance`], [`vk`] and [`clipboard_text`] are pure (flag classification, virtual-key
//! mapping, the clipboard's line ends) and build and test on every target; everything that
//! calls Win32 is `cfg(windows)`.

// The Win32 items linked above exist only on Windows; elsewhere their links cannot resolve.
#![cfg_attr(not(windows), allow(rustdoc::broken_intra_doc_links))]

pub mod clipboard_text;
pub mod provenance;
pub mod vk;

#[cfg(all(windows, test))]
mod alloc_count;
#[cfg(windows)]
mod desktop;
#[cfg(windows)]
pub mod hook;
#[cfg(windows)]
pub mod inject;
#[cfg(windows)]
mod monitor;

#[cfg(windows)]
pub use desktop::WindowsDesktop;
#[cfg(windows)]
pub use desktop::clipboard;
#[cfg(windows)]
pub use monitor::WindowsMonitor;
