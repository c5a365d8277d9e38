//! The raw command language of `send_command`: one line, parsed into commands, with no
//! desktop involved. The desktop crate runs the result; this module only decides what a
//! line means and which `mcec.commands` switch each command needs.
//!
//! A line is one or more commands separated by `;`. Each command is `kind:body`:
//!
//! - `chars:<text>` types `<text>` exactly (spaces included) up to the next unescaped `;`.
//!   Escapes: `\;` a semicolon, `\\` a backslash, `\n` Return, `\t` Tab.
//! - `key:<chords>` presses chords with the `key` tool's grammar (`ctrl+s`, `Enter`,
//!   `ctrl+a Delete`); the desktop crate checks the key names.
//! - `mouse:move X Y`, `mouse:click X Y [left|right|middle]`, `mouse:drag X1 Y1 X2 Y2`,
//!   `mouse:down X Y [button]`, `mouse:up X Y [button]`,
//!   `mouse:scroll X Y up|down|left|right [notches]`, desktop pixels.
//! - `pause:<ms>` waits, at most [`MAX_PAUSE_MS`].
//!
//! Kinds, mouse actions and button names are case-insensitive. Whitespace before a kind is
//! ignored. The full reference is `docs/send_command.md`.

use std::fmt;

use crate::settings::Commands;
use crate::{ErrorCode, ToolError};

/// The longest `pause:`.
pub const MAX_PAUSE_MS: u64 = 5_000;

/// A command kind; each has its own `Enabled` under `[send_command.<kind>]`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum RawKind {
    Chars,
    Key,
    Mouse,
    Pause,
}

impl RawKind {
    pub const ALL: [RawKind; 4] = [RawKind::Chars, RawKind::Key, RawKind::Mouse, RawKind::Pause];

    /// The prefix before `:` and the sub-table name in `mcec.commands`.
    pub fn as_str(self) -> &'static str {
        match self {
            RawKind::Chars => "chars",
            RawKind::Key => "key",
            RawKind::Mouse => "mouse",
            RawKind::Pause => "pause",
        }
    }

    /// The name `Commands::is_enabled` knows it by: `send_command.<kind>`.
    pub fn setting(self) -> String {
        format!("send_command.{}", self.as_str())
    }

    pub fn from_name(name: &str) -> Option<RawKind> {
        RawKind::ALL.into_iter().find(|k| k.as_str().eq_ignore_ascii_case(name))
    }
}

/// Which way `mouse:scroll` turns the wheel.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RawScroll {
    Up,
    Down,
    Left,
    Right,
}

/// The most notches one `mouse:scroll` turns.
pub const MAX_SCROLL_NOTCHES: u32 = 50;

/// A mouse button named in `mouse:click`, `mouse:down` or `mouse:up`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum RawButton {
    #[default]
    Left,
    Right,
    Middle,
}

/// One parsed command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RawCommand {
    /// Text with escapes already resolved; never empty.
    Chars(String),
    /// A chord spec for the key grammar; never blank.
    Key(String),
    MouseMove {
        x: i32,
        y: i32,
    },
    MouseClick {
        x: i32,
        y: i32,
        button: RawButton,
    },
    MouseDrag {
        from: (i32, i32),
        to: (i32, i32),
    },
    /// Press a button and keep it down past the end of the line (until `mouse:up`, the stop,
    /// or the hold limit).
    MouseDown {
        x: i32,
        y: i32,
        button: RawButton,
    },
    MouseUp {
        x: i32,
        y: i32,
        button: RawButton,
    },
    MouseScroll {
        x: i32,
        y: i32,
        direction: RawScroll,
        notches: u32,
    },
    Pause(u64),
}

impl RawCommand {
    pub fn kind(&self) -> RawKind {
        match self {
            RawCommand::Chars(_) => RawKind::Chars,
            RawCommand::Key(_) => RawKind::Key,
            RawCommand::MouseMove { .. }
            | RawCommand::MouseClick { .. }
            | RawCommand::MouseDrag { .. }
            | RawCommand::MouseDown { .. }
            | RawCommand::MouseUp { .. }
            | RawCommand::MouseScroll { .. } => RawKind::Mouse,
            RawCommand::Pause(_) => RawKind::Pause,
        }
    }
}

/// Why a line does not parse: which command (1-based) and what is wrong with it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LangError {
    /// 1-based position of the command in the line; 0 for the line as a whole.
    pub index: usize,
    pub problem: String,
}

impl fmt::Display for LangError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.index == 0 {
            write!(f, "{}", self.problem)
        } else {
            write!(f, "command {}: {}", self.index, self.problem)
        }
    }
}

impl std::error::Error for LangError {}

impl LangError {
    /// As the tool answers it: `bad-arguments` on `command`.
    pub fn to_tool_error(&self) -> ToolError {
        ToolError::bad_argument("command", self)
    }
}

/// Parse one line into its commands, in order.
pub fn parse_line(line: &str) -> Result<Vec<RawCommand>, LangError> {
    if let Some((i, c)) = line.chars().enumerate().find(|(_, c)| c.is_control()) {
        return Err(LangError {
            index: 0,
            problem: format!(
                "the line holds control character U+{:04X} at position {i}; one line per call, and write \\n or \\t inside chars: text",
                u32::from(c)
            ),
        });
    }
    if line.trim().is_empty() {
        return Err(LangError {
            index: 0,
            problem: "the line is empty; give commands such as `chars:hello; key:Return`".into(),
        });
    }
    let mut commands = Vec::new();
    let mut rest = line;
    loop {
        let index = commands.len() + 1;
        let err = |problem: String| LangError { index, problem };
        let head = rest.trim_start();
        let first = &head[..head.find(';').unwrap_or(head.len())];
        let Some((kind_name, body)) = first.find(':').map(|at| (&head[..at], &head[at + 1..])) else {
            let shown = snippet(first);
            return Err(err(if shown.trim().is_empty() {
                "is empty (two `;` in a row, or a `;` at the end?)".into()
            } else {
                format!("`{shown}` has no `kind:`; kinds are chars, key, mouse, pause")
            }));
        };
        let Some(kind) = RawKind::from_name(kind_name.trim()) else {
            return Err(err(format!(
                "unknown kind `{}`; kinds are chars, key, mouse, pause",
                snippet(kind_name.trim())
            )));
        };
        let (command, next) = match kind {
            RawKind::Chars => {
                let (text, next) = chars_body(body).map_err(err)?;
                (RawCommand::Chars(text), next)
            }
            _ => {
                let (body, next) = match body.split_once(';') {
                    Some((b, n)) => (b, Some(n)),
                    None => (body, None),
                };
                (plain_command(kind, body.trim()).map_err(err)?, next)
            }
        };
        commands.push(command);
        match next {
            Some(n) => rest = n,
            None => return Ok(commands),
        }
    }
}

/// The text of `chars:` up to the next unescaped `;`, escapes resolved, and what follows.
fn chars_body(body: &str) -> Result<(String, Option<&str>), String> {
    let mut text = String::new();
    let mut chars = body.char_indices();
    let mut next = None;
    while let Some((i, c)) = chars.next() {
        match c {
            ';' => {
                next = Some(&body[i + 1..]);
                break;
            }
            '\\' => match chars.next().map(|(_, e)| e) {
                Some(';') => text.push(';'),
                Some('\\') => text.push('\\'),
                Some('n') => text.push('\n'),
                Some('t') => text.push('\t'),
                Some(other) => {
                    return Err(format!(
                        "chars: unknown escape `\\{other}`; the escapes are \\; \\\\ \\n \\t"
                    ));
                }
                None => return Err("chars: ends in a lone `\\`; write `\\\\` for a backslash".into()),
            },
            _ => text.push(c),
        }
    }
    if text.is_empty() {
        return Err("chars: has no text to type".into());
    }
    Ok((text, next))
}

fn plain_command(kind: RawKind, body: &str) -> Result<RawCommand, String> {
    match kind {
        RawKind::Key if body.is_empty() => Err("key: needs a chord such as `ctrl+s` or `Enter`".into()),
        RawKind::Key => Ok(RawCommand::Key(body.to_string())),
        RawKind::Pause => {
            let ms: u64 = body.parse().map_err(|_| {
                format!("pause: needs milliseconds as a whole number, found `{}`", snippet(body))
            })?;
            if ms > MAX_PAUSE_MS {
                return Err(format!("pause: {ms} ms is longer than the {MAX_PAUSE_MS} ms allowed"));
            }
            Ok(RawCommand::Pause(ms))
        }
        RawKind::Mouse => mouse(body),
        RawKind::Chars => Err("chars: is parsed on its own".into()),
    }
}

fn mouse(body: &str) -> Result<RawCommand, String> {
    let mut words = body.split_whitespace();
    let action = words.next().unwrap_or("").to_ascii_lowercase();
    let args: Vec<&str> = words.collect();
    let ints = |want: usize, usage: &str| -> Result<Vec<i32>, String> {
        let numbers = args.iter().take(want);
        if args.len() < want {
            return Err(format!("`mouse:{usage}` needs {want} numbers, found {}", args.len()));
        }
        numbers
            .map(|w| {
                w.parse::<i32>()
                    .map_err(|_| format!("`mouse:{usage}`: `{}` is not a whole number of pixels", snippet(w)))
            })
            .collect()
    };
    let too_many = |want: usize, usage: &str| -> Result<(), String> {
        if args.len() > want {
            return Err(format!("`mouse:{usage}` takes {want} arguments, found {}", args.len()));
        }
        Ok(())
    };
    let button_at = |i: usize, usage: &str| -> Result<RawButton, String> {
        match args.get(i).map(|b| b.to_ascii_lowercase()).as_deref() {
            None | Some("left") => Ok(RawButton::Left),
            Some("right") => Ok(RawButton::Right),
            Some("middle") => Ok(RawButton::Middle),
            Some(other) => Err(format!(
                "`mouse:{usage}`: unknown button `{}`; use left, right or middle",
                snippet(other)
            )),
        }
    };
    match action.as_str() {
        "down" | "up" => {
            let usage = format!("{action} X Y [left|right|middle]");
            too_many(3, &usage)?;
            let n = ints(2, &usage)?;
            let button = button_at(2, &action)?;
            Ok(if action == "down" {
                RawCommand::MouseDown { x: n[0], y: n[1], button }
            } else {
                RawCommand::MouseUp { x: n[0], y: n[1], button }
            })
        }
        "scroll" => {
            let usage = "scroll X Y up|down|left|right [notches]";
            too_many(4, usage)?;
            let n = ints(2, usage)?;
            let direction = match args.get(2).map(|d| d.to_ascii_lowercase()).as_deref() {
                Some("up") => RawScroll::Up,
                Some("down") => RawScroll::Down,
                Some("left") => RawScroll::Left,
                Some("right") => RawScroll::Right,
                None => return Err(format!("`mouse:{usage}` needs a direction")),
                Some(other) => {
                    return Err(format!(
                        "`mouse:scroll`: unknown direction `{}`; use up, down, left or right",
                        snippet(other)
                    ));
                }
            };
            let notches = match args.get(3) {
                None => 1,
                Some(w) => {
                    w.parse::<u32>().ok().filter(|n| (1..=MAX_SCROLL_NOTCHES).contains(n)).ok_or_else(
                        || {
                            format!(
                                "`mouse:scroll`: notches must be 1 to {MAX_SCROLL_NOTCHES}, not `{}`",
                                snippet(w)
                            )
                        },
                    )?
                }
            };
            Ok(RawCommand::MouseScroll { x: n[0], y: n[1], direction, notches })
        }
        "move" => {
            too_many(2, "move X Y")?;
            let n = ints(2, "move X Y")?;
            Ok(RawCommand::MouseMove { x: n[0], y: n[1] })
        }
        "click" => {
            too_many(3, "click X Y [left|right|middle]")?;
            let n = ints(2, "click X Y [left|right|middle]")?;
            let button = button_at(2, "click")?;
            Ok(RawCommand::MouseClick { x: n[0], y: n[1], button })
        }
        "drag" => {
            too_many(4, "drag X1 Y1 X2 Y2")?;
            let n = ints(4, "drag X1 Y1 X2 Y2")?;
            Ok(RawCommand::MouseDrag { from: (n[0], n[1]), to: (n[2], n[3]) })
        }
        "" => Err("mouse: needs an action: move, click, drag, down, up or scroll".into()),
        other => Err(format!(
            "unknown mouse action `{}`; use move, click, drag, down, up or scroll",
            snippet(other)
        )),
    }
}

/// At most 40 characters of agent text, for echoing in an error.
fn snippet(s: &str) -> String {
    crate::text::ellipsize(s, 40)
}

/// `command-disabled` for the first command whose kind `mcec.commands` does not enable.
pub fn check_enabled(commands: &[RawCommand], settings: &Commands) -> Result<(), ToolError> {
    match commands.iter().map(RawCommand::kind).find(|k| !settings.is_enabled(&k.setting())) {
        None => Ok(()),
        Some(kind) => Err(ToolError::new(
            ErrorCode::CommandDisabled,
            format!(
                "`{0}:` commands are disabled in mcec.commands (`[send_command.{0}]` `Enabled = true` turns them on); nothing ran.",
                kind.as_str()
            ),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(line: &str) -> Vec<RawCommand> {
        parse_line(line).unwrap_or_else(|e| panic!("{line:?}: {e}"))
    }

    fn problem(line: &str) -> LangError {
        parse_line(line).expect_err(line)
    }

    #[test]
    fn button_holds_and_the_wheel_parse() {
        assert_eq!(
            parse("mouse:down 1 2; mouse:up 3 4 right; mouse:scroll 5 6 down; MOUSE:scroll 7 8 Left 12"),
            vec![
                RawCommand::MouseDown { x: 1, y: 2, button: RawButton::Left },
                RawCommand::MouseUp { x: 3, y: 4, button: RawButton::Right },
                RawCommand::MouseScroll { x: 5, y: 6, direction: RawScroll::Down, notches: 1 },
                RawCommand::MouseScroll { x: 7, y: 8, direction: RawScroll::Left, notches: 12 },
            ]
        );
        assert!(problem("mouse:scroll 1 2").problem.contains("needs a direction"));
        assert!(problem("mouse:scroll 1 2 sideways").problem.contains("unknown direction `sideways`"));
        assert!(problem("mouse:scroll 1 2 up 0").problem.contains("notches must be 1 to 50"));
        assert!(problem("mouse:scroll 1 2 up 51").problem.contains("notches must be 1 to 50"));
        assert!(problem("mouse:scroll 1 2 up -3").problem.contains("notches must be 1 to 50"));
        assert!(problem("mouse:down 1 2 fourth").problem.contains("unknown button `fourth`"));
        assert!(problem("mouse:up 1").problem.contains("needs 2 numbers"));
        assert!(problem("mouse:up 1 2 left extra").problem.contains("takes 3 arguments"));
    }

    #[test]
    fn every_kind_parses() {
        assert_eq!(
            parse("chars:hello world; key:ctrl+s ;mouse:move 10 20;pause:250"),
            vec![
                RawCommand::Chars("hello world".into()),
                RawCommand::Key("ctrl+s".into()),
                RawCommand::MouseMove { x: 10, y: 20 },
                RawCommand::Pause(250),
            ]
        );
        assert_eq!(
            parse("mouse:click 1 2; MOUSE:Click -5 7 Right; mouse:click 3 4 middle"),
            vec![
                RawCommand::MouseClick { x: 1, y: 2, button: RawButton::Left },
                RawCommand::MouseClick { x: -5, y: 7, button: RawButton::Right },
                RawCommand::MouseClick { x: 3, y: 4, button: RawButton::Middle },
            ]
        );
        assert_eq!(
            parse("mouse:drag 1 2 300 400"),
            vec![RawCommand::MouseDrag { from: (1, 2), to: (300, 400) }]
        );
        assert_eq!(parse("key:ctrl+a Delete"), vec![RawCommand::Key("ctrl+a Delete".into())]);
        assert_eq!(parse("pause:5000"), vec![RawCommand::Pause(5000)]);
    }

    #[test]
    fn chars_is_verbatim_with_escapes() {
        assert_eq!(parse("chars: a b "), vec![RawCommand::Chars(" a b ".into())]);
        assert_eq!(
            parse(r"chars:x\;y\\z\n\tend;chars:ü€"),
            vec![RawCommand::Chars("x;y\\z\n\tend".into()), RawCommand::Chars("ü€".into())]
        );
        assert_eq!(parse("chars:a:b"), vec![RawCommand::Chars("a:b".into())]);
        assert!(problem(r"chars:bad\q").problem.contains("unknown escape `\\q`"));
        assert!(problem(r"chars:trailing\").problem.contains("lone"));
        assert!(problem("chars:").problem.contains("no text"));
    }

    #[test]
    fn errors_name_the_command_and_the_problem() {
        let e = problem("chars:ok; pause:9000");
        assert_eq!(e.index, 2);
        assert!(e.to_string().starts_with("command 2: pause: 9000 ms"), "{e}");
        assert!(problem("pause:soon").problem.contains("`soon`"));
        assert!(problem("pause:-1").problem.contains("whole number"));
        assert!(problem("key:").problem.contains("needs a chord"));
        assert!(problem("key:   ").problem.contains("needs a chord"));
        assert!(problem("mouse:move 1").problem.contains("needs 2 numbers, found 1"));
        assert!(problem("mouse:move 1 2 3").problem.contains("takes 2 arguments"));
        assert!(problem("mouse:move one 2").problem.contains("`one` is not a whole number"));
        assert!(problem("mouse:click 1 2 fourth").problem.contains("unknown button `fourth`"));
        assert!(problem("mouse:drag 1 2 3").problem.contains("needs 4 numbers"));
        assert!(problem("mouse:jump 1 2").problem.contains("unknown mouse action `jump`"));
        assert!(problem("mouse:").problem.contains("needs an action"));
        assert!(problem("shell:rm -rf").problem.contains("unknown kind `shell`"));
        assert!(problem("hello").problem.contains("has no `kind:`"));
        assert!(problem("hello; key:a").problem.contains("`hello`"));
        assert_eq!(problem("key:a;;key:b").index, 2);
        assert!(problem("key:a;").problem.contains("is empty"));
    }

    #[test]
    fn whole_line_errors() {
        assert_eq!(problem("").index, 0);
        assert!(problem("   ").problem.contains("empty"));
        let e = problem("chars:a\nkey:Return");
        assert_eq!(e.index, 0);
        assert!(e.problem.contains("U+000A"), "{e}");
        let tool = e.to_tool_error();
        assert_eq!(tool.code, ErrorCode::BadArguments);
        assert!(tool.detail.starts_with("`command`:"), "{}", tool.detail);
    }

    #[test]
    fn long_agent_text_is_not_echoed_whole() {
        let e = problem(&format!("{}:x", "k".repeat(10_000)));
        assert!(e.to_string().len() < 200);
    }

    #[test]
    fn each_kind_needs_its_own_switch() {
        let cmds = parse("chars:a; pause:1; mouse:move 1 1");
        let only_tool = Commands::enabling(["send_command"]);
        let err = check_enabled(&cmds, &only_tool).unwrap_err();
        assert_eq!(err.code, ErrorCode::CommandDisabled);
        assert!(
            err.detail.contains("`chars:`") && err.detail.contains("[send_command.chars]"),
            "{}",
            err.detail
        );
        let some = Commands::enabling(["send_command", "send_command.chars", "send_command.pause"]);
        let err = check_enabled(&cmds, &some).unwrap_err();
        assert!(err.detail.contains("`mouse:`"), "{}", err.detail);
        let all = Commands::enabling(["send_command.chars", "send_command.pause", "send_command.mouse"]);
        assert!(check_enabled(&cmds, &all).is_ok());
        assert_eq!(RawKind::Key.setting(), "send_command.key");
    }
}
