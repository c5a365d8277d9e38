//! A tiny X11 window for mcec's integration tests: it draws a known pattern and prints every
//! input event it receives, one line each, on stdout. Not part of mcec.
//!
//! Usage: `mcec-testwin [--title T] [--class C] [--x N] [--y N] [--width N] [--height N]
//! [--stripes 1]`
//!
//! Pattern: four quadrants, red (top-left), green (top-right), blue (bottom-left), white
//! (bottom-right). With `--stripes 1` every row's green channel is XORed with `(y * 8) % 256`,
//! so each row differs from the next (pixel-exact comparisons). Output lines:
//! `ready <id>`, `press|release <button> <x> <y> <state>`, `motion <x> <y>`,
//! `key <keycode> <state> <keysym-hex> <char-hex|->`, `keyup <keycode> <state>`,
//! `focus-in`, `focus-out`, `mapping`.

use std::io::Write;

use x11rb::connection::Connection;
use x11rb::protocol::Event;
use x11rb::protocol::xproto::{
    AtomEnum, ChangeGCAux, ConnectionExt, CreateGCAux, CreateWindowAux, EventMask, KeyButMask, PropMode,
    Rectangle, WindowClass,
};
use x11rb::wrapper::ConnectionExt as _;

type Res<T> = Result<T, Box<dyn std::error::Error>>;

struct Args {
    title: String,
    class: String,
    x: i16,
    y: i16,
    width: u16,
    height: u16,
    stripes: bool,
}

fn parse_args() -> Res<Args> {
    let mut a = Args {
        title: "mcec test window".into(),
        class: "McecTestWin".into(),
        x: 100,
        y: 100,
        width: 400,
        height: 300,
        stripes: false,
    };
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        let v = it.next().ok_or("flag without value")?;
        match flag.as_str() {
            "--title" => a.title = v,
            "--class" => a.class = v,
            "--x" => a.x = v.parse()?,
            "--y" => a.y = v.parse()?,
            "--width" => a.width = v.parse()?,
            "--height" => a.height = v.parse()?,
            "--stripes" => a.stripes = v == "1",
            other => return Err(format!("unknown flag {other}").into()),
        }
    }
    Ok(a)
}

struct Keymap {
    min: u8,
    per: u8,
    syms: Vec<u32>,
}

impl Keymap {
    fn load(conn: &impl Connection) -> Res<Keymap> {
        let s = conn.setup();
        let (min, max) = (s.min_keycode, s.max_keycode);
        let r = conn.get_keyboard_mapping(min, max - min + 1)?.reply()?;
        Ok(Keymap { min, per: r.keysyms_per_keycode, syms: r.keysyms })
    }

    fn keysym(&self, keycode: u8, shifted: bool) -> u32 {
        let base = usize::from(keycode - self.min) * usize::from(self.per);
        let col0 = self.syms.get(base).copied().unwrap_or(0);
        let col1 = if self.per > 1 { self.syms.get(base + 1).copied().unwrap_or(0) } else { 0 };
        if shifted && col1 != 0 { col1 } else { col0 }
    }
}

fn char_of(keysym: u32) -> Option<char> {
    match keysym {
        0xff0d => Some('\n'),
        0xff09 => Some('\t'),
        _ => xkeysym::Keysym::new(keysym).key_char(),
    }
}

fn main() -> Res<()> {
    let args = parse_args()?;
    let (conn, screen_num) = x11rb::connect(None)?;
    let screen = &conn.setup().roots[screen_num];
    let win = conn.generate_id()?;
    conn.create_window(
        screen.root_depth,
        win,
        screen.root,
        args.x,
        args.y,
        args.width,
        args.height,
        0,
        WindowClass::INPUT_OUTPUT,
        0,
        &CreateWindowAux::new().background_pixel(0).event_mask(
            EventMask::EXPOSURE
                | EventMask::KEY_PRESS
                | EventMask::KEY_RELEASE
                | EventMask::BUTTON_PRESS
                | EventMask::BUTTON_RELEASE
                | EventMask::POINTER_MOTION
                | EventMask::FOCUS_CHANGE
                | EventMask::STRUCTURE_NOTIFY,
        ),
    )?;
    let intern = |name: &[u8]| -> Res<u32> { Ok(conn.intern_atom(false, name)?.reply()?.atom) };
    let net_wm_name = intern(b"_NET_WM_NAME")?;
    let utf8 = intern(b"UTF8_STRING")?;
    let net_wm_pid = intern(b"_NET_WM_PID")?;
    conn.change_property8(
        PropMode::REPLACE,
        win,
        AtomEnum::WM_NAME,
        AtomEnum::STRING,
        args.title.as_bytes(),
    )?;
    conn.change_property8(PropMode::REPLACE, win, net_wm_name, utf8, args.title.as_bytes())?;
    let class = format!("{}\0{}\0", args.class.to_lowercase(), args.class);
    conn.change_property8(PropMode::REPLACE, win, AtomEnum::WM_CLASS, AtomEnum::STRING, class.as_bytes())?;
    conn.change_property32(PropMode::REPLACE, win, net_wm_pid, AtomEnum::CARDINAL, &[std::process::id()])?;
    let gc = conn.generate_id()?;
    conn.create_gc(gc, win, &CreateGCAux::new().foreground(0))?;
    conn.map_window(win)?;
    conn.flush()?;

    let mut keymap = Keymap::load(&conn)?;
    let mut out = std::io::stdout().lock();
    let mut ready = false;
    let (w, h) = (args.width / 2, args.height / 2);
    let quads = [
        (0xff0000u32, 0i16, 0i16),
        (0x00ff00, w as i16, 0),
        (0x0000ff, 0, h as i16),
        (0xffffff, w as i16, h as i16),
    ];
    loop {
        let event = conn.wait_for_event()?;
        match event {
            Event::Expose(e) if e.count == 0 => {
                for (color, x, y) in quads {
                    if args.stripes {
                        for row in y..y + h as i16 {
                            let stripe = ((row as u32 * 8) % 256) << 8;
                            conn.change_gc(gc, &ChangeGCAux::new().foreground(color ^ stripe))?;
                            conn.poly_fill_rectangle(
                                win,
                                gc,
                                &[Rectangle { x, y: row, width: w, height: 1 }],
                            )?;
                        }
                        continue;
                    }
                    conn.change_gc(gc, &ChangeGCAux::new().foreground(color))?;
                    conn.poly_fill_rectangle(win, gc, &[Rectangle { x, y, width: w, height: h }])?;
                }
                conn.get_input_focus()?.reply()?;
                if !ready {
                    ready = true;
                    writeln!(out, "ready {win}")?;
                }
            }
            Event::ButtonPress(e) => {
                writeln!(out, "press {} {} {} {}", e.detail, e.event_x, e.event_y, u16::from(e.state))?
            }
            Event::ButtonRelease(e) => {
                writeln!(out, "release {} {} {} {}", e.detail, e.event_x, e.event_y, u16::from(e.state))?
            }
            Event::MotionNotify(e) => writeln!(out, "motion {} {}", e.event_x, e.event_y)?,
            Event::KeyPress(e) => {
                let shifted = e.state.contains(KeyButMask::SHIFT);
                let sym = keymap.keysym(e.detail, shifted);
                let ch = char_of(sym).map_or("-".to_string(), |c| format!("{:x}", u32::from(c)));
                writeln!(out, "key {} {} {sym:x} {ch}", e.detail, u16::from(e.state))?;
            }
            Event::KeyRelease(e) => writeln!(out, "keyup {} {}", e.detail, u16::from(e.state))?,
            Event::FocusIn(_) => writeln!(out, "focus-in")?,
            Event::FocusOut(_) => writeln!(out, "focus-out")?,
            Event::MappingNotify(_) => {
                keymap = Keymap::load(&conn)?;
                writeln!(out, "mapping")?;
            }
            _ => {}
        }
        out.flush()?;
    }
}
