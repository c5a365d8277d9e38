//! MSAA's vocabulary in mcec's: `IAccessible` role numbers and state bits mapped onto the
//! AT-SPI2 role and state names of [`crate::model`], so a selector means the same on
//! Windows as on Linux. Pure, so it is tested on every platform. The table is the one
//! `docs/contract.md` documents.

/// The AT-SPI2 role for MSAA role number `role` (`ROLE_SYSTEM_*`); `unknown` for the rest.
/// `ROLE_SYSTEM_CLIENT` (10) is a window's client area: `panel` here, the caller refines it
/// for a top-level window and a standard control ([`class_role`]).
pub fn role(role: i32) -> &'static str {
    match role {
        1 => "title-bar",
        2 => "menu-bar",
        3 => "scroll-bar",
        4 | 59 => "filler",
        8 => "alert",
        9 => "window",
        10 | 16 | 38 => "panel",
        11 => "popup-menu",
        12 => "menu-item",
        13 | 31 => "tool-tip",
        14 => "application",
        15 => "document-frame",
        17 => "chart",
        18 => "dialog",
        20 => "grouping",
        21 => "separator",
        22 => "tool-bar",
        23 => "status-bar",
        24 => "table",
        25 => "column-header",
        26 => "row-header",
        28 => "table-row",
        29 => "table-cell",
        30 => "link",
        33 => "list",
        34 => "list-item",
        35 => "tree",
        36 => "tree-item",
        37 => "page-tab",
        40 | 53 => "image",
        41 | 61 => "label",
        42 | 50 | 63 => "text",
        43 => "push-button",
        44 => "check-box",
        45 => "radio-button",
        46 | 47 => "combo-box",
        48 => "progress-bar",
        49 => "dial",
        51 => "slider",
        52 => "spin-button",
        54 => "animation",
        55 => "math",
        56..=58 | 62 => "push-button-menu",
        60 => "page-tab-list",
        64 => "toggle-button",
        _ => "unknown",
    }
}

/// `ROLE_SYSTEM_CLIENT`: the client area of a window, which says nothing of what it is.
pub const ROLE_CLIENT: i32 = 10;

/// What a standard Win32 control is, from its window class and style: what Windows' own
/// MSAA proxies (and UI Automation's Win32 proxies) answer for these classes, and what
/// Wine's `oleacc` leaves as a bare "client". `None`: not a class mcec knows.
pub fn class_role(class: &str, style: u32) -> Option<&'static str> {
    let class = class.to_ascii_lowercase();
    Some(match class.as_str() {
        "button" => match style & 0xF {
            // BS_CHECKBOX, BS_AUTOCHECKBOX, BS_3STATE, BS_AUTO3STATE
            2 | 3 | 5 | 6 => "check-box",
            // BS_RADIOBUTTON, BS_AUTORADIOBUTTON
            4 | 9 => "radio-button",
            // BS_GROUPBOX
            7 => "grouping",
            _ => "push-button",
        },
        "edit" | "richedit20w" | "richedit50w" => {
            // ES_PASSWORD
            if style & 0x20 != 0 { "password-text" } else { "text" }
        }
        "static" => "label",
        "listbox" | "syslistview32" => "list",
        "combobox" | "comboboxex32" => "combo-box",
        "systreeview32" => "tree",
        "systabcontrol32" => "page-tab-list",
        "msctls_progress32" => "progress-bar",
        "msctls_trackbar32" => "slider",
        "msctls_updown32" => "spin-button",
        "toolbarwindow32" => "tool-bar",
        "msctls_statusbar32" => "status-bar",
        "scrollbar" => "scroll-bar",
        "#32770" => "dialog",
        _ => return None,
    })
}

/// The AT-SPI2 state names for MSAA state bits (`STATE_SYSTEM_*`) of an element with `role`.
/// MSAA says what an element is not (unavailable, invisible, offscreen, read-only); AT-SPI2
/// says what it is, so the absent bits become `enabled`, `visible`, `showing`, `editable`.
pub fn states(bits: u32, role: &str) -> Vec<&'static str> {
    const UNAVAILABLE: u32 = 0x1;
    const SELECTED: u32 = 0x2;
    const FOCUSED: u32 = 0x4;
    const PRESSED: u32 = 0x8;
    const CHECKED: u32 = 0x10;
    const MIXED: u32 = 0x20;
    const READONLY: u32 = 0x40;
    const DEFAULT: u32 = 0x100;
    const EXPANDED: u32 = 0x200;
    const COLLAPSED: u32 = 0x400;
    const BUSY: u32 = 0x800;
    const ANIMATED: u32 = 0x4000;
    const INVISIBLE: u32 = 0x8000;
    const OFFSCREEN: u32 = 0x1_0000;
    const SIZEABLE: u32 = 0x2_0000;
    const FOCUSABLE: u32 = 0x10_0000;
    const SELECTABLE: u32 = 0x20_0000;
    const TRAVERSED: u32 = 0x80_0000;
    const MULTISELECTABLE: u32 = 0x100_0000;
    const HASPOPUP: u32 = 0x4000_0000;
    let on = |bit: u32| bits & bit != 0;
    let mut out = Vec::new();
    if !on(UNAVAILABLE) {
        out.extend(["enabled", "sensitive"]);
    }
    if !on(INVISIBLE) {
        out.push("visible");
        if !on(OFFSCREEN) {
            out.push("showing");
        }
    }
    let pairs = [
        (SELECTED, "selected"),
        (FOCUSED, "focused"),
        (PRESSED, "pressed"),
        (CHECKED, "checked"),
        (MIXED, "indeterminate"),
        (READONLY, "read-only"),
        (DEFAULT, "is-default"),
        (EXPANDED, "expanded"),
        (COLLAPSED, "collapsed"),
        (BUSY, "busy"),
        (ANIMATED, "animated"),
        (SIZEABLE, "resizable"),
        (FOCUSABLE, "focusable"),
        (SELECTABLE, "selectable"),
        (TRAVERSED, "visited"),
        (MULTISELECTABLE, "multiselectable"),
        (HASPOPUP, "has-popup"),
    ];
    out.extend(pairs.iter().filter(|(bit, _)| on(*bit)).map(|(_, name)| *name));
    if on(EXPANDED) || on(COLLAPSED) {
        out.push("expandable");
    }
    if matches!(role, "check-box" | "toggle-button" | "check-menu-item" | "radio-button") {
        out.push("checkable");
    }
    if matches!(role, "text" | "password-text") && !on(READONLY) && !on(UNAVAILABLE) {
        out.push("editable");
    }
    out
}

/// An accessible name as the agent types it: the mnemonic marker `&` removed (`&&` is a
/// literal `&`), as Windows' own proxies strip it.
pub fn plain_name(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    let mut chars = name.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '&' {
            if chars.peek() == Some(&'&') {
                chars.next();
                out.push('&');
            }
            continue;
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{ROLES, STATES};

    #[test]
    fn every_mapped_name_is_in_the_vocabulary() {
        for n in 0..80 {
            assert!(ROLES.contains(&role(n)), "role {n} maps to {}", role(n));
        }
        for (class, style) in [("Button", 0), ("Button", 3), ("Button", 9), ("Button", 7), ("Edit", 0x20)] {
            assert!(ROLES.contains(&class_role(class, style).unwrap()));
        }
        for s in states(u32::MAX, "text").into_iter().chain(states(0, "check-box")) {
            assert!(STATES.contains(&s), "{s}");
        }
    }

    #[test]
    fn standard_controls_map_to_the_atspi_roles() {
        assert_eq!(role(43), "push-button");
        assert_eq!(role(44), "check-box");
        assert_eq!(role(42), "text");
        assert_eq!(role(41), "label");
        assert_eq!(class_role("Button", 1), Some("push-button"));
        assert_eq!(class_role("BUTTON", 3), Some("check-box"));
        assert_eq!(class_role("Edit", 0), Some("text"));
        assert_eq!(class_role("Edit", 0x20), Some("password-text"));
        assert_eq!(class_role("McecWinTest", 0), None);
    }

    #[test]
    fn absent_bits_become_positive_states() {
        let s = states(0x10_0004, "push-button");
        assert!(s.contains(&"enabled") && s.contains(&"showing") && s.contains(&"focused"));
        let s = states(0x1 | 0x8000, "text");
        assert!(!s.contains(&"enabled") && !s.contains(&"visible") && !s.contains(&"editable"));
        assert!(states(0, "text").contains(&"editable"));
        assert!(!states(0x40, "text").contains(&"editable"));
        assert!(states(0x10, "check-box").contains(&"checked"));
    }

    #[test]
    fn mnemonics_are_stripped() {
        assert_eq!(plain_name("&OK"), "OK");
        assert_eq!(plain_name("Save && &Quit"), "Save & Quit");
        assert_eq!(plain_name("plain"), "plain");
    }
}
