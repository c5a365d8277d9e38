//! Gate 6: arguments are typed strictly. A wrong type, a missing field or an unknown enum
//! value or field is `bad-arguments` naming the field (by its JSON path); nothing is
//! coerced.

use mcec_rules::ToolError;
use serde::de::DeserializeOwned;
use serde_json::Value;

/// Decode `args` (absent means `{}`) into `T`, naming the offending field on failure.
pub fn parse<T: DeserializeOwned>(args: Option<serde_json::Map<String, Value>>) -> Result<T, ToolError> {
    let value = Value::Object(args.unwrap_or_default());
    serde_path_to_error::deserialize(value).map_err(|e| {
        let path = e.path().to_string();
        let field = if path == "." { "arguments".to_string() } else { path };
        ToolError::bad_argument(&field, shorten(&e.inner().to_string()))
    })
}

/// serde's messages can quote the whole offending value; keep the detail readable.
fn shorten(message: &str) -> String {
    mcec_rules::text::ellipsize(message, 300)
}

#[cfg(test)]
mod tests {
    use super::*;
    use mcec_rules::ErrorCode;
    use serde::Deserialize;
    use serde_json::json;

    #[derive(Debug, Deserialize)]
    #[serde(deny_unknown_fields, rename_all = "camelCase")]
    #[allow(dead_code)] // fields are read by the decoder, which is what is under test
    struct Probe {
        at: Point,
        button: Option<Button>,
    }

    #[derive(Debug, Deserialize)]
    #[serde(deny_unknown_fields)]
    #[allow(dead_code)]
    struct Point {
        x: i32,
        y: i32,
    }

    #[derive(Debug, Deserialize)]
    #[serde(rename_all = "lowercase")]
    enum Button {
        Left,
    }

    fn err(v: Value) -> String {
        let Value::Object(map) = v else { panic!("object") };
        let e = parse::<Probe>(Some(map)).unwrap_err();
        assert_eq!(e.code, ErrorCode::BadArguments);
        e.detail
    }

    #[test]
    fn names_the_field() {
        assert!(err(json!({"at": {"x": "1", "y": 2}})).starts_with("`at.x`"));
        assert!(err(json!({"at": {"x": 1}})).contains("missing field `y`"));
        assert!(err(json!({"at": {"x": 1, "y": 2}, "button": "middle"})).starts_with("`button`"));
        assert!(err(json!({"at": {"x": 1, "y": 2}, "extra": 1})).contains("unknown field `extra`"));
        assert!(err(json!({})).contains("missing field `at`"));
    }

    #[test]
    fn absent_arguments_are_an_empty_object() {
        #[derive(Deserialize)]
        #[serde(deny_unknown_fields)]
        struct Empty {}
        assert!(parse::<Empty>(None).is_ok());
    }

    #[test]
    fn huge_values_are_not_echoed_whole() {
        let big = "x".repeat(100_000);
        assert!(err(json!({"at": big})).len() < 400);
    }
}
