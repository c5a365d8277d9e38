//! Every catalogue tool has its words, and no secret an agent sends ever reaches them.

use proptest::prelude::*;
use serde_json::{Value, json};

use super::*;
use crate::catalog::TOOLS;

fn says(tool: &str, args: Value) -> String {
    describe(tool, args.as_object())
}

/// One call of every catalogue tool (some several times) and what the operator reads.
fn examples() -> Vec<(&'static str, Value, &'static str)> {
    vec![
        ("session-status", json!({}), "read the run status"),
        ("displays", json!({}), "listed the displays"),
        ("windows", json!({}), "listed windows"),
        ("windows", json!({"title": "Editor", "condition": "appears"}), "waited for Editor to appear"),
        ("capture", json!({}), "captured the screen"),
        ("capture", json!({"window": "Editor", "file": "shot.png"}), "captured Editor"),
        (
            "capture",
            json!({"region": {"x": 0, "y": 0, "width": 9, "height": 9}}),
            "captured a region of the screen",
        ),
        ("click", json!({"at": {"x": 640, "y": 400}}), "clicked at (640, 400)"),
        ("click", json!({"at": {"value": "Save"}, "window": "Editor"}), "clicked Save in Editor"),
        ("click", json!({"at": {"elementId": "e7"}}), "clicked an element"),
        ("click", json!({"at": {"x": 1, "y": 2}, "count": 2}), "double-clicked at (1, 2)"),
        (
            "click",
            json!({"at": {"x": 1, "y": 2}, "button": "right", "modifiers": ["ctrl", "shift"]}),
            "right-clicked at (1, 2) with Ctrl+Shift",
        ),
        ("drag", json!({"from": {"x": 1, "y": 2}, "to": {"value": "Trash"}}), "dragged from (1, 2) to Trash"),
        ("scroll", json!({"at": {"x": 1, "y": 2}, "direction": "down"}), "scrolled down 3"),
        (
            "scroll",
            json!({"at": {"x": 1, "y": 2}, "direction": "up", "notches": 5, "className": "XTerm"}),
            "scrolled up 5 in XTerm",
        ),
        ("mouse", json!({"action": "move", "at": {"x": 5, "y": 6}}), "moved the pointer to (5, 6)"),
        ("mouse", json!({"action": "down", "at": {"x": 5, "y": 6}}), "pressed the left button at (5, 6)"),
        ("mouse", json!({"action": "position"}), "read the pointer position"),
        ("wait", json!({"ms": 1500}), "waited 1.5 s"),
        ("wait", json!({"ms": 250}), "waited 250 ms"),
        ("type", json!({"text": "echo step 24\n"}), "typed 13 characters"),
        ("type", json!({"text": "é"}), "typed 1 character"),
        ("key", json!({"keys": "ctrl+s"}), "pressed Ctrl+S"),
        ("key", json!({"keys": "ctrl+a Delete"}), "pressed Ctrl+A, Delete"),
        ("key", json!({"keys": "h u shift+n t Return F5"}), "pressed 4 character keys, Enter, F5"),
        ("key", json!({"keys": "ctrl++ shift"}), "pressed Ctrl+Plus, Shift"),
        (
            "window",
            json!({"action": "resize", "width": 800, "height": 600, "window": "Editor"}),
            "resized Editor to 800×600",
        ),
        ("window", json!({"action": "foreground", "handle": 4194307}), "raised window 0x400003"),
        ("focus", json!({"window": "Editor"}), "focused Editor"),
        (
            "focus",
            json!({"window": "Editor", "clickAt": {"x": 3, "y": 4}}),
            "focused Editor and clicked at (3, 4)",
        ),
        ("launch", json!({"path": "xterm"}), "launched xterm"),
        (
            "launch",
            json!({"path": "/usr/bin/xterm", "args": ["-e", "top"]}),
            "launched xterm with 2 arguments",
        ),
        ("record", json!({"action": "start"}), "started recording the screen"),
        ("record", json!({"action": "stop"}), "stopped recording"),
        (
            "record",
            json!({"action": "oneshot", "durationMs": 3000, "window": "Editor"}),
            "recorded Editor for 3 s",
        ),
        (
            "send_command",
            json!({"command": "mouse:click 200 150; chars:hello; key:Return"}),
            "raw input: clicked at (200, 150), typed 5 characters, pressed Enter",
        ),
        (
            "send_command",
            json!({"command": "mouse:scroll 5 5 down 2; pause:40"}),
            "raw input: scrolled down 2, paused 40 ms",
        ),
        ("query", json!({"window": "Editor"}), "read the accessibility tree of Editor"),
        ("find", json!({"window": "Editor", "value": "Save"}), "looked for Save in Editor"),
        ("invoke", json!({"elementId": "e3", "value": "OK"}), "pressed OK"),
        (
            "invoke",
            json!({"window": "Login", "value": "Password", "action": "setText", "text": "hunter2"}),
            "set the text of Password in Login (7 characters)",
        ),
        (
            "invoke",
            json!({"elementId": "e3", "role": "slider", "action": "setValue", "number": 42.5}),
            "set the value of a slider",
        ),
        (
            "wait-for",
            json!({"window": "Editor", "value": "Save", "condition": "enabled"}),
            "waited for Save in Editor to be enabled",
        ),
        ("get-text", json!({"window": "Editor"}), "read the text of Editor"),
        (
            "get-text",
            json!({"region": {"x": 0, "y": 0, "width": 9, "height": 9}}),
            "read the text of a region of the screen",
        ),
        ("clipboard", json!({"action": "get"}), "read the clipboard"),
        (
            "clipboard",
            json!({"action": "set", "text": "s3cret", "selection": "primary"}),
            "set the primary selection",
        ),
        ("provision-session", json!({"commands": ["click"]}), "provisioned a session copy"),
        ("end-session", json!({"sessionId": "0123456789ab", "token": "tok"}), "ended a session copy"),
        (
            "request-command-access",
            json!({"commands": ["launch", "type"], "reason": "to test"}),
            "asked the operator for 2 commands",
        ),
    ]
}

#[test]
fn every_catalogue_tool_is_described_in_words() {
    let examples = examples();
    for tool in TOOLS {
        let args = Map::new();
        assert!(
            sentence(tool.name, &Args(&args)).is_some(),
            "`{}` has no words: add it to `sentence`",
            tool.name
        );
        assert!(examples.iter().any(|(t, _, _)| *t == tool.name), "`{}` has no example here", tool.name);
    }
    for (tool, args, want) in examples {
        assert_eq!(says(tool, args.clone()), want, "{tool} {args}");
    }
}

#[test]
fn a_name_outside_the_catalogue_is_shown_cleaned() {
    assert_eq!(says("no-such\u{202E}tool\n", json!({"text": "x"})), "called no-suchtool");
    assert_eq!(describe("type", None), "typed 0 characters");
}

#[test]
fn agent_given_names_are_cleaned_and_cut() {
    let said = says("click", json!({"at": {"value": "Save\u{202E}\u{200B}"}, "window": "A\nB"}));
    assert_eq!(said, "clicked Save in A B");
    let said = says("focus", json!({"window": "W".repeat(200)}));
    assert_eq!(said, format!("focused {}…", "W".repeat(MAX_NAME_CHARS)));
    let long = says("send_command", json!({"command": "key:ctrl+a; ".repeat(40) + "key:Delete"}));
    assert_eq!(long.chars().count(), MAX_CHARS + 1, "{long}");
    assert!(long.ends_with('…'), "{long}");
}

const MARK: &str = "QZX7";

/// Every field of these tools that carries what an agent sends as data (not a name it
/// targets), each holding `secret`.
fn secret_calls(secret: &str) -> Vec<(&'static str, Value)> {
    vec![
        ("type", json!({"text": secret})),
        ("clipboard", json!({"action": "set", "text": secret, "selection": "clipboard"})),
        ("clipboard", json!({"action": "get", "text": secret})),
        (
            "launch",
            json!({"path": format!("/home/{secret}/bin/xterm"), "args": [secret, format!("--token={secret}")], "workingDirectory": secret, "timeoutMs": 10}),
        ),
        ("launch", json!({"path": format!("C:\\{secret}\\app.exe")})),
        ("invoke", json!({"elementId": "e1", "action": "setText", "text": secret})),
        ("invoke", json!({"elementId": "e1", "action": "appendText", "text": secret})),
        ("send_command", json!({"command": format!("chars:{secret}; key:Return")})),
        ("capture", json!({"file": secret})),
        ("record", json!({"action": "start", "file": secret})),
        ("end-session", json!({"sessionId": secret, "token": secret})),
        ("provision-session", json!({"commands": [secret]})),
        ("request-command-access", json!({"commands": [secret], "reason": secret})),
        ("click", json!({"at": {"x": 1, "y": 2}, "captureId": secret})),
    ]
}

#[test]
fn what_an_agent_sends_as_data_never_reaches_the_words() {
    for (tool, args) in secret_calls(MARK) {
        let said = says(tool, args.clone());
        assert!(!said.contains(MARK), "{tool} {args} said {said:?}");
    }
}

#[test]
fn keys_that_type_characters_are_counted_not_spelled() {
    assert_eq!(says("key", json!({"keys": "h u n t e r 2"})), "pressed 7 character keys");
    assert_eq!(says("key", json!({"keys": "shift+p minus Space a"})), "pressed 4 character keys");
    assert_eq!(
        says("send_command", json!({"command": "key:p; key:w"})),
        "raw input: pressed 1 character key, pressed 1 character key"
    );
    assert_eq!(says("key", json!({"keys": "Tab"})), "pressed Tab");
}

proptest! {
    /// Any text in a data field, typed however, stays out of the words; the words are one
    /// short line.
    #[test]
    fn no_data_field_leaks(tail in "[ -~]{0,40}", unicode in "\\PC{0,20}") {
        let secret = format!("{MARK}{tail}{unicode}");
        for (tool, args) in secret_calls(&secret) {
            let said = says(tool, args.clone());
            prop_assert!(!said.contains(MARK), "{} {} said {:?}", tool, args, said);
            prop_assert!(said.chars().count() <= MAX_CHARS + 1);
            prop_assert!(!said.chars().any(char::is_control));
        }
    }

    /// Key specs of character keys (any letters, digits, shift) are counted whatever they spell.
    #[test]
    fn character_keys_never_spell(word in "[a-z0-9]{1,32}", shift in any::<bool>()) {
        let spec: Vec<String> =
            word.chars().map(|c| if shift { format!("shift+{c}") } else { c.to_string() }).collect();
        let said = says("key", json!({"keys": spec.join(" ")}));
        prop_assert_eq!(said, format!("pressed {}", count(word.len(), "character key")));
    }
}
