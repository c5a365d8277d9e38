//! Window selection: which listed windows a selector or a `windows` filter matches, and the
//! contract's rule that a selector must name exactly one window.

use mcec_rules::{ErrorCode, ToolError};

use crate::requests::{WindowSelector, WindowsRequest};
use crate::types::WindowInfo;

/// Candidates named in an `ambiguous-selector` detail.
const CANDIDATES_SHOWN: usize = 4;

fn eq_ci(a: &str, b: &str) -> bool {
    a.to_lowercase() == b.to_lowercase()
}

fn contains_ci(haystack: &str, needle: &str) -> bool {
    haystack.to_lowercase().contains(&needle.to_lowercase())
}

fn class_matches(w: &WindowInfo, class: &str) -> bool {
    eq_ci(&w.class_name, class) || eq_ci(&w.instance, class)
}

fn process_matches(w: &WindowInfo, process: &str) -> bool {
    w.process.as_deref().is_some_and(|p| eq_ci(p, process))
}

/// True when `w` satisfies every given selector field.
pub fn matches(w: &WindowInfo, sel: &WindowSelector) -> bool {
    sel.window.as_deref().is_none_or(|t| contains_ci(&w.title, t))
        && sel.process.as_deref().is_none_or(|p| process_matches(w, p))
        && sel.class_name.as_deref().is_none_or(|c| class_matches(w, c))
        && sel.pid.is_none_or(|pid| w.pid == Some(pid))
        && sel.handle.is_none_or(|h| w.id == h)
        && sel.foreground.is_none_or(|f| w.foreground == f)
}

/// The one window `sel` names among `windows`.
pub fn resolve<'a>(windows: &'a [WindowInfo], sel: &WindowSelector) -> Result<&'a WindowInfo, ToolError> {
    if sel.is_empty() {
        return Err(ToolError::new(
            ErrorCode::WindowNotFound,
            "No window selector given: name the target with `window` (title text), `process`, \
             `className`, `pid`, `handle` or `foreground`.",
        ));
    }
    let found: Vec<&WindowInfo> = windows.iter().filter(|w| matches(w, sel)).collect();
    match found.as_slice() {
        [one] => Ok(one),
        [] => Err(ToolError::new(
            ErrorCode::WindowNotFound,
            format!("No window matches {}. Call `windows` to see what is open.", describe(sel)),
        )),
        many => {
            let shown: Vec<String> = many
                .iter()
                .take(CANDIDATES_SHOWN)
                .map(|w| format!("{} \"{}\" ({})", w.id, w.title, w.class_name))
                .collect();
            let more = many.len().saturating_sub(CANDIDATES_SHOWN);
            let tail = if more > 0 { format!(" and {more} more") } else { String::new() };
            Err(ToolError::new(
                ErrorCode::AmbiguousSelector,
                format!(
                    "{} windows match {}: {}{tail}. Narrow the selector, e.g. with `handle`.",
                    many.len(),
                    describe(sel),
                    shown.join(", ")
                ),
            ))
        }
    }
}

/// The `windows` tool's filters (all given ones must hold).
pub fn filter(windows: Vec<WindowInfo>, req: &WindowsRequest) -> Vec<WindowInfo> {
    windows
        .into_iter()
        .filter(|w| {
            req.title.as_deref().is_none_or(|t| contains_ci(&w.title, t))
                && req.class_name.as_deref().is_none_or(|c| class_matches(w, c))
                && req.process.as_deref().is_none_or(|p| process_matches(w, p))
                && req.pid.is_none_or(|pid| w.pid == Some(pid))
        })
        .collect()
}

/// The selector in words, for error details.
pub fn describe(sel: &WindowSelector) -> String {
    let mut parts = Vec::new();
    if let Some(t) = &sel.window {
        parts.push(format!("window \"{t}\""));
    }
    if let Some(p) = &sel.process {
        parts.push(format!("process \"{p}\""));
    }
    if let Some(c) = &sel.class_name {
        parts.push(format!("className \"{c}\""));
    }
    if let Some(p) = sel.pid {
        parts.push(format!("pid {p}"));
    }
    if let Some(h) = sel.handle {
        parts.push(format!("handle {h}"));
    }
    if let Some(f) = sel.foreground {
        parts.push(format!("foreground {f}"));
    }
    parts.join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::Rect;

    fn win(id: u64, title: &str, class: &str, pid: u32, fg: bool) -> WindowInfo {
        WindowInfo {
            id,
            title: title.into(),
            class_name: class.into(),
            instance: class.to_lowercase(),
            pid: Some(pid),
            process: Some(class.to_lowercase()),
            bounds: Some(Rect::new(0, 0, 10, 10)),
            bounds_unavailable: None,
            foreground: fg,
            minimized: false,
        }
    }

    fn list() -> Vec<WindowInfo> {
        vec![
            win(1, "Inbox - Mail", "Thunderbird", 10, false),
            win(2, "bash: ~/src", "XTerm", 20, true),
            win(3, "bash: /tmp", "XTerm", 21, false),
        ]
    }

    #[test]
    fn exactly_one_or_an_error() {
        let l = list();
        let by = |sel: WindowSelector| resolve(&l, &sel).map(|w| w.id);
        assert_eq!(by(WindowSelector { window: Some("INBOX".into()), ..Default::default() }), Ok(1));
        assert_eq!(by(WindowSelector { foreground: Some(true), ..Default::default() }), Ok(2));
        assert_eq!(by(WindowSelector { pid: Some(21), ..Default::default() }), Ok(3));
        assert_eq!(by(WindowSelector { handle: Some(3), ..Default::default() }), Ok(3));
        assert_eq!(
            by(WindowSelector {
                class_name: Some("xterm".into()),
                foreground: Some(false),
                ..Default::default()
            }),
            Ok(3)
        );

        let amb = by(WindowSelector { class_name: Some("xterm".into()), ..Default::default() }).unwrap_err();
        assert_eq!(amb.code, ErrorCode::AmbiguousSelector);
        assert!(amb.detail.contains("2 windows") && amb.detail.contains("bash: /tmp"), "{}", amb.detail);

        let none = by(WindowSelector { process: Some("firefox".into()), ..Default::default() }).unwrap_err();
        assert_eq!(none.code, ErrorCode::WindowNotFound);
        assert!(none.detail.contains("firefox"));

        let empty = by(WindowSelector::default()).unwrap_err();
        assert_eq!(empty.code, ErrorCode::WindowNotFound);
    }

    #[test]
    fn windows_filters() {
        let req = WindowsRequest { class_name: Some("XTERM".into()), ..Default::default() };
        assert_eq!(filter(list(), &req).len(), 2);
        let req = WindowsRequest { title: Some("mail".into()), pid: Some(10), ..Default::default() };
        assert_eq!(filter(list(), &req).len(), 1);
        assert_eq!(filter(list(), &WindowsRequest::default()).len(), 3);
    }
}
