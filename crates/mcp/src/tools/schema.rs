//! The JSON Schemas `tools/list` declares: each input schema as an agent should read it
//! (schemars' output without the Rust names: no root `title`, `$defs` inlined), and the one
//! output schema every tool shares, the envelope with its `ok` true and false branches.

use std::sync::{Arc, LazyLock};

use rmcp::model::JsonObject;
use serde_json::{Value, json};

/// schemars' schema for a request type, cleaned for agents: the root `title` (the Rust
/// struct's name) and `$schema` dropped, every `$ref` into `$defs` replaced by the
/// definition it names (without that definition's own `title`), and the `"default": null`
/// schemars gives every optional field dropped (an absent field means the default the
/// field states, which the request structs declare where there is one).
pub fn input_schema(generated: Value) -> JsonObject {
    let Value::Object(mut root) = generated else {
        return JsonObject::new();
    };
    root.remove("$schema");
    root.remove("title");
    let defs = match root.remove("$defs") {
        Some(Value::Object(defs)) => defs,
        _ => JsonObject::new(),
    };
    let mut schema = Value::Object(root);
    inline_refs(&mut schema, &defs, 0);
    match schema {
        Value::Object(map) => map,
        _ => JsonObject::new(),
    }
}

/// Deep enough for any request here; a cycle would stop here rather than loop.
const MAX_DEPTH: usize = 8;

fn inline_refs(node: &mut Value, defs: &JsonObject, depth: usize) {
    match node {
        Value::Object(map) => {
            if map.get("default") == Some(&Value::Null) {
                map.remove("default");
            }
            let target = map.get("$ref").and_then(Value::as_str).and_then(|r| r.strip_prefix("#/$defs/"));
            if let Some(def) = target.and_then(|name| defs.get(name)).filter(|_| depth < MAX_DEPTH) {
                let mut def = def.clone();
                if let Value::Object(d) = &mut def {
                    d.remove("title");
                }
                map.remove("$ref");
                if let Value::Object(d) = def {
                    for (k, v) in d {
                        map.entry(k).or_insert(v);
                    }
                }
                inline_refs(node, defs, depth + 1);
                return;
            }
            for value in map.values_mut() {
                inline_refs(value, defs, depth);
            }
        }
        Value::Array(items) => items.iter_mut().for_each(|v| inline_refs(v, defs, depth)),
        _ => {}
    }
}

/// The envelope (see `mcec_rules::envelope`) as a JSON Schema: every tool's `outputSchema`.
pub static ENVELOPE: LazyLock<Arc<JsonObject>> = LazyLock::new(|| {
    let schema = json!({
        "type": "object",
        "description": "mcec's envelope: `ok` says which branch; `result` on success, `error` on failure.",
        "properties": {
            "ok": {"type": "boolean"},
            "runId": {"type": "string", "description": "This mcec process's run id (new at every start; not a session copy's sessionId)."},
            "result": {"description": "What the tool produced (its shape depends on the tool)."},
            "warnings": {"type": "array", "items": {"type": "string"}},
            "error": {
                "type": "object",
                "properties": {
                    "code": {"type": "string", "pattern": "^[a-z][a-z-]*$", "description": "Machine-readable reason, e.g. `emergency-stopped`, `cancelled`, `bad-arguments`."},
                    "category": {"type": "string", "pattern": "^[a-z][a-z-]*$", "description": "The code's family, e.g. `refused`, `invalid-argument`, `timeout`."},
                    "detail": {"type": "string", "description": "What happened and what to do next."}
                },
                "required": ["code", "category", "detail"],
                "additionalProperties": false
            }
        },
        "required": ["ok", "runId"],
        "additionalProperties": false,
        "oneOf": [
            {
                "properties": {"ok": {"const": true}},
                "required": ["result"],
                "not": {"required": ["error"]}
            },
            {
                "properties": {"ok": {"const": false}},
                "required": ["error"],
                "not": {"anyOf": [{"required": ["result"]}, {"required": ["warnings"]}]}
            }
        ]
    });
    match schema {
        Value::Object(map) => Arc::new(map),
        _ => unreachable!("a JSON object literal"),
    }
});

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn input_schemas_carry_no_rust_names_and_no_refs() {
        let schema = input_schema(
            serde_json::to_value(schemars::schema_for!(mcec_desktop::requests::DragRequest)).unwrap(),
        );
        let text = Value::Object(schema.clone()).to_string();
        assert!(!schema.contains_key("title") && !schema.contains_key("$defs"), "{text}");
        assert!(!text.contains("$ref") && !text.contains("\"Point\""), "{text}");
        let from = &schema["properties"]["from"]["anyOf"];
        assert_eq!(from[0]["required"], json!(["x", "y"]), "{text}");
        assert!(from[1]["properties"]["elementId"].is_object(), "{text}");
        assert_eq!(from.as_array().map(Vec::len), Some(2), "{text}");
        assert!(!text.contains("Resolved") && !text.contains("ElementTarget"), "{text}");
        assert_eq!(schema["required"], json!(["from", "to"]), "{text}");
        assert_eq!(schema["properties"]["durationMs"]["maximum"], json!(10_000), "{text}");
        assert_eq!(schema["properties"]["durationMs"]["default"], json!(0), "{text}");
        assert!(!text.contains("\"default\":null"), "{text}");
    }

    #[test]
    fn the_envelope_schema_is_an_object_schema_with_two_branches() {
        assert_eq!(ENVELOPE["type"], json!("object"));
        assert_eq!(ENVELOPE["oneOf"].as_array().map(Vec::len), Some(2));
    }
}
