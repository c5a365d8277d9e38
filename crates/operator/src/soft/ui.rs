//! The loop both surfaces share: bring each window up to date with the state, the banner
//! first, tell the core which prompts are on screen since when (for the chords that answer
//! them on sway), then wait for the platform's events, the state's repaint hook or egui's
//! next repaint, and turn what was seen into each window's egui input.

use std::sync::mpsc::Sender;
use std::time::Instant;

use crate::soft::pace::Pacer;
use crate::soft::pass::{self, DroppedInput, Layout, Role};
use crate::soft::raster::Textures;
use crate::soft::surface::{Seen, Surface};
use crate::state::{ChordPrompt, OperatorEvent, OperatorState, Snapshot};
use crate::{Surfaces, UiError};

type Pane<S> = pass::Pane<<S as Surface>::Window>;

pub(crate) struct SoftUi<S: Surface> {
    pub surface: S,
    pub state: OperatorState,
    pub events: Sender<OperatorEvent>,
    pub surfaces: Surfaces,
    pub panes: Vec<Pane<S>>,
    /// The egui context and textures of the closed banner, for when it opens again.
    pub spare_banner: Option<(egui::Context, Textures)>,
    pub start: Instant,
    /// Presses dropped as no device's.
    pub dropped: DroppedInput,
    /// When a change of the state repaints the windows.
    pub pacer: Pacer,
    /// The prompts a chord may answer ([`CHORD_ROLES`]): what each said and since when it is
    /// on screen, as last told to the state.
    pub told_shown: [Option<(ChordPrompt, Instant)>; CHORD_ROLES.len()],
    /// The last `Snapshot::console_raise` acted on (the tray's Open console).
    pub raised: u64,
}

impl<S: Surface> SoftUi<S> {
    pub(crate) fn new(
        surface: S,
        state: OperatorState,
        events: Sender<OperatorEvent>,
        surfaces: Surfaces,
    ) -> Self {
        Self {
            surface,
            events,
            surfaces,
            panes: Vec::new(),
            spare_banner: None,
            start: Instant::now(),
            dropped: DroppedInput::default(),
            pacer: Pacer::default(),
            told_shown: [None; CHORD_ROLES.len()],
            raised: state.snapshot().console_raise,
            state,
        }
    }

    /// Tells the state when the prompts a chord may answer appeared, and what they ask, or
    /// that they went. A prompt that, open, comes to ask something else (the console's End
    /// for another row) counts as shown anew from now: an answer counts only for what was on
    /// screen a moment before it, the click's (`Pane::shown_at`) as the chord's.
    fn tell_shown(&mut self, snap: &Snapshot) {
        let now = Instant::now();
        for (role, told) in CHORD_ROLES.into_iter().zip(self.told_shown.iter_mut()) {
            let pane = self.panes.iter_mut().find(|p| p.role == role);
            let on_screen = chord_prompt(role, snap).zip(pane.as_ref().and_then(|p| p.shown_at));
            let shown = showing(*told, on_screen, now);
            if let (Some((_, at)), Some(pane)) = (shown, pane)
                && pane.shown_at != Some(at)
            {
                pane.shown_at = Some(at);
                pane.dirty = true;
            }
            if shown != *told {
                match (shown, *told) {
                    (Some((prompt, at)), _) => self.state.prompt_shown(prompt, Some(at)),
                    (None, Some((was, _))) => self.state.prompt_shown(was, None),
                    (None, None) => {}
                }
                *told = shown;
            }
        }
    }

    pub(crate) fn run(&mut self) -> Result<(), UiError> {
        loop {
            let snap = self.state.snapshot();
            if snap.quit_requested {
                return Ok(());
            }
            let now = Instant::now();
            if self.pacer.due(now, snap.is_stopped()) {
                self.panes.iter_mut().for_each(|p| p.dirty = true);
            }
            // Window by window, the banner first: it is on screen before a prompt that opens
            // with it is painted.
            for role in Role::ALL {
                self.arrange(role, &snap, now)?;
                let Some(i) = self.panes.iter().position(|p| p.role == role) else { continue };
                if self.panes[i].dirty || self.panes[i].repaint_at.is_some_and(|t| t <= now) {
                    self.frame(i)?;
                }
            }
            self.tell_shown(&snap);
            if snap.console_raise != self.raised {
                self.raised = snap.console_raise;
                if let Some(host) = self.panes.iter().find(|p| p.role == Role::Host) {
                    self.surface.raise(&host.window)?;
                }
            }
            let until = self.panes.iter().filter_map(|p| p.repaint_at).chain(self.pacer.next()).min();
            for seen in self.surface.wait(until) {
                if let Seen::End(end) = seen {
                    return end;
                }
                self.on_seen(seen)?;
            }
        }
    }

    fn wanted(&self, role: Role, snap: &Snapshot, now: Instant) -> Option<Layout> {
        pass::wanted(role, self.surfaces, snap, now, self.surface.monitor())
    }

    /// Open, reshape or close `role`'s window to match the state.
    fn arrange(&mut self, role: Role, snap: &Snapshot, now: Instant) -> Result<(), UiError> {
        let wanted = self.wanted(role, snap, now);
        let index = self.panes.iter().position(|p| p.role == role);
        match (wanted, index) {
            (None, Some(i)) => {
                let (window, kept) = self.panes.remove(i).close();
                self.surface.destroy(window);
                self.spare_banner = kept.or(self.spare_banner.take());
            }
            (Some(layout), Some(i)) if self.panes[i].layout != layout => {
                let pane = &mut self.panes[i];
                if pane.relayout(layout) {
                    self.surface.reshape(role, &pane.window, layout)?;
                }
            }
            (Some(layout), None) => self.open(role, layout)?,
            _ => {}
        }
        Ok(())
    }

    fn open(&mut self, role: Role, layout: Layout) -> Result<(), UiError> {
        let window = self.surface.create(role, layout)?;
        let kept = if role == Role::Overlay { self.spare_banner.take() } else { None };
        let mut pane = Pane::<S>::new(role, window, layout, kept);
        // Painted before it is shown, so the first paint request shows the finished frame.
        pane.paint(&self.state, &self.events, self.start.elapsed().as_secs_f64());
        if self.surface.reveal(role, &pane.window, &pane.canvas)? {
            // On screen from here: a press judged for one of its controls must come a moment later.
            pane.shown_at = Some(Instant::now());
        }
        self.panes.push(pane);
        Ok(())
    }

    fn frame(&mut self, i: usize) -> Result<(), UiError> {
        let pane = &mut self.panes[i];
        pane.paint(&self.state, &self.events, self.start.elapsed().as_secs_f64());
        self.surface.show(&pane.window, &pane.canvas)
    }

    fn on_seen(&mut self, seen: Seen<S::Id>) -> Result<(), UiError> {
        let id = match &seen {
            Seen::Wake => {
                self.pacer.changed(Instant::now());
                return Ok(());
            }
            Seen::End(_) => return Ok(()),
            Seen::Dropped(id, what, how) => {
                let title =
                    self.panes.iter().find(|p| S::id(&p.window) == *id).map_or("?", |p| p.role.title());
                self.dropped.note(title, what, how);
                return Ok(());
            }
            Seen::Paint { window, .. }
            | Seen::Close(window)
            | Seen::Focus(window, _)
            | Seen::Input(window, _)
            | Seen::Named(window, _, _) => *window,
        };
        let Some(pane) = self.panes.iter_mut().find(|p| S::id(&p.window) == id) else { return Ok(()) };
        match seen {
            Seen::Paint { last, .. } => {
                // The window is on screen from its first paint request, if not before.
                pane.shown_at.get_or_insert_with(Instant::now);
                return self.surface.paint(&mut pane.window, &pane.canvas, last);
            }
            Seen::Close(_) => pane.close_requested = true,
            Seen::Focus(_, focused) => {
                pane.focused = focused;
                pane.input.push(egui::Event::WindowFocused(focused));
            }
            Seen::Input(_, event) => pane.input.push(event),
            Seen::Named(_, event, id) => pane.push_named(event, id),
            Seen::Wake | Seen::End(_) | Seen::Dropped(..) => {}
        }
        pane.dirty = true;
        Ok(())
    }

    pub(crate) fn close_all(&mut self) {
        for pane in self.panes.drain(..) {
            self.surface.destroy(pane.window);
        }
        self.tell_shown(&self.state.snapshot());
    }
}

/// The windows whose answer a chord may give, in the order of `SoftUi::told_shown`.
const CHORD_ROLES: [Role; 5] = [Role::Prompt, Role::Consent, Role::OptIn, Role::End, Role::Reveal];

/// The showing to report for a prompt `told` before and `on_screen` now: the prompt as it is,
/// but shown anew at `now` when it asks something else than it did in the same showing.
fn showing(
    told: Option<(ChordPrompt, Instant)>,
    on_screen: Option<(ChordPrompt, Instant)>,
    now: Instant,
) -> Option<(ChordPrompt, Instant)> {
    match (on_screen, told) {
        (Some((prompt, at)), Some((was, told_at))) if at == told_at && prompt != was => Some((prompt, now)),
        _ => on_screen,
    }
}

/// What `role`'s prompt asks in `snap`, for the chord that answers it.
fn chord_prompt(role: Role, snap: &Snapshot) -> Option<ChordPrompt> {
    match role {
        Role::Prompt => Some(ChordPrompt::Rearm),
        Role::Consent => Some(ChordPrompt::Consent),
        Role::OptIn => snap.opt_in_confirm.map(|enabled| ChordPrompt::OptIn { enabled }),
        Role::End => snap.end_confirm.as_ref().map(|ask| ChordPrompt::End { whose: ask.row.whose }),
        Role::Reveal => Some(ChordPrompt::Reveal),
        Role::Overlay | Role::Host | Role::Settings => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use mcec_rules::guard::Whose;
    use std::time::Duration;

    #[test]
    fn a_prompt_that_comes_to_ask_something_else_is_shown_anew() {
        let t0 = Instant::now();
        let later = t0 + Duration::from_secs(5);
        let alpha = ChordPrompt::End { whose: Whose::Member(1) };
        let bravo = ChordPrompt::End { whose: Whose::Member(2) };
        assert_eq!(showing(None, Some((alpha, t0)), later), Some((alpha, t0)), "a new prompt: its own time");
        assert_eq!(showing(Some((alpha, t0)), Some((alpha, t0)), later), Some((alpha, t0)), "unchanged");
        assert_eq!(
            showing(Some((alpha, t0)), Some((bravo, t0)), later),
            Some((bravo, later)),
            "another agent"
        );
        let on = ChordPrompt::OptIn { enabled: true };
        let off = ChordPrompt::OptIn { enabled: false };
        assert_eq!(showing(Some((on, t0)), Some((off, t0)), later), Some((off, later)), "another value");
        assert_eq!(showing(Some((alpha, t0)), None, later), None, "closed");
        assert_eq!(showing(Some((alpha, t0)), Some((bravo, later)), later), Some((bravo, later)), "reopened");
    }
}
