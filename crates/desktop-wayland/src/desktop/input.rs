//! Input through the virtual keyboard and pointer. What mcec holds down is tracked here, so
//! `release_all` (the stop's) lets go of exactly that, then of every modifier and button 1-3.
//! A Wayland client cannot ask where the pointer is: the position is the last one mcec set.

use mcec_desktop::keys::Key;
use mcec_desktop::seams::Injector;
use mcec_desktop::types::{MouseButton, Point, ScrollDirection};
use mcec_rules::{ErrorCode, StopFlag, ToolError};

use super::{WlrDesktop, wl_err};
use mcec_desktop::keysyms::keysym_of;

use crate::keysyms::modifier_index;
use crate::wl::keymap::{MOD_MASKS, MODIFIERS};

/// Linux input button codes.
const BTN_LEFT: u32 = 0x110;
const BTN_RIGHT: u32 = 0x111;
const BTN_MIDDLE: u32 = 0x112;

/// Characters typed between two waits for the compositor: typing never runs far ahead of
/// what sway has handled, so a stop lands within a few characters of where it was pressed.
const PACE_EVERY: usize = 32;

/// What mcec has pressed and not released, and where it put the pointer.
#[derive(Debug, Default)]
pub(crate) struct Held {
    keys: Vec<u32>,
    buttons: Vec<u32>,
    mods: u32,
    pointer: Option<Point>,
}

fn button_code(b: MouseButton) -> u32 {
    match b {
        MouseButton::Left => BTN_LEFT,
        MouseButton::Right => BTN_RIGHT,
        MouseButton::Middle => BTN_MIDDLE,
    }
}

impl WlrDesktop {
    /// Presses or releases the key for `keysym`; a modifier also sets the modifier state.
    fn press(&self, keysym: u32, modifier: Option<usize>, down: bool) -> Result<(), ToolError> {
        let mut wl = self.wl();
        let code = wl.code_of(keysym).map_err(wl_err)?.ok_or_else(|| {
            ToolError::new(ErrorCode::BadArguments, "keys: a key the virtual keyboard cannot produce")
        })?;
        wl.key(code, down).map_err(wl_err)?;
        let mut held = self.held();
        if down {
            held.keys.push(code);
        } else {
            held.keys.retain(|k| *k != code);
        }
        if let Some(i) = modifier {
            if down {
                held.mods |= MOD_MASKS[i];
            } else {
                held.mods &= !MOD_MASKS[i];
            }
            wl.modifiers(held.mods).map_err(wl_err)?;
        }
        Ok(())
    }

    fn type_inner(&self, text: &str, stop: &StopFlag) -> Result<(), ToolError> {
        let total = text.chars().count();
        for (done, c) in text.chars().enumerate() {
            if stop.is_set() {
                let base = ToolError::emergency_stopped();
                return Err(ToolError::new(
                    base.code,
                    format!("{} Typed {done} of {total} characters before the stop.", base.detail),
                ));
            }
            let keysym = keysym_of(Key::Char(c));
            self.press(keysym, None, true)?;
            self.press(keysym, None, false)?;
            if (done + 1) % PACE_EVERY == 0 {
                self.settle()?;
            }
        }
        Ok(())
    }
}

impl Injector for WlrDesktop {
    fn pointer_move(&self, to: Point) -> Result<(), ToolError> {
        let layout = self.layout()?;
        let clamp = |v: i32, lo: i32, len: u32| {
            u32::try_from(i64::from(v) - i64::from(lo)).unwrap_or(0).min(len.saturating_sub(1))
        };
        let (x, y) = (clamp(to.x, layout.x, layout.width), clamp(to.y, layout.y, layout.height));
        self.wl().motion_absolute(x, y, layout.width, layout.height).map_err(wl_err)?;
        self.held().pointer = Some(Point::new(layout.x + x as i32, layout.y + y as i32));
        Ok(())
    }

    fn pointer_position(&self) -> Result<Point, ToolError> {
        self.held()
            .pointer
            .ok_or_else(|| ToolError::new(ErrorCode::Unavailable, "the pointer has not been placed yet"))
    }

    fn button(&self, button: MouseButton, down: bool) -> Result<(), ToolError> {
        let code = button_code(button);
        self.wl().button(code, down).map_err(wl_err)?;
        let mut held = self.held();
        held.buttons.retain(|b| *b != code);
        if down {
            held.buttons.push(code);
        }
        Ok(())
    }

    fn scroll(&self, direction: ScrollDirection) -> Result<(), ToolError> {
        let (vertical, sign) = match direction {
            ScrollDirection::Up => (true, -1),
            ScrollDirection::Down => (true, 1),
            ScrollDirection::Left => (false, -1),
            ScrollDirection::Right => (false, 1),
        };
        self.wl().scroll(vertical, sign).map_err(wl_err)
    }

    fn key(&self, key: Key, down: bool, stop: &StopFlag) -> Result<(), ToolError> {
        if down && stop.is_set() {
            return Err(ToolError::emergency_stopped());
        }
        self.press(keysym_of(key), modifier_index(key), down)
    }

    fn type_text(&self, text: &str, stop: &StopFlag) -> Result<(), ToolError> {
        let result = self.type_inner(text, stop);
        let released = if result.is_err() { self.release_all() } else { self.settle() };
        result.and(released)
    }

    fn settle(&self) -> Result<(), ToolError> {
        self.wl().roundtrip().map_err(wl_err)
    }

    fn release_all(&self) -> Result<(), ToolError> {
        let (keys, buttons) = {
            let mut held = self.held();
            held.mods = 0;
            (std::mem::take(&mut held.keys), std::mem::take(&mut held.buttons))
        };
        let mut wl = self.wl();
        for code in keys.iter().rev() {
            wl.key(*code, false).map_err(wl_err)?;
        }
        // The virtual keyboard's modifier keys and buttons 1-3 are released even when mcec
        // does not remember pressing them: a release of something not held is harmless.
        for sym in MODIFIERS {
            if let Ok(Some(code)) = wl.code_of(sym) {
                wl.key(code, false).map_err(wl_err)?;
            }
        }
        wl.modifiers(0).map_err(wl_err)?;
        for code in [BTN_LEFT, BTN_MIDDLE, BTN_RIGHT] {
            if buttons.contains(&code) {
                wl.button(code, false).map_err(wl_err)?;
            }
        }
        for code in buttons.iter().filter(|b| ![BTN_LEFT, BTN_MIDDLE, BTN_RIGHT].contains(b)) {
            wl.button(*code, false).map_err(wl_err)?;
        }
        wl.roundtrip().map_err(wl_err)
    }
}
