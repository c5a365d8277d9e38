//! Arguments of `send_command`: one line of the raw command language, parsed while the
//! arguments are decoded (gate 6) so a bad line is `bad-arguments` on `command` before any
//! desktop is touched. The language itself is `mcec_rules::command_lang`.

use mcec_rules::command_lang::{LangError, RawCommand, parse_line};
use schemars::JsonSchema;
use serde::Deserialize;

/// `send_command`: run one line of the raw command language.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct SendCommandRequest {
    /// `;`-separated, run in order: `chars:<text>` (escapes `\;` `\\` `\n` `\t`),
    /// `key:<chords>` (as `key`), `mouse:move X Y`, `mouse:click X Y [left|right|middle]`,
    /// `mouse:drag X1 Y1 X2 Y2`, `pause:<ms>` (at most 5000; 50000 a line). E.g.
    /// `mouse:click 200 150; chars:hello; key:Return`.
    #[schemars(with = "String", length(min = 1))]
    pub command: CommandLine,
}

/// A parsed line: never empty.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(try_from = "String")]
pub struct CommandLine(Vec<RawCommand>);

impl CommandLine {
    pub fn commands(&self) -> &[RawCommand] {
        &self.0
    }
}

impl TryFrom<String> for CommandLine {
    type Error = LangError;

    fn try_from(line: String) -> Result<Self, LangError> {
        parse_line(&line).map(CommandLine)
    }
}

impl std::str::FromStr for CommandLine {
    type Err = LangError;

    fn from_str(line: &str) -> Result<Self, LangError> {
        parse_line(line).map(CommandLine)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_line_is_parsed_while_decoding() {
        let r: SendCommandRequest = serde_json::from_value(json!({"command": "chars:hi; pause:5"})).unwrap();
        assert_eq!(r.command.commands().len(), 2);
        let err =
            serde_json::from_value::<SendCommandRequest>(json!({"command": "pause:99999"})).unwrap_err();
        assert!(err.to_string().contains("command 1: pause:"), "{err}");
        assert!(serde_json::from_value::<SendCommandRequest>(json!({"command": "chars:a", "x": 1})).is_err());
        let schema = serde_json::to_string(&schemars::schema_for!(SendCommandRequest)).unwrap();
        assert!(schema.contains("\"string\"") && schema.contains("mouse:click"), "{schema}");
    }
}
