//! The ten browser tools as a type. A call is parsed once, from its name and
//! its arguments (already checked against the schemas in `schema.rs` and
//! coerced by the server), so that dispatch matches on [`Tool`] instead of
//! comparing names and reading arguments by key.
//!
//! Reading is as lenient as Hermes' `args.get(...)`: a missing argument, or
//! one of another type, reads as its default.

use serde::de::DeserializeOwned;
use serde::{Deserialize, Deserializer};
use serde_json::{Map, Value};

/// A browser tool call with its arguments.
#[derive(Debug)]
pub(crate) enum Tool {
    Navigate(NavigateArgs),
    Snapshot(SnapshotArgs),
    Click(ClickArgs),
    Type(TypeArgs),
    Scroll(Direction),
    Back,
    Press(PressArgs),
    GetImages,
    Vision(VisionArgs),
    Console(ConsoleArgs),
}

/// A call that is refused before any browser starts.
#[derive(Debug, thiserror::Error)]
pub(crate) enum ArgError {
    #[error("unknown browser tool {0}")]
    UnknownTool(String),
    #[error("Invalid direction '{0}'. Use 'up' or 'down'.")]
    InvalidDirection(String),
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub(crate) struct NavigateArgs {
    #[serde(deserialize_with = "lenient")]
    pub(crate) url: String,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub(crate) struct SnapshotArgs {
    #[serde(deserialize_with = "lenient")]
    pub(crate) full: bool,
    /// What the model is trying to do (focuses a long page's summary).
    #[serde(deserialize_with = "lenient")]
    pub(crate) task: String,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub(crate) struct ClickArgs {
    /// An element ref from a snapshot (`@e5`).
    #[serde(rename = "ref", deserialize_with = "lenient")]
    pub(crate) element: String,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub(crate) struct TypeArgs {
    #[serde(rename = "ref", deserialize_with = "lenient")]
    pub(crate) element: String,
    #[serde(deserialize_with = "lenient")]
    pub(crate) text: String,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub(crate) struct PressArgs {
    #[serde(deserialize_with = "lenient")]
    pub(crate) key: String,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct ScrollArgs {
    #[serde(deserialize_with = "lenient")]
    direction: String,
}

/// `browser_scroll`'s direction.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Direction {
    Up,
    Down,
}

impl Direction {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Direction::Up => "up",
            Direction::Down => "down",
        }
    }
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub(crate) struct VisionArgs {
    #[serde(deserialize_with = "lenient")]
    pub(crate) question: String,
    #[serde(deserialize_with = "lenient")]
    pub(crate) annotate: bool,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub(crate) struct ConsoleArgs {
    /// JavaScript to evaluate; without it the tool reads the console.
    #[serde(deserialize_with = "lenient")]
    pub(crate) expression: Option<String>,
    #[serde(deserialize_with = "lenient")]
    pub(crate) clear: bool,
}

/// Any JSON value; one of another type than `T` reads as `T::default()`.
fn lenient<'de, D, T>(d: D) -> Result<T, D::Error>
where
    D: Deserializer<'de>,
    T: DeserializeOwned + Default,
{
    let v = Value::deserialize(d)?;
    Ok(serde_json::from_value(v).unwrap_or_default())
}

fn read<T: DeserializeOwned + Default>(args: &Map<String, Value>) -> T {
    serde_json::from_value(Value::Object(args.clone())).unwrap_or_default()
}

impl Tool {
    /// Parse a call to one of the tools in `schemas::DEFS`.
    pub(crate) fn parse(name: &str, args: &Map<String, Value>) -> Result<Tool, ArgError> {
        Ok(match name {
            "browser_navigate" => Tool::Navigate(read(args)),
            "browser_snapshot" => Tool::Snapshot(read(args)),
            "browser_click" => Tool::Click(read(args)),
            "browser_type" => Tool::Type(read(args)),
            "browser_scroll" => {
                let a: ScrollArgs = read(args);
                match a.direction.as_str() {
                    "up" => Tool::Scroll(Direction::Up),
                    "down" => Tool::Scroll(Direction::Down),
                    _ => return Err(ArgError::InvalidDirection(a.direction)),
                }
            }
            "browser_back" => Tool::Back,
            "browser_press" => Tool::Press(read(args)),
            "browser_get_images" => Tool::GetImages,
            "browser_vision" => Tool::Vision(read(args)),
            "browser_console" => Tool::Console(read(args)),
            other => return Err(ArgError::UnknownTool(other.to_string())),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn args(v: Value) -> Map<String, Value> {
        v.as_object().unwrap().clone()
    }

    #[test]
    fn every_declared_tool_parses() {
        let scroll = args(json!({"direction": "down"}));
        for def in super::super::schema::DEFS {
            let a = if def.name == "browser_scroll" {
                scroll.clone()
            } else {
                Map::new()
            };
            assert!(Tool::parse(def.name, &a).is_ok(), "{}", def.name);
        }
        assert_eq!(
            Tool::parse("browser_nope", &Map::new())
                .unwrap_err()
                .to_string(),
            "unknown browser tool browser_nope"
        );
    }

    #[test]
    fn arguments_read_leniently() {
        let t = Tool::parse(
            "browser_type",
            &args(json!({"ref": "@e2", "text": 5, "extra": true})),
        )
        .unwrap();
        let Tool::Type(a) = t else { panic!() };
        assert_eq!((a.element.as_str(), a.text.as_str()), ("@e2", ""));
        let Tool::Console(c) = Tool::parse(
            "browser_console",
            &args(json!({"expression": 1, "clear": true})),
        )
        .unwrap() else {
            panic!()
        };
        assert_eq!((c.expression, c.clear), (None, true));
        let Tool::Console(c) =
            Tool::parse("browser_console", &args(json!({"expression": "1+1"}))).unwrap()
        else {
            panic!()
        };
        assert_eq!(c.expression.as_deref(), Some("1+1"));
        assert_eq!(
            Tool::parse("browser_scroll", &args(json!({"direction": "left"})))
                .unwrap_err()
                .to_string(),
            "Invalid direction 'left'. Use 'up' or 'down'."
        );
        assert_eq!(
            Tool::parse("browser_scroll", &Map::new())
                .unwrap_err()
                .to_string(),
            "Invalid direction ''. Use 'up' or 'down'."
        );
    }
}
