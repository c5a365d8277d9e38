//! The few things the shared loop ([`super::ui`]) asks of a platform's windows, and what a
//! platform tells it back. Everything else (which window is open where, painting, focus,
//! naming a click by its events, auditing dropped input) is decided once, in the loop.

use std::time::Instant;

use mcec_rules::activation::InputEventId;

use crate::UiError;
use crate::soft::pass::{Layout, Role};
use crate::soft::raster::Canvas;

/// What happened on a platform's windows since the loop last waited, in the order it happened.
pub(crate) enum Seen<Id> {
    /// The state asked for a repaint (its hook, called from any thread).
    Wake,
    /// The window system asks for the window's frame (an Expose, a `WM_PAINT`); `last` when no
    /// further request of the same batch follows.
    Paint {
        window: Id,
        last: bool,
    },
    /// The window's close button: a denial, decided by the window's own code.
    Close(Id),
    Focus(Id, bool),
    Input(Id, egui::Event),
    /// A click or key with the identity of the input event behind it.
    Named(Id, egui::Event, InputEventId),
    /// A press no input device made, dropped before any widget sees it: what it was and how
    /// it came, for the audit.
    Dropped(Id, &'static str, &'static str),
    /// The loop ends here, with this result (the window system quit the loop, or the
    /// connection to it broke).
    End(Result<(), UiError>),
}

/// A platform's windows, as the shared loop drives them. Every call is on the loop's thread.
pub(crate) trait Surface {
    /// One open window.
    type Window;
    /// How [`Seen`] names a window.
    type Id: Copy + PartialEq;

    fn id(window: &Self::Window) -> Self::Id;

    /// The size of the monitor the windows are placed on.
    fn monitor(&self) -> egui::Vec2;

    /// Create `role`'s window, not yet shown.
    fn create(&mut self, role: Role, layout: Layout) -> Result<Self::Window, UiError>;

    /// Put a new window on screen with its first frame, and give a prompt the focus. True when
    /// it is on screen from now on; false when from its first [`Seen::Paint`].
    fn reveal(&mut self, role: Role, window: &Self::Window, canvas: &Canvas) -> Result<bool, UiError>;

    fn reshape(&mut self, role: Role, window: &Self::Window, layout: Layout) -> Result<(), UiError>;

    /// Copy a new frame into the window, where it can show one yet.
    fn show(&mut self, window: &Self::Window, canvas: &Canvas) -> Result<(), UiError>;

    /// Answer a [`Seen::Paint`]: the window can show frames from now on.
    fn paint(&mut self, window: &mut Self::Window, canvas: &Canvas, last: bool) -> Result<(), UiError>;

    /// Bring a shown window up: restored if minimised, above the others, with the focus where
    /// the system allows (the tray's Open console, for the host window).
    fn raise(&mut self, window: &Self::Window) -> Result<(), UiError>;

    fn destroy(&mut self, window: Self::Window);

    /// Wait until something happens or `until` passes, and say what did (nothing, on a timeout).
    fn wait(&mut self, until: Option<Instant>) -> Vec<Seen<Self::Id>>;
}
