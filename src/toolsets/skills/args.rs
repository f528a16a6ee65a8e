//! The `skills` tools' arguments: typed from the JSON arguments the server
//! has already checked against the schemas in [`super::schema`].

use serde::Deserialize;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

/// `skill_view`'s arguments (after schema validation).
#[derive(Debug, Default, Deserialize)]
pub(super) struct ViewArgs {
    #[serde(default)]
    pub(super) name: String,
    #[serde(default)]
    pub(super) file_path: Option<String>,
}

/// `skills_list`'s arguments (after schema validation).
#[derive(Debug, Default, Deserialize)]
pub(super) struct ListArgs {
    #[serde(default)]
    pub(super) category: Option<String>,
}

/// A call of one of this toolset's tools, its arguments read.
pub(super) enum SkillsCall {
    View(ViewArgs),
    List(ListArgs),
}

impl SkillsCall {
    /// `None` for a name this toolset does not define.
    pub(super) fn parse(name: &str, args: Map<String, Value>) -> Option<SkillsCall> {
        let args = Value::Object(args);
        Some(match name {
            "skill_view" => SkillsCall::View(read_args(args)),
            "skills_list" => SkillsCall::List(read_args(args)),
            _ => return None,
        })
    }
}

/// Validated arguments as `T`; a shape `T` does not take reads as `T::default()`.
fn read_args<T: DeserializeOwned + Default>(args: Value) -> T {
    serde_json::from_value(args).unwrap_or_default()
}
