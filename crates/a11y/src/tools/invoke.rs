//! `invoke`: one operation on one element through the accessibility API, as actuation.
//!
//! Everything the agent sent is checked before anything acts; the element is described again
//! under the input lock right before the operation (gone: `stale-element`; disabled:
//! `no-target`; no such operation: `bad-arguments` naming what it does offer).

use mcec_rules::{ErrorCode, StopFlag, ToolError};
use serde::Serialize;

use super::A11yTools;
use crate::model::{Element, Operation, RawElement};
use crate::requests::{InvokeAction, InvokeRequest};
use crate::seam::Want;

/// The longest text `setText` and `appendText` accept, as `type` does.
pub const MAX_TEXT_CHARS: usize = 10_000;

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct InvokeResult {
    /// What was done, as the platform calls it (`click`, `toggle`, `focus`, `setText` …).
    pub done: String,
    /// The element after the operation.
    pub element: Element,
}

/// What an agent asked for, checked and with its argument, before an element is looked at.
#[derive(Debug, Clone, PartialEq)]
enum Wanted {
    Press,
    Toggle,
    Select,
    Expand,
    Collapse,
    Focus,
    SetValue(f64),
    SetText(String),
    AppendText(String),
    Named(String),
}

fn check_text(text: Option<&String>) -> Result<String, ToolError> {
    let Some(text) = text else {
        return Err(ToolError::bad_argument("text", "is required for setText and appendText"));
    };
    if text.chars().count() > MAX_TEXT_CHARS {
        return Err(ToolError::bad_argument("text", format!("is longer than {MAX_TEXT_CHARS} characters")));
    }
    if let Some((i, c)) = text.chars().enumerate().find(|(_, c)| c.is_control() && *c != '\n' && *c != '\t') {
        return Err(ToolError::bad_argument(
            "text",
            format!("holds control character U+{:04X} at position {i}", u32::from(c)),
        ));
    }
    Ok(text.clone())
}

fn wanted(req: &InvokeRequest) -> Result<Wanted, ToolError> {
    let action = req.action.clone().unwrap_or(InvokeAction::Press);
    let uses_text = matches!(action, InvokeAction::SetText | InvokeAction::AppendText);
    if req.text.is_some() && !uses_text {
        return Err(ToolError::bad_argument("text", "is only for setText and appendText"));
    }
    if req.number.is_some() && action != InvokeAction::SetValue {
        return Err(ToolError::bad_argument("number", "is only for setValue"));
    }
    if req.name.is_some() && action != InvokeAction::Named {
        return Err(ToolError::bad_argument("name", "is only for the `named` action"));
    }
    Ok(match action {
        InvokeAction::Press => Wanted::Press,
        InvokeAction::Toggle => Wanted::Toggle,
        InvokeAction::Select => Wanted::Select,
        InvokeAction::Expand => Wanted::Expand,
        InvokeAction::Collapse => Wanted::Collapse,
        InvokeAction::Focus => Wanted::Focus,
        InvokeAction::SetValue => match req.number {
            Some(v) if v.is_finite() => Wanted::SetValue(v),
            Some(_) => return Err(ToolError::bad_argument("number", "must be a finite number")),
            None => return Err(ToolError::bad_argument("number", "is required for setValue")),
        },
        InvokeAction::SetText => Wanted::SetText(check_text(req.text.as_ref())?),
        InvokeAction::AppendText => Wanted::AppendText(check_text(req.text.as_ref())?),
        InvokeAction::Named => match req.name.as_deref().map(str::trim) {
            Some(n) if !n.is_empty() => Wanted::Named(n.to_string()),
            _ => return Err(ToolError::bad_argument("name", "is required for the `named` action")),
        },
    })
}

/// The first offered action among `names` (case-insensitive).
fn offered(e: &RawElement, names: &[&str]) -> Option<Operation> {
    names.iter().find_map(|want| {
        e.actions
            .iter()
            .position(|a| a.eq_ignore_ascii_case(want))
            .map(|index| Operation::Action { index, name: e.actions[index].clone() })
    })
}

const TOGGLES: &[&str] =
    &["check-box", "toggle-button", "radio-button", "check-menu-item", "radio-menu-item"];

/// The operation that does `w` on `e`, or `bad-arguments` saying what `e` does offer.
fn operation(w: &Wanted, e: &RawElement) -> Result<Operation, ToolError> {
    let op = match w {
        Wanted::Press => offered(e, &["click", "press", "activate", "jump", "open"])
            .or_else(|| e.actions.first().map(|name| Operation::Action { index: 0, name: name.clone() })),
        Wanted::Toggle if TOGGLES.contains(&e.role) || e.has("checkable") => {
            offered(e, &["toggle", "click", "press", "activate", "check", "uncheck"])
        }
        Wanted::Toggle => None,
        Wanted::Select if e.has("selectable") => Some(Operation::Select),
        Wanted::Select => None,
        Wanted::Expand => {
            offered(e, &["expand", "expand or contract", "activate"]).filter(|_| e.has("expandable"))
        }
        Wanted::Collapse => {
            offered(e, &["collapse", "expand or contract", "activate"]).filter(|_| e.has("expandable"))
        }
        Wanted::Focus if e.can_focus && e.has("focusable") => Some(Operation::Focus),
        Wanted::Focus => None,
        Wanted::SetValue(v) if e.has_value => Some(Operation::SetValue(*v)),
        Wanted::SetValue(_) => None,
        Wanted::SetText(t) if e.editable_text && e.has("editable") => Some(Operation::SetText(t.clone())),
        Wanted::AppendText(t) if e.editable_text && e.has("editable") => {
            Some(Operation::AppendText(t.clone()))
        }
        Wanted::SetText(_) | Wanted::AppendText(_) => None,
        Wanted::Named(n) => offered(e, &[n.as_str()]),
    };
    op.ok_or_else(|| {
        let mut can =
            vec!["press".to_string()].into_iter().filter(|_| !e.actions.is_empty()).collect::<Vec<_>>();
        if TOGGLES.contains(&e.role) || e.has("checkable") {
            can.push("toggle".into());
        }
        if e.has("selectable") {
            can.push("select".into());
        }
        if e.has("expandable") {
            can.extend(["expand".into(), "collapse".into()]);
        }
        if e.can_focus && e.has("focusable") {
            can.push("focus".into());
        }
        if e.has_value {
            can.push("setValue".into());
        }
        if e.editable_text && e.has("editable") {
            can.extend(["setText".into(), "appendText".into()]);
        }
        let named = if e.actions.is_empty() { "none".to_string() } else { e.actions.join(", ") };
        let can = if can.is_empty() { "nothing".to_string() } else { can.join(", ") };
        ToolError::bad_argument(
            "action",
            format!("the {} {:?} cannot do that; it offers {can} (named actions: {named})", e.role, e.name),
        )
    })
}

fn done_name(op: &Operation) -> String {
    match op {
        Operation::Action { name, .. } => name.clone(),
        Operation::Focus => "focus".into(),
        Operation::SetValue(_) => "setValue".into(),
        Operation::SetText(_) => "setText".into(),
        Operation::AppendText(_) => "appendText".into(),
        Operation::Select => "select".into(),
    }
}

impl A11yTools {
    pub fn invoke(&self, req: &InvokeRequest, stop: &StopFlag) -> Result<InvokeResult, ToolError> {
        let wanted = wanted(req)?;
        let node = self.resolve(&req.selector(), &req.target(), stop)?;
        let done = self.desktop.actuate(stop, |_| {
            let e = self.backend.describe(&node, Want::DETAILS)?;
            if e.has("defunct") || !self.backend.attached(&node)? {
                return Err(ToolError::new(ErrorCode::StaleElement, "The element is gone (defunct); find it again."));
            }
            if !e.is_enabled() {
                return Err(ToolError::new(
                    ErrorCode::NoTarget,
                    format!("The {} {:?} is not enabled; nothing was done. `wait-for` with `condition: enabled` waits for it.", e.role, e.name),
                ));
            }
            let op = operation(&wanted, &e)?;
            if stop.is_set() {
                return Err(ToolError::emergency_stopped());
            }
            self.backend.perform(&node, &op)?;
            Ok(done_name(&op))
        })?;
        let after = self.backend.describe(&node, Want::FULL)?;
        Ok(InvokeResult { done, element: self.element(&node, after) })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn req(v: serde_json::Value) -> InvokeRequest {
        serde_json::from_value(v).unwrap()
    }

    #[test]
    fn arguments_are_checked_before_anything() {
        let long = "x".repeat(MAX_TEXT_CHARS + 1);
        for (v, field) in [
            (serde_json::json!({"elementId": "e1", "action": "setText"}), "`text`"),
            (serde_json::json!({"elementId": "e1", "action": "setText", "text": long}), "`text`"),
            (serde_json::json!({"elementId": "e1", "action": "setText", "text": "a\u{1b}b"}), "`text`"),
            (serde_json::json!({"elementId": "e1", "text": "hi"}), "`text`"),
            (serde_json::json!({"elementId": "e1", "action": "setValue"}), "`number`"),
            (serde_json::json!({"elementId": "e1", "action": "named"}), "`name`"),
        ] {
            let e = wanted(&req(v)).unwrap_err();
            assert!(e.detail.starts_with(field), "{}", e.detail);
        }
        assert_eq!(wanted(&req(serde_json::json!({"elementId": "e1"}))).unwrap(), Wanted::Press);
    }

    #[test]
    fn an_operation_the_element_lacks_names_what_it_offers() {
        let button = RawElement {
            role: "push-button",
            name: "OK".into(),
            actions: vec!["click".into()],
            ..RawElement::default()
        };
        assert_eq!(
            operation(&Wanted::Press, &button).unwrap(),
            Operation::Action { index: 0, name: "click".into() }
        );
        let e = operation(&Wanted::SetText("x".into()), &button).unwrap_err();
        assert!(
            e.detail.contains("offers press") && e.detail.contains("named actions: click"),
            "{}",
            e.detail
        );
        let e = operation(&Wanted::Named("frob".into()), &button).unwrap_err();
        assert_eq!(e.code, ErrorCode::BadArguments);
        let check = RawElement { role: "check-box", actions: vec!["click".into()], ..RawElement::default() };
        assert!(matches!(operation(&Wanted::Toggle, &check), Ok(Operation::Action { index: 0, .. })));
        assert!(operation(&Wanted::Toggle, &button).is_err());
    }
}
