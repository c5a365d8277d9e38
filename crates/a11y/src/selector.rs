//! The element selector `{by, value}` with its `role` and `states` filters: checked once
//! (empty values, unknown roles and states are `bad-arguments`), then matched against
//! described elements. Pure.
//!
//! `name` and `automationid` match the whole value (case-insensitive for names, exact for
//! ids); `role` matches a role name or alias; `text` matches a case-insensitive substring of
//! the element's text (its Text interface, or its name when it has none).

use mcec_desktop::requests::ElementTarget;
use mcec_rules::ToolError;

use crate::model::{RawElement, canonical_role, canonical_state};
use crate::seam::{Filter, Key};

pub use mcec_desktop::requests::By;

/// A checked selector.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Selector {
    pub by: By,
    value: String,
    role: Option<&'static str>,
    states: Vec<&'static str>,
}

/// Longest selector value accepted.
const MAX_VALUE: usize = 1_000;

impl Selector {
    /// Check the parts an agent sent; errors name the field.
    pub fn new(
        by: Option<By>,
        value: &str,
        role: Option<&str>,
        states: &[String],
    ) -> Result<Selector, ToolError> {
        let by = by.unwrap_or_default();
        if value.trim().is_empty() {
            return Err(ToolError::bad_argument("value", "must not be empty"));
        }
        if value.chars().count() > MAX_VALUE {
            return Err(ToolError::bad_argument("value", format!("is longer than {MAX_VALUE} characters")));
        }
        if let Some(c) = value.chars().find(|c| c.is_control()) {
            return Err(ToolError::bad_argument(
                "value",
                format!("holds control character U+{:04X}", u32::from(c)),
            ));
        }
        let value = if by == By::Role {
            canonical_role(value)
                .ok_or_else(|| ToolError::bad_argument("value", format!("{value:?} is not a role name")))?
                .to_string()
        } else {
            value.to_string()
        };
        let role = role
            .map(|r| {
                canonical_role(r)
                    .ok_or_else(|| ToolError::bad_argument("role", format!("{r:?} is not a role name")))
            })
            .transpose()?;
        let states = states
            .iter()
            .map(|s| {
                canonical_state(s)
                    .ok_or_else(|| ToolError::bad_argument("states", format!("{s:?} is not a state name")))
            })
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Selector { by, value, role, states })
    }

    /// The selector of `target`, whose `value` is required (an `elementId` is refused: the
    /// caller takes only a selector).
    pub fn of(target: &ElementTarget) -> Result<Selector, ToolError> {
        if target.element_id.is_some() {
            return Err(ToolError::bad_argument(
                "elementId",
                "is not taken here; give `value` with a window",
            ));
        }
        let Some(value) = &target.value else {
            return Err(ToolError::bad_argument("value", "is required"));
        };
        Selector::new(target.by, value, target.role.as_deref(), &target.states)
    }

    /// Whether matching needs the element's text.
    pub fn needs_text(&self) -> bool {
        self.by == By::Text
    }

    /// Whether matching needs the element's role.
    pub fn needs_role(&self) -> bool {
        self.by == By::Role || self.role.is_some()
    }

    /// Whether matching needs the element's states.
    pub fn needs_states(&self) -> bool {
        !self.states.is_empty()
    }

    /// What an application can filter for this selector by itself (role, states) and the one
    /// property left to compare; `None` when matching needs more (text), or when the role
    /// asked for twice differs (then nothing can match, which the walk answers).
    pub fn filter(&self) -> Option<Filter> {
        let (role, key) = match self.by {
            By::Name => (self.role, Key::Name),
            By::Automationid => (self.role, Key::AutomationId),
            By::Role if self.role.is_none_or(|r| r == self.value) => {
                (canonical_role(&self.value), Key::Nothing)
            }
            By::Role | By::Text => return None,
        };
        Some(Filter { role, states: self.states.clone(), key })
    }

    /// An element as far as [`Selector::filter`] describes it: what the application
    /// matched (role, states) and the key property it answered.
    pub fn filtered(&self, filter: &Filter, key: String) -> RawElement {
        let mut e = RawElement {
            role: filter.role.unwrap_or("unknown"),
            states: filter.states.clone(),
            ..RawElement::default()
        };
        match filter.key {
            Key::Name => e.name = key,
            Key::AutomationId => e.automation_id = key,
            Key::Nothing => {}
        }
        e
    }

    pub fn matches(&self, e: &RawElement) -> bool {
        let hit = match self.by {
            By::Name => e.name.trim().to_lowercase() == self.value.trim().to_lowercase(),
            By::Role => e.role == self.value,
            By::Automationid => !e.automation_id.is_empty() && e.automation_id == self.value,
            By::Text => {
                let needle = self.value.to_lowercase();
                e.text.as_deref().unwrap_or(&e.name).to_lowercase().contains(&needle)
            }
        };
        hit && self.role.is_none_or(|r| e.role == r) && self.states.iter().all(|s| e.has(s))
    }

    /// The selector in words, for errors.
    pub fn describe(&self) -> String {
        let by = match self.by {
            By::Name => "name",
            By::Role => "role",
            By::Automationid => "automationid",
            By::Text => "text",
        };
        let mut s = format!("{by} {:?}", self.value);
        if let Some(r) = self.role {
            s.push_str(&format!(", role {r}"));
        }
        if !self.states.is_empty() {
            s.push_str(&format!(", states {}", self.states.join("+")));
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use mcec_rules::ErrorCode;

    fn button(name: &str, states: &[&'static str]) -> RawElement {
        RawElement {
            role: "push-button",
            name: name.into(),
            states: states.to_vec(),
            ..RawElement::default()
        }
    }

    #[test]
    fn names_match_whole_and_filters_apply() {
        let s = Selector::new(None, "save", Some("button"), &["enabled".into()]).unwrap();
        assert!(s.matches(&button("Save", &["enabled"])));
        assert!(!s.matches(&button("Save as", &["enabled"])));
        assert!(!s.matches(&button("Save", &[])));
        let label = RawElement {
            role: "label",
            name: "Save".into(),
            states: vec!["enabled"],
            ..RawElement::default()
        };
        assert!(!s.matches(&label));
    }

    #[test]
    fn text_is_a_substring_and_role_uses_aliases() {
        let t = Selector::new(Some(By::Text), "quick brown", None, &[]).unwrap();
        let label = RawElement { text: Some("The Quick Brown fox".into()), ..RawElement::default() };
        assert!(t.matches(&label));
        let r = Selector::new(Some(By::Role), "checkbox", None, &[]).unwrap();
        assert!(r.matches(&RawElement { role: "check-box", ..RawElement::default() }));
    }

    #[test]
    fn the_application_filters_role_and_states_and_text_is_walked() {
        let s = Selector::new(None, "Save", Some("button"), &["enabled".into()]).unwrap();
        let f = s.filter().unwrap();
        assert_eq!(f, Filter { role: Some("push-button"), states: vec!["enabled"], key: Key::Name });
        assert!(s.matches(&s.filtered(&f, "save".into())));
        assert!(!s.matches(&s.filtered(&f, "Save as".into())));
        let r = Selector::new(Some(By::Role), "checkbox", None, &[]).unwrap();
        assert_eq!(r.filter().unwrap().key, Key::Nothing);
        assert!(r.matches(&r.filtered(&r.filter().unwrap(), String::new())));
        let id = Selector::new(Some(By::Automationid), "save-btn", None, &[]).unwrap();
        assert!(id.matches(&id.filtered(&id.filter().unwrap(), "save-btn".into())));
        assert!(Selector::new(Some(By::Text), "x", None, &[]).unwrap().filter().is_none());
        assert!(Selector::new(Some(By::Role), "label", Some("button"), &[]).unwrap().filter().is_none());
    }

    #[test]
    fn bad_parts_are_bad_arguments_naming_the_field() {
        for (by, value, role, states, field) in [
            (None, "", None, vec![], "`value`"),
            (None, "  ", None, vec![], "`value`"),
            (None, "a\u{7}b", None, vec![], "`value`"),
            (Some(By::Role), "frobnicator", None, vec![], "`value`"),
            (None, "OK", Some("widget"), vec![], "`role`"),
            (None, "OK", None, vec!["shiny".to_string()], "`states`"),
        ] {
            let e = Selector::new(by, value, role, &states).unwrap_err();
            assert_eq!(e.code, ErrorCode::BadArguments);
            assert!(e.detail.starts_with(field), "{}", e.detail);
        }
    }
}
