//! The JSON Schemas `tools/list` declares: each input schema as an agent should read it
//! (schemars' output without the Rust names and the words a model pays for but does not
//! need), and the one output schema every tool shares, the envelope with its `ok` true and
//! false branches.

use std::sync::{Arc, LazyLock};

use rmcp::model::JsonObject;
use serde_json::{Value, json};

/// schemars' schema for a request type, cleaned for agents: the root `title` (the Rust
/// struct's name), `description` and `$schema` dropped, every `$ref` into `$defs` replaced by the
/// definition it names (without that definition's own `title` and `description`: a type's doc
/// comment is written for Rust readers, the field's is the agent's), and the defaults an absent
/// field already means dropped (schemars gives every optional field `"default": null`, every
/// list `"default": []`; the request structs declare the defaults that say something). Then
/// `tidy` (below).
pub fn input_schema(generated: Value) -> JsonObject {
    let Value::Object(mut root) = generated else {
        return JsonObject::new();
    };
    root.remove("$schema");
    root.remove("title");
    // The struct's doc comment: the tool's description in the catalogue says it for the model.
    root.remove("description");
    let defs = match root.remove("$defs") {
        Some(Value::Object(defs)) => defs,
        _ => JsonObject::new(),
    };
    let mut schema = Value::Object(root);
    inline_refs(&mut schema, &defs, 0);
    tidy(&mut schema, false);
    match schema {
        Value::Object(map) => map,
        _ => JsonObject::new(),
    }
}

/// What every tool's list entry would repeat to the model for no use (the list is read on
/// every turn; docs/decisions.md has the sizes):
/// - `format` (`int32`, `uint64`): the Rust integer type, which `minimum`/`maximum` state
///   where it matters;
/// - `null` as a second type of an optional field: leaving the field out says the same;
/// - line breaks of the doc comments;
/// - every description below a described field (`described`): of its `anyOf`/`oneOf`
///   branches, its `items`, its object's own fields (the field's description says what to
///   give; a point's `x`, a region's `width` speak for themselves, their limits are keywords);
/// - a `oneOf` of constants, which becomes an `enum` of them.
///
/// Only schemas are walked (a field named `format` is a field, not a keyword); `const`,
/// `enum` and `default` values are data and stay as they are.
fn tidy(node: &mut Value, described: bool) {
    let Value::Object(map) = node else {
        return;
    };
    map.remove("format");
    drop_null_type(map);
    if described {
        map.remove("description");
    }
    if let Some(Value::String(text)) = map.get_mut("description") {
        *text = text.replace('\n', " ");
    }
    constants_to_enum(map);
    let described = described || map.contains_key("description");
    for (key, value) in map.iter_mut() {
        match (key.as_str(), value) {
            ("properties", Value::Object(fields)) => fields.values_mut().for_each(|f| tidy(f, described)),
            ("anyOf" | "oneOf" | "allOf", Value::Array(branches)) => {
                branches.iter_mut().for_each(|b| tidy(b, described));
            }
            ("items" | "not" | "additionalProperties", sub) => tidy(sub, described),
            _ => {}
        }
    }
}

/// `"type": [T, "null"]` becomes `T`; an `anyOf` branch `{"type": "null"}` goes, and a lone
/// branch left is merged into the field (the field's own keys win).
fn drop_null_type(map: &mut JsonObject) {
    let null = json!({"type": "null"});
    if let Some(Value::Array(types)) = map.get_mut("type") {
        types.retain(|t| t != "null");
        if types.len() == 1 {
            let only = types.remove(0);
            map.insert("type".into(), only);
        }
    }
    let Some(Value::Array(branches)) = map.get_mut("anyOf") else {
        return;
    };
    branches.retain(|b| *b != null);
    if branches.len() == 1
        && let Value::Object(only) = branches.remove(0)
    {
        map.remove("anyOf");
        for (k, v) in only {
            map.entry(k).or_insert(v);
        }
    }
}

/// `"oneOf": [{"const": a, "type": t}, {"enum": [b, c], "type": t}, …]` (schemars' enum with
/// documented variants) becomes `"type": t, "enum": [a, b, c, …]`.
fn constants_to_enum(map: &mut JsonObject) {
    let Some(Value::Array(branches)) = map.get("oneOf") else {
        return;
    };
    // schemars puts documented variants in `const` branches and the rest in one `enum` branch.
    let values: Option<Vec<Vec<Value>>> = branches
        .iter()
        .map(|b| match (b.get("const"), b.get("enum")) {
            (Some(one), None) => Some(vec![one.clone()]),
            (None, Some(Value::Array(several))) => Some(several.clone()),
            _ => None,
        })
        .collect();
    let values: Option<Vec<Value>> = values.map(|v| v.into_iter().flatten().collect());
    let types: Vec<&Value> = branches.iter().filter_map(|b| b.get("type")).collect();
    let (Some(values), Some(first)) = (values, types.first()) else {
        return;
    };
    if types.len() != branches.len() || types.iter().any(|t| t != first) {
        return;
    }
    let kind = (*first).clone();
    map.remove("oneOf");
    map.entry("type").or_insert(kind);
    map.insert("enum".into(), Value::Array(values));
}

/// Deep enough for any request here; a cycle would stop here rather than loop.
const MAX_DEPTH: usize = 8;

fn inline_refs(node: &mut Value, defs: &JsonObject, depth: usize) {
    match node {
        Value::Object(map) => {
            if map.get("default").is_some_and(|d| d.is_null() || d.as_array().is_some_and(Vec::is_empty)) {
                map.remove("default");
            }
            let target = map.get("$ref").and_then(Value::as_str).and_then(|r| r.strip_prefix("#/$defs/"));
            if let Some(def) = target.and_then(|name| defs.get(name)).filter(|_| depth < MAX_DEPTH) {
                let mut def = def.clone();
                if let Value::Object(d) = &mut def {
                    d.remove("title");
                    d.remove("description");
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

/// The envelope (see `mcec_rules::envelope`) as every tool's `outputSchema`: the keys every
/// answer has, and the branches in words.
///
/// The envelope in full (types, both branches, the keys a branch never has) is
/// `docs/envelope.schema.json`, and the tests check every answer against it. What is served is
/// lighter because the official Python SDK 1.x checks the schema itself against its metaschema
/// on every call, at about 30 us per subschema: the full envelope cost about 0.55 ms a call,
/// this one 0.06 ms (docs/decisions.md, "What the client pays"). It declares draft-07, whose
/// metaschema is a fraction of 2020-12's to check and which the TypeScript SDK's Ajv reads
/// natively.
pub static ENVELOPE: LazyLock<Arc<JsonObject>> = LazyLock::new(|| {
    let schema = json!({
        "$schema": DRAFT_07,
        "type": "object",
        "required": ["ok", "runId"],
        "description": "mcec's envelope. `ok` (boolean) says which branch. ok=true: `result` (what \
            the tool produced; its shape is the tool's) and maybe `warnings` (strings). ok=false: \
            `error` {`code`: machine-readable reason, e.g. `emergency-stopped`; `category`: its \
            family, e.g. `refused`; `detail`: what happened and what to do next}. `runId` \
            (string): this mcec process's run id, new at every start."
    });
    match schema {
        Value::Object(map) => Arc::new(map),
        _ => unreachable!("a JSON object literal"),
    }
});

/// The dialect the envelope declares.
const DRAFT_07: &str = "http://json-schema.org/draft-07/schema#";

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
    fn input_schemas_are_tidied_for_the_model_but_keep_every_field_and_limit() {
        let capture = input_schema(
            serde_json::to_value(schemars::schema_for!(mcec_desktop::requests::CaptureRequest)).unwrap(),
        );
        let text = Value::Object(capture.clone()).to_string();
        let format = &capture["properties"]["format"];
        assert!(format.is_object() && format["enum"].as_array().is_some_and(|e| e.len() == 3), "{text}");
        assert_eq!(capture["properties"]["handle"]["type"], json!("integer"), "{text}");
        assert_eq!(capture["properties"]["handle"]["minimum"], json!(0), "{text}");
        assert!(!text.contains("\"format\":\"") && !text.contains("\"null\""), "{text}");
        assert!(!text.contains("\\n"), "{text}");
        let click = input_schema(
            serde_json::to_value(schemars::schema_for!(mcec_desktop::requests::ClickRequest)).unwrap(),
        );
        let button = &click["properties"]["button"];
        assert_eq!(button["enum"], json!(["left", "right", "middle"]), "{button}");
        assert_eq!(button["default"], json!("left"), "{button}");
        // `MouseButton`'s doc comment is not the field's: the enum and the default say it all.
        assert!(button.get("anyOf").is_none() && button.get("description").is_none(), "{button}");
        let by = &click["properties"]["at"]["anyOf"][1]["properties"]["by"];
        assert_eq!(by["type"], json!("string"), "{by}");
        assert_eq!(by["enum"], json!(["name", "role", "automationid", "text"]), "{by}");
        assert!(by.get("description").is_none(), "{by}");
        let modifiers = &click["properties"]["modifiers"];
        assert!(modifiers["items"]["enum"].is_array() && modifiers["items"].get("description").is_none());
    }

    /// A described field's parts carry no descriptions of their own, but every limit stays;
    /// an empty list's default goes.
    #[test]
    fn only_the_field_is_described_and_every_limit_stays() {
        let capture = input_schema(
            serde_json::to_value(schemars::schema_for!(mcec_desktop::requests::CaptureRequest)).unwrap(),
        );
        let region = &capture["properties"]["region"];
        assert!(region["description"].is_string(), "{region}");
        assert_eq!(region["additionalProperties"], json!(false), "{region}");
        assert_eq!(region["required"], json!(["x", "y", "width", "height"]), "{region}");
        for side in ["width", "height"] {
            let field = &region["properties"][side];
            assert_eq!((&field["minimum"], &field["maximum"]), (&json!(1), &json!(16_384)), "{field}");
            assert!(field.get("description").is_none(), "{field}");
        }
        let drag = input_schema(
            serde_json::to_value(schemars::schema_for!(mcec_desktop::requests::DragRequest)).unwrap(),
        );
        let path = &drag["properties"]["path"];
        assert_eq!(path["maxItems"], json!(400), "{path}");
        assert!(path["items"]["properties"]["x"].get("description").is_none(), "{path}");
        let find = input_schema(
            serde_json::to_value(schemars::schema_for!(mcec_a11y::requests::FindRequest)).unwrap(),
        );
        let states = &find["properties"]["states"];
        assert!(states.get("default").is_none() && states["description"].is_string(), "{states}");
        assert_eq!(states["items"], json!({"type": "string"}), "{states}");
    }

    /// The full envelope schema the tests hold mcec to, against the envelopes
    /// `mcec_rules::envelope` builds; and the served schema against it.
    #[test]
    fn the_envelope_schemas_match_the_envelopes_mcec_sends() {
        use mcec_rules::{ErrorCode, ToolError, envelope};
        let full: Value =
            serde_json::from_str(include_str!("../../../../docs/envelope.schema.json")).unwrap();
        let keys =
            |v: &Value| v.as_object().map(|m| m.keys().cloned().collect::<Vec<_>>()).unwrap_or_default();
        let strings = |v: &Value| {
            v.as_array().into_iter().flatten().filter_map(Value::as_str).map(String::from).collect::<Vec<_>>()
        };
        let declared = keys(&full["properties"]);
        let ok = envelope::success("r", json!({"x": 1}), &["w".to_string()]);
        let failed = envelope::failure("r", &ToolError::new(ErrorCode::UnknownTool, "no tool `x`"));
        for sent in [&ok, &failed] {
            assert!(keys(sent).iter().all(|k| declared.contains(k)), "{sent} has a key the schema lacks");
            assert!(strings(&full["required"]).iter().all(|k| sent.get(k).is_some()), "{sent}");
        }
        assert_eq!(full["if"]["properties"]["ok"]["const"], ok["ok"]);
        assert_ne!(full["if"]["properties"]["ok"]["const"], failed["ok"]);
        let (then, other) = (&full["then"], &full["else"]);
        assert!(strings(&then["required"]).iter().all(|k| ok.get(k).is_some()), "{then}");
        assert!(strings(&other["required"]).iter().all(|k| failed.get(k).is_some()), "{other}");
        for (branch, sent, absent) in [(then, &ok, &failed), (other, &failed, &ok)] {
            let forbidden = keys(&branch["properties"]);
            assert!(
                !forbidden.is_empty() && forbidden.iter().all(|k| branch["properties"][k] == json!(false)),
                "{branch}"
            );
            assert!(forbidden.iter().all(|k| sent.get(k).is_none()), "{branch} forbids a key of {sent}");
            assert!(forbidden.iter().any(|k| absent.get(k).is_some()), "{branch} lets {absent} through");
        }
        let mut required = strings(&full["properties"]["error"]["required"]);
        required.sort();
        assert_eq!(required, keys(&failed["error"]), "serde_json's maps are sorted");

        // What is served requires what the full schema requires, and names every key in words.
        assert_eq!(ENVELOPE["$schema"], full["$schema"]);
        assert_eq!(ENVELOPE["type"], json!("object"));
        assert_eq!(strings(&ENVELOPE["required"]), strings(&full["required"]));
        let words = ENVELOPE["description"].as_str().unwrap_or_default();
        for key in declared.iter().chain(&keys(&failed["error"])) {
            assert!(words.contains(&format!("`{key}`")), "the served description never names `{key}`");
        }
    }
}
