//! What the own panel of `mcec-controls own` holds (a count of presses of its `Apply` button,
//! its `Bold` check box, and the selected and the focused item of its `Colours` list), the
//! one place its accessible objects ([`crate::own_accessible`]) change it, and the lines the
//! program prints for each change. One lock: COM calls arrive on the window's thread, the
//! `state` query on stdin's reader.

use std::sync::Mutex;

/// The list's items, MSAA child ids 1, 2, 3.
pub const COLOURS: [&str; 3] = ["Red", "Green", "Blue"];

/// What has the panel's keyboard focus.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Focus {
    Apply,
    Bold,
    /// The list item with this index into [`COLOURS`].
    Item(usize),
}

/// The panel's state.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Own {
    pub applied: u32,
    pub bold: bool,
    pub selected: Option<usize>,
    pub focus: Option<Focus>,
}

static STATE: Mutex<Own> = Mutex::new(Own { applied: 0, bold: false, selected: None, focus: None });

/// The state now.
pub fn get() -> Own {
    *STATE.lock().unwrap_or_else(|p| p.into_inner())
}

/// Changes the state with `f` and prints `OWN <what> <state>`; the panel repaints.
pub fn change(what: &str, f: impl FnOnce(&mut Own)) {
    let now = {
        let mut s = STATE.lock().unwrap_or_else(|p| p.into_inner());
        f(&mut s);
        *s
    };
    crate::controls::say(&format!("OWN {what} {}", now.line()));
    crate::own_panel::repaint();
}

impl Own {
    /// `applied=N bold=0|1 selected=NAME|- focus=NAME|-`: what the program prints and paints.
    pub fn line(&self) -> String {
        let selected = self.selected.map_or("-", |i| COLOURS[i]);
        let focus = match self.focus {
            None => "-",
            Some(Focus::Apply) => "Apply",
            Some(Focus::Bold) => "Bold",
            Some(Focus::Item(i)) => COLOURS[i],
        };
        format!("applied={} bold={} selected={selected} focus={focus}", self.applied, u8::from(self.bold))
    }
}
