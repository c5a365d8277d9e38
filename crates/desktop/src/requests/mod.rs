//! Typed arguments of every desktop tool, exactly as an agent sends them.
//!
//! Each struct derives `Deserialize` (strict: unknown fields are refused) and `JsonSchema`
//! (its doc comments become the MCP input schema's descriptions). Values that need checking
//! beyond their type (negative sizes, empty specs, control characters) are checked by the
//! tool layer in [`crate::api`], which names the field in its `bad-arguments` error.

mod act;
mod element;
mod observe;
mod pointer;
mod raw;
pub mod words;

pub use act::{
    ClickRequest, DragRequest, FocusRequest, KeyRequest, LaunchRequest, TypeRequest, WindowAction,
    WindowRequest,
};
pub use element::{By, ElementTarget, Endpoint};
pub use observe::{
    CaptureRequest, DisplaysRequest, ImageFormat, RecordAction, RecordRequest, Region, WaitCondition,
    WindowsRequest,
};
pub use pointer::{MouseAction, MouseRequest, ScrollRequest, WaitRequest};
pub use raw::{CommandLine, SendCommandRequest};

/// The contract's window selector, as carried by any request that can target a window.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct WindowSelector {
    /// Case-insensitive substring of the title.
    pub window: Option<String>,
    /// Process name (case-insensitive, exact).
    pub process: Option<String>,
    /// WM class or instance name (case-insensitive, exact).
    pub class_name: Option<String>,
    pub pid: Option<u32>,
    /// The platform window id.
    pub handle: Option<u64>,
    /// `true`: the foreground window; `false`: any window but the foreground one.
    pub foreground: Option<bool>,
}

impl WindowSelector {
    /// True when no field is given, which the contract treats as "no target".
    pub fn is_empty(&self) -> bool {
        self.window.is_none()
            && self.process.is_none()
            && self.class_name.is_none()
            && self.pid.is_none()
            && self.handle.is_none()
            && self.foreground.is_none()
    }
}

/// Declares a request struct with the six selector fields appended (serde's `flatten` cannot
/// be combined with `deny_unknown_fields`, so the fields are spelled into each struct).
/// Exported so other tool crates (`mcec-a11y`) take windows the same way.
#[macro_export]
macro_rules! with_selector {
    (
        $(#[$meta:meta])*
        pub struct $name:ident {
            $( $(#[$fmeta:meta])* pub $field:ident : $ty:ty, )*
        }
    ) => {
        $(#[$meta])*
        #[derive(Debug, Clone, PartialEq, serde::Deserialize, schemars::JsonSchema)]
        #[serde(deny_unknown_fields, rename_all = "camelCase")]
        pub struct $name {
            $( $(#[$fmeta])* pub $field: $ty, )*
            // Described once in `words` (the names say the rest; [`WindowSelector`] has
            // the details): every tool that takes a window repeats these to the model.
            #[serde(default)]
            #[schemars(description = $crate::requests::words::TITLE)]
            pub window: Option<String>,
            #[serde(default)]
            pub process: Option<String>,
            #[serde(default)]
            #[schemars(description = $crate::requests::words::CLASS)]
            pub class_name: Option<String>,
            #[serde(default)]
            pub pid: Option<u32>,
            #[serde(default)]
            #[schemars(description = $crate::requests::words::HANDLE)]
            pub handle: Option<u64>,
            #[serde(default)]
            pub foreground: Option<bool>,
        }

        impl $name {
            /// The selector fields of this request.
            pub fn selector(&self) -> $crate::requests::WindowSelector {
                $crate::requests::WindowSelector {
                    window: self.window.clone(),
                    process: self.process.clone(),
                    class_name: self.class_name.clone(),
                    pid: self.pid,
                    handle: self.handle,
                    foreground: self.foreground,
                }
            }
        }
    };
}
pub(crate) use crate::with_selector;

/// Builds a request declared with [`with_selector!`] from its own fields, with no window
/// selector: `unselected!(ClickRequest { at, button: None, … })`.
macro_rules! unselected {
    ($name:ident { $($field:ident $(: $value:expr)?),* $(,)? }) => {
        $name {
            $($field $(: $value)?,)*
            window: None,
            process: None,
            class_name: None,
            pid: None,
            handle: None,
            foreground: None,
        }
    };
}
pub(crate) use unselected;

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn strict_and_camel_case() {
        let c: ClickRequest =
            serde_json::from_value(json!({"at": {"x": 1, "y": 2}, "button": "right", "className": "XTerm"}))
                .unwrap();
        assert_eq!(c.selector().class_name.as_deref(), Some("XTerm"));
        assert!(serde_json::from_value::<ClickRequest>(json!({"at": {"x": 1, "y": 2}, "bogus": 1})).is_err());
        assert!(
            serde_json::from_value::<ClickRequest>(json!({"at": {"x": 1, "y": 2}, "button": "huge"}))
                .is_err()
        );
        assert!(serde_json::from_value::<ClickRequest>(json!({})).is_err());
        let k: KeyRequest = serde_json::from_value(json!({"keys": "ctrl+s", "hold": 5})).unwrap();
        assert_eq!(k.hold_ms, Some(5));
        let w: WindowsRequest =
            serde_json::from_value(json!({"title": "x", "condition": "disappears", "timeoutMs": 10}))
                .unwrap();
        assert_eq!(w.condition, Some(WaitCondition::Disappears));
        assert!(serde_json::from_value::<DisplaysRequest>(json!({"x": 1})).is_err());
        assert!(serde_json::from_value::<DisplaysRequest>(json!({})).is_ok());
    }

    #[test]
    fn schema_has_descriptions() {
        let schema = schemars::schema_for!(ClickRequest);
        let text = serde_json::to_string(&schema).unwrap();
        assert!(text.contains("\"className\""), "{text}");
        assert!(text.contains(words::TITLE), "{text}");
        assert!(text.contains("additionalProperties"), "{text}");
    }
}
