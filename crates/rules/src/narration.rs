//! What an admitted tool call does, in plain words for the operator: "clicked Save in
//! Editor", "typed 14 characters", "pressed Ctrl+S", "captured the screen". The overlay
//! narrates with these lines; anything else that lists an agent's actions should too.
//!
//! The words come from the call's own arguments (already accepted by the tool's parser), never
//! from a lookup on the desktop: this runs on every call. What an agent names (a window, an
//! element, a program) is shown, cleaned of invisible characters and cut short. What an agent
//! sends as data is never shown, only counted or left out: typed text, clipboard text, an
//! element's new text or value, raw `chars:`, keys that type characters, launch arguments and
//! directories, file paths, a consent reason, session ids and tokens.

mod keys;

use serde_json::{Map, Value};

use crate::catalog;
use crate::command_lang::{self, RawButton, RawCommand, RawScroll};
use crate::consent::sanitize_reason;
use crate::text::ellipsize;

/// Longest line [`describe`] returns, in characters.
pub const MAX_CHARS: usize = 80;

/// Longest agent-given name (a window title, an element's name) inside a line.
const MAX_NAME_CHARS: usize = 32;

/// One line saying what the call of `tool` with `args` does.
pub fn describe(tool: &str, args: Option<&Map<String, Value>>) -> String {
    let empty = Map::new();
    let args = Args(args.unwrap_or(&empty));
    let line = sentence(tool, &args).unwrap_or_else(|| format!("called {}", name(tool)));
    ellipsize(&line, MAX_CHARS)
}

/// The sentence for a catalogue tool; `None` for a name the catalogue does not have.
fn sentence(tool: &str, a: &Args<'_>) -> Option<String> {
    let line = match catalog::find(tool)?.name {
        catalog::SESSION_STATUS => "read the run status".into(),
        "displays" => "listed the displays".into(),
        "windows" => windows(a),
        "capture" => format!("captured {}", a.area("the screen")),
        "click" => click(a),
        "drag" => {
            let (from, to) = (a.endpoint("from"), a.endpoint("to"));
            format!("dragged from {from} to {to}{}{}", a.in_window(), a.modifiers())
        }
        "scroll" => {
            let direction = a.str("direction").unwrap_or("down");
            let notches = a.uint("notches").unwrap_or(3);
            format!("scrolled {direction} {notches}{}{}", a.in_window(), a.modifiers())
        }
        "mouse" => mouse(a),
        "wait" => format!("waited {}", duration(a.uint("ms").unwrap_or(0))),
        "type" => format!("typed {}", count(a.chars("text"), "character")),
        "key" => format!("pressed {}", keys::chords(a.str("keys").unwrap_or(""))),
        "window" => window(a),
        "focus" => match a.map("clickAt") {
            Some(at) => format!("focused {} and clicked {}", a.window_or("a window"), Args(at).target()),
            None => format!("focused {}", a.window_or("a window")),
        },
        catalog::LAUNCH => launch(a),
        "record" => match a.str("action") {
            Some("start") => format!("started recording {}", a.area("the screen")),
            Some("stop") => "stopped recording".into(),
            _ => format!(
                "recorded {} for {}",
                a.area("the screen"),
                duration(a.uint("durationMs").unwrap_or(0))
            ),
        },
        "send_command" => raw_line(a.str("command").unwrap_or("")),
        "query" => match a.str("elementId") {
            Some(_) => "read the accessibility tree of an element".into(),
            None => format!("read the accessibility tree of {}", a.window_or("a window")),
        },
        "find" => format!("looked for {}", a.element_in_window()),
        "invoke" => invoke(a),
        "wait-for" => {
            let until = match a.str("condition") {
                Some("disappears") => "to go",
                Some("enabled") => "to be enabled",
                Some("focused") => "to get the focus",
                Some("showing") => "to show",
                _ => "to appear",
            };
            format!("waited for {} {until}", a.element_in_window())
        }
        "get-text" => {
            let from = if a.0.contains_key("region") {
                "a region of the screen".into()
            } else {
                a.element_in_window()
            };
            format!("read the text of {from}")
        }
        "clipboard" => {
            let which =
                if a.str("selection") == Some("primary") { "the primary selection" } else { "the clipboard" };
            let verb = if a.str("action") == Some("set") { "set" } else { "read" };
            format!("{verb} {which}")
        }
        catalog::PROVISION_SESSION => "provisioned a session copy".into(),
        catalog::END_SESSION => "ended a session copy".into(),
        catalog::REQUEST_COMMAND_ACCESS => {
            format!("asked the operator for {}", count(a.len("commands"), "command"))
        }
        _ => return None,
    };
    Some(line)
}

fn windows(a: &Args<'_>) -> String {
    let which = a.str("title").or_else(|| a.str("className")).or_else(|| a.str("process"));
    let which = which.map_or_else(|| "a window".to_string(), name);
    match a.str("condition") {
        Some("appears") => format!("waited for {which} to appear"),
        Some("disappears") => format!("waited for {which} to close"),
        Some("foreground") => format!("waited for {which} to come to the front"),
        _ => "listed windows".into(),
    }
}

fn click(a: &Args<'_>) -> String {
    let button = a.str("button").unwrap_or("left");
    let clicks = a.uint("count").unwrap_or(1);
    let verb = match (button, clicks) {
        ("left", 2) => "double-clicked".to_string(),
        ("left", 3) => "triple-clicked".to_string(),
        (button, 1) if button != "left" => format!("{button}-clicked"),
        ("left", _) => "clicked".to_string(),
        (button, n) => format!("{button}-clicked {n} times"),
    };
    let at = a.map("at").map_or_else(|| "somewhere".to_string(), |at| Args(at).target());
    format!("{verb} {at}{}{}", a.in_window(), a.modifiers())
}

fn mouse(a: &Args<'_>) -> String {
    let button = a.str("button").unwrap_or("left");
    let at = a.point("at").map(|(x, y)| format!(" at ({x}, {y})")).unwrap_or_default();
    let window = a.in_window();
    match a.str("action") {
        Some("move") => match a.point("at") {
            Some((x, y)) => format!("moved the pointer to ({x}, {y}){window}"),
            None => format!("moved the pointer{window}"),
        },
        Some("down") => format!("pressed the {button} button{at}{window}"),
        Some("up") => format!("released the {button} button{at}{window}"),
        _ => "read the pointer position".into(),
    }
}

fn window(a: &Args<'_>) -> String {
    let w = a.window_or("a window");
    match a.str("action") {
        Some("move") => match (a.int("x"), a.int("y")) {
            (Some(x), Some(y)) => format!("moved {w} to ({x}, {y})"),
            _ => format!("moved {w}"),
        },
        Some("resize") => match (a.int("width"), a.int("height")) {
            (Some(width), Some(height)) => format!("resized {w} to {width}×{height}"),
            _ => format!("resized {w}"),
        },
        Some("minimize") => format!("minimized {w}"),
        Some("maximize") => format!("maximized {w}"),
        Some("restore") => format!("restored {w}"),
        _ => format!("raised {w}"),
    }
}

/// The program's own name only: a directory in its path, its arguments and its working
/// directory can carry anything (a user name, a token on a command line).
fn launch(a: &Args<'_>) -> String {
    let path = a.str("path").unwrap_or("");
    let program = path.rsplit(['/', '\\']).next().unwrap_or(path);
    let program = if program.trim().is_empty() { "a program".to_string() } else { name(program) };
    match a.len("args") {
        0 => format!("launched {program}"),
        n => format!("launched {program} with {}", count(n, "argument")),
    }
}

fn invoke(a: &Args<'_>) -> String {
    let target = a.element_in_window();
    match a.str("action") {
        Some("toggle") => format!("toggled {target}"),
        Some("select") => format!("selected {target}"),
        Some("expand") => format!("expanded {target}"),
        Some("collapse") => format!("collapsed {target}"),
        Some("focus") => format!("focused {target}"),
        Some("setValue") => format!("set the value of {target}"),
        Some("setText") => format!("set the text of {target} ({})", count(a.chars("text"), "character")),
        Some("appendText") => format!("added {} to {target}", count(a.chars("text"), "character")),
        Some("named") => match a.str("name") {
            Some(action) => format!("ran {} on {target}", name(action)),
            None => format!("ran an action on {target}"),
        },
        _ => format!("pressed {target}"),
    }
}

/// One `send_command` line, command by command; `chars:` text is counted, keys as `key`.
fn raw_line(line: &str) -> String {
    let Ok(commands) = command_lang::parse_line(line) else {
        return "raw input".into();
    };
    let button = |b: &RawButton| match b {
        RawButton::Left => "left",
        RawButton::Right => "right",
        RawButton::Middle => "middle",
    };
    let parts: Vec<String> = commands
        .iter()
        .map(|c| match c {
            RawCommand::Chars(text) => format!("typed {}", count(text.chars().count(), "character")),
            RawCommand::Key(spec) => format!("pressed {}", keys::chords(spec)),
            RawCommand::MouseMove { x, y } => format!("moved the pointer to ({x}, {y})"),
            RawCommand::MouseClick { x, y, button: RawButton::Left } => format!("clicked at ({x}, {y})"),
            RawCommand::MouseClick { x, y, button: b } => format!("{}-clicked at ({x}, {y})", button(b)),
            RawCommand::MouseDrag { from, to } => {
                format!("dragged from ({}, {}) to ({}, {})", from.0, from.1, to.0, to.1)
            }
            RawCommand::MouseDown { x, y, button: b } => {
                format!("pressed the {} button at ({x}, {y})", button(b))
            }
            RawCommand::MouseUp { x, y, button: b } => {
                format!("released the {} button at ({x}, {y})", button(b))
            }
            RawCommand::MouseScroll { direction, notches, .. } => {
                let way = match direction {
                    RawScroll::Up => "up",
                    RawScroll::Down => "down",
                    RawScroll::Left => "left",
                    RawScroll::Right => "right",
                };
                format!("scrolled {way} {notches}")
            }
            RawCommand::Pause(ms) => format!("paused {}", duration(*ms)),
        })
        .collect();
    format!("raw input: {}", parts.join(", "))
}

/// `1 character`, `14 characters`.
fn count(n: usize, noun: &str) -> String {
    if n == 1 { format!("1 {noun}") } else { format!("{n} {noun}s") }
}

/// `500 ms`, `2 s`, `1.5 s`.
fn duration(ms: u64) -> String {
    match ms {
        0..1000 => format!("{ms} ms"),
        _ if ms.is_multiple_of(1000) => format!("{} s", ms / 1000),
        _ => format!("{:.1} s", ms as f64 / 1000.0),
    }
}

/// An agent-given name as the operator sees it: no invisible or reordering characters, one
/// line, short.
fn name(raw: &str) -> String {
    ellipsize(&sanitize_reason(raw), MAX_NAME_CHARS)
}

/// A call's arguments, read leniently: the tool's parser has already accepted them, and a
/// field of an unexpected shape reads as absent rather than failing the narration.
struct Args<'a>(&'a Map<String, Value>);

impl<'a> Args<'a> {
    fn str(&self, key: &str) -> Option<&'a str> {
        self.0.get(key).and_then(Value::as_str).filter(|s| !s.trim().is_empty())
    }

    fn int(&self, key: &str) -> Option<i64> {
        self.0.get(key).and_then(Value::as_i64)
    }

    fn uint(&self, key: &str) -> Option<u64> {
        self.0.get(key).and_then(Value::as_u64)
    }

    fn map(&self, key: &str) -> Option<&'a Map<String, Value>> {
        self.0.get(key).and_then(Value::as_object)
    }

    /// How many characters a text field holds (0 when absent).
    fn chars(&self, key: &str) -> usize {
        self.0.get(key).and_then(Value::as_str).map_or(0, |s| s.chars().count())
    }

    /// How many items an array field holds (0 when absent).
    fn len(&self, key: &str) -> usize {
        self.0.get(key).and_then(Value::as_array).map_or(0, Vec::len)
    }

    fn point(&self, key: &str) -> Option<(i64, i64)> {
        let p = Args(self.map(key)?);
        Some((p.int("x")?, p.int("y")?))
    }

    /// The window the selector fields name, in the words the agent gave.
    fn window(&self) -> Option<String> {
        if let Some(named) =
            self.str("window").or_else(|| self.str("className")).or_else(|| self.str("process"))
        {
            return Some(name(named));
        }
        if let Some(handle) = self.uint("handle") {
            return Some(format!("window {handle:#x}"));
        }
        if let Some(pid) = self.uint("pid") {
            return Some(format!("the window of process {pid}"));
        }
        match self.0.get("foreground").and_then(Value::as_bool) {
            Some(true) => Some("the foreground window".into()),
            Some(false) => Some("a background window".into()),
            None => None,
        }
    }

    fn window_or(&self, otherwise: &str) -> String {
        self.window().unwrap_or_else(|| otherwise.to_string())
    }

    /// ` in Editor` when a window is named, else nothing.
    fn in_window(&self) -> String {
        self.window().map(|w| format!(" in {w}")).unwrap_or_default()
    }

    /// What a capture or recording covers: a window, a region, or `whole`.
    fn area(&self, whole: &str) -> String {
        if self.0.contains_key("region") {
            return "a region of the screen".into();
        }
        self.window_or(whole)
    }

    /// The element an element target names (`value`, else its role, else "an element").
    fn element(&self) -> String {
        match (self.str("value"), self.str("role")) {
            (Some(value), _) => name(value),
            (None, Some(role)) => format!("a {}", name(role)),
            (None, None) => "an element".into(),
        }
    }

    /// `Save in Editor`, `Save`, or the window alone when no element is named.
    fn element_in_window(&self) -> String {
        let names_element =
            self.str("value").is_some() || self.str("elementId").is_some() || self.str("role").is_some();
        match (names_element, self.window()) {
            (true, Some(w)) => format!("{} in {w}", self.element()),
            (true, None) => self.element(),
            (false, Some(w)) => w,
            (false, None) => "an element".into(),
        }
    }

    /// An endpoint (`at`, `from`, `to`, `clickAt`) read as a point `(x, y)` or an element.
    fn target(&self) -> String {
        match (self.int("x"), self.int("y")) {
            (Some(x), Some(y)) => format!("at ({x}, {y})"),
            _ => self.element(),
        }
    }

    /// An endpoint field: `(x, y)` or the element's name.
    fn endpoint(&self, key: &str) -> String {
        match self.map(key) {
            Some(e) => {
                let e = Args(e);
                match (e.int("x"), e.int("y")) {
                    (Some(x), Some(y)) => format!("({x}, {y})"),
                    _ => e.element(),
                }
            }
            None => "somewhere".into(),
        }
    }

    /// ` with Ctrl+Shift` for held modifiers, else nothing.
    fn modifiers(&self) -> String {
        let held: Vec<String> = self
            .0
            .get("modifiers")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .map(keys::modifier_name)
            .collect();
        if held.is_empty() { String::new() } else { format!(" with {}", held.join("+")) }
    }
}

#[cfg(test)]
mod tests;
