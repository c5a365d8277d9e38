//! Element targets: the `{elementId}` or `{by, value, role, states}` an agent gives to name
//! one accessibility element, and [`Endpoint`], the "point or element" that `click`, `drag`
//! and `focus` take wherever they take a point.
//!
//! Only the shapes live here: `mcec-desktop` knows nothing of accessibility trees. The MCP
//! layer asks the accessibility tools for an element's centre and puts it back as
//! [`Endpoint::Resolved`] before the desktop tool runs; a desktop tool handed an unresolved
//! element refuses it.

use schemars::JsonSchema;
use serde::de::Error as _;
use serde::{Deserialize, Deserializer, Serialize};

use crate::types::Point;

/// What `value` is compared with.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum By {
    /// The accessible name (a button's label, a window's title), whole, case-insensitive.
    #[default]
    Name,
    /// The role (`push-button`, `check-box`, `text`, `label`; `button`, `checkbox` also work).
    Role,
    /// The toolkit's accessible id (GTK's buildable id, Qt's objectName, HTML `id`), exact.
    Automationid,
    /// A substring of the element's text, case-insensitive.
    Text,
}

/// Spells the element target's fields (`elementId`, `by`, `value`, `role`, `states`) into a
/// struct and hands it to the macro named first, which declares it; with `target`, also gives
/// the struct `target()`, the [`ElementTarget`] it names. The one place these fields are
/// written: [`ElementTarget`] itself, the strict reader of [`Endpoint`] and `mcec-a11y`'s
/// requests are declared through it. Spelled rather than `#[serde(flatten)]`: with
/// `deny_unknown_fields`, a flattened field's error loses the field's path (`by` becomes
/// `arguments`) and an unknown field's error its list of the fields expected.
#[macro_export]
macro_rules! with_element_fields {
    ($declare:ident { $(#[$meta:meta])* pub struct $name:ident { $($body:tt)* } }) => {
        $declare! {
            $(#[$meta])*
            pub struct $name {
                $($body)*
                // Described once in `words`: every element-taking tool repeats these.
                #[serde(default)]
                #[schemars(description = $crate::requests::words::ELEMENT_ID)]
                pub element_id: Option<String>,
                #[serde(default)]
                #[schemars(description = $crate::requests::words::BY)]
                pub by: Option<$crate::requests::By>,
                #[serde(default)]
                #[schemars(description = $crate::requests::words::VALUE)]
                pub value: Option<String>,
                #[serde(default)]
                #[schemars(description = $crate::requests::words::ROLE)]
                pub role: Option<String>,
                #[serde(default)]
                #[schemars(description = $crate::requests::words::STATES)]
                pub states: Vec<String>,
            }
        }
    };
    ($declare:ident, target { $(#[$meta:meta])* pub struct $name:ident { $($body:tt)* } }) => {
        $crate::with_element_fields! { $declare { $(#[$meta])* pub struct $name { $($body)* } } }

        impl $name {
            /// The element this request names.
            pub fn target(&self) -> $crate::requests::ElementTarget {
                $crate::requests::ElementTarget {
                    element_id: self.element_id.clone(),
                    by: self.by,
                    value: self.value.clone(),
                    role: self.role.clone(),
                    states: self.states.clone(),
                }
            }
        }
    };
}

/// Declares an item as written (for [`with_element_fields!`]'s plain structs).
macro_rules! as_written {
    ($($item:tt)*) => { $($item)* };
}

with_element_fields! { as_written {
    /// One element: an `elementId` from an earlier answer, or a selector (`value` with `by`,
    /// `role`, `states`) under the request's window.
    #[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize, JsonSchema)]
    #[serde(deny_unknown_fields, rename_all = "camelCase")]
    pub struct ElementTarget {}
} }

impl ElementTarget {
    /// True when neither an id nor a selector value is given.
    pub fn is_empty(&self) -> bool {
        self.element_id.is_none() && self.value.is_none()
    }
}

/// A point, or an accessibility element whose centre is the point.
#[derive(Debug, Clone, PartialEq, Eq, JsonSchema)]
#[schemars(untagged)]
pub enum Endpoint {
    /// `{x, y}`: pixels, in the space the request's other points are in.
    Point(Point),
    /// `{elementId}` or `{by, value, role, states}` (under the request's window): the centre
    /// of the element's bounds. More than one match is `ambiguous-selector`, never the first.
    Element(ElementTarget),
    /// An element's centre in desktop pixels, filled in by the accessibility layer.
    #[schemars(skip)]
    Resolved(Point),
}

impl From<Point> for Endpoint {
    fn from(p: Point) -> Self {
        Endpoint::Point(p)
    }
}

with_element_fields! { as_written, target {
    /// Every field either shape may carry, so one strict pass reads both and unknown fields
    /// are refused by name. (`JsonSchema` only lets the fields' `schemars` attributes be read;
    /// [`Endpoint`]'s schema is its two shapes.)
    #[derive(Deserialize, JsonSchema)]
    #[serde(deny_unknown_fields, rename_all = "camelCase")]
    pub struct EitherShape {
        x: Option<i32>,
        y: Option<i32>,
    }
} }

/// `x` or `y` makes it a point (and then it must have both and nothing of an element);
/// anything else is an element.
impl<'de> Deserialize<'de> for Endpoint {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let e = EitherShape::deserialize(d)?;
        let element = e.target();
        match (e.x, e.y) {
            (None, None) => Ok(Endpoint::Element(element)),
            _ if element != ElementTarget::default() => {
                Err(D::Error::custom("give a point {x, y} or an element, not both"))
            }
            (Some(x), Some(y)) => Ok(Endpoint::Point(Point::new(x, y))),
            (None, _) => Err(D::Error::missing_field("x")),
            (_, None) => Err(D::Error::missing_field("y")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn points_and_elements_are_told_apart_strictly() {
        let p: Endpoint = serde_json::from_value(json!({"x": 1, "y": 2})).unwrap();
        assert_eq!(p, Endpoint::Point(Point::new(1, 2)));
        let e: Endpoint = serde_json::from_value(json!({"value": "OK", "role": "button"})).unwrap();
        assert!(matches!(e, Endpoint::Element(ElementTarget { value: Some(ref v), .. }) if v == "OK"));
        let id: Endpoint = serde_json::from_value(json!({"elementId": "e3"})).unwrap();
        assert!(matches!(id, Endpoint::Element(ElementTarget { element_id: Some(_), .. })));
        for bad in [json!({"x": 1, "value": "OK"}), json!({"bogus": 1}), json!(3), json!({"x": 1})] {
            assert!(serde_json::from_value::<Endpoint>(bad.clone()).is_err(), "{bad}");
        }
    }

    #[test]
    fn the_schema_offers_both_shapes_and_hides_the_resolved_one() {
        let text = serde_json::to_string(&schemars::schema_for!(Endpoint)).unwrap();
        assert!(text.contains("anyOf") && text.contains("elementId") && text.contains("\"x\""), "{text}");
        assert_eq!(text.matches("\"properties\"").count(), 2, "{text}");
    }
}
