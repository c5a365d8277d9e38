//! What the CPU-painted windows have in common whatever surface shows them (X11 windows on
//! Unix, Win32 windows on Windows): which window should be open and where, one egui pass of a
//! window painted into its pixel buffer, and the pane each surface keeps per window. The
//! surfaces only open, move and show windows and turn their platform's input into egui events.

use std::sync::mpsc::Sender;
use std::time::{Duration, Instant};

use egui::{ViewportEvent, ViewportId, ViewportInfo};

use mcec_rules::activation::{Activation, ActivationEvents, InputEventId};
use mcec_rules::guard::{Prompt, prompt_on_top};

use crate::overlay::{self, Look};
use crate::soft::raster::{self, Canvas, Textures};
use crate::state::{OperatorEvent, OperatorState, Snapshot};
use crate::{
    Surfaces, consent_prompt, end_prompt, host, opt_in_prompt, prompt, reveal_prompt, settings_window,
};

/// Which operator window a pane is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Role {
    Overlay,
    Prompt,
    Consent,
    /// The host window of plain `mcec` (its menu re-arms and opens the settings window).
    Host,
    /// The host's settings window with the Agent tab.
    Settings,
    /// The attested confirmation of the Agent tab's provisioning opt-in.
    OptIn,
    /// The attested confirmation that shows the Agent tab's session token.
    Reveal,
    /// The attested confirmation of a console row's End.
    End,
}

impl Role {
    /// The order windows are brought up to date in: the banner first, so a prompt that opens
    /// with a stop never delays it.
    pub(crate) const ALL: [Role; 8] = [
        Role::Overlay,
        Role::Prompt,
        Role::Consent,
        Role::OptIn,
        Role::Reveal,
        Role::End,
        Role::Host,
        Role::Settings,
    ];

    /// The windows whose controls make a decision only the operator may make (judged on the
    /// event that pressed them): on X11 they raise themselves when another window covers them.
    #[cfg_attr(windows, allow(dead_code, reason = "Win32 makes every operator window topmost"))]
    pub(crate) fn attested(self) -> bool {
        matches!(self, Role::Prompt | Role::Consent | Role::OptIn | Role::Reveal | Role::End)
    }

    /// The title of the role's window (also what the audit names it by).
    pub(crate) fn title(self) -> &'static str {
        match self {
            Role::Overlay => overlay::OVERLAY_TITLE,
            Role::Prompt => prompt::PROMPT_TITLE,
            Role::Consent => consent_prompt::CONSENT_TITLE,
            Role::OptIn => opt_in_prompt::OPT_IN_TITLE,
            Role::Reveal => reveal_prompt::REVEAL_TITLE,
            Role::End => end_prompt::END_TITLE,
            Role::Host => host::HOST_TITLE,
            Role::Settings => settings_window::SETTINGS_TITLE,
        }
    }
}

/// Where and how big a pane should be now, or `None` when it should be gone.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Layout {
    pub look: Option<Look>,
    pub pos: (i16, i16),
    pub size: (u16, u16),
}

/// Where `role`'s window should be for `snap` on a monitor of `monitor` size, or `None` when
/// it should be closed.
pub(crate) fn wanted(
    role: Role,
    surfaces: Surfaces,
    snap: &Snapshot,
    now: Instant,
    monitor: egui::Vec2,
) -> Option<Layout> {
    // Another mcec is the display's guard: its windows speak for this process too.
    if snap.member && !matches!(role, Role::Host | Role::Settings) {
        return None;
    }
    let (look, (pos, size)) = match role {
        Role::Overlay => {
            let look = if surfaces.overlay { overlay::look(snap, now) } else { None }?;
            (Some(look), overlay::geometry(look, snap, monitor.x))
        }
        Role::Prompt => {
            // The host's menu re-arms through this same prompt.
            let open = (surfaces.prompt || surfaces.host_window) && snap.prompt_open && snap.is_stopped();
            open.then_some((None, prompt::geometry(monitor)))?
        }
        Role::OptIn => {
            let open = surfaces.host_window && opt_in_prompt::open(snap);
            open.then_some((None, opt_in_prompt::geometry(monitor)))?
        }
        Role::Reveal => {
            let open = surfaces.host_window && reveal_prompt::open(snap);
            open.then_some((None, reveal_prompt::geometry(monitor)))?
        }
        Role::End => {
            let open = surfaces.host_window && end_prompt::open(snap);
            open.then_some((None, end_prompt::geometry(monitor)))?
        }
        Role::Consent => {
            // At most one prompt: a stop's re-arm prompt outranks a request.
            let rearm = (surfaces.prompt || surfaces.host_window) && snap.prompt_open && snap.is_stopped();
            let on_top = prompt_on_top(rearm, snap.consent.is_some()) == Some(Prompt::Consent);
            on_top.then_some((None, consent_prompt::geometry(monitor)))?
        }
        Role::Host => surfaces.host_window.then_some((None, host::geometry(monitor)))?,
        Role::Settings => {
            let open = surfaces.host_window && snap.settings_open;
            open.then_some((None, settings_window::geometry(monitor)))?
        }
    };
    let pos = (pos.x.round() as i16, pos.y.round() as i16);
    let size = (size.x.round().max(1.0) as u16, size.y.round().max(1.0) as u16);
    Some(Layout { look, pos, size })
}

/// One operator window as both surfaces keep it: its platform window (`W`: an X window or an
/// `HWND`), where it is, and its egui side (context, pixels, input since the last pass).
pub(crate) struct Pane<W> {
    pub role: Role,
    pub window: W,
    pub layout: Layout,
    ctx: egui::Context,
    pub canvas: Canvas,
    textures: Textures,
    pub input: Vec<egui::Event>,
    /// The platform identity of events in `input`, by their index there, for a surface that
    /// names its events (X11); a surface that does not leaves it empty and its attested
    /// controls report an unidentified activation, which is refused.
    named: Vec<(usize, InputEventId)>,
    /// The latest primary-button press given to this window, by identity.
    last_press: Option<InputEventId>,
    /// When the window was first shown on screen (X11: its first real Expose).
    pub shown_at: Option<Instant>,
    pub focused: bool,
    pub close_requested: bool,
    pub dirty: bool,
    pub repaint_at: Option<Instant>,
}

impl<W> Pane<W> {
    /// A pane for a new window; `kept` is the closed banner's context and textures, when there is one.
    pub fn new(role: Role, window: W, layout: Layout, kept: Option<(egui::Context, Textures)>) -> Self {
        let (ctx, textures) = kept.unwrap_or_else(|| (new_context(), Textures::default()));
        Pane {
            role,
            window,
            layout,
            ctx,
            canvas: Canvas::new(usize::from(layout.size.0), usize::from(layout.size.1)),
            textures,
            input: Vec::new(),
            named: Vec::new(),
            last_press: None,
            shown_at: None,
            focused: false,
            close_requested: false,
            dirty: true,
            repaint_at: None,
        }
    }

    /// Take on `layout`. True when the window must move or resize (the canvas already has the
    /// new size).
    pub fn relayout(&mut self, layout: Layout) -> bool {
        let moved = self.layout.size != layout.size || self.layout.pos != layout.pos;
        if moved {
            self.canvas = Canvas::new(usize::from(layout.size.0), usize::from(layout.size.1));
        }
        self.layout = layout;
        self.dirty = true;
        moved
    }

    /// The window is closing: its platform window, and the context and textures worth keeping
    /// (only the banner's: a prompt starts from a fresh context every time, so nothing of an
    /// earlier answer, focus or a press, carries over to the next).
    pub fn close(self) -> (W, Option<(egui::Context, Textures)>) {
        let kept = (self.role == Role::Overlay).then_some((self.ctx, self.textures));
        (self.window, kept)
    }

    /// Queue `event` for the next pass with its platform identity.
    pub fn push_named(&mut self, event: egui::Event, id: InputEventId) {
        self.named.push((self.input.len(), id));
        self.input.push(event);
    }

    /// What activated a control in a pass over the queued events: the release of a primary
    /// click (with the press before it), or a Space press (egui's key activation of a focused
    /// control); both in one pass, or an unnamed event, is unidentified.
    fn activation(&mut self) -> Activation {
        let named = std::mem::take(&mut self.named);
        let id_of = |i: usize| named.iter().find(|(at, _)| *at == i).map(|(_, id)| *id);
        let (mut click, mut key, mut unnamed) = (None, None, false);
        for (i, event) in self.input.iter().enumerate() {
            match event {
                egui::Event::PointerButton {
                    button: egui::PointerButton::Primary, pressed: true, ..
                } => {
                    self.last_press = id_of(i);
                }
                egui::Event::PointerButton {
                    button: egui::PointerButton::Primary, pressed: false, ..
                } => match (self.last_press, id_of(i)) {
                    (Some(press), Some(release)) => click = Some(ActivationEvents::Click { press, release }),
                    _ => unnamed = true,
                },
                egui::Event::Key { key: egui::Key::Space | egui::Key::Enter, pressed: true, .. } => {
                    match id_of(i) {
                        Some(press) => key = Some(ActivationEvents::Key { press }),
                        None => unnamed = true,
                    }
                }
                _ => {}
            }
        }
        let events = match (click, key, unnamed) {
            (Some(c), None, false) => Some(c),
            (None, Some(k), false) => Some(k),
            _ => None,
        };
        Activation { events, shown_at: self.shown_at }
    }

    /// One egui pass of the pane, painted into its canvas. `time`: seconds since the UI started.
    pub fn paint(&mut self, state: &OperatorState, events: &Sender<OperatorEvent>, time: f64) {
        let activation = self.activation();
        let input = PassInput {
            size: self.layout.size,
            focused: self.focused,
            close_requested: std::mem::take(&mut self.close_requested),
            events: std::mem::take(&mut self.input),
            time,
            activation,
        };
        self.repaint_at =
            run(self.role, &self.ctx, &mut self.canvas, &mut self.textures, state, events, input);
        self.dirty = false;
    }
}

/// A fresh egui context for a window, in the operator windows' look.
/// Input a program sent to an operator window, which never reaches a widget: counted, and
/// audited for the first fifty and then one in a hundred (a program can send it as fast as it
/// likes, and the log must not drown).
#[derive(Debug, Default)]
pub(crate) struct DroppedInput(u64);

impl DroppedInput {
    /// `what` was dropped (`click`, `key press`), having come `how`, to the window `title`.
    pub(crate) fn note(&mut self, title: &str, what: &str, how: &str) {
        self.0 += 1;
        if self.0 <= 50 || self.0.is_multiple_of(100) {
            mcec_rules::audit::audit(
                "synthetic-input-dropped",
                &format!("a {what} {how} to \"{title}\" was ignored; {} so far", self.0),
            );
        }
    }
}

pub(crate) fn new_context() -> egui::Context {
    let ctx = egui::Context::default();
    ctx.set_fonts(fonts());
    ctx.set_visuals(egui::Visuals::dark());
    ctx
}

/// One font for all text, monospace too: egui's Ubuntu Light. egui's default set adds its
/// monospace Hack, 300 KB of a binary that every session copies (issue 30).
fn fonts() -> egui::FontDefinitions {
    const NAME: &str = "Ubuntu-Light";
    let mut fonts = egui::FontDefinitions::empty();
    let data = egui::FontData::from_static(epaint_default_fonts::UBUNTU_LIGHT);
    fonts.font_data.insert(NAME.to_owned(), std::sync::Arc::new(data));
    for family in [egui::FontFamily::Proportional, egui::FontFamily::Monospace] {
        fonts.families.insert(family, vec![NAME.to_owned()]);
    }
    fonts
}

/// What a window got since its last pass.
pub(crate) struct PassInput {
    pub size: (u16, u16),
    pub focused: bool,
    pub close_requested: bool,
    pub events: Vec<egui::Event>,
    /// Seconds since the UI started.
    pub time: f64,
    /// What would have activated a control pressed in this pass.
    pub activation: Activation,
}

/// One egui pass of `role`'s window, painted into `canvas`. Returns when egui wants the next
/// pass without any input (an animation, a fade), if it does.
#[allow(clippy::too_many_arguments, reason = "one pass needs the window's egui side and the core's channels")]
pub(crate) fn run(
    role: Role,
    ctx: &egui::Context,
    canvas: &mut Canvas,
    textures: &mut Textures,
    state: &OperatorState,
    events: &Sender<OperatorEvent>,
    input: PassInput,
) -> Option<Instant> {
    let size = egui::vec2(f32::from(input.size.0), f32::from(input.size.1));
    let mut info = ViewportInfo {
        focused: Some(input.focused),
        native_pixels_per_point: Some(1.0),
        inner_rect: Some(egui::Rect::from_min_size(egui::Pos2::ZERO, size)),
        ..ViewportInfo::default()
    };
    if input.close_requested {
        info.events.push(ViewportEvent::Close);
    }
    let mut raw = egui::RawInput {
        screen_rect: Some(egui::Rect::from_min_size(egui::Pos2::ZERO, size)),
        time: Some(input.time),
        focused: input.focused,
        events: input.events,
        ..egui::RawInput::default()
    };
    raw.viewports.insert(ViewportId::ROOT, info);
    let output = ctx.run_ui(raw, |ui| match role {
        Role::Overlay => overlay::show(ui, state),
        Role::Prompt => prompt::show(ui, state, events, input.activation),
        Role::Consent => consent_prompt::show(ui, state, events, input.activation),
        Role::OptIn => opt_in_prompt::show(ui, state, events, input.activation),
        Role::Reveal => reveal_prompt::show(ui, state, events, input.activation),
        Role::End => end_prompt::show(ui, state, events, input.activation),
        Role::Host => host::show(ui, state, events),
        Role::Settings => settings_window::show(ui, state, events),
    });
    let mut textures_delta = output.textures_delta;
    textures.set(&textures_delta);
    let primitives = ctx.tessellate(output.shapes, output.pixels_per_point);
    canvas.clear(ctx.global_style().visuals.panel_fill);
    raster::paint(canvas, &primitives, textures);
    textures.free(&textures_delta);
    textures_delta.clear();
    let delay = output.viewport_output.get(&ViewportId::ROOT).map_or(Duration::MAX, |v| v.repaint_delay);
    Instant::now().checked_add(delay).filter(|_| delay < Duration::from_secs(3600))
}

#[cfg(test)]
mod tests {
    use super::*;

    const ALL: Surfaces = Surfaces { overlay: true, prompt: true, host_window: false };
    const MONITOR: egui::Vec2 = egui::vec2(1024.0, 768.0);

    fn pass_of(role: Role, state: &OperatorState, size: (u16, u16)) -> Canvas {
        let (tx, _rx) = std::sync::mpsc::channel();
        let mut canvas = Canvas::new(usize::from(size.0), usize::from(size.1));
        let input = PassInput {
            size,
            focused: false,
            close_requested: false,
            events: Vec::new(),
            time: 0.0,
            activation: Activation::unidentified(),
        };
        run(role, &new_context(), &mut canvas, &mut Textures::default(), state, &tx, input);
        canvas
    }

    #[test]
    fn windows_open_with_the_stop_and_only_where_asked() {
        let state = OperatorState::new();
        let now = Instant::now();
        for role in Role::ALL {
            assert_eq!(wanted(role, ALL, &state.snapshot(), now, MONITOR), None, "{role:?} while idle");
        }
        state.set_stopped("chord");
        let snap = state.snapshot();
        let banner = wanted(Role::Overlay, ALL, &snap, now, MONITOR).expect("the banner with a stop");
        assert_eq!((banner.pos, banner.size.0), ((192, 0), 640), "top centre, 640 wide");
        let prompt = wanted(Role::Prompt, ALL, &snap, now, MONITOR).expect("the prompt with a stop");
        assert_eq!((prompt.pos, prompt.size), ((282, 297), (460, 175)), "centred");
        let none = Surfaces { overlay: false, prompt: false, host_window: false };
        assert_eq!(wanted(Role::Overlay, none, &snap, now, MONITOR), None);
        assert_eq!(wanted(Role::Prompt, none, &snap, now, MONITOR), None);
        let host = Surfaces { overlay: false, prompt: false, host_window: true };
        assert_eq!(
            wanted(Role::Prompt, host, &snap, now, MONITOR),
            Some(prompt),
            "the host re-arms through it"
        );
    }

    #[test]
    fn the_host_window_is_there_only_for_the_host_and_settings_only_when_opened() {
        let state = OperatorState::new();
        let now = Instant::now();
        let host = Surfaces { overlay: true, prompt: false, host_window: true };
        assert_eq!(
            wanted(Role::Host, ALL, &state.snapshot(), now, MONITOR),
            None,
            "mcec mcp has no host window"
        );
        let layout = wanted(Role::Host, host, &state.snapshot(), now, MONITOR).expect("the host window");
        assert_eq!((layout.pos, layout.size), ((64, 96), (560, 480)));
        assert_eq!(wanted(Role::Settings, host, &state.snapshot(), now, MONITOR), None, "closed until asked");
        state.open_settings();
        assert_eq!(wanted(Role::Settings, ALL, &state.snapshot(), now, MONITOR), None);
        let settings = wanted(Role::Settings, host, &state.snapshot(), now, MONITOR).expect("settings");
        assert_eq!((settings.pos, settings.size), ((192, 104), (640, 560)), "centred");
    }

    #[test]
    fn a_pass_paints_the_stopped_banner_red() {
        let state = OperatorState::new();
        state.set_stopped("chord");
        let layout = wanted(Role::Overlay, ALL, &state.snapshot(), Instant::now(), MONITOR).expect("banner");
        let canvas = pass_of(Role::Overlay, &state, layout.size);
        let red = canvas.pixels.iter().filter(|&&p| (p >> 16) & 0xff > 150 && (p >> 8) & 0xff < 90).count();
        assert!(red > canvas.pixels.len() / 2, "{red} of {} pixels red", canvas.pixels.len());
    }

    fn press(button: egui::PointerButton, pressed: bool) -> egui::Event {
        egui::Event::PointerButton {
            pos: egui::pos2(5.0, 5.0),
            button,
            pressed,
            modifiers: egui::Modifiers::NONE,
        }
    }

    fn id(time: u32, down: bool) -> InputEventId {
        InputEventId { time, what: mcec_rules::activation::Pressed::Button(1), down }
    }

    #[test]
    fn a_pass_names_the_click_or_key_that_could_press_a_button() {
        let layout = Layout { look: None, pos: (0, 0), size: (10, 10) };
        let mut pane = Pane::new(Role::Prompt, (), layout, None);
        pane.shown_at = Some(Instant::now());
        pane.push_named(press(egui::PointerButton::Primary, true), id(10, true));
        assert_eq!(pane.activation().events, None, "a press alone presses nothing");
        pane.input.clear();
        pane.push_named(press(egui::PointerButton::Primary, false), id(90, false));
        let click = pane.activation();
        assert_eq!(
            click.events,
            Some(ActivationEvents::Click { press: id(10, true), release: id(90, false) })
        );
        assert_eq!(click.shown_at, pane.shown_at);
        pane.input.clear();

        // A release the surface could not name (or a surface that names nothing) is unidentified.
        pane.input.push(press(egui::PointerButton::Primary, false));
        assert_eq!(pane.activation().events, None);
        pane.input.clear();

        let space = InputEventId { time: 7, what: mcec_rules::activation::Pressed::Key(65), down: true };
        let key = egui::Event::Key {
            key: egui::Key::Space,
            physical_key: None,
            pressed: true,
            repeat: false,
            modifiers: egui::Modifiers::NONE,
        };
        pane.push_named(key.clone(), space);
        assert_eq!(pane.activation().events, Some(ActivationEvents::Key { press: space }));
        pane.input.clear();

        // A click and a Space in one pass: which pressed the button cannot be told.
        pane.push_named(press(egui::PointerButton::Primary, true), id(20, true));
        pane.push_named(press(egui::PointerButton::Primary, false), id(30, false));
        pane.push_named(key, space);
        assert_eq!(pane.activation().events, None);
    }

    #[test]
    fn the_opt_in_confirmation_is_open_until_the_core_makes_the_value() {
        let state = OperatorState::new();
        let host = Surfaces { overlay: true, prompt: false, host_window: true };
        let now = Instant::now();
        assert_eq!(wanted(Role::OptIn, host, &state.snapshot(), now, MONITOR), None);
        state.set_opt_in_confirm(Some(true));
        assert!(wanted(Role::OptIn, host, &state.snapshot(), now, MONITOR).is_some());
        assert_eq!(wanted(Role::OptIn, ALL, &state.snapshot(), now, MONITOR), None, "only where the tab is");
        state.update_agent_tab(|t| t.allow_provisioning = true);
        assert_eq!(wanted(Role::OptIn, host, &state.snapshot(), now, MONITOR), None, "done: it closes");
        assert!(Role::OptIn.attested() && Role::Prompt.attested() && !Role::Settings.attested());
    }

    #[test]
    fn the_reveal_confirmation_is_open_while_the_token_is_hidden() {
        let state = OperatorState::new();
        let host = Surfaces { overlay: true, prompt: false, host_window: true };
        let now = Instant::now();
        let hidden = crate::agent_model::HandoffView { token_hidden: true, ..Default::default() };
        state.update_agent_tab(|t| t.handoff = Some(hidden));
        assert_eq!(wanted(Role::Reveal, host, &state.snapshot(), now, MONITOR), None, "not asked for");
        state.set_reveal_confirm(true);
        assert!(wanted(Role::Reveal, host, &state.snapshot(), now, MONITOR).is_some());
        assert_eq!(wanted(Role::Reveal, ALL, &state.snapshot(), now, MONITOR), None, "only where the tab is");
        state.update_agent_tab(|t| t.handoff = Some(crate::agent_model::HandoffView::default()));
        assert_eq!(wanted(Role::Reveal, host, &state.snapshot(), now, MONITOR), None, "shown: it closes");
        assert!(Role::Reveal.attested(), "only a painter that names its events shows it");
    }

    #[test]
    fn the_end_prompt_is_open_while_asked_for_and_only_where_the_console_is() {
        use mcec_rules::guard::{AgentRow, Hello, MemberState, PROTOCOL, Whose};
        let state = OperatorState::new();
        let host = Surfaces { overlay: true, prompt: false, host_window: true };
        let now = Instant::now();
        assert_eq!(wanted(Role::End, host, &state.snapshot(), now, MONITOR), None, "not asked for");
        let hello = Hello {
            v: PROTOCOL,
            pid: 9,
            client_name: Some("bravobot".into()),
            client_version: None,
            session: None,
            transport: "stdio".into(),
            since: 0,
            host: false,
        };
        state.set_end_confirm(Some(AgentRow::of(
            Whose::Member(4),
            &hello,
            &MemberState::default(),
            false,
            None,
        )));
        assert!(wanted(Role::End, host, &state.snapshot(), now, MONITOR).is_some());
        assert_eq!(
            wanted(Role::End, ALL, &state.snapshot(), now, MONITOR),
            None,
            "only where the console is"
        );
        state.mark_end_pending();
        state.end_answered(Some("synthetic".into()));
        let ask = state.snapshot().end_confirm.expect("a refusal keeps the prompt open");
        assert_eq!((ask.pending, ask.refusal.as_deref()), (false, Some("synthetic")));
        state.end_answered(None);
        assert_eq!(wanted(Role::End, host, &state.snapshot(), now, MONITOR), None, "ended: it closes");
        assert!(Role::End.attested(), "only a painter that names its events shows it");
    }
}
