//! One plain X11 window for a CPU-painted operator surface: created with every property the
//! window manager and mcec's own desktop tools read (title, class, pid, type, above, input
//! hint, fixed size), shown with `PutImage`.
//!
//! The overlay gets an empty input shape (XFixes), so clicks fall through it to the windows
//! below, and `WM_HINTS.input = False`, so it never takes the keyboard. The prompt takes
//! both and answers the close button (`WM_DELETE_WINDOW`).

use x11rb::connection::{Connection, RequestConnection};
use x11rb::properties::{WmHints, WmSizeHints, WmSizeHintsSpecification};
use x11rb::protocol::shape::SK;
use x11rb::protocol::xfixes::ConnectionExt as _;
use x11rb::protocol::xproto::{
    AtomEnum, ClientMessageEvent, ConfigureWindowAux, ConnectionExt as _, CreateGCAux, CreateWindowAux,
    EventMask, Gcontext, ImageFormat, PropMode, Screen, StackMode, Window, WindowClass,
};
use x11rb::rust_connection::RustConnection;
use x11rb::wrapper::ConnectionExt as _;

use crate::soft::raster::Canvas;

pub(crate) type XResult<T> = Result<T, Box<dyn std::error::Error + Send + Sync>>;

/// The atoms every surface needs, interned once per connection.
pub(crate) struct Atoms {
    pub wm_protocols: u32,
    pub wm_delete_window: u32,
    net_wm_name: u32,
    net_wm_pid: u32,
    utf8_string: u32,
    net_wm_window_type: u32,
    net_wm_state: u32,
    state_above: u32,
    skip_taskbar: u32,
    skip_pager: u32,
    type_notification: u32,
    type_dialog: u32,
    motif_wm_hints: u32,
}

impl Atoms {
    pub fn new(conn: &RustConnection) -> XResult<Self> {
        let intern =
            |name: &str| -> XResult<u32> { Ok(conn.intern_atom(false, name.as_bytes())?.reply()?.atom) };
        Ok(Self {
            wm_protocols: intern("WM_PROTOCOLS")?,
            wm_delete_window: intern("WM_DELETE_WINDOW")?,
            net_wm_name: intern("_NET_WM_NAME")?,
            net_wm_pid: intern("_NET_WM_PID")?,
            utf8_string: intern("UTF8_STRING")?,
            net_wm_window_type: intern("_NET_WM_WINDOW_TYPE")?,
            net_wm_state: intern("_NET_WM_STATE")?,
            state_above: intern("_NET_WM_STATE_ABOVE")?,
            skip_taskbar: intern("_NET_WM_STATE_SKIP_TASKBAR")?,
            skip_pager: intern("_NET_WM_STATE_SKIP_PAGER")?,
            type_notification: intern("_NET_WM_WINDOW_TYPE_NOTIFICATION")?,
            type_dialog: intern("_NET_WM_WINDOW_TYPE_DIALOG")?,
            motif_wm_hints: intern("_MOTIF_WM_HINTS")?,
        })
    }
}

/// What kind of operator window to make.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    /// Click-through, never focused, skips taskbar and pager.
    Overlay,
    /// A focusable dialog that answers its close button.
    Prompt,
}

pub(crate) struct Spec<'a> {
    pub kind: Kind,
    pub title: &'a str,
    pub class: &'a str,
    pub pos: (i16, i16),
    pub size: (u16, u16),
    /// Raised again whenever another window covers it (the prompts the operator must be able
    /// to answer: where no window manager keeps them above, a window mapped later would).
    pub keep_above: bool,
}

/// Check that the screen's visual is 24-bit TrueColor with 32-bit pixels, the layout
/// [`Canvas`] pixels have.
pub(crate) fn check_visual(conn: &RustConnection, screen: &Screen) -> XResult<()> {
    let ok_format =
        conn.setup().pixmap_formats.iter().any(|f| f.depth == screen.root_depth && f.bits_per_pixel == 32);
    let visual = screen
        .allowed_depths
        .iter()
        .flat_map(|d| d.visuals.iter())
        .find(|v| v.visual_id == screen.root_visual);
    let ok_visual =
        visual.is_some_and(|v| v.red_mask == 0xff_0000 && v.green_mask == 0xff00 && v.blue_mask == 0xff);
    if screen.root_depth == 24 && ok_format && ok_visual {
        Ok(())
    } else {
        Err(format!("unsupported X visual (depth {}); need 24-bit TrueColor", screen.root_depth).into())
    }
}

pub(crate) struct XWindow {
    pub id: Window,
    /// Whether the server has exposed it (before that, a copy to it is dropped).
    pub exposed: bool,
    gc: Gcontext,
    depth: u8,
}

impl XWindow {
    pub fn create(conn: &RustConnection, screen: &Screen, atoms: &Atoms, spec: &Spec<'_>) -> XResult<Self> {
        let id = conn.generate_id()?;
        let events = EventMask::EXPOSURE
            | EventMask::STRUCTURE_NOTIFY
            | EventMask::KEY_PRESS
            | EventMask::KEY_RELEASE
            | EventMask::BUTTON_PRESS
            | EventMask::BUTTON_RELEASE
            | EventMask::POINTER_MOTION
            | EventMask::LEAVE_WINDOW
            | EventMask::FOCUS_CHANGE;
        let events = if spec.keep_above { events | EventMask::VISIBILITY_CHANGE } else { events };
        let (w, h) = spec.size;
        conn.create_window(
            screen.root_depth,
            id,
            screen.root,
            spec.pos.0,
            spec.pos.1,
            w,
            h,
            0,
            WindowClass::INPUT_OUTPUT,
            screen.root_visual,
            &CreateWindowAux::new().background_pixel(screen.black_pixel).event_mask(events),
        )?;
        let gc = conn.generate_id()?;
        conn.create_gc(gc, id, &CreateGCAux::new().graphics_exposures(0))?;
        let this = Self { id, exposed: false, gc, depth: screen.root_depth };
        this.set_properties(conn, atoms, spec)?;
        if spec.kind == Kind::Overlay {
            click_through(conn, id)?;
        }
        Ok(this)
    }

    fn set_properties(&self, conn: &RustConnection, atoms: &Atoms, spec: &Spec<'_>) -> XResult<()> {
        let id = self.id;
        conn.change_property8(
            PropMode::REPLACE,
            id,
            AtomEnum::WM_NAME,
            AtomEnum::STRING,
            spec.title.as_bytes(),
        )?;
        conn.change_property8(
            PropMode::REPLACE,
            id,
            atoms.net_wm_name,
            atoms.utf8_string,
            spec.title.as_bytes(),
        )?;
        let class = format!("{0}\0{0}\0", spec.class);
        conn.change_property8(PropMode::REPLACE, id, AtomEnum::WM_CLASS, AtomEnum::STRING, class.as_bytes())?;
        conn.change_property32(
            PropMode::REPLACE,
            id,
            atoms.net_wm_pid,
            AtomEnum::CARDINAL,
            &[std::process::id()],
        )?;
        let (kind, mut states) = match spec.kind {
            Kind::Overlay => (atoms.type_notification, vec![atoms.skip_taskbar, atoms.skip_pager]),
            Kind::Prompt => (atoms.type_dialog, vec![]),
        };
        states.push(atoms.state_above);
        conn.change_property32(PropMode::REPLACE, id, atoms.net_wm_window_type, AtomEnum::ATOM, &[kind])?;
        conn.change_property32(PropMode::REPLACE, id, atoms.net_wm_state, AtomEnum::ATOM, &states)?;
        conn.change_property32(
            PropMode::REPLACE,
            id,
            atoms.wm_protocols,
            AtomEnum::ATOM,
            &[atoms.wm_delete_window],
        )?;
        if spec.kind == Kind::Overlay {
            // No frame: a title bar would push the banner down and be a second thing to click.
            // Motif hints: flags = decorations, functions 0, decorations 0.
            conn.change_property32(
                PropMode::REPLACE,
                id,
                atoms.motif_wm_hints,
                atoms.motif_wm_hints,
                &[2, 0, 0, 0, 0],
            )?;
        }
        let hints = WmHints { input: Some(spec.kind == Kind::Prompt), ..WmHints::default() };
        hints.set(conn, id)?;
        self.set_size_hints(conn, spec.pos, spec.size)?;
        Ok(())
    }

    /// Put it above every other top-level window (a window manager may still decide).
    pub fn raise(conn: &RustConnection, id: Window) -> XResult<()> {
        conn.configure_window(id, &ConfigureWindowAux::new().stack_mode(StackMode::ABOVE))?;
        conn.flush()?;
        Ok(())
    }

    /// Fixed size at a program-chosen place, so window managers neither resize nor move it.
    fn set_size_hints(&self, conn: &RustConnection, pos: (i16, i16), size: (u16, u16)) -> XResult<()> {
        let (w, h) = (i32::from(size.0), i32::from(size.1));
        let hints = WmSizeHints {
            position: Some((WmSizeHintsSpecification::ProgramSpecified, pos.0.into(), pos.1.into())),
            size: Some((WmSizeHintsSpecification::ProgramSpecified, w, h)),
            min_size: Some((w, h)),
            max_size: Some((w, h)),
            ..WmSizeHints::default()
        };
        hints.set_normal_hints(conn, self.id)?;
        Ok(())
    }

    pub fn map(&self, conn: &RustConnection) -> XResult<()> {
        conn.map_window(self.id)?;
        conn.flush()?;
        Ok(())
    }

    /// Move and resize (the overlay grows with its narration).
    pub fn reshape(&self, conn: &RustConnection, pos: (i16, i16), size: (u16, u16)) -> XResult<()> {
        self.set_size_hints(conn, pos, size)?;
        let aux = ConfigureWindowAux::new()
            .x(i32::from(pos.0))
            .y(i32::from(pos.1))
            .width(u32::from(size.0))
            .height(u32::from(size.1));
        conn.configure_window(self.id, &aux)?;
        Ok(())
    }

    /// Copy the canvas to the window, in bands that fit the server's request size.
    pub fn show(&self, conn: &RustConnection, canvas: &Canvas) -> XResult<()> {
        let row_bytes = canvas.width * 4;
        if row_bytes == 0 {
            return Ok(());
        }
        let rows_per_band = ((conn.maximum_request_bytes().saturating_sub(64)) / row_bytes).max(1);
        let mut bytes = Vec::with_capacity(row_bytes * rows_per_band.min(canvas.height));
        for band_start in (0..canvas.height).step_by(rows_per_band) {
            let band_rows = rows_per_band.min(canvas.height - band_start);
            bytes.clear();
            let band = &canvas.pixels[band_start * canvas.width..(band_start + band_rows) * canvas.width];
            bytes.extend(band.iter().flat_map(|p| p.to_le_bytes()));
            conn.put_image(
                ImageFormat::Z_PIXMAP,
                self.id,
                self.gc,
                u16::try_from(canvas.width)?,
                u16::try_from(band_rows)?,
                0,
                i16::try_from(band_start)?,
                0,
                self.depth,
                &bytes,
            )?;
        }
        conn.flush()?;
        Ok(())
    }

    pub fn destroy(&self, conn: &RustConnection) {
        let _ = conn.free_gc(self.gc);
        let _ = conn.destroy_window(self.id);
        let _ = conn.flush();
    }
}

/// An unmapped, input-only window titled `title`: the sign, for the desktop's own tools and
/// the tests, that this process's operator UI is connected (as the old OpenGL host's hidden root window was).
pub(crate) fn stand_in(conn: &RustConnection, screen: &Screen, title: &str) -> XResult<Window> {
    let id = conn.generate_id()?;
    conn.create_window(
        0,
        id,
        screen.root,
        0,
        0,
        1,
        1,
        0,
        WindowClass::INPUT_ONLY,
        0,
        &CreateWindowAux::new(),
    )?;
    conn.change_property8(PropMode::REPLACE, id, AtomEnum::WM_NAME, AtomEnum::STRING, title.as_bytes())?;
    conn.flush()?;
    Ok(id)
}

/// An empty input region: the pointer goes through the window to whatever is below.
fn click_through(conn: &RustConnection, window: Window) -> XResult<()> {
    conn.xfixes_query_version(5, 0)?.reply()?;
    let region = conn.generate_id()?;
    conn.xfixes_create_region(region, &[])?;
    conn.xfixes_set_window_shape_region(window, SK::INPUT, 0, 0, region)?;
    conn.xfixes_destroy_region(region)?;
    Ok(())
}

/// Whether `event` is the window manager's close request for one of our windows.
pub(crate) fn is_close_request(atoms: &Atoms, event: &ClientMessageEvent) -> bool {
    event.type_ == atoms.wm_protocols
        && event.format == 32
        && event.data.as_data32().first() == Some(&atoms.wm_delete_window)
}
