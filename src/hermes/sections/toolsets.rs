//! `toolsets:` (hermes-agent: tools/kanban_tools.py
//! `_profile_has_kanban_toolset`, which agent/skill_utils.py's `kanban`
//! environment reuses): the toolsets the profile enables, kept in the shape
//! written, since Hermes asks `"kanban" in cfg.get("toolsets", [])`.

use serde_json::Value;

/// `toolsets:`.
#[derive(Debug, Clone, Default)]
pub enum Toolsets {
    /// Missing, `null`, or a value `in` does not apply to (a number, a boolean).
    #[default]
    Absent,
    /// A list: its strings (other items never equal a name).
    List(Vec<String>),
    /// A string: `in` is a substring test.
    Text(String),
    /// A mapping: `in` tests its keys.
    Keys(Vec<String>),
}

impl Toolsets {
    pub(crate) fn read(v: Option<&Value>) -> Self {
        match v {
            Some(Value::Array(a)) => Toolsets::List(
                a.iter()
                    .filter_map(Value::as_str)
                    .map(str::to_string)
                    .collect(),
            ),
            Some(Value::String(s)) => Toolsets::Text(s.clone()),
            Some(Value::Object(m)) => Toolsets::Keys(m.keys().cloned().collect()),
            _ => Toolsets::Absent,
        }
    }

    /// Python's `name in toolsets`.
    pub fn contains(&self, name: &str) -> bool {
        match self {
            Toolsets::Absent => false,
            Toolsets::List(items) | Toolsets::Keys(items) => items.iter().any(|t| t == name),
            Toolsets::Text(s) => s.contains(name),
        }
    }

    /// Whether `name` is listed: an item of the list, or an item of the
    /// comma-separated string (trimmed).
    pub fn lists(&self, name: &str) -> bool {
        match self {
            Toolsets::List(items) => items.iter().any(|t| t == name),
            Toolsets::Text(s) => s.split(',').any(|t| t.trim() == name),
            Toolsets::Absent | Toolsets::Keys(_) => false,
        }
    }
}
