//! The Wayland connection: the globals mcec binds and the one virtual keyboard and one
//! virtual pointer it keeps for the life of the process.
//!
//! sway crashed when a virtual pointer was made and destroyed per action, so both devices
//! are created once at connect and live as long as the backend. The connection has no thread
//! of its own: every use sends, flushes, and (for `settle`) waits for a round trip.

pub mod capture;
pub mod keymap;
pub mod outputs;

use std::os::fd::AsFd;
use std::time::Instant;

use wayland_client::globals::{GlobalListContents, registry_queue_init};
use wayland_client::protocol::{wl_buffer, wl_output, wl_registry, wl_seat, wl_shm, wl_shm_pool};
use wayland_client::{Connection, Dispatch, EventQueue, Proxy as _, QueueHandle, WEnum, delegate_noop};
use wayland_protocols::xdg::xdg_output::zv1::client::{zxdg_output_manager_v1, zxdg_output_v1};
use wayland_protocols_misc::zwp_virtual_keyboard_v1::client::{
    zwp_virtual_keyboard_manager_v1::ZwpVirtualKeyboardManagerV1,
    zwp_virtual_keyboard_v1::ZwpVirtualKeyboardV1,
};
use wayland_protocols_wlr::screencopy::v1::client::{zwlr_screencopy_frame_v1, zwlr_screencopy_manager_v1};
use wayland_protocols_wlr::virtual_pointer::v1::client::{
    zwlr_virtual_pointer_manager_v1::ZwlrVirtualPointerManagerV1,
    zwlr_virtual_pointer_v1::ZwlrVirtualPointerV1,
};

use keymap::Keymap;

/// What the event queue fills in.
#[derive(Debug, Default)]
pub struct State {
    /// Each output with the name the compositor gives it (wl_output 4), once known.
    pub outputs: NamedOutputs,
    /// Each output's place and size as `wl_output` describes it (the layout without sway's IPC).
    pub facts: Vec<(wl_output::WlOutput, outputs::OutputFacts)>,
    /// The frame being captured, if any.
    pub frame: capture::FrameState,
}

/// One connection with its virtual devices.
pub struct Wl {
    conn: Connection,
    queue: EventQueue<State>,
    pub state: State,
    /// `None` where the compositor offers no virtual keyboard or pointer: input is then
    /// refused, naming the protocol, and observation still works.
    keyboard: Option<ZwpVirtualKeyboardV1>,
    pointer: Option<ZwlrVirtualPointerV1>,
    pub shm: wl_shm::WlShm,
    pub screencopy: Option<zwlr_screencopy_manager_v1::ZwlrScreencopyManagerV1>,
    keymap: Keymap,
    /// The modifier mask last sent: a new keymap resets the client's modifier state, so it is
    /// sent again after every upload.
    mods: u32,
    epoch: Instant,
}

impl std::fmt::Debug for Wl {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Wl").field("outputs", &self.state.outputs.len()).finish_non_exhaustive()
    }
}

impl Wl {
    /// Connects to the Wayland socket at `socket` and makes the virtual keyboard and pointer,
    /// which must be offered (sway offers both).
    pub fn connect(socket: &std::path::Path) -> Result<Wl, String> {
        let wl = Wl::connect_observing(socket)?;
        wl.keyboard()?;
        wl.pointer()?;
        Ok(wl)
    }

    /// Connects to the Wayland socket at `socket`, making the virtual keyboard and pointer
    /// where the compositor offers them.
    pub fn connect_observing(socket: &std::path::Path) -> Result<Wl, String> {
        let stream = std::os::unix::net::UnixStream::connect(socket)
            .map_err(|e| format!("cannot connect to the Wayland display {}: {e}", socket.display()))?;
        let conn = Connection::from_socket(stream).map_err(|e| format!("the Wayland display: {e}"))?;
        let (globals, queue) =
            registry_queue_init::<State>(&conn).map_err(|e| format!("the Wayland registry: {e}"))?;
        let qh = queue.handle();
        let missing = |what: &str, e: &dyn std::fmt::Display| format!("the compositor offers no {what}: {e}");
        let seat: wl_seat::WlSeat = globals.bind(&qh, 1..=1, ()).map_err(|e| missing("seat", &e))?;
        let shm: wl_shm::WlShm = globals.bind(&qh, 1..=1, ()).map_err(|e| missing("wl_shm", &e))?;
        let keyboards: Option<ZwpVirtualKeyboardManagerV1> = globals.bind(&qh, 1..=1, ()).ok();
        let pointers: Option<ZwlrVirtualPointerManagerV1> = globals.bind(&qh, 1..=2, ()).ok();
        let screencopy = globals.bind(&qh, 1..=3, ()).ok();
        let xdg_outputs: Option<zxdg_output_manager_v1::ZxdgOutputManagerV1> =
            globals.bind(&qh, 1..=3, ()).ok();
        let mut state = State::default();
        for global in globals.contents().clone_list() {
            if global.interface == "wl_output" {
                let output = globals.registry().bind::<wl_output::WlOutput, _, _>(
                    global.name,
                    global.version.clamp(1, 4),
                    &qh,
                    (),
                );
                if let Some(manager) = &xdg_outputs {
                    // Lives as long as the connection: its events keep the facts current.
                    let _ = manager.get_xdg_output(&output, &qh, output.clone());
                }
                state.facts.push((output.clone(), outputs::OutputFacts::default()));
                state.outputs.push((output, None));
            }
        }
        let keyboard = keyboards.map(|m| m.create_virtual_keyboard(&seat, &qh, ()));
        let pointer = pointers.map(|m| m.create_virtual_pointer(Some(&seat), &qh, ()));
        let mut wl = Wl {
            conn,
            queue,
            state,
            keyboard,
            pointer,
            shm,
            screencopy,
            keymap: Keymap::default(),
            mods: 0,
            epoch: Instant::now(),
        };
        if wl.keyboard.is_some() {
            wl.upload_keymap()?;
        }
        wl.roundtrip()?;
        Ok(wl)
    }

    fn keyboard(&self) -> Result<&ZwpVirtualKeyboardV1, String> {
        self.keyboard
            .as_ref()
            .ok_or_else(|| "the compositor offers no virtual keyboard (zwp_virtual_keyboard_v1)".into())
    }

    fn pointer(&self) -> Result<&ZwlrVirtualPointerV1, String> {
        self.pointer
            .as_ref()
            .ok_or_else(|| "the compositor offers no virtual pointer (zwlr_virtual_pointer_v1)".into())
    }

    /// Each output with its place in the layout (`wl_output`'s account, fresh after a round
    /// trip), in the order the compositor announced them.
    pub fn output_facts(&mut self) -> Result<Vec<(wl_output::WlOutput, outputs::OutputFacts)>, String> {
        self.roundtrip()?;
        Ok(self.state.facts.clone())
    }

    /// Waits until the compositor has handled every request sent so far.
    pub fn roundtrip(&mut self) -> Result<(), String> {
        self.queue.roundtrip(&mut self.state).map(|_| ()).map_err(|e| format!("Wayland connection: {e}"))
    }

    /// Waits for and handles events until `done` says so.
    pub fn dispatch_until(&mut self, done: impl Fn(&State) -> bool) -> Result<(), String> {
        while !done(&self.state) {
            self.queue.blocking_dispatch(&mut self.state).map_err(|e| format!("Wayland connection: {e}"))?;
        }
        Ok(())
    }

    pub fn handle(&self) -> QueueHandle<State> {
        self.queue.handle()
    }

    /// Sends what is queued. A full socket (the compositor is behind) is waited out, at most
    /// a few seconds, rather than failing the call.
    fn flush(&self) -> Result<(), String> {
        use wayland_client::backend::WaylandError;
        for _ in 0..100 {
            match self.conn.flush() {
                Err(WaylandError::Io(e)) if e.kind() == std::io::ErrorKind::WouldBlock => {
                    let mut fds = [rustix::event::PollFd::new(&self.conn, rustix::event::PollFlags::OUT)];
                    let timeout = rustix::time::Timespec { tv_sec: 0, tv_nsec: 50_000_000 };
                    let _ = rustix::event::poll(&mut fds, Some(&timeout));
                }
                other => return other.map_err(|e| format!("Wayland connection: {e}")),
            }
        }
        Err("Wayland connection: the compositor stopped reading mcec's requests".into())
    }

    fn time(&self) -> u32 {
        // Milliseconds since connecting: event times only need to grow.
        u32::try_from(self.epoch.elapsed().as_millis() & 0x7fff_ffff).unwrap_or(0)
    }

    /// The evdev code that produces `keysym` on the virtual keyboard, uploading a new keymap
    /// when the keysym needed a key of its own.
    pub fn code_of(&mut self, keysym: u32) -> Result<Option<u32>, String> {
        let Some((code, added)) = self.keymap.code_of(keysym) else { return Ok(None) };
        if added {
            self.upload_keymap()?;
        }
        Ok(Some(code))
    }

    fn upload_keymap(&mut self) -> Result<(), String> {
        let mut text = self.keymap.text().into_bytes();
        text.push(0);
        let fd = rustix::fs::memfd_create("mcec-keymap", rustix::fs::MemfdFlags::CLOEXEC)
            .map_err(|e| format!("memfd for the keymap: {e}"))?;
        let mut file = std::fs::File::from(fd);
        std::io::Write::write_all(&mut file, &text).map_err(|e| format!("writing the keymap: {e}"))?;
        let size = u32::try_from(text.len()).map_err(|_| "keymap too large".to_string())?;
        let keyboard = self.keyboard()?;
        // 1 = WL_KEYBOARD_KEYMAP_FORMAT_XKB_V1.
        keyboard.keymap(1, file.as_fd(), size);
        if self.mods != 0 {
            // wlroots forwards a modifier state only when it changes, and the client has just
            // been handed a fresh keymap with none: clear, then set, so the set is forwarded.
            keyboard.modifiers(0, 0, 0, 0);
            keyboard.modifiers(self.mods, 0, 0, 0);
        }
        self.flush()
    }

    /// Presses or releases the key with evdev `code`.
    pub fn key(&mut self, code: u32, down: bool) -> Result<(), String> {
        self.keyboard()?.key(self.time(), code, u32::from(down));
        self.flush()
    }

    /// Sets the modifier state clients see (xkb's depressed mask).
    pub fn modifiers(&mut self, depressed: u32) -> Result<(), String> {
        self.keyboard()?.modifiers(depressed, 0, 0, 0);
        self.mods = depressed;
        self.flush()
    }

    /// Moves the pointer to `(x, y)` within a layout of `width`x`height`.
    pub fn motion_absolute(&mut self, x: u32, y: u32, width: u32, height: u32) -> Result<(), String> {
        let pointer = self.pointer()?;
        pointer.motion_absolute(self.time(), x, y, width, height);
        pointer.frame();
        self.flush()
    }

    /// Presses or releases a button (a Linux `BTN_*` code).
    pub fn button(&mut self, code: u32, down: bool) -> Result<(), String> {
        use wayland_client::protocol::wl_pointer::ButtonState;
        let state = if down { ButtonState::Pressed } else { ButtonState::Released };
        let pointer = self.pointer()?;
        pointer.button(self.time(), code, state);
        pointer.frame();
        self.flush()
    }

    /// One wheel notch: `vertical` or horizontal, `sign` -1 (up, left) or 1 (down, right).
    pub fn scroll(&mut self, vertical: bool, sign: i32) -> Result<(), String> {
        use wayland_client::protocol::wl_pointer::{Axis, AxisSource};
        let axis = if vertical { Axis::VerticalScroll } else { Axis::HorizontalScroll };
        let t = self.time();
        let pointer = self.pointer()?;
        if pointer.version() >= 2 {
            pointer.axis_source(AxisSource::Wheel);
            pointer.axis_discrete(t, axis, f64::from(sign) * 15.0, sign);
        } else {
            pointer.axis(t, axis, f64::from(sign) * 15.0);
        }
        pointer.frame();
        self.flush()
    }
}

impl Dispatch<wl_registry::WlRegistry, GlobalListContents> for State {
    fn event(
        _: &mut State,
        _: &wl_registry::WlRegistry,
        _: wl_registry::Event,
        _: &GlobalListContents,
        _: &Connection,
        _: &QueueHandle<State>,
    ) {
        // Outputs that come and go later are seen through sway's IPC on sway; without it an
        // output added after start is not seen until mcec restarts.
    }
}

impl Dispatch<wl_output::WlOutput, ()> for State {
    fn event(
        state: &mut State,
        output: &wl_output::WlOutput,
        event: wl_output::Event,
        _: &(),
        _: &Connection,
        _: &QueueHandle<State>,
    ) {
        if let Some((_, facts)) = state.facts.iter_mut().find(|(o, _)| o == output) {
            facts.note(&event);
        }
        note_output_name(&mut state.outputs, output, event);
    }
}

/// Outputs with the name each announces (`wl_output` v4), as this connection and the
/// foreign-toplevel lister keep them.
pub type NamedOutputs = Vec<(wl_output::WlOutput, Option<String>)>;

/// Records an output's name when `event` announces it.
pub(crate) fn note_output_name(
    outputs: &mut NamedOutputs,
    output: &wl_output::WlOutput,
    event: wl_output::Event,
) {
    if let wl_output::Event::Name { name } = event
        && let Some(entry) = outputs.iter_mut().find(|(o, _)| o == output)
    {
        entry.1 = Some(name);
    }
}

impl Dispatch<wl_shm::WlShm, ()> for State {
    fn event(
        _: &mut State,
        _: &wl_shm::WlShm,
        _: wl_shm::Event,
        _: &(),
        _: &Connection,
        _: &QueueHandle<State>,
    ) {
    }
}

delegate_noop!(State: ignore wl_seat::WlSeat);
delegate_noop!(State: ignore wl_buffer::WlBuffer);
delegate_noop!(State: wl_shm_pool::WlShmPool);
delegate_noop!(State: ZwpVirtualKeyboardManagerV1);
delegate_noop!(State: ZwpVirtualKeyboardV1);
delegate_noop!(State: ZwlrVirtualPointerManagerV1);
delegate_noop!(State: ZwlrVirtualPointerV1);
delegate_noop!(State: zwlr_screencopy_manager_v1::ZwlrScreencopyManagerV1);
delegate_noop!(State: zxdg_output_manager_v1::ZxdgOutputManagerV1);

impl Dispatch<zxdg_output_v1::ZxdgOutputV1, wl_output::WlOutput> for State {
    fn event(
        state: &mut State,
        _: &zxdg_output_v1::ZxdgOutputV1,
        event: zxdg_output_v1::Event,
        output: &wl_output::WlOutput,
        _: &Connection,
        _: &QueueHandle<State>,
    ) {
        if let Some((_, facts)) = state.facts.iter_mut().find(|(o, _)| o == output) {
            facts.note_logical(&event);
        }
    }
}

impl Dispatch<zwlr_screencopy_frame_v1::ZwlrScreencopyFrameV1, ()> for State {
    fn event(
        state: &mut State,
        _: &zwlr_screencopy_frame_v1::ZwlrScreencopyFrameV1,
        event: zwlr_screencopy_frame_v1::Event,
        _: &(),
        _: &Connection,
        _: &QueueHandle<State>,
    ) {
        state.frame.on_event(event);
    }
}

/// The wl_shm format of a `WEnum`, when known.
pub fn shm_format(format: WEnum<wl_shm::Format>) -> Option<wl_shm::Format> {
    match format {
        WEnum::Value(f) => Some(f),
        WEnum::Unknown(_) => None,
    }
}
