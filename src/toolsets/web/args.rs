//! The `web` tools' arguments: typed from the JSON arguments the server has
//! already checked against the schemas in [`super::schema`].

use serde::Deserialize;
use serde_json::{Map, Number, Value};

/// `web_search`'s arguments (after schema validation).
#[derive(Debug, Default, Deserialize)]
pub(super) struct SearchArgs {
    #[serde(default)]
    pub(super) query: Option<String>,
    /// Kept as a JSON number: out-of-range values fall back to the default.
    #[serde(default)]
    pub(super) limit: Option<Number>,
}

/// `web_extract`'s arguments (after schema validation).
#[derive(Debug, Default, Deserialize)]
pub(super) struct ExtractArgs {
    #[serde(default)]
    pub(super) urls: Vec<String>,
    #[serde(default)]
    pub(super) char_limit: Option<Number>,
}

/// A call of one of this toolset's tools, its arguments read.
pub(super) enum WebCall {
    Search(SearchArgs),
    Extract(ExtractArgs),
}

impl WebCall {
    /// `None` for a name this toolset does not define.
    pub(super) fn parse(name: &str, args: Map<String, Value>) -> Option<WebCall> {
        let args = Value::Object(args);
        Some(match name {
            "web_search" => WebCall::Search(read_args(args)),
            "web_extract" => WebCall::Extract(read_args(args)),
            _ => return None,
        })
    }
}

/// Validated arguments as `T`; a shape the schema let through but `T` does not
/// take reads as `T::default()` (the tool then reports what is missing).
fn read_args<T: serde::de::DeserializeOwned + Default>(args: Value) -> T {
    serde_json::from_value(args).unwrap_or_default()
}
