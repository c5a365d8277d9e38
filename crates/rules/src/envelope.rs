//! The envelope: the one JSON shape every `tools/call` answers with, success or failure.
//! The MCP layer puts it in a text block and sets `isError = !ok`.

use serde_json::{Value, json};

use crate::ToolError;

/// `{"ok":true,"runId":…,"result":…,"warnings":[…]?}`; `warnings` only when there are some.
pub fn success(run_id: &str, result: Value, warnings: &[String]) -> Value {
    let mut envelope = json!({ "ok": true, "runId": run_id, "result": result });
    if !warnings.is_empty() {
        envelope["warnings"] = json!(warnings);
    }
    envelope
}

/// `{"ok":false,"runId":…,"error":{"code","category","detail"}}`.
pub fn failure(run_id: &str, error: &ToolError) -> Value {
    json!({
        "ok": false,
        "runId": run_id,
        "error": {
            "code": error.code.as_str(),
            "category": error.code.category(),
            "detail": error.detail,
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ErrorCode;

    #[test]
    fn success_has_no_warnings_key_when_there_are_none() {
        let v = success("abc", json!({"x": 1}), &[]);
        assert_eq!(v, json!({"ok": true, "runId": "abc", "result": {"x": 1}}));
    }

    #[test]
    fn success_carries_warnings() {
        let v = success("abc", json!(null), &["careful".to_string()]);
        assert_eq!(v["warnings"], json!(["careful"]));
    }

    #[test]
    fn failure_has_code_category_and_detail() {
        let v = failure("abc", &ToolError::new(ErrorCode::UnknownTool, "no tool `x`"));
        assert_eq!(v["ok"], json!(false));
        assert_eq!(v["error"]["code"], json!("unknown-tool"));
        assert_eq!(v["error"]["category"], json!("invalid-argument"));
        assert_eq!(v["error"]["detail"], json!("no tool `x`"));
        assert!(v.get("result").is_none());
    }

    #[test]
    fn emergency_stopped_is_a_refusal_that_says_do_not_retry() {
        let v = failure("s", &ToolError::emergency_stopped());
        assert_eq!(v["error"]["category"], json!("refused"));
        assert!(v["error"]["detail"].as_str().unwrap().contains("do not retry"));
    }
}
